"""The bridge: a grading child holds no line of another TODO's reference, and grading through it is unchanged.

The memory test reads the sandboxes' memory from outside (root reads /proc/<pid>/mem) while a student's answer
cell waits, so nothing the scan does can put a needle into the memory it scans; the cell waits until the scan has
found both sandboxes, so the test does not depend on how busy the machine is.
"""
import contextlib
import copy
import csv
import dataclasses
import functools
import json
import os
import re
import signal
import threading
import time

import pytest

import hostile
import lab.decode as lab_decode
from grader import autograde, definitions, editions, grade, runner, sample_submissions
from grader.runner import bridge as bridge_module
from grader.feedback import visible_text
from grader.verdict import Outcome

ASSIGNMENT = "02_decode_scheduling"
MARKER = "student answer marker 7c1f0e"
SERVER_MARKER = "reference server marker 3d9e4a"


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
            if runner.UID_BASE <= uid < runner.UID_BASE + runner.UID_COUNT:
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
    if runner.sandbox_level() != "bwrap":
        pytest.skip("the memory test reads other uids' sandboxes: it needs the bwrap level (root)")
    return grade.Grader(ASSIGNMENT)


@pytest.mark.slow
@pytest.mark.deadline(600)
def test_a_grading_child_holds_no_line_of_another_todos_reference(grader, monkeypatch):
    """TODO 4's child, the reference of 1-3 on the server. The server's TODO 1 also defines a function whose docstring
    is SERVER_MARKER: a code constant it holds for as long as it runs (the reference's source text it may have freed
    and reused, as Debian's Python 3.11.2 does), so the positive control does not depend on the allocator."""
    monkeypatch.setitem(grader.reference, "todo1", grader.reference["todo1"] + f'\n\ndef _server_marker():\n    """{SERVER_MARKER}"""\n')
    # The student's answer is the reference for TODO 4. Its cell first calls TODO 1 across the bridge, which starts the
    # server, then waits until the scan below has found both sandboxes and releases it (SIGUSR1), 45 s at most (the
    # child's idle limit is 60 s). It used to sleep 4 s before any call: the server then lived only for TODO 4's
    # checks, shorter than one pass of the scan on a busy machine, and ended unseen (a failure of .ci/run under load).
    answer = (f"import signal\nimport time\n\nDecodeSchedulerSim().enqueue(request_id=1, prompt_len=4, max_new_tokens=3)\n\n\n"
              f"class _Released(Exception):\n    pass\n\n\n"
              f"def _release(*_):\n    raise _Released\n\n\nsignal.signal(signal.SIGUSR1, _release)\n"
              f"try:\n    time.sleep(45)  # {MARKER}\nexcept _Released:\n    pass\n" + grader.reference["todo4"])
    held, run = ("todo1", "todo2", "todo3"), lambda: grader._run_bridged(next(t for t in grader.tasks if t.answer_id == "todo4"), answer)
    student = {"todo4": answer}
    given = "\n".join(grader.setup + [grader.stand_ins[g] for g in grader.answer_ids] + list(student.values()))
    needles = {n for gid in held for n in reference_lines(grader.reference[gid], given)}
    assert needles and SERVER_MARKER not in given
    result = {}
    thread = threading.Thread(target=lambda: result.update(run=run()))
    thread.start()
    # Every sandbox, again and again until the run ends (the test's deadline bounds it): the markers only while it runs
    # (a process holds some 270 MB to search), the child's reference lines on its first and last memory, after the run
    children, servers, released = {}, set(), False
    while thread.is_alive():
        time.sleep(0.3)
        for pid in sandbox_pids():
            if pid in servers:
                continue  # found once is enough: one pass reads every sandbox's memory
            try:
                memory = memory_of(pid)
            except OSError:
                continue
            if pid in children or MARKER.encode() in memory:
                children.setdefault(pid, [memory, None])[1] = memory
            elif SERVER_MARKER.encode() in memory:
                servers.add(pid)
        if children and servers and not released:
            for pid in children:  # both seen: let the child go on; its last memory is read on the passes after
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGUSR1)
            released = True
    thread.join()
    run, server = result["run"]
    assert run.status == "ok" and server.status == "ok", (run, server)
    assert children, "the scan did not find the student's own answer in any sandbox: it cannot see a child's memory"
    assert servers, "positive control: the reference server holds its marker for as long as it runs, and the scan finds it"
    for first, last in children.values():
        for memory in (first, last):
            holds_marker = SERVER_MARKER.encode() in memory   # a name: pytest would print 270 MB of the operands
            assert not holds_marker, "the grading child holds the server's reference (its marker)"
            found = sorted(n for n in needles if n.encode() in memory)
            assert found == [], f"the grading child holds reference lines of other TODOs: {found[:3]}"


def test_every_answer_cell_can_be_stood_in_for():
    from grader.paths import assignment_names
    for name in assignment_names():
        for gid, source in editions.reference_answers(name).items():
            names = definitions.exports(source)
            assert names, (name, gid)
            stand_in = definitions.stand_in(source)
            assert "BEGIN SOLUTION" not in stand_in and all(f"'{n}'" in stand_in for n in names)
            body_lines = [line for line in source.splitlines() if line.startswith("    ") and line.strip()]
            assert not any(line in stand_in for line in body_lines if "__bridge__" not in line), (name, gid)


def test_an_answer_cell_with_top_level_code_is_refused_when_the_grader_starts():
    with pytest.raises(ValueError, match="only functions"):
        definitions.exports("AGING = 4\n\ndef slo_key(r):\n    return r.priority * AGING\n")


# --- the bridge alone, between two threads of this process ---------------------------------------------

class Box:
    def __init__(self, items):
        self.items, self.log = items, {"n": 0}


def pair(owned_by_server):
    """A client bridge and a server bridge (served in a thread) over two pipes; the server owns `owned_by_server`."""
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    ns_client = {"__name__": __name__, "Box": Box}   # Box is defined here, as a notebook class is in the notebook
    ns_server = {"__name__": __name__, "Box": Box}
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
    # attack report #4: a handle of the other side's (gone: no value names a callable by number)
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"h": 2}]}, {"r": 3}], "graph": {"3": {"k": "dict", "v": []}}},
    # names that reach past what a module or class body defines: its imports, dunders, a module's attributes
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"fn": "lab:os.system"}]}, {"r": 3}], "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"c": "lab:__loader__"}]}, {"r": 3}], "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"g": "__bridge__"}]}, {"r": 3}], "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"g": "Box.__init__.__globals__"}]}, {"r": 3}],
     "graph": {"3": {"k": "dict", "v": []}}},
    {"x": 2, "op": "call", "target": "peek", "roots": [{"t": [{"fn": "lab..decode:todo"}]}, {"r": 3}], "graph": {"3": {"k": "dict", "v": []}}},
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


# --- the takeover of attack report #4-#6, one step at a time ---------------------------------------------------
# The child runs student code, so it may send any message. Each step of the attack is one hostile message (or cell)
# here; the server must answer it without running, or handing out, anything outside its static allowlist.

class Clock:
    """A notebook-like class: a method (one added later, as add_to_class does), a property, a classmethod, a class
    attribute that is a class, and a plain class-level default."""

    tick_size = 1
    kind = Box

    def tick(self):
        return self.tick_size

    @property
    def doubled(self):
        return 2 * self.tick_size

    @classmethod
    def make(cls):
        return cls()


def _later(self):
    return "later"


Clock.later = _later   # as @add_to_class(Clock) does


@dataclasses.dataclass
class Job:
    key: object = len   # a dataclass field whose default is a function is still a field
    size: int = 0


def served(owned, message):
    """The server's reply to one raw message, and the arguments its exports were called with."""
    got = []
    wrapped = {name: (lambda *args, fn=fn: got.append(args) or fn(*args)) for name, fn in owned.items()}
    client, server, thread = pair(wrapped)
    server.ns.update(Clock=Clock, Job=Job)
    thread.start()
    client.send(message)
    reply = client.receive()
    os.close(client.wfile.fileno())
    thread.join(5)
    return reply, got


def call(target, args, graph):
    """A top-level call message: args is the encoded tuple's items; kwargs is an empty dict."""
    return {"x": 2, "op": "call", "target": target, "roots": [{"t": args}, {"r": 99}],
            "graph": {"99": {"k": "dict", "s": []}, **graph}}


def obj(cls, fields):
    return {"k": "obj", "c": f"{__name__}:{cls.__qualname__}", "v": fields}


