"""`make check-assignment NAME=<name>`: what one assignment lacks, as a checklist of ✓/✗ (! advice) lines, then its tests.

    python -m grader.check_assignment 01_continuous_batching [--no-tests]

Each item runs its check directly and reads the check's own result (verdicts, lists), never a message's text:

- trivial answers: each TODO's function bodies replaced by one constant statement (TRIVIAL) are graded; a rule
  that passes one is listed (as tests/grader/test_trivial_answers.py, which uses `passing_rules` from here);
- quoted sentences: a rule of the suite with no sentence of its TODO's text in promises.yml, per edition; then
  every problem grader.promises.problems finds (tests/grader/test_promises.py), those rules among them;
- mutants: each must lose points on its own TODO and fail no rule of another (the per-notebook tests of
  tests/grader/test_grader.py); and each needs a mistake and a hint in both languages (mistakes_file_problems);
  a mutant that fails more than one rule of its own TODO is listed as advice ('!', not a failure: one bug should
  fail one rule, docs/authoring.md, but a mistake in a value every rule reads fails them all);
- the corpus: at least as many notebooks as its assignment.toml's `corpus` figure (tests/grader/test_diagnose.py),
  none still the template's starter notebooks (template_corpus: their answer cells read, nothing graded);
- translations: `python -m grader.translation status NAME` (grader.translation.status, and title_problems: a
  scaffolded title left in English), per language;
- its tests: pytest over every test parametrised with this assignment or a path to its files (tests/conftest.py's
  --assignment; the same tests as -k NAME), those
  marked slow aside; each failing test is an item, read from pytest's JUnit XML report.

It exits 1 when an item fails, 0 when every one holds (advice aside).
"""
from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .paths import ROOT, assignment_dir

JARGON = re.compile(r"\b(?:seeds?|issues?)\b|种子", re.I)   # a student knows no seed or issue of this repository
TRIVIAL = ("pass", "return None", "return True", "return False", "return 0", "return []", "return {}", "return ()",
           "raise ValueError", "raise NotImplementedError")


