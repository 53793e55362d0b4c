"""The term's secret, which the hidden material is drawn from: each assignment's hidden random cases and notebook 03's
held-out traces (docs/instructors.md, Running a term).

The repository is public, so nothing it holds can choose what a class is graded on: the instructor keeps a secret
outside it, and each assignment's `seed` is a keyed hash of (secret, assignment); a suite draws its random cases, and
what else it holds out, from keyed hashes of that number, one per purpose (`cases_seed`, `derive`): never from the
number itself, which a generator's draws could give away. Where the secret comes from is the setting `term_secret`
(grader/config.py):

- "" (the default): the environment variable LAB_TERM_SECRET, else the file course.secret beside course.toml
  (`python -m grader.term new` writes one; .gitignore keeps it out of git); with neither, grading stops and says so;
- a path: the file that holds it;
- "public": the repository's own cases and traces, which anyone can read: for tests, `make demo` and trying the
  kit, never a class. A secret (in the variable or a file) that is the word `public` means the same.

    python -m grader.term new           # write course.secret (refused if it exists)
    python -m grader.term show [PATH]   # each assignment's term as its reports name it: a fingerprint, or public
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sys
from pathlib import Path

from .paths import ROOT

SECRET_ENV = "LAB_TERM_SECRET"
SECRET_FILE = ROOT / "course.secret"
PUBLIC = "public"
PUBLIC_SEED = 20261129   # every assignment's seed in public mode: the cases this repository has always graded on
MIN_LENGTH = 16          # a secret shorter than this is refused (so the word `public` is never one)
PUBLIC_WARNING = ("term: public: the hidden cases and held-out traces are the repository's own, which anyone can read; "
                  "grade a class with a term secret (docs/instructors.md, Running a term)")


class TermSecretError(ValueError):
    """No secret where one is needed, or one that cannot be used."""


def _checked(value: str, where: str) -> bytes | None:
    value = value.strip()
    if value == PUBLIC:
        return None
    if len(value) < MIN_LENGTH:
        raise TermSecretError(f"the term secret in {where} is {len(value)} characters long; it needs {MIN_LENGTH} or "
                              f"more (python -m grader.term new writes one)")
    return value.encode("utf-8")


def secret(setting: str = "") -> bytes | None:
    """The term's secret as `setting` (Config.term_secret) finds it; None in public mode. Raises TermSecretError where
    there is none: grading a class on the repository's public cases is asked for by name, never fallen into."""
    if setting == PUBLIC:
        return None
    if setting:
        where = Path(setting).expanduser()
        try:
            return _checked(where.read_text(encoding="utf-8"), str(where))
        except OSError as exc:
            raise TermSecretError(f"term_secret names {where}, which cannot be read: {exc.strerror or exc}") from None
    if os.environ.get(SECRET_ENV):
        return _checked(os.environ[SECRET_ENV], f"the environment variable {SECRET_ENV}")
    if SECRET_FILE.is_file():
        return _checked(SECRET_FILE.read_text(encoding="utf-8"), str(SECRET_FILE))
    raise TermSecretError(f"no term secret: the hidden cases and held-out traces are drawn from it. Run "
                          f"`python -m grader.term new` (writes {SECRET_FILE.name}, kept out of git), or set {SECRET_ENV}, "
                          f"or name its file with --term-secret; --term-secret public grades on the repository's own "
                          f"cases, which anyone can read (tests and demos only). docs/instructors.md, Running a term")


def seed(setting: str, assignment: str) -> int:
    """The seed of `assignment`'s hidden material this term: PUBLIC_SEED in public mode, else HMAC-SHA256(secret,
    assignment) as a 256-bit number: the key of `derive` and `cases_seed`, never a random generator's seed (but in public mode)."""
    return seed_for(secret(setting), assignment)


def seed_for(key: bytes | None, assignment: str) -> int:
    """`seed` for a secret given as bytes (None: public mode)."""
    if key is None:
        return PUBLIC_SEED
    return int.from_bytes(hmac.new(key, f"{assignment}/seed".encode(), hashlib.sha256).digest(), "big")


def derive(seed: int, purpose: str, bits: int = 62) -> int:
    """A number for one purpose of a suite (e.g. 'held-out trace 0'), a keyed hash of the assignment's seed: another
    secret gives another, and one purpose's number tells nothing of another's."""
    key = seed.to_bytes(max(1, (seed.bit_length() + 7) // 8), "big")
    digest = hmac.new(key, purpose.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest, "big") >> (256 - bits)


def cases_seed(seed: int) -> int:
    """What a suite's random generator is seeded with, `seed` being its assignment's: `random.Random(cases_seed(seed))`,
    never `random.Random(seed)`. A grading child sees its TODO's random cases, and 624 of Mersenne Twister's outputs
    give away its state, then the number it was seeded with; the term's seed would give all that is drawn from it, 03's
    held-out traces among them. This is a keyed hash of the seed (`derive`, 256 bits), from which neither the seed nor
    any other purpose's number follows. In public mode the public seed itself: it hides nothing, and the repository's
    cases (the tests', the mistakes' signatures) stay as they have always been."""
    return seed if seed == PUBLIC_SEED else derive(seed, "random cases", 256)


def held_out_traces(assignment: str, setting: str = "") -> tuple[int, ...]:
    """The held-out traces of an assignment's suite this term (notebook 03's: its master's hidden test, for stock
    nbgrader runs, reads them here, so the master names none)."""
    import importlib

    # The suite module alone (as grader/assignment.py loads it), not grader.assignment, which reads PUBLIC_SEED here.
    suite = importlib.import_module(f"grader.assignments.{assignment}.suite")
    return suite.held_out_seeds(seed(setting, assignment))


def fingerprint(seed: int) -> str:
    """What the reports say of the term: 'public', or 12 hex digits that tell terms apart and reveal nothing of the
    secret (shards to be merged must have the same)."""
    return PUBLIC if seed == PUBLIC_SEED else derive(seed, "fingerprint", 48).to_bytes(6, "big").hex()


def new(path: Path = SECRET_FILE) -> Path:
    """Write a new secret to `path` (readable by its owner only); an existing file is never replaced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["new"] and len(argv) <= 2:
        path = Path(argv[1]) if len(argv) == 2 else SECRET_FILE
        try:
            new(path)
        except FileExistsError:
            print(f"error: {path} exists; a term keeps its secret (remove the file first for a new term)", file=sys.stderr)
            return 1
        print(f"wrote {path}: keep it out of git and of anything students get; grading reads it from here")
        return 0
    if argv[:1] == ["show"] and len(argv) <= 2:
        from .paths import assignment_names
        try:
            shown = {name: fingerprint(seed(argv[1] if len(argv) == 2 else "", name)) for name in assignment_names()}
        except TermSecretError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for name, term in shown.items():   # what each assignment's report.json says as "term"
            print(f"{name}: term {term}")
        if PUBLIC in shown.values():
            print(PUBLIC_WARNING)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
