"""Generate notebooks/ (student edition, via nbgrader) and solutions/ (solved, executed) from masters.

    python -m grader.build all|release|solutions [ASSIGNMENT ...] [--out DIR] [--language en|zh]
    python -m grader.build course ASSIGNMENT ... --out NEW_DIR [--language en|zh]   # make nbgrader-course

English editions go to notebooks/ and solutions/, the others to notebooks/<lang>/ and solutions/<lang>/.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from . import editions
from .paths import BUILD_DIR, NBGRADER_CONFIG, NOTEBOOKS_DIR, SOLUTIONS_DIR, assignment_names
from .translation import LANGUAGES, languages

EXECUTE_TIMEOUT = 120


def nbgrader(course: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run an nbgrader command in `course`; raise with its log on failure."""
    cmd = [sys.executable, "-m", "nbgrader", *args]
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # nbgrader runs `alembic`
    proc = subprocess.run(cmd, cwd=course, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed in {course}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def make_course(course: Path, names: list[str], with_db: bool = True, language: str = "en") -> Path:
    """An nbgrader course directory with source/<name>/<name>.ipynb for each assignment, in `language`."""
    course.mkdir(parents=True, exist_ok=True)
    shutil.copy(NBGRADER_CONFIG, course / "nbgrader_config.py")
    for name in names:
        src = course / "source" / name
        src.mkdir(parents=True, exist_ok=True)
        nbformat.write(editions.nbgrader_source(name, language), src / f"{name}.ipynb")
        args = ["generate_assignment", name, "--force", "--log-level=WARN"]
        nbgrader(course, *args, *([] if with_db else ["--no-db"]))
    return course


# What a course's nbgrader_config.py needs to grade with the kit (README, "Inside your own nbgrader course").
PLUGIN_LINES = "\nfrom grader.nbgrader_plugin import configure\nconfigure(c)\n"


def new_course(course: Path, names: list[str], language: str = "en") -> Path:
    """A stock nbgrader course for the kit: source/, release/, a gradebook, and a config that loads the plugin."""
    if course.exists() and (not course.is_dir() or any(course.iterdir())):  # never mix ours into someone's course
        raise SystemExit(f"{course} exists and is not an empty folder: give a new folder (its files would be overwritten)")
    try:
        make_course(course, names, with_db=True, language=language)
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
            config.write(PLUGIN_LINES)
    except BaseException:  # a half-made course would be refused as not empty next time
        shutil.rmtree(course, ignore_errors=True)
        raise
    return course


def coalesce_streams(outputs: list) -> list:
    """Join consecutive stream outputs of one name: how a print is split into messages depends on load."""
    merged: list = []
    for out in outputs:
        if merged and out.get("output_type") == "stream" and merged[-1].get("output_type") == "stream" \
                and merged[-1].get("name") == out.get("name"):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def normalized(nb) -> nbformat.NotebookNode:
    """Stable JSON: no execution timings, no widget state, joined streams, sorted metadata keys on write."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.pop("id", None)
        if cell.get("cell_type") == "code":
            cell.outputs = coalesce_streams(cell.get("outputs", []))
    nb.metadata.pop("widgets", None)
    nb.nbformat, nb.nbformat_minor = 4, 4
    return nb


def write_nb(nb, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(normalized(nb), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def edition_dir(root: Path, language: str) -> Path:
    """notebooks/ or solutions/ for English, a subfolder per other language."""
    return root if language == "en" else root / language


def build_release(names: list[str], out: Path, course: Path, language: str = "en") -> None:
    make_course(course, names, with_db=False, language=language)
    for name in names:
        nb = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        write_nb(nb, out / f"{name}.ipynb")
        print(f"  student edition -> {out / f'{name}.ipynb'}")


def execute(nb, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell top to bottom; an error fails the build."""
    cwd.mkdir(parents=True, exist_ok=True)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # inline PNGs in the saved notebook
    client = NotebookClient(nb, timeout=EXECUTE_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(cwd)}},
                            record_timing=False)
    client.execute()
    return nb


def build_solutions(names: list[str], out: Path, language: str = "en") -> None:
    for name in names:
        started = time.perf_counter()
        nb = execute(editions.solved_edition(name, language), cwd=out)
        write_nb(nb, out / f"{name}.ipynb")
        print(f"  solved edition  -> {out / f'{name}.ipynb'} (executed in {time.perf_counter() - started:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["all", "release", "solutions", "mistakes", "course"],
                        help="course: a new nbgrader course in --out for the assignments (make nbgrader-course)")
    parser.add_argument("assignments", nargs="*", help="default: every assignment")
    parser.add_argument("--out", type=Path, help="write both editions under this folder instead of the repo; for "
                        "course, the new course's folder")
    parser.add_argument("--language", choices=LANGUAGES, action="append", help="default: every language")
    args = parser.parse_args(argv)
    names = args.assignments or assignment_names()
    print(f"building {', '.join(names)}")
    if args.what == "course":
        return _course(parser, args, names)
    if args.what == "mistakes":
        return _mistakes(names)
    return _editions(args, names)


def _course(parser: argparse.ArgumentParser, args: argparse.Namespace, names: list[str]) -> int:
    """`course`: a new nbgrader course of one language in --out."""
    if not args.out:
        parser.error("course needs --out DIR, the new course's folder")
    if len(args.language or []) > 1:
        parser.error("course takes one --language: a course is one edition")
    language = (args.language or ["en"])[0]
    folder = new_course(args.out, names, language)
    print(f"  nbgrader course ({language}) -> {folder}: source/, release/, gradebook.db, nbgrader_config.py with "
          f"configure(c); check it with: python -m grader.check_config {folder}")
    return 0


def _mistakes(names: list[str]) -> int:
    """`mistakes`: each mutant graded once, the common mistakes' signatures shipped with the assignment."""
    from .diagnose import write_shipped
    from .grade import Grader

    for name in names:
        print(f"  common mistakes -> {write_shipped(Grader(name))}")
    return 0


def _editions(args: argparse.Namespace, names: list[str]) -> int:
    """`all`, `release`, `solutions`: the editions asked for, in each language an assignment is translated into."""
    notebooks = args.out / "notebooks" if args.out else NOTEBOOKS_DIR
    solutions = args.out / "solutions" if args.out else SOLUTIONS_DIR
    for language in args.language or LANGUAGES:
        translated = [name for name in names if language in languages(name)]
        if not translated:
            continue
        course = (args.out or BUILD_DIR) / f"release-course-{language}"
        shutil.rmtree(course, ignore_errors=True)
        if args.what in ("all", "release"):
            build_release(translated, edition_dir(notebooks, language), course, language)
        if args.what in ("all", "solutions"):
            build_solutions(translated, edition_dir(solutions, language), language)
    return 0


if __name__ == "__main__":
    sys.exit(main())
