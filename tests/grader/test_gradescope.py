"""`make gradescope`'s autograder, run as Gradescope runs it: source/, submission/ and results/ in a temporary root.

The zip is built and unpacked into source/, one notebook goes into submission/, and source/run_autograder runs with
GRADESCOPE_ROOT pointing at the folder (GRADESCOPE_PYTHON at this venv: setup.sh's apt and pip are not run here).
Its results.json is checked against grader/gradescope.schema.json (Gradescope's format), against `make autograde`'s
scores of the same notebook TODO by TODO, for the sandbox level in its output, the failing rules' visibility, 03's
leaderboard, and for any line of the hidden suite's sources. Each check is shown failing on a results.json broken for it.
The solved notebook is the student edition with the reference answers typed in (sample_submissions.filled), as the kit's other
tests grade one: solutions/'s edition has no graded cells, and the kit refuses it as some other notebook.
"""
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from grader import autograde, gradescope, sample_submissions, term
from grader.assignment import get
from grader.paths import assignment_dir

NAME = "03_batch_scheduling"   # the one with a leaderboard (TODO 5)


def hidden_lines(name: str) -> list[str]:
    """Distinctive lines of the hidden suite's sources (suite.py, cases.py) that the student edition does not show."""
    shown = {line.strip() for line in (ROOT / "notebooks" / f"{name}.ipynb").read_text().replace("\\n", "\n").splitlines()}
    found = set()
    for source in ("suite.py", "cases.py"):
        for line in (assignment_dir(name) / source).read_text().splitlines():
            line = line.strip()
            if len(line) >= 20 and not line.startswith("#") and line not in shown:
                found.add(line)
    return sorted(found)


# --- the checks: each returns what is wrong ([] when nothing) ---------------------------------------

def schema_problems(data: dict) -> list[str]:
    return gradescope.validate(data)


def score_problems(data: dict, expected: dict[str, float], max_total: float) -> list[str]:
    """The tests' scores per TODO (tag) must be `make autograde`'s, and their max_scores the TODO points in all."""
    got: dict[str, float] = {}
    for test in data["tests"]:
        got[test["tags"][0]] = round(got.get(test["tags"][0], 0) + test["score"], 2)
        if not 0 <= test["score"] <= test["max_score"]:
            return [f"{test['name']}: score {test['score']} outside 0..{test['max_score']}"]
    problems = [f"{todo}: {got.get(todo)} != {score}" for todo, score in expected.items() if got.get(todo) != score]
    if round(sum(t["max_score"] for t in data["tests"]), 2) != max_total:
        problems.append(f"max_scores sum to {sum(t['max_score'] for t in data['tests'])}, not {max_total}")
    if round(data["score"], 2) != round(sum(expected.values()), 2):
        problems.append(f"score {data['score']} != {sum(expected.values())}")
    return problems


def leak_problems(data: dict, hidden: list[str]) -> list[str]:
    text = json.dumps(data, ensure_ascii=False)
    text = text + "\n" + "\n".join(t.get("output", "") for t in data.get("tests", [])) + "\n" + data.get("output", "")
    return [line for line in hidden if line in text]


def sandbox_problems(data: dict, level: str) -> list[str]:
    return [] if f"sandbox: {level} (" in data.get("output", "") else [f"no 'sandbox: {level}' in the output"]


def visibility_problems(data: dict, failing: str) -> list[str]:
    return [t["name"] for t in data["tests"] if t.get("visibility", "visible") != ("visible" if t["status"] == "passed" else failing)]


# --- the runs ----------------------------------------------------------------------------------------