def keys_in(value):
    """Every key of every dict in a decoded JSON message."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


@pytest.fixture(autouse=True)
def deadline(request):
    """A test whose other side never answers fails after a while, instead of hanging the run (SIGALRM: setitimer is
    patched out below). A slow test names its own limit with @pytest.mark.deadline(seconds)."""
    def expired(signum, frame):
        raise TimeoutError("no answer within the test's deadline")

    marker = request.node.get_closest_marker("deadline")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(marker.args[0] if marker else 60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def no_timer(monkeypatch):
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)  # no signals outside the main thread


@pytest.mark.parametrize("field", ["tick", "later", "doubled", "make", "kind", "__class__", "__dict__", "__init__", "__call__"])
def test_a_field_of_an_object_sent_across_may_not_hide_what_its_class_defines(no_timer, field):
    """Step 1 of the takeover: an instance field named like a method overrides it, so the reference calls the child."""
    reply, got = served({"peek": lambda *a: "seen"}, call("peek", [{"r": 3}], {"3": obj(Clock, {field: 1})}))
    assert reply["op"] == "raise" and reply["error"] == "BridgeError" and got == []
    assert reply["roots"] == [] and reply["graph"] == {}


def test_data_fields_still_cross_as_they_are(no_timer):
    """The control: plain fields, a new field, a class-level default and a dataclass field with a function default."""
    reply, got = served({"peek": lambda clock, job: clock.tick() + job.size},
                        call("peek", [{"r": 3}, {"r": 5}], {"3": obj(Clock, {"tick_size": 5, "extra": {"t": [1]}}),
                                                            "5": obj(Job, {"key": {"fn": "lab.decode:todo"}, "size": 2})}))
    assert reply["op"] == "return" and reply["roots"][2] == 7
    clock, job = got[0]
    assert vars(clock) == {"tick_size": 5, "extra": (1,)} and job.key.__name__ == "todo"


def flat(cls, fields):
    """An object in the bridge's flat form: its fields as [name, value] pairs, sent as they are."""
    return {"k": "obj", "c": f"{__name__}:{cls.__qualname__}", "s": [[k, v] for k, v in fields.items()]}


@pytest.mark.parametrize("field", ["tick", "later", "doubled", "make", "kind", "__class__", "__dict__", "__init__"])
def test_the_flat_form_may_not_hide_what_a_class_defines_either(no_timer, field):
    reply, got = served({"peek": lambda *a: "seen"}, call("peek", [{"r": 3}], {"3": flat(Clock, {field: 1})}))
    assert reply["op"] == "raise" and reply["error"] == "BridgeError" and got == []


@pytest.mark.parametrize("value", [{"r": 5}, {"fn": "lab.decode:todo"}, [1], {"t": [1]}])
def test_the_flat_form_carries_only_numbers_and_strings(no_timer, value):
    """A reference or a function in the flat form would skip the checks decode makes: it is refused, not decoded."""
    graph = {"3": flat(Clock, {"tick_size": value}), "5": obj(Clock, {})}
    reply, got = served({"peek": lambda *a: "seen"}, call("peek", [{"r": 3}], graph))
    assert reply["op"] == "raise" and reply["error"] == "BridgeError" and got == []


def test_a_record_of_plain_fields_crosses_in_the_flat_form_and_back(no_timer):
    """The control: a request-like object travels as its [name, value] pairs, and the callee's change comes back."""
    def bump(job):
        job.size += 1
        return job.size

    reply, got = served({"bump": bump}, call("bump", [{"r": 3}], {"3": flat(Job, {"size": 2, "name": "a", "w": 0.5})}))
    assert reply["op"] == "return" and reply["roots"][2] == 3 and vars(got[0][0]) == {"size": 3, "name": "a", "w": 0.5}
    assert reply["graph"]["3"] == flat(Job, {"size": 3, "name": "a", "w": 0.5}), "a flat record is sent flat"


def test_a_field_accepted_once_does_not_open_the_way_for_a_method_shaped_one(no_timer):
    """What the server learns about a class is kept between calls; a later message still may not hide a method."""
    client, server, thread = pair({"peek": lambda *a: "seen"})
    server.ns.update(Clock=Clock, Job=Job)
    thread.start()
    client.send(call("peek", [{"r": 3}], {"3": flat(Clock, {"tick_size": 5})}))
    first = client.receive()
    client.send({**call("peek", [{"r": 7}], {"7": flat(Clock, {"tick_size": 5, "tick": 1})}), "x": 4})
    second = client.receive()
    os.close(client.wfile.fileno())
    thread.join(5)
    assert first["op"] == "return" and second["op"] == "raise" and second["error"] == "BridgeError"


def test_both_sides_refuse_a_field_that_hides_a_method():
    """The same rule on the child's side: a reply may not plant a method-shaped field in the child's objects either."""
    r, w = os.pipe()
    side = bridge_module.Bridge(r, w, {"__name__": __name__, "Clock": Clock}, 1)
    clock = Clock()
    side.objs[3], side.ids[id(clock)] = clock, 3
    with pytest.raises(bridge_module.BridgeError):
        side.apply_graph({3: obj(Clock, {"tick": 1})})
    assert vars(clock) == {} and clock.tick() == 1
    side.apply_graph({3: obj(Clock, {"tick_size": 4})})
    assert clock.tick() == 4
    os.close(r)
    os.close(w)


@pytest.mark.parametrize("target, name", [
    ("clock", "__builtins__"), ("clock", "__globals__"), ("clock", "__code__"), ("clock", "__class__"), ("clock", "__init__"),
    ("clock", "tick_size"), ("clock", "doubled"), ("clock", "make"), ("clock", "kind"), ("clock", "mro"),
    ("lambda", "__builtins__"), ("lambda", "__globals__"), ("lambda", "__code__"), ("lambda", "__call__"),
    ("list", "append"), ("list", "__class__"), ("dict", "get"),
])
def test_a_method_value_names_only_a_method_its_class_body_defines(no_timer, target, name):
    """Steps 2-3: a method value whose owner is the server's own lambda, and a name that is not a method of a notebook
    or lab class, reached the server's __builtins__ (then eval and exec) through getattr."""
    graph = {"3": obj(Clock, {}), "5": {"k": "opaque", "call": 1}, "7": {"k": "list", "s": []}, "9": {"k": "dict", "s": []}}
    owner = {"clock": 3, "lambda": 5, "list": 7, "dict": 9}[target]
    reply, got = served({"peek": lambda *a: "seen"}, call("peek", [{"m": {"r": owner}, "n": name}], graph))
    assert reply["op"] == "raise" and reply["error"] == "BridgeError" and got == []


def test_a_method_its_class_defines_still_crosses(no_timer):
    for name, expected in (("tick", 1), ("later", "later")):
        reply, got = served({"peek": lambda method: method()}, call("peek", [{"m": {"r": 3}, "n": name}], {"3": obj(Clock, {})}))
        assert reply["op"] == "return" and reply["roots"][2] == expected, reply


@pytest.mark.parametrize("target", ["__no_such_export__", ["h", 2], ["h", 4], {"r": 3}, None])
def test_a_call_to_anything_but_an_export_decodes_nothing_and_sends_nothing_back(no_timer, target):
    """Step 4: a call to an unknown export packed its arguments (there, the server's builtins) into the error reply."""
    reply, got = served({"peek": lambda *a: "seen"}, call(target, [{"r": 3}], {"3": {"k": "dict", "s": [["a", 1]]}}))
    assert reply == {"x": 2, "op": "raise", "roots": [], "graph": {}, "error": "BridgeError",
                     "text": "no such function across the bridge"} and got == []


def test_a_function_the_bridge_does_not_name_never_becomes_something_the_other_side_can_call(no_timer):
    """Steps 2 and 5: the server's own callback lambda went out as a handle, and handles were called unchecked.

    A lambda, a builtin, a bound builtin method or a partial of the server's comes back as a placeholder that raises
    when called; a function of lab or of the notebook travels by its name; nothing travels as a number to call."""
    def leak(box):
        box.log.update(f=lambda: "ran on the server", eval=eval, append=[].append, partial=functools.partial(print),
                       lab=lab_decode.todo, method=Clock().tick)
        return box.log["f"]

    client, server, thread = pair({"leak": leak})
    client.ns["Clock"] = server.ns["Clock"] = Clock
    thread.start()
    box = Box([])
    client.send(client._pack("call", [(box,), {}], target="leak"))
    raw = client.receive()
    assert raw["op"] == "return" and "h" not in keys_in(raw)
    opaque = [spec for spec in raw["graph"].values() if spec.get("k") == "opaque"]
    assert len(opaque) == 4 and all(spec.get("call") == 1 for spec in opaque), raw["graph"]
    client.call("leak", (box,), {})   # the same, decoded
    placeholders = [box.log[k] for k in ("f", "eval", "append", "partial")]
    assert all(isinstance(p, bridge_module.OpaqueCallable) for p in placeholders)
    for placeholder in placeholders:
        with pytest.raises(TypeError):
            placeholder("__import__('os').system('true')")
    assert box.log["lab"] is lab_decode.todo and box.log["method"]() == 1, "what the bridge names still crosses"
    os.close(client.wfile.fileno())
    thread.join(5)


def test_placeholders_cannot_be_called_and_come_back_as_themselves(no_timer):
    seen = {}

    def keep(box):
        seen["f"] = box.log["f"]
        box.log["g"] = box.log["f"]
        box.log["server"] = lambda: "ran on the server"
        return box.log["f"]

    client, _, thread = pair({"keep": keep})
    thread.start()
    mine = lambda: "the child's"  # noqa: E731 - a student's lambda: it must not run on the server either
    box = Box([])
    box.log["f"] = mine
    back = client.call("keep", (box,), {})
    assert isinstance(seen["f"], bridge_module.OpaqueCallable)
    with pytest.raises(TypeError):
        seen["f"]()
    assert back is mine and box.log["g"] is mine, "a placeholder comes back as the object it stands for"
    assert isinstance(box.log["server"], bridge_module.OpaqueCallable)
    with pytest.raises(TypeError):
        box.log["server"]()
    os.close(client.wfile.fileno())
    thread.join(5)


