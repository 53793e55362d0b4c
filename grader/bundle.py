"""`make student-bundle`: dist/<the course wheel>, and build/student-bundle.zip, the student-facing repository.

The zip holds the student notebooks, the wheel, lab's source to read, a student environment (no nbgrader,
pytest, hypothesis or jupytext), Binder's postBuild and a README with Binder/Colab badges from course.toml.
No solutions, no grader. README, "Publishing the student repository", says what to do with it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

from . import course
from .pins import STUDENT_PYTHONS, student_lines
from .paths import BUILD_DIR, NOTEBOOKS_DIR, ROOT

BUNDLE = BUILD_DIR / "student-bundle.zip"
DIST_DIR = ROOT / "dist"
TOP = "decode-scheduling"
ENV_NAME = "decode-scheduling-student"
PLACEHOLDER_REPO = "your-org/decode-scheduling-course"  # what course.toml ships with
CONDA_PYTHON = "3.11"  # the student environment.yml's (Binder's): one of STUDENT_PYTHONS

POSTBUILD = f"""#!/bin/bash
# Binder runs this after installing environment.yml; a course hub image can run it too.
set -euo pipefail
python -m pip install --no-deps dist/{course.WHEEL_NAME}
python jupyter_student_config.py
"""

# Shipped as a file of the bundle; it imports nothing of the course.
JUPYTER_STUDENT_CONFIG = '''"""Students get no nbgrader teacher UI: formgrader, create-assignment and the course list are switched off.

The student environment has no nbgrader. Where an image must have it (the assignment list on a course hub),
run `python jupyter_student_config.py` once in that environment (Binder's postBuild does).
It writes the environment's own Jupyter config (sys.prefix/etc/jupyter), which wins over nbgrader's defaults.
"""
import importlib.util
import json
import sys
from pathlib import Path

SERVER = {"nbgrader.server_extensions.formgrader": False, "nbgrader.server_extensions.course_list": False}
LAB = {f"@jupyter/nbgrader:{name}": True for name in ("formgrader", "create-assignment", "course-list")}


def merge(path, keys, values):
    """Set values under keys in a JSON config file, keeping what else it holds."""
    data = json.loads(path.read_text()) if path.exists() else {}
    node = data
    for key in keys:
        node = node.setdefault(key, {})
    node.update(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\\n")


def main(prefix):
    if importlib.util.find_spec("nbgrader") is None:
        print("nbgrader is not installed here: no teacher UI to switch off")
        return
    config = Path(prefix) / "etc" / "jupyter"
    merge(config / "jupyter_server_config.json", ["ServerApp", "jpserver_extensions"], SERVER)
    merge(config / "labconfig" / "page_config.json", ["disabledExtensions"], LAB)
    print(f"nbgrader teacher UI switched off in {config}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else sys.prefix)
'''

STUDENT_README = """# Decode Scheduling: notebooks for students

How an LLM serving engine decides **who runs next**, as notebooks you fill in. Each notebook starts with a
set-up cell that imports the course package `lab` and, where it is missing (Colab, Kaggle, ModelScope),
installs it; you never need to restart the kernel.

| notebook | Colab | Binder |
|---|---|---|
{rows}

## Open and run

- **Colab:** click the notebook's Colab badge (or File > Open notebook > GitHub, paste
  `{repo_url}`). Runtime > Run all. File > Save a copy in Drive keeps your work.
- **Binder:** click a Binder badge and wait for the build; JupyterLab opens the notebook. Binder sessions
  are temporary: download your `.ipynb` (File > Download) before you close the tab.
- **Kaggle:** Create > New Notebook, then File > Import Notebook and give it the notebook's `.ipynb`.
  In the right panel, Settings > Internet must be on (it needs a phone-verified account). Run all.
- **ModelScope:** start a free notebook instance, upload the `.ipynb` in JupyterLab's file browser, open it,
  Run > Run All Cells. If the set-up cell cannot reach the package source, upload `dist/{wheel}` next to the
  notebook and run `%pip install {wheel}` in a new cell first.
- **Locally (pip, Python {pythons}):**

      python3 -m venv .venv
      . .venv/bin/activate          # Windows: .venv\\Scripts\\activate
      pip install -r requirements.txt
      jupyter lab notebooks/

- **Locally (conda):**

      conda env create -f environment.yml
      conda activate {env_name}
      pip install --no-deps dist/{wheel}
      jupyter lab notebooks/

## Work and hand in

