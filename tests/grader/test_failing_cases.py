"""Fair verdicts and readable feedback: floats within one tolerance, failing cases cut down to code a student can
run in the notebook, and the sentence of the text that a failing rule holds the answer to."""
import ast
import contextlib
import functools
import io
import re
import time

import matplotlib.pyplot as plt
import nbformat
import pytest

from conftest import ROOT
from grader import editions, grade, i18n, reference, snippets
from grader.assignment import load
from grader.compare import same
from grader.grade import Grader
from grader.assignment import MUTANTS, mutated_answers

BATCH = "03_batch_scheduling"


@functools.lru_cache(maxsize=None)
def grader_of(assignment: str) -> Grader:
    return Grader(assignment)


def scores(verdicts):
    return {v.answer_id: v.score for v in verdicts}


def replayed(assignment: str, answer_id: str) -> bool:
    """A TODO whose rules compare replays with the reference (not judged by a property): its failures carry code."""
    return not any(rule.judge for task in load(assignment).tasks(1) if task.answer_id == answer_id for rule in task.rules)


# ------------------------------------------------------------------ 1. another order of the same arithmetic
TPOT = 'tpot_ms = (rec["finish_us"] - rec["first_token_us"]) / 1000 / num_gaps'
REWRITTEN_TODO4 = {  # each lost points on main, where the child rounded to 6 decimals and the parent compared exactly
    "ms before dividing": [(TPOT, 'tpot_ms = (rec["finish_us"] / 1000 - rec["first_token_us"] / 1000) / num_gaps')],
    "divide, then ms": [(TPOT, 'tpot_ms = (rec["finish_us"] - rec["first_token_us"]) / num_gaps / 1000')],
    "numpy's percentile, ms before dividing": [
        (TPOT, 'tpot_ms = (rec["finish_us"] / 1000 - rec["first_token_us"] / 1000) / num_gaps'),
        ("    ordered = sorted(values)\n    if not ordered:\n", "    import numpy as np\n    if not len(values):\n"),
        ("    rank = (len(ordered) - 1) * q / 100\n    low = math.floor(rank)\n    high = min(low + 1, len(ordered) - 1)\n"
         "    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)", "    return float(np.percentile(values, q))")],
}


def rewritten(edits) -> str:
    source = editions.reference_answers(BATCH)["todo4"]
    for find, replace in edits:
        assert find in source, find
        source = source.replace(find, replace)
    return source


def summaries(answers: dict) -> list:
    """latency_summary on every summary scenario of the suite, in this process (no sandbox needed: trusted code)."""
    ns = reference.namespace(BATCH, answers)
    rule = next(r for task in grader_of(BATCH).tasks for r in task.rules if r.name.startswith("summary:"))
    return [ns["latency_summary"](*sc["ops"][0][2]) for sc in rule.scenarios if not grade.visible(sc)]


@pytest.mark.slow
@pytest.mark.parametrize("name", REWRITTEN_TODO4)
def test_todo4_written_another_way_gets_full_marks(name):
    answers = editions.reference_answers(BATCH) | {"todo4": rewritten(REWRITTEN_TODO4[name])}
    ours, theirs = summaries(editions.reference_answers(BATCH)), summaries(answers)
    assert ours != theirs, "the rewrite must differ in the last bits somewhere, or it shows nothing"
    assert same(ours, theirs)
    assert scores(grader_of(BATCH).grade(answers))["todo4"] == 2


SMALL_FLOAT_BUGS = ["the span is one microsecond too long", "percentile rank off by one", "TPOT divides by the tokens, not the gaps"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL_FLOAT_BUGS)
def test_a_small_float_bug_is_still_caught(name):
    """The tolerance forgives the last bits, not a real bug: the smallest of these moves a value by about 1e-7."""
    mutant = next(m for m in MUTANTS[BATCH] if m.name == name)
    ours, theirs = summaries(editions.reference_answers(BATCH)), summaries(mutated_answers(BATCH, mutant))
    assert not same(ours, theirs)
    if name.startswith("the span"):
        rel = max(abs(a[k] - b[k]) / abs(a[k]) for a, b in zip(ours, theirs) for k in a if isinstance(a[k], float) and a[k])
        assert 1e-9 < rel < 1e-5, rel
    got = scores(grader_of(BATCH).grade(mutated_answers(BATCH, mutant)))
    assert got["todo4"] < 2 and {k: v for k, v in got.items() if k != "todo4"} == {"todo1": 3, "todo2": 2, "todo3": 3, "todo5": 2}


