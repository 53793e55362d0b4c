"""nbgrader's formgrader in Chromium, in a course with the kit's two lines (tests/nbgrader_course.py: release, fetch,
submit, collect and `nbgrader autograde` through a local exchange; bob's TODO 3 is wrong).

The instructor opens formgrader, goes through the gradebook to bob's submission (the manual-grading view: a 500,
TemplateNotFound: bootstrap.min.css, while the kit set its template on c.HTMLExporter), types a manual score for
TODO 3 and a comment, then presses "Generate feedback" and "Release feedback" (TemplateNotFound:
feedback_todo.html.j2 on that config). Then bob runs `nbgrader fetch_feedback`: his page says which score counts,
shows the comment and the failing case as code he can run, and is inert. Requests to any host but the server are
aborted, as on a machine with no network; build/e2e/formgrader-offline.txt lists what formgrader asked for.
"""
from __future__ import annotations

import ast
import json
from urllib.parse import urlsplit

import pytest

from conftest import ROOT, jupyter, private_env, step
from grader import editions, sample_submissions, sanitize
from grader.feedback import visible_text
from grader.grade import Grader
from grader.i18n import SUMMARY
from grader.assignment import MUTANTS, mutated_answers
from nbgrader_course import NAME, assert_inert, fetched_feedback, released, run, submit

TODO = "todo3"
TASK = "TODO 3"
COMMENT = "Rank the victims by effective priority: aging counts."
PASTE = SUMMARY["en"]["paste"].strip()
FORMGRADER_ONLY = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": True}}}


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """alice's right answers and bob's wrong TODO 3 (it passes the visible checks), collected and autograded."""
    course = released(tmp_path_factory.mktemp("formgrader"), ["alice", "bob"])
    mutant = next(m for m in MUTANTS[NAME] if m.passes_visible and m.answer_id == TODO)
    bob = mutated_answers(NAME, mutant)
    submit(course, "alice", sample_submissions.filled(NAME, editions.reference_answers(NAME)))
    submit(course, "bob", sample_submissions.filled(NAME, bob))
    run(course.folder, "collect", NAME)
    assert "graded in sandbox" in run(course.folder, "autograde", NAME)
    return course, bob


@pytest.fixture(scope="module")
def formgrader(graded_course, tmp_path_factory, shots):
    """`jupyter server` with nbgrader's formgrader, started in the course folder as an instructor starts it."""
    course, _ = graded_course
    home = tmp_path_factory.mktemp("formgrader-home")
    (home / "config").mkdir()
    (home / "config" / "jupyter_server_config.json").write_text(json.dumps(FORMGRADER_ONLY))
    with jupyter("server", course.folder, private_env(home, PYTHONPATH=str(ROOT)), shots / "formgrader-server.log") as server:
        yield server


def offline(page, remote: list[str]) -> None:
    """Abort every request to a host other than the server's, as with no network; note it in `remote`."""
    def route(request_route):
        if urlsplit(request_route.request.url).hostname == "127.0.0.1" or request_route.request.url.startswith("file:"):
            request_route.continue_()
        else:
            remote.append(request_route.request.url)
            request_route.abort("internetdisconnected")
    page.route("**/*", route)


def press_and_read(page, row, button: str) -> str:
    """Press an assignment's button in Manage Assignments; the text of formgrader's result dialog (success only)."""
    row.locator(f"td.{button} a").click()
    modal = page.locator("#success-modal, #error-modal")
    modal.wait_for(state="visible", timeout=900_000)  # formgrader answers when nbgrader's command is done
    text = modal.inner_text()
    assert modal.get_attribute("id") == "success-modal", text[-3000:]
    return text


def close_dialog(page) -> None:
    page.locator("#success-modal .modal-footer button").click()
    page.locator("#success-modal").wait_for(state="detached")


def failing_case(shown: str) -> str:
    """The code under the first 'paste this into a scratch cell' of a page's text (up to the blank line after it)."""
    assert PASTE in shown, "no failing case on the page"
    lines = shown.split(PASTE, 1)[1].splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines[:lines.index("")] if "" in lines else lines).strip()


