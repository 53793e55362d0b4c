"""A hidden scenario's label: a Message around its own name, worded in the page's language where it is shown.

Its own name is a Named key of its assignment's names_zh.SCENARIOS (or lab's names), which grader/i18n.py looks up
exactly, or code, shown as it is; its number, policy and prefix are the Message's. The scenario's "name" is the
label's English, which tests, snippets and mistakes quote. A scenario made as a plain {"name": ...} is labelled
Named(name) where it is graded (label()). The child sees neither: Grader._named sends it only a key, the ops and
cpu_seconds. Kept out of base.py (Rule, Task), which grader/assignment.py reads low in the import graph."""
from __future__ import annotations

from ..messages import Message, Named


def named(name: str) -> Named:
    """A scenario's own name (a key of its assignment's names_zh.SCENARIOS, or lab's names), worded by exact lookup."""
    return Named(name, "scenario")


def scenario(label: Message | Named, ops: list, **more) -> dict:
    """A scenario labelled `label`, its "name" the label's English."""
    return {"name": str(label), "label": label, "ops": ops, **more}


def label(scenario: dict) -> Message | Named:
    return scenario.get("label") or named(scenario["name"])


def _own(name: str | Message | Named) -> Message | Named:
    """A name inside a composed label: a plain name is looked up exactly (named), a label is kept as it is."""
    return named(name) if isinstance(name, str) else name


def numbered(name: str | Message | Named, number: int) -> Message:
    """'<name> #<number>'."""
    return Message("scenario_numbered", {"name": _own(name), "number": number})


def worked_example(name: str | Message | Named) -> Message:
    """'worked example: <name>'."""
    return Message("worked_example", {"name": _own(name)})


def with_policy(name: str | Message | Named, continuous: bool) -> Message:
    """'<name>, continuous' or '<name>, static'."""
    return Message("scenario_continuous" if continuous else "scenario_static", {"name": _own(name)})


def seeded(name: str, count: int, make) -> list[dict]:
    """`count` scenarios named '<name> #i', with ops from make(i) (which draws from a seeded rng)."""
    return [scenario(numbered(name, i), make(i)) for i in range(count)]
