"""A zh student reads Chinese where things go wrong: the set-up cell's failure (network off), every lab
error a wrong TODO can raise, and the feedback page (headers, judges' details, notes). Each path is run in the
zh edition and checked for English sentences (tests/english.py); the en edition keeps its English."""
import ast
import builtins
import json
import contextlib
import functools
import io
import re

import nbformat
import pytest
from nbclient import NotebookClient

import lab
from conftest import ROOT
from english import english_sentences
from grader import course, editions, feedback, i18n, pipeline, reference, report, sample_submissions
from grader.assignment import load
from grader.config import DEFAULTS
from grader.grade import RuleResult, TaskVerdict, explain, failed, first_diff, judged, labelled
from grader.messages import Joined, Message, Named, error_words
from grader.child_values import CELL_TIMEOUT
from grader.contract import label as scenario_label
from grader.verdict import Outcome
from grader.assignment import MUTANTS
from grader.observed import CRASH, SKIPPED, TIMEOUT, Instance, NoValue
from grader.paths import assignment_names
from lab import __version__
from lab.engine import LLMEngine, ScheduledBatch, Sequence, serving_order

NAMES = assignment_names()
batch_scheduling, continuous_batching = load("03_batch_scheduling").suite, load("01_continuous_batching").suite
DECODE = load("02_decode_scheduling").cases
HANZI = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    lab.set_language("en")


def chinese(text: str) -> bool:
    """Chinese to read: some hanzi, and no English sentence."""
    return bool(HANZI.search(text)) and english_sentences(text) == []


# --- the checker ----------------------------------------------------------------------------------------

def test_the_checker_catches_a_planted_english_sentence():
    planted = "第 3 步什么也没有调度，而仍有 1 个请求在等待：the scheduler is stuck"
    assert english_sentences(planted) == ["the scheduler is stuck"]
    assert not chinese(planted)
    assert english_sentences("tight KV #3: step 4, batch = sched.schedule(): expected to raise ValueError, but it returned None") \
        == ["expected to raise", "but it returned None"]
    assert english_sentences("Installed: no restart is needed.") == ["Installed no restart is needed"]


def test_the_checker_leaves_code_identifiers_and_tables_alone():
    for text in ["策略只能读取 seq_id、arrival_us、priority 和 num_prompt_tokens，不能读取 'max_tokens'",
                 "对这条轨迹的请求调用 slo_key 时抛出了 AttributeError（在 notebook 中运行 lab.engine.serving_order(slo_key, infos)）",
                 "            makespan_ticks  busy_slots  utilization  mean_wait  max_wait\npolicy\nstatic   7  10",
                 "类别 0 的 p99 TTFT 3241 ms > 700 ms；vLLM test_priority_scheduling_preemption：第 2 步",
                 "sched, step = Scheduler(num_blocks=8, policy='fcfs'), 0\nbatch = sched.schedule()",
                 "正在使用 lab 0.1.0", "`%pip install decode_scheduling_lab-0.1.0-py3-none-any.whl`",
                 "priority：抢占 (priority, arrival, id) 最大者"]:
        assert english_sentences(text) == [], text


# --- the set-up cell ------------------------------------------------------------------------------------

def setup_only(lang: str) -> nbformat.NotebookNode:
    """The released edition's set-up cell, alone."""
    path = ROOT / "notebooks" / ("" if lang == "en" else lang) / f"{NAMES[-1]}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells = [next(c for c in nb.cells if c.cell_type == "code")]
    return nb


# What pip and IPython print themselves around %pip: not ours to translate.
FOREIGN = ("ERROR:", "WARNING:", "Note: you may need to restart the kernel", "Looking in links")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_setup_cells_failure_offline_speaks_the_editions_language(lang, tmp_path, monkeypatch):
    """A kernel where `lab` cannot be imported and pip has no index (the network is off): the install fails."""
    blocked = tmp_path / "blocked" / "lab"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text('raise ImportError("not installed in this kernel")\n')
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "blocked"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setenv(course.SOURCE_ENV, f"{course.DIST_NAME}==999.0")  # on no index: nothing can be installed
    nb = setup_only(lang)
    NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    (error,) = [o for o in outputs if o.output_type == "error"]
    printed = re.sub(r"\x1b\[[0-9;]*m", "", "".join(o.get("text", "") for o in outputs if o.output_type == "stream"))
    ours = [line for line in printed.splitlines() if line.strip() and not line.lstrip().startswith(FOREIGN)]
    assert error.ename == "ImportError" and f"{course.DIST_NAME}==999.0" in error.evalue
    if lang == "zh":
        assert error.evalue.startswith("无法从") and ours and all(chinese(line) for line in ours), ours
        assert chinese(error.evalue), error.evalue
    else:
        assert error.evalue.startswith("Could not install the course package") and "Installing the course package" in printed


