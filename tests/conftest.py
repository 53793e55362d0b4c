"""Shared helpers, and a test run made independent of the machine it runs on (see hermetic_environment)."""
import atexit
import contextlib
import fcntl
import locale
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# grader.runner.sandbox's default range, written out: importing it here would fix its UID_BASE before this run picks one
DEFAULT_UID_BASE, UID_COUNT = 1_900_000_000, 4096
_HELD = []  # the uid-range lock, held until this test run exits


def _uids_in_use() -> set[int]:
    uids = set()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as handle:
                uids.update(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
        except (OSError, ValueError, IndexError):
            continue
    return uids


def _forget_uids(base: int) -> None:
    """Remove the per-uid lock files and /etc folders this run's sandboxes left in the grader's state folder."""
    from grader.runner.sandbox import _state_dir

    state = _state_dir()
    for uid in range(base, base + UID_COUNT):
        (state / f"{uid}.lock").unlink(missing_ok=True)
        shutil.rmtree(state / "etc" / str(uid), ignore_errors=True)


def private_uid_base() -> int:
    """A sandbox uid range of this run's own, never the graders' default one: tests that look at every process
    in the range (tests/grader/runner/test_sandbox.py) would otherwise see, and kill, another grading or test run's sandboxes."""
    locks = Path(tempfile.gettempdir()) / f"course-tests-uid-ranges-{os.geteuid()}"
    locks.mkdir(mode=0o700, exist_ok=True)
    in_use = _uids_in_use()
    for block in range(1, 64):
        base = DEFAULT_UID_BASE + block * UID_COUNT
        fd = os.open(locks / f"{block}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another test run holds it
            os.close(fd)
            continue
        if any(base <= uid < base + UID_COUNT for uid in in_use):  # left over from a crashed run
            os.close(fd)
            continue
        _HELD.append(fd)
        atexit.register(_forget_uids, base)
        return base
    raise RuntimeError("no free sandbox uid range for this test run (63 concurrent runs?)")


def hermetic_environment() -> None:
    """Before anything reads them: what the machine would otherwise leak into results.

    - HOME: a fresh one per run. Dotfiles there change what tests see: a matplotlibrc, IPython startup files
      run in every notebook kernel, Jupyter kernelspecs, and matplotlib's font cache, which lists the fonts
      installed when it was built, not now (a CJK font added or removed later would go unseen). The user's
      own font folders stay visible: fonts "as installed" are the user's too.
    - Locale: C.UTF-8, for this process and its children (files and subprocess output are read as UTF-8).
    - LAB_LANGUAGE, LAB_HIDE_CJK_FONTS: dropped; tests that need them set them (font_env).
    - GRADER_UID_BASE: a range of this run's own, unless set by hand (private_uid_base).
    - LAB_TERM_SECRET: public (grader/term.py), for this process and its children: tests grade on the repository's own
      cases (the shipped mistakes catalogue's), never on a term secret of the machine's; tests of terms set their own.
    """
    git_config = Path.home() / ".gitconfig"
    user_fonts = {".local/share/fonts": Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "fonts",
                  ".fonts": Path.home() / ".fonts"}
    home = Path(tempfile.mkdtemp(prefix="course-tests-home-"))
    atexit.register(shutil.rmtree, home, True)
    for name, folder in user_fonts.items():
        if folder.is_dir():
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            (home / name).symlink_to(folder.resolve())
    if git_config.exists():  # git keeps the user's settings (safe.directory), which decide nothing a test checks
        os.environ.setdefault("GIT_CONFIG_GLOBAL", str(git_config))
    os.environ["HOME"] = str(home)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_CONFIG_DIR",
                 "JUPYTER_DATA_DIR", "JUPYTER_PATH", "JUPYTER_RUNTIME_DIR", "LANGUAGE", "LAB_LANGUAGE", "LAB_HIDE_CJK_FONTS"):
        os.environ.pop(name, None)
    os.environ["LANG"] = os.environ["LC_ALL"] = "C.UTF-8"
    try:
        locale.setlocale(locale.LC_ALL, "C.UTF-8")
    except locale.Error:  # no C.UTF-8 locale: Python's UTF-8 mode still makes children read UTF-8
        os.environ["PYTHONUTF8"] = "1"
    if "GRADER_UID_BASE" not in os.environ:
        os.environ["GRADER_UID_BASE"] = str(private_uid_base())
    os.environ["MPLBACKEND"] = "Agg"
    os.environ["LAB_TERM_SECRET"] = "public"


hermetic_environment()

import matplotlib  # noqa: E402  (after HOME is set: matplotlib reads its config and cache folders once)
from hypothesis import HealthCheck, settings  # noqa: E402

matplotlib.use("Agg")
# Loaded here, outside any test: a fresh HOME has no font cache, and building it runs fc-list, which the tier guard
# below would charge to whichever unmarked test first draws text (test_deadline's, run alone).
import matplotlib.font_manager  # noqa: E402,F401
# Likewise jupytext, which runs `pandoc --version` when it is imported: a test that reads a master (test_glossary's,
# run alone) would otherwise be charged with a process it never started.
import jupytext  # noqa: E402,F401
# Property tests are judged on results, never on speed: a loaded machine must not fail them.
settings.register_profile("course", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("course")

FORMS = ("lines", "string")  # as nbformat.write / JupyterLab save, and one string per source
FONT_STATES = ("installed", "hidden")  # the machine's CJK fonts as installed, and hidden with LAB_HIDE_CJK_FONTS=1
STAND_IN_CJK = "Noto Sans CJK SC"  # the name lab.fonts looks for first


def font_env(state: str) -> dict[str, str]:
    """os.environ for a process that sees the CJK fonts in `state` ("installed" or "hidden")."""
    from lab.fonts import HIDE_ENV

    return os.environ | {HIDE_ENV: "1" if state == "hidden" else "0"}


def stand_in_cjk_font_env(folder: Path) -> dict[str, str]:
    """An environment whose processes find a CJK font on any machine: DejaVu Sans renamed to a CJK family.

    lab.fonts finds it as an installed CJK font, so label() takes that path exactly as with a real one; it has no
    Hanzi, which lab's shipped subset, behind it in the fallback list, then draws. Matplotlib gets a fresh cache to
    list it.
    """
    from fontTools.ttLib import TTFont

    fonts = folder / "data" / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    face = TTFont(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    for record in face["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = STAND_IN_CJK
        elif record.nameID == 6:
            record.string = STAND_IN_CJK.replace(" ", "")
    face.save(fonts / "StandInCJK.ttf")
    return font_env("installed") | {"XDG_DATA_HOME": str(folder / "data"), "MPLCONFIGDIR": str(folder / "mpl")}


def as_saved(assignment: str, answers: dict, form: str, folder: Path) -> dict:
    """The answers after a round trip through a saved file, read exactly as `make autograde` reads it."""
    from grader import editions, paths, sample_submissions, submission
    from grader.assignment import load

    path = sample_submissions.write({"student": sample_submissions.filled(assignment, answers)}, folder, form=form)[0]
    nb = submission.read(path)
    submission.identify(nb, load(assignment), [load(n) for n in paths.assignment_names() if n != assignment])
    answer_ids = editions.answer_ids(editions.nbgrader_source(assignment))
    return submission.prepare(nb, sample_submissions.release(assignment), answer_ids).answers


# --- the sandbox tier: which isolating levels this machine has, tested at each; never skipped quietly in CI ------

_LEVELS: dict[str, str] = {}   # level -> '' (works here) or why not, probed once per test run


def sandbox_levels() -> dict[str, str]:
    """Each isolating level ('bwrap': root, a uid per student; 'userns': bubblewrap without root) -> '' where it works
    here, else why not. Probed on first use (the run's uid range is chosen first)."""
    if not _LEVELS:
        from grader.runner import cold

        for level in ("bwrap", "userns"):
            _LEVELS[level] = cold.why_not(level) or cold._probe(level)
    return _LEVELS


def levels_here() -> list[str]:
    """The isolating levels that work here, strongest first."""
    return [level for level, why in sandbox_levels().items() if not why]


def needs_level(*levels: str):
    """Skip unless one of `levels` works here (the reason names what is missing; CI fails instead: see below)."""
    missing = [level for level in levels if sandbox_levels()[level]]
    return pytest.mark.skipif(len(missing) == len(levels), reason="sandbox tier: " + "; ".join(
        f"level {level} unavailable ({sandbox_levels()[level]})" for level in missing))


@pytest.fixture
def no_sandbox(monkeypatch):
    """A machine (or Gradescope image) without bubblewrap: what the probe finds, as on a laptop where nobody installed it."""
    from grader import caches   # imported late: the run's uid range is chosen first
    from grader.runner import cold

    monkeypatch.setenv("GRADER_SANDBOX", "auto")   # recorded, so that what use_sandbox() sets is undone after the test
    monkeypatch.setattr(cold, "tool", lambda name: None)
    caches.forget()   # the level probed, the Graders and warm parents made at it
    yield
    monkeypatch.undo()
    caches.forget()
    assert os.environ.get("GRADER_SANDBOX") != "process" or not levels_here(), "the process level leaked out of the test"


def pytest_configure(config):
    """Where no level isolates, outside CI the suite runs at the process level it then asks for (and says so at the
    end); in CI (CI=true) a missing bwrap, user namespace or seccomp filter fails the run at once, unless the run is
    make test-fast's (-m "not slow"), which starts no sandbox."""
    wanted = ["bwrap", "userns"] if os.geteuid() == 0 else ["userns"]
    missing = {level: why for level, why in sandbox_levels().items() if why and level in wanted}
    quick = config.getoption("markexpr", "").strip() == "not slow"   # make test-fast: no test of it starts a sandbox
    if missing and os.environ.get("CI") == "true" and not quick:
        pytest.exit("CI=true, but the sandbox tier cannot run: " + "; ".join(f"{k}: {v}" for k, v in missing.items())
                    + " (make sandbox-deps installs bubblewrap)", returncode=3)
    if not levels_here():
        os.environ["GRADER_SANDBOX"] = "process"


def pytest_terminal_summary(terminalreporter):
    """Name the sandbox levels tested, and the tier that did not run."""
    shown = ", ".join(f"{level}: {'tested' if not why else 'NOT TESTED (' + why + ')'}" for level, why in _LEVELS.items())
    terminalreporter.write_line(f"sandbox tier: {shown or 'not probed'}")
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "sandbox tier" in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"sandbox tier: {len(skipped)} test(s) skipped for want of a sandbox level")


@pytest.fixture(scope="module", params=["bwrap", "userns"])
def zygote(request):
    """A warm parent for one test module, at each isolating level that works here (skipped, with why, where not)."""
    from grader.runner import Warm   # imported late: the run's uid range is chosen first

    why = sandbox_levels()[request.param]
    if why:
        pytest.skip(f"sandbox tier: level {request.param} unavailable ({why})")
    warm = Warm(request.param)
    yield warm
    warm.close()


# --- the two tiers: `make test` runs every test, `make test-fast` those not marked slow ------------------------
# A test is slow if it starts a process: a sandboxed child, a notebook kernel, nbgrader, a Python or a tool. That is
# what takes seconds here, and unlike a duration it is the same on every machine, so it is enforced, not timed: while
# a test that is not marked slow is set up or run, starting a process fails it (both tiers: make test runs this too).
# Forks of this process (grader/two_cores.py) start no program and stay allowed.

class StartedAProcess(RuntimeError):
    """Raised in place of starting a process (code under test that catches it still fails its test: _guarded)."""


_STARTED: list[str] = []   # what tests not marked slow tried to start, in this phase


@contextlib.contextmanager
def no_processes(nodeid: str):
    """While inside: starting any process (subprocess, asyncio, jupyter_client, the sandbox) raises StartedAProcess."""
    real = subprocess.Popen._execute_child

    def refused(self, args, *rest, **kwargs):
        shown = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
        _STARTED.append(shown)
        raise StartedAProcess(f"{nodeid} is not marked slow but started a process ({shown[:200]}): mark it "
                              "@pytest.mark.slow, or pytestmark = pytest.mark.slow for a whole module (tests/conftest.py)")

    subprocess.Popen._execute_child = refused
    try:
        yield
    finally:
        subprocess.Popen._execute_child = real


def _guarded(item, phase: str):
    if item.get_closest_marker("slow"):
        return (yield)
    _STARTED.clear()
    try:
        with no_processes(item.nodeid):
            return (yield)
    finally:  # also when the code under test caught the refusal, or failed some other way because of it
        if _STARTED:
            started, _STARTED[:] = _STARTED[:], []
            pytest.fail(f"{item.nodeid} is not marked slow but started a process in its {phase} ({started[0][:200]}): "
                        "mark it @pytest.mark.slow (tests/conftest.py)", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guarded(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guarded(item, "call"))


# --- one assignment's tests (make check-assignment NAME=...: grader/check_assignment.py) ----------------------------

def pytest_addoption(parser):
    parser.addoption("--assignment", metavar="NAME", default=os.environ.get("COURSE_ASSIGNMENT") or None,
                     help="run only the tests parametrised over assignments, with this one (or set COURSE_ASSIGNMENT)")


def assignment_of(item) -> set[str]:
    """The string parameters of a test item, those inside tuples too: where one is an assignment's name, the item
    is that assignment's (tests are parametrised over grader.paths.assignment_names())."""
    values = getattr(getattr(item, "callspec", None), "params", {}).values()
    strings = {x for v in values for x in (v if isinstance(v, tuple) else (v,)) if isinstance(x, (str, os.PathLike))}
    # a path names its assignment as a folder or a file's stem: notebooks/zh/NAME.ipynb, grader/assignments/NAME/...
    return {str(x) for x in strings} | {part for x in strings for part in (*Path(x).parts, Path(x).stem)}


def pytest_collection_modifyitems(config, items):
    """With --assignment NAME, keep only the items parametrised with NAME; deselect the rest (said in the summary)."""
    chosen = config.getoption("--assignment")
    if not chosen:
        return
    from grader.paths import assignment_names

    if chosen not in assignment_names():
        raise pytest.UsageError(f"--assignment {chosen}: no such assignment; known: {', '.join(assignment_names())}")
    keep = [item for item in items if chosen in assignment_of(item)]
    config.hook.pytest_deselected(items=[item for item in items if chosen not in assignment_of(item)])
    items[:] = keep


def selected_assignments(config) -> list[str]:
    """The assignments a run is about, for fixtures that build editions: --assignment's one, else [] (every one)."""
    chosen = config.getoption("--assignment", default=None)
    return [chosen] if chosen else []
