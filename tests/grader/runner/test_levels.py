"""Which sandbox level grades: the strongest that works, never none unless asked for, and said everywhere it matters."""
import json
import os

import pytest

from conftest import needs_level
from grader import autograde, caches, editions, sample_submissions
from grader.runner import LEVELS, NoSandbox, cold

NAME = "01_continuous_batching"


def one_submission(tmp_path):
    sample_submissions.write({"alice": sample_submissions.filled(NAME, editions.reference_answers(NAME))}, tmp_path / "subs")
    return tmp_path / "subs"


@pytest.mark.slow
def test_without_a_sandbox_grading_stops_and_says_how_to_get_one(no_sandbox, tmp_path):
    with pytest.raises(SystemExit) as stopped:
        autograde.run(NAME, one_submission(tmp_path), tmp_path / "out", jobs=1)
    said = str(stopped.value)
    assert said.startswith("error: no grading sandbox works here") and "bubblewrap (bwrap) is not installed" in said
    for way in ("apt-get install bubblewrap", "root", "container", "SANDBOX=process", "c.SandboxedAutograde.sandbox"):
        assert way in said, way
    assert not (tmp_path / "out" / "grades.csv").exists(), "nothing was graded"


@pytest.mark.slow
def test_the_process_level_grades_only_when_asked_for_and_says_so_everywhere(no_sandbox, tmp_path, capsys):
    out = tmp_path / "out"
    autograde.run(NAME, one_submission(tmp_path), out, jobs=1, sandbox="process")
    first = [line for line in capsys.readouterr().out.splitlines() if "sandbox" in line][0]
    assert first.strip() == f"sandbox: process ({LEVELS['process']})"
    report = json.loads((out / "report.json").read_text())
    assert report["sandbox"] == "process" and report["sandbox_means"].startswith("NO ISOLATION")
    assert "sandbox: process (NO ISOLATION" in (out / "report.md").read_text()
    assert "sandbox: process (NO ISOLATION" in (out / "class-report.md").read_text()
    assert report["students"][0]["verdicts"] and sum(v["score"] for v in report["students"][0]["verdicts"]) == report["max_total"]


def test_a_level_nobody_knows_is_refused_never_weakened(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "none")
    caches.forget()
    try:
        with pytest.raises(NoSandbox, match="GRADER_SANDBOX='none' is not one of auto, userns, process"):
            cold.sandbox_level()
    finally:
        caches.forget()


@pytest.mark.slow
@needs_level("userns")
def test_asking_for_userns_gets_it_even_as_root(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "userns")
    caches.forget()
    try:
        assert cold.likely_level() == "userns" and cold.sandbox_level() == "userns"
    finally:
        caches.forget()


@pytest.mark.parametrize("missing, level, reason", [
    ("bwrap", "userns", "bubblewrap (bwrap) is not installed"),
    ("setpriv", "bwrap", "setpriv is missing"),
    ("prlimit", "userns", "prlimit is missing"),
])
def test_why_not_names_the_missing_tool_for_the_level_that_needs_it(monkeypatch, missing, level, reason):
    """One place says why a level cannot run (the suite's skips and the refusal read it): each tool is named for the
    level that needs it, and the other level is not blamed for it."""
    monkeypatch.setattr(cold, "tool", lambda name: None if name == missing else f"/usr/bin/{name}")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(cold.seccomp, "supported", lambda: True)
    assert reason in cold.why_not(level)
    other = {"bwrap": "userns", "userns": "bwrap"}[level]
    assert cold.why_not(other) == ("" if missing != "bwrap" else cold.why_not(level))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cold.why_not("bwrap").startswith("not root") or missing == "bwrap"
