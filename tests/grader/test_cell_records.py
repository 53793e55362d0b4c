"""A cell's outputs on the feedback page come only from the window between that cell's own start and end records.

The feedback run (grader/runner/notebook.py) writes {"kind": "start", index} before a cell and {"kind": "cell", index,
...} after it; student code runs in between and can write to the same pipe. grader/notebook_run.py:_records takes a
cell's record only where it closes that cell's own start record at the outermost level.
"""
import json

import nbformat
import pytest

from grader import editions, notebook_run, pipeline, runner, sample_submissions

FORGED = "FORGED OUTPUT"


def line(**record) -> bytes:
    return json.dumps(record).encode()


def cell(index, text, status="ok") -> bytes:
    return line(kind="cell", index=index, status=status, outputs=[{"output_type": "stream", "name": "stdout", "text": text}])


def texts(found) -> dict[int, str]:
    return {i: "".join(o.get("text", "") for o in rec["outputs"]) for i, rec in found.items()}


def test_records_written_inside_a_cells_window_are_taken_for_nothing():
    """Cell 1 forges, inside its own window, a bare cell record for cell 2, a whole window for cell 3 and a skipped
    record for cell 4; each later cell keeps its own record. The old reading (a cell's first record) took them."""
    code = {1, 2, 3, 4}
    stream = [line(kind="start", index=1), cell(2, FORGED), line(kind="start", index=3), cell(3, FORGED),
              cell(4, FORGED, "skipped"), cell(1, "mine"),
              line(kind="start", index=2), cell(2, "two"), line(kind="start", index=3), cell(3, "three"), cell(4, "", "skipped")]
    output = b"\n".join(stream)
    assert texts(notebook_run._records(output, code)) == {1: "mine", 2: "two", 3: "three", 4: ""}
    first = {}
    for raw in stream:   # positive control: the first record of each cell, as the records were read before
        rec = notebook_run._checked(json.loads(raw), code)
        if rec is not None:
            first.setdefault(rec["index"], rec)
    assert texts(first)[2] == FORGED and texts(first)[3] == FORGED


def test_a_cell_that_forges_the_end_of_its_own_window_cannot_replace_a_later_cells_record():
    """Cell 1 closes its own window early, then forges windows for cells 2 and 3 at the outer level: the runner's own
    windows of 2 and 3 come after, and they are what is taken."""
    code = {1, 2, 3}
    stream = [line(kind="start", index=1), cell(1, "mine"), line(kind="start", index=2), cell(2, FORGED),
              line(kind="start", index=3), cell(3, FORGED), cell(1, "mine, the runner's"),
              line(kind="start", index=2), cell(2, "two"), line(kind="start", index=3), cell(3, "three")]
    found = texts(notebook_run._records(b"\n".join(stream), code))
    assert found[2] == "two" and found[3] == "three"


def test_an_unclosed_forged_start_ends_with_the_window_it_was_written_in():
    code = {1, 2}
    stream = [line(kind="start", index=1), line(kind="start", index=2), cell(1, "mine"),
              line(kind="start", index=2), cell(2, "two")]
    assert texts(notebook_run._records(b"\n".join(stream), code)) == {1: "mine", 2: "two"}


# A scratch cell that writes forged records, for every cell index, to every file descriptor it can reach.
FORGER = f'''
import json as _json, os as _os
for _fd in range(3, 64):
    for _index in range(300):
        for _record in ({{"kind": "cell", "index": _index, "status": "ok",
                          "outputs": [{{"output_type": "stream", "name": "stdout", "text": "{FORGED}"}}]}},
                        {{"kind": "start", "index": _index}},
                        {{"kind": "cell", "index": _index, "status": "skipped", "why": "{FORGED}", "outputs": []}}):
            try:
                _os.write(_fd, (_json.dumps(_record) + "\\n").encode())
            except OSError:
                pass
print("scratch work")
'''


@pytest.mark.slow
def test_a_forging_scratch_cell_replaces_no_later_cells_outputs_and_no_verdict_note():
    """Through the pipeline: notebook 02 with TODO 2 left as released and a forging scratch cell right after the set-up.
    Before, its forged records replaced the outputs of every later cell, and the report said that TODO 2's checks
    passed in the notebook while the hidden rules gave 0."""
    name = "02_decode_scheduling"
    stub = sample_submissions.release_answers(name)["todo2"]
    nb = sample_submissions.filled(name, dict(editions.reference_answers(name)) | {"todo2": stub})
    at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code") + 1
    nb.cells.insert(at, nbformat.v4.new_code_cell(FORGER))
    work = pipeline.run(pipeline.prepare(name), pipeline.Work(nb=nb), steps=(pipeline.identify, pipeline.repair,
                                                                              pipeline.grade, pipeline.strip_hidden, pipeline.execute))
    shown = [i for i, c in enumerate(work.nb.cells) if c.cell_type == "code" and FORGED in json.dumps(c.get("outputs", []))]
    assert shown == [], shown
    assert not [n for n in work.notes if "in-notebook checks passed" in str(n)], work.notes
    tests = next(c for c in work.nb.cells if editions.grade_id(c) == "todo2_tests")
    assert any(o.get("output_type") == "error" for o in tests.outputs), "the check's own error is on the page"
    forger = next(c for c in work.nb.cells if c.source == FORGER)
    assert "scratch work" in json.dumps(forger.outputs)


@pytest.mark.slow
def test_the_feedback_run_reads_a_forging_cells_own_window_as_its_own():
    """The forger's own cell keeps its own outputs too (its forged records nest inside its window)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(FORGER),
                                         nbformat.v4.new_code_cell("print('after', x)"), nbformat.v4.new_code_cell("x + 1")])
    notes = notebook_run.execute(runner.shared(), nb, [])
    assert notes == []
    assert nb.cells[1].outputs[0]["text"] == "scratch work\n"
    assert nb.cells[2].outputs[0]["text"] == "after 1\n" and nb.cells[3].outputs[0]["data"]["text/plain"] == "2"
