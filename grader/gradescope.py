"""`make gradescope`: a Gradescope autograder zip that grades one assignment with the kit's sandboxed grader.

    python -m grader.gradescope build --assignment 03_batch_scheduling [--failing-visibility after_due_date]
                                      [--sandbox auto|userns|process] [--max-per-day N] [--term-secret PATH|public]
                                      [--out FILE.zip]
    python -m grader.gradescope run      # what the zip's run_autograder calls, on Gradescope

The zip holds setup.sh (apt's bubblewrap, a venv from requirements.txt and requirements.lock, the kit installed
from its source), run_autograder, the kit's source (grader/, lab/, policybench/, notebooks/) and gradescope.json,
the settings (SETTINGS: each with its help text), and term.secret, the term's secret (grader/term.py: found as
`make autograde` finds it, and the build stops without one), which the hidden cases and held-out traces are drawn
from: the zip is the instructor's upload, written under build/, never into git or anything students get.
On Gradescope, run_autograder grades the notebook in /autograder/submission with grader.autograde (the same run
as `make autograde`, its sandbox included, with term.secret) and turns its report.json into
/autograder/results/results.json: one test per hidden rule, with the rule's share of its TODO's points and the
feedback the student's page gives for it (never the hidden tests' code). The format is grader/gradescope.schema.json's,
written from Gradescope's specification (its "source" names the pages).
GRADESCOPE_ROOT moves /autograder elsewhere (the tests lay one out in a temporary folder).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from . import term
from .paths import BUILD_DIR, ROOT
from .safe_text import inert

SCHEMA = Path(__file__).with_name("gradescope.schema.json")
SETTINGS_FILE = "gradescope.json"
SECRET_FILE = "term.secret"   # in the zip: the term's secret, or the word public
VISIBILITIES = ("visible", "after_due_date")
# Each setting of gradescope.json: its default and what it means (docs/instructors.md, Gradescope, shows this table).
SETTINGS = {
    "assignment": ("02_decode_scheduling", "the kit's assignment this autograder grades (one Gradescope assignment each)"),
    "failing_visibility": ("visible", "when students see a failing rule's test (its points and explanation): `visible` at "
                                      "once, or `after_due_date`, hidden until the due date (the late due date if set); "
                                      "passing rules are always visible"),
    "sandbox": ("auto", "auto: the kit's strongest sandbox that works in the image, and no grade where none does; "
                        "userns: the rootless level; process: NO isolation, only when asked for (the output says so)"),
    "max_per_day": (0, "graded submissions per student in 24 hours (0: no limit); past it, the previous result is "
                       "kept and the output says when the next submission will be graded"),
}
# The kit's files the autograder needs: those under these git does not ignore (tests, docs, solutions, deploy stay out).
SHIPPED = ("grader/", "lab/", "policybench/", "notebooks/", "course.toml", "pyproject.toml", "README.md",
           "requirements.txt", "requirements.lock")
PYTHONS = ("3.13", "3.12", "3.11")   # the instructor lock's (grader/pins.py): setup.sh takes the first the image has

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (/autograder/source holds the zip).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# The grading sandbox: bubblewrap, and util-linux's setpriv and prlimit (grader/runner/sandbox.py).
apt-get install -y -q bubblewrap util-linux python3-venv
PY=""
for v in {pythons}; do
  if command -v "python$v" >/dev/null 2>&1; then PY="python$v"; break; fi
done
if [ -z "$PY" ]; then   # Ubuntu 22.04's python3 is 3.10, below the lock's: its universe has 3.11
  apt-get install -y -q python3.11 python3.11-venv
  PY=python3.11
fi
"$PY" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --upgrade pip
/autograder/venv/bin/python -m pip install --quiet -r /autograder/source/requirements.txt -c /autograder/source/requirements.lock
/autograder/venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e /autograder/source
/autograder/venv/bin/python -c "import grader.gradescope, lab; print('kit installed:', lab.__version__)"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for each submission: the kit grades /autograder/submission/*.ipynb in its sandbox and
# writes /autograder/results/results.json. GRADESCOPE_ROOT and GRADESCOPE_PYTHON move it (tests do).
set -uo pipefail
ROOT="${GRADESCOPE_ROOT:-/autograder}"
PY="${GRADESCOPE_PYTHON:-/autograder/venv/bin/python}"
cd "$ROOT/source" && exec "$PY" -m grader.gradescope run --root "$ROOT"
"""