def run_setup(lang: str, fail_first_imports: int) -> str:
    """The set-up code as plain Python (its %pip blanked), `import lab` failing the first n times; what it prints."""
    failures = [fail_first_imports]

    def flaky_import(name, *args, **kwargs):
        if name == "lab" and failures[0] > 0:
            failures[0] -= 1
            raise ImportError("not yet")
        return builtins.__import__(name, *args, **kwargs)

    ns, out = {"__builtins__": {**vars(builtins), "__import__": flaky_import}}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(editions.strip_magics(course.setup_code(language=lang)), "<setup>", "exec"), ns)
    return out.getvalue()


def test_the_zh_setup_cells_other_messages_are_chinese():
    assert run_setup("zh", 0) == f"正在使用 lab {__version__}\n"
    installed = run_setup("zh", 1).splitlines()
    assert len(installed) == 3 and installed[1] == "安装完成：无需重启内核。" and all(chinese(line) for line in installed)
    assert run_setup("en", 1).splitlines()[1:] == ["Installed: no restart is needed.", f"Using lab {__version__}"]


# --- lab's errors -----------------------------------------------------------------------------------------

def engine_ns():
    return reference.namespace("03_batch_scheduling")


def lab_errors():
    """(what went wrong, the call that raises) for each error a wrong answer (or a wrong call in a cell) meets."""
    ns = engine_ns()
    Scheduler, BlockManager = ns["Scheduler"], ns["BlockManager"]

    class Stuck(Scheduler):
        def schedule(self):  # a TODO 1 that never schedules anything
            return ScheduledBatch(token_budget=self.max_num_batched_tokens)

    calls = iter(range(10**6))
    held = Sequence(0, 4)
    pool = BlockManager(4, 4)
    pool.allocate(held, 4)
    running = Sequence(1, 4)
    running.status = lab.engine.SequenceStatus.RUNNING
    infos = [Sequence(i, 4).info() for i in range(3)]

    def duplicate():
        sched = Scheduler()
        sched.add(Sequence(0, 4))
        sched.add(Sequence(0, 4))

    def decode_sim():
        sim = lab.DecodeSchedulerBase()
        sim.queue.append(lab.RequestState(1, 1, 1))
        sim._check_new_request(1, 1, 1, 0, False, 1, None, True)

    @lab.todo("TODO 9")  # not a notebook's TODO: the blank-TODO registry is shared by the process
    def blank():
        raise NotImplementedError()

    def blank_then_needed():
        with contextlib.suppress(NotImplementedError):
            blank()
        lab.require_todos("TODO 9")

    bad_trace = [{"id": 0, "arrival": 0, "tokens": 2}]
    return {
        "a stuck scheduler (TODO 1)": lambda: LLMEngine(Stuck()).run([{"seq_id": 0, "num_prompt_tokens": 4}]),
        "max_steps reached": lambda: LLMEngine(Scheduler()).run([{"seq_id": 0, "num_prompt_tokens": 4, "max_tokens": 50}], max_steps=2),
        "a policy reading a forbidden field (TODO 5)": lambda: Scheduler(policy=lambda r: r.max_tokens).add(Sequence(0, 4)),
        "a key returning text (TODO 5)": lambda: Scheduler(policy=lambda r: "soon").add(Sequence(0, 4)),
        "a key with memory (TODO 5)": lambda: serving_order(lambda r: next(calls), infos),
        "a batch over its budget (TODO 1)": lambda: ScheduledBatch(token_budget=2).add(Sequence(0, 4), 3),
        "add() of a dict": lambda: Scheduler().add({"seq_id": 0}),
        "a duplicate seq_id": duplicate,
        "a sequence that is not new": lambda: Scheduler().add(running),
        "a sequence longer than the pool": lambda: Scheduler(num_blocks=1, block_size=4).add(Sequence(0, 8)),
        "a second allocate (TODO 2)": lambda: pool.allocate(held, 1),
        "a request of the wrong type": lambda: LLMEngine(Scheduler()).run([42]),
        "bad SLO input: no first token": lambda: lab.engine.slo_metrics([{"arrival_us": 0, "priority": 0, "first_token_us": None}]),
        "bad SLO input: no class 0": lambda: lab.engine.slo_metrics([{"arrival_us": 0, "priority": 1, "first_token_us": 5}]),
        "an unknown policy": lambda: Scheduler(policy="lifo"),
        "a threshold without chunking": lambda: Scheduler(long_prefill_token_threshold=4, enable_chunked_prefill=False),
        "a bad trace request": lambda: lab.engine.make_trace(-1, 1.0),
        "a bad trace rate": lambda: lab.engine.make_trace(10, 0),
        "a bad sequence field": lambda: Sequence(0, 0),
        "a schedule that breaks an invariant (01)": lambda: lab.check_schedule(bad_trace, 1, {"trace": [{"tick": 0, "served": [0]}]}),
        "bad jobs (01)": lambda: lab.schedule([{"id": 0, "arrival": 0, "tokens": 1.5}], 1, True),
        "a duplicate request (02)": decode_sim,
        "a blank TODO": blank,
        "a cell that needs a blank TODO": blank_then_needed,
        "a failing visible check": lambda: lab.expect(1, 2, "规则"),
    }


