"""The JupyterHub images (deploy/): the student wheel that goes in the students' image, and the images' pins.

`make hub-images` runs `python -m grader.hub wheel`, then `docker build` for each image where docker is.
`python -m grader.hub check-wheel FILE` says whether a wheel may go to students; `python -m grader.hub pins`
whether deploy/*/requirements.txt agree with requirements.txt, requirements-student.txt and the locks.
Offline; `make check-pins` (grader/check_pins.py) resolves the images' requirements against the index.
"""
from __future__ import annotations

import argparse
import re
import sys
import zipfile
from pathlib import Path

from .paths import BUILD_DIR, ROOT
from .pins import LOCK, REQUIREMENTS, INSTRUCTOR_PYTHONS, STUDENT_PYTHONS, normalise, pins, student_lines

DEPLOY = ROOT / "deploy"
HUB_LOCK = DEPLOY / "hub.lock"  # jupyterhub (the single-user server) and what it pulls in beyond requirements.lock
IMAGES = ("student", "instructor")
WHEEL_DIR = BUILD_DIR / "hub"  # where make hub-images puts the wheel; deploy/student/Dockerfile copies it from here
CONSTRAINTS = ("-c ../../requirements.lock", "-c ../hub.lock")  # each image's requirements.txt starts with these
# Never in the students' image: the kit, the instructors' tools, test tools (import names).
NOT_FOR_STUDENTS = ("grader", "nbgrader", "jupytext", "pytest", "hypothesis")
# A wheel member with one of these as a folder or in its name is the kit's, or holds answers.
FORBIDDEN_PARTS = ("grader", "assignments", "assignment_template", "solutions", "notebooks", "nbgrader", "policybench")
FORBIDDEN_WORDS = re.compile(r"solution|reference|master|mutant|hidden", re.I)


def requirements(image: str) -> Path:
    return DEPLOY / image / "requirements.txt"


def dockerfile(image: str) -> Path:
    return DEPLOY / image / "Dockerfile"


