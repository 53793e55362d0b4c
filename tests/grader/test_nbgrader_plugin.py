"""Our grading inside a standard nbgrader course: the collect layout, then plain `nbgrader autograde`,
`nbgrader generate_feedback` and `nbgrader export`, configured only by the two documented lines."""
import csv
import json
import os
import re
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

import nbformat

import pytest

import hostile
from conftest import ROOT
from nbgrader_course import assert_inert
from grader import autograde, build, editions, sample_submissions, sanitize
from grader.feedback import visible_text
from grader.editions import hidden_snippets
from grader.assignment import MUTANTS, mutated_answers
from grader.pipeline import grader_for
from grader.submission import answers_of
from grader.assignment import load
from grader.runner import leftovers, sandbox_level

NAME = "02_decode_scheduling"
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


# The same hostile prose on both feedback paths: markup, a remote frame and style, and TeX (MathJax from a CDN).
HOSTILE_MARKDOWN = hostile.XSS_MARKDOWN + "\n\nEuler: $e^{i\\pi} + 1 = 0$ and $$\\sum_i x_i$$"
HOSTILE_CODE = hostile.XSS_CODE.replace('print("x" * 40_000_000)', "")


def hostile_submission():
    perfect = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    return hostile._with_cells(perfect, [nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN), nbformat.v4.new_code_cell(HOSTILE_CODE)])


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], cwd=course, capture_output=True,
                          text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = build.make_course(tmp_path_factory.mktemp("course"), [NAME], with_db=True)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(PLUGIN_LINES)
    mutant = next(m for m in MUTANTS[NAME] if m.passes_visible and m.answer_id == "todo3")
    subs = {"alice": sample_submissions.filled(NAME, editions.reference_answers(NAME)), "bob": sample_submissions.release(NAME),
            "carol": sample_submissions.filled(NAME, mutated_answers(NAME, mutant)),
            "ivan": sample_submissions.bad_submissions(NAME)["ivan_subverts_kernel"],
            "kim": hostile.submissions(NAME)["kim_relays"],  # blank stubs that relay the reference through the kernel
            # First in nbgrader's order: stock CheckCellMetadata on his scratch cells once stopped the whole class.
            "aaron": sample_submissions.layout_submissions(NAME)["pim_scratch_nbgrader_metadata"],
            "xavier": hostile_submission()}
    for sid, nb in subs.items():  # what `nbgrader collect` leaves: submitted/<student>/<assignment>/<notebook>.ipynb
        sample_submissions.write({NAME: nb}, course / "submitted" / sid / NAME)
    log = nbgrader(course, "autograde", NAME)
    kernel = leftovers()  # what sandbox uids hold once `nbgrader autograde` is done
    feedback = nbgrader(course, "generate_feedback", NAME)
    nbgrader(course, "export")
    return course, subs, log.stdout + log.stderr + feedback.stdout + feedback.stderr, kernel


def our_verdicts(nb):
    grader = grader_for(load(NAME))
    return grader.grade(answers_of(nb, grader.answer_ids))


@pytest.mark.slow
def test_exported_scores_are_our_verdicts(course):
    folder, subs, _, _ = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert set(rows) == set(subs)
    for sid, nb in subs.items():
        total = sum(v.score for v in our_verdicts(nb))
        assert float(rows[sid]["raw_score"]) == pytest.approx(total, abs=0.01), sid
        assert float(rows[sid]["max_score"]) == 12
    assert float(rows["alice"]["raw_score"]) == 12 and float(rows["bob"]["raw_score"]) == 0
    assert 9 < float(rows["carol"]["raw_score"]) < 12  # the bug passes every visible check; only the sandbox sees it


@pytest.mark.slow
def test_a_relay_between_todo_children_gains_nothing_and_leaves_the_host_clean(course):
    """kim's children publish whatever they hold as kernel keys and byte-range locks and read their own."""
    folder, _, _, kernel = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert float(rows["kim"]["raw_score"]) == 0
    if sandbox_level() == "bwrap":
        assert kernel == {"processes": {}, "keys": {}, "ipc": {}}


