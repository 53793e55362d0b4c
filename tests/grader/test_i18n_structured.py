"""How a grading run ended (ChildRun.detail) and why a value was refused (a NoValue's detail) are Messages where they
are made (grader/runner/protocol.py, grader/child_values.py, grader/observed.py), carried as such into verdicts and
report.json, and worded in en or zh where they are shown. grader/i18n.py reads none of the grader's English back."""
import ast
import json
import re
from dataclasses import asdict

import pytest

from conftest import ROOT
from english import english_sentences
from grader import child_values, i18n, messages
from grader.grade import explain, labelled
from grader.messages import Message, Named, from_json
from grader.observed import INVALID, Instance, Malformed, NoValue, decode_hook
from grader.runner import CHILD, Finished, Protocol, parse_child_output
from grader.verdict import Outcome, RuleResult, TaskVerdict

HANZI = re.compile(r"[\u4e00-\u9fff]")
# Keys of the two families once worded by grader/i18n.py's patterns: a run's detail and why a value was refused.
FAMILIES = ("run_", "server_", "record_", "problem_")


def read(output: bytes, *, timed_out=False, why="", returncode=0):
    return parse_child_output(Finished(returncode, timed_out, output, why=why), Protocol(["todo1"], ["a"]), CHILD)


def lines(*records) -> bytes:
    return b"\n".join(r if isinstance(r, bytes) else json.dumps(r).encode() for r in records) + b"\n"


CELLS, DONE = {"kind": "cells", "errors": {}}, {"kind": "done"}
# Each way a child's run ends badly, as parse_child_output reads it: the English as the f-strings wrote it, and the zh.
RUNS = [
    (read(lines(CELLS), timed_out=True, why="wall"), "stopped after 120 s", "运行 120 秒后被终止"),
    (read(lines(CELLS), timed_out=True, why="stall"), "stopped: no progress in 10 s of CPU time", "已终止：10 秒 CPU 时间内没有进展"),
    (read(lines(CELLS), timed_out=True, why="idle"), "stopped: no progress for 60 s", "已终止：60 秒内没有进展"),
    (read(lines(CELLS), timed_out=True, why="watcher"), "stopped (watcher)", "已终止（被监视它的评分程序终止）"),
    (read(lines(CELLS), returncode=-9), "ended early (exit code -9)", "提前结束（退出码 -9）"),
    (read(lines({"kind": "scenario", "name": "a", "obs": 1})), "the child wrote a malformed cells record", "子进程写出了格式错误的单元格记录"),
    (read(lines(CELLS, b"x" * (2 << 20) + b"x")), f"the child wrote a record of {(2 << 20) + 1} bytes",
     f"子进程写出了一条 {(2 << 20) + 1} 字节的记录"),
    (read(lines(CELLS, b"not json")), "the child wrote something that is not a result record", "子进程写出了不是结果记录的内容"),
    (read(lines(CELLS, [1])), "the child wrote a malformed result record", "子进程写出了格式错误的结果记录"),
    (read(lines(CELLS, {"kind": "scenario", "name": "b", "obs": 1})),
     "the child wrote an unexpected record where a scenario belongs", "子进程写出了本应是场景处的意外记录"),
    (read(lines(CELLS, {"kind": "scenario", "name": "a", "ended": ["crash"]})),
     "the child wrote a malformed end of a scenario", "子进程写出了格式错误的场景结束记录"),
    (read(lines(CELLS, {"kind": "scenario", "name": "a", "obs": 1}, {"kind": "done", "x": 1})),
     "the child wrote an unexpected record where the end belongs", "子进程写出了本应结束处的意外记录"),
    (read(lines(CELLS, {"kind": "scenario", "name": "a", "obs": 1}, DONE, DONE)),
     "the child wrote a record after the end", "子进程写出了结束之后的记录"),
]


