"""Every cache the grader keeps in a process, registered in one place: forget() clears them all, describe() lists them.

A cache is made with `cached` (functools.lru_cache, registered), `table` (a dict, registered) or, for one that must
be cleared in its own way, `register`. Each says what it keys on and why keeping it is safe: what would have to
change for a kept value to be wrong. tests/grader/test_caches.py fails on an lru_cache made anywhere else in grader/
(except the programs sent as text into the sandbox, OUTSIDE), and docs/architecture.md's Caches section is
describe() (`python -m grader.docs caches`).
"""
from __future__ import annotations

import functools
import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

GRADER = Path(__file__).resolve().parent
IMPORTS = re.compile(r"^from (?:\.+|grader) import (?:.*\b)?caches\b", re.M)

# Files of grader/ that keep a cache without this module: they import nothing from grader/.
OUTSIDE = {
    "grader/runner/bridge.py": "sent as text into the sandbox (its _plain lru_cache lives in the grading child and the reference server only)",
}


@dataclass
class Entry:
    name: str                   # where it is: module.qualname
    owner: str                  # the module that keeps it
    keys: str                   # what it keys on
    why: str                    # why a kept value stays right (what would have to change)
    clears: list[Callable[[], None]] = field(default_factory=list)   # one per time the owner was loaded


_REGISTRY: dict[str, Entry] = {}


def register(name: str, keys: str, why: str, clear: Callable[[], None], *, owner: str | None = None) -> None:
    """Register a cache kept some other way; forget() calls `clear`. A module loaded again adds its clear to the
    same entry (both copies are cleared)."""
    owner = owner or sys._getframe(1).f_globals["__name__"]
    full = name if name.startswith(owner + ".") else f"{owner}.{name}"
    entry = _REGISTRY.setdefault(full, Entry(full, owner, keys, why))
    entry.keys, entry.why = keys, why
    entry.clears.append(clear)


def cached(keys: str, why: str, *, maxsize: int | None = None):
    """functools.lru_cache(maxsize), registered under the function's module and qualified name."""
    def wrap(function):
        kept = functools.lru_cache(maxsize=maxsize)(function)
        register(function.__qualname__, keys, why, kept.cache_clear, owner=function.__module__)
        return kept
    return wrap


def table(name: str, keys: str, why: str) -> dict:
    """A new dict kept as a cache under `name` (its owner's variable), registered; forget() empties it."""
    kept: dict = {}
    register(name, keys, why, kept.clear, owner=sys._getframe(1).f_globals["__name__"])
    return kept


def forget() -> None:
    """Clear every registered cache: the next use reads, builds and draws everything again."""
    for entry in list(_REGISTRY.values()):
        for clear in list(entry.clears):
            clear()


def owners() -> list[str]:
    """The modules of grader/ that register a cache (they name this module), as import names."""
    found = []
    for path in sorted(GRADER.rglob("*.py")):
        if "__pycache__" not in path.parts and path != Path(__file__).resolve() and IMPORTS.search(path.read_text(encoding="utf-8")):
            found.append(".".join(path.relative_to(GRADER.parent).with_suffix("").parts))
    return found


def describe(load: bool = True) -> list[Entry]:
    """Every registered cache, by name; `load` imports every module that registers one first (else only those
    this process has imported are listed)."""
    if load:
        for module in owners():
            importlib.import_module(module)
    return sorted(_REGISTRY.values(), key=lambda e: e.name)


def markdown() -> str:
    """describe() as docs/architecture.md's table."""
    rows = ["| cache | keys on | why keeping it is safe |", "|---|---|---|"]
    for e in describe():
        rows.append(f"| `{e.name}` | {e.keys} | {e.why} |".replace("\n", " "))
    rows += [f"| `{path}` (not registered) | | {why} |" for path, why in OUTSIDE.items()]
    return "\n".join(rows)