# --- the zip -------------------------------------------------------------------------------------

def settings_of(**given) -> dict:
    """gradescope.json's content: the defaults of SETTINGS with `given` (None keeps a default), checked."""
    chosen = {name: default for name, (default, _) in SETTINGS.items()} | {k: v for k, v in given.items() if v is not None}
    if set(chosen) != set(SETTINGS):
        raise SystemExit(f"error: unknown setting(s) {sorted(set(chosen) - set(SETTINGS))}")
    if chosen["failing_visibility"] not in VISIBILITIES:
        raise SystemExit(f"error: failing_visibility must be one of {', '.join(VISIBILITIES)}")
    if chosen["sandbox"] not in ("auto", "userns", "process"):   # an unknown value is an error, never a weaker sandbox
        raise SystemExit("error: sandbox must be one of auto, userns, process")
    if not isinstance(chosen["max_per_day"], int) or chosen["max_per_day"] < 0:
        raise SystemExit("error: max_per_day must be a whole number, 0 for no limit")
    from .paths import assignment_dir
    assignment_dir(chosen["assignment"])   # an unknown name stops here, with the known ones
    return chosen


def shipped_files() -> list[Path]:
    """The kit's tracked files the autograder needs (SHIPPED), relative to the repository."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *SHIPPED], cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(Path(name) for name in listed.decode().split("\0")
                  if name and (ROOT / name).is_file() and "corpus" not in Path(name).parts[:4])  # students' answers: not needed to grade


def members(settings: dict, secret: bytes | None) -> list[tuple[str, bytes, int]]:
    """(path in the zip, content, mode) for everything the autograder zip holds; `secret` None: public mode."""
    files = [(str(p), (ROOT / p).read_bytes(), 0o644) for p in shipped_files()]
    return files + [("setup.sh", SETUP_SH.replace("{pythons}", " ".join(PYTHONS)).encode(), 0o755),
                    ("run_autograder", RUN_AUTOGRADER.encode(), 0o755),
                    (SETTINGS_FILE, (json.dumps(settings, indent=1) + "\n").encode(), 0o644),
                    (SECRET_FILE, (secret or term.PUBLIC.encode()) + b"\n", 0o600)]


def build(out: Path, term_secret: str = "", **given) -> Path:
    """Write the autograder zip (setup.sh and run_autograder at its root, as Gradescope requires), with the term's
    secret as `term_secret` finds it (grader/config.py): without one, no zip (TermSecretError)."""
    settings = settings_of(**given)
    secret = term.secret(term_secret)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in members(settings, secret):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return out


def unpack(zip_path: Path, source: Path) -> None:
    """Extract the zip as Gradescope does into /autograder/source, modes kept (zipfile drops them)."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = source / info.filename
            zf.extract(info, source)
            if info.external_attr >> 16:
                os.chmod(target, (info.external_attr >> 16) & 0o777)


# --- results.json from the kit's report ------------------------------------------------------------

def _shares(points: float, n: int) -> list[float]:
    """Each rule's share of a TODO's points, to the hundredth, summing to the points exactly (as grade.score_of rounds)."""
    cumulative = [round(points * k / n, 2) for k in range(n + 1)]
    return [round(cumulative[k + 1] - cumulative[k], 2) for k in range(n)]


def _scores(points: float, passed: list[bool]) -> list[float]:
    """Each rule's score: its share of grade.score_of(points, passed, n), which the rules' scores sum to."""
    n, cumulative, held = len(passed), [0.0], 0
    for ok in passed:
        held += ok
        cumulative.append(round(points * held / n, 2))
    return [round(cumulative[k + 1] - cumulative[k], 2) for k in range(n)]


def _verdict(data: dict):
    from .grade import RuleResult, TaskVerdict
    rules = [RuleResult(**rule) for rule in data["rules"]]
    return TaskVerdict(**{**data, "rules": rules})