ERRORS = list(lab_errors())


@pytest.mark.parametrize("what", ERRORS)
def test_every_lab_error_a_wrong_answer_meets_is_chinese_in_zh_and_english_in_en(what):
    call = lab_errors()[what]
    lab.set_language("zh")
    with pytest.raises(Exception) as zh:
        call()
    lab.set_language("en")
    with pytest.raises(Exception) as en:
        lab_errors()[what]()
    assert chinese(str(zh.value)), f"{what}: {zh.value}"
    assert not HANZI.search(str(en.value).replace("规则", "")), f"{what}: {en.value}"
    assert type(zh.value) is type(en.value)


def test_the_stuck_scheduler_reads_as_a_sentence():
    lab.set_language("zh")
    with pytest.raises(RuntimeError, match="第 0 步什么也没有调度，而仍有 1 个请求在等待、0 个在运行：调度器卡住了"):
        lab_errors()["a stuck scheduler (TODO 1)"]()


def message_of(node: ast.Raise) -> ast.expr | None:
    """The message a raise statement builds (its exception's first argument; lab.i18n.refused(...) itself), if any."""
    exc = node.exc
    if isinstance(exc, ast.Call) and getattr(exc.func, "id", "") == "refused":
        return exc   # a ValueError of tr(template, **fields)
    return exc.args[0] if isinstance(exc, ast.Call) and exc.args else None


# Raises whose text a wrong answer never reaches: lab's own misuse by the course (a bad language, a missing
# attribute of the package, a malformed worked-example script).
NOT_REACHABLE = {("lab/i18n.py", "ValueError"), ("lab/__init__.py", "AttributeError"), ("lab/engine/__init__.py", "AttributeError"),
                 ("lab/examples.py", "ValueError"), ("lab/font_subset.py", "SystemExit")}
# functions only a maintainer's command runs (`make cjk-font`): their messages are for the maintainer, in English
MAINTAINER_ONLY = {("lab/font_subset.py", "_source_face"), ("lab/font_subset.py", "main")}


def translated(text: ast.expr) -> bool:
    """tr(...), or a check's `rule` (the notebook's own text, in its edition's language), or a choice of them."""
    if isinstance(text, ast.IfExp):
        return translated(text.body) and translated(text.orelse)
    return (isinstance(text, ast.Call) and getattr(text.func, "id", "") in ("tr", "refused")) or (isinstance(text, ast.Name) and text.id == "rule")


def untranslated(path, source: str) -> list[str]:
    """Raises and prints in `source` whose message does not go through tr()."""
    found = []
    tree = ast.parse(source)
    skipped = {line for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and (path, f.name) in MAINTAINER_ONLY
               for line in range(f.lineno, f.end_lineno + 1)}
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skipped:
            continue
        if isinstance(node, ast.Raise) and message_of(node) is not None:
            name = getattr(node.exc.func, "id", getattr(node.exc.func, "attr", ""))
            if (path, name) not in NOT_REACHABLE and not translated(message_of(node)):
                found.append(f"{path}:{node.lineno}")
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print":
            if not all(translated(a) for a in node.args):
                found.append(f"{path}:{node.lineno}")
    return found


