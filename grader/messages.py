"""What the grader says of a file itself (why it cannot be graded, what repair changed), in the student's language.

A Message is a key and its values; it is worded where it is shown: the student's plain page in the submission's
language, report.json, report.md and the logs in English (report.json also keeps the key). The class report counts
by key, so rewording a message changes no count. grader/glossary.py checks the Chinese here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .safe_text import inert

TEXT = {
    "en": {
        # grader/submission.py: the file cannot be graded as this assignment
        "file_too_large": "file too large ({size} MiB; the limit is {limit} MiB)",
        "too_many_containers": "more than {limit} JSON objects and arrays: not a notebook this grader reads",
        "not_utf8": "unreadable JSON: not UTF-8 text ({why} at byte {at})",
        "bad_json": "unreadable JSON: {error}",
        "not_nbformat_4": "not a Jupyter notebook in format 4 (found nbformat={found})",
        "invalid_notebook": "not a valid Jupyter notebook: {error}",
        "too_many_cells": "{count} cells; the limit is {limit}",
        "too_many_outputs": "{count} outputs; the limit is {limit}",
        # grader/safe_io.py: a file never read (safe_io.Refused)
        "symlink": "{name} is a symbolic link, not a regular file",
        "cannot_open": "cannot open {name} as a plain file ({why})",
        "not_regular_file": "{name} is not a regular file",
        "above_limit": "{name} is {size} MiB, above the {limit} MiB limit",
        "grew_past_limit": "{name} grew past the {limit} MiB limit",
        "no_graded_cells": "some other notebook: none of the graded cells of {assignment} are in it",
        "other_assignment": "some other notebook: this is {found}, not {assignment}",
        "no_given_cells": "some other notebook: none of the given cells of {assignment} are in it",
        # grader/submission.py: layout repaired (LAYOUT)
        "metadata_changed": "the nbgrader metadata of cell {gid} was changed; the release's is used, so this costs nothing",
        "foreign_metadata": "{count} cell(s) had nbgrader metadata the release does not have; it was removed, so this costs nothing",
        "answer_repeated": "answer cell {gid} appears {count} times; the last copy is graded, as the kernel ran it last",
        "cell_repeated": "cell {gid} appears {count} times; one copy is kept",
        "cell_edited": "cell {gid} was edited; the original is used for grading, so this costs nothing",
        "answer_deleted": "answer cell {gid} was deleted: TODO scores 0",
        "cell_deleted": "cell {gid} was deleted: restored from the release; this costs nothing",
        # grader/autograde.py, grader/pipeline.py
        "plain_page": "feedback fell back to a plain page: {error}",
        "bad_file_name": "file name is not a usable student id (letters, digits, _.@+-; not invalid-...); the name's bytes in hex: {hex}",
        # grader/deadline.py: a submission after the due date (what it costs), or one whose time is not known
        "late_per_day": "{days} day(s) late (due {due}), {per_day}%/day: -{points} of {raw} points",
        "late_flat": "{days} day(s) late (due {due}), {flat}% once late: -{points} of {raw} points",
        "late_per_day_flat": "{days} day(s) late (due {due}), {flat}% once late and {per_day}%/day: -{points} of {raw} points",
        "late_capped": "{days} day(s) late (due {due}): {percent}%, the most this assignment takes: -{points} of {raw} points",
        "late_no_penalty": "{days} day(s) late (due {due}); this assignment takes no late penalty",
        "late_extension": "submitted after the due date ({due}) but within the extension to {extended}: no late penalty",
        "late_no_time": "no submission time found while a due date is set ({due}): graded with no late penalty; check the time by hand",
        "late_bad_time": "the submission time {time} could not be read (due {due}): graded with no late penalty; check the time by hand",
        # grader/grade.py: why a hidden rule failed (RuleResult.message). The values (what the answer returned, the
        # op as code, a path's keys) are params, shown as Python prints them in every language, never translated.
        "no_answer_cell": "no answer cell",
        "grading_error": "not graded: grading error",
        # grader/notebook_run.py: a cell the feedback run did not run, and why
        "skipped_cell": "[not run] not run: {why}",
        "why_uses_graded_hang": "{todo} ran past its time limit when graded, and this cell uses it",
        "why_uses_hang": "{todo} ran past its time limit, and this cell uses it",
        "why_budget": "the notebook's {seconds} s budget was used up",
        "why_no_stop": "cell {index} did not stop when interrupted",
        "why_ended": "the run ended early",
        "why_stopped": "the run was stopped",
        # grader/grade.py: a TODO's note (TaskVerdict.note), beside its Outcome
        "cell_raised": "your {task} cell raised {error}",
        "child_ended": "grading child {status}: {detail}",
        "answer_cell_missing": "the answer cell is missing",
        "grading_error_rerun": "grading error, re-run ({fault})",
        "fault_server": "the reference server {status}: {detail}",
        "fault_busy": "the machine was busy: the run waited {waited} s of {elapsed} s for a CPU",
        "scenario_detail": "{scenario}: {what}",
        # a hidden scenario's name (grader/contract.py), around a name of names_zh.SCENARIOS (a Named) or code
        "scenario_numbered": "{name} #{number}",
        "scenario_counted": "{name} ({number})",
        "worked_example": "worked example: {name}",
        "visible_check": "visible check: {name}",
        "scenario_static": "{name}, static",
        "scenario_continuous": "{name}, continuous",
        "trace": "trace {number}",
        "held_out_trace": "held-out trace {letter}",
        "vllm_test": "vLLM {name}",
        "cut_down": "{scenario}, cut down to a smaller case",
        "not_run": "not run ({status}: {detail})",
        "did_not_finish": "the scenario did not finish: {status}",
        "status_timeout": "timeout",
        "status_skipped": "skipped after 3 timeouts in a row",
        "crash": "crash: {error}",
        "invalid_observation": "'invalid observation: {problem}'",
        "an_error": "an error",
        "observation_count": "expected {count} observations, got {got}",
        "step": "step {number}, {op}: {what}",
        "expected_to": "expected to {want}, but it {got}",
        "want_raise": "raise {error}",
        "want_return": "return {value}",
        "got_raised": "raised {error}",
        "got_raised_an_error": "raised an error",
        "got_returned": "returned {value}",
        "state": "state {diff}",
        "diff": "{where}: expected {want}, got {got}",
        "diff_kinds": "{where}: expected {want} ({want_kind}), got {got} ({got_kind})",
        "diff_key_kinds": "{where}: expected {want} ({want_kind} keys), got {got} ({got_kind} keys)",
        "diff_no_key_got": "{where}: expected {want}, got no such key",
        "diff_no_key_wanted": "{where}: expected no such key, got {got}",
        "kinds_and": " and ",
        "an_object": "an object",
        "path_value": "value",
        "path_returned": "returned",
        "path_observed": "observed",
        "path_checks": "checks",
        "request": "request {id}",
        "visible_raised": "it raised {error} before its check {number}",
        "visible_ended": "it ended before its check {number}",
        "visible_failed": "its check {number} does not hold, where the answer gave {got}",
        "judge_problem": "the value could not be judged: {problem}",
        "judge_error": "the value could not be judged ({error})",
        "cell_timeout": "the cell itself ran past the time limit",
        # the judges of grader/assignments/01_continuous_batching/suite.py (a workload the student made)
        "judge_no_return": "the function did not return: {value}",
        "judge_not_a_pair": "expected a (jobs, slots) pair, got {value} ({kind})",
        "judge_rejected": "lab.schedule rejects the workload: {error}",
        "judge_trivial": "make it non-trivial: at least 2 slots, more jobs than slots, and not all the same length",
        "judge_not_same": "static takes {static} ticks and continuous {continuous}: not the same",
        "judge_ratio": "static {static} / continuous {continuous} = {ratio}, below {want}",
        "workload_jobs": "expected a list of at most {limit} jobs",
        "workload_slots": "slots must be an int from 1 to {limit}",
        "workload_job_size": "keep it small: at most {tokens} tokens and arrival at most {arrival} per job",
        "workload_total": "keep it small: at most {limit} tokens in all",
        # the judge of grader/assignments/03_batch_scheduling/suite.py (TODO 5's slo_key)
        "slo_key_slow": "slo_key took more than {seconds} s of CPU for this trace's {count} requests (keep a key fast)",
        "slo_key_not_run": "the key was not run: {value}",
        "slo_key_missing": "there is no slo_key function in the TODO 5 cell",
        "slo_key_raised": ("calling slo_key on this trace's requests raised {error} (lab.engine.serving_order(slo_key, infos) "
                           "gives the same error where you can read it)"),
        "slo_order_invalid": "the order given is not one place per request",
        "slo_misses": "{misses}",
        "semicolon": "; ",
        # grader/runner/protocol.py: how a grading child (or its reference server) ended, when not cleanly (ChildRun.detail)
        "run_stopped_after": "stopped after {seconds} s",
        "run_no_progress_cpu": "stopped: no progress in {seconds} s of CPU time",
        "run_no_progress": "stopped: no progress for {seconds} s",
        "run_stopped": "stopped ({why})",
        "run_stopped_watcher": "stopped (watcher)",
        "run_ended_early": "ended early (exit code {code})",
        "run_wrote": "the child wrote {what}",
        "server_not_started": "the reference server did not start",
        "server_not_needed": "not needed: the child called no other TODO",
        # grader/runner/protocol.py: what a child wrote that is not the protocol (run_wrote's {what})
        "record_after_end": "a record after the end",
        "record_too_long": "a record of {size} bytes",
        "record_unreadable": "something that is not a result record",
        "record_malformed": "a malformed result record",
        "record_not_end": "an unexpected record where the end belongs",
        "record_cells_malformed": "a malformed cells record",
        "record_not_scenario": "an unexpected record where a scenario belongs",
        "record_end_malformed": "a malformed end of a scenario",
        # grader/child_values.py and grader/observed.py: why an observation was refused (a NoValue's detail; {problem} above)
        "problem_values": "more than {limit} values",
        "problem_depth": "nested deeper than {limit}",
        "problem_int": "an integer of {bits} bits",
        "problem_string": "a string of {length} characters",
        "problem_type": "a {type}",
        "problem_tag": "a malformed {tag} tag",
        "problem_unknown_tag": "an unknown tag",
        "problem_key_twice": "a dict with a key twice",
        "problem_item_twice": "a {type} with an item twice",
        "problem_numpy_kind": "a numpy scalar of an unknown kind",
        "problem_type_name": "an object's type name of the wrong length",
        "problem_base": "an object's builtin value of the wrong kind",
    },
    "zh": {
        "file_too_large": "文件太大（{size} MiB；上限为 {limit} MiB）",
        "too_many_containers": "JSON 对象和数组超过 {limit} 个：这不是评分程序能读取的 notebook",
        "not_utf8": "无法读取的 JSON：不是 UTF-8 文本（第 {at} 字节处：{why}）",
        "bad_json": "无法读取的 JSON：{error}",
        "not_nbformat_4": "不是格式 4 的 Jupyter notebook（文件中写的是 nbformat={found}）",
        "invalid_notebook": "不是有效的 Jupyter notebook：{error}",
        "too_many_cells": "共有 {count} 个单元格，上限为 {limit} 个",
        "too_many_outputs": "共有 {count} 个输出，上限为 {limit} 个",
        "symlink": "{name} 是符号链接，不是普通文件",
        "cannot_open": "无法把 {name} 作为普通文件打开（{why}）",
        "not_regular_file": "{name} 不是普通文件",
        "above_limit": "{name} 有 {size} MiB，超过了 {limit} MiB 的上限",
        "grew_past_limit": "{name} 在读取过程中变大，超过了 {limit} MiB 的上限",
        "no_graded_cells": "这是另一个 notebook：其中没有 {assignment} 的任何评分单元格",
        "other_assignment": "这是另一个 notebook：它是 {found}，不是 {assignment}",
        "no_given_cells": "这是另一个 notebook：其中没有 {assignment} 发布时给出的任何单元格",
        "metadata_changed": "单元格 {gid} 的 nbgrader 元数据被改动过；评分使用发布版本中的元数据，因此不扣分",
        "foreign_metadata": "有 {count} 个单元格带有发布版本中没有的 nbgrader 元数据；这些元数据已被移除，因此不扣分",
        "answer_repeated": "TODO 单元格 {gid} 出现了 {count} 次；评分的是最后一份（内核最后运行的是它）",
        "cell_repeated": "单元格 {gid} 出现了 {count} 次；只保留其中一份",
        "cell_edited": "单元格 {gid} 被修改过；评分时使用原始版本，因此不扣分",
        "answer_deleted": "TODO 单元格 {gid} 被删除了：这个 TODO 得 0 分",
        "cell_deleted": "单元格 {gid} 被删除了：已从发布版本中恢复，因此不扣分",
        "plain_page": "无法生成完整的反馈页面，改为显示简单页面：{error}",
        "bad_file_name": "文件名不能用作学生 id（只能包含字母、数字和 _.@+-，且不能以 invalid- 开头）；文件名的字节（十六进制）：{hex}",
        "late_per_day": "迟交 {days} 天（截止时间 {due}），每天扣 {per_day}%：{raw} 分中扣 {points} 分",
        "late_flat": "迟交 {days} 天（截止时间 {due}），迟交一次性扣 {flat}%：{raw} 分中扣 {points} 分",
        "late_per_day_flat": "迟交 {days} 天（截止时间 {due}），迟交一次性扣 {flat}%，另每天扣 {per_day}%：{raw} 分中扣 {points} 分",
        "late_capped": "迟交 {days} 天（截止时间 {due}）：扣 {percent}%，已是本作业的最高扣分比例：{raw} 分中扣 {points} 分",
        "late_no_penalty": "迟交 {days} 天（截止时间 {due}）；本作业迟交不扣分",
        "late_extension": "在截止时间（{due}）之后提交，但在延期后的截止时间 {extended} 之前：迟交不扣分",
        "late_no_time": "已设截止时间（{due}），但没有找到提交时间：按不扣迟交分评分；请人工核对提交时间",
        "late_bad_time": "无法读取提交时间 {time}（截止时间 {due}）：按不扣迟交分评分；请人工核对提交时间",
        "no_answer_cell": "没有 TODO 单元格",
        "grading_error": "未评分：评分出错",
        "skipped_cell": "[未运行] {why}",
        "why_uses_graded_hang": "{todo} 在评分时超出了时间限制，而这个单元格用到了它",
        "why_uses_hang": "{todo} 超出了时间限制，而这个单元格用到了它",
        "why_budget": "整个 notebook 的 {seconds} 秒时间预算已经用完",
        "why_no_stop": "单元格 {index} 被中断后没有停下",
        "why_ended": "运行提前结束",
        "why_stopped": "运行被终止",
        "cell_raised": "你的 {task} 单元格抛出了 {error}",
        "child_ended": "评分子进程{status}：{detail}",
        "answer_cell_missing": "缺少 TODO 单元格",
        "grading_error_rerun": "评分出错，需要重新评分（{fault}）",
        "fault_server": "参考服务器{status}：{detail}",
        "fault_busy": "机器过于繁忙：运行的 {elapsed} 秒中有 {waited} 秒在等待 CPU",
        "scenario_detail": "{scenario}：{what}",
        "scenario_numbered": "{name} #{number}",
        "scenario_counted": "{name}（{number}）",
        "worked_example": "算例：{name}",
        "visible_check": "可见检查：{name}",
        "scenario_static": "{name}，静态",
        "scenario_continuous": "{name}，连续",
        "trace": "轨迹 {number}",
        "held_out_trace": "未公开轨迹 {letter}",
        "vllm_test": "vLLM {name}",
        "cut_down": "{scenario}，缩小后的用例",
        "not_run": "未运行（{status}：{detail}）",
        "did_not_finish": "场景没有运行完：{status}",
        "status_timeout": "超时",
        "status_skipped": "连续超时 3 次，已跳过",
        "crash": "崩溃：{error}",
        "invalid_observation": "'无效的观测：{problem}'",
        "an_error": "一个异常",
        "observation_count": "应有 {count} 条观测，实际得到 {got} 条",
        "step": "第 {number} 步，{op}：{what}",
        "expected_to": "应当{want}，但它{got}",
        "want_raise": "抛出 {error}",
        "want_return": "返回 {value}",
        "got_raised": "抛出了 {error}",
        "got_raised_an_error": "抛出了一个异常",
        "got_returned": "返回了 {value}",
        "state": "状态 {diff}",
        "diff": "{where}：应为 {want}，实际为 {got}",
        "diff_kinds": "{where}：应为 {want}（类型为 {want_kind}），实际为 {got}（类型为 {got_kind}）",
        "diff_key_kinds": "{where}：应为 {want}（键的类型为 {want_kind}），实际为 {got}（键的类型为 {got_kind}）",
        "diff_no_key_got": "{where}：应为 {want}，实际上没有这个键",
        "diff_no_key_wanted": "{where}：不应有这个键，实际为 {got}",
        "kinds_and": " 和 ",
        "an_object": "某个类的实例",
        "path_value": "值",
        "path_returned": "返回值",
        "path_observed": "观测",
        "path_checks": "检查",
        "request": "请求 {id}",
        "visible_raised": "在它的第 {number} 项检查之前抛出了 {error}",
        "visible_ended": "它在第 {number} 项检查之前就结束了",
        "visible_failed": "它的第 {number} 项检查不成立，答案给出的是 {got}",
        "judge_problem": "无法评判这个值：{problem}",
        "judge_error": "无法评判这个值（{error}）",
        "cell_timeout": "单元格本身超出了时间限制",
        "judge_no_return": "函数没有返回：{value}",
        "judge_not_a_pair": "应返回一个 (jobs, slots) 二元组，实际是 {value}（类型为 {kind}）",
        "judge_rejected": "lab.schedule 拒绝了这个工作负载：{error}",
        "judge_trivial": "工作负载必须是非平凡的：至少 2 个槽位，作业数多于槽位数，且作业长度不全相同",
        "judge_not_same": "静态需要 {static} 个 tick，连续需要 {continuous} 个：两者不相同",
        "judge_ratio": "静态 {static} / 连续 {continuous} = {ratio}，低于 {want}",
        "workload_jobs": "应为一个至多含 {limit} 个作业的列表",
        "workload_slots": "slots 必须是 1 到 {limit} 之间的 int",
        "workload_job_size": "请控制规模：每个作业最多 {tokens} 个词元，到达时刻最多为 {arrival}",
        "workload_total": "请控制规模：词元总数最多 {limit}",
        "slo_key_slow": "slo_key 处理这条轨迹的 {count} 个请求用了超过 {seconds} 秒 CPU 时间（键函数要快）",
        "slo_key_not_run": "键函数没有运行：{value}",
        "slo_key_missing": "TODO 5 的单元格里没有 slo_key 函数",
        "slo_key_raised": ("对这条轨迹的请求调用 slo_key 时抛出了 {error}（在 notebook 中运行 "
                           "lab.engine.serving_order(slo_key, infos) 会得到同样的错误，并能看到完整信息）"),
        "slo_order_invalid": "给出的顺序没有让每个请求恰好占一个位置",
        "slo_misses": "{misses}",
        "semicolon": "；",
        "run_stopped_after": "运行 {seconds} 秒后被终止",
        "run_no_progress_cpu": "已终止：{seconds} 秒 CPU 时间内没有进展",
        "run_no_progress": "已终止：{seconds} 秒内没有进展",
        "run_stopped": "已终止（{why}）",
        "run_stopped_watcher": "已终止（被监视它的评分程序终止）",
        "run_ended_early": "提前结束（退出码 {code}）",
        "run_wrote": "子进程写出了{what}",
        "server_not_started": "参考服务器没有启动",
        "server_not_needed": "不需要：子进程没有调用其他 TODO",
        "record_after_end": "结束之后的记录",
        "record_too_long": "一条 {size} 字节的记录",
        "record_unreadable": "不是结果记录的内容",
        "record_malformed": "格式错误的结果记录",
        "record_not_end": "本应结束处的意外记录",
        "record_cells_malformed": "格式错误的单元格记录",
        "record_not_scenario": "本应是场景处的意外记录",
        "record_end_malformed": "格式错误的场景结束记录",
        "problem_values": "多于 {limit} 个值",
        "problem_depth": "嵌套深度超过 {limit}",
        "problem_int": "一个 {bits} 位的整数",
        "problem_string": "一个 {length} 个字符的字符串",
        "problem_type": "一个 {type}",
        "problem_tag": "格式错误的 {tag} 标记",
        "problem_unknown_tag": "未知的标记",
        "problem_key_twice": "一个含有重复键的 dict",
        "problem_item_twice": "一个含有重复元素的 {type}",
        "problem_numpy_kind": "一个未知种类的 numpy 标量",
        "problem_type_name": "对象的类型名长度不对",
        "problem_base": "对象的内置值类型不对",
    },
}

# What repair changed in the layout of a notebook. Each costs nothing but LOST_TODO: a deleted answer cell scores
# its TODO 0 (grader/class_report.py counts the free ones and the lost TODOs apart).
LAYOUT = frozenset({"metadata_changed", "foreign_metadata", "answer_repeated", "cell_repeated", "cell_edited",
                    "answer_deleted", "cell_deleted"})
LOST_TODO = frozenset({"answer_deleted"})
# Keys whose Chinese is punctuation between values only (a full-width colon), so it holds no Chinese word.
PUNCTUATION = frozenset({"scenario_detail", "slo_misses", "semicolon", "scenario_numbered", "scenario_counted", "vllm_test"})


@dataclass(frozen=True)
class Message:
    """One note of the catalogue: its key and the values its template takes."""

    key: str
    params: dict = field(default_factory=dict)

    def text(self, language: str = "en") -> str:
        return TEXT[language][self.key].format(**{name: worded(value, language) for name, value in self.params.items()})

    def __str__(self) -> str:  # logs, exceptions and older callers read the English
        return self.text("en")

    def __hash__(self) -> int:  # its values are a dict: by key alone (a NoValue's detail is one, and a NoValue is a value)
        return hash(self.key)

    def inert(self, limit: int) -> Message:
        """The same message with each value inert (the templates are ours; the values may be the student's)."""
        return Message(self.key, {name: made_inert(value, limit) for name, value in self.params.items()})


# How a Named text is worded in another language: grader/i18n.py's named(), registered when i18n is imported. It
# reads the assignments' names, which sit above this module, so it cannot be imported from here (no import cycle).
_NAMED: list = []


def word_named_with(named) -> None:
    """Register named(text, family, language), the wording of Named texts in another language (grader/i18n.py)."""
    _NAMED[:] = [named]


# A value of a Message may itself be worded: a Message, a Named text of ours, or a Joined run of them (a path, the
# types of a dict's keys). Any other value (a str, a number) is shown as it is, in every language.
@dataclass(frozen=True)
class Named:
    """A text of the grader's own (never the student's) that grader/i18n.py words in Chinese by its family: a
    hidden scenario's name ("scenario"), a run's status ("status"). A run's detail and why a value was refused are
    Messages; a report stored while they were Named ("run_detail", "problem") shows them as written. A message of
    lab's is a LabText."""

    name: str
    family: str

    def text(self, language: str = "en") -> str:
        if language == "en":
            return self.name
        if not _NAMED:  # every page in another language is made through grader/i18n.py, which registers it
            raise RuntimeError("a Named text is worded in another language by grader.i18n: import grader.i18n first")
        return _NAMED[0](self.name, self.family, language)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class LabText:
    """A message of lab's (lab/i18n.py's Phrase: an English template of lab.i18n.ZH and its fields, each a str as
    printed or a LabText), worded from lab's own template in each language: the grader never reads lab's text back.
    `quoted`: shown as the page shows a child's text, as ascii() writes it, in quotes (the fields may quote the
    student's ids and keys); made by lab_text(), which keeps it within a rule's budget."""

    template: str
    fields: dict = field(default_factory=dict)
    quoted: bool = False

    def words(self, language: str = "en", quote: str = "") -> str:
        """The message in `language`; with `quote`, each field escaped as ascii() escapes it inside that quote."""
        from lab.i18n import ZH

        template = ZH.get(self.template, self.template) if language == "zh" else self.template
        if quote:   # the template's own quotes and backslashes too, as ascii() escapes them (its words are lab's, shown as they are)
            template = template.replace("\\", "\\\\").replace(quote, "\\" + quote)
        return template.format(**{name: value.words(language, quote) if isinstance(value, LabText) else _escaped(value, quote)
                                  for name, value in self.fields.items()})

    def text(self, language: str = "en") -> str:
        if not self.quoted:
            return self.words(language)
        shown = ascii(self.words())
        return shown if language == "en" else shown[0] + self.words(language, shown[0]) + shown[0]

    def __str__(self) -> str:
        return self.text("en")


def _escaped(text: str, quote: str) -> str:
    """`text` as ascii() writes it inside a str quoted with `quote` ('' : as it is)."""
    if not quote:
        return text
    body = ascii(text)
    if body[0] != quote:   # ascii() chose the other quote for this part alone: it leaves a quote it did not choose as it is
        return body[1:-1].replace(quote, "\\" + quote)
    return body[1:-1]


def lab_text(phrase, budget: int | None = None) -> LabText | str:
    """A lab.i18n.Phrase as a LabText; with `budget`, quoted as a child's text is shown, and when its English does not
    fit the budget, that English cut short (a str: shown as it is in every language)."""
    fields = {name: lab_text(value) if type(value).__name__ == "Phrase" else format(value) for name, value in phrase.fields.items()}
    said = LabText(phrase.template, fields, quoted=budget is not None)
    if budget is None:
        return said
    shown = ascii(said.words())
    return said if len(shown) <= budget else shown[:budget] + "..."


@dataclass(frozen=True)
class Joined:
    """Parts shown one after another (each a str shown as it is, or a Message)."""

    parts: tuple = ()

    def text(self, language: str = "en") -> str:
        return "".join(worded(part, language) for part in self.parts)

    def __str__(self) -> str:
        return self.text("en")


def kind_name(name: str) -> Message | str:
    """A type's name as grader/child_values.Budget.kind gives it: the name (code, as it is), or the words for a class it
    does not name."""
    return Message("an_object") if name == "an object" else name


def error_words(name: str) -> Message | str:
    """An exception's name as child_values.error_name or Budget.name gives it: the name (code), or the words for none."""
    return {"an error": Message("an_error"), "the cell itself ran past the time limit": Message("cell_timeout")}.get(name, name)


def worded(value, language: str) -> object:
    """A Message's value in `language`: a Message, Named or Joined worded; anything else as it is."""
    return value.text(language) if isinstance(value, (Message, Named, Joined, LabText)) else value


def from_json(data):
    """A value as dataclasses.asdict wrote it (report.json, a stored verdict) back: a Message, Named or Joined."""
    if isinstance(data, dict) and set(data) == {"key", "params"}:
        return Message(data["key"], {name: from_json(value) for name, value in data["params"].items()})
    if isinstance(data, dict) and set(data) == {"name", "family"}:
        return Named(data["name"], data["family"])
    if isinstance(data, dict) and set(data) == {"template", "fields", "quoted"}:
        return LabText(data["template"], {name: from_json(value) for name, value in data["fields"].items()}, data["quoted"])
    if isinstance(data, dict) and set(data) == {"parts"}:
        return Joined(tuple(from_json(part) for part in data["parts"]))
    return data


class Refusal(ValueError):
    """An error whose reason is a Message (str() is the English); it pickles and copies by its key and values."""

    def __init__(self, key: str, **params):
        self.message = Message(key, params)
        super().__init__(str(self.message))

    def __reduce__(self):  # args hold the English, not a key
        return _rebuilt, (type(self), self.message.key, self.message.params)


def _rebuilt(cls: type, key: str, params: dict) -> Refusal:
    return cls(key, **params)


Note = Message | str  # a Message, or a note still worded in English only (grader/notebook_run.py's, say)


def plain_page(why: BaseException | str) -> Message:
    """The note of a feedback page that could not be made, so that the plain page stands in (autograde, pipeline,
    nbgrader's log): an exception as "Type: text", or sanitize's reason as given."""
    return Message("plain_page", {"error": f"{type(why).__name__}: {why}" if isinstance(why, BaseException) else why})


def text(note: Note, language: str = "en") -> str:
    """A note in `language` (a plain string is English only)."""
    return note.text(language) if isinstance(note, Message) else note


def key(note: Note) -> str:
    """A note's catalogue key; '' for a plain string."""
    return note.key if isinstance(note, Message) else ""


def made_inert(note, limit: int):
    """A note (or a Message's value) with the student's text in it inert; our own Named texts as they are."""
    if isinstance(note, Message):
        return note.inert(limit)
    if isinstance(note, Joined):
        return Joined(tuple(made_inert(part, limit) for part in note.parts))
    return note if isinstance(note, (Named, LabText)) else inert(note, limit)
