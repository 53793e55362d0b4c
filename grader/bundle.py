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

Notebooks (English, and 简体中文 under `notebooks/zh/`):
{listing}

## 简体中文

`notebooks/zh/` 中是同一套 notebook 的简体中文版，评分规则与英文版完全相同。在 ModelScope 或 Colab 上：
上传本文件夹，在其中运行一次 `pip install -e .`，重启内核，然后打开 `notebooks/zh/` 下的 notebook，
按顺序运行各单元格，补全标为 TODO 的单元格。每个 TODO 下面的检查单元格会告诉你哪条规则没有满足。
提交 `.ipynb` 文件即可。图中的中文需要系统装有中文字体（如 Debian/Ubuntu 的 `fonts-noto-cjk`）；
没有中文字体时，图中的标签自动改用英文，不会出现方框。
"""


def members() -> list[tuple[Path, str]]:
    """(file, path in the zip) for everything a student gets."""
    files = [(p, str(p.relative_to(ROOT))) for p in sorted(NOTEBOOKS_DIR.rglob("*.ipynb"))]
    files += [(p, str(p.relative_to(ROOT))) for p in sorted((ROOT / "lab").rglob("*.py"))]
    files += [(ROOT / name, name) for name in ("environment.yml", "requirements.txt", "pyproject.toml")]
    return files


def main() -> int:
    BUILD_DIR.mkdir(exist_ok=True)
    listing = "\n".join(f"- `{p.relative_to(ROOT)}`" for p in sorted(NOTEBOOKS_DIR.rglob("*.ipynb")))
    with zipfile.ZipFile(BUNDLE, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, arcname in members():
            zf.write(path, f"{TOP}/{arcname}")
        zf.writestr(f"{TOP}/README.md", STUDENT_README.format(listing=listing))
    names = zipfile.ZipFile(BUNDLE).namelist()
    print(f"wrote {BUNDLE} ({len(names)} files): {', '.join(n.split('/', 1)[1] for n in names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
