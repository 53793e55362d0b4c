"""The 简体中文 edition. Drift guards on the catalogues, messages and plots in Chinese (drawn with an installed
CJK font or lab's shipped subset; English only if no font can draw them), and grading that gives a Chinese submission the English one's score."""
import ast
import copy
from collections import Counter
import csv
import json
import re
import warnings
import zipfile

import jupytext
import matplotlib
import nbformat
import pytest
from matplotlib import font_manager

import lab
from conftest import FONT_STATES, ROOT, STAND_IN_CJK
from grader import autograde, bundle, editions, i18n, sample_submissions, translation
from grader.assignment import load
from grader.feedback import visible_text
from grader.assignment import MUTANTS
from grader.paths import assignment_names, master_path
from lab import fonts
from lab import i18n as lab_i18n

NAMES = [name for name in assignment_names() if "zh" in translation.languages(name)]  # 01, 02 and 03 so far


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    lab.set_language("en")


def master(name):
    nb = jupytext.read(master_path(name))
    nb.metadata.pop("jupytext", None)
    return nb


# --- drift guards -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_master_cell_has_a_current_translation(name):
    assert translation.status(name, "zh") == []
    keys = [translation.cell_key(c) for c in master(name).cells]
    assert None not in keys and len(keys) == len(set(keys)), "every master cell needs one unique key"


HEADING = re.compile(r"^(#+) (.+?) \| (.+)$", re.M)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_two_editions_headings_mirror_each_other(name):
    """Each language's heading is the other's subtitle, by construction (a heading marked " |" in the sources)."""
    en, zh = (editions.read_master(name, language) for language in ("en", "zh"))
    pairs = 0
    for en_cell, zh_cell in zip(en.cells, zh.cells):
        if en_cell.cell_type != "markdown":
            continue
        ours, theirs = HEADING.findall(en_cell.source), HEADING.findall(zh_cell.source)
        assert len(ours) == len(theirs), translation.cell_key(en_cell)
        for (level, title, subtitle), (zh_level, zh_title, zh_subtitle) in zip(ours, theirs):
            assert level == zh_level and zh_title.endswith(subtitle) and title.endswith(zh_subtitle), (title, zh_title)
            assert not re.search(r"[\u4e00-\u9fff]", title + zh_subtitle) and re.search(r"[\u4e00-\u9fff]", subtitle)
            pairs += 1
    assert pairs >= load(name).figures.zh_headings  # its assignment.toml: every section heading of 01-03 carries the other language's


def test_the_english_subtitle_is_the_chinese_heading():
    """The case the review found: 02's Step 4 was subtitled 实现请求状态与调度循环 while its zh heading said 实现调度器."""
    step4 = {translation.cell_key(c): c.source for c in editions.read_master("02_decode_scheduling").cells}["md-step-4-implement"]
    assert step4.startswith("## Step 4: implement the scheduler | 第 4 节：实现调度器\n")


@pytest.mark.parametrize("own, other, expected", [
    ("# 01 · Continuous Batching |", "# 01 · 连续批处理 |", "# 01 · Continuous Batching | 连续批处理"),  # the number said once
    ("### TODO 3 · Design |\ntext", "### TODO 3 · 构造 |\n正文", "### TODO 3 · Design | 构造\ntext"),
    ("## Step 1: two counters |", "## 第 1 节：两个计数器 |", "## Step 1: two counters | 第 1 节：两个计数器"),
    ("## Model |\n| a | b |", None, "## Model\n| a | b |"),  # no other edition: the mark goes, a table row stays
])
def test_a_marked_heading_takes_the_other_heading(own, other, expected):
    assert translation.subtitled(own, other, "k") == expected


def test_a_heading_marked_in_one_language_only_fails():
    with pytest.raises(translation.TranslationError, match="'md-x': 2 heading"):
        translation.subtitled("## A |\n## B |", "## 甲 |\n## 乙", "md-x")


def english_headers(nb) -> list[str]:
    """Column headers of the first header row, and index names, in a notebook's HTML tables that are English words
    with no Chinese (a code name may follow its Chinese name, in the second header row or after it)."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            for head in re.findall(r"<thead>(.*?)</thead>", "".join(page), re.S):
                rows = re.findall(r"<tr[^>]*>(.*?)</tr>", head, re.S)
                shown = re.findall(r"<th[^>]*>(.*?)</th>", rows[0], re.S)
                shown += re.findall(r"<th[^>]*>(.*?)</th>", rows[-1], re.S)[:1] if len(rows) > 1 else []  # index names
                found += [t for t in map(str.strip, shown) if re.search(r"[A-Za-z]{3,}", t)
                          and not re.search(r"[\u4e00-\u9fff]", t) and t != "tick"]  # tick is written as is
    return found


@pytest.mark.parametrize("name", NAMES)
def test_a_zh_table_heads_every_column_in_chinese(name):
    nb = nbformat.read(ROOT / "solutions" / "zh" / f"{name}.ipynb", as_version=4)
    assert english_headers(nb) == []
    assert sum("<thead>" in "".join(o.get("data", {}).get("text/html", "")) for c in nb.cells for o in c.get("outputs", [])) >= load(name).figures.zh_tables


def table_line(line: str) -> bool:
    """A line of a table printed as text: two or more column names (lab.i18n.HEADERS_ZH's code names or their
    Chinese) that are its every word or stand apart by runs of spaces, or pandas' header row, indented past the
    index and made of snake_case names only. A sentence that names one (`max_wait=…`, 最长等待时长) is no table."""
    from lab.i18n import HEADERS_ZH
    names = set(HEADERS_ZH) | set(HEADERS_ZH.values())
    words = line.split()
    known = [w for w in words if w in names]
    if len(words) >= 2 and len(known) == len(words):
        return True
    if sum(w in names for w in re.split(r"\s{2,}", line.strip())) >= 2:
        return True
    return (line.startswith("  ") and len(words) >= 2 and all(w.isidentifier() for w in words)
            and any("_" in w for w in words))


def printed_tables(nb) -> list[str]:
    """The lines of stream outputs that look like a printed table (table_line): printed, pandas lines columns up by
    characters, and a Chinese character is two columns wide, so the numbers slide left."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", "")) if output.get("output_type") == "stream" else ""
            found += [line for line in text.splitlines() if table_line(line)]
    return found