def test_a_malformed_message_does_not_end_the_server(no_timer):
    """Whatever the child sends, the server answers the next call: no message can crash it into a grading error."""
    client, _, thread = pair({"grow": lambda box, extra: box.items.append(extra)})
    thread.start()
    os.write(client.wfile.fileno(), b"[" * 100_000 + b"\n" + b"not json\n" + b"[1, 2]\n")
    # JSON, but a frozenset of a dict: decoding it fails (an unhashable member)
    client.send({"x": 1, "op": "call", "target": "grow", "roots": [{"z": [{"r": 1}]}, {"r": 1}], "graph": {"1": {"k": "dict", "s": []}}})
    client.send({"x": 3, "op": "call", "target": "grow", "roots": "nonsense", "graph": []})
    assert client.receive()["op"] == "raise" and client.receive()["op"] == "raise"
    box = Box([])
    client.exchange = 3
    client.call("grow", (box, 1), {})
    assert box.items == [1]
    os.close(client.wfile.fileno())
    thread.join(5)
    assert not thread.is_alive()


# --- the child: a cell cannot swap the driver, and finds no source in its payload -------------------------------

SWAP = '''
import sys
_frame = sys._getframe()
while _frame is not None and not isinstance(_frame.f_locals.get("payload"), dict):
    _frame = _frame.f_back
_payload = _frame.f_locals["payload"]
seen = sorted(_payload)
_payload["driver"] = "def observe(namespace, ops):\\n    return 'swapped'\\n"
'''


@pytest.mark.slow
def test_a_cell_cannot_swap_the_driver_or_read_the_sources_from_the_payload():
    """Step 6: the attacker's cell replaced payload["driver"] (still unread when the cells ran) by one that reported
    the stolen code. The driver is loaded before the cells now, and the payload no longer holds it or the cells."""
    payload = {"setup": [], "cells": [["c", SWAP]], "driver": "def observe(namespace, ops):\n    return namespace.get('seen')\n",
               "scenarios": [{"name": "p", "ops": []}], "scenario_cpu": 5}
    run = runner.run_child(payload, dataclasses.replace(runner.CHILD, wall=60), runner.shared())
    assert run.status == "ok" and run.records[0] == {"kind": "cells", "errors": {}}, run
    obs = run.records[1]["obs"]
    assert obs != "swapped" and isinstance(obs, list) and obs, obs
    assert not {"driver", "cells", "scenarios"} & set(obs), obs


# --- the server's lifetime: it ends with its child, its CPU is the child's, its failures are not the student's ---

SPIN_IN_FOUR = '''
import os, signal, time
signal.setitimer(signal.ITIMER_PROF, 0)
for _ in range(4):
    if os.fork() == 0:
        try:
            os.setsid()   # refused in the sandbox (seccomp): the spinner stays in the run's session
        except OSError:
            pass
        while True:
            pass
time.sleep(300)
'''


@pytest.mark.slow
def test_a_reference_server_ends_with_its_child_and_its_cpu_counts_as_the_childs():
    """Attack #6: the taken-over server forked busy loops and outlived its child by the wall limit. Here a 'server'
    spins in four sessions of its own while its child sleeps (no CPU): the child is stopped by its no-progress limit,
    counting the server's CPU, and the server is killed with everything of its uid right after."""
    if runner.sandbox_level() != "bwrap":
        pytest.skip("processes that leave their session are ended by uid: that needs the bwrap level")
    pair_ = runner.Pair()
    server = {"setup": [], "cells": [["s", SPIN_IN_FOUR]], "driver": "", "scenarios": [], "scenario_cpu": 1000}
    child = {"setup": [], "cells": [["c", "import time\ntime.sleep(300)\n"]], "driver": "def observe(ns, ops):\n    return 0\n",
             "scenarios": [], "scenario_cpu": 1000}
    warm, done = runner.shared(), {}
    thread = threading.Thread(target=lambda: done.update(server=runner.run_child(server, runner.Limits(wall=300), warm,
                                                                                  watcher=pair_.server)))
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)
    run = runner.run_child(child, runner.Limits(wall=300, stall=2.0), warm, watcher=pair_.child)
    pair_.child_ended()
    ended = time.monotonic()
    thread.join(30)
    assert run.status == "timeout" and run.why == "stall", run   # 2 s of the server's CPU, not 300 s of sleep
    assert ended - started < 60
    assert done["server"].why == "watcher" and pair_.server_killed
    assert time.monotonic() - ended < runner.SERVER_GRACE + 5
    assert runner.leftovers()["processes"] == {}


@pytest.mark.slow
def test_blank_lines_are_not_progress():
    """Attack #6's heartbeat: a run that spins while it writes blank lines to its result pipe is still stalled."""
    cell = '''
import os, signal, sys, threading, time
signal.setitimer(signal.ITIMER_PROF, 0)
_f = sys._getframe()
while _f is not None and "emit" not in _f.f_locals:
    _f = _f.f_back
_fd = _f.f_locals["emit"].__closure__[0].cell_contents.fileno()
def _beat():
    while True:
        os.write(_fd, b"\\n")
        time.sleep(0.05)
threading.Thread(target=_beat, daemon=True).start()
while True:
    pass
'''
    payload = {"setup": [], "cells": [["c", cell]], "driver": "def observe(ns, ops):\n    return 0\n", "scenarios": [],
               "scenario_cpu": 1000}
    done = runner.shared().run("grade", payload, runner.Limits(wall=30, stall=1.0, cpu_seconds=60))
    assert done.timed_out and done.why == "stall", done.why


@pytest.mark.slow
@pytest.mark.deadline(600)
def test_a_grading_fault_is_run_again_once_then_reported_never_scored(monkeypatch):
    """A server that failed, or a child starved of CPU by the machine's load, says nothing about the answer."""
    grader_ = grade.Grader(ASSIGNMENT)
    task = grader_.tasks[0]
    answer = grader_.reference[task.answer_id]
    real, calls = grade.Grader._run_bridged, []
    crashed = runner.ChildRun(status="crashed", detail="ended early (exit code 70)")

    def failing(self, task, source):
        calls.append(1)
        run, _ = real(self, task, source)
        return run, crashed

    monkeypatch.setattr(grade.Grader, "_run_bridged", failing)
    verdict = grader_.grade_task(task, answer)
    assert len(calls) == 2 and verdict.score == 0 and verdict.status == Outcome.GRADING_ERROR
    assert str(verdict.note).startswith("grading error, re-run (the reference server crashed")
    assert all(r.detail == "not graded: grading error" for r in verdict.rules) and not verdict.hung
    grader_.grade_task(task, answer)
    assert len(calls) == 4, "a grading error is not remembered for the next identical answer"

    def once(self, task, source):   # fails the first time only: the re-run's verdict stands
        calls.append(1)
        run, server = real(self, task, source)
        return (run, crashed) if len(calls) == 5 else (run, server)

    monkeypatch.setattr(grade.Grader, "_run_bridged", once)
    verdict = grader_.grade_task(task, answer)
    assert len(calls) == 6 and verdict.score == verdict.points and verdict.note == "" and verdict.status == Outcome.GRADED


def test_a_timeout_is_the_machines_fault_only_if_the_child_waited_for_a_cpu():
    ok = runner.ChildRun()
    starved = runner.ChildRun(status="timeout", why="wall", cpu=3, waited=100, elapsed=120)
    sleeping = runner.ChildRun(status="timeout", why="wall", cpu=1, waited=0.1, elapsed=120)
    slow = runner.ChildRun(status="timeout", why="wall", cpu=115, waited=2, elapsed=120)
    # a run whose own processes kept the CPUs busy while one of them waited starved itself: scored, not re-run
    crowd = runner.ChildRun(status="timeout", why="wall", cpu=230, waited=100, elapsed=120)
    assert grade.grading_fault(crowd, ok) is None
    assert str(grade.grading_fault(starved, ok)) == "the machine was busy: the run waited 100 s of 120 s for a CPU"
    assert grade.grading_fault(sleeping, ok) is grade.grading_fault(slow, ok) is grade.grading_fault(ok, ok) is None
    assert str(grade.grading_fault(ok, runner.ChildRun(status="garbled"))).startswith("the reference server garbled")


# --- the attacker's notebooks, graded as `make autograde` grades them ------------------------------------------

QUOTED_BASE64 = re.compile(r"'[A-Za-z0-9+/=]{24,}'")   # how the stolen code rode out: a quoted base64 piece per rule


