"""One Config for grading: the table of settings (docs/instructors.md), the command line and nbgrader's traits all come from its fields,
and each setting has its field's name everywhere; one pipeline of steps, in order; no import cycle in grader/."""
import argparse
import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest
from traitlets import TraitError
from traitlets.config import Config as TraitletsConfig

from conftest import ROOT
from grader import config, pipeline
from grader.config import DEFAULTS, Config
from grader.nbgrader_plugin import FeedbackTodoExporter, RepairCellMetadata, SandboxedAutograde
from grader.runner import Limits

TABLE = re.compile(r"<!-- settings:[^\n]*-->\n(.*?)\n<!-- /settings -->", re.S)


SETTINGS_DOC = ROOT / "docs" / "instructors.md"


def table_problems(text: str) -> list[str]:
    """How the documented table of settings differs from config.markdown_table(), row by row."""
    found = TABLE.search(text)
    if found is None:
        return ["docs/instructors.md has no table of settings between its markers"]
    ours, theirs = config.markdown_table().splitlines(), found[1].splitlines()
    problems = [f"docs: {line}" for line in theirs if line not in ours]
    return problems + [f"missing from the docs: {line}" for line in ours if line not in theirs]


def test_the_documented_table_is_the_config():
    assert table_problems(SETTINGS_DOC.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("plant", [
    lambda text: text.replace("| 90 |", "| 60 |"),                                    # a default changed
    lambda text: re.sub(r"\n\| `cell_cpu` [^\n]*", "", text),                         # a setting dropped
    lambda text: text.replace("<!-- /settings -->", "| `turbo` | `--turbo` |  | 1 | faster |\n<!-- /settings -->"),
    lambda text: text.replace("| `--feedback-wall` | `feedback_wall` |", "| `--feedback-wall` | `budget` |"),  # nbgrader's name
    lambda text: text.replace("<!-- /settings -->", ""),                               # the markers broken
])
def test_a_planted_mismatch_is_caught(plant):
    text = SETTINGS_DOC.read_text(encoding="utf-8")
    planted = plant(text)
    assert planted != text
    assert table_problems(planted)


def test_every_setting_has_a_description_and_a_default_of_its_type():
    for f in fields(Config):
        assert len(f.metadata["help"]) > 20, f.name
        assert type(f.default) in (int, float, str), f.name


def test_the_command_line_sets_every_setting():
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    assert config.from_arguments(parser.parse_args([])) == DEFAULTS
    args = parser.parse_args(["--term-secret", "/srv/term.secret", "--jobs", "3", "--sandbox", "process", "--scenario-cpu", "2",
                              "--retry-cpu", "0.5", "--child-wall", "60", "--shrink-seconds", "5", "--cell-cpu", "4",
                              "--cell-timeout", "8", "--feedback-wall", "45", "--clean-seconds", "3", "--outputs-cap", "1000",
                              "--page-cap", "2000"])
    assert config.from_arguments(args) == Config("/srv/term.secret", 3, "process", 2.0, 0.5, 60.0, 5.0, 4.0, 8.0, 45.0, 3.0, 1000, 2000)
    with pytest.raises(SystemExit):
        parser.parse_args(["--sandbox", "none"])


def test_nbgrader_sets_the_same_settings_by_their_names():
    c = TraitletsConfig()
    c.SandboxedAutograde.feedback_wall = 45.0
    c.SandboxedAutograde.term_secret = "/srv/term.secret"
    c.SandboxedAutograde.cell_timeout = 8.0
    for kind in (SandboxedAutograde, RepairCellMetadata):  # the repair step reads the same section
        assert kind(config=c).settings() == DEFAULTS.override(feedback_wall=45.0, term_secret="/srv/term.secret", cell_timeout=8.0)
    assert SandboxedAutograde().settings() == DEFAULTS
    assert "jobs" not in SandboxedAutograde.class_trait_names()  # nbgrader grades one notebook at a time
    c.SandboxedAutograde.sandbox = "none"
    with pytest.raises(TraitError):
        SandboxedAutograde(config=c)


@pytest.mark.parametrize("old, section", [(old, section) for old in config.RENAMED_TRAITS
                                           for section in ("SandboxedAutograde", "RepairCellMetadata")])
def test_a_setting_under_its_old_nbgrader_name_stops_with_the_new_one(old, section):
    """traitlets would only log `budget` as unknown and nbgrader would grade with the default: refused instead."""
    c = TraitletsConfig()
    c[section][old] = 45.0
    for kind in (SandboxedAutograde, RepairCellMetadata) if section == "SandboxedAutograde" else (RepairCellMetadata,):
        with pytest.raises(TraitError, match=rf"c\.SandboxedAutograde\.{old} is now called c\.SandboxedAutograde\."
                                             rf"{config.RENAMED_TRAITS[old]}"):
            kind(config=c)


def test_each_setting_has_its_field_name_on_the_command_line_and_in_nbgrader():
    names = {f.name for f in fields(Config)}
    assert set(config.traits()) == {f.name for f in fields(Config) if f.metadata["trait"]} <= names
    assert set(config.traits()) <= set(SandboxedAutograde.class_trait_names())
    assert not set(config.RENAMED_TRAITS) & set(SandboxedAutograde.class_trait_names())
    assert set(config.RENAMED_TRAITS.values()) <= set(config.traits())
    parser = argparse.ArgumentParser()
    config.add_arguments(parser)
    assert {a.dest for a in parser._actions if a.dest != "help"} == {f.name for f in fields(Config) if f.metadata["cli"]}
    assert all(a.option_strings == ["--" + a.dest.replace("_", "-")] for a in parser._actions if a.dest != "help")
    assert FeedbackTodoExporter.class_traits()["page_cap"].default_value == DEFAULTS.page_cap   # its own section, one name


# Keywords that name a runner's own limits (grader/runner: Limits), which a setting may set: not settings themselves.
LIMIT_FIELDS = {f.name for f in fields(Limits)}


def renamed_settings(sources: dict[str, str]) -> list[str]:
    """Where code in `sources` (path -> text) knows a setting (a Config field) under another name: a keyword argument
    or dict key given a value called after a setting (`child_timeout=child_wall`, `budget=c.feedback_wall`), a
    parameter whose default is a setting's (`cell_wall=DEFAULTS.cell_timeout`), or a module constant copying a
    default (`BUDGET = DEFAULTS.feedback_wall`: defaults live in Config only)."""
    names = {f.name for f in fields(Config)}

    def called(node) -> str | None:   # the setting a value is called after: x, c.x, self.x, DEFAULTS.x
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        return name if name in names else None

    def default_of(node) -> str | None:
        return node.attr if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                             and node.value.id == "DEFAULTS" and node.attr in names) else None

    found = []
    for path, text in sources.items():
        tree = ast.parse(text)
        for node in ast.walk(tree):
            where = f"{path}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.keyword) and node.arg and called(node.value) not in (None, node.arg):
                if node.arg not in LIMIT_FIELDS:
                    found.append(f"{where}: {node.arg}={ast.unparse(node.value)}")
            elif isinstance(node, ast.Dict):
                found += [f"{path}:{k.lineno}: {k.value!r}: {ast.unparse(v)}" for k, v in zip(node.keys, node.values)
                          if isinstance(k, ast.Constant) and isinstance(k.value, str) and called(v) not in (None, k.value)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args
                pairs = list(zip(args.posonlyargs + args.args, [None] * (len(args.posonlyargs + args.args) - len(args.defaults))
                                 + list(args.defaults))) + list(zip(args.kwonlyargs, args.kw_defaults))
                found += [f"{where}: parameter {a.arg}={ast.unparse(d)}" for a, d in pairs
                          if d is not None and default_of(d) not in (None, a.arg)]
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and default_of(node.value):
                found.append(f"{path}:{node.lineno}: {ast.unparse(node).splitlines()[0]} copies a default of Config")
    return found


def grader_sources() -> dict[str, str]:
    """grader/'s code, but for the assignments' own (a master's `seed` is a trace's, not the setting)."""
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted((ROOT / "grader").rglob("*.py"))
            if "assignments" not in p.relative_to(ROOT).parts}


