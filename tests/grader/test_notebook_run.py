"""grader/notebook_run.py's reading of a notebook, through its public names, with no run started: which later cells
use an answer (dependents), which cells no later cell needs (unused_later, unread_later). Feedback runs themselves are
tested in test_drawn_once.py, test_cell_records.py and test_verdict_path.py."""
import nbformat

from grader import notebook_run


def answer(grade_id, source):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "solution": True}
    return cell


def code(source):
    return nbformat.v4.new_code_cell(source)


def test_defined_names_are_a_cells_top_level_bindings():
    assert notebook_run.defined_names("def f():\n    inner = 1\nclass C: pass\nx = y = 2\nz: int = 3\nf()") == {"f", "C", "x", "y", "z"}
    assert notebook_run.defined_names("def broken(:") == set()
    assert [notebook_run.todo_name(g) for g in ("todo4", "setup", None)] == ["TODO 4", "setup", None]


def test_an_answers_dependents_are_the_later_cells_that_use_it_directly_or_through_another_answer():
    nb = nbformat.v4.new_notebook(cells=[
        code("import math"),                                  # 0
        answer("todo1", "# TODO 1\ndef first(x):\n    return x"),   # 1
        code("first(1)"),                                     # 2: uses todo1
        answer("todo2", "def second(x):\n    return first(x)"),   # 3: an answer that calls todo1
        code("second(2)"),                                    # 4: so it hangs with todo1 too
        code("# TODO 1 is checked below\nprint('ok')"),       # 5: names the label the answer cell gives itself
        code("math.pi"),                                      # 6: uses neither
        nbformat.v4.new_markdown_cell("first(3)")])           # 7: not code
    assert notebook_run.dependents(nb, ["todo1", "todo2"]) == {1: [2, 4, 5], 3: [4]}


def test_a_cell_no_later_cell_reads_can_be_left_out_and_one_that_is_read_cannot():
    nb = nbformat.v4.new_notebook(cells=[code("a = 1\nb = 2"), code("print(b)"), code("c = f(1)"), code("c = 2\nprint(c)"),
                                         code("d = 1"), code("print(globals())")])
    assert not notebook_run.unused_later(nb, 0) and notebook_run.unused_later(nb, 1)
    assert notebook_run.unread_later(nb, 2)        # c is bound again before anything reads it
    assert not notebook_run.unread_later(nb, 0)    # b is printed
    assert not notebook_run.unread_later(nb, 4)    # globals() may read anything
    release = nbformat.v4.new_notebook(cells=[code("x = 1"), nbformat.v4.new_markdown_cell("m"), code("y = 2"), answer("todo1", "")])
    assert notebook_run.release_prefix(release, ["todo1"]) == ("x = 1", "y = 2")


def test_a_feedback_runs_progress_is_a_record_of_its_cell_runner():
    """CellLimits (the feedback run's watcher) takes the cell runner's records as progress, nothing else."""
    limits = notebook_run.CellLimits(1.0, 30.0, 90.0)
    for noise in (b"{}", b'{"kind": "nonsense"}', b'{"kind": "start", "index": "3"}', b'{"kind": "cell", "index": 3}', b"[1]", b"x"):
        assert limits.progress(noise) is False and limits.current is None, noise
    assert limits.progress(b'{"kind": "start", "index": 3}') and limits.current[0] == 3
    assert limits.progress(b'{"kind": "cell", "index": 3, "status": "ok", "outputs": []}') and limits.current is None
    assert limits.progress(b'{"kind": "done", "cpu": 1.0}')
