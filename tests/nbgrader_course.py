"""An nbgrader course made from the masters with the kit's two lines, a local exchange and students of its own,
as tests/grader/test_nbgrader_lifecycle.py and e2e/test_formgrader.py run it; and the check that a feedback page
is inert. It imports no conftest: both test folders import it.

The students are this user with `--student=<id>` (nbgrader otherwise names a student by the account) and a folder,
a submission cache and a config of their own (the exchange and the course id, no kit), as separate accounts would
have; the exchange is a local folder."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader import build, sanitize  # noqa: E402 - after the checkout is importable

NAME = "02_decode_scheduling"
COURSE_ID = "decode-scheduling"
PLUGIN_LINES = build.PLUGIN_LINES


def run(folder: Path, *args: str, user: str = "") -> str:
    """An nbgrader command in `folder`, as the instructor or as the student `user`."""
    env = os.environ | {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    student = [f"--student={user}"] if user else []
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, *student], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=1800)
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} as {user}:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


@dataclass
class Course:
    folder: Path            # the instructor's course folder (nbgrader_config.py with the kit's two lines)
    exchange: Path
    homes: dict[str, Path]  # each student's folder, with the fetched assignment


def released(root: Path, students: list[str], extra_config: str = "") -> Course:
    """A course with a gradebook, `students` in it, NAME released to the exchange and fetched by each student."""
    exchange = root / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    folder = build.make_course(root / "course", [NAME], with_db=True)
    with open(folder / "nbgrader_config.py", "a") as config:
        config.write(f'\nc.Exchange.root = "{exchange}"\n{extra_config}' + PLUGIN_LINES)
    for sid in students:
        run(folder, "db", "student", "add", sid, f"--first-name={sid.title()}", "--last-name=Student")
    run(folder, "release_assignment", NAME)
    homes = {}
    for sid in students:
        homes[sid] = root / "home" / sid
        homes[sid].mkdir(parents=True)
        # Each student's own submission cache, as their own account's home has (fetch_feedback reads it).
        (homes[sid] / "nbgrader_config.py").write_text(
            f'c = get_config()\nc.CourseDirectory.course_id = "{COURSE_ID}"\nc.Exchange.root = "{exchange}"\n'
            f'c.Exchange.cache = "{homes[sid] / "cache"}"\n')
        run(homes[sid], "fetch_assignment", NAME, user=sid)
    return Course(folder, exchange, homes)


def submit(course: Course, sid: str, nb) -> None:
    """What a student does in JupyterLab: the fetched notebook, answered and saved, then submitted."""
    fetched = course.homes[sid] / NAME / f"{NAME}.ipynb"
    assert fetched.exists()
    nbformat.write(nb, fetched)
    run(course.homes[sid], "submit", NAME, user=sid)


def fetched_feedback(course: Course, sid: str) -> list[Path]:
    """`nbgrader fetch_feedback` as `sid`; the pages it fetched."""
    run(course.homes[sid], "fetch_feedback", NAME, user=sid)
    return sorted((course.homes[sid] / NAME / "feedback").glob(f"*/{NAME}.html"))


def assert_inert(page: str) -> None:
    """No script, no remote resource, the kit's Content-Security-Policy; and the kit's rich page, not a fallback."""
    low = page.lower()
    assert "<script" not in low and "<link" not in low and "<iframe" not in low and "@import" not in low
    assert not re.findall(r"<[^>]*\son\w+\s*=", low), "an event handler"
    assert all(src.startswith("data:") for src in re.findall(r"""<[^>]*\ssrc\s*=\s*["']?([^"'\s>]*)""", low))
    css = " ".join(re.findall(r"<style[^>]*>(.*?)</style", low, re.S) + re.findall(r"""<[^>]*\sstyle\s*=\s*("[^"]*"|'[^']*')""", low))
    assert not re.search(r"""(url\(|@import)\s*["']?\s*(https?:)?//""", css), "a remote resource in CSS"
    assert "mathjax" not in re.sub(r"<!--.*?-->", "", low, flags=re.S)  # nbconvert's loader (a CDN) and its settings
    assert re.search(r"""http-equiv=["']Content-Security-Policy["']\s+content=["']""" + re.escape(sanitize.CSP), page)
    assert "overflow-wrap: anywhere" in page  # grader/templates/feedback_todo, not the plain page
