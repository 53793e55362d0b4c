"""The sandbox holds. One test per root cause, each with code that tries it; controls keep their scores."""
import csv
import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest

import hostile
from conftest import ROOT, needs_level
from grader import autograde, child_values, editions, safe_io, safe_text, sanitize
from grader.feedback import visible_text
from grader.grade import Grader
from grader.messages import Message
from grader.assignment import load
from grader.config import DEFAULTS
from grader.compare import same
from grader.observed import INVALID, NoValue
from grader.runner import (UID_BASE, UID_COUNT, ChildRun, Limits, Protocol, expected_lines, leftovers, python_view, run_sandboxed,
                           sandbox_level)

NAME = "02_decode_scheduling"
judge_double_gain = load("01_continuous_batching").suite.judge_double_gain
FULL = {"todo1": 2, "todo2": 3, "todo3": 3, "todo4": 4}
bwrap_only = needs_level("bwrap")             # root: a uid per sandbox
isolated = needs_level("bwrap", "userns")     # whichever isolating level grading uses here
at_each_level = pytest.mark.parametrize("level", [pytest.param(level, marks=needs_level(level)) for level in ("bwrap", "userns")])


def scores(verdicts):
    return {v.answer_id: v.score for v in verdicts}


def in_sandbox(code: str, **kwargs):
    """Run Python code in a sandbox; it reports with report(value); returns the value."""
    prelude = "import json, os\ndef report(v):\n    os.write(int(os.environ['GRADER_RESULT_FD']), json.dumps(v).encode())\n"
    done = run_sandboxed([sys.executable, "-I", "-c", prelude + code], kwargs.pop("limits", Limits(wall=60)), **kwargs)
    assert done.output, done.stderr.decode()[-2000:]
    return json.loads(done.output)


# --- cause 3: an allow-list view; cause 2: nothing host-side is writable -----------------------------

def elsewhere() -> Path:
    """A folder outside every view for a copy of the course: /opt as root, the home folder otherwise."""
    return Path("/opt") if os.access("/opt", os.W_OK) else Path.home()