Run the cells in order and fill the cells marked TODO. The check cell under each TODO tests your work;
when a check fails, its message names the rule and shows the expected and the actual value. Your grade
comes from hidden tests that replay each TODO on its own, with only the notebook's set-up cells before it,
so keep every TODO cell self-contained: import inside it anything the set-up cells do not. Hand in the
`.ipynb` file.

**What layout changes cost.** Only the TODO cells are graded, found by the `grade_id` that nbgrader keeps in each cell's metadata, not by a cell `id`: code in any other cell is
not. Scratch cells, moved cells, and a check cell deleted, duplicated or edited cost nothing: the course's own
checks are used. If a TODO cell appears twice, the copy further down is graded (the kernel ran it last). A
deleted TODO cell, or a TODO function renamed, scores zero on that TODO only.

## 简体中文版

`notebooks/zh/` 中是同一套 notebook 的简体中文版（上表中带 `zh/` 的行），代码与英文版完全相同，评分规则和分数也完全一样。
在 Colab 上点对应的 Colab 徽章；在 ModelScope 上启动一个免费的 notebook 实例，用 JupyterLab 的文件浏览器上传
`.ipynb`，打开后 Run > Run All Cells（第一个单元格会在缺少时自动安装课程包 `lab`；连不上软件源时，把 `dist/{wheel}`
上传到 notebook 旁边，先在新单元格里运行 `%pip install {wheel}`）。按顺序运行各单元格，只在标为 TODO 的单元格里写代码；
每个 TODO 下面的检查单元格会写明违反了哪条规则。每个 TODO 单独评分，评分时它前面只运行 notebook 的设置单元格，
所以请让每个 TODO 单元格自成一体：设置单元格没有导入的东西，请在 TODO 单元格内部自己导入。完成后提交 `.ipynb` 文件。

**改动单元格布局会怎样。** 只有 TODO 单元格计分。评分程序靠 `grade_id` 找到这些单元格（nbgrader 把它写在每个单元格的元数据里），而不是靠单元格的 `id`；其他单元格里的代码一律不计分。新增草稿单元格、移动单元格，
以及删除、复制或修改检查单元格，都不扣分：评分时用的是课程自带的检查。同一个 TODO 单元格出现两次时，评分的是位置靠下的那一份
（内核最后运行的是它）。删除某个 TODO 单元格或改掉 TODO 函数的名字，只会让那一个 TODO 得零分。

图中标签在任何机器上都是中文：课程包 `lab` 自带 Noto Sans CJK SC 的一个小子集（SIL Open Font License 1.1，
许可证文件为 `lab/cjk_font/OFL.txt`）；系统装有中文字体时（如 Debian/Ubuntu 的 `fonts-noto-cjk`）优先使用它。
打印的文字、检查消息和报错始终是中文。
"""


def setuptools_problem() -> str | None:
    """Why this Python cannot build the wheel offline: the setuptools pyproject.toml's build-system asks for, or None."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    wanted = next(r for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
                  if r.startswith("setuptools"))
    minimum = int(wanted.partition(">=")[2].split(".")[0])
    try:
        found = version("setuptools")
    except PackageNotFoundError:
        found = None
    if found is not None and int(found.split(".")[0]) >= minimum:
        return None
    return (f"building the lab wheel offline needs {wanted} in {sys.executable} (found {found or 'none'}): "
            f"use `make student-bundle` / `make hub-images` (their .venv has it), or pip install '{wanted}' here")


def build_wheel(dist: Path = DIST_DIR) -> Path:
    """dist/decode_scheduling_lab-<version>-py3-none-any.whl, built offline from lab/ alone."""
    problem = setuptools_problem()  # an older setuptools fails deep in pip with "project.license must be valid"
    if problem:
        raise RuntimeError(problem)
    dist.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "lab", src / "lab", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (src / "pyproject.toml").write_text(student_pyproject(), encoding="utf-8")
        (src / "README.md").write_text(student_readme(), encoding="utf-8")  # the wheel's description
        cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
               "--wheel-dir", str(dist), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building the wheel failed ({' '.join(cmd)}):\n{proc.stdout}\n{proc.stderr}")
    wheel = dist / course.WHEEL_NAME
    stray = [n for n in zipfile.ZipFile(wheel).namelist() if not n.startswith(("lab/", "decode_scheduling_lab-"))]
    if stray:
        raise RuntimeError(f"{wheel} holds files outside lab/: {stray}")
    return wheel


