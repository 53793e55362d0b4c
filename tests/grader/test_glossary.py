"""One Chinese term per concept. grader/glossary.zh.yml names the term and its forbidden variants;
every zh text a student reads is checked against it, and the checker and the fixer are shown to bite."""
import copy
import json
import re

import pytest
import yaml

from conftest import ROOT
from grader import assignment, glossary, translation  # assignment imports jupytext, which starts pandoc: not in a test

# (planted text, what fix() makes of it): one per forbidden concept of the issue
PLANTED = [
    ("调度器先接纳等待中的请求", "调度器先准入等待中的请求"),
    ("准入控制、回压", "准入控制、背压"),
    ("长提示词被切成块", "长提示词被分块"),
    ("预填充（块）词元", "预填充（分块）词元"),
    ("第一块之后什么也不采样", "第一个分块之后什么也不采样"),
    ("这是 P99 变差的原因之一", "这是 p99 变差的原因之一"),
    ("P95/P99、饥饿", "p95/p99、饥饿"),
    ("尾延迟", "尾时延"),
    ("每一步都重建批次", "每一步都重建批"),
    ("释放它的缓存块", "释放它的 KV 块"),
    ("（缓存块最多）", "（KV 块最多）"),
    ("空闲的 KV 缓存块", "空闲的 KV 块"),
    ("首词元时间短", "首词元时延短"),
    ("尽量提高吞吐（goodput）", "尽量提高有效吞吐（goodput）"),
    ("一个新提示可能占几千个", "一个新提示词可能占几千个"),
    ("## 第 2 步：一步的批", "## 第 2 节：一步的批"),
    ("静态与连续的总完成时间相等", "静态与连续的最大完工时间相等"),
    ("等待时间 / 流经时间", "等待时间 / 流程时间"),
    ("到达刻不晚于 tick 1,000", "到达时刻不晚于 tick 1,000"),
    ("优先级相同时按到达时间", "优先级相同时按到达时刻"),
    ("评分器按单元格 id 找到它们", "评分程序按单元格 id 找到它们"),
    ("其余 TODO 一律用课程的参考答案", "其余 TODO 一律用课程的参考实现"),
    ("每个令牌", "每个词元"),
    ("预填阶段", "预填充阶段"),
    ("选出牺牲者", "选出被抢占者"),
    ("核心决策：两轮遍历、两个预算", "核心决策：两遍、两个预算"),
    ("第一轮处理运行中的请求，第二轮处理等待中的", "第一遍处理运行中的请求，第二遍处理等待中的"),
    ("把它放回等待队列的队首", "把它放回等待队列的队头"),
    ("运行下面的测试单元格", "运行下面的检查单元格"),
    ("为投机解码预留的前瞻槽位", "为投机解码预留的前瞻词元位"),
    ("答题单元格 todo4 被删除了", "TODO 单元格 todo4 被删除了"),
]
# right as they are: 块 for a block, 提示 for a hint, 第 N 步 for an engine step, the chosen terms themselves
ALLOWED = ["KV 块、块表", "它需要第三块", "每块 16 个词元", "如果需要提示：老化是一个不错的方向", "提示：先想再试",
           "长提示词", "有效吞吐（goodput）", "p99 TTFT", "第 2 步请求 1 被抢占", "尾时延", "准入控制、背压", "批调度",
           "分块预填充", "首词元时延", "最大完工时间（makespan）", "等待时间 / 流程时间", "开始时刻减去到达时刻",
           "评分程序", "与参考实现一致", "被抢占者（victim）", "空闲的槽位", "tick（模拟时间单位）", "序列 3 不是新请求", "请求流",
           "等待时间为 3，流程时间为 6", "请求流经过调度器", "轮到下一个候选", "队头阻塞", "第一遍：运行中的请求"]
# where an old fix rule damaged right text: 错误提示 is an error message (not a prompt); 第一块/下一块 of KV blocks
# are blocks (not chunks). Each is also left alone by fix().
DAMAGED_BEFORE = ["错误提示", "打印错误提示后退出", "为它分配下一块 KV 块", "上一块 KV 块写满时",
                  "KV 块写满后再申请下一块", "块表的第一块是 KV 块 7"]


