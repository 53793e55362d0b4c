"""Reading submissions as Jupyter saves them: line lists, BOM, CRLF, every 4.x minor, extra metadata."""
import copy
import json

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from grader import editions, feedback, sample_submissions, submission
from grader.assignment import load, names

NAME = "02_decode_scheduling"
OTHERS = ["01_continuous_batching"]


@pytest.fixture(scope="module")
def solved():
    return sample_submissions.filled(NAME, editions.reference_answers(NAME))


def answers_of(data: bytes) -> dict:
    nb = submission.parse(data)
    submission.identify(nb, load(NAME), [load(o) for o in OTHERS])
    return submission.prepare(nb, sample_submissions.release(NAME), editions.answer_ids(editions.nbgrader_source(NAME))).answers


def test_lines_and_strings_give_the_same_answers(solved, tmp_path):
    lines = sample_submissions.write({"a": solved}, tmp_path / "lines", form="lines")[0]
    string = sample_submissions.write({"a": solved}, tmp_path / "string", form="string")[0]
    raw = json.loads(lines.read_text())
    assert any(isinstance(c["source"], list) and len(c["source"]) > 1 for c in raw["cells"])  # really saved as lines
    assert answers_of(lines.read_bytes()) == answers_of(string.read_bytes()) == editions.reference_answers(NAME)


@pytest.mark.parametrize("minor", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("ids", [True, False])
def test_every_minor_version_with_or_without_ids(solved, minor, ids):
    raw = json.loads(nbformat.writes(solved))
    raw["nbformat_minor"] = minor
    for index, cell in enumerate(raw["cells"]):
        cell.pop("id", None)
        if ids:
            cell["id"] = f"c{index}"
    assert answers_of(json.dumps(raw).encode()) == editions.reference_answers(NAME)


def test_bom_crlf_and_the_metadata_front_ends_add(solved):
    raw = json.loads(nbformat.writes(solved))
    raw["metadata"] |= {"colab": {"provenance": [], "toc_visible": True},
                        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}},
                        "vscode": {"interpreter": {"hash": "abc"}}, "accelerator": "GPU"}
    for cell in raw["cells"]:
        cell["metadata"] |= {"colab": {"base_uri": "https://localhost:8080/"}, "outputId": "x",
                             "execution": {"iopub.execute_input": "2026-11-30T10:00:00Z"}, "collapsed": False}
    raw["cells"][0]["attachments"] = {"x.png": {"image/png": "iVBORw0KGgo="}}  # markdown attachment
    raw["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["x" * 1_000_000]}]
    raw["cells"][2]["execution_count"] = 7
    text = json.dumps(raw, indent=1).replace("\n", "\r\n")
    got = answers_of(b"\xef\xbb\xbf" + text.encode())
    assert got == editions.reference_answers(NAME)
    assert all("\r" not in source for source in got.values())


@pytest.mark.parametrize("data, reason", [
    (b'{"cells": [', "unreadable JSON"),
    (b'{"nbformat": 4, "x": ' + b"9" * 5000 + b"}", "unreadable JSON"),   # past Python's 4300 digits: a ValueError
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2]", "not a Jupyter notebook in format 4"),
    (b'{"nbformat": 3, "worksheets": []}', "not a Jupyter notebook in format 4"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]}', "not a valid Jupyter notebook"),
])
def test_unreadable_files_are_refused_with_a_reason(data, reason):
    with pytest.raises(submission.NotASubmission, match=reason):
        submission.parse(data)


def test_a_link_is_refused(tmp_path, solved):
    real = sample_submissions.write({"real": solved}, tmp_path)[0]
    (tmp_path / "link.ipynb").symlink_to(real)
    with pytest.raises(submission.NotASubmission, match="not a regular file"):
        submission.read(tmp_path / "link.ipynb")


def test_another_assignment_is_named():
    other = sample_submissions.filled(OTHERS[0], editions.reference_answers(OTHERS[0]))
    with pytest.raises(submission.NotASubmission, match=f"this is {OTHERS[0]}, not {NAME}"):
        submission.identify(other, load(NAME), [load(o) for o in OTHERS])
    blank = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    with pytest.raises(submission.NotASubmission, match="none of the graded cells"):
        submission.identify(blank, load(NAME), [load(o) for o in OTHERS])


def test_layout_is_restored_for_nbgrader(solved):
    """Deleted and duplicated graded cells: every graded cell of the release appears once, in release order."""
    nb = copy.deepcopy(solved)
    ids = [editions.grade_id(c) for c in nb.cells]
    nb.cells.pop(ids.index("todo2_tests"))
    nb.cells.insert(0, copy.deepcopy(nb.cells[ids.index("todo1")]))
    sub = submission.prepare(nb, sample_submissions.release(NAME), editions.answer_ids(editions.nbgrader_source(NAME)))
    release_order = [editions.grade_id(c) for c in sample_submissions.release(NAME).cells if editions.grade_id(c)]
    assert [editions.grade_id(c) for c in sub.notebook.cells if editions.grade_id(c)] == release_order
    assert any("todo2_tests was deleted" in str(w) for w in sub.warnings)
    assert any("answer cell todo1 appears 2 times" in str(w) for w in sub.warnings)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_shuffle_of_cells_keeps_the_answers(solved, data):
    """Whatever order, copies or deletions of non-answer cells, the answers are those of the last copies."""
    nb = copy.deepcopy(solved)
    answer_ids = editions.answer_ids(editions.nbgrader_source(NAME))
    cells = data.draw(st.permutations(nb.cells))
    extra = data.draw(st.lists(st.sampled_from([c for c in cells if editions.grade_id(c) not in answer_ids]), max_size=4))
    nb.cells = list(cells) + [copy.deepcopy(c) for c in extra]
    sub = submission.prepare(nb, sample_submissions.release(NAME), answer_ids)
    assert sub.answers == editions.reference_answers(NAME)
    graded = [editions.grade_id(c) for c in sub.notebook.cells if editions.grade_id(c)]
    released = [editions.grade_id(c) for c in sample_submissions.release(NAME).cells if editions.grade_id(c)]
    assert sorted(graded) == sorted(released)  # each graded cell once: extra copies lose their nbgrader metadata


