"""Where things live in the repository."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS_DIR = ROOT / "grader" / "assignments"
NOTEBOOKS_DIR = ROOT / "notebooks"
SOLUTIONS_DIR = ROOT / "solutions"
BUILD_DIR = ROOT / "build"
NBGRADER_CONFIG = ROOT / "grader" / "nbgrader_config.py"


def assignment_names() -> list[str]:
    """Every assignment with a master source, in course order."""
    return sorted(p.stem for p in ASSIGNMENTS_DIR.glob("[0-9][0-9]_*.py"))


def master_path(name: str) -> Path:
    """The master source of an assignment; raises with the known names if absent."""
    path = ASSIGNMENTS_DIR / f"{name}.py"
    if not path.exists():
        raise SystemExit(f"error: unknown assignment {name!r}; known: {', '.join(assignment_names())}")
    return path