@pytest.mark.parametrize("name", NAMES)
def test_a_zh_table_is_drawn_not_printed(name):
    nb = nbformat.read(ROOT / "solutions" / "zh" / f"{name}.ipynb", as_version=4)
    found = printed_tables(nb)
    assert not found, (f"solutions/zh/{name}.ipynb prints a table: {found[0]!r}. Printed, a table misaligns its "
                       "Chinese columns (a Chinese character is two columns wide): show it with lab.table(frame) as "
                       "a cell's last expression, so it is drawn as HTML")


def test_the_printed_table_check_catches_01s_old_describe():
    lab.set_language("zh")
    try:
        text = str(lab.table(lab.compare_policies(lab.FOUR_ON_TWO.jobs, 2)))
    finally:
        lab.set_language("en")
    cell = nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", name="stdout", text=text)])
    assert [line.split()[:2] for line in printed_tables(nbformat.v4.new_notebook(cells=[cell]))][:2] == [
        ["最大完工时间（tick）", "忙碌的槽位·tick"], ["makespan_ticks", "busy_slots"]]


@pytest.mark.parametrize("text, table", [
    ("max_wait=10：最长等待时长 10 个 tick，平均等待时长 2.5", False),   # issue 44's trial: a sentence, not a table
    ("max_wait 与 mean_wait", False),
    ("       arrival  output  wait_ticks\nid                           ", True),   # an assignment's own columns
    ("max_wait    mean_wait", True),
])
def test_a_printed_table_is_a_line_of_column_names_not_a_sentence_naming_one(text, table):
    cell = nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", name="stdout", text=text)])
    assert bool(printed_tables(nbformat.v4.new_notebook(cells=[cell]))) == table


def test_an_assignment_passes_its_own_chinese_headers():
    import pandas as pd
    frame = pd.DataFrame({"id": [1], "wait_ticks": [3], "max_wait": [4]}).set_index("id")
    lab.set_language("zh")
    shown = lab.table(frame, headers_zh={"wait_ticks": "等待（tick）", "id": "请求"})
    assert list(shown.columns) == [("等待（tick）", "wait_ticks"), ("最长等待", "max_wait")]
    assert shown.index.names == ["请求 id"]
    assert "wait_ticks" not in lab_i18n.HEADERS_ZH   # lab's own stay as they were
    lab.set_language("en")
    assert lab.table(frame, headers_zh={"wait_ticks": "等待"}) is frame


def test_the_header_check_catches_an_english_table():
    """The tables as they were before lab.table: 02's comparison headed makespan_ticks, busy_slots, ..."""
    import pandas as pd
    lab.set_language("zh")
    frame = lab.compare_policies(lab.FOUR_ON_TWO.jobs, 2)
    shown = [nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("execute_result", {"text/html": t._repr_html_()})])
             for t in (frame, lab.table(frame), pd.DataFrame({"x": [1]}).rename_axis("policy"))]
    assert english_headers(nbformat.v4.new_notebook(cells=shown[:1]))[:2] == ["makespan_ticks", "busy_slots"]
    assert english_headers(nbformat.v4.new_notebook(cells=shown[1:2])) == []
    assert english_headers(nbformat.v4.new_notebook(cells=shown[2:])) == ["policy"]


def test_a_cell_with_no_translation_fails():
    catalogue = translation.load_catalogue("02_decode_scheduling", "zh")
    del catalogue["todo3_tests"]
    with pytest.raises(translation.TranslationError, match="'todo3_tests' has no translation"):
        translation.translate(master("02_decode_scheduling"), "02_decode_scheduling", "zh", catalogue)


def test_a_code_cell_with_nothing_to_translate_needs_no_entry():
    """The template's zh.yml leaves its set-up cell blank (`setup_imports:`): it has no string to translate. make
    new-assignment stamps it, but the trial assignment's author wrote zh.yml anew from the template's layout, and
    translation status then said the untouched set-up cell "has no translation". Such a cell needs no entry; one
    given a string literal does."""
    from grader.new_assignment import TEMPLATE

    template = jupytext.read(TEMPLATE / "master.py")
    blank = [key for key, entry in translation.load_catalogue("", "zh", TEMPLATE / "zh.yml").items() if not entry]
    assert blank == ["setup_imports"]
    cell = next(c for c in template.cells if translation.cell_key(c) == "setup_imports")
    assert cell.cell_type == "code" and translation.comment_blocks(cell.source)   # comments, translated or not
    translation.check_entry(cell, None, "setup_imports")
    cell.source += '\nprint("ready")'
    with pytest.raises(translation.TranslationError, match="'setup_imports' has no translation"):
        translation.check_entry(cell, None, "setup_imports")
    name = "01_continuous_batching"   # a whole edition translates alike without the entries of such cells
    catalogue = translation.load_catalogue(name, "zh")
    nothing = [key for c in master(name).cells if c.cell_type == "code" and not translation.string_tokens(c.source)
               and "comments" not in catalogue[key := translation.cell_key(c)]]
    assert nothing
    without = {key: entry for key, entry in catalogue.items() if key not in nothing}
    assert ([c.source for c in translation.translate(master(name), name, "zh", without).cells]
            == [c.source for c in translation.translate(master(name), name, "zh", catalogue).cells])


def test_a_new_master_cell_without_a_key_fails():
    nb = master("01_continuous_batching")
    nb.cells.insert(3, nbformat.v4.new_markdown_cell("A new paragraph"))
    with pytest.raises(translation.TranslationError, match="cell 3 has no key"):
        translation.translate(nb, "01_continuous_batching", "zh")


@pytest.mark.parametrize("key, edit", [
    ("md-tick-model-leaves", lambda s: s.replace("no prefill", "no prefill and no decode")),
    ("todo3_tests", lambda s: s.replace("static and continuous makespans are equal", "makespans are equal")),
])
def test_a_stale_translation_fails_and_names_the_cell(key, edit):
    nb = master("01_continuous_batching")
    cell = next(c for c in nb.cells if translation.cell_key(c) == key)
    cell.source = edit(cell.source)
    with pytest.raises(translation.TranslationError, match=f"cell '{key}': the English changed"):
        translation.translate(nb, "01_continuous_batching", "zh")


