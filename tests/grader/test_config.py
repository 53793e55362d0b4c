"""One Config for grading: the table of settings (docs/instructors.md), the command line and nbgrader's traits all come from its fields;
one pipeline of steps, in order; no import cycle in grader/."""
import argparse
import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest
from traitlets import TraitError
from traitlets.config import Config as TraitletsConfig

from conftest import ROOT
from grader import config, grade, notebook_run, pipeline, sanitize, term
from grader.config import DEFAULTS, Config
from grader.nbgrader_plugin import RepairCellMetadata, SandboxedAutograde

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
    lambda text: text.replace("`budget`", "`feedback_wall`"),                          # nbgrader's name changed
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


def test_nbgrader_sets_the_same_settings_by_its_trait_names():
    c = TraitletsConfig()
    c.SandboxedAutograde.budget = 45.0
    c.SandboxedAutograde.term_secret = "/srv/term.secret"
    c.SandboxedAutograde.cell_timeout = 8.0
    for kind in (SandboxedAutograde, RepairCellMetadata):  # the repair step reads the same section
        assert kind(config=c).settings() == DEFAULTS.override(feedback_wall=45.0, term_secret="/srv/term.secret", cell_timeout=8.0)
    assert SandboxedAutograde().settings() == DEFAULTS
    assert "jobs" not in SandboxedAutograde.class_trait_names()  # nbgrader grades one notebook at a time
    c.SandboxedAutograde.sandbox = "none"
    with pytest.raises(TraitError):
        SandboxedAutograde(config=c)


def test_the_modules_defaults_are_the_configs():
    assert (grade.SCENARIO_TIMEOUT, grade.RETRY_TIMEOUT, grade.CHILD_TIMEOUT, grade.SHRINK_SECONDS) == (
        DEFAULTS.scenario_cpu, DEFAULTS.retry_cpu, DEFAULTS.child_wall, DEFAULTS.shrink_seconds)
    assert grade.DEFAULT_SEED == term.PUBLIC_SEED   # a Grader made without a term's seed grades on the public cases
    assert (notebook_run.CELL_CPU, notebook_run.CELL_WALL, notebook_run.BUDGET) == (
        DEFAULTS.cell_cpu, DEFAULTS.cell_timeout, DEFAULTS.feedback_wall)
    assert (sanitize.CLEAN_SECONDS, sanitize.OUTPUTS_CAP, sanitize.PAGE_CAP) == (
        DEFAULTS.clean_seconds, DEFAULTS.outputs_cap, DEFAULTS.page_cap)


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
    graph["grader.shard"] = graph["grader.shard"] | {"grader.autograde"}  # the cycle there once was
    assert ["grader.autograde", "grader.shard", "grader.autograde"] in cycles(graph)