def rule_output(verdict, index: int, language: str) -> str:
    """What the student's feedback page says of one rule (grader/i18n.py's summary, that rule's lines): the TODO's note
    and common mistake on its first failing rule (the first rule if none fails), then the rule's verdict, the text's
    sentences that state it, the first failing case and its code. The note and the mistake are about failing rules:
    on a failing rule's test they have its visibility, and a passing rule's test (always visible) never shows what
    FAILING=after_due_date hides. The hidden tests' code is never in it: only the case the page shows."""
    from . import i18n
    from .diagnose import advice
    text, rule = i18n.SUMMARY[language], verdict.rules[index]
    lines = []
    lead = next((i for i, r in enumerate(verdict.rules) if not r.passed), 0)
    if index == lead:
        if verdict.note:
            lines.append(text["note"].strip() + " " + i18n.note(verdict.note, language))
        if advice(verdict.mistake, language):
            lines.append(advice(verdict.mistake, language))
    lines.append(f"[{text['pass'] if rule.passed else text['fail']}] {i18n.rule_name(rule.name, language)}")
    if not rule.passed:
        lines += [text["says"].strip() + " " + i18n.quote_marks(q, language) for q in rule.quotes.get(language, [])]
        lines.append(i18n.rule_detail(rule, language))
    if rule.snippet:
        lines += [text["paste"].strip(), "", *i18n.code_comments(rule.snippet, language).splitlines()]
    return "\n".join(lines)


def tests_of(student: dict, failing_visibility: str) -> list[dict]:
    """One Gradescope test per hidden rule of each TODO, in the assignment's order, numbered k.j (TODO k, rule j).
    With failing rules hidden (after_due_date), a TODO's passing rules come first, numbered k.1, k.2, ... without a
    gap, and its failing ones after them: a gap in the visible numbers would tell which rules are hidden."""
    language = student.get("language") or "en"
    language = language if language in ("en", "zh") else "en"
    tests = []
    for k, data in enumerate(student["verdicts"], 1):
        verdict = _verdict(data)
        passed = [r.passed for r in verdict.rules]
        todo = []
        for j, (rule, score, share) in enumerate(zip(verdict.rules, _scores(verdict.points, passed),
                                                     _shares(verdict.points, len(passed)))):
            todo.append({"name": f"{verdict.task_id}: {rule.name}",
                         "score": score, "max_score": share, "status": "passed" if rule.passed else "failed",
                         "output": rule_output(verdict, j, language), "output_format": "text",
                         "tags": [verdict.answer_id],
                         "visibility": "visible" if rule.passed else failing_visibility})
        if failing_visibility != "visible":
            todo.sort(key=lambda test: test["status"] != "passed")   # stable: the rules' order within each group
        tests += [{"number": f"{k}.{j}", **test} for j, test in enumerate(todo, 1)]
    return tests


HELD_OUT = "held-out"
SLO_CRITERIA = 2   # lab.engine.slo: class-0 p99 TTFT, and the longest wait


def held_out_misses(student: dict) -> int:
    """03's TODO 5: how many of the SLO's criteria its held-out rule reports missed (grader/assignments/03_batch_scheduling
    /suite.py, judge_slo): 0 when the key meets the SLO on both held-out traces; at the first trace that misses, each
    criterion missed ('... > limit'); a key that gave no order there (none, an error, too slow) misses both."""
    for data in student["verdicts"]:
        if data["answer_id"] != "todo5":
            continue
        for rule in data["rules"]:
            if HELD_OUT in rule["name"]:
                if rule["passed"]:
                    return 0
                return min(SLO_CRITERIA, len(re.findall(r" ms > \d+ ms", rule["detail"]))) or SLO_CRITERIA
    return SLO_CRITERIA


def leaderboard(assignment: str, student: dict) -> list[dict]:
    """Gradescope's leaderboard entries: for 03_batch_scheduling, TODO 5's SLO misses on the held-out traces (fewer
    ranks higher) and its points; none for the other assignments."""
    if assignment != "03_batch_scheduling":
        return []
    points = sum(v["score"] for v in student["verdicts"] if v["answer_id"] == "todo5")
    return [{"name": "TODO 5 SLO misses on held-out traces", "value": held_out_misses(student), "order": "asc"},
            {"name": "TODO 5 points", "value": points, "order": "desc"}]