def test_a_manual_score_and_comment_from_formgrader_reach_the_fetched_page(graded_course, formgrader, browser, shots):
    from nbgrader.api import Gradebook

    course, bob_answers = graded_course
    gradebook = f"sqlite:///{course.folder / 'gradebook.db'}"
    with Gradebook(gradebook) as gb:
        grade = gb.find_grade(f"{TODO}_tests", NAME, NAME, "bob")
        auto, points = grade.auto_score, grade.max_score
        submission_id = gb.find_submission_notebook(NAME, NAME, "bob").id
    assert auto < points, "bob's wrong TODO 3 lost points in autograde"
    manual = 1.5 if auto != 1.5 else 2.0

    url, token = formgrader["url"], formgrader["token"]
    remote, errors, server_errors = [], [], []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    offline(page, remote)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("response", lambda r: server_errors.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    row = page.locator("#main-table tr", has=page.locator("td.name", has_text=NAME))

    try:
        with step(page, shots, "formgrader: manage assignments"):
            assert page.goto(f"{url}/formgrader?token={token}").ok
            row.locator("td.num-submissions a").wait_for()
            assert row.locator("td.num-submissions").inner_text().strip() == "2"

        with step(page, shots, "formgrader: manual grading, to bob's submission"):
            page.locator("a", has_text="Manual Grading").first.click()
            page.locator(f"#main-table a:text-is('{NAME}')").click()  # the assignment
            page.locator(f"#main-table a:text-is('{NAME}')").click()  # its notebook
            page.locator("#main-table a.name-hidden").first.wait_for()
            page.locator("#toggle_names").click()
            with page.expect_response(lambda r: "/formgrader/submissions/" in r.url and r.request.resource_type == "document"
                                      and r.status not in (301, 302)) as view:
                page.locator("#main-table a.name-shown:text-is('Student, Bob')").click()
            assert view.value.status == 200, f"the manual-grading view: {view.value.status}\n{view.value.text()[-3000:]}"
            page.wait_for_function("() => window.formgrader && formgrader.grades && formgrader.grades.loaded"
                                   " && formgrader.comments && formgrader.comments.loaded")
            assert page.url.rstrip("/").endswith(f"/formgrader/submissions/{submission_id}")  # bob's (names hidden here)

        with step(page, shots, "formgrader: a manual score and a comment on TODO 3"):
            score = page.locator(f"input.score#{TODO}_tests")
            score.scroll_into_view_if_needed()
            with page.expect_response(lambda r: "/api/grade/" in r.url and r.request.method == "PUT") as saved:
                score.fill(f"{manual:g}")
                score.press("Tab")  # formgrader saves a score when it changes (leaves the field)
            assert saved.value.ok, saved.value.text()
            comment = page.locator(f"textarea#{TODO}-comment")
            comment.scroll_into_view_if_needed()
            with page.expect_response(lambda r: "/api/comment/" in r.url and r.request.method == "PUT") as saved:
                comment.fill(COMMENT)
                comment.press("Tab")
            assert saved.value.ok, saved.value.text()
            page.locator(f"input.score#{TODO}_tests").evaluate("el => el.scrollIntoView({block: 'center'})")
        with Gradebook(gradebook) as gb:
            assert gb.find_grade(f"{TODO}_tests", NAME, NAME, "bob").manual_score == manual
            assert gb.find_comment(TODO, NAME, NAME, "bob").manual_comment == COMMENT

        with step(page, shots, "formgrader: Generate feedback"):
            page.goto(f"{url}/formgrader/manage_assignments")
            said = press_and_read(page, row, "generate-feedback")
            assert f"Successfully generated feedback of '{NAME}'" in said
            assert "feedback template feedback_todo" in said and "made inert" in said  # the kit's exporter did it
        with step(page, shots, "formgrader: Release feedback"):
            close_dialog(page)
            said = press_and_read(page, row, "release-feedback")
            assert f"Successfully released feedback of '{NAME}'" in said
        close_dialog(page)
    finally:
        page.close()
        # What formgrader asked of the network, offline (nbconvert's MathJax loader from a CDN in the grading view),
        # and the script errors that followed: noted for the reader; the steps above pass without them.
        (shots / "formgrader-offline.txt").write_text("\n".join(["aborted requests:", *remote, "", "script errors:", *errors]) + "\n")
    assert not server_errors, server_errors

    pages = {sid: fetched_feedback(course, sid) for sid in ("alice", "bob")}
    assert len(pages["alice"]) == 1 and len(pages["bob"]) == 1, pages
    bob = pages["bob"][0].read_text()
    assert_inert(bob)
    shown = visible_text(bob)
    assert f"{TASK}: manual score {manual:g} / {points:g} points, which counts; the hidden rules gave {auto:g}" in shown
    assert COMMENT in shown and f'href="#comment-{TODO}">Comment on {TASK}</a>' in bob
    # The failing case is the kit's (a fresh grading of bob's answers), as code: it parses and makes the simulator.
    case = failing_case(shown.split(f"{TASK}: {auto:g} / {points:g} points", 1)[1])
    ast.parse(case)
    verdict = next(v for v in Grader(NAME).grade(bob_answers) if v.answer_id == TODO)
    assert case == next(r.snippet for r in verdict.rules if not r.passed and r.snippet).strip()
    assert "DecodeSchedulerSim(" in case
    alice = pages["alice"][0].read_text()
    assert_inert(alice)
    assert "manual score" not in visible_text(alice) and COMMENT not in visible_text(alice)

    student = browser.new_page(viewport={"width": 1200, "height": 1000})
    seen = []
    offline(student, seen)
    try:
        student.goto(pages["bob"][0].as_uri())
        student.wait_for_load_state("load")
        assert student.evaluate("document.querySelectorAll('script').length") == 0
        assert student.evaluate("document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content") == sanitize.CSP
        text = student.inner_text("body")
        assert f"{TASK}: manual score {manual:g}" in text and COMMENT in text and PASTE in text
        assert not seen, seen  # the page asks for nothing
        student.get_by_text(f"{TASK}: manual score").first.evaluate("el => el.scrollIntoView({block: 'start'})")
        student.screenshot(path=str(shots / "formgrader-bob-fetched-feedback.png"))
    finally:
        student.close()
    (shots / "formgrader-bob-feedback.html").write_text(bob)