def test_a_fingerprint_of_digits_only_is_stamped_as_a_string(tmp_path, monkeypatch):
    """YAML would read `en: 461758283256` as an int, and the cell would look stale forever; stamp quotes it."""
    path = tmp_path / "catalogue.yml"
    path.write_text("cells:\n  md-glossary: {}\n  md-03-batch-scheduling:\n    en: 0\n", encoding="utf-8")
    monkeypatch.setattr(translation, "catalogue_path", lambda name, language: path)
    monkeypatch.setattr(translation, "fingerprint", lambda cell: "461758283256")
    translation.stamp("03_batch_scheduling", "zh", ["md-glossary", "md-03-batch-scheduling"])
    cells = translation.load_catalogue("03_batch_scheduling", "zh", path)
    assert cells["md-glossary"]["en"] == cells["md-03-batch-scheduling"]["en"] == "461758283256"
    assert translation.load_catalogue("03_batch_scheduling", "zh", path)  # still valid YAML
    path.write_text("cells:\n  md-glossary:\n    en: 461758283256\n", encoding="utf-8")  # what stamp used to write
    assert translation.load_catalogue("03_batch_scheduling", "zh", path)["md-glossary"]["en"] != "461758283256"


def test_a_code_change_outside_strings_keeps_the_translation():
    """The fingerprint of a code cell is its strings: a helper editing set-up code does not stale it."""
    nb = master("02_decode_scheduling")
    cell = next(c for c in nb.cells if translation.cell_key(c) == "code-request-summary")
    cell.source += "\nsummary_rows = 0"
    translation.translate(nb, "02_decode_scheduling", "zh")


def test_a_translated_string_missing_from_the_master_fails():
    catalogue = copy.deepcopy(translation.load_catalogue("01_continuous_batching", "zh"))
    catalogue["code-jobs"]["strings"].append({"from": '"no such string"', "to": '"没有"'})
    with pytest.raises(translation.TranslationError, match="'code-jobs': translated string not in the master"):
        translation.translate(master("01_continuous_batching"), "01_continuous_batching", "zh", catalogue)