def graded_batch(assignment, batch, tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    sample_submissions.write(batch, subs)
    autograde.run(assignment, subs, out, jobs=0)
    rows = {row["student_id"]: row for row in csv.DictReader(open(out / "grades.csv"))}
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    pages = {sid: visible_text((out / "feedback" / f"{sid}.html").read_text()) for sid in rows}
    return rows, report, pages


def stolen_pieces(report_entry) -> list[str]:
    """What of the rules' details looks like the attack's carrier (it is empty unless the child held reference code)."""
    return [piece for verdict in report_entry["verdicts"] for rule in verdict["rules"]
            for piece in QUOTED_BASE64.findall(rule["detail"])]


def test_the_carrier_check_sees_the_carrier():
    entry = {"verdicts": [{"rules": [{"detail": "held-out #1: the scenario did not finish: 'eJyFVE1v2zAMvec3+GbkgB5Y'"}]}]}
    assert stolen_pieces(entry) == ["'eJyFVE1v2zAMvec3+GbkgB5Y'"]


@pytest.mark.slow
@pytest.mark.deadline(600)
@pytest.mark.parametrize("assignment", ["02_decode_scheduling", "03_batch_scheduling"])
def test_the_exfiltrating_notebook_scores_zero_and_its_page_holds_no_reference(assignment, tmp_path):
    """Attack #4/#5: the blank-scoring rce_exfil notebook's page carried every other TODO's reference (12/12 on resubmission)."""
    reference = editions.reference_answers(assignment)
    rows, report, pages = graded_batch(assignment, {"rce_exfil": sample_submissions.filled(assignment, hostile.rce_exfil_answers(assignment)),
                                                    "blank": sample_submissions.release(assignment)}, tmp_path)
    assert float(rows["rce_exfil"]["total"]) == 0
    # what the student edition, or any blank submission's page (a failing case's code), shows anyway
    given = "\n".join([cell.source for cell in sample_submissions.release(assignment).cells] + [pages["blank"]])
    needles = [line for source in reference.values() for line in reference_lines(source, given)]
    assert len(needles) > 20
    assert [line for line in needles if line in pages["rce_exfil"]] == []
    assert stolen_pieces(report["rce_exfil"]) == []


@pytest.mark.slow
@pytest.mark.deadline(900)
def test_a_hog_in_the_same_batch_costs_the_victim_nothing(tmp_path):
    """Attack #6: a takeover forked busy loops in the reference server (and a child can spin and write blank lines to
    look alive); another student's child graded beside it ran out of wall time and lost points. Now the server runs
    nothing of the attacker's, the spinning child is stopped by its no-progress limit, and the victim gets full marks."""
    reference = editions.reference_answers(ASSIGNMENT)
    batch = {"attacker_hog": sample_submissions.filled(ASSIGNMENT, hostile.server_hog_answers()),
             "attacker_beats": sample_submissions.filled(ASSIGNMENT, hostile.child_hog_answers()),
             "victim": sample_submissions.filled(ASSIGNMENT, reference)}
    started = time.monotonic()
    rows, report, _ = graded_batch(ASSIGNMENT, batch, tmp_path)
    assert float(rows["victim"]["total"]) == float(rows["victim"]["max_total"]) == 12, report["victim"]
    assert float(rows["attacker_hog"]["total"]) == float(rows["attacker_beats"]["total"]) == 0
    assert time.monotonic() - started < 240, "each of the spinning child's TODOs is stopped within seconds, not 120 s"
    assert runner.leftovers()["processes"] == {}


@pytest.mark.slow
def test_a_reference_server_starts_only_with_the_first_call_across_the_bridge():
    """A child whose scenarios call no other TODO (01's functions) never has a server, and gets the same verdict; a child
    that calls one (02's key, whose scenarios enqueue with TODO 1) has its server started by that call."""
    from grader import pipeline

    for name, gid, needed in (("01_continuous_batching", "todo1", False), ("02_decode_scheduling", "todo2", True)):
        g = pipeline.grader_for(name)
        task = next(t for t in g.tasks if t.answer_id == gid)
        run, server = g._run_bridged(task, g.reference[gid] + "\n# lazy\n")
        assert run.status == "ok" and server.status == "ok", (run, server)
        assert (getattr(server.detail, "key", None) == "server_not_needed") is not needed, (name, server)
        assert g._verdict(task, "", run).score == task.points


# --- pure exports: the calls of one state answered in one crossing (Bridge._speculate, Batch) ---------------------

class Req:
    def __init__(self, rid, prio):
        self.rid, self.prio = rid, prio


class Sim:
    def __init__(self, prios):
        self.reqs, self.clock, self.called = [Req(rid, prio) for rid, prio in enumerate(prios)], 0, 0
        self.last, self.opts = len(prios) - 1, {}


def key(sim, req):
    return (req.prio - sim.clock, req.rid)


class Stop(BaseException):
    """A CPU-time alarm (the child's ScenarioTimeout is a BaseException too)."""


def batched(monkeypatch, owned, pure):
    """A client and a served server over the bridge, both holding Sim and Req, with `pure` declared; and the list of the
    targets of the calls the client sent across."""
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)
    client, server, thread = pair(owned)
    for side in (client, server):
        side.ns.update(Sim=Sim, Req=Req)
        side.pure = frozenset(pure)
    sent, send = [], client.send
    client.send = lambda message, *graph: (message.get("op") == "call" and sent.append(message["target"])) or send(message, *graph)
    thread.start()
    return client, server, thread, sent


def close(client, server, thread):
    """End the server (its input closes), then close every end through its file object: an fd closed by number would
    be closed again, perhaps as another pair's pipe, when its file object is collected."""
    client.wfile.close()
    thread.join(5)
    for end in (client.rfile, server.rfile, server.wfile):
        end.close()


def run_both(monkeypatch, owned, script):
    """`script(client)` with "key" declared pure and with nothing declared: (its results, messages sent) for each."""
    out = []
    for pure in (("key",), ()):
        client, server, thread, sent = batched(monkeypatch, owned, pure)
        try:
            out.append((script(client), list(sent)))
        finally:
            close(client, server, thread)
    return out


def test_a_pure_exports_calls_in_one_state_cross_once_and_give_what_each_call_gives(monkeypatch):
    def script(client):
        sim = Sim([5, 1, 4, 1, 3])
        first = sorted(sim.reqs, key=lambda req: client.call("key", (sim, req), {}))
        return [req.rid for req in first], [client.call("key", (sim, req), {}) for req in sim.reqs]

    (batched_result, batched_sent), (plain_result, plain_sent) = run_both(monkeypatch, {"key": key}, script)
    assert batched_result == plain_result == ([1, 3, 4, 2, 0], [(5, 0), (1, 1), (4, 2), (1, 3), (3, 4)])
    assert batched_sent == ["key"] and len(plain_sent) == 10, "one crossing answers all ten calls of the same state"


def test_a_write_between_calls_sends_the_next_call_across_again(monkeypatch):
    def script(client):
        sim = Sim([2, 2, 2])
        values = [client.call("key", (sim, sim.reqs[0]), {})]
        sim.clock = 1   # the server's batch was for clock 0: stale now
        values.append(client.call("key", (sim, sim.reqs[1]), {}))
        sim.reqs[2].prio = 9   # an item's own field
        values.append(client.call("key", (sim, sim.reqs[2]), {}))
        values.append(client.call("key", (sim, sim.reqs[0]), {}))   # the same state as the call before: answered here
        return values

    (got, sent), (expected, plain_sent) = run_both(monkeypatch, {"key": key}, script)
    assert got == expected == [(2, 0), (1, 1), (8, 2), (1, 0)]
    assert sent == ["key", "key", "key"] and len(plain_sent) == 4


def test_a_pure_export_that_writes_is_never_answered_from_a_batch(monkeypatch):
    """Declared pure but it is not: a write by the call itself, or by one of the calls made ahead for the other items,
    keeps every call crossing, and the caller's state is what it is without batches."""
    def counts(sim, req):
        sim.called += 1
        return req.prio

    def writes_for_one(sim, req):
        if req.rid == 1:
            req.prio += 10
        return req.prio

    def remembers_the_last(sim, req):   # calling ahead for 1 then 2 leaves sim.last as it came (2): the call's own write shows
        sim.last = req.rid
        return req.prio

    for owned in ({"key": counts}, {"key": writes_for_one}, {"key": remembers_the_last}):
        def script(client):
            sim = Sim([3, 1, 2])
            values = []
            for req in sim.reqs:
                for _ in range(2):
                    sim.last = 2
                    values.append((client.call("key", (sim, req), {}), sim.last))
            return values, sim.called, [req.prio for req in sim.reqs]

        (got, sent), (expected, plain_sent) = run_both(monkeypatch, owned, script)
        assert got == expected and len(sent) == len(plain_sent) == 6, owned


def test_a_call_ahead_that_raises_or_calls_across_is_left_to_its_own_crossing(monkeypatch):
    """Item 1's key raises, item 2's calls back to the client and item 3's value is an int JSON cannot carry: none of
    them is answered from the batch (the client gets the error, its callback runs, as without batches), and the others
    still are."""
    def picky(sim, req):
        if req.rid == 1:
            raise KeyError("no key for 1")
        if req.rid == 2:
            return server_of[0].call("seen", (sim,), {})
        return 10 ** 4300 if req.rid == 3 else req.prio   # 4,301 digits: over Python's limit for writing an int

    server_of = []

    def script(client):
        sim = Sim([3, 1, 2, 7, 5, 6])
        client.owned["seen"] = lambda sim: sim.clock + 100 + sim.called
        values = []
        for req in [sim.reqs[i] for i in (0, 4, 5, 1, 2, 3)]:   # those the first reply brings first: a batch holds until a message crosses
            try:
                values.append(client.call("key", (sim, req), {}))
            except Exception as exc:  # noqa: BLE001 - the same error either way
                values.append(type(exc).__name__)
        return values

    out = []
    for pure in (("key",), ()):
        client, server, thread, sent = batched(monkeypatch, {"key": picky}, pure)
        server_of[:] = [server]
        try:
            out.append((script(client), sent))
        finally:
            close(client, server, thread)
    (got, sent), (expected, plain_sent) = out
    assert got == expected == [3, 5, 6, "KeyError", 100, "BridgeError"]
    assert len(sent) == 4 and len(plain_sent) == 6, "items 4 and 5 come with the first reply; 1, 2 and 3 cross"


