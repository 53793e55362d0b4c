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
        "answer_repeated": "答案单元格 {gid} 出现了 {count} 次；评分的是最后一份（内核最后运行的是它）",
        "cell_repeated": "单元格 {gid} 出现了 {count} 次；只保留其中一份",
        "cell_edited": "单元格 {gid} 被修改过；评分时使用原始版本，因此不扣分",
        "answer_deleted": "答案单元格 {gid} 被删除了：这个 TODO 得 0 分",
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
    },
}

# What repair changed in the layout of a notebook. Each costs nothing but LOST_TODO: a deleted answer cell scores
# its TODO 0 (grader/class_report.py counts the free ones and the lost TODOs apart).
LAYOUT = frozenset({"metadata_changed", "foreign_metadata", "answer_repeated", "cell_repeated", "cell_edited",
                    "answer_deleted", "cell_deleted"})
LOST_TODO = frozenset({"answer_deleted"})


@dataclass(frozen=True)
class Message:
    """One note of the catalogue: its key and the values its template takes."""

    key: str
    params: dict = field(default_factory=dict)

    def text(self, language: str = "en") -> str:
        return TEXT[language][self.key].format(**self.params)

    def __str__(self) -> str:  # logs, exceptions and older callers read the English
        return self.text("en")

    def inert(self, limit: int) -> Message:
        """The same message with each value inert (the templates are ours; the values may be the student's)."""
        return Message(self.key, {name: inert(value, limit) for name, value in self.params.items()})


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


def made_inert(note: Note, limit: int) -> Note:
    return note.inert(limit) if isinstance(note, Message) else inert(note, limit)