@pytest.mark.slow
@at_each_level
def test_the_view_is_an_allow_list(tmp_path, level):
    secret = elsewhere() / f"course-copy-{uuid.uuid4().hex}"
    (secret / "grader").mkdir(parents=True)
    (secret / "grader" / "secret.txt").write_text("reference")
    try:
        seen = in_sandbox("""
import os
files = []
for root, dirs, names in os.walk('/'):
    if root.startswith(('/proc', '/sys', '/dev')):
        dirs[:] = []
        continue
    files += [os.path.join(root, n) for n in names]
writable = [d for d in ['/', '/tmp', '/dev/shm', '/etc', '/usr', '/inputs/data'] + list(__import__('sys').path) if os.access(d, os.W_OK)]
report({'files': files, 'writable': writable, 'uid': os.getuid(), 'status': open('/proc/self/status').read(),
        'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit())})
""", inputs={"data": tmp_path}, level=level)
    finally:
        shutil.rmtree(secret)
    allowed = [str(p) for p in python_view()] + ["/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64",
                                                  "/usr/libexec", "/etc", "/inputs"]
    outside = [f for f in seen["files"] if not any(f.startswith(a + "/") for a in allowed)]
    assert outside == [] and not any("course-copy" in f for f in seen["files"])
    assert not any(f.startswith(str(ROOT / "grader")) or f.startswith(str(ROOT / "solutions")) for f in seen["files"])
    # the sandbox's own passwd, group and hosts, and those of the loader's and the time zone's files this machine has
    host_etc = [name for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime") if os.path.exists(name)]
    assert sorted(f for f in seen["files"] if f.startswith("/etc/")) == sorted(["/etc/group", "/etc/hosts", "/etc/passwd", *host_etc])
    assert seen["writable"] == ["/tmp", "/dev/shm"]
    assert UID_BASE <= seen["uid"] < UID_BASE + UID_COUNT
    status = dict(line.split(":\t", 1) for line in seen["status"].splitlines() if ":\t" in line)
    assert status["CapEff"].strip() == status["CapBnd"].strip() == "0000000000000000" and status["NoNewPrivs"].strip() == "1"
    assert len(seen["pids"]) <= 3  # bwrap's init, python (and nothing of the host)


@pytest.mark.slow
@at_each_level
def test_nothing_written_outlives_a_sandbox(level):
    token = f"outlive-{uuid.uuid4().hex}"   # in the code, so in the command line of every process it forks
    code = f"# {token}" + """
import ctypes, os, time
open('/tmp/left', 'w').write('x'); open('/dev/shm/left', 'w').write('x')
ctypes.CDLL(None).shmget(0x5EEF, 1 << 20, 0o1666)
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
report(os.getuid())
"""
    uid = in_sandbox(code, level=level)
    again = in_sandbox("import glob, subprocess\nreport([glob.glob('/tmp/*') + glob.glob('/dev/shm/*'), "
                       "subprocess.run(['ipcs', '-m'], capture_output=True, text=True).stdout.count('0x00005eef')])", level=level)
    # Only the way to the read-only repository is in /tmp, when the repository itself lives under /tmp.
    kept = [f"/tmp/{ROOT.resolve().relative_to('/tmp').parts[0]}"] if ROOT.resolve().is_relative_to("/tmp") else []
    assert again == [kept, 0]
    assert not _running(token), f"a sandbox (uid {uid} inside) left processes behind"
    assert level == "userns" or not _processes_in_range()


def _running(token: str) -> list[int]:
    """Live processes whose command line holds `token` (bwrap's own, whose argv holds the code too, left out)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if token.encode() in open(f"/proc/{entry}/cmdline", "rb").read() and open(f"/proc/{entry}/comm").read() != "bwrap\n" and \
                    not open(f"/proc/{entry}/stat", "rb").read().rsplit(b")", 1)[1].split()[0] == b"Z":
                found.append(int(entry))
        except (OSError, IndexError):
            continue
    return found


def _processes_in_range() -> list[int]:
    """Live processes running as a sandbox uid (other helpers' graders may run as nobody: not counted)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            status = dict(line.split(":", 1) for line in open(f"/proc/{entry}/status") if line.startswith(("Uid:", "State:")))
            uid = int(status["Uid"].split()[0])
        except (OSError, KeyError, ValueError):
            continue
        if UID_BASE <= uid < UID_BASE + UID_COUNT and not status["State"].strip().startswith("Z"):
            found.append(int(entry))
    return found


@pytest.mark.slow
@at_each_level
def test_process_limits_are_per_sandbox(level):
    """One sandbox holds every process its uid may have; another, running at the same time, is unaffected (userns:
    each run counts its RLIMIT_NPROC in a user namespace of its own). At userns the hog's processes are also the
    grader's own uid's, outside: the gap docs/architecture.md states, measured here."""
    if level == "userns" and os.geteuid() == 0:
        pytest.skip("the kernel enforces no RLIMIT_NPROC on processes of uid 0 outside: make test-rootless runs this "
                    "as a user who is not root")
    token = f"hog-{uuid.uuid4().hex}"
    hog_code = f"# {token}" + """
import os, time
children = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError:
    pass
report(children)
time.sleep(60)
"""
    results = {}
    hog = threading.Thread(target=lambda: results.setdefault("hog", run_sandboxed(
        [sys.executable, "-I", "-c", "import json, os\ndef report(v):\n    os.write(int(os.environ['GRADER_RESULT_FD']), json.dumps(v).encode())\n" + hog_code],
        Limits(wall=90, cpu_seconds=90, processes=20), level=level)))
    hog.start()
    try:
        for _ in range(600):  # until the hog holds its 20 processes (bounded wait, no timing assertion)
            if len(_running(token)) >= 10:
                break
            time.sleep(0.1)
        hogs = _running(token)
        assert len(hogs) >= 10
        owners = {os.stat(f"/proc/{pid}").st_uid for pid in hogs}   # whose they are, outside
        assert owners == {os.geteuid()} if level == "userns" else os.geteuid() not in owners, owners
        other = in_sandbox("import os\nkids = []\nfor _ in range(10):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
                           "    kids.append(pid)\nfor pid in kids:\n    os.waitpid(pid, 0)\nreport(len(kids))",
                           limits=Limits(wall=60, cpu_seconds=60, processes=20), level=level)
        assert other == 10
    finally:
        for pid in _running(token) + (_processes_in_range() if level == "bwrap" else []):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        hog.join(timeout=120)
    assert json.loads(results["hog"].output) < 20  # it hit its own limit


# --- cause 4: a narrow result channel ----------------------------------------------------------------

def test_protocol_accepts_exactly_the_expected_records():
    names = ["a", "b"]
    good = [{"kind": "cells", "errors": {}}, {"kind": "scenario", "name": "a", "obs": [1]},
            {"kind": "scenario", "name": "b", "obs": {"x": "y"}}, {"kind": "done"}]

    def feed(records):
        protocol = Protocol(["todo1"], names)
        for record in records:
            if not protocol.feed(json.dumps(record).encode()):
                break
        return protocol

    assert feed(good).finished and not feed(good).error
    for broken in ([good[0], {"kind": "note", "text": "x"}], [good[0], good[2]], [*good, {"kind": "done"}],
                   [{"kind": "cells", "errors": {"todo9": "x"}}], [good[0], {**good[1], "extra": 1}]):
        assert feed(broken).error, broken
    huge = feed([{"kind": "cells", "errors": {"todo1": "x" * 10_000}}, {**good[1], "obs": ["y" * 10_000]}])
    assert huge.records[0]["errors"]["todo1"] == "an error"
    assert child_values.error_name("RuntimeError: the reference") == "RuntimeError"
    assert huge.records[1]["obs"] == NoValue(INVALID, Message("problem_string", {"length": 10000}))
    deep = []
    for _ in range(50):
        deep = [deep]
    assert str(child_values.problem(deep)) == f"nested deeper than {child_values.MAX_DEPTH}"
    assert child_values.problem(2 ** 100) and child_values.problem(list(range(child_values.MAX_NODES + 1)))
    budget = child_values.Budget()  # one rule's: many short strings add up, as one long string does
    assert budget.value(["z" * 40] * 10).endswith("...") and budget.left == 0 and budget.value("z") == "..."
    assert child_values.error_name("\u6f22" * 20 + ": x") == "an error" == child_values.error_name("E" * 41)


def test_a_record_equal_to_the_references_line_is_the_references_and_any_other_is_checked():
    """The fast path for the common case (a student's observation equals the reference's): byte for byte only."""
    plain = {}
    exec((ROOT / "grader" / "runner" / "driver_common.py").read_text(), plain)   # the drivers' encoder
    values = {"a": [1, {"x": 0.1, "s": "\u00e9", "t": (0, 1)}], "b": {"x": True}}
    cells = json.dumps({"kind": "cells", "errors": {}}).encode()
    written = {name: json.dumps({"kind": "scenario", "name": name, "obs": plain["_plain"](obs)}, default=repr).encode()
               for name, obs in values.items()}   # as child.py's emit writes them
    reference = Protocol(["todo1"], ["a", "b"])
    for line in (cells, written["a"], written["b"]):
        assert reference.feed(line)
    known = expected_lines(ChildRun(reference.records, lines=reference.lines))
    assert known["a"][0] == written["a"] and same(known["a"][1], values["a"]) and known["a"][1][1]["t"] == (0, 1)
    protocol = Protocol(["todo1"], ["a", "b"], known)
    for line in (cells, written["a"], json.dumps({"kind": "scenario", "name": "b", "obs": {"x": 1}}).encode()):
        assert protocol.feed(line)
    assert protocol.records[1]["obs"] is known["a"][1], "taken as the reference's own object, unparsed"
    assert protocol.records[2]["obs"] == {"x": 1} and not same(known["b"][1], protocol.records[2]["obs"]), \
        "True written as 1 differs by one byte: parsed, checked and compared, and it is not the same"
    as_list = Protocol(["todo1"], ["a"], known)   # the tuple written as JSON writes it: a list, which is another answer
    as_list.feed(cells)
    assert as_list.feed(json.dumps({"kind": "scenario", "name": "a", "obs": values["a"]}).encode())
    assert as_list.records[1]["obs"] is not known["a"][1] and not same(known["a"][1], as_list.records[1]["obs"])
    out_of_order = Protocol(["todo1"], ["a", "b"], known)
    assert out_of_order.feed(cells) and out_of_order.feed(known["b"][0]) is False, "b's line where a belongs"
    hostile_line = Protocol(["todo1"], ["a"], known)
    hostile_line.feed(cells)
    hostile_line.feed(json.dumps({"kind": "scenario", "name": "a", "obs": ["y" * 10_000]}).encode())
    assert hostile_line.records[1]["obs"] == NoValue(INVALID, Message("problem_string", {"length": 10000}))


# --- cause 5: inert feedback -------------------------------------------------------------------------


def test_feedback_pages_are_inert():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(hostile.XSS_MARKDOWN),
                                         nbformat.v4.new_code_cell("x", outputs=[
                                             nbformat.v4.new_output("display_data", data={"text/html": "<script>x</script>",
                                                                                           "application/javascript": "x"}),
                                             nbformat.v4.new_output("stream", name="stdout", text="y" * 100_000)])])
    ours = "> the course's own prose, kept as written: `x > 3`"
    nb.cells.append(nbformat.v4.new_markdown_cell(ours))
    sanitize.clean_notebook(nb, trusted_markdown=frozenset([ours]))
    assert "<script" not in nb.cells[0].source and "<img" not in nb.cells[0].source and "<svg" not in nb.cells[0].source
    assert nb.cells[2].source == ours
    outputs = nb.cells[1].outputs
    assert set(outputs[0].data) == {"text/plain"} and len(outputs[1].text) < 25_000
    for page in ['<html><head></head><body><img src=x onerror="alert(1)"></body></html>',
                 "<html><head></head><body><a href=' javascript:alert(1)'>a</a></body></html>",
                 "<html><head></head><body><svg><animate/></svg></body></html>"]:
        assert sanitize.clean_page(page)[0] is None, page
    page, why = sanitize.clean_page("<html><head><script src='x'></script></head><body><p>fine</p></body></html>")
    assert why == "" and "<script" not in page and "Content-Security-Policy" in page
    assert sanitize.clean_page("<html><head></head><body>" + "z" * (DEFAULTS.page_cap + 1) + "</body></html>")[0] is None