def wheel_problems(wheel: Path) -> list[str]:
    """Why `wheel` may not go to students (empty: it may): lab/ as in this checkout, and nothing else."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        problems = [] if "lab/__init__.py" in names else [f"{wheel.name} has no lab/__init__.py"]
        problems += [problem for name in names if (problem := _member_problem(zf, name))]
        meta = next((zf.read(n).decode() for n in names if n.endswith(".dist-info/METADATA")), "")
    needs = [m for m in re.findall(r"^Requires-Dist: ([\w.-]+)", meta, re.M) if normalise(m) in NOT_FOR_STUDENTS]
    problems += [f"{wheel.name} requires {m}" for m in needs]
    return problems


def _member_problem(zf: zipfile.ZipFile, name: str) -> str:
    """Why one file of the wheel may not go to students, or "": its dist-info, or lab/ as in this checkout."""
    top, parts = name.split("/", 1)[0], name.split("/")
    if top.endswith(".dist-info") and len(parts) == 2:
        return ""
    if top != "lab":
        return f"{name}: outside lab/"
    if any(p in FORBIDDEN_PARTS for p in parts) or FORBIDDEN_WORDS.search(name):
        return f"{name}: the kit's or an answer's name"
    if not (ROOT / name).is_file() or (ROOT / name).read_bytes() != zf.read(name):
        return f"{name}: not this checkout's {name}"
    return ""


def build_student_wheel(out: Path = WHEEL_DIR) -> Path:
    """The lab wheel (grader/bundle.py builds it from lab/ alone), checked; raises naming what may not go to students."""
    from .bundle import build_wheel  # needs nbformat: not for `check-wheel`, which runs anywhere
    wheel = build_wheel(out)
    problems = wheel_problems(wheel)
    if problems:
        raise SystemExit(f"error: {wheel} may not go to students:\n  " + "\n  ".join(problems))
    return wheel


def requirement_lines(path: Path) -> tuple[list[str], dict[str, str]]:
    """(the -c/-r option lines, name -> version of the pins) of a requirements file; any other line is an error."""
    options, pinned = [], {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
        if m:
            pinned[normalise(m.group(1))] = m.group(2)
        elif line.startswith("-"):
            options.append(" ".join(line.split()))
        else:
            raise ValueError(f"deploy/{path.parent.name}/{path.name}: {line!r} is not a name==version pin")
    return options, pinned


def student_ranges() -> dict[str, str]:
    """name -> the range of each line of requirements-student.txt."""
    return {normalise(re.match(r"[\w.-]+", line).group()): line for line in student_lines()}


def dockerfile_python(image: str) -> str:
    """The Python the image is built on: the default of its `ARG PYTHON=`."""
    m = re.search(r"^ARG PYTHON=(\d+\.\d+)\s*$", dockerfile(image).read_text(), re.M)
    if not m:
        raise ValueError(f"deploy/{image}/Dockerfile has no `ARG PYTHON=3.X` line")
    return m.group(1)


def pin_problems() -> list[str]:
    """Where the images' requirements disagree with the repository's (empty: they agree)."""
    lock, ours, hub = pins(LOCK), pins(REQUIREMENTS), pins(HUB_LOCK)
    problems = [f"deploy/hub.lock pins {n}, which requirements.lock pins too" for n in sorted(set(hub) & set(lock))]
    if "jupyterhub" not in hub:
        problems.append("deploy/hub.lock does not pin jupyterhub (the single-user server a hub starts)")
    for image in IMAGES:
        problems += _image_problems(image, lock, ours, hub)
    return problems


def _image_problems(image: str, lock: dict[str, str], ours: dict[str, str], hub: dict[str, str]) -> list[str]:
    """Where one image's requirements.txt and Dockerfile disagree with the repository's pins and Pythons."""
    where = f"deploy/{image}/requirements.txt"
    try:
        options, pinned = requirement_lines(requirements(image))
        python = dockerfile_python(image)
    except (OSError, ValueError) as err:
        return [str(err)]
    problems = []
    if tuple(options) != CONSTRAINTS:
        problems.append(f"{where}: its options must be {' and '.join(CONSTRAINTS)}, got {options}")
    for name, version in pinned.items():
        want = ours.get(name) or lock.get(name) or hub.get(name)
        if want is None:
            problems.append(f"{where}: {name}=={version} is pinned by no lock (requirements.lock, deploy/hub.lock)")
        elif version != want:
            problems.append(f"{where}: {name}=={version}, but the repository pins {name}=={want}")
    if "jupyterhub" not in pinned:
        problems.append(f"{where}: no jupyterhub (a hub starts jupyterhub-singleuser in the image)")
    claimed = STUDENT_PYTHONS if image == "student" else INSTRUCTOR_PYTHONS
    if python not in claimed or python not in INSTRUCTOR_PYTHONS:  # the pins are the lock's: an instructor Python
        problems.append(f"deploy/{image}/Dockerfile: Python {python} is not one the lock is checked on ({', '.join(INSTRUCTOR_PYTHONS)})")
    return problems + (_student_problems(where, pinned) if image == "student" else _instructor_problems(where, pinned))


def _student_problems(where: str, pinned: dict[str, str]) -> list[str]:
    """Where the student image's pins and requirements-student.txt's ranges disagree, or it pins the kit's tools."""
    from packaging.requirements import Requirement  # pip's own; the venv has it

    ranges = student_ranges()
    return ([f"{where}: no {name} (requirements-student.txt has it)" for name in sorted(set(ranges) - set(pinned))]
            + [f"{where}: {name} is not for students" for name in sorted(set(pinned) & set(NOT_FOR_STUDENTS))]
            + [f"{where}: {name} is not in requirements-student.txt" for name in sorted(set(pinned) - set(ranges) - {"jupyterhub"})]
            + [f"{where}: {name}=={pinned[name]} is outside requirements-student.txt's {ranges[name]}"
               for name in sorted(set(pinned) & set(ranges)) if not Requirement(ranges[name]).specifier.contains(pinned[name])])


def _instructor_problems(where: str, pinned: dict[str, str]) -> list[str]:
    """What the instructor image lacks of what the kit grades with."""
    return [f"{where}: no {name} (the kit grades with it)"
            for name in ("nbgrader", "jupyterlab", "ipykernel", "numpy", "pandas", "matplotlib") if name not in pinned]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.hub", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("wheel", help="build the lab wheel for the students' image and check it")
    build.add_argument("--out", type=Path, default=WHEEL_DIR, help="the folder to write it to (default: build/hub)")
    check = sub.add_parser("check-wheel", help="exit 1, saying why, if a wheel may not go to students")
    check.add_argument("wheel", type=Path, help="the .whl file")
    sub.add_parser("pins", help="exit 1, saying where, if deploy/*/requirements.txt disagree with the repository's pins")
    args = parser.parse_args(argv)
    if args.command == "wheel":
        print(build_student_wheel(args.out))
        return 0
    if args.command == "check-wheel":
        if not args.wheel.is_file():
            print(f"error: {args.wheel} is not a file", file=sys.stderr)
            return 2
        try:
            problems = wheel_problems(args.wheel)
        except zipfile.BadZipFile:
            problems = [f"{args.wheel} is not a wheel (not a zip file)"]
        print("\n".join(problems) or f"ok: {args.wheel.name} holds lab only", file=sys.stderr if problems else sys.stdout)
        return 1 if problems else 0
    problems = pin_problems()
    print("\n".join(problems) or "ok: the images' pins agree with the repository's", file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