def test_every_message_lab_raises_or_prints_goes_through_tr():
    found = [f for p in sorted((ROOT / "lab").rglob("*.py")) for f in untranslated(str(p.relative_to(ROOT)), p.read_text())]
    assert found == []
    # the check can fail
    assert untranslated("lab/x.py", 'raise ValueError(f"bad {x}")\nprint("done")\nraise ValueError(tr("ok"))\nraise refused("ok")') == ["lab/x.py:1", "lab/x.py:2"]
    # a maintainer's command is left out by its name only: the same print elsewhere in lab/font_subset.py is caught
    assert untranslated("lab/font_subset.py", 'def main():\n    print("wrote")\ndef subset():\n    print("wrote")') == ["lab/font_subset.py:4"]


def test_example_and_scenario_names_have_chinese_names():
    names = [e.name for e in lab.BATCHING_EXAMPLES] + list(lab.DECODE_SCENARIOS)
    lab.set_language("zh")
    assert all(chinese(lab.tr(name)) for name in names), [lab.tr(n) for n in names]


# --- the feedback page: judges' details, notes, headers -------------------------------------------------

def every_scenario():
    return [sc for name in NAMES for task in load(name).tasks(1) for rule in task.rules for sc in rule.scenarios]


@functools.cache
def real_labels() -> dict:
    return {sc["name"]: scenario_label(sc) for sc in every_scenario()}


def real(name: str):
    """The label the suites give the scenario named `name`."""
    return real_labels()[name]


def test_every_hidden_scenario_has_a_chinese_name():
    # vLLM's test names and the student's function calls are code: they stay as they are
    for sc in every_scenario():
        name, zh = sc["name"], scenario_label(sc).text("zh")
        assert english_sentences(zh) == [] and (zh != name or re.fullmatch(r"vLLM test_\w+( \(chunked=\w+\))?|\w+\(\)", name)), name
    assert i18n.scenario_name("tight KV") == "KV 紧张"


def judge_messages() -> list[Message | str]:
    """What the judges and grade.explain write, from the real functions on made-up observations: grade's a Message,
    the suites' judges' English text."""
    ops = [["new", {}], ["enqueue", {"request_id": 1, "prompt_len": 2}], ["step"]]
    exp = [{"value": None, "state": {"clock": 0}}, {"value": None, "state": {"clock": 0}}, {"value": {"request_id": 1}, "state": {"clock": 1}}]
    messages = [
        explain(ops, exp, NoValue(TIMEOUT), DECODE), explain(ops, exp, NoValue(SKIPPED), DECODE), explain(ops, exp, NoValue(CRASH, "MemoryError"), DECODE),
        explain(ops, exp, exp[:2], DECODE),
        explain(ops, exp, exp[:2] + [{"error": "ValueError", "state": {"clock": 1}}], DECODE),
        explain(ops, exp, exp[:2] + [{"error": "an error", "state": {"clock": 1}}], DECODE),
        explain(ops, exp, exp[:2] + [{"value": {"request_id": 2}, "state": {"clock": 1}}], DECODE),
        explain(ops, exp, exp[:2] + [{"value": {"request_id": 1}, "state": {"clock": 7}}], DECODE),
        explain(ops, [{"value": [{"request_id": 3, "x": 1}]}], [{"value": [{"request_id": 3, "x": 2}]}], DECODE),
        # values of another type: each named after its type; dicts whose keys differ in type; a key one side lacks
        explain(ops, exp, exp[:2] + [{"value": {"request_id": "1"}, "state": {"clock": 1}}], DECODE),
        explain(ops, [{"value": {0: (0, 1)}}], [{"value": {"0": (0, 1)}}], DECODE),
        explain(ops, [{"value": {0: (0, 1)}}], [{"value": {0: [0, 1]}}], DECODE),
        explain(ops, [{"value": {0: (0, 1), 1: (2, 3)}}], [{"value": {0: (0, 1), "1": (2, 3)}}], DECODE),
        explain(ops, [{"value": 3}], [{"value": Instance("numpy.ndarray", "array([3])")}], DECODE),
        explain(ops, [{"value": {"a": 1, "b": 2}}], [{"value": {"a": 1}}], DECODE),
        explain(ops, [{"value": {"a": 1}}], [{"value": {"a": 1, "b": 2}}], DECODE),
        judged(lambda o, s: 1 / 0, [1], {}), judged(lambda o, s: "", {"a": "x" * 10**6}, {}),
    ]
    judge = continuous_batching._judge_workload
    messages += [judge(NoValue(TIMEOUT), None), judge([{"value": 3}], None), judge([{"value": ([{"id": 0, "arrival": 0, "tokens": 0}], 2)}], None),
                 judge([{"value": ([{"id": i, "arrival": 0, "tokens": 2} for i in range(3)], 2)}], None),
                 judge([{"value": ([{"id": i, "arrival": 0, "tokens": 1 + i} for i in range(3)], 2)}], None),
                 judge([{"value": ([{"id": 0, "arrival": 0, "tokens": 2}, {"id": 1, "arrival": 0, "tokens": 3}], 1)}], 2),
                 judge([{"value": [[{"id": 0, "arrival": 0, "tokens": 2}], 1]}], None),   # a list, not a (jobs, slots) pair
                 judge([{"value": Instance("__graded__.Pair", "Pair(jobs=[], slots=1)", ([], 1))}], None),
                 continuous_batching.workload_too_big([{}] * 300, 2), continuous_batching.workload_too_big([], 0),
                 continuous_batching.workload_too_big([{"tokens": 5000, "arrival": 0}], 2),
                 continuous_batching.workload_too_big([{"tokens": 1000, "arrival": 0}] * 30, 2)]
    slo = batch_scheduling.judge_slo
    scenario = batch_scheduling.slo_scenario(0)
    fcfs = [r["seq_id"] for r in batch_scheduling._trace(0)]
    messages += [slo(NoValue(TIMEOUT), scenario), slo(NoValue(CRASH, "X"), scenario), slo([{"error": "NameError"}], scenario),
                 slo([{"error": "AttributeError"}], scenario), slo([{"value": [1, 2]}], scenario), slo([{"value": fcfs}], scenario)]
    return [m for m in messages if m]