def test_no_code_knows_a_setting_by_another_name():
    assert renamed_settings(grader_sources()) == []


@pytest.mark.parametrize("planted", [
    "def f(a):\n    return Grader(a, child_timeout=config.child_wall)\n",          # a keyword renaming a setting
    "def f(c):\n    return run(cell_wall=c.cell_timeout)\n",
    "def f(cell_cpu, cell_timeout):\n    return CellLimits(cell_cpu, cell_wall=cell_timeout)\n",
    "def f(self):\n    return {'scenario_timeout': self.scenario_cpu}\n",                # a payload key renaming one
    "def execute(nb, budget=DEFAULTS.feedback_wall):\n    pass\n",                     # a parameter renaming one
    "BUDGET = DEFAULTS.feedback_wall\n",                                                # a second home for a default
])
def test_a_renamed_setting_is_found(planted):
    assert renamed_settings({"planted.py": planted})
    assert not renamed_settings({"planted.py": "def f(c):\n    return run(c.x, cell_timeout=c.cell_timeout, wall=c.child_wall)\n"})


def test_the_pipeline_lists_its_steps_in_order():
    names = [step.__name__ for step in pipeline.STEPS]
    assert names == ["read", "edition", "identify", "repair", "grade", "strip_hidden", "execute", "sanitise", "redact", "render", "score"]
    for part in (pipeline.NBGRADER_SANITIZE, pipeline.NBGRADER_AUTOGRADE):  # nbgrader runs some of them, in that order
        at = [pipeline.STEPS.index(step) for step in part]
        assert at == sorted(at)