def code_pairs(english, chinese):
    assert len(english.cells) == len(chinese.cells)
    return [(a.source, b.source) for a, b in zip(english.cells, chinese.cells) if a.cell_type == "code"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_chinese_code_is_the_english_code_apart_from_strings(name):
    """Masters, student and solved editions: same AST once strings are blanked (comments, translated or not,
    never reach it)."""
    pairs = code_pairs(editions.read_master(name), editions.read_master(name, "zh"))
    for folder in ("notebooks", "solutions"):
        pairs += code_pairs(nbformat.read(ROOT / folder / f"{name}.ipynb", as_version=4),
                            nbformat.read(ROOT / folder / "zh" / f"{name}.ipynb", as_version=4))
    assert pairs and all(translation.same_code(en, zh) for en, zh in pairs)
    changed = sum(en != zh for en, zh in pairs)
    assert changed >= load(name).figures.zh_code_cells, "the zh code cells carry translated messages"


def test_the_ast_guard_catches_changed_code():
    en = 'expect(got, 3, "TODO 1: three")\nprint(f"{n} jobs")  # a comment'
    assert translation.same_code(en, 'expect(got, 3, "TODO 1：三")\nprint(f"{n} 个作业")  # 注释')
    assert not translation.same_code(en, 'expect(got, 4, "TODO 1：三")\nprint(f"{n} 个作业")')
    assert not translation.same_code(en, 'expect(got, 3, "TODO 1：三")\nprint(f"{m} 个作业")')
    assert not translation.same_code(en, 'expect(got, 3, "TODO 1：三")\nprint(f"{n} 个作业")\nx = 1')
    catalogue = copy.deepcopy(translation.load_catalogue("01_continuous_batching", "zh"))
    catalogue["code-jobs"]["strings"][0]["to"] = '"正确" if True else ""'  # a "translation" that is code
    nb = translation.translate(master("01_continuous_batching"), "01_continuous_batching", "zh", catalogue)
    en_cell = next(c for c in editions.read_master("01_continuous_batching").cells if translation.cell_key(c) == "code-jobs")
    zh_cell = next(c for c in nb.cells if translation.cell_key(c) == "code-jobs")
    assert not translation.same_code(en_cell.source, zh_cell.source)


# --- translated comments ------------------------------------------------------------------------------

def zh_cell(nb, key):
    return next(c for c in nb.cells if translation.cell_key(c) == key)


def edition_cell(folder, name, key, language="zh"):
    """The cell `key` of a generated edition (which drops cell metadata: found by its place in the master)."""
    index = [translation.cell_key(c) for c in master(name).cells].index(key)
    path = ROOT / folder / ("zh" if language == "zh" else "") / f"{name}.ipynb"
    return nbformat.read(path, as_version=4).cells[index]


def test_comment_blocks_are_runs_of_whole_line_comments_or_one_trailing_comment():
    source = ("# one\n#\n# two\nx = 1  # trailing\n    # indented\n### BEGIN SOLUTION\n# three\n"
              "%matplotlib inline\n#%not a comment to translate\ny = '# not a comment'\n")
    assert [(text, indent) for _, _, text, indent in translation.comment_blocks(source)] == [
        ("one\n\ntwo", ""), ("trailing", None), ("indented", "    "), ("three", "")]
    new = translation._replace_comments(source, {"one\n\ntwo": "一\n\n二", "trailing": "行尾", "indented": "缩进\n两行"}, "k")
    assert new.startswith("# 一\n#\n# 二\nx = 1  # 行尾\n    # 缩进\n    # 两行\n### BEGIN SOLUTION\n# three\n")
    with pytest.raises(translation.TranslationError, match="a trailing comment must stay on one line"):
        translation._replace_comments(source, {"trailing": "行尾\n两行"}, "k")


@pytest.mark.slow
def test_a_comment_translation_is_applied():
    """03's worked example explains itself in a two-line comment; the solved edition's TODO 1 in trailing ones."""
    en, zh = editions.read_master("03_batch_scheduling"), editions.read_master("03_batch_scheduling", "zh")
    en_cell, cell = zh_cell(en, "code-worked-batch"), zh_cell(zh, "code-worked-batch")
    assert cell.source.startswith("# 算例的三步，照上面的表格手工录入（这里没有运行调度器）。TODO 1 完成后，\n# 紧跟在它的检查之后的单元格")
    assert "typed in by hand" in en_cell.source and "typed in by hand" not in cell.source
    assert cell.source.split("\n")[2:] == en_cell.source.split("\n")[2:]  # the code itself, byte for byte
    solved = edition_cell("solutions", "03_batch_scheduling", "todo1").source
    assert "break  # 队头阻塞：第一个放不下的请求结束本步的准入" in solved and "def schedule(self)" in solved
    # each line of a translation is a comment: a `to` cannot smuggle code in
    catalogue = copy.deepcopy(translation.load_catalogue("03_batch_scheduling", "zh"))
    catalogue["code-worked-batch"]["comments"][0]["to"] = "说明\nby_hand = []"
    nb = translation.translate(master("03_batch_scheduling"), "03_batch_scheduling", "zh", catalogue)
    assert zh_cell(nb, "code-worked-batch").source.startswith("# 说明\n# by_hand = []\nby_hand = [")
    assert translation.same_code(en_cell.source, zh_cell(nb, "code-worked-batch").source)


def test_comment_fingerprints_leave_the_strings_fingerprints_alone():
    """`en` hashes the strings only, as before comments were translated; `en_comments` hashes the comments."""
    nb = master("03_batch_scheduling")
    cell = zh_cell(nb, "code-worked-batch")
    before = translation.fingerprint(cell), translation.comments_fingerprint(cell)
    cell.source = cell.source.replace("# TODO 1 works", "# TODO 1 passes")
    assert translation.fingerprint(cell) == before[0] and translation.comments_fingerprint(cell) != before[1]
    catalogue = translation.load_catalogue("03_batch_scheduling", "zh")
    assert catalogue["code-worked-batch"]["en"] == before[0] and catalogue["code-worked-batch"]["en_comments"] == before[1]


@pytest.mark.slow
@pytest.mark.parametrize("key, edit", [
    ("code-worked-batch", lambda s: s.replace("(no scheduler runs here)", "(nothing runs here)")),
    ("todo1", lambda s: s.replace("# seq itself was preempted", "# seq itself went")),  # a reference solution's
    ("code-storm-cause", lambda s: "# A new comment.\n" + s),
])
def test_a_stale_comment_translation_is_reported(key, edit, tmp_path, monkeypatch, capsys):
    name = "03_batch_scheduling"
    nb = master(name)
    zh_cell(nb, key).source = edit(zh_cell(nb, key).source)
    with pytest.raises(translation.TranslationError, match=f"cell '{key}': the English comments changed"):
        translation.translate(nb, name, "zh")
    source = master_path(name).read_text(encoding="utf-8")
    changed = tmp_path / f"{name}.py"
    changed.write_text(source.replace(zh_cell(master(name), key).source, zh_cell(nb, key).source, 1), encoding="utf-8")
    assert changed.read_text(encoding="utf-8") != source
    monkeypatch.setattr("grader.paths.master_path", lambda n: changed if n == name else master_path(n))
    problems = translation.status(name, "zh")
    assert len(problems) == 1 and f"cell '{key}': the English comments changed" in problems[0]  # `en` still current
    assert translation.main(["status", name]) == 1 and "the English comments changed" in capsys.readouterr().out


def test_the_translation_command_prints_its_usage_for_help(monkeypatch, capsys):
    """Issue 44: `python -m grader.translation --help` ran status over every assignment instead."""
    monkeypatch.setattr(translation, "status", lambda *a: pytest.fail("--help ran status"))
    for args in (["--help"], ["status", "--help"], ["stamp", "--help"]):
        with pytest.raises(SystemExit) as stopped:
            translation.main(args)
        assert stopped.value.code == 0 and "usage: python -m grader.translation" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        translation.main(["stamp", "01_continuous_batching"])   # no LANG, no KEY
    assert stopped.value.code == 2


def test_a_translated_comment_missing_from_the_master_fails():
    catalogue = copy.deepcopy(translation.load_catalogue("03_batch_scheduling", "zh"))
    catalogue["code-storm-cause"]["comments"].append({"from": "no such comment", "to": "没有"})
    with pytest.raises(translation.TranslationError, match="'code-storm-cause': translated comment not in the master"):
        translation.translate(master("03_batch_scheduling"), "03_batch_scheduling", "zh", catalogue)
    del catalogue["code-storm-cause"]["en_comments"]
    with pytest.raises(translation.TranslationError, match="'code-storm-cause': the English comments changed"):
        translation.translate(master("03_batch_scheduling"), "03_batch_scheduling", "zh", catalogue)


@pytest.mark.slow
def test_stamp_restamps_the_comments_fingerprint(tmp_path, monkeypatch):
    name = "03_batch_scheduling"
    path = tmp_path / "catalogue.yml"
    text = translation.catalogue_path(name, "zh").read_text(encoding="utf-8")
    current = translation.load_catalogue(name, "zh")["code-storm-cause"]["en_comments"]
    path.write_text(text.replace(f"    en_comments: {current}", "    en_comments: 0", 1), encoding="utf-8")
    monkeypatch.setattr(translation, "catalogue_path", lambda n, language: path)
    assert any("'code-storm-cause': the English comments changed" in p for p in translation.status(name, "zh"))
    translation.stamp(name, "zh", ["code-storm-cause"])
    assert translation.status(name, "zh") == [] and path.read_text(encoding="utf-8") == text


def test_a_comment_only_difference_passes_the_code_guard_and_a_code_change_fails_it():
    """In a zh cell whose comments are translated: the AST has no comments, so only the code is compared."""
    en = edition_cell("solutions", "03_batch_scheduling", "code-storm-cause", "en").source
    zh = edition_cell("solutions", "03_batch_scheduling", "code-storm-cause").source
    assert en != zh and "吞吐为什么下降" in zh and translation.same_code(en, zh)
    planted = zh.replace("/ len(run.steps)", "/ max(len(run.steps), 1)")
    assert planted != zh and not translation.same_code(en, planted)
    assert not translation.same_code(en, zh.replace("# 重算时间", "recompute_s = 0\n# 重算时间"))


def english_comments(path) -> list[str]:
    """Comment lines of a notebook's code cells with no Chinese in them, but nbgrader's stub marker."""
    nb = nbformat.read(path, as_version=4)
    return [f"{path.name} cell {i}: {line}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for _, _, text, _ in translation.comment_blocks(cell.source) for line in text.split("\n")
            if line.strip() and line != "YOUR CODE HERE" and not has_hanzi(line)]


@pytest.mark.parametrize("name", NAMES)
def test_every_comment_a_zh_student_reads_is_chinese(name, tmp_path):
    for folder in ("notebooks", "solutions"):
        assert english_comments(ROOT / folder / "zh" / f"{name}.ipynb") == []
    nb = nbformat.read(ROOT / "solutions" / "zh" / f"{name}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and translation.comment_blocks(c.source))
    cell.source = "# an English explanation\n" + cell.source
    nbformat.write(nb, tmp_path / f"{name}.ipynb")
    assert english_comments(tmp_path / f"{name}.ipynb") == [f"{name}.ipynb cell {nb.cells.index(cell)}: an English explanation"]


def numbers(text):
    """The numbers of a text, thousands separators left out: English writes 1,000, Chinese 1000."""
    return Counter(re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", n) for n in re.findall(r"\d+(?:[.,]\d+)*", text))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_number_of_the_english_prose_is_in_the_chinese(name):
    """test_prose_numbers pins the English prose to the outputs; this carries the pins over to the translation."""
    missing = {}
    for en, zh in zip(editions.read_master(name).cells, editions.read_master(name, "zh").cells):
        if en.cell_type == "markdown" and numbers(en.source) - numbers(zh.source):
            missing[translation.cell_key(en)] = dict(numbers(en.source) - numbers(zh.source))
    assert missing == {}
    assert numbers("静态需要 13 个 tick") - numbers("静态需要 12 个 tick")  # a changed number is seen
    assert not numbers("at most 1,000 tokens, 20,000 in all") - numbers("至多 1000 个词元，共 20000 个")  # grouping is style
    assert numbers("at most 1,000 tokens") - numbers("至多 100 个词元") and numbers("1,5") - numbers("15")


@pytest.mark.parametrize("name", NAMES)
def test_zh_edition_reads_as_chinese_and_links_its_twin(name):
    zh = nbformat.read(ROOT / "notebooks" / "zh" / f"{name}.ipynb", as_version=4)
    en = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    prose = "".join(c.source for c in zh.cells if c.cell_type == "markdown")
    figures = load(name).figures   # its assignment.toml
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in prose) >= figures.zh_characters
    for term in figures.zh_terms:   # terms it must use as its glossary does
        assert term in prose, term
    assert "术语表 | Glossary" in zh.cells[1].source and "Glossary | 术语表" in en.cells[1].source
    assert f"(../{name}.ipynb)" in zh.cells[0].source and f"(zh/{name}.ipynb)" in en.cells[0].source
    assert (ROOT / "notebooks" / f"zh/{name}.ipynb").exists()


# Half-width , ; : ! ? ( ) touching a Chinese character in prose (code spans, math and link targets aside):
# a Chinese sentence takes the full-width marks，；：！？（）.
HALF_WIDTH = re.compile(r"[\u4e00-\u9fff][,;:!?(]|[,;:!?)][\u4e00-\u9fff]")


def half_width_in_chinese(markdown: str) -> list[str]:
    prose = re.sub(r"\]\([^)]*\)", "]", re.sub(r"\$[^$]*\$", "$", re.sub(r"`[^`]*`", "`", markdown)))
    return [prose[max(0, m.start() - 15):m.end() + 15] for m in HALF_WIDTH.finditer(prose)]


def test_the_half_width_check_catches_a_colon_after_chinese():
    assert half_width_in_chinese("*English edition | 英文版:* [../01.ipynb](../01.ipynb)")
    assert half_width_in_chinese("见第 2 节(预算)") and not half_width_in_chinese("调用 `f(x, y)`，见 [链接](a(b).md)")


@pytest.mark.parametrize("name", NAMES)
def test_zh_prose_uses_full_width_punctuation(name):
    zh = nbformat.read(ROOT / "notebooks" / "zh" / f"{name}.ipynb", as_version=4)
    found = [hit for c in zh.cells if c.cell_type == "markdown" for hit in half_width_in_chinese(c.source)]
    assert not found, f"half-width punctuation in Chinese prose (write ，；：！？（）): {found}"


# --- messages -----------------------------------------------------------------------------------------

def templates_used(source: str) -> set[str]:
    """Literal first arguments of tr(...) and label(...) calls, and of lab.i18n's refused(...) and Phrase(...) (tr() later)."""
    found = set()
    for node in ast.walk(ast.parse(translation._code_lines(source))):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("tr", "label", "refused", "Phrase")
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


@pytest.mark.slow
def test_every_lab_message_and_label_has_a_chinese_text():
    sources = [p.read_text() for p in (ROOT / "lab").rglob("*.py")]
    sources += [c.source for name in assignment_names() for c in editions.read_master(name).cells if c.cell_type == "code"]
    used = set().union(*(templates_used(s) for s in sources))
    assert len(used) > 40
    assert sorted(used - set(lab_i18n.ZH)) == []
    assert templates_used('tr("a message nobody translated")') - set(lab_i18n.ZH) == {"a message nobody translated"}
    for template in used:  # the same placeholders in both languages
        assert sorted(re.findall(r"{\w+}", template)) == sorted(re.findall(r"{\w+}", lab_i18n.ZH[template])), template


# Where text goes into a figure: matplotlib's drawing methods and lab's plot_* helpers, or a keyword naming figure text.
DRAWING_CALLS = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "text", "annotate", "legend", "set_xticks", "set_yticks",
                 "set_xticklabels", "set_yticklabels", "plot", "scatter", "bar", "barh", "step", "axhline", "fill_between"}
DRAWING_KEYWORDS = {"title", "label", "xlabel", "ylabel"}
PASS_THROUGH = (ast.List, ast.Tuple, ast.ListComp, ast.IfExp, ast.BoolOp, ast.Starred)


def called(node) -> str:
    """The name a call goes through: f(...) and x.f(...) give "f"; "" if `node` is no call."""
    func = getattr(node, "func", None)
    return getattr(func, "id", getattr(func, "attr", "")) if isinstance(node, ast.Call) else ""


def labels_not_drawn(source: str) -> list[str]:
    """label(...) calls whose text is not handed straight to a drawing call, so it may be printed (use tr there)."""
    tree = ast.parse(translation._code_lines(source))
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if called(node) != "label":
            continue
        up = parent[node]
        while isinstance(up, PASS_THROUGH) or isinstance(up, ast.comprehension) or called(up) == "label" \
                or (isinstance(up, ast.keyword) and called(parent[up]) == "label"):  # a field of a drawn label
            up = parent[up]
        drawn = (isinstance(up, ast.keyword) and up.arg in DRAWING_KEYWORDS) or called(up) in DRAWING_CALLS \
            or called(up).startswith("plot_")
        if not drawn:
            found.append(ast.unparse(node))
    return found


@pytest.mark.slow
def test_label_is_called_only_where_text_is_drawn():
    """label() falls back to English when no font can draw a string, so it is for figure text only: printed text uses tr()."""
    sources = [*(ROOT / "lab").rglob("*.py"), *(ROOT / "grader").rglob("*.py"), *(ROOT / "policybench").rglob("*.py")]
    callers = {str(p.relative_to(ROOT)) for p in sources
               if p.name != "i18n.py" and "assignments" not in p.parts and any(called(n) == "label" for n in ast.walk(ast.parse(p.read_text())))}
    assert callers == {"lab/plots.py", "lab/engine/plots.py"}  # modules that only draw
    for name in assignment_names():
        for cell in editions.read_master(name).cells:
            if cell.cell_type == "code":
                assert labels_not_drawn(cell.source) == [], f"{name}: {cell.source[:200]}"
    # the check can fail: notebook 03 once printed a policy name made by label()
    assert labels_not_drawn('slo_row(aging_1s, 0, lab.label("aging, 1 s per level"))') == ['lab.label(\'aging, 1 s per level\')']
    assert labels_not_drawn('ax.set_title(lab.label("a"))\nax.plot([1], label=lab.label("b"))\nprint(lab.tr("c"))') == []


def test_messages_students_meet_follow_the_language():
    @lab.todo("TODO 9")
    def stub():
        raise NotImplementedError()

    lab.set_language("zh")
    with pytest.raises(NotImplementedError, match="TODO 9（stub）尚未实现"):
        stub()
    @lab.todo("TODO 8")
    def other_stub():
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        other_stub()
    with pytest.raises(lab.TodoNotFinished, match="这个单元格需要先完成 TODO 9、TODO 8：请补全它们的 TODO 单元格"):
        lab.require_todos("TODO 9", "TODO 8")
    with pytest.raises(lab.CheckFailed, match="期望：2\n    实际：1"):
        lab.expect(1, 2, "规则")
    with pytest.raises(ValueError, match="slots 必须 >= 1"):
        lab.schedule([], 0, True)
    with pytest.raises(ValueError, match="request_id 重复"):
        sim = lab.DecodeSchedulerBase()
        sim.queue.append(lab.RequestState(1, 1, 1))
        sim._check_new_request(1, 1, 1, 0, False, 1, None, True)
    lab.set_language("en")
    with pytest.raises(NotImplementedError, match=r"TODO 9 \(stub\) is not implemented yet"):
        stub()
    with pytest.raises(ValueError, match="slots must be >= 1"):
        lab.schedule([], 0, True)
    with pytest.raises(ValueError, match="language must be one of"):
        lab.set_language("fr")


# --- plots --------------------------------------------------------------------------------------------

def glyph_warnings(draw) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = draw()
        fig.canvas.draw()
    import matplotlib.pyplot as plt
    plt.close(fig)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def all_texts(fig) -> str:
    """Every text of a figure, which is then closed (tests draw many)."""
    import matplotlib.pyplot as plt
    text = " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))
    plt.close(fig)
    return text


@pytest.fixture
def clean_fonts(monkeypatch):
    monkeypatch.setitem(matplotlib.rcParams, "font.family", ["sans-serif"])


@pytest.fixture(params=FONT_STATES)
def fonts_state(request, clean_fonts, monkeypatch):
    """Each plot test runs with this machine's CJK fonts as installed, and hidden as on a fresh machine (where lab's
    shipped subset alone draws Chinese)."""
    monkeypatch.setenv(fonts.HIDE_ENV, "1" if request.param == "hidden" else "0")
    if request.param == "hidden":
        assert fonts.find_cjk_font() is None and fonts.cjk_families() == [fonts.SHIPPED_FAMILY]
    return request.param


def has_hanzi(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.slow
def test_zh_plot_labels_are_chinese_with_the_fonts_installed_or_hidden(fonts_state):
    lab.set_language("zh")
    text = all_texts(lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2))
    assert "槽位利用率" in text and "槽位 0" in text
    # every Hanzi of the labels has a glyph in a CJK font lab put in the fallback list (the shipped one at least)
    assert fonts.SHIPPED_FAMILY in matplotlib.rcParams["font.family"]
    assert fonts.missing_glyphs(text) == [] and fonts.missing_glyphs(text, [fonts.SHIPPED_FAMILY]) == []
    assert glyph_warnings(lambda: lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2)) == []  # never tofu boxes
    assert glyph_warnings(lab.plot_lifecycle) == []


