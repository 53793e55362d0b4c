"""The generated sections of docs/ (grader/docs.py): each is what `python -m grader.docs` writes, the module list
names every module of lab/, grader/ and policybench/, and a stale or hand-edited section is caught."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from grader import docs

ARCHITECTURE = ROOT / "docs" / "architecture.md"


@pytest.mark.slow
def test_every_generated_section_is_as_written():
    assert docs.problems() == []


@pytest.mark.slow
def test_the_module_list_names_every_module_with_its_summary():
    listed = docs.section(ARCHITECTURE.read_text(encoding="utf-8"), "layout")
    assert listed is not None
    for rel in docs.modules():
        assert f"| `{rel}` | " in listed, f"{rel} is missing from docs/architecture.md's module list"
        assert docs.summary(ROOT / rel), f"{rel} has no docstring or leading comment"
    assert "lab/engine/scheduler.py" in docs.modules() and "grader/runner/bridge.py" in docs.modules()
    assert not [rel for rel in docs.modules() if rel.startswith("grader/assignments/")]


@pytest.mark.slow
@pytest.mark.parametrize("plant", [
    lambda text: text.replace("| `grader/shard.py` | Grading beyond one machine", "| `grader/shard.py` | Sharding"),  # hand-edited
    lambda text: "\n".join(line for line in text.split("\n") if not line.startswith("| `lab/frames.py` |")),    # a row dropped
    lambda text: text.replace("<!-- /layout -->", "| `lab/gone.py` | A module that is no more. |\n<!-- /layout -->"),  # stale
    lambda text: text.replace("<!-- /layout -->", ""),                                                            # markers broken
])
def test_a_planted_drift_is_caught(plant):
    text = ARCHITECTURE.read_text(encoding="utf-8")
    planted = plant(text)
    assert planted != text
    assert docs.section_problems("layout", planted)


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """The packages' modules and docs/ in a temporary root, with grader.docs pointed at it."""
    for rel in docs.modules():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    return tmp_path


@pytest.mark.slow
def test_a_new_module_fails_until_the_section_is_written_again(copy):
    (copy / "grader" / "brand_new.py").write_text('"""A module added after the docs were written. It does little."""\n')
    found = docs.problems()
    assert any("missing: | `grader/brand_new.py` | A module added after the docs were written. |" in p for p in found), found
    assert docs.write("layout") and docs.problems() == []
    assert "| `grader/brand_new.py` | A module added after the docs were written. |" in (copy / "docs/architecture.md").read_text()


@pytest.mark.slow
def test_a_module_without_a_docstring_is_named(copy):
    (copy / "policybench" / "silent.py").write_text("x = 1\n")
    docs.write("layout")
    assert docs.problems() == ["policybench/silent.py: no docstring (or leading comment) to list it by"]


@pytest.mark.slow
def test_the_check_command_fails_on_drift(copy):
    text = (copy / "docs/architecture.md").read_text()
    (copy / "docs/architecture.md").write_text(text.replace("| `lab/plots.py` | Plots", "| `lab/plots.py` | Figures"))
    assert docs.main(["check"]) == 1
    assert docs.main(["layout"]) == 0 and docs.main(["check"]) == 0


@pytest.mark.slow
def test_the_command_line_checks_this_checkout():
    proc = subprocess.run([sys.executable, "-m", "grader.docs", "check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_summaries_are_first_sentences():
    assert docs._first_sentence("Synthetic workloads, from a `seed`. Lengths are assumptions.") == "Synthetic workloads, from a `seed`."
    assert docs._first_sentence("One step (e.g. a batch) and\nits time.\n\nMore.") == "One step (e.g. a batch) and its time."


def test_the_readme_stays_a_users_guide():
    """README.md is for students and instructors, about 250 lines and at most 300: design goes in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move design and reference text to docs/"
    headings = [line for line in lines if line.startswith("## ")]
    assert any("student" in h.lower() for h in headings) and any("instructor" in h.lower() for h in headings), headings