def imports(path: Path, package: str, modules: set[str] = frozenset()) -> set[str]:
    """The grader modules a module imports (anywhere in it, functions included). `from pkg import sub` of a
    submodule imports `sub`; the package itself counts only when a name is taken from its __init__."""
    here = package if path.name == "__init__.py" else package.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = {f"{module}.{a.name}" for a in node.names}
            found |= names | ({module} if names - set(modules) else set())
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph` (module -> modules it imports), each as a path back to its start."""
    found, done = [], set()

    def walk(node, path):
        if node in path:
            found.append(path[path.index(node):] + [node])
            return
        if node in done:
            return
        for other in sorted(graph.get(node, ())):
            walk(other, path + [node])
        done.add(node)

    for node in sorted(graph):
        walk(node, [])
    return found


@pytest.mark.slow
def test_grader_has_no_import_cycle():
    modules = {}
    for path in (ROOT / "grader").rglob("*.py"):
        name = ".".join(path.with_suffix("").relative_to(ROOT).parts).removesuffix(".__init__")
        modules[name] = path
    graph = {name: imports(path, name, set(modules)) & set(modules) - {name} for name, path in modules.items()}
    assert cycles(graph) == []
    graph["grader.shard_keys"] = graph["grader.shard_keys"] | {"grader.autograde"}  # planted: autograde imports shard_keys
    assert ["grader.autograde", "grader.shard_keys", "grader.autograde"] in cycles(graph)


def test_the_grader_gets_the_config_and_one_is_built_per_assignment_and_grading_settings(monkeypatch):
    """pipeline hands the Grader the Config itself (no renamed keywords); settings it does not read share a Grader."""
    from grader.grade import Grader

    built = []

    class Recording:
        SETTINGS = Grader.SETTINGS

        def __init__(self, assignment, config, seed):
            built.append(config)

    monkeypatch.setattr(pipeline, "Grader", Recording)
    pipeline.forget()
    try:
        first = pipeline.grader_for("01_continuous_batching", DEFAULTS.override(cell_timeout=5.0, jobs=3))
        assert pipeline.grader_for("01_continuous_batching") is first   # the feedback run's settings are not the Grader's
        assert pipeline.grader_for("01_continuous_batching", DEFAULTS.override(child_wall=8.0)) is not first
    finally:
        pipeline.forget()
    assert built == [DEFAULTS, DEFAULTS.override(child_wall=8.0)]
    assert set(Grader.SETTINGS) <= {f.name for f in fields(Config)}
