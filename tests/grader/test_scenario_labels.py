"""A hidden scenario's name is a label made where the scenario is made (grader/contract.py): a Message around its
own name, which grader/i18n.py looks up exactly. Its English is the name the suites always gave (tests, snippets and
mistakes quote it); no English name is read back by pattern."""
import ast
import json
import types
from dataclasses import asdict

import pytest

from conftest import ROOT
from grader import i18n
from grader.assignment import load
from grader.grade import Grader, labelled
from grader.messages import Message, Named, from_json
from grader.paths import assignment_names
from grader import contract
from grader.contract import Task, label, numbered, scenario, seeded, with_policy, worked_example


def test_i18n_holds_no_pattern_over_scenario_names():
    tree = ast.parse((ROOT / "grader" / "i18n.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    assert "re" not in imported and not {"regex", "fnmatch"} & imported
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "re" not in names and "_SCENARIO" not in names


@pytest.fixture(scope="module")
def scenarios():
    return {name: [sc for task in load(name).tasks(1) for rule in task.rules for sc in rule.scenarios]
            for name in assignment_names()}


def test_each_label_is_worded_as_its_name_in_english(scenarios):
    for name, found in scenarios.items():
        assert len(found) > 100, name
        for sc in found:
            assert label(sc).text("en") == str(label(sc)) == sc["name"], sc["name"]


def test_a_composed_name_is_a_message_around_its_own_name(scenarios):
    """Numbers, policies and prefixes are parts of a Message: what is looked up is a name of names_zh or lab's."""
    for found in scenarios.values():
        for sc in found:
            if "#" in sc["name"] or sc["name"].startswith(("worked example: ", "visible check: ", "trace ", "held-out trace ", "vLLM ")):
                assert isinstance(sc.get("label"), Message), sc["name"]


@pytest.mark.parametrize("made, english, chinese", [
    (seeded("tight KV", 4, lambda i: [])[3], "tight KV #3", "KV 紧张 #3"),
    (scenario(worked_example(with_policy("A-E", True)), []), "worked example: A-E, continuous", "算例：A 至 E，连续"),
    (scenario(worked_example(with_policy("4 requests on 2 slots, newest first", False)), []),
     "worked example: 4 requests on 2 slots, newest first, static", "算例：四个请求、两个槽位，最新优先，静态"),
    (scenario(numbered("continuous, another order", 2), []), "continuous, another order #2", "连续，另一种顺序 #2"),
    (scenario(contract.scenario_name("check_small(no_gain_case(), 'x')", 1), []), "visible check: check_small() (1)", "可见检查：check_small()（1）"),
    (scenario(contract.scenario_name("test_todo1_worked_example()"), []), "visible check: test_todo1_worked_example()",
     "可见检查：test_todo1_worked_example()"),
    (scenario(Message("vllm_test", {"name": "test_schedule_order (chunked=True)"}), []), "vLLM test_schedule_order (chunked=True)",
     "vLLM test_schedule_order (chunked=True)"),
    ({"name": "no jobs", "ops": []}, "no jobs", "没有作业"),
    ({"name": "no_gain_case()", "ops": []}, "no_gain_case()", "no_gain_case()"),
])
def test_a_label_in_each_language(made, english, chinese):
    assert made["name"] == english and label(made).text("en") == english and label(made).text("zh") == chinese


def test_assignment_3s_traces_and_02s_worked_examples(scenarios):
    by_name = {sc["name"]: label(sc) for found in scenarios.values() for sc in found}
    assert by_name["held-out trace B"].text("zh") == "未公开轨迹 B" and by_name["trace 2"].text("zh") == "轨迹 2"
    counted = [name for name in by_name if name.startswith("worked example: preemption and resume (")]
    assert counted and by_name[counted[0]].text("zh").startswith("算例：") and by_name[counted[0]].text("zh").endswith("（0）")


def test_a_label_goes_into_report_json_and_back():
    made = seeded("tight KV", 4, lambda i: [])[3]
    detail = labelled(label(made), Message("did_not_finish", {"status": Message("status_timeout")}))
    again = from_json(json.loads(json.dumps(asdict(detail))))
    assert again == detail and again.text("zh") == "KV 紧张 #3：场景没有运行完：超时"
    assert again.text("en") == "tight KV #3: the scenario did not finish: timeout"


def test_a_judges_english_cut_short_keeps_the_label_in_chinese():
    made = scenario(Message("held_out_trace", {"letter": "A"}), [])
    assert labelled(label(made), "p99 TTFT 12 ms...").text("zh") == "未公开轨迹 A：p99 TTFT 12 ms..."


def test_an_older_reports_whole_name_shows_as_written():
    """A report stored while a scenario's whole name was one Named text: exact lookup finds no number or prefix, so it
    shows in English, as written; the report still loads."""
    old = from_json({"key": "scenario_detail", "params": {"scenario": {"name": "tight KV #3", "family": "scenario"},
                                                          "what": {"key": "status_timeout", "params": {}}}})
    assert old.text("en") == "tight KV #3: timeout" and old.text("zh") == "tight KV #3：超时"
    assert Named("tight KV", "scenario").text("zh") == i18n.scenario_name("tight KV") == "KV 紧张"


def test_the_child_is_sent_no_label():
    task = Task("TODO 1", "todo1", "todo1_tests", 1, [types.SimpleNamespace(scenarios=[
        scenario(numbered("tight KV", 0), [["step"]], cpu_seconds=3)])])
    fake = types.SimpleNamespace(_key=lambda task, ri, si: f"{task.answer_id}|{ri}|{si}")
    assert Grader._named(fake, task) == [{"name": "todo1|0|0", "ops": [["step"]], "cpu_seconds": 3}]