def trivial(source: str, body: str) -> str:
    """`source` with the body of every function it defines replaced by `body` (the docstring stays)."""
    lines = source.splitlines(keepends=True)
    functions = [node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    assert functions, "an answer cell defines functions only"
    for node in reversed(functions):  # from the bottom up, so earlier line numbers stay valid
        first = node.body[0]
        keep = first.end_lineno if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else first.lineno - 1
        indent = " " * first.col_offset
        lines[keep:node.end_lineno] = [f"{indent}{body}\n"]
    return "".join(lines)


def passing_rules(grader, answers: dict[str, str]) -> list[str]:
    """'TODO k `body`: rule' for every rule that holds when one TODO's bodies are trivial."""
    found = []
    for task in grader.tasks:
        for body in TRIVIAL:
            verdict = grader.grade_task(task, trivial(answers[task.answer_id], body))
            found += [f"{task.task_id} `{body}`: {rule.name}" for rule in verdict.rules if rule.passed]
    return found


def unquoted_rules(assignment) -> list[str]:
    """'<language> TODO k / rule' for each rule of the suite that promises.yml gives no sentence of its TODO's text."""
    from .term import PUBLIC_SEED
    from .translation import LANGUAGES

    recorded = assignment.promises
    return [f"{language} {task.task_id} / {rule.name}" for language in LANGUAGES if language in assignment.languages
            for task in assignment.tasks(PUBLIC_SEED) for rule in task.rules
            if not recorded.get(task.task_id, {}).get(rule.name, {}).get(language)]


def mutant_grades(grader) -> list[tuple]:
    """(mutant, the verdicts of the reference answers with it applied) for each mutant of the assignment."""
    from .assignment import mutated_answers

    return [(mutant, grader.grade(mutated_answers(grader.assignment, mutant))) for mutant in grader.assignment.mutants]


def leaky_mutants(grader, graded: list | None = None) -> list[str]:
    """Each mutant that keeps full marks on its own TODO, or fails a rule of another TODO, and how."""
    found = []
    for mutant, verdicts in mutant_grades(grader) if graded is None else graded:
        own = next(v for v in verdicts if v.answer_id == mutant.answer_id)
        if own.score >= own.points:
            found.append(f"{mutant.answer_id} {mutant.name!r}: keeps full marks on its own TODO")
        for v in verdicts:
            failed = [r.name for r in v.rules if not r.passed]
            if v.answer_id != mutant.answer_id and (failed or v.score < v.points):
                found.append(f"{mutant.answer_id} {mutant.name!r}: fails {v.task_id}'s {failed or 'points'}")
    return found


def mutants_failing_several_rules(grader, graded: list | None = None) -> list[str]:
    """Each mutant that fails more than one rule of its own TODO, and which: one mistake should fail one rule
    (docs/authoring.md, "Keeping rules independent"), or the rule that should hold needs narrower scenarios."""
    found = []
    for mutant, verdicts in mutant_grades(grader) if graded is None else graded:
        own = next(v for v in verdicts if v.answer_id == mutant.answer_id)
        failed = [r.name for r in own.rules if not r.passed]
        if len(failed) > 1:
            found.append(f"{mutant.answer_id} {mutant.name!r}: fails {len(failed)} rules of {own.task_id}: {failed}")
    return found


def defined(source: str) -> set[str]:
    """The names an answer cell defines (exports), or, if it defines more than functions, every word in it."""
    from .definitions import exports, words

    try:
        return set(exports(source))
    except Exception:   # a helper constant, a syntax error: the check stays cheap and lenient
        return words(source)


def template_corpus(assignment) -> list[str]:
    """Each corpus notebook still the template's: an answer cell that does not define the names the reference's
    defines, or answers equal to a starter entry of the template's corpus.yml while the master is no longer the
    template's. Reads the notebooks only; grades nothing."""
    import jupytext
    import nbformat
    import yaml

    from . import editions
    from .new_assignment import CORPUS, TEMPLATE

    reference = dict(assignment.reference)
    starters = [{k: v.strip() for k, v in entry.items()}
                for entry in yaml.safe_load((TEMPLATE / CORPUS).read_text(encoding="utf-8")).values()]
    templated = reference == editions.reference_of(jupytext.read(TEMPLATE / "master.py"))
    found = []
    for path in assignment.corpus:
        nb = nbformat.read(path, as_version=4)
        answers = {editions.grade_id(c): c.source for c in nb.cells if editions.grade_id(c) in reference}
        missing = {aid: sorted(defined(source) - defined(answers.get(aid, ""))) for aid, source in reference.items()}
        if any(missing.values()):
            found.append(f"{path.name}: does not define {', '.join(f'{aid} {names}' for aid, names in missing.items() if names)}"
                         " (a notebook of the template's corpus? replace it with one answering this assignment)")
        elif not templated and {k: v.strip() for k, v in answers.items()} in starters:
            found.append(f"{path.name}: answers as the template's corpus.yml does (replace it with one answering this assignment)")
    return found


def failing_tests(report: Path) -> tuple[int, list[str]]:
    """(tests run, 'test id: failure kind' of each failed or errored one) from a pytest JUnit XML report."""
    cases = ET.parse(report).getroot().iter("testcase")
    ran, failed = 0, []
    for case in cases:
        if case.find("skipped") is not None:
            continue
        ran += 1
        bad = next((tag for tag in ("failure", "error") if case.find(tag) is not None), None)
        if bad:
            failed.append(f"{case.get('classname')}::{case.get('name')}: {bad}")
    return ran, failed


def duplicates(name: str) -> list[str]:
    """The tests that the items above already are: left out of the pytest run."""
    return ["--deselect", f"tests/grader/test_trivial_answers.py::test_no_rule_holds_for_a_trivial_answer[{name}]"]


def run_tests(name: str, extra: list[str]) -> tuple[int, list[str], int]:
    """Its tests (tests/conftest.py --assignment NAME, not slow): (tests run, failures, pytest's exit code)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        done = subprocess.run([sys.executable, "-m", "pytest", "tests", "--assignment", name, "-m", "not slow", "-q",
                               "-p", "no:cacheprovider", f"--junitxml={report}", *duplicates(name), *extra], cwd=ROOT)
        if not report.exists():
            return 0, [f"pytest wrote no report (exit code {done.returncode})"], done.returncode
        ran, failed = failing_tests(report)
        if done.returncode not in (0, 5) and not failed:   # 5: no test selected
            failed = [f"pytest exit code {done.returncode}"]
        return ran, failed, done.returncode


@dataclass
class Item:
    """One line of the checklist: what must hold, and what does not (empty when it holds)."""

    title: str
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0
    advice: bool = False   # what it lists is worth a look, not a failure: marked '!', the exit code stays 0

    @property
    def ok(self) -> bool:
        return not self.missing

    @property
    def fails(self) -> bool:
        return not self.ok and not self.advice

    def lines(self, shown: int = 12) -> list[str]:
        mark = "✓" if self.ok else "!" if self.advice else "✗"
        head = f"{mark} {self.title}" + (f"  ({self.seconds:.0f} s)" if self.seconds >= 1 else "")
        more = [f"    ... and {len(self.missing) - shown} more"] if len(self.missing) > shown else []
        return [head, *(f"    - {line}" for line in self.missing[:shown]), *more]


def checklist(name: str, tests: bool = True, pytest_args: list[str] | None = None, say=print) -> list[Item]:
    """Every item for assignment `name`, each said as soon as it is known."""
    from . import promises, translation
    from .assignment import load
    from .grade import Grader

    assignment = load(name)
    grader = Grader(name)
    items = []

    def check(title, compute, advice=False):
        start = time.monotonic()
        try:
            missing, broke = list(compute()), False
        except Exception as exc:   # a check that cannot run is an item that fails, and says why
            missing, broke = [f"the check raised {type(exc).__name__}: {exc}"], True
        items.append(Item(title, missing, time.monotonic() - start, advice and not broke))
        for line in items[-1].lines():
            say(line)

    check("no rule holds for a trivial answer (a constant body)", lambda: passing_rules(grader, dict(assignment.reference)))
    check("every rule quotes a sentence of its TODO's text (promises.yml)", lambda: unquoted_rules(assignment))
    check("promises.yml passes grader.promises.problems: quotes in their editions, allowances, no stale rule "
          "(unquoted rules again)", lambda: promises.problems(assignment))
    graded = []   # the mutants are graded once, for the two items that read their verdicts

    def mutants():
        graded[:] = graded or mutant_grades(grader)
        return graded

    check("every mutant loses points on its own TODO and fails no rule of another", lambda: leaky_mutants(grader, mutants()))
    # Advice only: in 01-03 a mistake such as "flow forgets the + 1" breaks every rule of its TODO, by design.
    check("one bug fails one rule: every mutant fails one rule of its own TODO (docs/authoring.md)",
          lambda: mutants_failing_several_rules(grader, mutants()), advice=True)
    check("every mutant has a mistake and a hint in both languages (mistakes.yml)", lambda: mistakes_file_problems(name))
    try:   # the title's number is assignment.toml's: a file that cannot be read is this item's failure, said below
        wanted = f"at least {assignment.figures.corpus}"
    except ValueError:
        wanted = "as many"
    check(f"a corpus of {wanted} notebooks (assignment.toml: corpus), none of them the template's",
          lambda: ([f"{len(assignment.corpus)} in {assignment.folder / 'corpus'}"]
                   if len(assignment.corpus) < assignment.figures.corpus else []) + template_corpus(assignment))
    for language in translation.languages(name)[1:]:
        check(f"the {language} translation is current, its title too (python -m grader.translation status {name})",
              lambda language=language: translation.status(name, language) + translation.title_problems(name, language))
    if tests:
        start = time.monotonic()
        say(f"… its tests: python -m pytest tests --assignment {name} -m 'not slow'")
        ran, failed, _ = run_tests(name, pytest_args or [])
        items.append(Item(f"its {ran} tests pass (pytest --assignment {name} -m 'not slow')", failed,
                          time.monotonic() - start))
        for line in items[-1].lines(shown=50):
            say(line)
    return items


def mistakes_file_problems(assignment: str, said: dict | None = None) -> list[str]:
    """What is wrong with an assignment's mistakes.yml (`said`: its parsed text): a mutant without an entry, a stale
    entry, a language or field missing, a hint or description that quotes the mutant's code, Chinese off the glossary."""
    from .assignment import get
    from .diagnose import LANGUAGES, _name, texts

    said = texts(_name(assignment)) if said is None else said
    mutants = get(assignment).mutants
    found = [f"{m.name}: no entry" for m in mutants if m.name not in said]
    found += [f"{name}: no such mutant" for name in said if name not in {m.name for m in mutants}]
    for m in (m for m in mutants if m.name in said):
        found += _mutant_problems(m, said[m.name], _name(assignment), LANGUAGES)
    return found


def _mutant_problems(m, said, name: str, languages) -> list[str]:
    """The problems of one mutant's entry `said` ({language: {"mistake": ..., "hint": ...}})."""
    code = {line.strip() for line in (m.find + "\n" + m.replace).splitlines() if len(line.strip()) >= 12}
    found = []
    for lang in languages:
        entry = said.get(lang) if isinstance(said, dict) else None
        for part in ("mistake", "hint"):
            text = entry.get(part) if isinstance(entry, dict) else None
            found += _text_problems(f"{m.name}: ", f"{lang} {part}", text, code, name if lang == "zh" else None)
    return found


def _text_problems(head: str, what: str, text, code: set[str], zh_of: str | None) -> list[str]:
    """One mistake or hint text's problems (`zh_of`: its assignment, when the text is Chinese)."""
    from .glossary import allowed, violations

    if not isinstance(text, str) or not text.strip():
        return [f"{head}no {what}"]
    found = [f"{head}the {what} gives the code {line!r}" for line in code if line in text]
    found += [f"{head}{what}: {v}" for v in (violations(text, allow=allowed(zh_of)) if zh_of else [])]
    return found + ([f"{head}the {what} uses the course's internal jargon"] if JARGON.search(text) else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the assignment, e.g. 01_continuous_batching")
    parser.add_argument("--no-tests", action="store_true", help="the direct checks only, not its pytest tests")
    args, pytest_args = parser.parse_known_args(argv)
    assignment_dir(args.name)   # an unknown name stops here, with the known ones
    start = time.monotonic()
    items = checklist(args.name, tests=not args.no_tests, pytest_args=pytest_args)
    failed, advice = [item for item in items if item.fails], [item for item in items if item.advice and not item.ok]
    print(f"{args.name}: {len(items) - len(failed)} of {len(items)} items hold ({time.monotonic() - start:.0f} s)"
          + ("" if not failed else "; still missing: " + "; ".join(item.title for item in failed))
          + ("" if not advice else "; worth a look: " + "; ".join(item.title for item in advice)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