def test_a_first_call_that_calls_across_is_never_answered_again_from_a_batch(monkeypatch):
    """The client's code that a call runs (a callback across) may change what no state shows: each such call crosses."""
    def asks_back(sim, req):   # for item 0 only; its kwargs a dict of the state, so the call across makes no object
        return (server_of[0].call("bump", (), sim.opts) if req.rid == 0 else 0) + req.prio

    server_of, counter = [], {}
    out = []
    for pure in (("key",), ()):
        client, server, thread, sent = batched(monkeypatch, {"key": asks_back}, pure)
        server_of[:] = [server]
        counter["n"] = 0
        client.owned["bump"] = lambda: counter.__setitem__("n", counter["n"] + 1) or 0
        try:
            sim = Sim([4, 5])
            values = [client.call("key", (sim, req), {}) for req in (sim.reqs[0], sim.reqs[0], sim.reqs[1])]
            out.append((values, counter["n"], len(sent)))
        finally:
            close(client, server, thread)
    assert out[0] == out[1] == ([4, 4, 5], 2, 3)


def test_a_timeout_while_calling_ahead_still_answers_the_call_itself(monkeypatch):
    def slow_for_others(sim, req):
        if req.rid != 0:
            raise Stop()   # the call's CPU time runs out while the server calls ahead
        return req.prio

    client, server, thread, sent = batched(monkeypatch, {"key": slow_for_others}, ("key",))
    server.timeout_error = Stop
    try:
        sim = Sim([7, 8])
        assert client.call("key", (sim, sim.reqs[0]), {}) == 7
        assert client.batch is None, "no batch came with the reply"
    finally:
        close(client, server, thread)


def test_only_declared_exports_and_objects_of_the_items_class_are_called_ahead(monkeypatch):
    calls = []

    def logged(sim, item):
        calls.append(type(item).__name__)
        return 0

    for pure, expected in ((("key",), ["Req", "Req", "Req"]), ((), ["Req"])):
        calls.clear()
        client, server, thread, sent = batched(monkeypatch, {"key": logged}, pure)
        try:
            sim = Sim([1, 2, 3])   # three Req, one Sim (not called ahead: another class)
            client.call("key", (sim, sim.reqs[0]), {})
        finally:
            close(client, server, thread)
        assert calls == expected, pure


WRITES_BETWEEN_KEYS = (  # TODO 4 answers that write while they sort: a numpy field, a field of another request
    ("    for candidate in sorted(candidates, key=self._schedule_key):\n",
     "    import numpy as np\n\n"
     "    def keyed(req):\n"
     "        value = self._schedule_key(req)\n"
     "        req.wait_steps = np.int64(req.wait_steps)   # the bridge sends it as an int: the same bytes\n"
     "        return value\n\n"
     "    for candidate in sorted(candidates, key=keyed):\n"),
    ("    for candidate in sorted(candidates, key=self._schedule_key):\n",
     "    def keyed(req):\n"
     "        before = self._schedule_key(candidates[0])\n"
     "        candidates[0].priority += 1\n"
     "        return (self._schedule_key(req), before)\n\n"
     "    for candidate in sorted(candidates, key=keyed):\n"),
)


@pytest.mark.slow
@pytest.mark.deadline(900)
def test_batches_of_the_pure_key_change_no_observation(monkeypatch):
    """02's TODO 4 child asks TODO 2's key, declared pure (suite.PURE), for every request it sorts. Every scenario's
    observation is the same with the key's calls answered in batches as with each call crossing on its own: for the
    reference, every mistake of TODO 4 the grader knows, and answers that write between the key's calls."""
    from grader import assignment, pipeline

    g = pipeline.grader_for(ASSIGNMENT)
    task = next(t for t in g.tasks if t.answer_id == "todo4")
    reference = g.reference["todo4"]
    answers = [reference] + [m.apply(reference) for m in g.assignment.mutants + g.assignment.outside if m.answer_id == "todo4"]
    answers += [reference.replace(old, new) for old, new in WRITES_BETWEEN_KEYS]
    declared = g.pure
    assert len(set(answers)) == len(answers) >= 8 and declared == ["DecodeSchedulerSim._schedule_key"]
    for answer in answers:
        seen = {}
        for pure in (declared, []):
            monkeypatch.setattr(g, "pure", pure)
            run, server = g._run_bridged(task, answer)
            assert run.status == "ok" and server.status == "ok", (run, server)
            seen[bool(pure)] = grade.observations(run)
        assert seen[True] == seen[False] and len(seen[True]) == len(task.scenarios), answer
    assert assignment.get(ASSIGNMENT).pure == declared


def notebook_side(gids_of_reference, stand_ins):
    """A namespace as a grading child or server builds it for 02: the set-up cells, then each answer cell as the
    reference or as a stand-in (in the master's order); and the exports it answers for."""
    from grader.assignment import get

    a = get(ASSIGNMENT)
    ns = {"__name__": "__graded__"}
    with contextlib.redirect_stdout(open(os.devnull, "w")):
        for src in a.setup:
            exec("\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines()), ns)
        for gid in a.answer_ids:
            exec(a.reference[gid] if gid in gids_of_reference else stand_ins[gid], ns)
    exports = [e for gid in gids_of_reference for e in definitions.exports(a.reference[gid])]
    return ns, exports, a


def bridged_02(stand_ins, on_send, pure=(), logs=()):
    """TODO 4's child side and a served reference side of 02 (TODO 1-3) over the bridge, in this process; `on_send(message)`
    sees each message the child side sends. Returns (client, server, thread, the child's namespace)."""
    client_ns, client_exports, _ = notebook_side({"todo4"}, stand_ins)
    server_ns, server_exports, _ = notebook_side({"todo1", "todo2", "todo3"}, stand_ins)
    (a_r, a_w), (b_r, b_w) = os.pipe(), os.pipe()
    client = bridge_module.Bridge(b_r, a_w, client_ns, 1, pure=pure, logs=logs, holds_logs=True)
    server = bridge_module.Bridge(a_r, b_w, server_ns, 0, pure=pure, logs=logs)
    client_ns["__bridge__"], server_ns["__bridge__"] = client, server
    for side, exports in ((client, client_exports), (server, server_exports)):
        for export in exports:
            owner, _, name = export.rpartition(".")
            side.owned[export] = getattr(side.ns[owner], name)
    send = client.send
    client.send = lambda message, *graph: on_send(message) or send(message, *graph)
    thread = threading.Thread(target=server.serve_forever, args=(5.0, 2), daemon=True)
    thread.start()
    return client, server, thread, client_ns


def play_02(client_ns):
    """40 steps of 8 requests under aging, on the child side: (the events, each request's fields, the timeline)."""
    sim = client_ns["DecodeSchedulerSim"](free_kv_blocks=5, policy="aging", aging_interval=2)
    for rid in range(8):
        sim.enqueue(rid, 2 + rid % 3, 1 + rid % 4, priority=rid % 3, required_blocks=1 + rid % 2)
    events = [sim.step() for _ in range(40)]
    return events, [dict(vars(req)) for req in sim.queue], sim.timeline


def test_02s_key_is_batched_when_todo4_sorts_and_every_step_is_the_same(monkeypatch):
    """TODO 4's step as its grading child runs it (the key, TODO 3 and TODO 1 across the bridge, on 02's own classes):
    the same events and the same requests, with a third of the crossings or fewer; so the key's batches are used."""
    from grader.assignment import get

    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)
    stand_ins = {gid: definitions.stand_in(src) for gid, src in get(ASSIGNMENT).reference.items()}
    outcomes = []
    for pure in (get(ASSIGNMENT).pure, ()):
        sent = []
        client, server, thread, client_ns = bridged_02(
            stand_ins, lambda message: message.get("op") == "call" and sent.append(message["target"]), pure=pure)
        try:
            events, state, _ = play_02(client_ns)
        finally:
            close(client, server, thread)
        outcomes.append((events, state, sent))
    (events, state, sent), (plain_events, plain_state, plain_sent) = outcomes
    assert events == plain_events and state == plain_state and events[0] is not None and events[-1] is None
    keys = sent.count("DecodeSchedulerSim._schedule_key")
    plain_keys = plain_sent.count("DecodeSchedulerSim._schedule_key")
    assert plain_keys > 60 and keys * 3 <= plain_keys, (keys, plain_keys)
    assert len(sent) - keys == len(plain_sent) - plain_keys, "only the key's calls are answered from batches"