@pytest.mark.slow
def test_a_scratch_cells_nbgrader_metadata_stops_no_one(course):
    """aaron's scratch cells carry nbgrader metadata of their own (no schema_version, a copied test cell, not even
    a dict): repaired before stock nbgrader checks it, so he and everyone after him are graded."""
    folder, _, log, _ = course
    rows = {row["student_id"]: row for row in csv.DictReader(open(folder / "grades.csv"))}
    assert float(rows["aaron"]["raw_score"]) == 12 and float(rows["alice"]["raw_score"]) == 12
    assert "aaron: 4 cell(s) had nbgrader metadata the release does not have; it was removed" in log
    assert "\x1b" not in log  # his grade_id's escape never reached nbgrader's log


@pytest.mark.slow
def test_the_logs_hold_no_warning_about_settings_or_checksums(course):
    """No unrecognised option (ClearHiddenTests in an HTMLExporter, c.Execute.allow_errors), and no checksum warning:
    a test cell left as released gets back its hidden region before nbgrader compares (jupyter/nbgrader#1961)."""
    _, _, log, _ = course
    assert "not recognized" not in log and "checksum" not in log.lower(), log[-3000:]
    assert "aaron: 4 cell(s)" in log  # the log is the one with warnings in it


@pytest.mark.slow
def test_a_test_cell_left_as_released_gets_its_hidden_region_back_and_a_changed_one_does_not():
    from grader import pipeline

    source = {editions.grade_id(c): c.source for c in editions.nbgrader_source(NAME).cells}
    nb = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    tests = [c for c in nb.cells if (editions.grade_id(c) or "").endswith("_tests")]
    tests[1].source += "\nassert True  # the student's own line"
    changed = tests[1].source
    pipeline.restore_hidden(pipeline.prepare(NAME), nb)
    assert tests[0].source == source[editions.grade_id(tests[0])] and "BEGIN HIDDEN TESTS" in tests[0].source
    assert tests[1].source == changed  # nbgrader still reports it, and overwrites it from the gradebook
    assert all("BEGIN HIDDEN" not in c.source for c in nb.cells if not (editions.grade_id(c) or "").endswith("_tests"))


def test_the_course_config_alone_is_clean_for_stock_nbgrader(tmp_path, monkeypatch, caplog):
    """Without the kit (stock nbgrader), the course's settings are all ones nbgrader's Execute accepts."""
    from nbgrader.apps import NbGrader
    from nbgrader.preprocessors import Execute

    (tmp_path / "nbgrader_config.py").write_text((ROOT / "grader" / "nbgrader_config.py").read_text())
    monkeypatch.chdir(tmp_path)
    app = NbGrader()
    app.load_config_file()
    execute = Execute(config=app.config)
    assert execute.timeout == 30 and execute.allow_errors  # allow_errors: nbgrader's fixed default
    assert "not recognized" not in caplog.text and app.config.CourseDirectory.course_id == "decode-scheduling"


@pytest.mark.slow
def test_a_silenced_kernel_gains_nothing_in_the_gradebook(course):
    """Stock nbgrader scores a test cell by the absence of errors in the student's kernel; ivan's kernel hides them."""
    from nbgrader.api import Gradebook

    folder, subs, _, _ = course
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        ivan = {g.name: g.auto_score for g in gb.find_submission_notebook(NAME, NAME, "ivan").grades}
        alice = {g.name: g.auto_score for g in gb.find_submission_notebook(NAME, NAME, "alice").grades}
    assert ivan["todo2_tests"] == 0 and ivan["todo1_tests"] == 2 and ivan["todo4_tests"] == 4
    assert alice == {"todo1_tests": 2, "todo2_tests": 3, "todo3_tests": 3, "todo4_tests": 4}


