"""The term's secret (grader/term.py): the hidden random cases and notebook 03's held-out traces are drawn from it, the
same secret gives the same material and another secret other material, grading without one is refused unless public
mode is asked for, and nothing shipped (git, the editions, the student bundle, a feedback page) holds the secret or
what is drawn from it."""
from __future__ import annotations

import functools
import json
import random
import re
import secrets
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROOT
from grader import autograde, bundle, diagnose, report, sample_submissions, term
from grader.assignment import get
from grader.config import DEFAULTS

BATCH = "03_batch_scheduling"
# made here, so that no file holds them as they are: the search for them in git's files finds only what leaked
SECRET_A = "-".join(("term A", "test secret", "0123456789"))
SECRET_B = "-".join(("term B", "test secret", "9876543210"))


def _scenarios(tasks, answer_id: str) -> list:
    task = next(t for t in tasks if t.answer_id == answer_id)
    return [(sc["ops"], sc.get("feed")) for rule in task.rules for sc in rule.scenarios]


def _held_out(tasks) -> list:
    task = next(t for t in tasks if t.answer_id == "todo5")
    return [sc["feed"]["items"] for sc in task.rules[1].scenarios]


def test_two_secrets_give_other_held_out_traces_and_random_cases_under_the_same_rules():
    assignment = get(BATCH)
    seed_a, seed_b = (term.seed_for(s.encode(), BATCH) for s in (SECRET_A, SECRET_B))
    a, again, b = assignment.tasks(seed_a), assignment.tasks(term.seed_for(SECRET_A.encode(), BATCH)), assignment.tasks(seed_b)
    names = lambda tasks: [(t.answer_id, [r.name for r in t.rules]) for t in tasks]  # noqa: E731
    assert names(a) == names(b) == names(assignment.tasks(term.PUBLIC_SEED))
    assert [_scenarios(a, t.answer_id) for t in a] == [_scenarios(again, t.answer_id) for t in again]   # same secret, same
    for answer_id in ("todo1", "todo2", "todo3", "todo4"):   # random cases
        assert _scenarios(a, answer_id) != _scenarios(b, answer_id), answer_id
    held_a, held_b = assignment.suite.held_out_seeds(seed_a), assignment.suite.held_out_seeds(seed_b)
    public = assignment.suite.PUBLIC_HELD_OUT
    assert len({*held_a, *held_b, *public}) == 6 and all(2**40 < s < 2**62 for s in (*held_a, *held_b))
    assert _held_out(a) != _held_out(b) and _held_out(a) != _held_out(assignment.tasks(term.PUBLIC_SEED))
    # the other assignments' random cases too
    for name in ("01_continuous_batching", "02_decode_scheduling"):
        other = get(name)
        one, two = (other.tasks(term.seed_for(s.encode(), name)) for s in (SECRET_A, SECRET_B))
        assert [_scenarios(one, t.answer_id) for t in one] != [_scenarios(two, t.answer_id) for t in two], name
    # one secret, other seeds per assignment; and a purpose's number is no other's
    assert term.seed_for(SECRET_A.encode(), BATCH) != term.seed_for(SECRET_A.encode(), "02_decode_scheduling")
    assert term.derive(seed_a, "x") != term.derive(seed_a, "y")


ASSIGNMENTS = ("01_continuous_batching", "02_decode_scheduling", BATCH)


