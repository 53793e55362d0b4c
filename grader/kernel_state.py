"""Kernel state that is not namespaced and can outlive a sandbox's processes: keyrings (and SysV IPC).

A run starts with a fresh session keyring of its own (never its parent's, e.g. root's login keyring); the
seccomp filter (grader/seccomp.py) keeps a sandbox from making keys in the first place.
"""
from __future__ import annotations

import ctypes

from . import seccomp

SYS_KEYCTL = seccomp.number("keyctl")
KEYCTL_JOIN_SESSION_KEYRING = 1
_libc = ctypes.CDLL(None, use_errno=True)


def new_session_keyring() -> bool:
    """Join a new anonymous session keyring (KEYCTL_JOIN_SESSION_KEYRING, NULL); True if it worked."""
    return SYS_KEYCTL is not None and _libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) > 0