@pytest.mark.slow
def test_generate_feedback_is_redacted_and_shows_the_verdicts(course):
    folder, _, _, _ = course
    hidden = hidden_snippets(editions.nbgrader_source(NAME))
    pages = {sid: visible_text((folder / "feedback" / sid / NAME / f"{NAME}.html").read_text()) for sid in ("alice", "carol")}
    for page in pages.values():
        assert not [line for line in hidden if line in page] and "BEGIN HIDDEN" not in page
    assert "TODO 3:" in pages["carol"] and "[FAIL]" in pages["carol"]
    carol = (folder / "feedback" / "carol" / NAME / f"{NAME}.html").read_text()
    assert carol.count("data:image/png") >= 4  # her own plots, from the sandboxed run


@pytest.mark.slow
def test_the_autograded_notebook_keeps_its_tests_and_outputs_only_the_verdict(course):
    """The instructor's copy keeps the full test cells (nbgrader's checksums hold); no output shows a hidden line,
    since the run never held them, and each test cell's result is its sandboxed score."""
    import nbformat

    folder, _, _, _ = course
    hidden = hidden_snippets(editions.nbgrader_source(NAME))
    nb = nbformat.read(folder / "autograded" / "carol" / NAME / f"{NAME}.ipynb", as_version=4)
    tests = {editions.grade_id(c): c for c in nb.cells if (editions.grade_id(c) or "").endswith("_tests")}
    assert all("BEGIN HIDDEN TESTS" in c.source for c in tests.values())
    outputs = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=c.get("outputs", []))
                                                              for c in nb.cells if c.cell_type == "code"]))
    assert not [line for line in hidden if line in outputs]
    results = {gid: c.outputs[-1]["data"]["text/plain"] for gid, c in tests.items()}
    assert results["todo1_tests"] == "2" and float(results["todo3_tests"]) < 3


@pytest.mark.slow
def test_generate_feedback_pages_are_as_inert_as_make_autogrades(course, tmp_path):
    """The same hostile prose and outputs through `make autograde` and through `nbgrader generate_feedback`."""
    folder, subs, _, _ = course
    subs_dir = tmp_path / "submissions"
    sample_submissions.write({"xavier": subs["xavier"]}, subs_dir)
    autograde.run(NAME, subs_dir, tmp_path / "out", jobs=0, cell_timeout=30)
    pages = {"make autograde": (tmp_path / "out" / "feedback" / "xavier.html").read_text(),
             "nbgrader": (folder / "feedback" / "xavier" / NAME / f"{NAME}.html").read_text()}
    for path, page in pages.items():
        assert "Euler:" in visible_text(page), path  # the prose itself is shown, as text
        assert_inert(page)
    for sid in ("alice", "carol"):
        assert_inert((folder / "feedback" / sid / NAME / f"{NAME}.html").read_text())


# --- formgrader ---------------------------------------------------------------------------------