def test_a_reference_that_catches_the_refused_call_across_is_not_batched_for_that_item(monkeypatch):
    """A key that calls another TODO only for some items, and falls back on an error: calling ahead, its call across is
    refused, and the fallback is not the value a real call gives, so that item is left to its own crossing."""
    def falls_back(sim, req):
        try:
            extra = server_of[0].call("extra", (req,), sim.opts) if req.prio > 5 else 0
        except Exception:  # noqa: BLE001 - as a reference might
            extra = 0
        return req.prio + extra

    server_of = []
    out = []
    for pure in (("key",), ()):
        client, server, thread, sent = batched(monkeypatch, {"key": falls_back}, pure)
        server_of[:] = [server]
        client.owned["extra"] = lambda req: 100
        try:
            sim = Sim([1, 9, 2])
            out.append(([client.call("key", (sim, req), {}) for req in (sim.reqs[0], sim.reqs[2], sim.reqs[1])], len(sent)))
        finally:
            close(client, server, thread)
    assert out[0][0] == out[1][0] == [1, 2, 109]
    assert out[0][1] == 2 and out[1][1] == 3, "item 2 comes with the first reply; item 1 crosses"


def test_a_batch_keeps_within_max_batch_and_the_replys_size_limit(monkeypatch):
    """At most MAX_BATCH values, and none that would take the reply past MAX_MESSAGE (the child could not read it)."""
    def long_value(sim, req):   # with the state, one such value fits in a reply of 20,000 bytes beside its own, not two
        return str(req.rid) * 7000

    monkeypatch.setattr(bridge_module, "MAX_MESSAGE", 20_000)
    for owned, cap, expected_sent in (({"key": key}, 2, 3), ({"key": long_value}, 256, 4)):
        monkeypatch.setattr(bridge_module, "MAX_BATCH", cap)
        client, server, thread, sent = batched(monkeypatch, owned, ("key",))
        try:
            sim = Sim([5, 4, 3, 2, 1])
            values = [client.call("key", (sim, req), {}) for req in sim.reqs]
        finally:
            close(client, server, thread)
        assert values == [owned["key"](sim, req) for req in sim.reqs]
        assert len(sent) == expected_sent, (owned, sent)   # each reply brings two others (key), or one (long_value)


def test_calling_ahead_stops_when_half_the_calls_cpu_time_is_gone():
    client, server, thread = pair({})
    previous = signal.signal(signal.SIGPROF, lambda *a: None)
    try:
        assert not server._time_short(), "no timer: as when a test serves in a thread"
        signal.setitimer(signal.ITIMER_PROF, 10.0)
        server.timer = signal.ITIMER_PROF
        server.cpu_limit = 100.0
        assert server._time_short(), "about 10 s of 100 left"
        server.cpu_limit = 15.0
        assert not server._time_short(), "about 10 s of 15 left"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        for end in (client.rfile, client.wfile, server.rfile, server.wfile):
            end.close()


# --- logs: a field the references only append to stays in the child (suite.py's LOGS, Bridge._log, Sink) -------------

class Logged:
    def __init__(self, prios):
        self.reqs, self.clock, self.events = [Req(rid, prio) for rid, prio in enumerate(prios)], 0, [{"old": True}]


def record(sim, req):
    """As 02's step records an event: append it through the field, tick the clock, return it."""
    event = {"rid": req.rid, "clock": sim.clock}
    sim.events.append(event)
    sim.clock += 1
    return event


def logged(monkeypatch, owned, logs, pure=(), start=True):
    """A client and a served server, both holding Logged and Req, with `logs` declared (the client keeps them); and every
    message the client sent, as it was written."""
    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)
    client, server, thread = pair(owned)
    for side in (client, server):
        side.ns.update(Logged=Logged, Req=Req)
        side.pure = frozenset(pure)
        side.log_names = {"Logged": {"events"}} if logs else {}
        side.sends_logs = bool(logs)
    client.holds_logs = True
    sent, send = [], client.send
    client.send = lambda message, *graph: sent.append(dict(message)) or send(message, *graph)
    if start:
        thread.start()
    return client, server, thread, sent


def with_and_without_logs(monkeypatch, owned, script, pure=()):
    """`script(client)` with Logged.events declared a log and without: (its result, the client's messages) for each."""
    out = []
    for logs in (True, False):
        client, server, thread, sent = logged(monkeypatch, owned, logs, pure)
        try:
            out.append((script(client), sent))
        finally:
            close(client, server, thread)
    return out


def test_a_log_crosses_as_its_appends_and_ends_as_in_one_process(monkeypatch):
    """The server appends through the field; the client's list gets the same events, the very objects returned, in order,
    and the client's own appends between calls stay where it put them; no message carries the log's contents."""
    def script(client):
        sim = Logged([3, 1, 2])
        events = sim.events
        returned = [client.call("record", (sim, sim.reqs[0]), {})]
        sim.events.append({"mine": 1})
        returned += [client.call("record", (sim, req), {}) for req in sim.reqs[1:]]
        assert sim.events is events and all(any(e is r for e in sim.events) for r in returned)
        return sim.events, sim.clock

    (logs, logs_sent), (plain, plain_sent) = with_and_without_logs(monkeypatch, {"record": record}, script)
    assert logs == plain == ([{"old": True}, {"rid": 0, "clock": 0}, {"mine": 1}, {"rid": 1, "clock": 1},
                              {"rid": 2, "clock": 2}], 3)
    assert not any('"old"' in json.dumps(m) for m in logs_sent), "the log's contents stay in the client"
    assert all('"old"' in json.dumps(m) for m in plain_sent)


def test_a_callback_sees_what_the_server_appended_before_it(monkeypatch):
    """The server appends, calls back the client (whose code reads the log), and appends again: the appends made before
    the call back reach the client before its code runs."""
    def step(sim):
        record(sim, sim.reqs[0])
        seen = server_of[0].call("look", (sim,), {})
        record(sim, sim.reqs[1])
        return seen

    server_of, out = [], []
    for logs in (True, False):
        client, server, thread, sent = logged(monkeypatch, {"step": step}, logs)
        server_of[:] = [server]
        client.owned["look"] = lambda sim: [dict(e) for e in sim.events]
        try:
            sim = Logged([1, 2])
            out.append((client.call("step", (sim,), {}), sim.events))
        finally:
            close(client, server, thread)
    assert out[0] == out[1] and out[0][0] == [{"old": True}, {"rid": 0, "clock": 0}] and len(out[0][1]) == 3


def test_a_log_met_twice_in_a_message_goes_whole_and_nothing_changes(monkeypatch):
    """Aliased (another field holds the same list, or it is an argument too): that message and the side's later ones send
    it whole, as without logs; the results are the same."""
    def both(sim, log):
        sim.events.append({"n": len(log)})
        return len(log)

    def script(client):
        sim = Logged([1, 2])
        first = client.call("record", (sim, sim.reqs[0]), {})
        sim.history = sim.events   # the same list in another field
        second = client.call("record", (sim, sim.reqs[1]), {})
        third = client.call("both", (sim, sim.events), {})
        return first, second, third, sim.events, sim.history is sim.events, client.sends_logs

    def first_as_an_argument(client):   # met before its field this time
        sim = Logged([1])
        return client.call("both_first", (sim.events, sim), {}), sim.events, client.sends_logs

    owned = {"record": record, "both": both, "both_first": lambda log, sim: both(sim, log)}
    (logs, _), (plain, _) = with_and_without_logs(monkeypatch, owned, script)
    assert logs[:5] == plain[:5] and logs[4] and logs[2] == 4
    assert logs[5] is False, "after the alias, this side sends logs whole"
    (logs, _), (plain, _) = with_and_without_logs(monkeypatch, owned, first_as_an_argument)
    assert logs[:2] == plain[:2] == (2, [{"old": True}, {"n": 1}])   # (sent whole first: never a log after in that exchange)


@contextlib.contextmanager
def ended_by_log_read(monkeypatch, owned):
    """A client and a served server with Logged.events a log, the server's run ended by a LogRead as a process would
    end (its end of the pipe closes); yields (client, server, the LogReads raised)."""
    ended = []
    client, server, thread, _ = logged(monkeypatch, owned, True, start=False)
    serve = server.serve_forever

    def serve_and_close(*args):
        try:
            serve(*args)
        except bridge_module.LogRead as exc:
            ended.append(exc)
            server.wfile.close()

    thread._target = serve_and_close
    thread.start()
    try:
        yield client, server, ended
    finally:
        client.wfile.close()
        thread.join(5)
        client.rfile.close()


def test_a_reference_that_reads_a_log_ends_the_servers_run(monkeypatch):
    """A declaration that is wrong (a reference reads the log) is never a silent wrong value: LogRead, a BaseException, ends
    the server (in a grading child: a grading error); a stand-in held after its field was replaced takes no append."""
    def peek(sim):
        try:
            return len(sim.events)
        except Exception:  # noqa: BLE001 - as a reference might; LogRead is not an Exception
            return -1

    with ended_by_log_read(monkeypatch, {"peek": peek}) as (client, server, ended):
        with pytest.raises((EOFError, bridge_module.Abort)):
            client.call("peek", (Logged([1]),), {})
    assert len(ended) == 1
    sink = bridge_module.Sink(server, 3)
    sink._live = False
    with pytest.raises(bridge_module.LogRead):
        sink.append(1)
    for use in (len, iter, bool, repr, lambda s: s[0], lambda s: s.copy(), lambda s: s == [], lambda s: 1 in s):
        with pytest.raises(bridge_module.LogRead):
            use(bridge_module.Sink(server, 3))