def test_every_judges_detail_and_note_is_chinese_on_a_zh_page():
    messages = judge_messages()
    assert len(messages) >= 25 and sum(bool(english_sentences(str(m))) for m in messages) >= 20  # the check below can fail
    assert all(isinstance(m, Message) for m in messages)   # grade.py's and the judges': none is English text
    for name in ["held-out trace A", "tight KV #3", "worked example: preemption and resume (1)", "vLLM test_schedule"]:
        for message in messages:
            zh = i18n.detail(labelled(real(name), message), "zh")
            assert english_sentences(zh) == [], (message, zh)
            assert i18n.detail(labelled(real(name), message), "en") == f"{name}: {message}"
    notes = [Message("cell_raised", {"task": "TODO 3", "error": "NameError"}),
             Message("cell_raised", {"task": "TODO 3", "error": error_words("an error")}),
             Message("cell_raised", {"task": "TODO 1", "error": error_words(CELL_TIMEOUT)}),
             Message("child_ended", {"status": Named("timeout", "status"), "detail": Message("run_stopped_after", {"seconds": "120"})}),
             Message("child_ended", {"status": Named("crashed", "status"), "detail": Message("run_ended_early", {"code": -9})}),
             Message("grading_error_rerun", {"fault": Message("fault_server", {"status": Named("garbled", "status"),
                     "detail": Message("run_wrote", {"what": Message("record_malformed")})})}),
             Message("grading_error_rerun", {"fault": Message("fault_busy", {"waited": "100", "elapsed": "120"})}),
             Message("answer_cell_missing")]
    for note in notes:
        assert english_sentences(i18n.note(note, "zh")) == [], note
    assert Message("run_wrote", {"what": Message("record_end_malformed")}).text("zh") == "子进程写出了格式错误的场景结束记录"
    both = Joined((notes[0], Message("semicolon"), notes[3]))
    assert i18n.note(both, "en") == "your TODO 3 cell raised NameError; grading child timeout: stopped after 120 s"
    assert english_sentences(i18n.note(both, "zh")) == []
    for status in ["timeout", "crashed"]:
        said = labelled(real("random queue #0"), Message("not_run", {"status": Named(status, "status"),
                                                               "detail": Message("run_no_progress", {"seconds": "60"})}))
        assert str(said) == f"random queue #0: not run ({status}: stopped: no progress for 60 s)"
        assert english_sentences(i18n.detail(said, "zh")) == []
    assert english_sentences(i18n.detail(Message("no_answer_cell"), "zh")) == []
    ops = [["new", {}], ["step"]]
    cut = labelled(Message("cut_down", {"scenario": real("summary #3")}),
                   explain(ops, [{"value": None}, {"value": 2.0}], [{"value": None}, {"value": 3.0}], DECODE))
    assert str(cut) == "summary #3, cut down to a smaller case: step 2, sim.step(): returned: expected 2.0, got 3.0"
    assert english_sentences(str(cut)) and english_sentences(i18n.detail(cut, "zh")) == []  # a case made smaller (grader/shrink.py)
    # the check can fail: a detail nobody translated stays English, and is caught
    assert english_sentences(i18n.detail("tight KV #3: the engine caught fire", "zh")) == ["the engine caught fire"]