# --- cause 2 (parent side) and 6: reading by value, names, judges, limits ------------------------------

def test_root_reads_by_value_and_writes_without_following(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep")
    (tmp_path / "link.ipynb").symlink_to(target)
    with pytest.raises(safe_io.Refused, match="not a regular file"):
        safe_io.read_regular(tmp_path / "link.ipynb")
    with pytest.raises(safe_io.Refused, match="limit"):
        (tmp_path / "big").write_bytes(b"x" * 2048)
        safe_io.read_regular(tmp_path / "big", limit=1024)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(safe_io.Refused, match="not a regular file"):
        safe_io.read_regular(tmp_path / "fifo")
    safe_io.write_new(tmp_path / "link.ipynb", b"new")
    assert target.read_text() == "keep" and (tmp_path / "link.ipynb").read_bytes() == b"new"
    assert safe_text.inert(os.fsdecode(b"stud\xffent")) == "stud\\xffent"


def test_a_huge_workload_is_refused_before_it_is_simulated():
    jobs = [{"id": i, "arrival": 0, "tokens": 10 ** 12} for i in range(3)]
    assert "keep it small" in str(judge_double_gain([{"value": (jobs, 2)}]))
    assert "at most" in str(judge_double_gain([{"value": ([{"id": 1, "arrival": 0, "tokens": 1}] * 10_000, 2)}]))


@pytest.mark.slow
def test_cancelling_the_cpu_alarm_does_not_hold_a_worker():
    """The hog turns off its own CPU alarm; the parent's no-progress limit (not the 10-minute wall) stops it."""
    grader = Grader(NAME, DEFAULTS.override(child_wall=600), child_stall=5)
    answers = editions.reference_answers(NAME)
    answers["todo1"] = hostile.HOG + answers["todo1"]
    verdicts = {v.answer_id: v for v in grader.grade(answers)}
    assert "no progress in 5 s of CPU time" in str(verdicts["todo1"].note)
    assert scores(verdicts.values()) == FULL | {"todo1": 0}


@pytest.mark.slow
@pytest.mark.parametrize("level", ["process", pytest.param("userns", marks=needs_level("userns"))])
def test_each_level_judges_from_observations_and_only_process_lets_the_master_be_read(level):
    """GRADER_SANDBOX=process: full marks stay full, a forged channel gains nothing, its limits hold; but a stub that
    searches the machine for the master and runs its reference scores. At the rootless level (userns) it scores 0."""
    code = (
        "import json, sys; sys.path.insert(0, 'tests')\n"
        "import hostile\nfrom grader import editions\nfrom grader.grade import Grader\n"
        "g = Grader('02_decode_scheduling', child_stall=5)\nref = editions.reference_answers('02_decode_scheduling')\n"
        "stub = hostile._stub_answers('02_decode_scheduling')\n"
        "forged = ref | {'todo2': stub['todo2'] + hostile.FORGE.replace('%(gid)s', 'todo2')}\n"
        "hog = ref | {'todo1': hostile.HOG + ref['todo1']}\n"
        "searched = ref | {'todo2': stub['todo2'] + hostile.SEARCH.replace('%(gid)s', 'todo2')}\n"
        "print(json.dumps([g.sandbox] + [{v.answer_id: v.score for v in g.grade(a)} for a in (ref, forged, hog, searched)]))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"GRADER_SANDBOX": level})
    assert done.returncode == 0, done.stderr[-3000:]
    used, full, forged, hog, searched = json.loads(done.stdout.strip().splitlines()[-1])
    assert used == level and full == FULL and forged == FULL | {"todo2": 0} and hog == FULL | {"todo1": 0}
    # What the process level does not guarantee: a stub that reads the master scores. The sandboxes give it 0.
    assert searched == (FULL if level == "process" else FULL | {"todo2": 0})


def test_workers_import_before_the_pool_starts(monkeypatch):
    for name in [m for m in sys.modules if m.startswith("nbconvert")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(autograde.feedback, "_IDLE", queue.SimpleQueue())
    autograde.preload()
    assert {"nbconvert.exporters", "nbconvert.filters.highlight", "nbconvert.preprocessors"} <= set(sys.modules)
    assert autograde.feedback._IDLE.qsize() == 1  # one exporter built, and a page rendered with it


# --- the hostile batch: every cause at once, controls intact, host unchanged ----------------------------

def host_state() -> dict:
    def tree(folder, deep):  # other jobs on this machine add and remove entries meanwhile: never fail on that
        if not deep:
            return [os.path.join(folder, name) for name in os.listdir(folder)] if os.path.isdir(folder) else []
        return [os.path.join(root, name) for root, dirs, files in os.walk(folder) for name in dirs + files]
    repo = subprocess.run(["git", "ls-files", "-s", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True).stdout
    digests = {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in
               subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split() if (ROOT / p).is_file()}
    # Other jobs share this machine: the world-writable folders are checked for what the attackers write.
    planted = sorted(p for folder, deep in (("/run/lock", True), ("/dev/shm", True), ("/tmp", False), ("/var/tmp", False))
                     for p in tree(folder, deep) if "hostile" in p)
    ipcs = subprocess.run(["ipcs"], capture_output=True, text=True).stdout
    kernel = {k: v for k, v in leftovers().items() if k != "processes"}  # keys and SysV IPC of sandbox uids
    return {"planted": planted, "ipc_keys": [k for k in ("0x00005eed", "0x00005eee", "0x00005eef") if k in ipcs],
            "repo": repo, "digests": digests, "sandbox_processes": _settled_processes(), "sandbox_kernel": kernel}


def _settled_processes() -> list[str]:
    """Sandbox-uid processes still alive once the last sandbox's teardown has had a moment (pid: command)."""
    for _ in range(100):
        if not _processes_in_range():
            return []
        time.sleep(0.2)
    return [f"{pid}: {open(f'/proc/{pid}/cmdline').read()[:200]!r}" for pid in _processes_in_range()]


def run_batch(subs: dict, folder: Path):
    (folder / "subs").mkdir(parents=True)
    for student, nb in subs.items():
        nbformat.write(nb, folder / "subs" / f"{student}.ipynb")
    return folder / "subs", folder / "out"


@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory):
    if sandbox_level() == "process":
        pytest.skip("sandbox tier: no isolating level here (make sandbox-deps)")
    base = tmp_path_factory.mktemp("hostile")
    copy = elsewhere() / f"course-copy-{uuid.uuid4().hex}"  # the reference elsewhere on the machine
    shutil.copytree(ROOT / "grader" / "assignments", copy / "grader" / "assignments")
    subs, out = run_batch(hostile.submissions(NAME), base / "hostile")
    (subs / os.fsdecode(b"\xff\xfename.ipynb")).write_bytes((subs / "alice_solution.ipynb").read_bytes())
    originals = {p.name: p.read_bytes() for p in subs.iterdir()}
    controls_subs, controls_out = run_batch({k: v for k, v in hostile.submissions(NAME).items() if k in ("alice_solution", "bob_untouched")},
                                            base / "controls")
    autograde.run(NAME, controls_subs, controls_out, jobs=2, cell_timeout=8)
    before = host_state()
    try:
        autograde.run(NAME, subs, out, jobs=2, cell_timeout=8, feedback_wall=120)
    finally:
        shutil.rmtree(copy)
    after = host_state()
    rows = {row["student_id"]: row for row in csv.DictReader(open(out / "grades.csv", encoding="utf-8"))}
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    return {"out": out, "rows": rows, "report": report, "before": before, "after": after, "subs": subs,
            "originals": originals, "controls_out": controls_out}


def total(row):
    return float(row["total"])


@pytest.mark.slow
@isolated
def test_hostile_batch_controls_keep_exact_scores_and_pages(hostile_batch):
    rows, out, controls = hostile_batch["rows"], hostile_batch["out"], hostile_batch["controls_out"]
    control_rows = {row["student_id"]: row for row in csv.DictReader(open(controls / "grades.csv"))}
    for student in ("alice_solution", "bob_untouched"):
        assert {k: v for k, v in rows[student].items()} == control_rows[student]
        assert _verdict_text(out / "feedback" / f"{student}.html") == _verdict_text(controls / "feedback" / f"{student}.html")
    assert total(rows["course"]) == 12 and total(rows["template"]) == 0  # ids that once collided with the grader's folders
    assert _verdict_text(out / "feedback" / "course.html") == _verdict_text(controls / "feedback" / "alice_solution.html")
    assert hostile_batch["report"]["alice_solution"]["warnings"] == []


def _verdict_text(page: Path) -> list[str]:
    text = visible_text(page.read_text())
    return [line for line in text.splitlines() if re.match(r"\s*(TODO \d:|\[(pass|FAIL)\]|note:)", line)]


@pytest.mark.slow
@isolated
def test_hostile_batch_attackers_earn_nothing(hostile_batch):
    rows, report = hostile_batch["rows"], hostile_batch["report"]
    for attacker in ("mallory_shares", "oscar_searches", "trudy_forges", "kim_relays"):
        assert total(rows[attacker]) == 0, (attacker, report[attacker])
    assert {k: float(rows["hector_hogs"][k]) for k in FULL} == FULL | {"todo1": 0}
    assert '"key": "run_no_progress' in json.dumps(report["hector_hogs"]["verdicts"][0])   # its note's detail: a Message
    assert total(rows["xavier_scripts"]) == 12


@pytest.mark.slow
@isolated
def test_hostile_batch_carries_no_reference_out(hostile_batch):
    out = hostile_batch["out"]
    release = "\n".join(hostile._stub_answers(NAME).values())
    secret_lines = {line.strip() for src in editions.reference_answers(NAME).values() for line in src.splitlines()
                    if len(line.strip()) >= 30 and line.strip() not in release}
    assert secret_lines
    # report.json keeps each student's answer cells as handed in (the class report's "Answers to look at"): a line
    # there is the student's own, found in what was submitted; the rest of the file is checked like the others.
    report = json.loads((out / "report.json").read_text())
    submitted = "\n".join(cell.source for p in hostile_batch["subs"].glob("*.ipynb") if p.is_file() and not p.is_symlink()
                          for cell in _cells_or_none(p))
    for student in report["students"]:
        for source in student.pop("answers", {}).values():
            assert all(line in submitted for line in secret_lines if line in source), student["student_id"]
    for path in [*(out / "feedback").glob("*.html"), out / "report.json", out / "report.md", out / "grades.csv"]:
        text = visible_text(path.read_text(errors="replace")) if path.suffix == ".html" else path.read_text(errors="replace")
        text = json.dumps(report) if path.name == "report.json" else text
        text = text.replace("\\n", "\n")
        leaked = [line for line in secret_lines if line in text and not path.name.startswith(("alice", "course", "xavier", "hector"))]
        assert not leaked, (path.name, leaked[:2])
    oscar = visible_text((out / "feedback" / "oscar_searches.html").read_text())
    assert "FOUND 0" in oscar  # its kernel found no solution anywhere it could see


def _cells_or_none(path: Path) -> list:
    """The cells of a submitted notebook, none if the file is not one (the hostile batch holds such files)."""
    try:
        return nbformat.read(path, as_version=4).cells
    except Exception:  # noqa: BLE001 - a damaged or foreign file submits no cell
        return []


@pytest.mark.slow
@isolated
def test_hostile_batch_pages_are_inert_and_capped(hostile_batch):
    out = hostile_batch["out"]
    for page in (out / "feedback").glob("*.html"):
        text = page.read_text()
        assert sanitize.clean_page(text)[0] is not None, page.name  # the audit finds nothing active
        assert len(text.encode()) <= DEFAULTS.page_cap
    xavier = (out / "feedback" / "xavier_scripts.html").read_text()
    assert "<script" not in xavier and "data:image/png" in xavier and "Content-Security-Policy" in xavier
    shown = visible_text(xavier)  # the HTML, JavaScript and SVG outputs appear as their plain-text form only
    assert all(f"<IPython.core.display.{kind} object>" in shown for kind in ("HTML", "Javascript", "SVG"))
    assert "more characters not shown" in shown and len(xavier.encode()) < 2 << 20  # the 40 MB print


@pytest.mark.slow
@isolated
def test_hostile_batch_leaves_the_host_as_it_was(hostile_batch):
    before, after = hostile_batch["before"], hostile_batch["after"]
    for key in before:
        assert before[key] == after[key], key
    assert before["planted"] == [] and before["ipc_keys"] == [] and before["sandbox_processes"] == []
    assert before["sandbox_kernel"] == {"keys": {}, "ipc": {}}
    subs = hostile_batch["subs"]
    assert {p.name: p.read_bytes() for p in subs.iterdir()} == hostile_batch["originals"]


@pytest.mark.slow
@isolated
def test_hostile_batch_always_writes_its_outputs(hostile_batch):
    rows, out = hostile_batch["rows"], hostile_batch["out"]
    assert len(rows) == len(hostile.submissions(NAME)) + 1
    invalid = autograde.student_name(os.fsdecode(b"\xff\xfename"))  # never printed raw: a stable hashed name
    assert invalid.startswith("invalid-") and rows[invalid]["total"] == "0" and hostile_batch["report"][invalid]["status"] == "bad"
    assert (out / "report.md").exists() and not (out / ".work").exists()


@pytest.mark.slow
@bwrap_only
def test_a_warm_parent_started_before_a_failing_probe_is_closed_and_the_process_level_used(monkeypatch):
    """Grader starts the warm parent at the level the probe will likely find, before probing; where the probe then
    fails (bwrap installed but not working, as in some containers), that parent is closed and one is started at the
    process level, and the reference is run there."""
    from grader import grade as grade_module
    from grader.runner import shared

    monkeypatch.setattr(grade_module, "likely_level", lambda: "bwrap")
    monkeypatch.setattr(grade_module, "sandbox_level", lambda: "process")
    shared("bwrap").close()
    grader = Grader(NAME)
    try:
        assert grader.sandbox == "process" and grader.warm.level == "process"
        assert shared("bwrap")._proc is None, "the parent started before the probe was closed"
        assert grader.expected, "the reference ran at the process level"
    finally:
        shared("process").close()
