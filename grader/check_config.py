"""Does a course's nbgrader_config.py load this kit? `python -m grader.check_config [COURSE_DIR]`, exit 0 if it does.

nbgrader only logs an error when its config file raises (say `ModuleNotFoundError: grader`, the kit not installed
where nbgrader runs) and then ignores the whole file: the course id, the exchange and the kit, and grades stock.
This loads the config as nbgrader does, in a fresh Python started in the course folder with the Python that runs
this command (so a checkout in the current folder proves nothing), and says what nbgrader would use.
Standard library only at the top: it runs as a script too (`python <repo>/grader/check_config.py COURSE_DIR`).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

INSTALL = 'pip install -e "<the kit\'s repository>[instructor]"'
PLUGIN = "grader.nbgrader_plugin"
TIMEOUT = 600.0   # seconds for the probe (importing nbgrader and the kit); generous on a busy machine

# Run with -P in the course folder: nothing on sys.path but what nbgrader itself would see there.
PROBE = r'''
import json, logging
from nbgrader.apps import NbGrader

class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.errors = []

    def emit(self, record):
        exc = record.exc_info[1] if record.exc_info else None
        self.errors.append(record.getMessage() + (f": {type(exc).__name__}: {exc}" if exc else ""))

app, keep = NbGrader(), Keep()
app.log.addHandler(keep)
app.load_config_file()
c = app.config
name = lambda step: f"{getattr(step, '__module__', '')}.{getattr(step, '__name__', step)}"
report = {"errors": keep.errors, "files": app.loaded_config_files,
          "autograde": [name(s) for s in c.Autograde.get("autograde_preprocessors", [])],
          "exporter": name(c.GenerateFeedback["exporter_class"]) if "exporter_class" in c.GenerateFeedback else "",
          "course_id": c.CourseDirectory.get("course_id", "")}
try:
    import grader, lab
    import grader.nbgrader_plugin  # what configure(c) needs: jupytext and the rest of the instructor's extra
    report["kit"] = f"{lab.__version__} ({grader.__path__[0]})"
except Exception as exc:
    report["kit_error"] = f"{type(exc).__name__}: {exc}"
else:
    try:  # its settings as autograde will read them: a wrong value, or a setting under its old name, stops it there
        grader.nbgrader_plugin.SandboxedAutograde(config=c)
    except Exception as exc:
        report["settings_error"] = str(exc)
print("\n" + json.dumps(report))
'''


def probe(course: Path, python: str = sys.executable) -> dict:
    """What nbgrader, started in `course` with `python`, reads from its config files."""
    proc = subprocess.run([python, "-P", "-c", PROBE], cwd=course, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"errors": [f"nbgrader could not start here: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def verdict(report: dict, course: Path) -> tuple[bool, list[str]]:
    """(loads the kit, the lines to print)."""
    steps, exporter = report.get("autograde", []), report.get("exporter", "")
    loaded = any(s.startswith(PLUGIN + ".SandboxedAutograde") for s in steps) and exporter.startswith(PLUGIN + ".")
    if loaded and report.get("settings_error"):
        return False, [f"error: nbgrader in {course} loads the kit, but `nbgrader autograde` would stop on its settings:",
                       f"  {report['settings_error']}"]
    if loaded:
        return True, [f"ok: nbgrader in {course} loads the decode-scheduling kit {report.get('kit', '?')}",
                      f"  config files: {', '.join(report.get('files', [])) or 'none'}",
                      f"  autograde: {PLUGIN}.SandboxedAutograde in place of Execute; feedback: {exporter}"]
    lines = [f"error: nbgrader in {course} does not use the decode-scheduling kit: it would grade with stock nbgrader"]
    lines += [f"  nbgrader's log: {e}" for e in report.get("errors", [])]
    if report.get("kit_error"):
        lines.append(f"  the kit is not importable with {sys.executable}: {report['kit_error']}; install it where "
                     f"nbgrader runs: {INSTALL}")
    if any(e.startswith("Exception while loading") for e in report.get("errors", [])):
        lines.append("  nbgrader ignores a config file that raises: the course id, the exchange and the kit with it")
    elif not report.get("files"):
        lines.append("  no nbgrader_config.py was loaded here (run this on the course folder)")
    else:
        lines.append(f"  {', '.join(report['files'])} loaded, but does not call configure(c): add the two lines\n"
                     f"      from {PLUGIN} import configure\n      configure(c)")
    return False, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("course", nargs="?", default=".", help="the course folder (where nbgrader_config.py is)")
    args = parser.parse_args(argv)
    course = Path(args.course).resolve()
    if not course.is_dir():
        print(f"error: {course} is not a folder", file=sys.stderr)
        return 2
    ok, lines = verdict(probe(course), course)
    print("\n".join(lines), file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