def test_a_zh_detail_copies_the_code_and_values_in_it_as_they_are():
    """The op that failed and the values are code: a ': ' or ', got ' inside them is not where the English is."""
    from grader import snippets

    cases = load("01_continuous_batching").cases
    jobs = [{"id": i, "arrival": i, "tokens": 3} for i in range(5)]
    call = ["waits_and_flows", [jobs, [{"t": 0, "running": [0]}]]]
    check = [snippets.VISIBLE, "expect(waits_and_flows([{'id': 0, 'arrival': 0}], trace), {0: (0, 1)})"]
    for op, exp, act, values in [
            (call, {"value": {0: (0, 1)}}, {"value": {0: (0, 2)}}, ["1", "2"]),        # an op cut short ('...')
            (call, {"value": {"s": "a: expected b, got c"}}, {"value": {"s": "x"}}, ["'a: expected b, got c'", "'x'"]),
            (call, {"value": {"s: t": 1}}, {"value": {"s: t": 2}}, ["['s: t']", "1", "2"]),
            (call, {"value": 1}, {"error": "KeyError"}, ["返回 1", "KeyError"]),
            (check, {"value": [{"x": 1}]}, {"value": [{"x": 2}]}, ["检查[0].x", "1", "2"])]:   # a visible check's own path
        said = labelled(real("held-out trace A"), explain([op], [exp], [act], cases))
        en, zh = str(said), i18n.detail(said, "zh")
        shown = snippets.describe(cases, op)
        assert f"held-out trace A: step 1, {shown}: " in en and zh.startswith(f"未公开轨迹 A：第 1 步，{shown}：") and shown.count(":") > 1, (en, zh)
        assert all(value in zh for value in values) and english_sentences(zh) == [], (en, zh)
        assert "step" not in zh and ", got" not in zh.replace("'a: expected b, got c'", ""), zh
    said = labelled(real("held-out trace A"), first_diff({"s: t": 1}, {"s: t": 2}, path=(Message("path_returned"),)))
    assert str(said) == "held-out trace A: returned['s: t']: expected 1, got 2"
    assert i18n.detail(said, "zh") == "未公开轨迹 A：返回值['s: t']：应为 1，实际为 2"
    # 03's `run` op holds ': ' outside brackets ("for _ in range(120): if ..."): the cut is after the whole op
    cases03 = load("03_batch_scheduling").cases
    run = ["run", 120]
    shown = snippets.describe(cases03, run)
    assert ": " in shown.split("(", 1)[1], shown
    for exp, act, what in [({"value": [[2]]}, {"value": [[3]]}, "返回值[0][0]：应为 2，实际为 3"),
                           ({"value": 1, "state": {"running": [1]}}, {"value": 1, "state": {"running": [2]}}, "状态"),
                           ({"value": 1}, {"error": "KeyError"}, "KeyError")]:
        said = labelled(real("held-out trace A"), explain([run], [exp], [act], cases03))
        en, zh = str(said), i18n.detail(said, "zh")
        assert zh.startswith(f"未公开轨迹 A：第 1 步，{shown}：") and what in zh, (en, zh)
        assert english_sentences(zh.replace(shown, "")) == [] and "returned" not in zh and "state " not in zh, (en, zh)


def test_a_value_that_reads_like_the_grader_s_english_is_shown_as_it_is():
    """Issues 41/42: the detail is a Message, worded per language; a student's value in it is never read as English
    the grader wrote. The old zh page found the English again in the text and cut at a ': expected ' inside the
    key ('z...' reads as a value cut short), leaving the key mangled and the rest of the sentence in English."""
    key, text = "z...: expected 1, got 2", "expected to return 1, but it raised KeyError; no such key"
    quoted = f"', got {text}"
    for exp, act, value, shown in [({"value": {"a": 1}}, {"value": {"a": 1, key: 3}}, key, f"[{key!r}]：不应有这个键，实际为 3"),
                                   ({"value": "a"}, {"value": text}, text, f"应为 'a'，实际为 {text!r}"),
                                   ({"value": 1}, {"value": quoted}, quoted, f"实际为 {ascii(quoted)}（类型为 str）")]:
        said = labelled(real("trace 0"), explain([["step"]], [exp], [act], DECODE))
        zh = i18n.detail(said, "zh")
        assert zh.startswith("轨迹 0：第 1 步，sim.step()：") and shown in zh, (str(said), zh)
        assert english_sentences(zh.replace(ascii(value), "")) == [], zh
    # a page made from report.json (Gradescope) or a stored verdict words the same Message
    rule = RuleResult(**json.loads(json.dumps(report.verdicts_to_json([TaskVerdict("TODO 1", "todo1", "t", 1, 0.0, [failed("r", said)])])[0]["rules"][0])))
    assert rule.message == said and i18n.rule_detail(rule, "zh") == zh and i18n.rule_detail(rule, "en") == rule.detail == str(said)