@pytest.mark.slow
def test_labels_fall_back_to_english_only_where_no_font_can_draw_them(clean_fonts, monkeypatch):
    """No installed CJK font: the shipped subset draws Chinese. English only without it (a broken install), or for a
    string with a character it lacks; never tofu boxes."""
    monkeypatch.setattr(fonts, "CJK_FONTS", ("No Such Font SC",))
    monkeypatch.setattr(fonts.find_cjk_font, "__defaults__", (("No Such Font SC",),))
    monkeypatch.setattr(fonts.cjk_families, "__defaults__", (("No Such Font SC",),))
    monkeypatch.setattr(fonts.use_cjk_font, "__defaults__", (("No Such Font SC",),))
    assert fonts.find_cjk_font() is None and fonts.use_cjk_font() is True
    lab.set_language("zh")
    assert "槽位利用率" in all_texts(lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2))
    monkeypatch.setitem(lab_i18n.ZH, "tick", "时钟龘")   # 龘: a character the subset lacks
    assert lab.label("tick") == "tick" and lab.label("slot {slot}", slot=1) == "槽位 1"
    monkeypatch.setattr(fonts, "SHIPPED_FONT", fonts.SHIPPED_DIR / "no-such-font.otf")
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    monkeypatch.setattr(fonts, "SHIPPED_FAMILY", "No Such Shipped Font")
    assert fonts.use_cjk_font() is False
    text = all_texts(lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2))
    assert "utilization" in text and not has_hanzi(text)
    assert glyph_warnings(lambda: lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2)) == []
    assert matplotlib.rcParams["font.family"] == ["sans-serif"]


