"""The bridge: a grading child holds no line of another TODO's reference, and grading through it is unchanged.

The memory test reads the sandboxes' memory from outside (root reads /proc/<pid>/mem) while a student's answer
cell sleeps, so nothing the scan does can put a needle into the memory it scans.
"""
import json
import os
import threading
import time

import pytest

from grader import bridge as bridge_module
from grader import exports, grade, masters, sandbox

ASSIGNMENT = "02_decode_scheduling"
MARKER = "student answer marker 7c1f0e"


def reference_lines(source: str, given: str) -> list[str]:
    """Lines of a reference answer that the student edition does not show (the solution region's own)."""
    return sorted({line.strip() for line in source.splitlines()
                   if len(line.strip()) >= 24 and line.strip() not in given and not line.strip().startswith(("#", "@", "def ", '"""'))})


def sandbox_pids() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as handle:
                    uid = next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
            except (OSError, StopIteration, ValueError):
                continue
            if sandbox.UID_BASE <= uid < sandbox.UID_BASE + sandbox.UID_COUNT:
                found.append(int(entry))
    return found


def memory_of(pid: int) -> bytes:
    """Every readable private or anonymous mapping of `pid` (the heap, where cell sources and payloads live)."""
    chunks = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or (len(fields) > 5 and fields[5].startswith(("/usr", "/lib", "[v"))):
                continue
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except (OSError, ValueError, OverflowError):
                continue
    return b"".join(chunks)


@pytest.fixture(scope="module")
def grader():
    if sandbox.sandbox_level() != "bwrap":
        pytest.skip("the memory test reads other uids' sandboxes: it needs the bwrap level (root)")
    return grade.Grader(ASSIGNMENT)


def test_a_grading_child_holds_no_line_of_another_todos_reference(grader):
    task = next(t for t in grader.tasks if t.answer_id == "todo4")
    given = "\n".join(grader.setup + [grader.stand_ins[g] for g in grader.answer_ids])
    needles = {gid: reference_lines(grader.reference[gid], given) for gid in ("todo1", "todo2", "todo3")}
    assert all(needles.values()), needles
    # The student's answer is the reference for TODO 4; its cell sleeps first, so both sandboxes are alive when read.
    answer = f"import time\ntime.sleep(4)  # {MARKER}\n" + grader.reference["todo4"]
    result = {}
    thread = threading.Thread(target=lambda: result.update(run=grader._run_bridged(task, answer)))
    thread.start()
    seen = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(seen) < 2:
        time.sleep(0.3)
        for pid in sandbox_pids():
            try:
                memory = memory_of(pid)
            except OSError:
                continue
            if MARKER.encode() in memory or any(n.encode() in memory for ns in needles.values() for n in ns):
                seen[pid] = memory
    thread.join()
    run, server = result["run"]
    assert run.status == "ok" and server.status == "ok", (run, server)
    children = [m for m in seen.values() if MARKER.encode() in m]
    servers = [m for m in seen.values() if MARKER.encode() not in m and any(n.encode() in m for ns in needles.values() for n in ns)]
    assert children, "the scan did not find the student's own answer in any sandbox: it cannot see a child's memory"
    assert servers, "positive control: the reference server must hold the other TODOs' reference lines, and the scan find them"
    for memory in children:
        found = [n for ns in needles.values() for n in ns if n.encode() in memory]
        assert found == [], f"the grading child holds reference lines of other TODOs: {found[:3]}"


def test_every_answer_cell_can_be_stood_in_for():
    for name in ("01_continuous_batching", "02_decode_scheduling", "03_batch_scheduling"):
        for gid, source in masters.reference_answers(name).items():
            names = exports.exports(source)
            assert names, (name, gid)
            stand_in = exports.stand_in(source)
            assert "BEGIN SOLUTION" not in stand_in and all(f"'{n}'" in stand_in for n in names)
            body_lines = [line for line in source.splitlines() if line.startswith("    ") and line.strip()]
            assert not any(line in stand_in for line in body_lines if "__bridge__" not in line), (name, gid)


def test_an_answer_cell_with_top_level_code_is_refused_when_the_grader_starts():
    with pytest.raises(ValueError, match="only functions"):
        exports.exports("AGING = 4\n\ndef slo_key(r):\n    return r.priority * AGING\n")


# --- the bridge alone, between two threads of this process ---------------------------------------------

class Box:
    def __init__(self, items):
        self.items, self.log = items, {"n": 0}


def pair(owned_by_server):
    """A client bridge and a server bridge (served in a thread) over two pipes; the server owns `owned_by_server`."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    ns_client = {"__name__": "tests.test_bridge", "Box": Box}
    ns_server = {"__name__": "tests.test_bridge", "Box": Box}
    client = bridge_module.Bridge(b_r, a_w, ns_client, 1)
    server = bridge_module.Bridge(a_r, b_w, ns_server, 0)
    server.owned.update(owned_by_server)
    thread = threading.Thread(target=server.serve_forever, args=(5.0, 2), daemon=True)  # 2 = ITIMER_PROF
    return client, server, thread


def test_a_call_across_the_bridge_writes_the_callees_changes_back_in_place(monkeypatch):
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)  # no signals outside the main thread

    def grow(box, extra):
        box.items.append(extra)
        box.log["n"] += 1
        return (len(box.items), box.items)

    client, _, thread = pair({"grow": grow})
    thread.start()
    box = Box([1, 2])
    items = box.items
    count, same = client.call("grow", (box, [3]), {})
    assert count == 3 and box.items is items and box.items == [1, 2, [3]] and box.log == {"n": 1}
    assert same is items, "an object the callee returns that the caller already has comes back as that object"
    os.close(client.wfile.fileno())
    thread.join(5)


def test_an_exception_crosses_with_its_type_name(monkeypatch):
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)

    def bad(box):
        raise KeyError("missing")

    client, _, thread = pair({"bad": bad})
    thread.start()
    with pytest.raises(KeyError):
        client.call("bad", (Box([]),), {})
    with pytest.raises(Exception) as info:
        client.call("nothing", (), {})
    assert type(info.value).__name__ == "BridgeError"
    os.close(client.wfile.fileno())
    thread.join(5)


@pytest.mark.parametrize("message", [
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"fn": "os:system"}]}, {"r": 99}], "graph": {}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"g": "__builtins__"}]}, {"r": 3}],
     "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"m": {"fn": "lab.decode:todo"}, "n": "__globals__"}]}, {"r": 3}],
     "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"r": 5}]}, {"r": 3}],
     "graph": {"3": {"k": "dict", "v": []}, "5": {"k": "obj", "c": "os:_wrap_close", "v": {}}}},
])
def test_a_hostile_message_reaches_no_function_outside_the_notebook_and_lab(monkeypatch, message):
    """A child may send anything: the server resolves only classes and functions defined in the notebook or lab."""
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)
    got = []
    client, server, thread = pair({"peek": lambda *args: got.append(args) or "seen"})
    thread.start()
    client.send(message)
    reply = client.receive()
    os.close(client.wfile.fileno())
    thread.join(5)
    if reply["op"] == "return":  # only a harmless stand-in may have arrived
        assert all(isinstance(a, (bridge_module.Mirror, bridge_module.Opaque)) for a in got[0])
    else:
        assert reply["op"] == "raise" and got == []
