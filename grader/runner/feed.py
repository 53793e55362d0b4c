"""The grading process's end of a feed: items a child may see only one at a time, each after it answered the one before.

A scenario may hold items the child must not hold all at once (notebook 03's held-out traces: a key function that
found the whole trace in its process could tune itself to it). They never go in the payload. The child opens the
feed of the scenario it runs (child.py's Feed, over a pipe pair of its own), and this process sends the first item;
each reply the child sends is recorded, and only then is the next item sent. After the items come the `again` items
(indices, asked a second time) and then the end. So whatever the child's code does, its reply to item i was written
before item i + 1 existed in its process: the replies received here, not anything the child reports, are the
scenario's value (`Fed`).

Lines are JSON: child -> here {"open": scenario name} | {"reply": value (grader/runner/driver_common.py's encoding)};
here -> child {"n": name, "item": item} | {"n": name, "end": true} | {"n": name, "refused": why} (a scenario with no
feed, or one opened before: a second pass could answer knowing every item). A child that breaks the protocol (a line
that is not one of these, a reply with no item asked) gets the end of the channel: its reads see EOF.
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from dataclasses import dataclass, field

from ..observed import Malformed, decode_hook

MAX_REPLY = 4096   # bytes of one reply line: a key of a few numbers needs a few dozen
PIPE_BUF = 4096    # a message this short is written whole or not at all: a child that does not read cannot block us


@dataclass
class Fed:
    """What this process received on one scenario's feed: a reply per item sent, in the order sent."""

    replies: list = field(default_factory=list)   # to the items, then to the again items
    complete: bool = False                         # every item was sent and answered


class Feeder:
    """Serves the feeds of one run (`feeds`: scenario name -> {"items": [...], "again": [index, ...]}) from a thread.

    Give `child_fds` to the run (the runner closes them); call close() once the run has ended, then read `fed`."""

    def __init__(self, feeds: dict[str, dict]):
        self.feeds, self.fed = feeds, {}
        self._lines = {name: [_line({"n": name, "item": item}) for item in spec["items"]]
                       + [_line({"n": name, "item": spec["items"][i]}) for i in spec.get("again", ())] for name, spec in feeds.items()}
        to_child, from_child, self._stop = os.pipe(), os.pipe(), os.pipe()
        self.child_fds = (to_child[0], from_child[1])
        self._read, self._write = from_child[0], to_child[1]
        os.set_blocking(self._write, False)
        self._current, self._buffer = None, b""
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> dict[str, Fed]:
        """Stop serving (after the run ended: what it wrote last is read first); returns `fed`."""
        with contextlib.suppress(OSError):
            os.write(self._stop[1], b"x")
        self._thread.join()
        for fd in (self._read, *self._stop, *([self._write] if self._write >= 0 else [])):
            os.close(fd)
        return self.fed

    def _serve(self) -> None:
        while True:
            ready, _, _ = select.select([self._read, self._stop[0]], [], [])
            if self._read in ready:
                chunk = os.read(self._read, 65536)
                if not chunk or not self._take(chunk):
                    return
            elif self._stop[0] in ready:
                return

    def _take(self, chunk: bytes) -> bool:
        """Handle every whole line received; False once the channel is over."""
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            if not self._message(line):
                return self._broken()
        return len(self._buffer) <= MAX_REPLY or self._broken()

    def _message(self, line: bytes) -> bool:
        if len(line) > MAX_REPLY:
            return False
        try:
            message = json.loads(line, object_hook=decode_hook)
        except (Malformed, UnicodeDecodeError, ValueError, RecursionError):
            return False
        if type(message) is not dict or len(message) != 1:
            return False
        if "open" in message:
            return self._open(message["open"])
        if "reply" in message and self._current is not None:
            name, fed = self._current
            fed.replies.append(message["reply"])
            return self._next(name, fed)
        return False

    def _open(self, name) -> bool:
        if type(name) is not str or len(name) > 200:
            return False
        if name not in self.feeds:
            return self._send(_line({"n": name, "refused": "this scenario has no feed"}))
        if name in self.fed:   # a feed is read once: a second pass could answer knowing every item
            return self._send(_line({"n": name, "refused": "this scenario's feed was opened before"}))
        self._current = (name, self.fed.setdefault(name, Fed()))
        return self._next(*self._current)

    def _next(self, name: str, fed: Fed) -> bool:
        lines = self._lines[name]
        if len(fed.replies) < len(lines):
            return self._send(lines[len(fed.replies)])
        fed.complete, self._current = True, None
        return self._send(_line({"n": name, "end": True}))

    def _send(self, data: bytes) -> bool:
        if self._write < 0:
            return False
        try:
            return os.write(self._write, data) == len(data)
        except OSError:   # a child that does not read its feed (BlockingIOError) or has gone
            return False

    def _broken(self) -> bool:
        """End the channel: the child's next read sees EOF."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1
        return False


def _line(message: dict) -> bytes:
    data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
    if len(data) > PIPE_BUF:
        raise ValueError(f"a feed message of {len(data)} bytes (at most {PIPE_BUF})")
    return data