@pytest.mark.slow
def test_every_zh_text_uses_the_glossary_terms():
    """The zh catalogues, the masters' glossaries, lab/i18n.py, grader/i18n.py and every generated zh edition
    (markdown and printed outputs): no forbidden variant anywhere."""
    assert len(glossary.zh_notebooks()) == 2 * len(glossary.zh_names()) >= 6
    assert glossary.check_all() == []


def test_every_text_is_looked_at():
    """The checker reads what it claims to: catalogue entries with their English, i18n values with their keys."""
    texts = glossary.catalogue_texts("03_batch_scheduling")
    assert any("Step 2" in (en or "") and "第 2 节" in zh for _, zh, en in texts)
    assert ROOT / "grader" / "assignments" / "03_batch_scheduling" / "names_zh.py" in glossary.PY_CATALOGUES
    strings = glossary.python_strings((ROOT / "grader" / "assignments" / "03_batch_scheduling" / "names_zh.py").read_text(encoding="utf-8"))
    assert any(key and key.startswith("a key-function policy (Step 6)") for *_, key in strings)
    outputs = [text for where, text in glossary.notebook_texts(ROOT / "solutions/zh/03_batch_scheduling.ipynb")
               if "output" in where]
    assert any("p99" in text for text in outputs)


@pytest.mark.parametrize("text, fixed", PLANTED)
def test_a_planted_variant_is_caught_and_fixed(text, fixed):
    assert glossary.violations(text), text
    assert glossary.fix(text) == fixed
    assert glossary.violations(fixed) == []
    assert glossary.fix(fixed) == fixed  # the fixer can be run again


@pytest.mark.parametrize("text", ALLOWED)
def test_the_right_term_is_not_flagged(text):
    assert glossary.violations(text) == [] and glossary.fix(text) == text


@pytest.mark.parametrize("text", DAMAGED_BEFORE)
def test_a_fix_rule_leaves_an_error_message_and_a_kv_block_alone(text):
    assert glossary.violations(text) == [] and glossary.fix(text) == text


def test_a_variant_without_a_mechanical_fix_is_still_caught():
    text = "一个 800 个词元的提示词按每块 400 个词元计算"
    assert any("每个分块" in v for v in glossary.violations(text)) and glossary.fix(text) == text
    for text in ["空闲的插槽", "一个槽空出来", "每个时钟周期", "剥夺式调度", "请求序列"]:
        assert glossary.violations(text) and glossary.fix(text) == text, text


def test_flow_time_clipped_to_liujing_is_caught():
    """01's worked example said "等待 3、流经 6": flow time clipped to 流经, which the old rule (流经时间 only) missed."""
    text = "所以等待 3、流经 6。"
    assert re.search("流经时间", text) is None  # the old pattern
    assert any("流程时间" in v for v in glossary.violations(text)) and glossary.fix(text) == text  # a human rewrites it
    assert len(glossary.violations("流经时间")) == 1 and glossary.fix("流经时间") == "流程时间"  # one report, still fixed


def test_an_engine_step_in_a_code_comment_is_not_a_heading():
    """The 第 N 步 rule reads a leading # as a markdown heading. A code cell's comments reach the checker without
    their #, so 03's comment about engine step 2 (a false hit when the rule runs over the notebook's code) is left alone."""
    texts = [text for key, text, _ in glossary.catalogue_texts("03_batch_scheduling") if key == "code-preemption-by-hand"]
    line = next(line for text in texts for line in text.splitlines() if line.startswith("第 2 步中 lo"))
    assert glossary.violations(line) == [] and glossary.fix(line) == line
    assert glossary.violations("# " + line)  # as the code cell shows it, the heading rule would take it for a section
    # nor does the notebook pass read code: it reads markdown and outputs, so the comment with its # is never checked
    for folder in ("notebooks", "solutions"):
        texts = glossary.notebook_texts(ROOT / folder / "zh" / "03_batch_scheduling.ipynb")
        assert texts and not any("第 2 步中 lo" in text for _, text in texts)


def test_a_section_is_known_by_the_english_it_translates():
    assert glossary.violations("见第 3 步", english="see Step 3") and glossary.fix("见第 3 步", "see Step 3") == "见第 3 节"
    assert glossary.violations("在第 3 步", english="at step 3") == []
    # the same number as a section and an engine step in one cell: left to a human
    assert glossary.violations("第 2 步", english="Step 2 ... at step 2") == []