def _seeds_given(monkeypatch) -> list:
    """Records every value a random generator is seeded with from now on: random.Random (and its seed method), the
    module's random.seed, and numpy's generators, bit generators and seed."""
    given: list = []

    class Recorded(random.Random):
        def seed(self, a=None, version=2):
            given.append(a)
            super().seed(a, version)

    def recorded(make):
        def seed_of(args, kwargs):
            given.append(args[0] if args else kwargs.get("seed", kwargs.get("entropy")))
        if isinstance(make, type):   # a class stays one (numpy checks isinstance against them)
            return type(make.__name__, (make,), {"__init__": lambda self, *a, **k: (seed_of(a, k), make.__init__(self, *a, **k))[1]})

        @functools.wraps(make)
        def call(*args, **kwargs):
            seed_of(args, kwargs)
            return make(*args, **kwargs)
        return call

    monkeypatch.setattr(random, "Random", Recorded)
    monkeypatch.setattr(random, "seed", recorded(random.seed))
    for name in ("default_rng", "seed", "RandomState", "SeedSequence", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
        monkeypatch.setattr(np.random, name, recorded(getattr(np.random, name)))
    return given


def _gives_away(value, seed: int) -> bool:
    """`value` is `seed`, or it follows from it at a glance: its decimal or hex digits (or their first half) are in
    value's, or an int that shares its top 128 bits (the seed plus or xor a small number)."""
    if isinstance(value, int) and not isinstance(value, bool) and (value ^ seed).bit_length() <= 128:
        return True
    text = repr(value) + (format(value, "x") if isinstance(value, int) else "")
    text += value.hex() if isinstance(value, (bytes, bytearray)) else ""
    digits = (str(seed), format(seed, "x"))
    return any(d in text or d[:len(d) // 2] in text for d in digits)


def test_no_random_generator_is_seeded_with_the_term_seed(monkeypatch):
    """A child sees its TODO's random cases; 624 outputs of Mersenne Twister give its state and then what it was
    seeded with, which must not be the term's seed (the held-out traces and every purpose's number follow from it).
    Each assignment's hidden suite, built under a secret, seeds its generators with numbers that do not give it away."""
    key = secrets.token_hex(32).encode()   # a new term: nothing built under it is cached
    seeds = {name: term.seed_for(key, name) for name in ASSIGNMENTS}
    given = _seeds_given(monkeypatch)
    for name in ASSIGNMENTS:
        start = len(given)
        get(name).tasks(seeds[name])
        drawn = given[start:]
        assert drawn and drawn[0] == term.cases_seed(seeds[name]), name   # the recording sees the suite's generator
        assert not [(name, v) for v in drawn for s in (*seeds.values(), int.from_bytes(key, "big")) if _gives_away(v, s)]
        assert not [(name, v) for v in drawn if key in (v if isinstance(v, bytes) else repr(v).encode())]
    held_out = get(BATCH).suite.held_out_seeds(seeds[BATCH])
    assert set(held_out) <= set(given)   # numpy's generators were seen: the held-out traces are made from these
    assert term.cases_seed(term.PUBLIC_SEED) == term.PUBLIC_SEED   # public mode: the cases it has always had


def test_where_the_secret_comes_from(tmp_path, monkeypatch):
    monkeypatch.setattr(term, "SECRET_FILE", tmp_path / "course.secret")
    monkeypatch.delenv(term.SECRET_ENV)
    with pytest.raises(term.TermSecretError, match="no term secret"):
        term.secret("")
    assert term.secret("public") is None
    term.new(term.SECRET_FILE)
    assert term.SECRET_FILE.stat().st_mode & 0o077 == 0
    written = term.SECRET_FILE.read_text().strip().encode()
    assert term.secret("") == written and len(written) == 64
    with pytest.raises(FileExistsError):   # a term keeps its secret
        term.new(term.SECRET_FILE)
    monkeypatch.setenv(term.SECRET_ENV, SECRET_A)   # the variable before the file
    assert term.secret("") == SECRET_A.encode()
    (tmp_path / "named").write_text(SECRET_B + "\n")
    assert term.secret(str(tmp_path / "named")) == SECRET_B.encode()   # the setting names a file: that one
    monkeypatch.setenv(term.SECRET_ENV, "public")
    assert term.secret("") is None and term.seed("", BATCH) == term.PUBLIC_SEED
    monkeypatch.setenv(term.SECRET_ENV, "short")
    with pytest.raises(term.TermSecretError, match="16"):
        term.secret("")
    with pytest.raises(term.TermSecretError, match="cannot be read"):
        term.secret(str(tmp_path / "missing"))


@pytest.mark.slow
def test_course_secret_is_kept_out_of_git():
    assert subprocess.run(["git", "check-ignore", "-q", "course.secret"], cwd=ROOT).returncode == 0


def test_grading_without_a_secret_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(term, "SECRET_FILE", tmp_path / "course.secret")
    monkeypatch.delenv(term.SECRET_ENV)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.ipynb").write_text("{}")
    with pytest.raises(SystemExit, match="no term secret"):
        autograde.run(BATCH, subs, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_report_names_the_term_by_a_fingerprint_never_by_its_seed():
    tasks = get(BATCH).tasks(term.PUBLIC_SEED)
    seed_a, seed_b = (term.seed_for(s.encode(), BATCH) for s in (SECRET_A, SECRET_B))
    head = report.header(BATCH, seed_a, "process", tasks)
    assert "seed" not in head and re.fullmatch(r"[0-9a-f]{12}", head["term"])
    assert head["term"] != report.header(BATCH, seed_b, "process", tasks)["term"]
    assert report.header(BATCH, term.PUBLIC_SEED, "process", tasks)["term"] == term.PUBLIC
    assert str(seed_a) not in json.dumps(head) and str(seed_a % 10**12) not in json.dumps(head)


def test_the_mistakes_catalogue_is_keyed_by_the_term():
    """diagnose._key hashes the seed and every scenario: another term's key differs, so its grader never reads the
    shipped catalogue (made for the public cases, which the tests grade on) and grades the mutants afresh."""
    assignment = get(BATCH)
    shipped = json.loads(diagnose.shipped(assignment).read_text())["key"]

    def key(seed):   # what diagnose._key reads of a Grader; the reference's observations made up, the same for each
        tasks = assignment.tasks(seed)
        fake = SimpleNamespace(assignment=assignment, seed=seed, reference=assignment.reference, tasks=tasks,
                               setup=assignment.setup, checks=assignment.check_definitions, driver=assignment.driver_source,
                               known={f"{t.answer_id}|0|0": (b'{"obs": [0]}', [0]) for t in tasks})
        return diagnose._key.__wrapped__(fake)
    public, a, b = key(term.PUBLIC_SEED), key(term.seed_for(SECRET_A.encode(), BATCH)), key(term.seed_for(SECRET_B.encode(), BATCH))
    assert len({public, a, b}) == 3 and shipped not in (a, b)
    assert term.seed(DEFAULTS.term_secret, BATCH) == term.PUBLIC_SEED   # the tests' default path: the shipped catalogue's


def _drawn_numbers(secret: str) -> list[str]:
    """The secret and, as decimal digits, what each assignment draws from it (its seed, 03's held-out traces)."""
    seeds = {name: term.seed_for(secret.encode(), name) for name in ("01_continuous_batching", "02_decode_scheduling", BATCH)}
    return [secret, *map(str, seeds.values()), *map(str, get(BATCH).suite.held_out_seeds(seeds[BATCH]))]


def _tracked() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    return {n: (ROOT / n).read_bytes().decode("utf-8", "replace") for n in names if n and (ROOT / n).is_file()}


@pytest.mark.slow
def test_no_shipped_file_holds_a_term_secret_or_a_held_out_trace(tmp_path):
    """Nothing tracked names the test term's secret or what it draws; the public held-out traces are named only where
    public mode defines them (03's suite), and no edition (notebooks/, solutions/) or student bundle file names any
    held-out trace."""
    drawn = _drawn_numbers(SECRET_A)
    public = [str(s) for s in get(BATCH).suite.PUBLIC_HELD_OUT]
    tracked = _tracked()
    assert not [(n, d) for n, text in tracked.items() for d in drawn if d in text]
    assert sorted(n for n, text in tracked.items() if any(p in text for p in public)) == [
        f"grader/assignments/{BATCH}/suite.py"]
    wheel = tmp_path / "lab.whl"
    wheel.write_bytes(b"")
    shipped = {name: data.decode("utf-8", "replace") for name, data in bundle.members(wheel)}
    assert any(name.startswith("notebooks/") for name in shipped)
    assert not [(n, d) for n, text in shipped.items() for d in (*drawn, *public) if d in text]


@pytest.mark.slow
def test_a_term_grades_correctly_and_its_pages_hold_nothing_drawn_from_its_secret(tmp_path, monkeypatch):
    """Graded under a test secret: the reference gets full marks (it meets the term's held-out traces), a key that
    misses them loses the held-out rule, and no output of the run (feedback pages, grades, reports) holds the secret
    or a number drawn from it."""
    monkeypatch.setenv(term.SECRET_ENV, SECRET_A)
    assignment = get(BATCH)
    reference = dict(assignment.reference)
    fcfs = {**reference, "todo5": '@todo("TODO 5")\ndef slo_key(request):\n    return (request.arrival_us,)\n'}
    subs = tmp_path / "subs"
    sample_submissions.write({"solved": sample_submissions.filled(BATCH, reference),
                              "fcfs": sample_submissions.filled(BATCH, fcfs)}, subs)
    out = tmp_path / "out"
    autograde.run(BATCH, subs, out, jobs=2)
    data = json.loads((out / "report.json").read_text())
    assert data["term"] == term.fingerprint(term.seed_for(SECRET_A.encode(), BATCH))
    students = {s["student_id"]: s for s in data["students"]}
    assert sum(v["score"] for v in students["solved"]["verdicts"]) == data["max_total"]
    todo5 = next(v for v in students["fcfs"]["verdicts"] if v["answer_id"] == "todo5")
    assert [r["passed"] for r in todo5["rules"]] == [False, False]
    drawn = _drawn_numbers(SECRET_A)
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" and p.parent.name == "feedback" for p in written)
    assert not [(str(p.relative_to(out)), d) for p in written for d in drawn
                if d in p.read_bytes().decode("utf-8", "replace")]