def results(report: dict, settings: dict, notebook: str = "", seconds: float = 0.0) -> dict:
    """results.json of the one student in `report` (grader.autograde's report.json)."""
    from .runner import LEVELS
    student = report["students"][0]
    tests = tests_of(student, settings["failing_visibility"])
    level = report["sandbox"]
    # the file name is the student's: inert (one line, printable), so it cannot forge a line of this output
    lines = [f"{report['assignment']}: {inert(notebook, 120, markup=False) if notebook else 'your notebook'} graded "
             f"by the course's hidden rules, "
             f"each TODO's answer on its own.",
             f"sandbox: {level} ({LEVELS.get(level, report.get('sandbox_means', ''))})"]
    if student["status"] != "graded":
        lines.append(f"not graded: {student['reason']}")
    lines += [f"note: {w}" for w in student["warnings"]]
    if settings["failing_visibility"] == "after_due_date" and any(t["status"] == "failed" for t in tests):
        lines.append("Some rules' results are shown after the due date.")
    out = {"score": round(sum(t["score"] for t in tests), 2), "output": "\n".join(lines), "output_format": "text",
           "stdout_visibility": "hidden", "tests": tests,
           "extra_data": {"sandbox": level, "assignment": report["assignment"], "status": student["status"]}}
    if seconds:
        out["execution_time"] = round(seconds)
    # The leaderboard is every student's to see at once: with failing rules hidden until the due date it would say
    # what they hide (TODO 5's held-out misses and points), so there is none then.
    board = leaderboard(report["assignment"], student) if settings["failing_visibility"] == "visible" else []
    if board:
        out["leaderboard"] = board
    return out


def validate(data: dict, schema_path: Path = SCHEMA) -> list[str]:
    """What in `data` breaks grader/gradescope.schema.json (Gradescope's format), one line each; [] if nothing."""
    import jsonschema
    schema = json.loads(schema_path.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(data)]


# --- on Gradescope ---------------------------------------------------------------------------------

def submitted(folder: Path, assignment: str) -> tuple[Path | None, str]:
    """The notebook to grade: <assignment>.ipynb if submitted, else the only .ipynb (in any subfolder); else why none."""
    found = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and not p.name.startswith("."))
    named = [p for p in found if p.name == f"{assignment}.ipynb"]
    if len(named) == 1 or len(found) == 1:
        return (named or found)[0], ""
    if not found:
        return None, f"no .ipynb file was submitted: submit your {assignment}.ipynb"
    return None, (f"{len(found)} notebooks were submitted ({', '.join(inert(p.name, 80, markup=False) for p in found[:5])}): submit one, "
                  f"or name the one to grade {assignment}.ipynb")


LIMITED = "submission(s) in 24 hours is the limit"   # in the output of a submission rate_limited turned away
# extra_data's mark of a result rate_limited turned away (kept by Gradescope in previous_submissions' results): only
# the kit writes extra_data, so a student cannot set it, where the output quotes the submitted file's name
TURNED_AWAY = "turned_away"


def _turned_away(results: dict) -> bool:
    extra = results.get("extra_data")
    return isinstance(extra, dict) and extra.get(TURNED_AWAY) is True


def rate_limited(root: Path, per_day: int) -> dict | None:
    """The previous result to keep when this submission is past `per_day` graded submissions in 24 hours (Gradescope's
    submission_metadata.json lists them), with the output saying when the next will be graded; None to grade it."""
    path = root / "submission_metadata.json"
    if not per_day or not path.is_file():
        return None
    meta = json.loads(path.read_text())
    now = datetime.fromisoformat(meta["created_at"])
    # only graded submissions count, and only their results are kept: one turned away carries a kept copy
    previous = [s for s in meta.get("previous_submissions", [])
                if isinstance(s.get("results"), dict) and s["results"] and not _turned_away(s["results"])]
    recent = sorted(datetime.fromisoformat(s["submission_time"]) for s in previous
                    if timedelta(0) <= now - datetime.fromisoformat(s["submission_time"]) < timedelta(days=1))
    if len(recent) < per_day or not previous:
        return None
    kept = dict(previous[-1]["results"])
    extra = kept.get("extra_data")
    kept["extra_data"] = {**(extra if isinstance(extra, dict) else {}), TURNED_AWAY: True}
    after = recent[len(recent) - per_day] + timedelta(days=1)
    kept["output"] = (f"Not graded: {per_day} {LIMITED} for this assignment. Your previous "
                      f"result is kept below; submit again after {after.isoformat(timespec='minutes')}.\n\n"
                      + str(kept.get("output", "")))
    return kept