def kit_config(folder: Path) -> Path:
    """A course folder whose nbgrader_config.py is ours plus the two documented lines."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text((ROOT / "grader" / "nbgrader_config.py").read_text() + PLUGIN_LINES)
    return folder


HIDDEN_CELL = "check()\n### BEGIN HIDDEN TESTS\nsecret_check()\n### END HIDDEN TESTS\n"


def graded_cell_notebook():
    meta = {"nbgrader": {"grade": True, "grade_id": "todo1_tests", "points": 2, "solution": False, "locked": True,
                         "schema_version": 3, "score": 1.5}}
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN),
                                           nbformat.v4.new_code_cell(HIDDEN_CELL, metadata=meta, outputs=[
                                               nbformat.v4.new_output("stream", name="stdout", text="TODO 1: 1.5 / 2\n")])])


def test_formgraders_submission_view_keeps_its_own_template(tmp_path, monkeypatch):
    """Formgrader's HTMLExporter, built as its server extension builds it with the course's config loaded, renders a
    submission (with the kit's settings on HTMLExporter it raised TemplateNotFound: bootstrap.min.css)."""
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

    monkeypatch.chdir(kit_config(tmp_path / "course"))
    monkeypatch.syspath_prepend(str(ROOT))
    app = FormgradeExtension()
    app.root_dir = str(tmp_path)
    app.initialize([])
    assert "SandboxedAutograde" in str(app.config.Autograde.autograde_preprocessors)  # the kit's config was loaded
    webapp = types.SimpleNamespace(settings={})
    app.init_tornado_settings(webapp)
    resources = {"assignment_id": NAME, "notebook_id": NAME, "submission_id": "s1", "index": 0, "total": 1, "base_url": "",
                 "student": "alice", "last_name": "A", "first_name": "B", "notebook_path": "x"}
    page, _ = webapp.settings["nbgrader_exporter"].from_notebook_node(graded_cell_notebook(), resources=resources)
    assert "formgrade" in page and "overflow-wrap: anywhere" not in page  # formgrader's view, not our feedback page


def test_generate_feedback_uses_the_kits_template_and_exporter(tmp_path, monkeypatch, caplog):
    """GenerateFeedback's exporter, built as nbgrader builds it (also as formgrader's button does: template 'feedback'
    set on HTMLExporter), renders our template and an inert page."""
    from nbgrader.apps import NbGrader
    from nbgrader.converters import GenerateFeedback
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    caplog.set_level("INFO")
    monkeypatch.chdir(kit_config(tmp_path / "course"))
    monkeypatch.syspath_prepend(str(ROOT))
    app = NbGrader()
    app.load_config_file()
    converter = GenerateFeedback(coursedir=None, config=app.config)
    converter.update_config(Config({"HTMLExporter": {"template_name": "feedback"}}))  # nbgrader/apps/api.py:generate_feedback
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    for step in converter.preprocessors:  # as BaseConverter.start, but no gradebook here: the scores are set below
        if step is not GetGrades:
            exporter.register_preprocessor(step)
    resources = {"nbgrader": {"notebook": NAME, "assignment": NAME, "student": "alice", "score": 1.5, "max_score": 2,
                              "late_penalty": 0}}
    nb = graded_cell_notebook()
    sanitize.clean_notebook(nb)  # as SandboxedAutograde leaves the autograded notebook
    page, _ = exporter.from_notebook_node(nb, resources=resources)
    assert 'href="#todo1_tests">TODO 1</a>' in page and "check()" in visible_text(page) and "secret_check" not in page
    assert_inert(page)
    assert "not recognized" not in caplog.text
    said = [r.getMessage() for r in caplog.records if "grading kit" in r.getMessage()]
    assert len(said) == 1 and "feedback template feedback_todo" in said[0] and "made inert" in said[0]
    exporter.from_notebook_node(graded_cell_notebook(), resources=resources)  # said once per command
    assert len([r for r in caplog.records if "grading kit" in r.getMessage()]) == 1


def kit_exporter():
    from grader.nbgrader_plugin import FeedbackTodoExporter
    from traitlets.config import Config

    config = Config()
    for name, value in __import__("grader.feedback").feedback.template_settings().items():
        setattr(config.FeedbackTodoExporter, name, value)
    return FeedbackTodoExporter(config=config)


def scored_notebook(manual: float, language: str = "en"):
    """What GetGrades leaves: TODO 1's answer with a grader's comment, its test cell scored `manual` (the gradebook's
    score) while autograde's result, the hidden rules' score, was 0."""
    answer = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": False, "solution": True, "grade_id": "todo1", "locked": False, "schema_version": 3,
        "comment": "Look at the *queue* order."}})
    test = nbformat.v4.new_code_cell("check()", metadata={"nbgrader": {
        "grade": True, "solution": False, "grade_id": "todo1_tests", "points": 2, "locked": True, "schema_version": 3,
        "score": manual}}, outputs=[nbformat.v4.new_output("stream", name="stdout", text="TODO 1: 0 / 2 points (0 of 3 rules hold)\n"),
                                    nbformat.v4.new_output("execute_result", data={"text/plain": "0"}, execution_count=1)])
    nb = nbformat.v4.new_notebook(cells=[answer, test])
    nb.metadata["language_edition"] = language
    return nb


