"""`make check-pins`: every Python the README claims installs the pins, checked where the package index is.

For each claimed version (grader/pins.py) pip resolves, without that interpreter (--python-version, wheels only),
the instructor's lock (every pin, and nothing it leaves out) and the student requirements with the lab wheel; for
each instructor Python, the JupyterHub images' requirements (deploy/, the student's with the wheel; nothing left
unpinned by requirements.lock and deploy/hub.lock), after checking they agree with the repository's pins. Where
this machine has that Python (python3.X on PATH, Debian's /usr/bin, pyenv's versions), a venv under build/pins/
really installs them and imports the packages. It asks the package index, so it runs at install time (make
check-pins, from .ci/run), never from pytest, which must run offline. pip evaluates environment markers for the
Python it runs on, not the one it resolves for; a dependency only one Python pulls in is caught by that Python's
real venv.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import hub
from .bundle import build_wheel
from .paths import BUILD_DIR, ROOT
from .pins import INSTRUCTOR_PYTHONS, LOCK, REQUIREMENTS, STUDENT, STUDENT_PYTHONS, normalise, pins, which

VENVS = BUILD_DIR / "pins"
INSTALL = ["-m", "pip", "install", "--quiet", "--no-compile"]  # no .pyc for what is never imported: minutes less in CI
SHOWN = ("numpy", "pandas", "matplotlib", "ipykernel", "jupyterlab", "nbgrader")  # what a resolve's line reports
# A planted pin with no wheel for a claimed Python: `python -m grader.check_pins planted` proves the check fails on it.
PLANTED = ("numpy==1.21.0", "3.13")
# What a real venv must import, and a student's first steps with lab (run outside the checkout: the installed wheel).
INSTRUCTOR_IMPORTS = "import numpy, pandas, matplotlib, jupyterlab, ipykernel, nbgrader, nbconvert, jupytext, pytest, hypothesis, lab, grader.autograde"
STUDENT_SMOKE = """\
import io, sys
import matplotlib
matplotlib.use("Agg")
import ipykernel, jupyterlab, numpy, pandas, lab
ex = lab.FOUR_ON_TWO
assert lab.schedule(ex.jobs, ex.slots, continuous=True)["makespan_ticks"] == ex.makespan["continuous"]
assert len(lab.compare_policies(ex.jobs, ex.slots)) == 2
lab.plot_slots(ex.jobs, ex.slots).savefig(io.BytesIO(), format="png")
print(f"numpy {numpy.__version__}, pandas {pandas.__version__}, matplotlib {matplotlib.__version__}, "
      f"ipykernel {ipykernel.__version__}, jupyterlab {jupyterlab.__version__}, lab {lab.__version__}")
"""


class PinError(Exception):
    """A claimed Python cannot install the requirements; the message names what and why."""


def explain(output: str, python: str) -> list[str]:
    """What pip's failure output says cannot be installed on `python`, one line per requirement or conflict."""
    ignored = dict(re.findall(r"(\S+) Requires-Python (\S+?)[;\s]", " ".join(
        re.findall(r"Ignored the following versions that require a different python version: (.*)", output)) + " "))
    reasons = []
    for req in re.findall(r"No matching distribution found for (\S+)", output):
        pinned = req.partition("==")[2]
        reasons.append(f"{req}: cannot install on Python {python} (it requires Python {ignored[pinned]})" if pinned in ignored
                       else f"{req}: no wheel for Python {python}")
    # from a plain folder or an index that does not publish Requires-Python: the version is in the wheel's name
    for name, spec in re.findall(r"Package '(\S+)' requires a different Python: \S+ not in '([^']+)'", output):
        files = re.findall(rf"\b{re.sub(r'[-_.]', '[-_.]', re.escape(name))}-([^-\s]+)-\S*\.whl", output, re.I)
        req = f"{name}=={files[-1]}" if files else name
        reasons.append(f"{req}: cannot install on Python {python} (it requires Python {spec})")
    conflict = re.search(r"Cannot install (.+?) because these package versions have conflicting dependencies", output)
    if conflict:
        cause = re.search(r"The conflict is caused by:\n((?:[ \t]+\S.*\n?)+)", output)
        detail = "; ".join(line.strip() for line in cause.group(1).splitlines()) if cause else "see pip's output"
        reasons.append(f"{conflict.group(1)} conflict on Python {python}: {detail}")
    return reasons