def test_a_skipped_cells_note_is_chinese_on_a_zh_page():
    """A cell the feedback run left out says why in the page's language: a Message worded where the output is made
    (grader/notebook_run.py), never student output read back by its words."""
    from grader import notebook_run
    graded = Message("why_uses_graded_hang", {"todo": "TODO 4"})   # a TODO as the student knows it, not its id todo4
    assert notebook_run._note(graded, "zh")["text"] == "[未运行] TODO 4 在评分时超出了时间限制，而这个单元格用到了它\n"
    assert notebook_run._note(graded, "en")["text"] == "[not run] not run: TODO 4 ran past its time limit when graded, and this cell uses it\n"
    for why in [graded, Message("why_uses_hang", {"todo": "TODO 2"}), Message("why_budget", {"seconds": "90"}),
                Message("why_no_stop", {"index": 12}), Message("why_ended"), Message("why_stopped")]:
        assert chinese(notebook_run._note(why, "zh")["text"]) and english_sentences(notebook_run._note(why, "zh")["text"]) == []
    limits = notebook_run.CellLimits(1.0, 30.0, 90.0)
    labels = {"TODO 1"}
    assert str(notebook_run._why({"why": {"uses": "TODO 1"}}, limits, False, labels)) == "TODO 1 ran past its time limit, and this cell uses it"
    assert str(notebook_run._why({"why": {"uses": "<b>forged</b>"}}, limits, False, labels)) == "the run ended early"  # a name it never gave
    assert str(notebook_run._why(None, limits, True, labels)) == "the run was stopped"


def test_the_summary_a_zh_page_shows_is_chinese():
    verdict = TaskVerdict("TODO 5", "todo5", "todo5_tests", 2, 0.0, [
        failed("meets the SLO on the notebook's traces 0, 1, 2", labelled(real("trace 0"), Message("slo_key_missing"))),
        failed("meets it on two held-out traces of the same kind (not tuned to the three)",
               labelled(real("held-out trace A"), Message("not_run", {"status": Named("timeout", "status"),
                                                                "detail": Message("run_stopped_after", {"seconds": "120"})})))],
        note=Message("cell_raised", {"task": "TODO 5", "error": "NameError"}), status=Outcome.RAISED)
    zh = i18n.summary(verdict, "zh")
    assert chinese(zh) and "TODO 5 的单元格里没有 slo_key 函数" in zh and "未公开轨迹 A：未运行（超时" in zh
    assert "there is no slo_key function" in i18n.summary(verdict)


def test_the_failing_cases_code_comments_are_chinese_on_a_zh_page():
    """The code is pasted as it is; its comments are read: the case of a running request set up by hand."""
    from grader import snippets

    cases = load("03_batch_scheduling").cases
    code = snippets.snippet(cases, [["sched", {"max_num_seqs": 2}], ["running", {"seq_id": 0, "prompt_len": 4}, 4, 1, 2], ["schedule"]])
    assert "# a running request, set up by hand" in code   # the English the grader writes
    verdict = TaskVerdict("TODO 2", "todo2", "todo2_tests", 2, 0.0, [RuleResult("schedules a running request", False,
                                                                                 "tight KV #3: step 3, batch = sched.schedule(): returned: expected 1, got 2", code)])
    zh, en = i18n.summary(verdict, "zh"), i18n.summary(verdict, "en")
    assert "# a running request, set up by hand" in en and "set up by hand" not in zh
    assert "def add_running(blocks, computed, outputs, **request):  # 一个手动设置的运行中请求" in zh
    assert [line for line in code.splitlines() if "#" not in line] == [line for line in i18n.code_comments(code, "zh").splitlines() if "#" not in line]


# One submission per notebook, in the zh edition: each TODO broken (a mutant, or a hang), as its assignment.toml's
# zh_broken chooses (by default, the TODO's first mutant that applies).