@pytest.mark.slow
def test_the_page_keeps_the_late_penalty_the_comments_and_says_which_score_counts():
    resources = {"nbgrader": {"notebook": NAME, "score": 0.5, "max_score": 2, "late_penalty": 1.0}}
    page, _ = kit_exporter().from_notebook_node(scored_notebook(1.5), resources=resources)
    shown = visible_text(page)
    assert "(Score: 0.5 / 2.0) (the TODOs: 1.5, minus a late penalty of 1.0)" in shown
    assert '<li class="late-penalty">Late submission penalty (Score: -1.0)</li>' in page
    assert 'href="#comment-todo1">Comment on TODO 1</a>' in page and "queue" in shown
    assert "TODO 1: manual score 1.5 / 2 points, which counts; the hidden rules gave 0" in shown
    assert "TODO 1: 0 / 2 points" in shown and re.search(r"Out\[[^\]]*\]:\s*1\.5", shown)  # the verdict stays; its result is 1.5
    assert_inert(page)
    on_time, _ = kit_exporter().from_notebook_node(scored_notebook(0.0), resources={"nbgrader": {
        "notebook": NAME, "score": 0, "max_score": 2, "late_penalty": 0}})
    assert "manual score" not in on_time and "late penalty" not in on_time.lower().replace("li.late-penalty", "")
    zh, _ = kit_exporter().from_notebook_node(scored_notebook(1.5, "zh"), resources=resources)
    assert "TODO 1：人工评分 1.5 / 2 分，以此为准；隐藏规则给出 0 分" in visible_text(zh) and "迟交扣 1.0 分" in visible_text(zh)
    # nbgrader's cell headings and footers: English on an en page, Chinese on a zh one (the grade id stays code)
    assert ["Student's answer", "Grade cell: todo1_tests", "Score: 1.5 / 2.0 (Top)", "Comments:"] == [
        said for said in ["Student's answer", "Grade cell: todo1_tests", "Score: 1.5 / 2.0 (Top)", "Comments:"] if said in shown]
    zh_shown = visible_text(zh)
    assert all(said in zh_shown for said in ["你的答案", "评分单元格：todo1_tests", "得分：1.5 / 2.0 （回到顶部）", "评语："]), zh_shown
    assert [said for said in ["Student", "Grade cell", "Score", "Top", "Comments:", "Comment on"] if said in zh_shown] == []


