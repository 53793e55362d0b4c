"""A worked example's figure before the first answer cell is drawn once per process, then reused (notebook_run._DRAWN).

Such a cell is the release's own, after only the release's cells, in a fresh kernel: its figure is the same in every
submission. It is left out of the run only when it draws and binds nothing a later cell reads; these tests show that
leaving it out changes no other cell's outputs, in both languages, and that any change before it, or any later read of
what it binds, makes it run again.
"""
import threading
import time

import nbformat
import pytest

from grader import notebook_run, pipeline, sample_submissions
from grader.assignment import get
from grader.runner import warm as warm_module


def _run(name: str, language: str, nb, monkeypatch) -> tuple[list, set[int]]:
    """The cells' outputs after the feedback run, and the cells the run was told to leave out."""
    prepared = pipeline.prepare(name)
    left_out: set[int] = set()
    real = warm_module.Warm.run

    def spy(runner, kind, payload, limits, **kwargs):
        left_out.update(int(i) for i, why in payload.get("skip", {}).items() if not why)   # left out without a note
        return real(runner, kind, payload, limits, **kwargs)

    monkeypatch.setattr(warm_module.Warm, "run", spy)
    notebook_run.execute(prepared.grader.warm, nb, prepared.answer_ids, prefix=prepared.prefix(language))
    monkeypatch.setattr(warm_module.Warm, "run", real)
    return [(c.get("outputs"), c.get("execution_count")) for c in nb.cells], left_out


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("name", ["02_decode_scheduling", "03_batch_scheduling"])
def test_a_drawn_worked_example_is_reused_and_changes_no_other_cell(name, language, monkeypatch):
    """02 draws two figures before TODO 1, 03 one (the worked example's steps, typed in by hand)."""
    notebook_run.forget()
    reference = dict(get(name).reference)
    first, drawn_first = _run(name, language, sample_submissions.filled(name, reference, language), monkeypatch)
    assert drawn_first == set() and notebook_run._DRAWN, "the first run draws every figure and keeps the worked examples'"
    again, drawn_again = _run(name, language, sample_submissions.filled(name, reference, language), monkeypatch)
    assert len(drawn_again) == (2 if name.startswith("02") else 1), drawn_again
    assert again == first, "reusing a figure changes no cell's outputs, its own included"
    code = [i for i, c in enumerate(sample_submissions.filled(name, reference, language).cells) if c.cell_type == "code"]
    assert all(code.index(i) < len(pipeline.prepare(name).prefix(language)) for i in drawn_again)


def _drawn_twice(name: str, monkeypatch) -> tuple[dict, list[int]]:
    """A fresh process's second run of the solved notebook: (its answers, the cells it reused)."""
    notebook_run.forget()
    reference = dict(get(name).reference)
    _run(name, "en", sample_submissions.filled(name, reference), monkeypatch)
    drawn = sorted(_run(name, "en", sample_submissions.filled(name, reference), monkeypatch)[1])
    assert drawn
    return reference, drawn


@pytest.mark.slow
def test_a_changed_cell_before_it_makes_it_run_again(monkeypatch):
    name = "02_decode_scheduling"
    reference, drawn = _drawn_twice(name, monkeypatch)
    nb = sample_submissions.filled(name, reference)
    before = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and i > 2)
    nb.cells[before].source += "\nexample = lab.FOUR_ON_TWO  # mine"
    assert not _run(name, "en", nb, monkeypatch)[1] & {i for i in drawn if i > before}