# ------------------------------------------------------------------ 5. a failing case a student can run
@functools.lru_cache(maxsize=None)
def notebook_namespace(assignment: str) -> dict:
    """The globals of the student edition run top to bottom with the reference answers: what a scratch cell sees."""
    nb = nbformat.read(ROOT / "notebooks" / f"{assignment}.ipynb", as_version=4)
    answers, ns = editions.reference_answers(assignment), {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            if cell.cell_type == "code":
                exec(compile(editions.strip_magics(answers.get(editions.grade_id(cell), cell.source)), "<cell>", "exec"), ns)
    plt.close("all")
    return ns


def run_scratch_cell(ns: dict, code: str) -> str:
    """What a scratch cell holding `code` shows: its last expression's value, or the error it raised."""
    return scratch_value(ns, code)[0]


def scratch_value(ns: dict, code: str) -> tuple[str, object]:
    """(what the cell shows, the value itself) of a scratch cell holding `code`."""
    tree = ast.parse(code)  # a snippet that is not valid Python fails here
    last = tree.body[-1]
    body = ast.Module(tree.body[:-1] if isinstance(last, ast.Expr) else tree.body, type_ignores=[])
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(body, "<scratch>", "exec"), ns)
            value = eval(compile(ast.Expression(last.value), "<scratch>", "eval"), ns) if isinstance(last, ast.Expr) else None
    except Exception as exc:  # noqa: BLE001 - raising where the reference returns is a difference too
        return f"raised {type(exc).__name__}", None
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value)), value


@contextlib.contextmanager
def answer_cell_rerun(ns: dict, assignment: str, answer_id: str, source: str):
    """The student edits one answer cell and runs it again; afterwards the reference's cell is run again."""
    try:
        exec(compile(source, "<answer>", "exec"), ns)
        yield ns
    finally:
        exec(compile(editions.reference_answers(assignment)[answer_id], "<answer>", "exec"), ns)


REPLAYED = [(name, m) for name, mutants in MUTANTS.items() for m in mutants if replayed(name, m.answer_id)]


@pytest.mark.slow
@pytest.mark.parametrize("assignment, mutant", REPLAYED, ids=lambda x: x if isinstance(x, str) else f"{x.answer_id}-{x.name}")
def test_every_failing_case_is_short_code_that_reproduces_in_the_notebook(assignment, mutant):
    """Every failing rule shows code (never "too long to show") of at most MAX_LINES lines; pasted into a scratch cell of
    the solved notebook it runs, and with the broken answer cell it gives another result."""
    verdict = next(v for v in grader_of(assignment).grade(mutated_answers(assignment, mutant)) if v.answer_id == mutant.answer_id)
    failing = [r for r in verdict.rules if not r.passed]
    assert failing and all(r.snippet for r in failing)
    for language in ("en", "zh"):
        assert "too long to show" not in i18n.summary(verdict, language)
    ns = notebook_namespace(assignment)
    for rule in failing:
        code = rule.snippet
        assert snippets.fits(code) and code == code.strip() and not code[0].isspace(), code  # MAX_LINES, MAX_CHARS, flush left
        expected, value = scratch_value(ns, code)
        assert not expected.startswith("raised") or "expected to raise" in rule.detail, (rule.detail, code, expected)
        top = re.search(r": returned: expected (.*?)(?: \([\w. ]+\))?, got (.*?)(?: \([\w. ]+\))?$", rule.detail)
        if top and not expected.startswith("raised"):   # the values the page says are those the cell shows, as Python prints them
            assert top.group(1).endswith("...") or top.group(1) == ascii(value), (expected, rule.detail)
        with answer_cell_rerun(ns, assignment, mutant.answer_id, mutated_answers(assignment, mutant)[mutant.answer_id]):
            theirs, their_value = scratch_value(ns, code)
            assert theirs != expected, (rule.detail, code)
        if top and not theirs.startswith("raised") and not top.group(2).endswith("..."):
            assert top.group(2) == ascii(their_value), (theirs, rule.detail)


def long_failing_case(n: int) -> str:
    """A TODO 4 whose TPOT is wrong for requests of more than `n` tokens: only a few records of a case show it."""
    return editions.reference_answers(BATCH)["todo4"].replace(
        TPOT, TPOT + f' * (1 + (rec["num_output_tokens"] > {n}) * 1e-6)')