def gradescope_run(tmp: Path, notebook: Path, **settings) -> tuple[dict | None, subprocess.CompletedProcess]:
    """Lay out a Gradescope root in `tmp`, run source/run_autograder on `notebook`, read results/results.json."""
    root = tmp / "autograder"
    (root / "submission").mkdir(parents=True)
    zip_path = gradescope.build(tmp / "autograder.zip", assignment=NAME, **settings)
    gradescope.unpack(zip_path, root / "source")
    (root / "submission" / notebook.name).write_bytes(notebook.read_bytes())
    env = os.environ | {"GRADESCOPE_ROOT": str(root), "GRADESCOPE_PYTHON": sys.executable, "PYTHONPATH": str(root / "source")}
    proc = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    results = root / "results" / "results.json"
    return (json.loads(results.read_text()) if results.exists() else None), proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{edition: (results.json, `make autograde`'s scores per TODO)} for the solved and the blank notebook."""
    subs = tmp_path_factory.mktemp("submissions")
    sample_submissions.write({"solved": sample_submissions.filled(NAME, dict(get(NAME).reference))}, subs)
    notebooks = {"solved": subs / "solved.ipynb", "blank": ROOT / "notebooks" / f"{NAME}.ipynb"}
    batch = tmp_path_factory.mktemp("batch")
    for edition, path in notebooks.items():
        (batch / f"{edition}.ipynb").write_bytes(path.read_bytes())
    out = tmp_path_factory.mktemp("out")
    autograde.run(NAME, batch, out)   # `make autograde` on the same two notebooks
    report = json.loads((out / "report.json").read_text())
    expected = {s["student_id"]: {v["answer_id"]: v["score"] for v in s["verdicts"]} for s in report["students"]}
    found = {}
    for edition, path in notebooks.items():
        failing = "after_due_date" if edition == "blank" else "visible"
        data, proc = gradescope_run(tmp_path_factory.mktemp(edition), path, failing_visibility=failing)
        assert data is not None and proc.returncode == 0, proc.stdout + proc.stderr
        found[edition] = (data, expected[edition], failing)
    return found, report


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["solved", "blank"])
def test_results_json(runs, edition):
    found, report = runs
    data, expected, failing = found[edition]
    assert schema_problems(data) == []
    assert score_problems(data, expected, report["max_total"]) == []
    assert leak_problems(data, hidden_lines(NAME)) == []
    assert sandbox_problems(data, report["sandbox"]) == []
    assert visibility_problems(data, failing) == []
    # one test per hidden rule of each TODO, with the kit's explanation of a failing one
    assert report["term"] == term.PUBLIC   # the tests' LAB_TERM_SECRET, which the zip's term.secret carries
    rules = sum(len(task.rules) for task in get(NAME).tasks(term.PUBLIC_SEED))
    assert len(data["tests"]) == rules
    if edition == "solved":
        assert data["score"] == report["max_total"] and all(t["status"] == "passed" for t in data["tests"])
        assert data["leaderboard"][0] == {"name": "TODO 5 SLO misses on held-out traces", "value": 0, "order": "asc"}
    else:
        assert data["score"] == 0 and all(t["status"] == "failed" for t in data["tests"])
        assert all(t["output"].count("\n") >= 1 and "[FAIL]" in t["output"] for t in data["tests"])   # and why
        assert any("NotImplementedError" in t["output"] for t in data["tests"])
        assert "leaderboard" not in data   # its failing rules are hidden until the due date (after_due_date)


@pytest.mark.slow
def test_each_check_fails_on_a_broken_results_json(runs):
    found, report = runs
    data, expected, failing = found["blank"]
    solved, solved_expected, _ = found["solved"]
    hidden = hidden_lines(NAME)
    assert hidden, "no hidden suite lines to look for"

    def broken(change):
        copied = copy.deepcopy(data)
        change(copied)
        return copied

    assert schema_problems(broken(lambda d: d.pop("score") or [t.pop("score") for t in d["tests"]]))
    assert schema_problems(broken(lambda d: d["tests"][0].update(visibility="later")))
    board = copy.deepcopy(solved)   # the blank run's after_due_date has no leaderboard
    board["leaderboard"][0].pop("value")
    assert schema_problems(board)
    board = copy.deepcopy(solved)
    board["leaderboard"][0].update(order="up")
    assert schema_problems(board)
    assert schema_problems(broken(lambda d: d.update(score="12")))
    assert schema_problems(broken(lambda d: d["tests"][0].update(points=1)))   # not a field of Gradescope's
    wrong = copy.deepcopy(solved)
    wrong["tests"][0]["score"] = 0
    assert score_problems(wrong, solved_expected, report["max_total"])
    assert score_problems(broken(lambda d: d["tests"].pop()), expected, report["max_total"])
    assert leak_problems(broken(lambda d: d["tests"][0].update(output=d["tests"][0]["output"] + "\n" + hidden[0])), hidden)
    assert sandbox_problems(broken(lambda d: d.update(output=re.sub(r"sandbox: \S+", "", d["output"]))), report["sandbox"])
    assert visibility_problems(broken(lambda d: d["tests"][0].update(visibility="visible")), failing)
    assert visibility_problems(broken(lambda d: [t.pop("visibility") for t in d["tests"]]), failing)


def test_rule_scores_sum_to_the_todo_score():
    """grade.score_of rounds a TODO's score to the hundredth: the rules' scores add up to it exactly."""
    from grader.grade import score_of
    for points in (1, 2, 3, 10 / 3, 2.5):
        for n in range(1, 9):
            assert round(sum(gradescope._shares(points, n)), 2) == round(points, 2)
            for held in range(n + 1):
                passed = [True] * held + [False] * (n - held)
                assert round(sum(gradescope._scores(points, passed)), 2) == score_of(points, held, n)


def test_settings_secure_by_default_and_checked():
    settings = gradescope.settings_of(assignment=NAME)
    assert settings["sandbox"] == "auto" and settings["failing_visibility"] == "visible" and settings["max_per_day"] == 0
    for bad in ({"sandbox": "none"}, {"failing_visibility": "hidden"}, {"max_per_day": -1}, {"assignment": "04_nope"}):
        with pytest.raises(SystemExit):
            gradescope.settings_of(**bad)
    assert all(help for _, help in gradescope.SETTINGS.values())


@pytest.mark.slow
def test_zip_has_the_scripts_at_its_root_and_no_tests_or_solutions(tmp_path):
    import zipfile
    names = zipfile.ZipFile(gradescope.build(tmp_path / "a.zip", assignment=NAME)).namelist()
    assert {"setup.sh", "run_autograder", "gradescope.json", "requirements.lock", "grader/gradescope.py"} <= set(names)
    assert not [n for n in names if n.startswith(("tests/", "solutions/", "docs/", "deploy/")) or "/corpus/" in n]
    setup = zipfile.ZipFile(tmp_path / "a.zip").read("setup.sh").decode()
    assert "bubblewrap" in setup and "-r /autograder/source/requirements.txt -c /autograder/source/requirements.lock" in setup


def test_rate_limit_keeps_the_previous_result(tmp_path):
    earlier = {"score": 7.0, "output": "graded", "tests": []}
    meta = {"created_at": "2026-12-05T12:00:00+00:00",
            "previous_submissions": [{"submission_time": f"2026-12-05T{h:02d}:00:00+00:00", "score": 7.0, "results": earlier}
                                     for h in (1, 9, 11)]}
    (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
    assert gradescope.rate_limited(tmp_path, 0) is None            # no limit
    assert gradescope.rate_limited(tmp_path, 4) is None            # 3 in 24 hours, 4 allowed
    kept = gradescope.rate_limited(tmp_path, 3)
    assert kept["score"] == 7.0 and "submit again after 2026-12-06T01:00" in kept["output"]
    assert gradescope.validate(kept) == []


def test_submitted_notebook_is_the_named_or_the_only_one(tmp_path):
    assert gradescope.submitted(tmp_path, NAME)[0] is None
    (tmp_path / "a.ipynb").write_text("{}")
    assert gradescope.submitted(tmp_path, NAME)[0].name == "a.ipynb"
    (tmp_path / "b.ipynb").write_text("{}")
    path, why = gradescope.submitted(tmp_path, NAME)
    assert path is None and "2 notebooks" in why
    (tmp_path / f"{NAME}.ipynb").write_text("{}")
    assert gradescope.submitted(tmp_path, NAME)[0].name == f"{NAME}.ipynb"


def test_docs_hold_the_settings_table():
    assert gradescope.settings_table() in (ROOT / "docs" / "instructors.md").read_text()


def gradescope_root(tmp: Path, **settings) -> Path:
    """A Gradescope root whose source/ holds only the settings and the term's secret (public: this process's kit
    grades), a blank 01 submitted."""
    name = "01_continuous_batching"
    (tmp / "source").mkdir()
    (tmp / "source" / gradescope.SETTINGS_FILE).write_text(json.dumps(gradescope.settings_of(assignment=name, **settings)))
    (tmp / "source" / gradescope.SECRET_FILE).write_text(term.PUBLIC + "\n")
    (tmp / "submission").mkdir()
    (tmp / "submission" / f"{name}.ipynb").write_bytes((ROOT / "notebooks" / f"{name}.ipynb").read_bytes())
    return tmp


@pytest.mark.slow
def test_no_sandbox_no_grade(no_sandbox, tmp_path, capsys):
    """Secure by default: where no sandbox works, no results.json (Gradescope shows a failed run, no student a grade)."""
    assert gradescope.run(gradescope_root(tmp_path)) == 2
    assert not (tmp_path / "results" / "results.json").exists()
    assert "no grading sandbox works here" in capsys.readouterr().out


@pytest.mark.slow
def test_the_process_level_only_when_asked_for_and_said(no_sandbox, tmp_path):
    assert gradescope.run(gradescope_root(tmp_path, sandbox="process")) == 0
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert "sandbox: process (NO ISOLATION" in data["output"] and gradescope.validate(data) == []


def test_after_due_date_hides_the_leaderboard_too():
    """The leaderboard shows every student TODO 5's held-out misses and points at once: with failing rules hidden
    until the due date, it would tell what their hidden tests hide, so it is left out then."""
    from grader.grade import RuleResult, TaskVerdict, verdicts_to_json
    rules = [RuleResult("meets the SLO on the three traces", True),
             RuleResult("meets the SLO on the held-out traces", False, "held-out A: class-0 p99 TTFT 900 ms > 500 ms")]
    verdict = TaskVerdict("TODO 5", "todo5", "todo5_tests", 2, 1.0, rules)
    report = {"assignment": NAME, "sandbox": "bwrap", "students": [
        {"student_id": "s", "status": "graded", "language": "en", "reason": "", "warnings": [],
         "verdicts": verdicts_to_json([verdict])}]}
    shown = gradescope.results(report, gradescope.settings_of(assignment=NAME))
    assert shown["leaderboard"][0]["value"] == 1 and gradescope.validate(shown) == []
    hidden = gradescope.results(report, gradescope.settings_of(assignment=NAME, failing_visibility="after_due_date"))
    assert "leaderboard" not in hidden and gradescope.validate(hidden) == []


def test_rate_limit_counts_graded_submissions_only(tmp_path):
    """A submission the limit turned away was not graded: it neither counts towards the limit nor is the result kept
    (its output would be prefixed again and again)."""
    graded = {"score": 7.0, "output": "graded", "tests": []}
    path = tmp_path / "submission_metadata.json"
    subs = [{"submission_time": f"2026-12-05T{h}:00+00:00", "score": 7.0, "results": graded} for h in ("01:00", "09:00", "11:00")]
    path.write_text(json.dumps({"created_at": "2026-12-05T11:30:00+00:00", "previous_submissions": subs}))
    turned_away = gradescope.rate_limited(tmp_path, 3)
    subs += [{"submission_time": f"2026-12-05T{h}:00+00:00", "score": 7.0, "results": turned_away} for h in ("11:30", "12:00")]
    path.write_text(json.dumps({"created_at": "2026-12-05T12:30:00+00:00", "previous_submissions": subs}))
    kept = gradescope.rate_limited(tmp_path, 3)
    assert kept["output"].count("Not graded") == 1 and "submit again after 2026-12-06T01:00" in kept["output"]
    path.write_text(json.dumps({"created_at": "2026-12-06T01:30:00+00:00", "previous_submissions": subs}))
    assert gradescope.rate_limited(tmp_path, 3) is None   # two graded in the last 24 hours (09:00, 11:00)


def test_a_file_name_cannot_pass_a_graded_result_off_as_turned_away(tmp_path):
    """The output quotes the submitted file's name: a name holding the turned-away text (or a newline and a forged line)
    made every graded result look turned away, so none counted and the limit never held. A turned-away result is
    marked in extra_data, which only the kit writes, and the name is shown on one printable line."""
    from grader.grade import RuleResult, TaskVerdict, verdicts_to_json
    verdict = TaskVerdict("TODO 1", "todo1", "todo1_tests", 2, 2.0, [RuleResult("does it", True)])
    report = {"assignment": NAME, "sandbox": "bwrap", "students": [
        {"student_id": "s", "status": "graded", "language": "en", "reason": "", "warnings": [],
         "verdicts": verdicts_to_json([verdict])}]}
    settings = gradescope.settings_of(assignment=NAME)
    for name in (f"x {gradescope.LIMITED}.ipynb", f"x.ipynb\nNot graded: 1 {gradescope.LIMITED}\n.ipynb"):
        graded = gradescope.results(report, settings, name)
        assert gradescope.validate(graded) == [] and len(graded["output"].splitlines()) == 2   # its two lines, no more
        meta = {"created_at": "2026-12-05T12:00:00+00:00",
                "previous_submissions": [{"submission_time": "2026-12-05T11:00:00+00:00", "score": 2.0, "results": graded}]}
        (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
        kept = gradescope.rate_limited(tmp_path, 1)
        assert kept is not None and kept["score"] == 2.0 and kept["extra_data"][gradescope.TURNED_AWAY] is True
        assert gradescope.validate(kept) == []


def test_after_due_date_shows_nothing_of_the_hidden_failures():
    """With FAILING=after_due_date, a passing rule's test is visible at once: it must not carry the TODO's note or the
    common mistake its failing rules behave like (both were on the TODO's first rule, passing or not), and the
    visible tests' numbers must leave no gap where a hidden one is (1.1 and 1.3 shown tell that rule 2 failed)."""
    from grader.grade import RuleResult, TaskVerdict, verdicts_to_json
    mistake = {"en": {"mistake": "MISTAKE-TEXT", "hint": "HINT-TEXT"}}
    rules = [RuleResult("first rule", True), RuleResult("second rule", False, "DETAIL"), RuleResult("third rule", True)]
    verdict = TaskVerdict("TODO 1", "todo1", "todo1_tests", 3, 2.0, rules, note="your TODO 1 cell raised NOTE-TEXT",
                          mistake=mistake)
    report = {"assignment": NAME, "sandbox": "bwrap", "students": [
        {"student_id": "s", "status": "graded", "language": "en", "reason": "", "warnings": [],
         "verdicts": verdicts_to_json([verdict, verdict])}]}
    for failing in gradescope.VISIBILITIES:
        data = gradescope.results(report, gradescope.settings_of(assignment=NAME, failing_visibility=failing))
        assert gradescope.validate(data) == [] and visibility_problems(data, failing) == []
        carrying = [t for t in data["tests"] if "NOTE-TEXT" in t["output"] or "MISTAKE-TEXT" in t["output"]]
        assert [t["name"] for t in carrying] == ["TODO 1: second rule"] * 2   # once per TODO, on its failing rule
        shown = [t["number"] for t in data["tests"] if t["visibility"] == "visible"]
        if failing == "after_due_date":
            assert shown == ["1.1", "1.2", "2.1", "2.2"]
        else:
            assert [t["number"] for t in data["tests"]] == ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3"]


TEST_SECRET = "gradescope-test-secret-0123456789"


def test_no_zip_without_a_term_secret(tmp_path, monkeypatch):
    """The zip grades with the term's secret: with none (and public not asked for), nothing is written."""
    monkeypatch.delenv(term.SECRET_ENV)
    monkeypatch.setattr(term, "SECRET_FILE", tmp_path / "course.secret")
    with pytest.raises(term.TermSecretError):
        gradescope.build(tmp_path / "a.zip", assignment=NAME)
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.slow
def test_the_zip_carries_the_term_secret_and_run_grades_with_it(tmp_path, monkeypatch):
    """The instructor's secret (here from its file) is in the zip as term.secret, readable by its owner only, and
    run() hands that file to autograde; the kit's files in the zip hold no secret."""
    import zipfile
    secret = tmp_path / "course.secret"
    secret.write_text(TEST_SECRET + "\n")
    zf = zipfile.ZipFile(gradescope.build(tmp_path / "a.zip", term_secret=str(secret), assignment=NAME))
    assert zf.read(gradescope.SECRET_FILE).decode().strip() == TEST_SECRET
    assert (zf.getinfo(gradescope.SECRET_FILE).external_attr >> 16) & 0o077 == 0
    assert not [n for n in zf.namelist() if n != gradescope.SECRET_FILE and TEST_SECRET.encode() in zf.read(n)]
    root = tmp_path / "autograder"
    gradescope.unpack(tmp_path / "a.zip", root / "source")
    (root / "submission").mkdir()
    (root / "submission" / f"{NAME}.ipynb").write_bytes((ROOT / "notebooks" / f"{NAME}.ipynb").read_bytes())
    used = {}

    def run(assignment, subs, out, **changes):
        used.update(changes)
        raise SystemExit("stop here: the settings are what this test reads")
    monkeypatch.setattr(autograde, "run", run)
    assert gradescope.run(root) == 2
    assert term.secret(used["term_secret"]) == TEST_SECRET.encode()