def test_the_hiding_switch_is_read_by_lab_fonts(clean_fonts, monkeypatch):
    """LAB_HIDE_CJK_FONTS=1 hides a CJK font lab would otherwise find (a stand-in here: any machine has one)."""
    monkeypatch.setattr(font_manager.fontManager, "ttflist", [*font_manager.fontManager.ttflist,
                        font_manager.FontEntry(fname="stand-in.ttf", name=STAND_IN_CJK)])
    monkeypatch.setenv(fonts.HIDE_ENV, "0")
    assert fonts.find_cjk_font() == STAND_IN_CJK
    monkeypatch.setenv(fonts.HIDE_ENV, "1")
    assert fonts.find_cjk_font() is None and fonts.use_cjk_font() is True   # the shipped subset is never hidden
    assert matplotlib.rcParams["font.family"] == ["sans-serif", fonts.SHIPPED_FAMILY]


def test_printed_text_is_the_same_whatever_the_fonts(clean_fonts, monkeypatch):
    """tr() and what lab prints, raises or tabulates read the language only; label() alone asks for a font."""
    lab.set_language("zh")
    seen = {}
    for found in (None, STAND_IN_CJK):  # no CJK font at all (not even the shipped one), and one
        monkeypatch.setattr(fonts, "cjk_families", lambda *_, found=found: [found] if found else [])
        monkeypatch.setattr(fonts, "missing_glyphs", lambda *_: [])
        with pytest.raises(lab.CheckFailed) as check:
            lab.expect(1, 2, lab.tr("no id active twice"))
        with pytest.raises(ValueError) as error:
            lab.schedule([], 0, True)
        seen[found] = {"tr": [lab.tr(t, **dict.fromkeys(re.findall(r"{(\w+)}", t), 1)) for t in lab_i18n.ZH],
                       "slo": lab.engine.slo_misses(SLO_ROWS[0]), "check": str(check.value), "error": str(error.value),
                       "label": lab.label("aging, 1 s per level")}
    assert seen[None].pop("label") == "aging, 1 s per level" and seen[STAND_IN_CJK].pop("label") == "aging_1s（老化，每级 1 s）"
    assert seen[None] == seen[STAND_IN_CJK] and "期望：2" in seen[None]["check"] and "slots 必须" in seen[None]["error"]


