"""A student's key and shard, from the file name alone: what `autograde --shard K/N` and the merge agree on.

grader/autograde.py takes its shard's students with these; grader/shard.py merges the shards' outputs (and
re-exports these names: shard.shard_of, shard.student_key, shard.parse_shard).
"""
from __future__ import annotations

import argparse
import hashlib


def student_key(student_id: str) -> str:
    """The SHA-256 of a student id's bytes as the file name has them: names that print alike keep their own."""
    try:
        raw = student_id.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is not an escaped byte
        raw = student_id.encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


def shard_of(student_id: str, count: int) -> int:
    """The shard (0 .. count-1) of a student id: the first 8 bytes of its SHA-256, modulo count."""
    return int(student_key(student_id)[:16], 16) % count


def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N) with 0 <= K < N (argparse type)."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard takes K/N (two integers), not {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"--shard {text}: K must be in 0..N-1 (array task ids from 0)")
    return k, n