def student_pyproject() -> str:
    """pyproject.toml without its optional dependencies: the instructor's extra (nbgrader, jupytext) is the kit's, and
    a wheel of lab alone offers no extra."""
    lines, skipping = [], False
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("["):
            skipping = line.strip() == "[project.optional-dependencies]"
        if not skipping:
            lines.append(line)
    return "".join(lines)


def student_requirements() -> str:
    lines = "\n".join(student_lines())
    return (f"# The student environment for pip on Python {python_range()} (Binder and conda use environment.yml): Jupyter,\n"
            f"# lab and what lab needs. No grader and no test tools.\n{lines}\n./dist/{course.WHEEL_NAME}\n")


def student_environment() -> str:
    lines = "".join(f"      - {line}\n" for line in student_lines())
    return (f"# The student environment for conda and Binder; postBuild then installs lab from dist/.\nname: {ENV_NAME}\n"
            f"channels:\n  - conda-forge\ndependencies:\n  - python={CONDA_PYTHON}\n  - pip\n  - pip:\n{lines}")


def python_range() -> str:
    """The student Pythons as the READMEs say them: 3.10 to 3.13."""
    return f"{STUDENT_PYTHONS[0]} to {STUDENT_PYTHONS[-1]}"


def student_readme(settings: course.Course | None = None) -> str:
    settings = settings or course.load()
    rows = []
    for path in released():
        name = path.relative_to(NOTEBOOKS_DIR).as_posix()  # zh editions live in notebooks/zh/
        colab = f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({settings.colab_url(name)})"
        binder = f"[![Binder](https://mybinder.org/badge_logo.svg)]({settings.binder_url(name)})"
        rows.append(f"| `notebooks/{name}` | {colab} | {binder} |")
    return STUDENT_README.format(rows="\n".join(rows), repo_url=settings.repo_url(), wheel=course.WHEEL_NAME,
                                 env_name=ENV_NAME, pythons=python_range())


def released() -> list[Path]:
    """Every student edition: notebooks/*.ipynb and each language's notebooks/<lang>/*.ipynb."""
    return sorted(NOTEBOOKS_DIR.rglob("*.ipynb"))


def edition_language(path: Path) -> str:
    """The language of a released notebook: English in notebooks/, else its notebooks/<lang>/ folder."""
    folder = path.parent.relative_to(NOTEBOOKS_DIR)
    return str(folder) if str(folder) != "." else "en"


def members(wheel: Path) -> list[tuple[str, bytes]]:
    """(path in the student repository, content) for everything a student gets."""
    files = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in released()]
    files += [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "lab").rglob("*.py"))]
    # the CJK subset and its licence, which the student README names (the wheel holds them too)
    files += [(str(p.relative_to(ROOT)), p.read_bytes()) for p in [*sorted((ROOT / "lab" / "cjk_font").glob("*.otf")),
                                                                   ROOT / "lab" / "cjk_font" / "OFL.txt"]]
    files += [(f"dist/{wheel.name}", wheel.read_bytes()),
              ("README.md", student_readme().encode()),
              ("requirements.txt", student_requirements().encode()),
              ("environment.yml", student_environment().encode()),
              ("postBuild", POSTBUILD.encode()),
              ("jupyter_student_config.py", JUPYTER_STUDENT_CONFIG.encode())]
    return files


def main() -> int:
    settings = course.load()
    if settings.repo == PLACEHOLDER_REPO:
        print(f"warning: course.toml still names the placeholder repository {PLACEHOLDER_REPO}: set repo (and "
              "branch) before you publish, then `make notebooks`")
    stale = [str(p.relative_to(NOTEBOOKS_DIR)) for p in released()
             if not any(course.setup_code(settings, edition_language(p)) in c.source for c in nbformat.read(p, as_version=4).cells)]
    if stale:
        raise SystemExit(f"error: {', '.join(stale)} not written from the current course.toml: run `make notebooks` first")
    wheel = build_wheel()
    print(f"wrote {wheel}")
    BUILD_DIR.mkdir(exist_ok=True)
    with zipfile.ZipFile(BUNDLE, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in members(wheel):
            info = zipfile.ZipInfo(f"{TOP}/{arcname}", date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if arcname == "postBuild" else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    names = zipfile.ZipFile(BUNDLE).namelist()
    print(f"wrote {BUNDLE} ({len(names)} files): {', '.join(n.split('/', 1)[1] for n in names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