def test_grading_machine_paths_are_scrubbed():
    trace = f'File {ROOT}/lab/decode.py:170, in todo\n  File ~/x/y.py\n{ROOT}/.venv/lib/python3.11/site-packages/a.py'
    clean = feedback.scrub_paths(trace)
    assert str(ROOT) not in clean and "<course>/lab/decode.py:170" in clean


# What layout changes cost, in the words every student text uses (README, student README, each notebook's
# introduction). The claims are tested: test_layout_is_restored_for_nbgrader and the shuffle test above,
# test_autograde_e2e.py's layout accidents, test_grader.py's renamed function, and the scratch cell below.
LAYOUT_COSTS = {
    "en": "**What layout changes cost.** Only the TODO cells are graded, found by the `grade_id` that nbgrader keeps in each cell's metadata, not by a cell `id`: code in any other cell is "
          "not. Scratch cells, moved cells, and a check cell deleted, duplicated or edited cost nothing: the course's own "
          "checks are used. If a TODO cell appears twice, the copy further down is graded (the kernel ran it last). A "
          "deleted TODO cell, or a TODO function renamed, scores zero on that TODO only.",
    "zh": "**改动单元格布局会怎样。** 只有 TODO 单元格计分。评分程序靠 `grade_id` 找到这些单元格（nbgrader 把它写在每个单元格的元数据里），而不是靠单元格的 `id`；其他单元格里的代码一律不计分。"
          "新增草稿单元格、移动单元格，以及删除、复制或修改检查单元格，都不扣分：评分时用的是课程自带的检查。"
          "同一个 TODO 单元格出现两次时，评分的是位置靠下的那一份（内核最后运行的是它）。"
          "删除某个 TODO 单元格或改掉 TODO 函数的名字，只会让那一个 TODO 得零分。",
}


def _squeezed(text: str) -> str:
    """Without whitespace: the same words however a file wraps them (Chinese lines break mid-sentence)."""
    return "".join(text.split())


def layout_texts() -> dict[str, str]:
    """Every text a student reads about layout: both READMEs and each edition's introduction."""
    from grader import bundle
    from grader.paths import assignment_names

    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8"), "student README": bundle.student_readme()}
    for name in assignment_names():
        for folder in ("notebooks", "notebooks/zh"):
            nb = nbformat.read(ROOT / folder / f"{name}.ipynb", as_version=4)
            texts[f"{folder}/{name}"] = nb.cells[0].source
    return texts


def test_every_student_text_states_the_same_layout_costs():
    for where, text in layout_texts().items():
        wanted = ["zh"] if where.startswith("notebooks/zh") else ["en"] if where.startswith("notebooks") else ["en", "zh"]
        for language in wanted:
            assert _squeezed(LAYOUT_COSTS[language]) in _squeezed(text), f"{where} ({language})"
    assert "不要删除、复制或调换" not in "".join(layout_texts().values())  # the old, contrary advice is gone


def test_the_layout_check_catches_a_text_that_says_otherwise():
    readme = layout_texts()["README.md"].replace("cost nothing", "are forbidden")
    assert _squeezed(LAYOUT_COSTS["en"]) not in _squeezed(readme)


def test_code_in_a_scratch_cell_is_not_graded(solved):
    """A TODO's answer written in a new cell below its untouched stub: the stub is what is graded."""
    nb = copy.deepcopy(solved)
    ids = [editions.grade_id(c) for c in nb.cells]
    at = ids.index("todo2")
    released = sample_submissions.release(NAME).cells
    stub = released[[editions.grade_id(c) for c in released].index("todo2")].source
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(nb.cells[at].source))  # the answer, in a scratch cell
    nb.cells[at].source = stub
    answer_ids = editions.answer_ids(editions.nbgrader_source(NAME))
    answers = submission.prepare(nb, sample_submissions.release(NAME), answer_ids).answers
    assert answers["todo2"] == stub and answers["todo1"] == editions.reference_answers(NAME)["todo1"]


@pytest.mark.parametrize("name", names())
def test_a_zh_notebook_fetched_before_the_prose_was_reworded_is_still_zh(name):
    # The corpus' zh answers were saved from older zh editions: by shared cells alone, 01's read as English
    assignment = load(name)
    for path in sorted((ROOT / "grader" / "assignments" / name / "corpus").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert submission.language_of(nb, assignment) == ("zh" if path.stem.endswith("-zh") else "en"), path.name
    stale = nbformat.read(ROOT / "notebooks" / "zh" / f"{name}.ipynb", as_version=4)
    for cell in stale.cells:
        if cell.cell_type == "markdown":
            cell.source = "（旧版的说明）"
    assert submission.language_of(stale, assignment) == "zh"
    del stale.metadata["language_edition"]  # without the mark, the cells decide
    english = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    assert submission.language_of(english, assignment) == "en"