@pytest.mark.slow
def test_shrinking_is_bounded_and_keeps_the_disagreement(monkeypatch):
    """A case of 30 records is cut down within SHRINK_ROUNDS sandboxed rounds; the smaller case still fails."""
    from grader import shrink
    grader, rounds = grader_of(BATCH), []
    observe = Grader._observe_both

    def counted(self, *args):
        rounds.append(len(args[2]))
        return observe(self, *args)

    monkeypatch.setattr(Grader, "_observe_both", counted)
    answers = editions.reference_answers(BATCH) | {"todo4": long_failing_case(250)}
    start = time.monotonic()
    verdict = grader.grade(answers)[3]
    seconds = time.monotonic() - start
    cut = [r for r in verdict.rules if "cut down to a smaller case" in r.detail]
    assert cut and 1 <= len(rounds) <= shrink.SHRINK_ROUNDS and max(rounds) <= shrink.SHRINK_CANDIDATES
    assert all(snippets.fits(r.snippet) for r in verdict.rules)
    ns = notebook_namespace(BATCH)
    for rule in cut:
        with answer_cell_rerun(ns, BATCH, "todo4", answers["todo4"]):
            theirs = run_scratch_cell(ns, rule.snippet)
        assert run_scratch_cell(ns, rule.snippet) != theirs
    print(f"graded with {len(rounds)} shrink rounds of {rounds} candidates in {seconds:.2f} s")


def test_a_case_that_cannot_be_cut_down_is_still_shown_as_code():
    ops = [["call", "latency_summary", [[{"seq_id": i, "arrival_us": 10 * i} for i in range(60)], 200, 50]]]
    code = snippets.snippet(load(BATCH).cases, ops)
    assert not snippets.fits(code) and "too long" not in code
    assert len(code.splitlines()) > snippets.MAX_LINES and ast.parse(code)


# ------------------------------------------------------------------ 2. feedback quotes the promise
@pytest.mark.slow
def test_a_failing_rule_quotes_its_sentence_in_the_students_language(monkeypatch):
    mutant = next(m for m in MUTANTS["01_continuous_batching"] if m.name == "only catches too few serves")
    tasks = Grader("01_continuous_batching").tasks
    rules = [r.name for r in tasks[1].rules]
    quotes = {"TODO 2": {name: {"en": [f"Sentence {i} of TODO 2."], "zh": [f"TODO 2 的第 {i} 句。"]}
                         for i, name in enumerate(rules)}}
    monkeypatch.setattr(load("01_continuous_batching"), "promises", quotes)
    verdict = Grader("01_continuous_batching").grade(mutated_answers("01_continuous_batching", mutant))[1]
    failing = [i for i, r in enumerate(verdict.rules) if not r.passed]
    passing = [i for i, r in enumerate(verdict.rules) if r.passed]
    assert "a job served too many times is caught" in [verdict.rules[i].name for i in failing] and passing
    en, zh = i18n.summary(verdict), i18n.summary(verdict, "zh")
    for i in failing:
        assert f'the text says: "Sentence {i} of TODO 2."' in en and f"题目要求：“TODO 2 的第 {i} 句。”" in zh
    for i in passing:
        assert f"Sentence {i} of" not in en and f"第 {i} 句" not in zh
    assert "A valid trace passes" not in en and "合法的 trace 通过。”" not in zh  # a passing rule quotes nothing
    assert "题目要求" not in en and "the text says" not in zh


@pytest.mark.slow
def test_hidden_scenarios_are_the_same_in_every_process():
    """A submission graded twice gets the same cases: a suite's scenarios must not depend on the process (hash(None)
    is an address in Python 3.11, so a seed made from a state holding None changed from run to run)."""
    import subprocess
    import sys

    script = ("import dataclasses, hashlib, json\nfrom grader.assignment import load\nfrom grader.paths import assignment_names\n"
              "as_data = lambda value: {type(value).__name__: dataclasses.asdict(value)}   # a label is a Message\n"
              "print(hashlib.sha256(json.dumps([[r.scenarios for t in load(n).tasks(20261129) for r in t.rules]"
              " for n in assignment_names()], default=as_data).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True).stdout
               for _ in range(3)}
    assert len(digests) == 1, digests