def malformed(text: str) -> Message:
    with pytest.raises(Malformed) as caught:
        json.loads(text, object_hook=decode_hook)
    return Message(caught.value.key, caught.value.params)   # as grader/runner/protocol.py makes it


# Each refusal of a value: by its bounds (grader/child_values.py) or as a tag the encoder never writes (grader/observed.py).
PROBLEMS = [
    (child_values.problem(list(range(child_values.MAX_NODES))), f"more than {child_values.MAX_NODES} values",
     f"多于 {child_values.MAX_NODES} 个值"),
    (child_values.problem([[[[[[[[[[[[[[]]]]]]]]]]]]]]), "nested deeper than 12", "嵌套深度超过 12"),
    (child_values.problem(2 ** 70), "an integer of 71 bits", "一个 71 位的整数"),
    (child_values.problem(Instance("x", "y" * 500)), "a string of 500 characters", "一个 500 个字符的字符串"),
    (child_values.problem([b"x"]), "a bytes", "一个 bytes"),
    (malformed('{"$tuple": 1}'), "a malformed $tuple tag", "格式错误的 $tuple 标记"),
    (malformed('{"$dict": [[1]]}'), "a malformed $dict tag", "格式错误的 $dict 标记"),
    (malformed('{"$nope": 1}'), "an unknown tag", "未知的标记"),
    (malformed('{"$dict": [[1, 2], [1, 3]]}'), "a dict with a key twice", "一个含有重复键的 dict"),
    (malformed('{"$frozenset": [1, 1]}'), "a frozenset with an item twice", "一个含有重复元素的 frozenset"),
    (malformed('{"$numpy": ["complex128", 1]}'), "a numpy scalar of an unknown kind", "一个未知种类的 numpy 标量"),
    (malformed('{"$obj": ["", "x", null]}'), "an object's type name of the wrong length", "对象的类型名长度不对"),
    (malformed('{"$obj": ["A", "x", ["int", "1"]]}'), "an object's builtin value of the wrong kind", "对象的内置值类型不对"),
]


@pytest.mark.parametrize("run, english, chinese", RUNS, ids=[english for _, english, _ in RUNS])
def test_each_way_a_run_ends_badly_is_a_message_worded_in_each_language(run, english, chinese):
    assert isinstance(run.detail, Message) and run.detail.key.startswith(("run_", "server_"))
    assert run.detail.text("en") == str(run.detail) == english     # the English as before, byte for byte
    assert run.detail.text("zh") == chinese and english_sentences(chinese) == []
    # The English is not read back: a Named text of an old report is shown as it was written.
    assert i18n.named(english, "run_detail", "zh") == english


@pytest.mark.parametrize("problem, english, chinese", PROBLEMS, ids=[english for _, english, _ in PROBLEMS])
def test_each_refusal_of_a_value_is_a_message_worded_in_each_language(problem, english, chinese):
    assert isinstance(problem, Message) and problem.key.startswith("problem_")
    assert problem.text("en") == english and problem.text("zh") == chinese
    assert i18n.named(english, "problem", "zh") == english
    said = explain([["new", {}]], [{"value": None}], NoValue(INVALID, problem), None)
    assert said.text("en") == f"the scenario did not finish: 'invalid observation: {english}'"
    assert said.text("zh") == f"场景没有运行完：'无效的观测：{chinese}'"


def test_the_server_runs_details_are_messages_too():
    source = (ROOT / "grader" / "runner" / "protocol.py").read_text()
    tree = ast.parse(source)
    details = [kw.value for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ChildRun"
               for kw in node.keywords if kw.arg == "detail"]
    assert len(details) == 2 and all(isinstance(d, ast.Call) and d.func.id == "Message" for d in details)
    assert [Message(k).text("zh") for k in ("server_not_started", "server_not_needed")] == ["参考服务器没有启动", "不需要：子进程没有调用其他 TODO"]