def zh_answers(name: str) -> dict[str, str]:
    answers = editions.reference_of(editions.read_master(name, "zh"))   # the zh master's answers (not another test file's helper)
    by_todo: dict[str, list] = {}
    for mutant in MUTANTS[name]:
        by_todo.setdefault(mutant.answer_id, []).append(mutant)
    for answer_id, mutants in by_todo.items():
        wanted = load(name).figures.zh_broken.get(answer_id)
        if wanted == "hang":
            answers[answer_id] = sample_submissions._insert_after_docstring(answers[answer_id], sample_submissions.HANG)
            continue
        mutant = next(m for m in mutants if (wanted is None or m.name == wanted) and m.find in answers[answer_id])
        answers[answer_id] = mutant.apply(answers[answer_id])
    return answers


def page_text_of(nb, verdicts) -> tuple[list[str], list[str]]:
    """(texts of the verdicts shown in test cells, their failing cases' code removed; every other output's text)."""
    code = [line for v in verdicts for r in v.rules for line in r.snippet.splitlines()]
    by_test = {v.test_id for v in verdicts}
    verdict_texts, others = [], []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            text = output.get("text", "") if output.get("output_type") == "stream" else output.get("evalue", "")
            if editions.grade_id(cell) in by_test:
                verdict_texts.append("\n".join(line for line in text.splitlines() if line not in code))
            elif text:
                others.append(text)
    return verdict_texts, others


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_feedback_page_of_a_broken_zh_submission_is_chinese(name):
    nb = sample_submissions.filled(name, zh_answers(name), "zh")
    graded = pipeline.grade_notebook(nb, name, DEFAULTS.override(cell_timeout=10))  # the language is found, as in nbgrader
    assert graded.language == "zh" and nb.metadata["language_edition"] == "zh"
    assert all(v.score < v.points for v in graded.verdicts), [(v.task_id, v.score) for v in graded.verdicts]
    page = feedback.render(nb, name, graded.verdicts)
    heading = feedback.visible_text(re.search(r"<h4>.*?</h4>", page, re.S)[0])
    toc = feedback.visible_text(re.search(r'<div id="toc">.*?</div>', page, re.S)[0])
    assert heading.startswith(f"{name}（得分：") and chinese(heading) and chinese(toc), (heading, toc)
    verdict_texts, others = page_text_of(nb, graded.verdicts)
    assert len(verdict_texts) >= len(graded.verdicts)
    for text in verdict_texts:
        assert english_sentences(text) == [], text
    assert [t for t in others if english_sentences(t)] == []
    shown = feedback.visible_text(page)
    # nbgrader's cell headings, in Chinese (its macros would say "Student's answer", "Grade cell", "Score: … (Top)")
    assert "你的答案" in shown and "评分单元格：" in shown and "（回到顶部）" in shown
    assert [said for said in ["Student's", "Grade cell", "Score:", "(Top)"] if said in shown] == []
    for verdict in graded.verdicts:  # the page shows the Chinese details
        for rule in verdict.rules:
            if not rule.passed:
                assert i18n.rule_detail(rule, "zh").split("\n")[0][:60] in shown
    if name == "02_decode_scheduling":  # the hung TODO's dependents say why they did not run, in Chinese
        assert "[未运行] TODO 4 在评分时超出了时间限制" in shown and "todo4 " not in shown
    # the plain page (when the rich one cannot be rendered) has the natural heading
    outcome = report.Outcome("alice", "graded", {}, verdicts=graded.verdicts, language="zh")
    plain = feedback.visible_text(report.plain_page(name, pipeline.grader_for(name).tasks, outcome))
    assert f"alice 的反馈：{name}" in plain
    assert english_sentences("\n".join(line for line in plain.splitlines() if line not in
                                       [c for v in graded.verdicts for r in v.rules for c in r.snippet.splitlines()])) == []


@pytest.mark.parametrize("name", NAMES)
def test_in_nbgrader_the_edition_is_found_before_anything_is_worded(name):
    # nbgrader hands the plugin a notebook, not a file: without this step a zh course was graded and worded in English
    import types
    assert pipeline.NBGRADER_SANITIZE[0] is pipeline.edition and pipeline.NBGRADER_AUTOGRADE[0] is pipeline.edition
    prepared = types.SimpleNamespace(assignment=load(name))
    for language, folder in (("zh", "notebooks/zh"), ("en", "notebooks")):
        work = pipeline.Work(nb=nbformat.read(ROOT / folder / f"{name}.ipynb", as_version=4), nbgrader=True)
        pipeline.run(prepared, work, DEFAULTS, (pipeline.edition,))
        assert work.language == language
