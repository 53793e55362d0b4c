"""Feedback in the submission's language: rule names, verdict text, notes. Scores never depend on it.

Why a rule failed is a Message where grader/grade.py makes it (RuleResult.message: a key of grader/messages.py and
its values), worded here in the page's language; the values in it (what the student's code returned, the op as
code) are shown as they are, never translated. Our own texts in it (a scenario's name, a run's status) are
Named, and worded here by lookup; how a run ended and why a value was refused are Messages of their own; lab's
messages are LabTexts, worded by lab's own Chinese templates (grader/messages.py). A judge's text cut short stays
English. No English is read back here: a scenario's label is a Message around its own name (grader/contract.py),
and that name is looked up exactly.
"""
from __future__ import annotations

from lab import BATCHING_EXAMPLES, DECODE_SCENARIOS
from lab.i18n import ZH as LAB_ZH

from .assignment import load
from .diagnose import advice
from . import messages
from .messages import Message
from .paths import assignment_names
from .verdict import TaskVerdict

RULES_ZH = {name: zh for assignment in assignment_names() for name, zh in load(assignment).names_zh.RULES.items()}

TEXT = {
    "en": {
        "graded_outside": "(Graded outside this notebook: the hidden tests replay this TODO alone.)",
        "heading": "{assignment}: feedback for {student}", "task": "task", "score": "Score",
    },
    "zh": {
        "graded_outside": "（在本 notebook 之外评分：隐藏测试单独重放这个 TODO。）",
        "heading": "{student} 的反馈：{assignment}", "task": "题目", "score": "得分",
    },
}

# The hidden scenarios' own names, the Named parts of their labels (grader/contract.py).
SCENARIOS_ZH = {
    **{example.name: LAB_ZH[example.name] for example in BATCHING_EXAMPLES},
    **{name: LAB_ZH[name] for name in DECODE_SCENARIOS},
    **{name: zh for assignment in assignment_names() for name, zh in load(assignment).names_zh.SCENARIOS.items()},
}


def rule_name(name: str, language: str) -> str:
    return RULES_ZH.get(name, name) if language == "zh" else name


STATUS_ZH = {"timeout": "超时", "crashed": "崩溃", "garbled": "输出无法解读", "ok": "正常结束", "an error": "一个异常",
             "the cell itself ran past the time limit": "单元格本身超出了时间限制"}


def _status(text: str) -> str:
    return STATUS_ZH.get(text, text)


def scenario_name(name: str) -> str:
    """A hidden scenario's own name in Chinese, looked up exactly (a label's parts, its number and policy, are
    Messages: grader/contract.py); a name with none (code, or a whole label of a report stored before labels
    were Messages) as it is."""
    return SCENARIOS_ZH.get(name, name)


def named(text: str, family: str, language: str = "zh") -> str:
    """A messages.Named text in `language`, by its family: a scenario's name or a run's status. Any other family (a
    run's detail or why a value was refused, Named in a report stored before they were Messages) as it was written."""
    if language == "en":
        return text
    if family == "scenario":
        return scenario_name(text)
    if family == "status":
        return _status(text)
    return text


messages.word_named_with(named)


def rule_detail(rule, language: str = "en") -> str:
    """A failing rule's detail in `language`: its Message worded, else (a verdict stored before its detail was one,
    or a judge's text cut short) detail()."""
    if language == "en" or rule.message is None:
        return detail(rule.detail, language)
    return rule.message.text(language)


def detail(text, language: str = "en") -> str:
    """A failing rule's detail in `language`: a Message worded; an English text (a verdict stored before its detail
    was a Message) as it was written."""
    if isinstance(text, Message):
        return text.text(language)
    return text


def note(text, language: str = "en") -> str:
    """A verdict's note in `language`: a Message (or a Joined run of them) worded; a plain text as it is."""
    return messages.worded(text, language) if text else ""


# The English comments in the code of a failing case and their Chinese (each assignment's names_zh.COMMENTS).
CODE_COMMENTS_ZH = {en: zh for assignment in assignment_names()
                    for en, zh in getattr(load(assignment).names_zh, "COMMENTS", {}).items()}


def code_comments(code: str, language: str = "en") -> str:
    """A failing case's code with its comments (a '# ...' that ends a line) in `language`; the code itself as it is."""
    if language == "en" or not code:
        return code
    lines = []
    for line in code.split("\n"):
        for en, zh in CODE_COMMENTS_ZH.items():
            if line.endswith("# " + en):
                line = line[: len(line) - len(en)] + zh
                break
        lines.append(line)
    return "\n".join(lines)


SUMMARY = {
    "en": {"head": "{task}: {score:g} / {points:g} points ({passed} of {rules} rules hold)", "note": "  note: ",
           "pass": "pass", "fail": "FAIL", "says": "         the text says: ",
           "paste": "         to see it yourself, paste this into a scratch cell and run it:",
           "manual": "{task}: manual score {score:g} / {points:g} points, which counts; the hidden rules gave {auto:g}"},
    "zh": {"head": "{task}：{score:g} / {points:g} 分（{rules} 条规则中 {passed} 条成立）", "note": "  备注：",
           "pass": "通过", "fail": "未通过", "says": "         题目要求：",
           "paste": "         想亲自复现，把下面的代码粘贴到一个草稿单元格里运行：",
           "manual": "{task}：人工评分 {score:g} / {points:g} 分，以此为准；隐藏规则给出 {auto:g} 分"},
}


def quote_marks(text: str, language: str) -> str:
    """A quoted sentence in the page's language's quotation marks."""
    return f"“{text}”" if language == "zh" else f'"{text}"'


def summary(verdict: TaskVerdict, language: str = "en") -> str:
    """Feedback text in `language`: the score, one line per rule, the first failure of each; the failing case's
    code and the values in its details stay as Python writes them."""
    text, rules = SUMMARY[language], verdict.rules
    lines = [text["head"].format(task=verdict.task_id, score=verdict.score, points=verdict.points,
                                 passed=sum(r.passed for r in rules), rules=len(rules))]
    if verdict.note:
        lines.append(text["note"] + note(verdict.note, language))
    for rule in rules:
        lines.append(f"  [{text['pass'] if rule.passed else text['fail']}] {rule_name(rule.name, language)}")
        if not rule.passed:
            lines += [text["says"] + quote_marks(q, language) for q in rule.quotes.get(language, [])]
            lines.append(f"         {rule_detail(rule, language)}")
        if rule.snippet:  # flush left, so that it can be pasted into a cell as it is
            lines += [text["paste"], "", *code_comments(rule.snippet, language).splitlines(), ""]
    return with_mistake("\n".join(lines), verdict, language)


def feedback_texts(verdicts, language: str = "en") -> dict[str, str]:
    """{test cell grade_id: what it shows on the feedback page}: its TODO's summary, then that it was graded outside."""
    return {v.test_id: summary(v, language) + f"\n\n{TEXT[language]['graded_outside']}\n" for v in verdicts}


def with_mistake(text: str, verdict: TaskVerdict, language: str) -> str:
    """The summary with the common mistake the answer behaves like (grader/diagnose.py) under its first line."""
    said = advice(verdict.mistake, language)
    if not said:
        return text
    first, _, rest = text.partition("\n")
    return "\n".join([first, *("  " + line for line in said.splitlines()), *([rest] if rest else [])])