STEPS = [{"step": 0, "num_decode_tokens": 0, "num_prefill_tokens": 8, "num_batched_tokens": 8, "max_num_batched_tokens": 16,
          "num_used_blocks": 2, "num_blocks": 4, "preempted": []},
         {"step": 1, "num_decode_tokens": 1, "num_prefill_tokens": 0, "num_batched_tokens": 1, "max_num_batched_tokens": 16,
          "num_used_blocks": 3, "num_blocks": 4, "preempted": [7]}]
SLO_ROWS = [{"policy": "fcfs", "trace": 0, "class0_p99_ttft_ms": 900.0, "max_wait_ms": 4000.0}]
ENGINE_PLOTS = {"batch": lambda: lab.engine.plot_batch_composition(STEPS), "kv": lambda: lab.engine.plot_kv_occupancy(STEPS),
                # a row named as notebook 03 names it: printed in the edition's language, drawn as the fonts allow
                "slo": lambda: lab.engine.plot_slo(SLO_ROWS + [{**SLO_ROWS[0], "policy": lab.tr("aging, 1 s per level")}])}


@pytest.mark.slow
def test_notebook_03_plots_and_slo_messages_follow_the_language(fonts_state):
    """lab.engine's plots (notebook 03) label in Chinese with the CJK fonts installed or hidden (the shipped subset
    draws them); its SLO verdicts are printed, so they are in Chinese whatever the fonts."""
    misses = lab.engine.slo_misses(SLO_ROWS[0])
    assert misses == ["class-0 p99 TTFT 900 ms > 700 ms"]
    lab.set_language("zh")
    assert lab.engine.slo_misses(SLO_ROWS[0]) == ["类别 0 的 p99 TTFT 900 ms > 700 ms"]
    texts = {name: all_texts(draw()) for name, draw in ENGINE_PLOTS.items()}
    assert "解码词元" in texts["batch"] and "引擎步" in texts["batch"] and "每一步计算什么" in texts["batch"]
    assert "抢占（共 1 次）" in texts["kv"] and "池大小" in texts["kv"]
    assert "满足 SLO" in texts["slo"] and "类别 0 的 p99 TTFT（ms）" in texts["slo"] and "aging_1s（老化，每级 1 s）" in texts["slo"]
    assert all(glyph_warnings(draw) == [] for draw in ENGINE_PLOTS.values())
    lab.set_language("en")
    assert "engine step" in all_texts(ENGINE_PLOTS["batch"]()) and "preemption (1 in all)" in all_texts(ENGINE_PLOTS["kv"]())


def test_the_tofu_detector_fires_when_hanzi_meet_a_latin_font(clean_fonts):
    """The check above can fail: Chinese text drawn with DejaVu Sans alone is reported as missing glyphs."""
    import matplotlib.pyplot as plt

    def draw():
        fig, ax = plt.subplots()
        ax.set_title("槽位利用率", family="DejaVu Sans")
        return fig

    assert glyph_warnings(draw)


# --- grading ------------------------------------------------------------------------------------------

def zh_reference(name):
    return editions.reference_of(editions.read_master(name, "zh"))