def resolve(args: list[str], python: str, index: list[str] = ()) -> dict[str, str]:
    """What pip would install for `python` (X.Y or X.Y.Z) from `args`, wheels only; raises PinError naming the culprits."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
               "--python-version", python, "--report", str(report), "--disable-pip-version-check", *index, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            reasons = explain(output, python) or ["pip failed: " + "\n".join(output.strip().splitlines()[-5:])]
            raise PinError("\n".join(reasons))
        return {normalise(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}


def check_lock(python: str, lock: Path = LOCK, index: list[str] = ()) -> dict[str, str]:
    """The whole lock resolves for `python`, and pulls in nothing it does not pin."""
    got = resolve(["-r", str(lock)], python, index)
    unpinned = sorted(set(got) - set(pins(lock)))
    if unpinned:
        raise PinError(f"{lock.name} does not pin {', '.join(f'{n}=={got[n]}' for n in unpinned)} (pulled in on Python {python})")
    return got


def check_student(python: str, wheel: Path, requirements: Path = STUDENT, index: list[str] = ()) -> dict[str, str]:
    """The student requirements and the lab wheel (its Requires-Python and dependency ranges) resolve for `python`."""
    return resolve(["-r", str(requirements), str(wheel)], python, index)


def check_image(requirements: Path, python: str, extra: list[str] = (), locks: tuple[Path, ...] = (LOCK, hub.HUB_LOCK),
                index: list[str] = ()) -> dict[str, str]:
    """A hub image's requirements (its -c lines name the locks), with `extra` (the lab wheel), resolve for `python` and
    pull in nothing the locks do not pin."""
    got = resolve(["-r", str(requirements), *map(str, extra)], python, index)
    known = set().union(*(pins(lock) for lock in locks)) | {normalise(Path(e).name.split("-")[0]) for e in extra}
    unpinned = sorted(set(got) - known)
    if unpinned:
        raise PinError(f"{' and '.join(lock.name for lock in locks)} do not pin {', '.join(f'{n}=={got[n]}' for n in unpinned)} "
                       f"(pulled in by {requirements.parent.name}/{requirements.name} on Python {python})")
    return got


def image_pins() -> str:
    """deploy/*/requirements.txt agree with requirements.txt, requirements-student.txt and the locks (grader/hub.py)."""
    problems = hub.pin_problems()
    if problems:
        raise PinError("\n".join(problems))
    return "they agree"


def run(cmd: list, **kwargs) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise PinError(f"{' '.join(map(str, cmd[:4]))} ... failed:\n{tail}")
    return proc.stdout


def real_venv(kind: str, python: str, version: str, wheel: Path | None = None) -> str:
    """Make (or reuse, if its inputs are unchanged) build/pins/<kind>-<version>/, install, import; returns what it printed."""
    venv = VENVS / f"{kind}-{version}"
    inputs = [REQUIREMENTS, LOCK] if kind == "instructor" else [STUDENT, ROOT / "pyproject.toml", *sorted((ROOT / "lab").rglob("*.py"))]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in inputs)).hexdigest()
    stamp = venv / ".installed"
    vpy = venv / "bin" / "python"
    if not (stamp.exists() and stamp.read_text() == digest):
        shutil.rmtree(venv, ignore_errors=True)
        run([python, "-m", "venv", venv])
        run([vpy, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        if kind == "instructor":  # as make venv does
            report = venv / "report.json"
            run([vpy, *INSTALL, "--report", report, "-r", REQUIREMENTS, "-c", LOCK])
            got = {normalise(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
            unpinned = sorted(got - set(pins(LOCK)))
            if unpinned:
                raise PinError(f"{LOCK.name} does not pin {', '.join(unpinned)} (installed on Python {version})")
        else:
            run([vpy, *INSTALL, "-r", STUDENT, wheel])
        stamp.write_text(digest)
    if kind == "instructor":  # from the checkout, as make test imports lab and grader
        return run([vpy, "-c", INSTRUCTOR_IMPORTS + "; print('imported')"], cwd=ROOT, env={**os.environ, "MPLBACKEND": "Agg"}).strip()
    with tempfile.TemporaryDirectory() as away:  # outside the checkout: the installed wheel, not lab/
        return run([vpy, "-c", STUDENT_SMOKE], cwd=away).strip()


def check(resolve_only: bool = False) -> list[str]:
    """Every claimed Python, both sides; returns the failures (empty: all good) and prints a line for each check."""
    failures = []

    def step(label, fn, *args):
        try:
            result = fn(*args)
        except PinError as err:
            failures.append(f"{label}: {err}")
            print(f"FAIL {label}:\n  " + str(err).replace("\n", "\n  "), flush=True)
            return
        said = result if isinstance(result, str) else f"{len(result)} packages, " + ", ".join(
            f"{name} {result[name]}" for name in SHOWN if name in result)
        print(f"ok   {label}: {said}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        for minor in INSTRUCTOR_PYTHONS:
            step(f"instructor lock, resolved for Python {minor}", check_lock, minor)
        for minor in STUDENT_PYTHONS:
            step(f"student requirements + lab wheel, resolved for Python {minor}", check_student, minor, wheel)
        step("the hub images' pins (deploy/)", image_pins)
        for image in hub.IMAGES:  # the images' pins are the lock's: resolved for the instructor Pythons
            extra = [wheel] if image == "student" else []
            for minor in INSTRUCTOR_PYTHONS:
                step(f"{image} image: deploy/{image}/requirements.txt{' + lab wheel' if extra else ''}, resolved for Python {minor}",
                     check_image, hub.requirements(image), minor, extra)
        if resolve_only:
            return failures
        for kind, minors in (("instructor", INSTRUCTOR_PYTHONS), ("student", STUDENT_PYTHONS)):
            for minor in minors:
                found = which(minor)
                if not found:
                    print(f"--   {kind} venv on Python {minor}: no interpreter on this machine (resolved only)")
                    continue
                path, version = found
                step(f"{kind} venv on Python {version} ({path})", real_venv, kind, path, version, wheel)
    return failures


def planted() -> int:
    """The check must fail on a pin with no wheel for a claimed Python, naming the package and version: planted in
    copies of the lock and of the student requirements, in place of that package's own line."""
    pin, python = PLANTED
    name = normalise(re.match(r"[\w.-]+", pin).group())
    checks = {LOCK: lambda path: check_lock(python, path), STUDENT: lambda path: resolve(["-r", str(path)], python)}
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for source, check_one in checks.items():
            bad = Path(tmp) / source.name
            kept = [line for line in source.read_text().splitlines() if normalise(re.match(r"[\w.-]*", line).group()) != name]
            bad.write_text("\n".join(kept + [pin]) + "\n")
            try:
                check_one(bad)
            except PinError as err:
                named = pin in str(err) and python in str(err)
                print(f"{'ok  ' if named else 'FAIL'} {pin} planted in {source.name}, Python {python}: {err}")
                failed += not named
                continue
            print(f"FAIL {pin} planted in {source.name} resolved for Python {python}: the check would not catch a bad pin")
            failed += 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.check_pins", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    checking = sub.add_parser("check", help="resolve for every claimed Python; make, install and import a venv where this machine has it")
    checking.add_argument("--resolve-only", action="store_true", help="only ask pip to resolve: no venvs (faster, no interpreters needed)")
    sub.add_parser("planted", help=f"show that the check fails on a planted {PLANTED[0]} for Python {PLANTED[1]}")
    args = parser.parse_args(argv)
    if args.command == "planted":
        return planted()
    failures = check(args.resolve_only)
    if failures:
        print(f"\n{len(failures)} check(s) failed:\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("every claimed Python installs the pins")
    return 0


if __name__ == "__main__":
    sys.exit(main())
