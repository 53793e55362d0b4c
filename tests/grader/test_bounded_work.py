"""Bounded work: a pathological file is refused before nbformat parses it, and pages are built within a budget.

200,000 empty cells in an 8 MiB file once cost 143 s and 1.7 GiB, sanitised and rendered under one process-wide
lock. The files here are generated in the test; the checks count work (parses, filter calls), not seconds.
"""
import csv
import json
import queue
import threading

import nbformat
import pytest

from grader import autograde, editions, feedback, safe_io, sample_submissions, sanitize, submission

NAME = "02_decode_scheduling"


def empty_cells(count: int) -> bytes:
    """A notebook of `count` empty raw cells, as small as JSON writes them (200,000 make 8.6 MiB)."""
    cells = ",".join(['{"cell_type":"raw","id":"c%d","metadata":{},"source":""}' % i for i in range(count)])
    return ('{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[%s]}' % cells).encode()


@pytest.fixture
def no_nbformat(monkeypatch):
    """nbformat's parser, counted: these files must never reach it."""
    calls = []
    monkeypatch.setattr(submission.nbformat, "reads", lambda *a, **k: calls.append(a) or pytest.fail("nbformat parsed it"))
    return calls


@pytest.mark.slow
def test_too_many_cells_are_refused_before_nbformat_parses(no_nbformat):
    data = empty_cells(200_000)
    assert 8 << 20 < len(data) < safe_io.MAX_SUBMISSION
    with pytest.raises(submission.NotASubmission, match=f"200000 cells; the limit is {submission.MAX_CELLS}"):
        submission.parse(data)
    assert no_nbformat == []


def test_too_many_outputs_are_refused_before_nbformat_parses(no_nbformat):
    output = {"output_type": "stream", "name": "stdout", "text": ""}
    cell = {"cell_type": "code", "metadata": {}, "source": "", "execution_count": None, "outputs": [output] * 300}
    data = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell] * 100}).encode()
    with pytest.raises(submission.NotASubmission, match=f"30000 outputs; the limit is {submission.MAX_OUTPUTS}"):
        submission.parse(data)


def test_a_bracket_bomb_is_refused_before_json_parses(no_nbformat, monkeypatch):
    monkeypatch.setattr(submission.json, "loads", lambda *a, **k: pytest.fail("json parsed it"))
    data = b'{"nbformat": 4, "cells": [' + b"[[]]," * 2_000_000 + b"[]]}"
    with pytest.raises(submission.NotASubmission, match="JSON objects and arrays"):
        submission.parse(data)


def test_the_file_size_cap_is_one_figure_stated_once():
    from conftest import ROOT

    docs = "".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    assert docs.count(f"{safe_io.MAX_SUBMISSION >> 20} MiB file") == 1 and "256 MiB file" not in docs
    assert not hasattr(submission, "MAX_BYTES")  # the reader uses safe_io's cap, not a second one


def markdown_notebook(cells: int, chars: int) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {i}\n" + "word " * (chars // 5))
                                           for i in range(cells)])


