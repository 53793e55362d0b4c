"""File access that never follows a path someone else could have planted.

The grader runs as root; a sandbox never gets a writable host path, and whatever comes from a
student (a submission, an executed notebook) is read by value: regular files only, no symlinks,
a size cap. Output goes into folders only the grader can write, through O_NOFOLLOW | O_EXCL.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from .messages import Refusal

MAX_SUBMISSION = 32 << 20  # bytes of a submission: a notebook with plots is a few MiB


class Refused(Refusal):
    """A path or file the grader will not read; its Message (a key of grader/messages.py) says why, str() in English."""


def read_regular(path: Path, limit: int = MAX_SUBMISSION) -> bytes:
    """The bytes of a regular file (not a symlink, fifo or device), refusing more than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("symlink", name=repr(Path(path).name)) from None
        raise Refused("cannot_open", name=repr(Path(path).name), why=exc.strerror) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not_regular_file", name=repr(Path(path).name))
        if info.st_size > limit:
            raise Refused("above_limit", name=repr(Path(path).name), size=info.st_size >> 20, limit=limit >> 20)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:
                raise Refused("grew_past_limit", name=repr(Path(path).name), limit=limit >> 20)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_new(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create `path` afresh (an existing entry, even a symlink, is removed, never followed)."""
    path = Path(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def private_dir(path: Path) -> Path:
    """A fresh, empty folder only this user can enter (any earlier entry there is removed first)."""
    import shutil

    path = Path(path)
    if path.is_symlink() or path.is_file():
        path.unlink()
    shutil.rmtree(path, ignore_errors=True)  # rmtree never follows symlinks inside
    path.mkdir(mode=0o700, parents=True)
    os.chmod(path, 0o700)
    return path


def say(line: str) -> None:
    """Print a progress line whatever the terminal's encoding."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    print(line.encode(encoding, "backslashreplace").decode(encoding), flush=True)
