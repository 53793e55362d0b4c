"""`make student-bundle`: build/student-bundle.zip with notebooks, lab and set-up files; no solutions, no grader."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from .paths import BUILD_DIR, NOTEBOOKS_DIR, ROOT

BUNDLE = BUILD_DIR / "student-bundle.zip"
TOP = "decode-scheduling"
STUDENT_README = """# Decode Scheduling course: student bundle

Notebooks for the course, and `lab`, the small simulator they import.

## Set up (once)

    python3.11 -m venv .venv && . .venv/bin/activate      # or: conda env create -f environment.yml
    pip install -r requirements.txt && pip install -e .
    jupyter lab notebooks/

On Colab, Binder or ModelScope: upload this folder, then run `pip install -e .` in it once, and restart the kernel.

## Work

Open a notebook, run the cells in order and fill the cells marked TODO. The test cell under each TODO
checks your work; when a check fails, its message names the rule and shows the expected and the actual
values. Your grade comes from hidden tests that replay each TODO on its own, so keep every TODO cell
self-contained and do not delete, copy or reorder the given cells. Submit the `.ipynb` file.

Notebooks:
{listing}
"""


def members() -> list[tuple[Path, str]]:
    """(file, path in the zip) for everything a student gets."""
    files = [(p, f"notebooks/{p.name}") for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb"))]
    files += [(p, str(p.relative_to(ROOT))) for p in sorted((ROOT / "lab").rglob("*.py"))]
    files += [(ROOT / name, name) for name in ("environment.yml", "requirements.txt", "pyproject.toml")]
    return files


def main() -> int:
    BUILD_DIR.mkdir(exist_ok=True)
    listing = "\n".join(f"- `notebooks/{p.name}`" for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb")))
    with zipfile.ZipFile(BUNDLE, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, arcname in members():
            zf.write(path, f"{TOP}/{arcname}")
        zf.writestr(f"{TOP}/README.md", STUDENT_README.format(listing=listing))
    names = zipfile.ZipFile(BUNDLE).namelist()
    print(f"wrote {BUNDLE} ({len(names)} files): {', '.join(n.split('/', 1)[1] for n in names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
