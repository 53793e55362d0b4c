"""One assignment, loaded once from its folder grader/assignments/<name>/ and handed down to every layer.

The folder holds (grader/assignment_template/ is a working example, `make new-assignment` copies it):

    master.py        the jupytext master: the notebook, its reference answers, points, grade_ids and TODO names
    <lang>.yml       a translation catalogue per other language (grader/translation.py)
    promises.yml     the sentences of each TODO's text that state each hidden rule (grader/promises.py)
    suite.py         the hidden suite: build(seed) -> {answer grade_id: [Rule, ...]}
    driver.py        runs in the grading child: replays a scenario's ops and reports what it observes
    cases.py         in the grader: a failing scenario's ops as code a student can run (grader/snippets.py)
    mutants.py       MUTANTS: broken answers, each must lose points on its own TODO only (grader/contract.py); optionally
                     OUTSIDE: bugs no mutant models, which must cost points and be named after no mutant
    assignment.toml  optional: the figures the course-wide tests hold it to (Figures below; absent keys: the defaults)
    names_zh.py      RULES and SCENARIOS: the Chinese names of its rules and scenarios (grader/i18n.py); optionally
                     COMMENTS: the comments cases.py writes in a failing case's code, in Chinese
    corpus/          correct answers written independently of the reference: notebooks (tests/grader/test_corpus.py),
                     or <name>.py files with ANSWERS = {grade_id: source}

Any other file in the folder is ignored here. Assignments are the folders with a master.py (paths.assignment_names).
What the files define (Rule, Task, Mutant, labels, the driver's text) is grader/contract.py's; MUTANTS (every
assignment's mutants) and mutated_answers (a reference with one applied) are here, as they load assignments.
"""
from __future__ import annotations

import ast
import importlib
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace

import nbformat

from . import caches, cells, contract, definitions, editions
from .cells import grade_id
from .paths import NOTEBOOKS_DIR, assignment_dir, assignment_names
from .contract import Mutant, Task

TODO_HEADING = re.compile(r"^#+ .*\bTODO (\d+)\b", re.M)
FIGURES_FILE = "assignment.toml"


@dataclass(frozen=True)
class Figures:
    """What the course-wide tests hold one assignment to, as its assignment.toml declares (each key optional).

    The defaults suit a new, small assignment (the template's); notebooks 01-03 declare larger figures."""

    plots: int = 0              # at least this many figures (PNG outputs) in each solved edition
    printed_cells: int = 1      # at least this many code cells in the zh solved edition, whose printed text fonts never change
    zh_characters: int = 200    # at least this many Chinese characters in the zh student edition's prose
    corpus: int | None = None   # at least this many corpus notebooks (corpus/*.ipynb); None: two per TODO
    zh_terms: tuple[str, ...] = ()   # glossary terms its zh prose must use
    zh_allowed: tuple[str, ...] = ()  # variants the course glossary forbids that its zh text may use, for a concept of
    #                                   its own (时间片 for a round-robin time quantum, where 01-03 mean a tick)
    zh_headings: int = 0        # at least this many headings that carry the other language's as their subtitle
    zh_tables: int = 0          # at least this many tables (headed in Chinese) in the zh solved edition
    zh_code_cells: int = 1      # at least this many code cells whose zh text differs (master, student and solved editions)
    zh_broken: dict[str, str] = field(default_factory=dict)   # answer grade_id -> the mutant (or "hang") the zh
    #                                                           failure-page test gives that TODO; default: its first mutant

    @classmethod
    def read(cls, path: Path) -> "Figures":
        """The figures of an assignment.toml (the defaults without one); an unknown key or a wrong type is refused."""
        if not path.exists():
            return cls()
        with open(path, "rb") as handle:
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path}: not TOML ({exc})") from None
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"{path}: unknown key(s) {unknown}; known: {sorted(known)}")
        kinds = {"plots": int, "printed_cells": int, "zh_characters": int, "corpus": int, "zh_terms": list, "zh_broken": dict,
                 "zh_allowed": list,
                 "zh_headings": int, "zh_tables": int, "zh_code_cells": int}
        said = {int: "an integer", list: "a list of strings", dict: "a table"}
        for key, value in data.items():
            if not isinstance(value, kinds[key]) or isinstance(value, bool):
                raise ValueError(f"{path}: {key} must be {said[kinds[key]]}, not {value!r}")
        for key in ("zh_terms", "zh_allowed"):
            if key in data:
                if not all(isinstance(item, str) for item in data[key]):
                    raise ValueError(f"{path}: {key} must be a list of strings, not {data[key]!r}")
                data[key] = tuple(data[key])
        return cls(**data)


def names() -> list[str]:
    """Every assignment, in course order."""
    return assignment_names()


@dataclass(frozen=True)
class Todo:
    """One TODO as the master declares it: its name, answer cell, test cell and points."""

    task_id: str
    answer_id: str
    test_id: str
    points: float