def test_a_log_in_a_message_is_taken_only_where_declared(monkeypatch):
    """A marker for a field no LOGS names, appends sent to the server, or appends to something that is no log: refused."""
    client, server, thread, _ = logged(monkeypatch, {}, True)
    try:
        qual = f"{__name__}:Logged"
        for side, message in (
            (server, {"graph": {"3": {"k": "obj", "c": qual, "v": {"reqs": {"log": 5}}}}, "roots": [{"r": 3}]}),
            (server, {"graph": {"3": {"k": "obj", "c": qual, "v": {"events": {"log": "5"}}}}, "roots": [{"r": 3}]}),
            (server, {"graph": {"3": {"k": "obj", "c": qual, "v": {"events": {"log": 3}}}}, "roots": [{"r": 3}]}),
            (server, {"graph": {"3": {"k": "obj", "c": qual, "v": {"events": {"r": 5}}}, "5": {"k": "list", "s": []}},
                      "roots": [{"r": 3}], "logs": [[5, 1]]}),
            (server, {"graph": {"3": {"k": "obj", "c": qual, "v": {"events": {"log": 5}}}}, "roots": [{"log": 5}]}),
            (server, {"graph": {"3": {"k": "list", "v": [{"log": 5}]}}, "roots": [{"r": 3}]}),
            (client, {"graph": {"4": {"k": "obj", "c": qual, "v": {"events": {"log": 6}}}, "6": {"k": "list", "s": []}},
                      "roots": [{"r": 4}]}),
            (client, {"graph": {"4": {"k": "obj", "c": qual, "v": {"clock": 0}}, "6": {"k": "list", "s": []}},
                      "roots": [{"r": 4}], "logs": [[6, 1]]}),
        ):
            side._reset()
            with pytest.raises(bridge_module.BridgeError):
                side._unpack(message, 1)
    finally:
        close(client, server, thread)


def test_a_pure_export_that_appends_is_not_batched_and_its_calls_ahead_append_nothing(monkeypatch):
    """Declared pure, but it appends to a log for some items: the calls ahead for those append nothing the client gets,
    and no batch answers a call (each crosses and appends as in one process)."""
    def noisy_key(sim, req):
        if req.rid:   # not for the item of the first call: only calling ahead finds the append
            sim.events.append({"keyed": req.rid})
        return req.prio

    def script(client):
        sim = Logged([3, 1, 2])
        return [client.call("key", (sim, req), {}) for req in sim.reqs], sim.events

    (logs, logs_sent), (plain, _) = with_and_without_logs(monkeypatch, {"key": noisy_key}, script, pure=("key",))
    assert logs == plain and logs[1][1:] == [{"keyed": 1}, {"keyed": 2}]
    assert len([m for m in logs_sent if m.get("op") == "call"]) == 3, "each call crossed: none came from a batch"


def test_02s_timeline_stays_in_the_child_and_every_step_is_the_same(monkeypatch):
    """TODO 4's step on 02's classes (the key, TODO 3 and TODO 1 across the bridge) with the timeline declared a log and
    without: the same events, requests and timeline, and the calls across carry under 60 % of the bytes."""
    from grader.assignment import get

    monkeypatch.setattr(bridge_module.signal, "setitimer", lambda *a: None)
    stand_ins = {gid: definitions.stand_in(src) for gid, src in get(ASSIGNMENT).reference.items()}
    outcomes = []
    for logs in (get(ASSIGNMENT).logs, ()):
        sent = [0]
        client, server, thread, client_ns = bridged_02(
            stand_ins, lambda message: sent.__setitem__(0, sent[0] + len(json.dumps(message))), logs=logs)
        try:
            events, state, timeline = play_02(client_ns)
            returned_are_recorded = all(any(e is t for t in timeline) for e in events if e)
        finally:
            close(client, server, thread)
        outcomes.append((events, state, timeline, returned_are_recorded, sent[0]))
    (events, state, timeline, same_objects, size), (plain_events, plain_state, plain_timeline, _, plain_size) = outcomes
    assert events == plain_events and state == plain_state and timeline == plain_timeline and events[0] is not None
    assert same_objects, "each event step returned is the one in the timeline, as in one process"
    assert size < 0.6 * plain_size, (size, plain_size)


LOG_USERS = {  # answers that use the timeline themselves, in the child: read it, alias it, replace it, append to it
    "todo2": [('    deadline_slack = 1_000_000_000\n',
               '    deadline_slack = 1_000_000_000 + 0 * len(self.timeline)   # reads the log while step runs across\n')],
    "todo3": [('    if challenger.admitted:\n',
               '    self.notes = self.timeline   # the log in a second field\n    if challenger.admitted:\n')],
    "todo4": [('    candidates = [req for req in self.queue if not req.done]\n',
               '    candidates = [req for req in self.queue if not req.done]\n    self.timeline = list(self.timeline)\n'),
              ('    candidates = [req for req in self.queue if not req.done]\n',
               '    candidates = [req for req in self.queue if not req.done]\n    self.seen = len(self.timeline)\n'
               '    self.timeline.append({"note": self.seen}) if self.seen % 7 == 3 else None\n')],
}


@pytest.mark.slow
@pytest.mark.deadline(1200)
def test_the_timeline_kept_in_the_child_changes_no_observation(monkeypatch):
    """02 declares the timeline a log (suite.LOGS): the references append to it and never read it, so the child keeps it
    and only appends cross. Every scenario's observation of every TODO is the same with the declaration and without: for
    the reference, every mistake the grader knows, and answers that read, alias, replace or append to the timeline."""
    from grader import pipeline

    g = pipeline.grader_for(ASSIGNMENT)
    declared = g.logs
    assert declared == ["DecodeSchedulerSim.timeline"]
    mistakes = g.assignment.mutants + g.assignment.outside
    checked = 0
    for task in g.tasks:
        reference = g.reference[task.answer_id]
        answers = [reference] + [m.apply(reference) for m in mistakes if m.answer_id == task.answer_id]
        for old, new in LOG_USERS.get(task.answer_id, ()):
            assert old in reference, (task.answer_id, old)
            answers.append(reference.replace(old, new, 1))
        for answer in answers:
            seen = {}
            for logs in (declared, []):
                monkeypatch.setattr(g, "logs", logs)
                run, server = g._run_bridged(task, answer)
                assert run.status == "ok" and server.status == "ok", (run, server)
                seen[bool(logs)] = grade.observations(run)
            assert seen[True] == seen[False] and len(seen[True]) == len(task.scenarios), (task.answer_id, answer)
            checked += 1
    assert checked >= 20


def test_a_batch_holds_only_until_the_next_message_crosses(monkeypatch):
    """The server's answers depend on its own classes too, and a call can write to one (a class passed as an argument
    is written to like an object): after any call crosses, the key crosses again, and sees what that call changed."""
    def mark(cls):
        cls.bonus = 100   # a class attribute of the server's Req, for the rest of the pair's life
        raise ValueError("and it raises: no reply of a return comes")

    def bonus_key(sim, req):
        return req.prio + getattr(Req, "bonus", 0)

    out = []
    for pure in (("key",), ()):
        client, server, thread, sent = batched(monkeypatch, {"key": bonus_key, "mark": mark}, pure)
        try:
            sim = Sim([1, 2, 3])
            values = [client.call("key", (sim, sim.reqs[0]), {})]
            with pytest.raises(ValueError):   # the state the key would send is unchanged: only the server's class is not
                client.call("mark", (Req,), {})
            values += [client.call("key", (sim, req), {}) for req in sim.reqs[1:]]
            out.append((values, sent))
        finally:
            close(client, server, thread)
            Req.__dict__.get("bonus") is not None and delattr(Req, "bonus")   # the test's server shares this process's Req
    (values, sent), (plain, plain_sent) = out
    assert values == plain == [1, 102, 103]
    assert sent == ["key", "mark", "key"] and len(plain_sent) == 4, "the second reply's batch answers the third call"


# What a log must give, case by case: what one process gives (a review of the first version found each of these wrong).

def one_process(owned, script):
    """`script(client)` with a client whose call() runs the export right here, on the same objects."""
    class Local:
        def call(self, target, args, kwargs):
            return owned[target](*args, **kwargs)
    return script(Local())


def as_in_one_process(monkeypatch, owned, script, pure=(), plain_too=True):
    """`script`'s result with the log declared, without (unless plain_too is False), and in one process: the same."""
    (logs, _), (plain, _) = with_and_without_logs(monkeypatch, owned, script, pure)
    expected = one_process(owned, script)
    assert logs == expected and (plain == expected or not plain_too), (logs, plain, expected)
    return logs


def test_a_pure_export_whose_own_call_appends_is_not_answered_from_its_batch(monkeypatch):
    def noisy_key(sim, req):
        if req.rid == 0:   # the item of the first call only: calling ahead finds nothing
            sim.events.append(("keyed", req.rid))   # no object: the state's objects do not grow either
        return req.prio

    def script(client):
        sim = Logged([3, 1, 2])
        return [client.call("key", (sim, req), {}) for req in (*sim.reqs, sim.reqs[0])], list(sim.events)

    assert as_in_one_process(monkeypatch, {"key": noisy_key}, script, pure=("key",))[1] == [{"old": True}, ("keyed", 0), ("keyed", 0)]