@pytest.fixture
def catalogue_copy(tmp_path, monkeypatch):
    """A copy of 03's catalogue, with variants planted in a prose cell, a TODO cell and a translated string."""
    name = "03_batch_scheduling"
    path = tmp_path / f"{name}.zh.yml"
    text = translation.catalogue_path(name, "zh").read_text(encoding="utf-8")
    text = text.replace("准入控制、背压", "准入控制、回压")  # md-glossary
    text = text.replace("### TODO 5 · `slo_key`", "### TODO 5 · 接纳 `slo_key`")  # a TODO section
    text = text.replace('"TODO 2：块用完时 append 抛出异常"', '"TODO 2：P99 块用完时 append 抛出异常"')
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(translation, "catalogue_path", lambda n, lang: path)
    return name, path


@pytest.mark.slow
def test_the_fixer_rewrites_only_the_chinese_of_a_catalogue(catalogue_copy):
    name, path = catalogue_copy
    before = yaml.safe_load(path.read_text(encoding="utf-8"))["cells"]
    assert len([v for _, text, en in glossary.catalogue_texts(name) for v in glossary.violations(text, en)]) == 3
    changed = glossary.fix_catalogue(name)
    assert sorted(changed) == ["md-glossary", "md-todo-5-slo-key", "todo2_tests"]
    after = yaml.safe_load(path.read_text(encoding="utf-8"))["cells"]
    assert [e.get("en") for e in after.values()] == [e.get("en") for e in before.values()]  # fingerprints kept
    assert [p["from"] for e in after.values() for p in e.get("strings") or []] == \
        [p["from"] for e in before.values() for p in e.get("strings") or []]
    assert "准入控制、背压" in after["md-glossary"]["markdown"] and "准入 `slo_key`" in after["md-todo-5-slo-key"]["markdown"]
    assert [v for _, text, en in glossary.catalogue_texts(name) for v in glossary.violations(text, en)] == []
    assert glossary.fix_catalogue(name) == []


@pytest.mark.slow
def test_the_fixer_can_leave_the_todo_sections_to_the_merger(catalogue_copy):
    name, path = catalogue_copy
    assert sorted(glossary.fix_catalogue(name, "rest")) == ["md-glossary"]
    assert "接纳 `slo_key`" in path.read_text(encoding="utf-8")
    assert sorted(glossary.fix_catalogue(name, "todo")) == ["md-todo-5-slo-key", "todo2_tests"]
    assert {"md-todo-1-schedule", "todo1", "todo1_tests", "todo5_tests"} <= glossary.todo_keys(name)
    assert "md-step-2-budgets" not in glossary.todo_keys(name) and "md-aging-tradeoff" not in glossary.todo_keys(name)


def test_the_fixer_rewrites_the_values_of_an_i18n_catalogue(tmp_path):
    source = (ROOT / "lab" / "i18n.py").read_text(encoding="utf-8")
    planted = source.replace('"prefill (chunk) tokens": "预填充（分块）词元"', '"prefill (chunk) tokens": "预填充（块）词元"')
    planted = planted.replace('"class-0 p99 TTFT (ms)": "类别 0 的 p99 TTFT（ms）"', '"class-0 p99 TTFT (ms)": "类别 0 的 P99 TTFT（ms）"')
    assert planted.count("预填充（块）") == 1 and planted.count("P99 TTFT（") == 1
    path = tmp_path / "i18n.py"
    path.write_text(planted, encoding="utf-8")
    assert len([v for *_, text, key in glossary.python_strings(planted) for v in glossary.violations(text, key)]) == 2
    assert glossary.fix_python(path) == 2
    assert path.read_text(encoding="utf-8") == source


def test_a_variant_in_a_printed_output_is_caught(tmp_path):
    nb = json.loads((ROOT / "solutions/zh/01_continuous_batching.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and c.get("outputs"))
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["空出的槽位立即接纳下一个作业\n"]}]
    path = tmp_path / "planted.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    found = [v for where, text in glossary.notebook_texts(path) for v in glossary.violations(text) if "output" in where]
    assert len(found) == 1 and "接纳" in found[0]