def todos(nb) -> list[Todo]:
    """Each answer cell of a master with the TODO heading above it and the first graded test cell after it."""
    found, heading, answer = [], None, None
    for cell in nb.cells:
        meta = editions.nbgrader_meta(cell)
        if cell.cell_type == "markdown" and TODO_HEADING.search(cell.source):
            heading = f"TODO {TODO_HEADING.search(cell.source).group(1)}"
        elif meta.get("solution") and editions.grade_id(cell):
            if heading is None:
                raise ValueError(f"answer cell {editions.grade_id(cell)} has no '### TODO k' heading above it")
            answer = editions.grade_id(cell)
        elif meta.get("grade") and answer is not None:
            found.append(Todo(heading, answer, editions.grade_id(cell), meta.get("points", 0)))
            answer = None
    return found


class Assignment:
    """What grading and building need of one assignment, each part read from its folder once, when first used."""

    def __init__(self, name: str):
        self.name, self.folder = name, assignment_dir(name)

    def __repr__(self) -> str:
        return f"Assignment({self.name!r})"

    def _module(self, stem: str):
        return importlib.import_module(f"grader.assignments.{self.name}.{stem}")

    # --- the master: editions, reference, TODOs ---
    @caches.cached("(Assignment, language)", "the master is read once per process (edited masters: a new process, or forget())")
    def edition(self, language: str = "en") -> nbformat.NotebookNode:
        """The master in `language`, set-up code filled in (read only: callers copy what they change)."""
        return editions.read_master(self.name, language)

    @cached_property
    def master(self) -> nbformat.NotebookNode:
        return self.edition("en")

    @cached_property
    def nbgrader_source(self) -> nbformat.NotebookNode:
        return editions.without_solution_prose(self.master)

    @cached_property
    def reference(self) -> dict[str, str]:
        """grade_id -> the reference answer (read only: copy before changing)."""
        return editions.reference_of(self.master)

    @cached_property
    def answer_ids(self) -> list[str]:
        return editions.answer_ids(self.master)

    @cached_property
    def stubs(self) -> dict[str, list[str]]:
        """{answer grade_id: its stub in each released edition}: what a student starts from (read only)."""
        found: dict[str, list[str]] = {gid: [] for gid in self.answer_ids}
        for language in self.languages:
            for cell in self.release(language).cells:
                if grade_id(cell) in found:
                    found[grade_id(cell)].append(cell.source)
        return found

    @cached_property
    def test_ids(self) -> list[str]:
        return editions.test_ids(self.master)

    @cached_property
    def setup(self) -> list[str]:
        """Sources of the given cells the grader replays before the answer cells."""
        return editions.grading_setup_sources(self.master)

    @cached_property
    def todos(self) -> list[Todo]:
        return todos(self.master)

    @property
    def max_points(self) -> float:
        return sum(todo.points for todo in self.todos)

    @cached_property
    def hidden_snippets(self) -> list[str]:
        """Lines of the hidden tests, which no page may show (grader/feedback.py)."""
        return editions.hidden_snippets(self.nbgrader_source)

    # --- the released student editions (notebooks/, built by `make notebooks`) ---
    def release_path(self, language: str = "en") -> Path:
        return NOTEBOOKS_DIR / f"{self.name}.ipynb" if language == "en" else NOTEBOOKS_DIR / language / f"{self.name}.ipynb"

    @caches.cached("(Assignment, language)", "notebooks/ is rebuilt by `make notebooks`, not while grading")
    def release(self, language: str = "en") -> nbformat.NotebookNode:
        """The released student edition (read only: callers copy what they change)."""
        return nbformat.read(self.release_path(language), as_version=4)

    @cached_property
    def languages(self) -> tuple[str, ...]:
        """The languages with a released edition."""
        from .translation import LANGUAGES
        return tuple(lang for lang in LANGUAGES if self.release_path(lang).exists())

    # --- the hidden suite and how its cases run and show ---
    @cached_property
    def suite(self):
        return self._module("suite")

    def tasks(self, seed: int) -> list[Task]:
        """One Task per TODO of the master, with the suite's rules for it (drawn with `seed`), each case of the TODO's
        visible check cell among them (grader/contract.py's place: a suite that leaves one out is refused)."""
        rules = self.suite.build(seed)
        ids = [todo.answer_id for todo in self.todos]
        if sorted(rules) != sorted(ids):
            raise ValueError(f"{self.folder / 'suite.py'}: rules for {sorted(rules)}, but the master's TODOs answer in {ids}")
        rules = contract.place(rules, self.checks, getattr(self.suite, "VISIBLE", {}), getattr(self.suite, "VISIBLE_JUDGED", {}),
                               str(self.folder / "suite.py"))
        from .promises import allows
        return [Task(t.task_id, t.answer_id, t.test_id, t.points,
                     [replace(rule, allows=allows(self, t.task_id, rule.name)) for rule in rules[t.answer_id]])
                for t in self.todos]

    @cached_property
    def pure(self) -> list[str]:
        """The exports the suite declares pure (PURE): each a function of the state reachable from its arguments that
        writes nothing, so the bridge may answer its calls in batches (grader/runner/bridge.py, Batch)."""
        declared = list(getattr(self.suite, "PURE", ()))
        exported = {name for source in self.reference.values() for name in definitions.exports(source)}
        unknown = [name for name in declared if name not in exported]
        if unknown:
            raise ValueError(f"{self.folder / 'suite.py'}: PURE names {unknown[0]!r}, which no answer cell of the master defines")
        return declared

    @cached_property
    def logs(self) -> list[str]:
        """The fields the suite declares logs (LOGS, "Class.field"): a list the references only append to, through that
        field, and never read, so the grading child keeps it and the bridge carries only appends (grader/runner/bridge.py,
        Sink). Class must be a class a set-up cell defines."""
        declared = list(getattr(self.suite, "LOGS", ()))
        classes = {node.name for source in self.setup for node in ast.parse(cells.strip_magics(source)).body
                   if isinstance(node, ast.ClassDef)}   # a class of the cell's top level: its name is its qualname
        for name in declared:
            owner, _, field = name.rpartition(".")
            if not (owner in classes and field.isidentifier() and not field.startswith("__")):
                raise ValueError(f"{self.folder / 'suite.py'}: LOGS names {name!r}, not a field of a class a set-up cell defines")
        return declared

    @cached_property
    def checks(self) -> list[contract.Check]:
        """Each TODO's visible check cell (English master, hidden tests left out): its definitions and its cases."""
        return contract.checks(self.todos, self.nbgrader_source)

    @cached_property
    def check_definitions(self) -> list[str]:
        """What a grading child runs after the answer cells, on both sides of the bridge: the check cells' definitions."""
        return [c.definitions for c in self.checks]

    @cached_property
    def driver_source(self) -> str:
        return contract.driver_source(self.folder)

    @cached_property
    def cases(self):
        return self._module("cases")

    # --- authoring: promises, mutants, correct alternatives, names in other languages ---
    @cached_property
    def promises(self) -> dict[str, dict[str, dict[str, list[str]]]]:
        from .promises import read
        return read(self.folder / "promises.yml")

    @cached_property
    def mutants(self) -> list:
        """Its mutants.py's MUTANTS ([] without the file)."""
        return list(self._module("mutants").MUTANTS) if (self.folder / "mutants.py").exists() else []

    @cached_property
    def outside(self) -> list:
        """Its mutants.py's OUTSIDE: bugs no mutant models, which must cost points and get no diagnosis ([] without)."""
        return list(getattr(self._module("mutants"), "OUTSIDE", [])) if (self.folder / "mutants.py").exists() else []

    @cached_property
    def declared(self) -> Figures:
        """Its assignment.toml as written, read once: a new assignment's defaults for what it leaves out, and no
        corpus size unless it sets one (`figures` has that; this needs no master, e.g. for zh_allowed)."""
        return Figures.read(self.folder / FIGURES_FILE)

    @cached_property
    def figures(self) -> Figures:
        """Its assignment.toml: the figures course-wide tests hold it to (plots, printed cells, Chinese characters,
        corpus size, zh terms, headings, tables), with a new assignment's defaults for what it leaves out."""
        figures = self.declared
        return figures if figures.corpus is not None else replace(figures, corpus=2 * len(self.todos))

    @cached_property
    def corpus(self) -> list[Path]:
        return sorted((self.folder / "corpus").glob("*.ipynb"))

    @cached_property
    def alternatives(self) -> dict[str, dict[str, str]]:
        """Correct answers kept as code, corpus/<name>.py with ANSWERS = {grade_id: source}: {name: ANSWERS}."""
        found = {}
        for path in sorted((self.folder / "corpus").glob("*.py")):
            namespace: dict = {}
            exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
            found[path.stem] = namespace["ANSWERS"]
        return found

    @cached_property
    def names_zh(self):
        """Its names_zh.py (RULES, SCENARIOS); empty without the file, so English names are shown."""
        if not (self.folder / "names_zh.py").exists():
            return SimpleNamespace(RULES={}, SCENARIOS={})
        return self._module("names_zh")


@caches.cached("an assignment's name", "one Assignment per process; its cached_property values live on it and go with it")
def load(name: str) -> Assignment:
    """The assignment called `name` (one object per process); unknown names stop with the known ones."""
    return Assignment(name)


def get(assignment: Assignment | str) -> Assignment:
    """An Assignment as it is, or the one a name stands for (at the entry points: command lines, tests)."""
    return assignment if isinstance(assignment, Assignment) else load(assignment)


def __getattr__(name: str):
    """MUTANTS: {assignment: its mutants}, for every assignment found (read when first asked for)."""
    if name == "MUTANTS":
        return {assignment: load(assignment).mutants for assignment in names()}
    raise AttributeError(name)


def mutated_answers(assignment: Assignment | str, mutant: Mutant) -> dict[str, str]:
    """The reference answers of `assignment` (an Assignment or its name) with one mutant applied."""
    answers = dict(get(assignment).reference)
    answers[mutant.answer_id] = mutant.apply(answers[mutant.answer_id])
    return answers