@pytest.fixture(scope="module")
def mixed_class(tmp_path_factory):
    """One folder, both editions: solved and broken answers, each typed into the English and the zh edition."""
    name = "01_continuous_batching"
    en_ref, zh_ref = editions.reference_answers(name), zh_reference(name)
    assert en_ref != zh_ref  # the zh answers carry Chinese docstrings and messages
    mutant = next(m for m in MUTANTS[name] if m.answer_id == "todo4")
    batch = {
        "en_solved": sample_submissions.filled(name, en_ref),
        "zh_solved": sample_submissions.filled(name, zh_ref, "zh"),
        "en_broken": sample_submissions.filled(name, en_ref | {"todo4": mutant.apply(en_ref["todo4"])}),
        "zh_broken": sample_submissions.filled(name, zh_ref | {"todo4": mutant.apply(zh_ref["todo4"])}, "zh"),
        "zh_untouched": sample_submissions.release(name, "zh"),
    }
    subs, out = tmp_path_factory.mktemp("subs"), tmp_path_factory.mktemp("out")
    sample_submissions.write(batch, subs)
    autograde.run(name, subs, out, jobs=0, cell_timeout=20)
    rows = {row.pop("student_id"): row for row in csv.DictReader(open(out / "grades.csv"))}
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    return out, rows, report


@pytest.mark.slow
def test_a_zh_submission_scores_what_the_english_one_scores(mixed_class):
    _, rows, report = mixed_class
    assert rows["zh_solved"] == rows["en_solved"] and rows["en_solved"]["total"] == rows["en_solved"]["max_total"]
    assert rows["zh_broken"] == rows["en_broken"]
    assert 0 < float(rows["en_broken"]["todo4"]) < 3 and float(rows["en_broken"]["total"]) < float(rows["en_solved"]["total"])
    assert float(rows["zh_untouched"]["total"]) == 0
    assert {s: r["language"] for s, r in report.items()} == {
        "en_solved": "en", "en_broken": "en", "zh_solved": "zh", "zh_broken": "zh", "zh_untouched": "zh"}
    assert all(r["status"] == "graded" for r in report.values())
    # each was repaired against its own edition's release: nothing looks edited, deleted or duplicated
    assert not [w for r in report.values() for w in r["warnings"] if "edited" in w or "deleted" in w or "appears" in w]


@pytest.mark.slow
def test_feedback_speaks_the_submission_language(mixed_class):
    out, _, _ = mixed_class
    zh = visible_text((out / "feedback" / "zh_broken.html").read_text())
    en = visible_text((out / "feedback" / "en_broken.html").read_text())
    assert "得分" in zh and "条规则中" in zh and "[未通过] 静态：每组持续到组内最长的作业结束" in zh
    assert "正确的结果通过检查" in zh and "（在本 notebook 之外评分：隐藏测试单独重放这个 TODO。）" in zh  # zh kernel, zh notes
    assert "Score" in en and "[FAIL] static: each group lasts as long as its longest job" in en
    assert "条规则中" not in en and "[未通过]" not in en and "得分" not in en  # headings keep their Chinese subtitles


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NAMES if n != "01_continuous_batching"])  # 01: mixed_class above
def test_every_zh_edition_is_graded_like_the_english_one(name, tmp_path):
    """Full marks for the zh reference, zero for the untouched zh release, and feedback with the Chinese rule names."""
    en_ref, zh_ref = editions.reference_answers(name), zh_reference(name)
    assert en_ref != zh_ref  # the zh answers carry Chinese docstrings and messages
    batch = {"en_solved": sample_submissions.filled(name, en_ref), "zh_solved": sample_submissions.filled(name, zh_ref, "zh"),
             "zh_untouched": sample_submissions.release(name, "zh")}
    subs, out = tmp_path / "subs", tmp_path / "out"
    sample_submissions.write(batch, subs)
    autograde.run(name, subs, out, jobs=0, cell_timeout=30)
    rows = {row.pop("student_id"): row for row in csv.DictReader(open(out / "grades.csv"))}
    report = {s["student_id"]: s for s in json.loads((out / "report.json").read_text())["students"]}
    assert rows["zh_solved"] == rows["en_solved"] and rows["zh_solved"]["total"] == rows["zh_solved"]["max_total"]
    assert float(rows["zh_untouched"]["total"]) == 0
    assert report["zh_solved"]["language"] == "zh" and report["en_solved"]["language"] == "en"
    assert not [w for r in report.values() for w in r["warnings"] if "edited" in w or "deleted" in w or "appears" in w]
    page = visible_text((out / "feedback" / "zh_solved.html").read_text())
    english = load(name).tasks(1)[-1].rules[0].name
    last_rule = i18n.rule_name(english, "zh")   # its names_zh.py's Chinese name
    assert last_rule != english and re.search("[\u4e00-\u9fff]", last_rule), english
    assert "得分" in page and f"[通过] {last_rule}" in page and "[未通过]" not in page


def test_every_rule_name_has_a_chinese_name():
    names = {rule.name for name in NAMES for task in load(name).tasks(1) for rule in task.rules}
    assert sorted(names - set(i18n.RULES_ZH)) == []
    assert i18n.rule_name("a rule nobody translated", "zh") == "a rule nobody translated"


@pytest.mark.slow
def test_student_bundle_carries_both_languages(capsys):
    bundle.main()
    with zipfile.ZipFile(bundle.BUNDLE) as zf:
        inner = {n.split("/", 1)[1] for n in zf.namelist()}
        readme = zf.read("decode-scheduling/README.md").decode()
    for name in NAMES:
        assert {f"notebooks/{name}.ipynb", f"notebooks/zh/{name}.ipynb"} <= inner
    assert "简体中文" in readme and "notebooks/zh/" in readme and "fonts-noto-cjk" in readme
    assert "SIL Open Font License 1.1" in readme and "lab/cjk_font/OFL.txt" in readme   # the shipped font's licence
    assert not [n for n in inner if n.startswith("solutions/")]


def test_readme_has_a_chinese_section_for_students():
    readme = (ROOT / "README.md").read_text()
    assert "## 学生指南（简体中文）" in readme and "ModelScope" in readme and "Colab" in readme
    assert "fonts-noto-cjk" in readme
    assert readme.count("SIL Open Font License 1.1") >= 2 and "lab/cjk_font/OFL.txt" in readme   # both sections
    assert "SIL Open Font License 1.1" in (ROOT / "docs" / "authoring.md").read_text()   # and lab's, for its authors
    linked = set(re.findall(r"notebooks/zh/(\d\d_\w+)\.ipynb", readme))  # no list to keep: every link is to a zh edition
    assert linked and linked <= set(NAMES), linked - set(NAMES)
