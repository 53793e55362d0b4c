"""What each hidden rule may judge: the sentences of its TODO's text that require it, in each edition.

A hidden rule judges only what the TODO's text states. `promises.yml`, in the assignment's folder,
quotes for every rule of the suite the sentence(s) that state it, as they read in each language's student
edition. tests/grader/test_promises.py fails when a rule has no quote or a quote is no longer in its edition,
and a failing rule's feedback shows the quote, so the student sees which promise was broken.

Values are compared with their types (grader/compare.py). Where the text allows a looser type, the rule says so
under `allows`: the allowance (one of compare.ALLOWANCES) and the sentence of each edition that allows it, which
must be one of the rule's quotes and name what it allows (compare.ALLOWANCES' words).

Layout of the file:

    TODO 1:
      "<rule name exactly as in the suite>":
        en: ["a sentence of the English TODO text", ...]
        zh: ["同一要求在中文版中的原句", ...]
        allows:                       # only where the text allows a looser type
          number: {en: "the sentence that allows it", zh: "允许它的那句话"}
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from .translation import LANGUAGES


def read(path: Path) -> dict[str, dict[str, dict[str, list[str]]]]:
    """{task_id: {rule name: {language: [quotes]}}}; empty when the assignment has no file yet."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {task: {rule: _rule(langs or {}) for rule, langs in (rules or {}).items()} for task, rules in data.items()}


def _rule(entry: dict) -> dict:
    found = {lang: [q] if isinstance(q, str) else list(q) for lang, q in entry.items() if lang != "allows"}
    if "allows" in entry:
        found["allows"] = dict(entry["allows"] or {})
    return found


def quotes(assignment, task_id: str, rule: str, language: str = "en") -> list[str]:
    """The sentences of `task_id`'s text that state `rule`, in `language` ([] if none are recorded)."""
    return assignment.promises.get(task_id, {}).get(rule, {}).get(language, [])


def allows(assignment, task_id: str, rule: str) -> frozenset:
    """The looser types `task_id`'s text allows for `rule` (grader/compare.py's ALLOWANCES); none by default."""
    return frozenset(assignment.promises.get(task_id, {}).get(rule, {}).get("allows", {}))


def normalized(text: str) -> str:
    """Whitespace collapsed, so that a quote matches however the text is wrapped."""
    return " ".join(text.split())


def todo_text(nb, task_id: str, test_id: str | None = None) -> str:
    """The text a student reads for `task_id`: from the markdown cell headed by it through its visible-check cell."""
    number = task_id.split()[-1]
    heading = re.compile(rf"^#+ .*\bTODO {re.escape(number)}\b", re.M)
    test_id = test_id or f"todo{number}_tests"
    cells, inside = [], False
    for cell in nb.cells:
        if cell.cell_type == "markdown" and heading.search(cell.source):
            inside = True
        if inside:
            cells.append(cell.source)
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == test_id:
                break
    return normalized("\n".join(cells))


def problems(assignment, recorded: dict | None = None) -> list[str]:
    """What is wrong with an Assignment's quotes: a rule without one, a quote not in its edition, a stale rule."""
    from .term import PUBLIC_SEED

    recorded = assignment.promises if recorded is None else recorded
    tasks = assignment.tasks(PUBLIC_SEED)   # a term's rules are the same, with other random cases
    found = []
    for language in LANGUAGES:
        nb = assignment.release(language)
        for task in tasks:
            found += _quote_problems(language, task, todo_text(nb, task.task_id, task.test_id), recorded.get(task.task_id, {}))
    found += [f"{task.task_id} / {rule.name}: {problem}" for task in tasks for rule in task.rules
              for problem in allowance_problems(rule, recorded.get(task.task_id, {}).get(rule.name, {}))]
    names = {(t.task_id, r.name) for t in tasks for r in t.rules}
    found += [f"{task} / {rule}: no such rule in the suite" for task, rules in recorded.items() for rule in rules
              if (task, rule) not in names]
    return found


def _quote_problems(language: str, task, text: str, recorded: dict) -> list[str]:
    """What is wrong with one TODO's quotes in one edition (`text`, its text there): no text, a rule without a quote,
    a quote not in the text."""
    found = [] if text else [f"{language} {task.task_id}: no text found in the student edition"]
    for rule in task.rules:
        said = recorded.get(rule.name, {}).get(language, [])
        if not said:
            found.append(f"{language} {task.task_id} / {rule.name}: no sentence of the text states it")
        found += [f"{language} {task.task_id} / {rule.name}: not in the edition: {q!r}"
                  for q in said if normalized(q) not in text]
    return found


def allowance_problems(rule, entry: dict) -> list[str]:
    """What is wrong with a rule's `allows`: an unknown allowance, a sentence that is not one of the rule's quotes in
    an edition or that does not name what it allows, or an allowance on a judged rule (its judge checks types)."""
    from .compare import ALLOWANCES

    said = entry.get("allows", {})
    found = ["a judged rule allows nothing: its judge checks the types"] if said and rule.judge is not None else []
    for name, sentences in said.items():
        if name not in ALLOWANCES:
            found.append(f"allows {name!r}, which is not one of {sorted(ALLOWANCES)}")
            continue
        for language in LANGUAGES:
            sentence = sentences.get(language) if isinstance(sentences, dict) else None
            quoted = {normalized(q) for q in entry.get(language, [])}
            if not isinstance(sentence, str) or normalized(sentence) not in quoted:
                found.append(f"allows {name}, but its {language} sentence is not one of the rule's quotes")
            else:
                found += [f"allows {name}, but its {language} sentence does not say {word!r}"
                          for word in ALLOWANCES[name][language] if word not in sentence]
    return found