def test_no_family_of_the_graders_english_is_translated_by_pattern():
    """grader/i18n.py words the grader's own texts by lookup (a scenario's name, a run's status) and Messages by key:
    no table of English patterns is left, and nothing in grader/ makes a Named text of the families they served."""
    tree = ast.parse((ROOT / "grader" / "i18n.py").read_text())
    functions = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert not functions & {"_patterns", "_first"}
    names = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for target in node.targets
             if isinstance(target, ast.Name)}
    assert not names & {"_RUN_DETAIL", "_PROBLEMS", "_PROTOCOL"}
    named = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "named")
    families = {node.comparators[0].value for node in ast.walk(named) if isinstance(node, ast.Compare)
                and getattr(node.left, "id", "") == "family"}
    assert families == {"scenario", "status"}
    for path in sorted((ROOT / "grader").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Named" and len(node.args) == 2:
                family = node.args[1]   # a family not written out: only messages.from_json's, reading what was stored
                assert (family.value in ("scenario", "status") if isinstance(family, ast.Constant)
                        else path.name == "messages.py"), (path, ast.unparse(node))


def test_every_key_of_the_two_families_has_its_english_and_chinese():
    keys = [key for key in messages.TEXT["en"] if key.startswith(FAMILIES)]
    assert len(keys) >= 29
    for key in keys:
        assert HANZI.search(messages.TEXT["zh"][key]), key


def verdict(note, detail) -> TaskVerdict:
    return TaskVerdict("TODO 2", "todo2", "todo2_tests", 3, 0.0,
                       [RuleResult("a rule", False, str(detail), message=detail)], note, status=Outcome.TIMED_OUT)


def test_a_verdict_carries_them_into_report_json_and_back_and_the_page_words_them():
    stopped = read(lines(CELLS), timed_out=True, why="wall")
    note = Message("child_ended", {"status": Named("timeout", "status"), "detail": stopped.detail})
    detail = labelled("random queue #0", Message("did_not_finish", {
        "status": Message("invalid_observation", {"problem": child_values.problem(2 ** 70)})}))
    stored = json.loads(json.dumps(asdict(verdict(note, detail))))
    assert stored["note"]["params"]["detail"] == {"key": "run_stopped_after", "params": {"seconds": "120"}}
    again_note, again_detail = from_json(stored["note"]), from_json(stored["rules"][0]["message"])
    assert (again_note, again_detail) == (note, detail)
    zh = i18n.summary(verdict(again_note, again_detail), "zh")
    assert "评分子进程超时：运行 120 秒后被终止" in zh and "无效的观测：一个 71 位的整数" in zh, zh
    en = i18n.summary(verdict(again_note, again_detail), "en")
    assert "grading child timeout: stopped after 120 s" in en and "invalid observation: an integer of 71 bits" in en


def test_a_report_stored_while_they_were_named_texts_still_reads():
    """report.json from before: a Named "run_detail" or "problem" loads and shows as it was written, in each language."""
    old = {"key": "child_ended", "params": {"status": {"name": "timeout", "family": "status"},
                                            "detail": {"name": "stopped after 120 s", "family": "run_detail"}}}
    note = from_json(old)
    assert note.text("en") == "grading child timeout: stopped after 120 s"
    assert note.text("zh") == "评分子进程超时：stopped after 120 s"
    problem = from_json({"key": "judge_problem", "params": {"problem": {"name": "a bytes", "family": "problem"}}})
    assert problem.text("zh") == "无法评判这个值：a bytes"


def test_a_novalues_fingerprint_is_as_before():
    """mistakes.signatures.json holds fingerprints: an invalid observation's is that of its English, as it was."""
    from grader.diagnose import fingerprint
    now = NoValue(INVALID, Message("problem_string", {"length": 500}))
    assert fingerprint(0, None, now) == fingerprint(0, None, NoValue(INVALID, "a string of 500 characters"))
    assert hash(now) == hash(NoValue(INVALID, Message("problem_string", {"length": 500})))