def test_cleaning_past_its_budget_keeps_no_more_prose_or_outputs(monkeypatch):
    """Counted: once the budget is spent, no more Markdown is cleaned (bleach costs time per character)."""
    calls = []
    monkeypatch.setattr(sanitize, "clean_markdown", lambda source: calls.append(source) or "clean")
    nb = markdown_notebook(50, 100)
    nb.cells.append(nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout", text="x")]))
    notes = sanitize.clean_notebook(nb, clean_seconds=-1)
    assert calls == [] and nb.cells[-1].outputs == [] and {c.source for c in nb.cells[:-1]} == {sanitize.NOT_SHOWN}
    assert notes == ["cell 0 and later: no outputs or prose shown, cleaning the page took over -1 s"]
    nb = markdown_notebook(50, sanitize.SOURCES_CAP // 20)  # 2.5 times the prose a page shows
    sanitize.clean_notebook(nb)
    assert len(calls) == 19 and sum(c.source == sanitize.NOT_SHOWN for c in nb.cells) == 31


@pytest.mark.slow
def test_a_render_past_its_budget_is_given_up_at_the_first_cell(monkeypatch):
    monkeypatch.setattr(feedback, "_IDLE", queue.SimpleQueue())
    monkeypatch.setattr(feedback, "_HIGHLIGHTED", {})
    monkeypatch.setattr(feedback, "_MARKDOWN", {})
    monkeypatch.setattr(feedback, "RENDER_SECONDS", -1)
    nb = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    with pytest.raises(TimeoutError, match="the page took more than -1 s to render"):
        feedback.render(nb, NAME, [])
    assert feedback._IDLE.qsize() == 1  # the exporter is given back, and nothing was highlighted or converted
    assert feedback._HIGHLIGHTED == {} and feedback._MARKDOWN == {}


@pytest.mark.slow
def test_renders_do_not_wait_for_each_other(monkeypatch):
    """Two pages render at the same time: each waits inside its render for the other to be inside its own.
    Under a process-wide lock the second could not start, and the barrier would break. (The second waits
    EXPORTER_WAIT for the first's exporter to be free, then builds its own.)"""
    monkeypatch.setattr(feedback, "_IDLE", queue.SimpleQueue())
    both_inside = threading.Barrier(2, timeout=60)
    build = feedback._exporter

    def waiting_exporter():
        exporter = build()
        highlight, first = exporter.cached_highlight, [True]

        def first_waits(source, language=None, metadata=None):
            if first:
                first.clear()
                both_inside.wait()
            return highlight(source, language, metadata)

        exporter.cached_highlight = first_waits
        return exporter

    monkeypatch.setattr(feedback, "_exporter", waiting_exporter)
    pages, errors = [], []

    def render():
        try:
            pages.append(feedback.render(sample_submissions.release(NAME), NAME, []))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=render) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == [] and len(pages) == 2 and feedback._IDLE.qsize() == 2


@pytest.mark.slow
def test_a_pathological_file_costs_its_owner_a_zero_and_the_batch_seconds(tmp_path):
    """Through `make autograde`, beside a perfect and a blank control: refused files score 0 with the reason; a
    file just inside the caps is graded and its page shows what the budgets allow."""
    subs = tmp_path / "subs"
    perfect = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    wordy = sample_submissions.filled(NAME, editions.reference_answers(NAME))
    wordy.cells += markdown_notebook(1_500, 2_000).cells  # 3 MiB of prose: more than a page shows
    sample_submissions.write({"alice_solution": perfect, "bob_untouched": sample_submissions.release(NAME), "wendy_wordy": wordy},
                             subs)
    (subs / "paula_200k_cells.ipynb").write_bytes(empty_cells(200_000))
    (subs / "peter_brackets.ipynb").write_bytes(b'{"nbformat": 4, "cells": [' + b"[[]]," * 2_000_000 + b"[]]}")
    outcomes = {o.student_id: o for o in autograde.run(NAME, subs, tmp_path / "out", jobs=2, cell_timeout=20)}
    rows = {row["student_id"]: row for row in csv.DictReader(open(tmp_path / "out" / "grades.csv"))}
    assert rows["alice_solution"]["total"] == "12" and rows["bob_untouched"]["total"] == "0"
    assert rows["wendy_wordy"]["total"] == "12" and not outcomes["wendy_wordy"].warnings
    page = feedback.visible_text((tmp_path / "out" / "feedback" / "wendy_wordy.html").read_text())
    assert "TODO 4: 4 / 4 points" in page and sanitize.NOT_SHOWN in page
    for student, why in (("paula_200k_cells", "200000 cells; the limit is 2000"), ("peter_brackets", "JSON objects")):
        assert rows[student]["total"] == "0" and outcomes[student].status == "bad" and why in str(outcomes[student].reason)
        assert outcomes[student].seconds < 60  # generous: it is refused in about a second