def test_a_feedback_page_that_cannot_be_made_inert_is_replaced_by_the_plain_one(tmp_path, monkeypatch):
    """A page the audit refuses (here: over the cap) is never written as rendered: the plain page, scores and verdicts."""
    from grader.nbgrader_plugin import FeedbackTodoExporter
    from traitlets.config import Config

    config = Config()
    for name, value in __import__("grader.feedback").feedback.template_settings().items():
        setattr(config.FeedbackTodoExporter, name, value)
    config.FeedbackTodoExporter.page_cap = 1000
    resources = {"nbgrader": {"notebook": NAME, "score": 1.5, "max_score": 2, "late_penalty": 0}}
    page, _ = FeedbackTodoExporter(config=config).from_notebook_node(graded_cell_notebook(), resources=resources)
    assert "above the 0 MiB cap" in page and "TODO 1: 1.5 / 2" in page and "<script" not in page and sanitize.CSP in page


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def formgrader(course):
    """A Jupyter server with nbgrader's formgrader, started in the course folder as an instructor starts it."""
    folder = course[0]
    port, token = free_port(), "kit-test-token"
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = open(folder.parent / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "jupyter_server", f"--port={port}", "--ip=127.0.0.1", "--no-browser",
                               f"--ServerApp.root_dir={folder.parent}", f"--IdentityProvider.token={token}",
                               "--ServerApp.port_retries=0", "--allow-root"], cwd=folder, env=env, stdout=log, stderr=log)

    def call(path: str, method: str = "GET", timeout: float = 1200, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PUT") else None)
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=data,
                                         headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    deadline = time.monotonic() + 600  # generous: the machine may be busy; failure is the server exiting or never answering
    while True:
        assert server.poll() is None, (folder.parent / "server.log").read_text()[-3000:]
        try:
            if call("/api/status", timeout=10)[0] == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, (folder.parent / "server.log").read_text()[-3000:]
        time.sleep(0.5)
    yield call, folder
    server.terminate()
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    log.close()


@pytest.mark.slow
def test_formgrader_shows_a_submission_and_its_buttons_work(formgrader):
    """The manual-grading view, then the per-student autograde and "Generate feedback" buttons (their API calls)."""
    from nbgrader.api import Gradebook

    call, folder = formgrader
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        submission_id = gb.find_submission_notebook(NAME, NAME, "carol").id
    status, page = call(f"/formgrader/submissions/{submission_id}/")
    assert status == 200, page[-2000:]
    assert "carol" in page and "todo3_tests" in page
    logs = {}
    for button, path in [("autograde", f"/formgrader/api/submission/{NAME}/carol/autograde"),
                         ("feedback", f"/formgrader/api/assignment/{NAME}/carol/generate_feedback"),
                         ("feedback for all", f"/formgrader/api/assignment/{NAME}/generate_feedback")]:
        status, body = call(path, "POST")
        assert status == 200 and json.loads(body)["success"], body[-3000:]
        logs[button] = json.loads(body).get("log", "")
    # Each press says which kit changed it (the log formgrader shows), with no warning about settings or checksums.
    assert re.search(r"grading kit \S+ \(.*\): 02_decode_scheduling graded in sandbox \w+ .*feedback template feedback_todo",
                     logs["autograde"]), logs["autograde"]
    assert all("feedback template feedback_todo" in logs[b] and "made inert" in logs[b] for b in ("feedback", "feedback for all"))
    assert not [line for text in logs.values() for line in text.splitlines() if "not recognized" in line or "hecksum" in line]


@pytest.mark.slow
def test_a_manual_score_and_a_comment_from_formgrader_reach_the_page_worded_as_the_verdict(formgrader):
    """carol's TODO 3 got partial credit from the hidden rules; a grader overrides it and comments in formgrader."""
    from nbgrader.api import Gradebook

    call, folder = formgrader
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        grade = gb.find_grade("todo3_tests", NAME, NAME, "carol")
        comment = gb.find_comment("todo3", NAME, NAME, "carol")
        auto, grade_id, comment_id = grade.auto_score, grade.id, comment.id
    manual = 0.5 if auto != 0.5 else 1.0
    assert call(f"/formgrader/api/grade/{grade_id}", "PUT", body={"manual_score": manual})[0] == 200
    assert call(f"/formgrader/api/comment/{comment_id}", "PUT", body={"manual_comment": "Look at who waits longest."})[0] == 200
    status, body = call(f"/formgrader/api/assignment/{NAME}/carol/generate_feedback", "POST")
    assert status == 200 and json.loads(body)["success"], body[-3000:]
    page = (folder / "feedback" / "carol" / NAME / f"{NAME}.html").read_text()
    shown = visible_text(page)
    assert f"TODO 3: manual score {manual:g} / 3 points, which counts; the hidden rules gave {auto:g}" in shown
    assert 'href="#comment-todo3">Comment on TODO 3</a>' in page and "Look at who waits longest." in shown
    assert f'href="#todo3_tests">TODO 3</a> (Score: {manual} / 3.0)' in page
    assert_inert(page)
    for sid in ("alice", "carol"):  # every student's page is there, made with our template
        page = (folder / "feedback" / sid / NAME / f"{NAME}.html").read_text()
        assert 'href="#todo3_tests">TODO 3</a>' in page
        assert_inert(page)