@pytest.mark.slow
def test_a_later_read_of_what_it_binds_makes_it_run_again(monkeypatch):
    name = "02_decode_scheduling"
    reference, drawn = _drawn_twice(name, monkeypatch)
    nb = sample_submissions.filled(name, reference)
    last = max(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells[last].source = "print(fig)\n" + nb.cells[last].source
    assert max(drawn) not in _run(name, "en", nb, monkeypatch)[1]


@pytest.mark.parametrize("earlier, cell, unread", [("", "fig = make()", True),
                                                   ("def show():\n    print(fig)", "fig = make()", False),
                                                   ("", "cfg.rate = 3\nfig = make()", False),
                                                   ("", "for i in range(2):\n    fig = make()", False),
                                                   ("", "fig, ax = make()", False),
                                                   ("def show():\n    print(x)", "fig = [x for x in range(3)]", True),
                                                   ("def show():\n    print(y)", "fig = [(y := x) for x in range(3)]", False)])
def test_what_a_cell_left_out_may_be(earlier, cell, unread):
    """Only names bound, none read by a function that another cell calls later; nothing else changed."""
    cells = [nbformat.v4.new_code_cell(earlier), nbformat.v4.new_code_cell(cell), nbformat.v4.new_code_cell("fig = 1")]
    assert notebook_run.unread_later(nbformat.v4.new_notebook(cells=cells), 1) is unread


@pytest.mark.parametrize("later, unread", [("fig = 2", True), ("for i in range(2):\n    fig = i", False),
                                           ("print(fig)", False), ("fig += 1", False), ("fig = fig + 1", False),
                                           ("del fig", False), ("x = globals()", False), ("def f():\n    return fig", False),
                                           ("import __main__\nprint(__main__.fig)", False),
                                           ("%matplotlib inline\nfig = 2", False), ("fig, ax = 1, 2\nprint(fig)", True)])
def test_what_a_later_cell_reads(later, unread):
    cells = [nbformat.v4.new_code_cell("fig = make()"), nbformat.v4.new_code_cell(later),
             nbformat.v4.new_code_cell("print(fig)")]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert notebook_run.unread_later(nb, 0) is unread


@pytest.mark.slow
def test_each_language_draws_its_own_figures(monkeypatch):
    """The key is the release's cells, whose set-up sets the language: a zh page never gets an en figure."""
    name = "02_decode_scheduling"
    _drawn_twice(name, monkeypatch)
    reference = dict(get(name).reference)
    assert _run(name, "zh", sample_submissions.filled(name, reference, "zh"), monkeypatch)[1] == set()


@pytest.mark.slow
def test_a_traceback_after_a_reused_figure_names_the_cell_as_the_page_numbers_it(monkeypatch):
    name = "02_decode_scheduling"
    reference, drawn = _drawn_twice(name, monkeypatch)
    nb = sample_submissions.filled(name, reference)
    last = max(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells[last].source = "1 / 0\n"
    outputs, left_out = _run(name, "en", nb, monkeypatch)
    assert set(drawn) <= left_out
    errors, count = outputs[last]
    trace = "\n".join(errors[0]["traceback"])
    assert errors[0]["ename"] == "ZeroDivisionError" and f"In[{count}]" in trace, (count, trace[:300])


def _execute_in_thread(name: str, nb, ran: list, **limits) -> threading.Thread:
    """A feedback run of `nb` in a thread; `ran` gets what it raised (or None) when it ends."""
    prepared = pipeline.prepare(name)

    def target():
        try:
            notebook_run.execute(prepared.grader.warm, nb, prepared.answer_ids, prefix=prepared.prefix("en"), **limits)
            ran.append(None)
        except Exception as exc:  # noqa: BLE001 - the test reads it
            ran.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    return thread


def _spy_left_out(monkeypatch, before=None) -> list[set[int]]:
    """Per run of the warm parent, in order of call: the cells it was told to leave out."""
    left_out: list[set[int]] = []
    real = warm_module.Warm.run

    def spy(runner, kind, payload, limits, **kwargs):
        left_out.append({int(i) for i, why in payload.get("skip", {}).items() if not why})
        if before is not None:
            before(len(left_out))
        return real(runner, kind, payload, limits, **kwargs)

    monkeypatch.setattr(warm_module.Warm, "run", spy)
    return left_out


@pytest.mark.slow
def test_runs_that_start_together_draw_a_figure_once_and_need_not_wait_for_the_whole_run(monkeypatch):
    """A class's first runs start together: the first draws the worked examples' figures and the others wait for them,
    only until the figures are drawn (the first run's last cell still sleeps when they end), then reuse them."""
    name = "02_decode_scheduling"
    notebook_run.forget()
    monkeypatch.setattr(notebook_run, "DRAW_WAIT", 120.0)
    reference = dict(get(name).reference)
    left_out = _spy_left_out(monkeypatch)
    slow = sample_submissions.filled(name, reference)
    slow.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(12)"))
    first, others = [], []
    claimer = _execute_in_thread(name, slow, first, cell_timeout=60)
    while not left_out:   # the first run has claimed the figures and is running
        time.sleep(0.05)
    nbs = [sample_submissions.filled(name, reference) for _ in range(2)]
    waiters = [_execute_in_thread(name, nb, others) for nb in nbs]
    for thread in waiters:
        thread.join(60)
    assert others == [None, None] and claimer.is_alive(), "the others ended while the first still ran its last cell"
    claimer.join(60)
    assert first == [None]
    drawn = {i for i, c in enumerate(slow.cells) if c.cell_type == "code" and c.outputs
             and all("image/png" in o.get("data", {}) for o in c.outputs) and i < 12}
    assert left_out[0] == set() and len(drawn) == 2 and left_out[1] == left_out[2] == drawn, left_out
    outputs = [[c.get("outputs") for c in nb.cells] for nb in (*nbs, slow)]
    assert outputs[0] == outputs[1] == outputs[2][:-1], "a reused figure is the one drawn"


@pytest.mark.slow
def test_a_run_that_fails_before_drawing_lets_the_waiting_run_draw_at_once(monkeypatch):
    name = "02_decode_scheduling"
    notebook_run.forget()
    monkeypatch.setattr(notebook_run, "DRAW_WAIT", 120.0)
    reference = dict(get(name).reference)
    gate = threading.Event()

    def first_fails(count):
        if count == 1:
            gate.wait(60)
            raise RuntimeError("the warm parent of the sandbox stopped: test")

    left_out = _spy_left_out(monkeypatch, first_fails)
    first, second = [], []
    claimer = _execute_in_thread(name, sample_submissions.filled(name, reference), first)
    while not left_out:
        time.sleep(0.05)
    started = time.monotonic()
    waiter = _execute_in_thread(name, sample_submissions.filled(name, reference), second)
    time.sleep(1)   # the waiter waits for the claimer's figures
    assert len(left_out) == 1, "it waits, and does not start its run"
    gate.set()
    claimer.join(60)
    waiter.join(60)
    assert isinstance(first[0], RuntimeError) and second == [None]
    assert left_out[1] == set() and time.monotonic() - started < 60, "it drew the figures itself, without waiting out DRAW_WAIT"


def _tiny(*sources: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), tuple(sources)


def test_a_run_that_releases_its_claim_late_leaves_a_later_claim_in_place():
    """A run whose figure cell failed frees the figure at once; when that run ends, it must not free the claim a later
    run has made since (its waiters would wake early and draw the figure too)."""
    notebook_run.forget()
    nb, prefix = _tiny("fig = make()")
    first, _ = notebook_run._drawn(nb, [0], prefix, {})
    notebook_run._store_drawn(first[0], {"status": "error", "outputs": []})
    second, _ = notebook_run._drawn(nb, [0], prefix, {})
    assert second, "the figure is free again: a later run claims it"
    notebook_run._done_drawing(first)
    key, event = second[0]
    assert notebook_run._DRAWING.get(key) is event and not event.is_set()
    notebook_run._done_drawing(second)
    assert not notebook_run._DRAWING and event.is_set()


def test_a_leading_cell_left_out_for_another_reason_ends_the_figures_that_may_be_shared():
    """A release cell the run leaves out (a test cell at full marks, say) changes what the cells after it see."""
    notebook_run.forget()
    nb, prefix = _tiny("lab.set_language('zh')", "fig = make()")
    assert notebook_run._drawn(nb, [0, 1], prefix, {0: ""}) == ({}, {})
    claimed, _ = notebook_run._drawn(nb, [0, 1], prefix, {})
    assert sorted(claimed) == [0, 1]
    notebook_run.forget()
    assert all(event.is_set() for _, event in claimed.values()), "forget wakes whoever still waits"