def write_results(root: Path, data: dict) -> Path:
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / "results.json"
    target.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return target


def run(root: Path) -> int:
    """Grade /autograder/submission's notebook and write results/results.json. Where no sandbox works (and the process
    level was not asked for), nothing is written and the exit status is 2: Gradescope shows the run as failed, and no
    student gets a grade from an unsandboxed run."""
    from . import autograde
    started = time.perf_counter()
    settings = settings_of(**json.loads((root / "source" / SETTINGS_FILE).read_text()))
    kept = rate_limited(root, settings["max_per_day"])
    if kept is not None:
        write_results(root, kept)
        return 0
    notebook, why = submitted(root / "submission", settings["assignment"])
    if notebook is None:
        write_results(root, {"score": 0.0, "output": why, "tests": [], "stdout_visibility": "hidden"})
        return 0
    from .runner import sandbox_level
    os.environ["GRADER_SANDBOX"] = settings["sandbox"]   # the zip's setting decides, not what the image's environment says
    sandbox_level.cache_clear()
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        subs, out = Path(tmp) / "submissions", Path(tmp) / "out"
        subs.mkdir()
        shutil.copyfile(notebook, subs / "submission.ipynb")
        try:
            autograde.run(settings["assignment"], subs, out, sandbox=settings["sandbox"],
                          term_secret=str(root / "source" / SECRET_FILE))
        except SystemExit as exc:   # no sandbox (grader.runner.cold.refusal says what to do), or no usable settings
            print(f"gradescope: not graded: {exc}", flush=True)
            return 2
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    data = results(report, settings, notebook.name, time.perf_counter() - started)
    problems = validate(data)
    if problems:   # a bug of ours: say it to the instructor (stdout), and give no student a malformed result
        print("gradescope: results.json would not be Gradescope's format:\n  " + "\n  ".join(problems), flush=True)
        return 3
    print(f"gradescope: wrote {write_results(root, data)}: {data['score']:g} points, sandbox {report['sandbox']}", flush=True)
    return 0


def settings_table() -> str:
    """The table of gradescope.json's settings (docs/instructors.md, Gradescope)."""
    rows = ["| setting | `make gradescope` | default | meaning |", "|---|---|---|---|"]
    flags = {"assignment": "`ASSIGNMENT=`", "failing_visibility": "`FAILING=`", "sandbox": "`SANDBOX=`", "max_per_day": "`MAX_PER_DAY=`"}
    for name, (default, meaning) in SETTINGS.items():
        rows.append(f"| `{name}` | {flags[name]} | {default} | {meaning} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="write the autograder zip")
    for name, (default, meaning) in SETTINGS.items():
        make.add_argument("--" + name.replace("_", "-"), dest=name, type=type(default), default=None,
                          help=f"{meaning} (default: {default})")
    make.add_argument("--term-secret", default="", help="where the term's secret is, as make autograde's --term-secret: "
                      "empty for LAB_TERM_SECRET, else course.secret; a file's path; or public (docs/instructors.md, Running a term)")
    make.add_argument("--out", type=Path, help="the zip (default: build/gradescope/<assignment>.zip)")
    go = sub.add_parser("run", help="grade on Gradescope (run_autograder calls this)")
    go.add_argument("--root", type=Path, default=Path(os.environ.get("GRADESCOPE_ROOT") or "/autograder"))
    sub.add_parser("settings", help="print the table of settings")
    args = parser.parse_args(argv)
    if args.command == "settings":
        print(settings_table())
        return 0
    if args.command == "run":
        return run(args.root)
    given = {name: getattr(args, name) for name in SETTINGS}
    settings = settings_of(**given)
    try:
        out = build(args.out or BUILD_DIR / "gradescope" / f"{settings['assignment']}.zip", args.term_secret, **given)
    except term.TermSecretError as exc:
        raise SystemExit(f"error: {exc}") from None
    public = term.secret(args.term_secret) is None
    print(f"wrote {out}: upload it as the autograder of a Gradescope programming assignment "
          f"(settings: {json.dumps(settings)}); it holds the term's secret: keep it out of git and of what students get"
          + (f"\n{term.PUBLIC_WARNING}" if public else ""))
    return 0


if __name__ == "__main__":
    from .autograde import leave
    leave(main())