def test_appends_go_to_the_list_appended_to_whatever_the_fields_hold_later(monkeypatch):
    """The reference replaces the log after appending to it, or gives one object's log to another."""
    def restart(sim):
        sim.events.append({"before": 1})
        sim.events = []
        sim.events.append({"after": 2})

    def share(a, b):
        b.events = a.events
        b.events.append({"via": "b"})

    def restart_script(client):
        sim = Logged([1])
        old = sim.events
        client.call("restart", (sim,), {})
        return old, sim.events

    def share_script(client):
        a, b = Logged([1]), Logged([1])
        b.events = [{"b-old": True}]
        client.call("share", (a, b), {})
        return a.events, b.events, a.events is b.events

    # Without the declaration the old list misses its append: an object the reply's roots no longer reach is not
    # written back (the bridge sends what is reachable); the log's appends go to the list itself.
    assert as_in_one_process(monkeypatch, {"restart": restart}, restart_script, plain_too=False) == (
        [{"old": True}, {"before": 1}], [{"after": 2}])
    assert as_in_one_process(monkeypatch, {"share": share}, share_script)[2] is True


def test_an_appended_object_changed_after_it_crossed_keeps_the_change_on_both_sides(monkeypatch):
    """Appended, then changed by the child during a call back, or by the reference after one: the values appended in an
    exchange cross with each of its later messages, as the whole log would."""
    server_of = []

    def step(sim):
        event = {"n": 0}
        sim.events.append(event)
        server_of[0].call("poke", (sim,), {})   # the child changes the event it was just sent
        event["m"] = event["n"] + 1   # and the reference changes it after
        return event

    def poke(sim):
        sim.events[-1]["n"] = 7

    def script(client):
        sim = Logged([1])
        returned = client.call("step", (sim,), {})
        return returned, sim.events[-1], returned is sim.events[-1]

    class Local:
        def call(self, target, args, kwargs):
            return poke(*args)

    server_of[:] = [Local()]
    expected = one_process({"step": step}, script)
    out = []
    for logs in (True, False):
        client, server, thread, _ = logged(monkeypatch, {"step": step}, logs)
        server_of[:] = [server]
        client.owned["poke"] = poke
        try:
            out.append(script(client))
        finally:
            close(client, server, thread)
    assert out[0] == out[1] == expected == ({"n": 7, "m": 8}, {"n": 7, "m": 8}, True)


def test_a_log_shared_by_two_fields_or_copied_with_its_owner_is_one_list_as_in_one_process(monkeypatch):
    def same(a, b):
        return a.events is b.events

    def snapshot(sim):
        sim.events.append({"n": 1})
        return copy.copy(sim)   # the copy shares the log

    def same_script(client):
        a, b = Logged([1]), Logged([1])
        b.events = a.events
        return client.call("same", (a, b), {})

    def copy_script(client):
        sim = Logged([1])
        snap = client.call("snapshot", (sim,), {})
        return snap.events is sim.events, len(sim.events)

    assert as_in_one_process(monkeypatch, {"same": same}, same_script) is True
    assert as_in_one_process(monkeypatch, {"snapshot": snapshot}, copy_script) == (True, 2)


def test_the_server_keeps_sending_a_log_the_child_now_sends_whole_and_appends_before_a_raise_cross(monkeypatch):
    """The child aliases a log during a call back (it sends logs whole from then on), while the server still holds the
    other object's: the child keeps its lists. Appends made before an exception cross with it."""
    server_of = []

    def step(sim, other):
        sim.events.append({"a": 1})
        server_of[0].call("alias", (other,), {})
        sim.events.append({"b": 2})
        other.events.append({"c": 3})
        return len(other.events)

    def alias(other):
        other.copy_of_log = other.events

    def boom(sim, req):
        record(sim, req)
        raise KeyError("late")

    def script(client):
        sim, other = Logged([1]), Logged([1])
        n = [client.call("step", (sim, other), {}) for _ in range(2)]
        try:
            client.call("boom", (sim, sim.reqs[0]), {})
        except KeyError:
            pass
        return n, sim.events, other.events, other.copy_of_log is other.events

    out = []
    for logs in (True, False):
        client, server, thread, _ = logged(monkeypatch, {"step": step, "boom": boom}, logs)
        server_of[:] = [server]
        client.owned["alias"] = alias
        try:
            out.append((script(client), client.sends_logs))
        finally:
            close(client, server, thread)
    (logs, sticky), (plain, _) = out
    assert logs == plain and sticky is False and logs[0] == [2, 3] and logs[1][-1] == {"rid": 0, "clock": 0}


def test_a_stand_in_of_a_log_kept_past_its_exchange_ends_the_servers_run(monkeypatch):
    """Ids start again with each exchange: a Sink a reference kept would append to another object's log; it is dead."""
    kept = []

    def keep(sim):
        kept[:] = [sim]

    def later(other):
        kept[0].events.append({"to": "the kept one"})

    a, b = Logged([1]), Logged([1])
    with ended_by_log_read(monkeypatch, {"keep": keep, "later": later}) as (client, _, ended):
        client.call("keep", (a,), {})
        with pytest.raises((EOFError, bridge_module.Abort)):
            client.call("later", (b,), {})
    assert len(ended) == 1 and b.events == [{"old": True}]


def three_ways(monkeypatch, owned, child_owned, script):
    """`script`'s result in one process, and over the bridge with Logged.events a log and without, where the server's
    exports call the child's (`child_owned`) through CALL_BACK[0]: the three must be the same."""
    class Local:
        def call(self, target, args, kwargs):
            return child_owned[target](*args, **kwargs)

    CALL_BACK[:] = [Local()]
    out = [one_process(owned, script)]
    for logs in (True, False):
        client, server, thread, _ = logged(monkeypatch, owned, logs)
        CALL_BACK[:] = [server]
        client.owned.update(child_owned)
        try:
            out.append(script(client))
        finally:
            close(client, server, thread)
    assert out[0] == out[1] == out[2], out
    return out[0]


CALL_BACK = []   # the server's bridge, or a stand-in in one process: what an export calls the child's exports through


def test_a_list_that_crossed_whole_in_an_exchange_is_never_a_log_after_in_it(monkeypatch):
    """The reference gives the field a list of its own and calls the child back; or the child sends its log whole (an
    argument) and then its owner: each time the other side holds a list, and gets it whole again."""
    def fresh(sim):
        sim.events = []
        CALL_BACK[0].call("look", (sim,), {})
        sim.events.append({"after": 1})
        return "done"

    def keep(req, log):
        return CALL_BACK[0].call("owner", (req,), {}) is not None

    holder = []

    def fresh_script(client):
        sim = Logged([1])
        return client.call("fresh", (sim,), {}), sim.events

    def keep_script(client):
        sim = Logged([1])
        holder[:] = [sim]
        return client.call("keep", (sim.reqs[0], sim.events), {}), sim.events

    children = {"look": lambda sim: None, "owner": lambda req: holder[0]}
    assert three_ways(monkeypatch, {"fresh": fresh}, children, fresh_script) == ("done", [{"after": 1}])
    assert three_ways(monkeypatch, {"keep": keep}, children, keep_script) == (True, [{"old": True}])


def test_a_log_sent_whole_in_a_call_back_is_appended_to_there_and_sent_back_whole(monkeypatch):
    """The child's code hands the log itself across (not its owner): the owner's stand-in on the server appends to that
    list from then on, and the owner takes it back whole."""
    holder = []

    def step(sim):
        log = CALL_BACK[0].call("get_log", (), {})
        sim.events.append({"after": 1})
        log.append({"then": 2})   # the same list, reached the other way
        return "done"

    def script(client):
        sim = Logged([1])
        holder[:] = [sim]
        return client.call("step", (sim,), {}), sim.events

    got = three_ways(monkeypatch, {"step": step}, {"get_log": lambda: holder[0].events}, script)
    assert got == ("done", [{"old": True}, {"after": 1}, {"then": 2}])


def test_a_message_that_names_a_stand_in_of_a_log_is_refused_and_the_server_goes_on(monkeypatch):
    """A Sink is never an object a message can name ({"r": its id}): such a call is refused as malformed, and the server
    answers the next one (no message can end it)."""
    qual = f"{__name__}:Logged"
    message = {"x": 2, "op": "call", "target": "noop", "roots": [{"t": [{"r": 3}]}, {"r": 5}],
               "graph": {"3": {"k": "obj", "c": qual, "v": {"events": {"log": 7}, "clock": 0, "reqs": {"r": 7}}},
                         "5": {"k": "dict", "s": []}}}
    with ended_by_log_read(monkeypatch, {"noop": lambda sim: None, "record": record}) as (client, server, ended):
        client.send(message)
        refused = client.receive()
        client.exchange = 2
        after = client.call("record", (Logged([1]), Req(0, 1)), {})
    assert refused["op"] == "raise" and refused["error"] == "BridgeError" and after == {"rid": 0, "clock": 0}
    assert ended == []
