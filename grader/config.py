"""Every grading setting in one place: its default, what it means, and its name on the command line and in nbgrader.

`make autograde` builds a Config from its command line (`parser_arguments`), nbgrader from the traits of
`SandboxedAutograde` (`traits`); both hand it to grader/pipeline.py, which passes it to the Grader and each
setting to the feedback run and the sanitiser by its own name. A setting has one name everywhere: the field's, which is
its nbgrader trait and (with dashes) its option; tests/grader/test_config.py checks that no code renames one. The table of settings in docs/instructors.md is `markdown_table()`, written there by
`python -m grader.docs settings` (tests/grader/test_config.py checks it).

    python -m grader.config        # prints that table
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields, replace


def setting(default, help: str, *, cli: bool = True, trait: bool = True, choices: tuple = ()):
    """A field of Config: `trait` says whether nbgrader has it (as a trait named as the field)."""
    return field(default=default, metadata={"help": help, "cli": cli, "trait": trait, "choices": choices})


# nbgrader traits that settings had before they took their field's name: set in a course's nbgrader_config.py,
# the old name stops SandboxedAutograde with the new one (nbgrader would only log it as unknown, and grade without it).
RENAMED_TRAITS = {"budget": "feedback_wall"}


@dataclass(frozen=True)
class Config:
    """How one grading run grades: the same for every submission of the run."""

    term_secret: str = setting("", "where the term's secret is, from which the hidden random cases and notebook 03's held-out "
                                   "traces are drawn: empty for the environment variable LAB_TERM_SECRET, else the file "
                                   "course.secret (python -m grader.term new writes it); or the path of a file holding it; "
                                   "or public: the repository's own cases, which anyone can read (tests and demos, never a "
                                   "class). Shards to be merged must share it (docs/instructors.md, Running a term)")
    jobs: int = setting(0, "submissions graded in parallel (0: two per core; a worker mostly waits for its sandboxed runs)",
                        trait=False)
    sandbox: str = setting("auto", "auto: the strongest sandbox that works here (as root: a uid per student; else "
                                   "bubblewrap in user namespaces), and grading stops where none does; userns: the "
                                   "rootless level even as root; process: no isolation, only when asked for "
                                   "(as GRADER_SANDBOX)", choices=("auto", "userns", "process"))
    scenario_cpu: float = setting(1.0, "CPU seconds per hidden scenario (the reference needs milliseconds)")
    retry_cpu: float = setting(0.2, "CPU seconds per scenario of a TODO after one of its scenarios timed out")
    child_wall: float = setting(120.0, "wall seconds per grading child (one TODO of one submission)")
    shrink_seconds: float = setting(20.0, "wall seconds a TODO's failing cases may take to be cut down, at most")
    cell_cpu: float = setting(10.0, "CPU seconds per cell of the feedback run before it is interrupted")
    cell_timeout: float = setting(30.0, "wall seconds per cell of the feedback run before it is interrupted")
    feedback_wall: float = setting(90.0, "wall seconds the feedback run of one notebook may take in all")
    clean_seconds: float = setting(30.0, "wall seconds for making one notebook's outputs inert; later cells are shown bare")
    outputs_cap: int = setting(4 << 20, "bytes of all outputs one feedback page shows; later outputs are left out")
    page_cap: int = setting(8 << 20, "bytes of one feedback page; a larger page is replaced by the plain one")
    times: str = setting("", "submission times, when course.toml sets a due date (docs/instructors.md, Deadlines): a CSV "
                             "student_id,timestamp, or nbgrader's submitted/ folder with <student>/<assignment>/timestamp.txt "
                             "(make autograde TIMES=...)", trait=False)
    extensions: str = setting("", "a CSV student_id,extension (days added to the due date, or the student's own due date), "
                                  "added to course.toml's extensions (make autograde EXTENSIONS=...)", trait=False)

    def override(self, **settings) -> Config:
        """A copy with some settings changed (None leaves a setting as it is)."""
        return replace(self, **{k: v for k, v in settings.items() if v is not None})


DEFAULTS = Config()


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _flag(f) -> str:
    return "--" + f.name.replace("_", "-")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per setting, named after the field (--cell-timeout), with its default and description."""
    for f in fields(Config):
        if f.metadata["cli"]:
            parser.add_argument(_flag(f), dest=f.name, type=type(f.default), default=f.default,
                                choices=f.metadata["choices"] or None, help=f"{f.metadata['help']} (default: {_shown(f.default)})")


def from_arguments(args: argparse.Namespace) -> Config:
    """The Config of a parsed command line (add_arguments)."""
    return Config(**{f.name: getattr(args, f.name) for f in fields(Config) if f.metadata["cli"]})


def traits() -> dict:
    """nbgrader traits, one per setting nbgrader has (named as in c.SandboxedAutograde.<name>)."""
    from traitlets import Enum, Float, Int, Unicode

    kinds = {int: Int, float: Float, str: Unicode}
    found = {}
    for f in fields(Config):
        if f.metadata["trait"]:
            help, choices = f.metadata["help"], f.metadata["choices"]
            trait = Enum(choices, f.default, help=help) if choices else kinds[type(f.default)](f.default, help=help)
            found[f.name] = trait.tag(config=True)
    return found


def from_traits(owner) -> Config:
    """The Config of a configured nbgrader preprocessor (its traits from traits())."""
    return Config(**{f.name: getattr(owner, f.name) for f in fields(Config) if f.metadata["trait"]})


def renamed(section) -> list[str]:
    """Each old name (RENAMED_TRAITS) that `section`, the SandboxedAutograde settings of an nbgrader config, still
    sets, as a line naming the new one."""
    return [f"the nbgrader setting c.SandboxedAutograde.{old} is now called c.SandboxedAutograde.{new}: rename it "
            f"in nbgrader_config.py" for old, new in RENAMED_TRAITS.items() if old in section]


def markdown_table() -> str:
    """The table of settings (docs/instructors.md, Settings)."""
    rows = ["| setting | `make autograde` option | nbgrader (`c.SandboxedAutograde.`) | default | meaning |",
            "|---|---|---|---|---|"]
    for f in fields(Config):
        cli = f"`{_flag(f)}`" if f.metadata["cli"] else ""
        trait = f"`{f.name}`" if f.metadata["trait"] else ""
        rows.append(f"| `{f.name}` | {cli} | {trait} | {_shown(f.default)} | {f.metadata['help']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