@pytest.mark.slow
def test_the_command_line_checks_and_fixes(capsys):
    assert glossary.main(["check"]) == 0 and "no forbidden variant" in capsys.readouterr().out
    assert glossary.main(["nonsense"]) == 2


@pytest.mark.slow
def test_a_variant_in_a_translated_comment_is_caught_and_fixed(catalogue_copy):
    """Code cells' comments are read by zh students too: the checker sees them, the fixer rewrites only their Chinese."""
    name, path = catalogue_copy
    text = path.read_text(encoding="utf-8")
    assert text.count("平均批大小（每一步的请求数）") == 1
    path.write_text(text.replace("平均批大小（每一步的请求数）", "平均批次大小（每一步的请求数）"), encoding="utf-8")
    found = [(key, v) for key, text, en in glossary.catalogue_texts(name) for v in glossary.violations(text, en)]
    assert any(key == "code-storm-cause" and "批次" in v for key, v in found)
    before = yaml.safe_load(path.read_text(encoding="utf-8"))["cells"]["code-storm-cause"]
    assert "code-storm-cause" in glossary.fix_catalogue(name)
    after = yaml.safe_load(path.read_text(encoding="utf-8"))["cells"]["code-storm-cause"]
    assert after["comments"][0]["to"] == before["comments"][0]["to"].replace("批次", "批")
    assert (after["en"], after["en_comments"], after["comments"][0]["from"]) == \
        (before["en"], before["en_comments"], before["comments"][0]["from"])


def test_an_assignment_may_allow_a_variant_for_a_concept_of_its_own(tmp_path, monkeypatch):
    """A round-robin assignment's 时间片 (a time quantum) is its own concept, where the course glossary forbids the word
    as a name for a tick: its assignment.toml's zh_allowed lets it pass there, and only there (a new instructor's trial)."""
    from grader import diagnose
    from grader.check_assignment import mistakes_file_problems
    from grader.assignment import Figures

    text = "每个请求用完一个时间片后回到队尾"
    assert glossary.violations(text)                                        # the course's rule
    assert glossary.violations(text, allow=("时间片",)) == []              # allowed for this text's assignment
    assert glossary.violations(text + "，每个滴答一步", allow=("时间片",))   # another variant is still caught
    (tmp_path / "assignment.toml").write_text('zh_allowed = ["时间片"]\n', encoding="utf-8")
    assert Figures.read(tmp_path / "assignment.toml").zh_allowed == ("时间片",)
    (tmp_path / "assignment.toml").write_text("zh_allowed = [1]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="zh_allowed must be a list of strings"):
        Figures.read(tmp_path / "assignment.toml")
    assert all(glossary.allowed(name) == () for name in glossary.zh_names())   # 01-03 allow nothing
    # through the mistakes file's check (make check-assignment's hint item): a hint using the word
    name = "02_decode_scheduling"
    said = copy.deepcopy(diagnose.texts(name))  # texts() is cached: editing it in place would reach later tests
    mutant = next(iter(said))
    said[mutant]["zh"]["hint"] += "（一个时间片）"
    assert any("时间片" in p for p in mistakes_file_problems(name, said))
    monkeypatch.setattr(glossary, "allowed", lambda n: ("时间片",))
    assert not any("时间片" in p for p in mistakes_file_problems(name, said))


def test_assignment_toml_is_read_once_not_per_text(monkeypatch):
    """The zh texts of a mistakes file are checked against its assignment's zh_allowed, read once (the Assignment's
    figures), not once per text: each read parsed assignment.toml again."""
    name = "02_decode_scheduling"
    monkeypatch.setattr(assignment.load(name), "__dict__", {k: v for k, v in assignment.load(name).__dict__.items()
                                                             if k != "declared"})   # this process has not read it yet
    reads, read = [], assignment.Figures.read.__func__
    monkeypatch.setattr(assignment.Figures, "read", classmethod(lambda cls, path: reads.append(path) or read(cls, path)))
    checked = []
    violations = glossary.violations
    monkeypatch.setattr(glossary, "violations", lambda text, *a, **kw: checked.append(text) or violations(text, *a, **kw))
    assert glossary.mistakes_problems(name) == []
    assert len(checked) > 10 and len(reads) == 1, (len(checked), reads)
