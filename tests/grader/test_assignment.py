"""An assignment is a folder found by discovery, read once into an Assignment (grader/assignment.py)."""
from types import SimpleNamespace

import nbformat
import pytest

from grader import editions, paths
from grader.assignment import Assignment, load, names, todos

NAME = "02_decode_scheduling"


def test_assignments_are_the_folders_with_a_master_and_nothing_else(tmp_path, monkeypatch):
    (tmp_path / "04_new").mkdir()
    (tmp_path / "04_new" / "master.py").write_text("# %%\n")
    (tmp_path / "04_new" / "notes.txt").write_text("an instructor's file")
    (tmp_path / "05_draft").mkdir()                                  # no master yet
    (tmp_path / "04_new.mistakes.yml").write_text("{}\n")            # another tool's file beside the folders
    (tmp_path / "README.md").write_text("")
    monkeypatch.setattr(paths, "ASSIGNMENTS_DIR", tmp_path)
    assert names() == ["04_new"]
    with pytest.raises(SystemExit, match="unknown assignment '05_draft'; known: 04_new"):
        paths.assignment_dir("05_draft")
    with pytest.raises(SystemExit):
        paths.assignment_dir("../04_new")


def test_the_course_assignments_are_found():
    assert names() == sorted(p.parent.name for p in paths.ASSIGNMENTS_DIR.glob("*/master.py")) and len(names()) >= 3
    assert load(NAME) is load(NAME)


def test_names_grade_ids_and_points_come_from_the_master():
    a = load(NAME)
    tests = {editions.grade_id(c): editions.nbgrader_meta(c)["points"] for c in a.master.cells
             if editions.nbgrader_meta(c).get("grade") and not editions.nbgrader_meta(c).get("solution")}
    tasks = a.tasks(1)
    assert [t.answer_id for t in tasks] == a.answer_ids and [t.test_id for t in tasks] == a.test_ids
    assert {t.test_id: t.points for t in tasks} == tests
    assert [t.task_id for t in tasks] == [f"TODO {i}" for i in range(1, len(tasks) + 1)]


def test_the_master_is_read_once(monkeypatch):
    calls = []
    read = editions.read_master
    monkeypatch.setattr(editions, "read_master", lambda *args: calls.append(args) or read(*args))
    a = Assignment(NAME)  # a fresh one, not the cached load()
    a.master, a.nbgrader_source, a.reference, a.answer_ids, a.setup, a.tasks(1), a.hidden_snippets
    assert calls == [(NAME, "en")]


def test_a_suite_must_have_rules_for_exactly_the_masters_todos():
    a = Assignment(NAME)
    a.suite = SimpleNamespace(build=lambda seed: {"todo1": [], "todo9": []})
    with pytest.raises(ValueError, match="rules for \\['todo1', 'todo9'\\], but the master's TODOs answer in"):
        a.tasks(1)


def test_a_suite_may_declare_pure_only_what_an_answer_cell_defines():
    """PURE names exports the bridge may answer in batches (grader/runner/bridge.py, Batch): a name no answer cell
    defines is a typo that would batch nothing, refused when the grader starts; none declared is none."""
    a = Assignment(NAME)
    assert a.pure == ["DecodeSchedulerSim._schedule_key"]
    for declared, refused in ((("DecodeSchedulerSim.schedule_key",), True), ((), False), (("DecodeSchedulerSim.step",), False)):
        a = Assignment(NAME)
        a.suite = SimpleNamespace(PURE=declared)
        if refused:
            with pytest.raises(ValueError, match="PURE names 'DecodeSchedulerSim.schedule_key', which no answer cell"):
                a.pure
        else:
            assert a.pure == list(declared)
    assert Assignment("01_continuous_batching").pure == []


def test_a_suite_may_declare_logs_only_as_fields_of_a_class_the_set_up_defines():
    """LOGS names fields the grading child keeps (grader/runner/bridge.py, Sink): "Class.field" of a class a set-up cell
    defines; anything else (a typo of the class, a dunder, no field) is refused when the grader starts."""
    assert Assignment(NAME).logs == ["DecodeSchedulerSim.timeline"]
    for declared, refused in ((("DecodeSimulator.timeline",), True), (("DecodeSchedulerSim.__dict__",), True),
                              (("DecodeSchedulerSim",), True), ((), False), (("DecodeSchedulerSim.events",), False)):
        a = Assignment(NAME)
        a.suite = SimpleNamespace(LOGS=declared)
        if refused:
            with pytest.raises(ValueError, match="LOGS names .*, not a field of a class a set-up cell defines"):
                a.logs
        else:
            assert a.logs == list(declared)
    assert Assignment("01_continuous_batching").logs == Assignment("03_batch_scheduling").logs == []


def test_an_answer_cell_needs_a_todo_heading():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "todo1", "solution": True}}),
        nbformat.v4.new_code_cell("assert x", metadata={"nbgrader": {"grade_id": "todo1_tests", "grade": True, "points": 1}})])
    with pytest.raises(ValueError, match="todo1 has no '### TODO k' heading"):
        todos(nb)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("### TODO 7 · something"))
    assert [(t.task_id, t.answer_id, t.test_id, t.points) for t in todos(nb)] == [("TODO 7", "todo1", "todo1_tests", 1)]



def test_figures_come_from_assignment_toml_with_a_new_assignments_defaults(tmp_path, monkeypatch):
    from grader.assignment import Figures

    assert Figures.read(tmp_path / "assignment.toml") == Figures()   # no file: every default
    (tmp_path / "assignment.toml").write_text('plots = 2\nzh_terms = ["准入"]\n[zh_broken]\ntodo1 = "hang"\n', encoding="utf-8")
    assert Figures.read(tmp_path / "assignment.toml") == Figures(plots=2, zh_terms=("准入",), zh_broken={"todo1": "hang"})
    (tmp_path / "assignment.toml").write_text("plot = 2\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['plot'\]"):
        Figures.read(tmp_path / "assignment.toml")
    (tmp_path / "assignment.toml").write_text('plots = "3"\n')
    with pytest.raises(ValueError, match="plots must be an integer"):
        Figures.read(tmp_path / "assignment.toml")
    declared = Assignment(NAME)
    assert (declared.folder / "assignment.toml").exists() and declared.figures.plots == 3 and declared.figures.corpus == 4
    monkeypatch.setattr(Figures, "read", classmethod(lambda cls, path: cls()))   # as if it declared nothing
    assert Assignment(NAME).figures == Figures(corpus=2 * len(declared.todos))   # the corpus: two per TODO


def test_a_malformed_assignment_toml_is_refused_naming_the_file(tmp_path):
    from grader.assignment import Figures
    path = tmp_path / "assignment.toml"
    path.write_text("plots = 3\nzh_terms = [\"准入\"\n", encoding="utf-8")   # an unclosed list
    with pytest.raises(ValueError, match="assignment.toml: not TOML"):
        Figures.read(path)
