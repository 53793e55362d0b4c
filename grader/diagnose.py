"""Which common mistake a failing TODO behaves like: the mutants of each assignment (its mutants.py) as signatures.

A TODO's signature is the set of rules its answer fails and, for each, what the answer did at its first
departure from the reference on the first failing scenario (RuleResult.seen, which grader/grade.py sets from
the observations it already collects). A mutant's signature is the same thing for the mutant, computed once
per assignment by grading it, and cached under build/cache/. A student's TODO whose signature is exactly a
mutant's is named after it; any other answer gets no diagnosis (precision before recall).

The commonest mistake of all is a TODO left as released: its answer cell is the release's stub (the same code,
comments aside). The verdict of each edition's stub is graded once, beside the mutants', and shipped in the same
file, so a blank TODO costs a class no run (as_released). The file is keyed on the data these depend on and on
CATALOGUE_VERSION, never on source text (_key); a code change that alters them bumps the version.

What each mistake is and a hint (the idea missed, never the code) are in
grader/assignments/<name>/mistakes.yml, keyed by mutant name:

    "forgets preemptible":
      en: {mistake: "...", hint: "..."}
      zh: {mistake: "...", hint: "..."}
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import threading
from pathlib import Path

import yaml

from . import caches
from .compare import STRICT, same
from .definitions import parse
from .observed import Instance, NoValue, is_numpy
from .paths import ASSIGNMENTS_DIR, BUILD_DIR
from .verdict import Outcome

LANGUAGES = ("en", "zh")
CACHE_DIR = BUILD_DIR / "cache" / "mistakes"
DIGITS = 9   # floats are compared at this many significant digits (grader/compare.py's tolerance is 1e-9)
_LOCK = threading.Lock()
_CATALOGUES: dict[str, dict[str, list]] = caches.table(
    "_CATALOGUES", "_key(grader): a digest of everything a signature depends on",
    "the key changes with any input of a signature (CATALOGUE_VERSION for the code); guarded by _LOCK")
_RELEASED: dict[str, dict[str, dict]] = caches.table(
    "_RELEASED", "_key(grader), as _CATALOGUES", "as _CATALOGUES: the verdicts of the released stubs under that key")


def _canonical(value):
    """The value as JSON data that keeps its types, with numbers written at DIGITS significant digits (so a last-bit
    difference does not count); an object is its type's name (its repr may hold an address)."""
    kind = type(value)
    # by the exact type: a subclass of int or str (an enum, say) is an object like any other
    encode = _PLAIN.get(kind) or _TAGGED.get(kind)
    if encode is not None:
        return encode(value)
    if is_numpy(value):
        return {"$numpy": [kind.__name__, _canonical(value.item())]}
    return repr(value)


def _number(value) -> str:
    """An int or a float as text at DIGITS significant digits, after a "#"."""
    return "#" + format(value, f".{DIGITS}g")


def _dict(value: dict) -> dict:
    """A dict as a JSON object when its keys can be one (str keys, none that looks like a tag), else as its pairs."""
    if all(type(k) is str and k[:1] != "$" for k in value):
        return {k: _canonical(v) for k, v in value.items()}
    return {"$dict": [[_canonical(k), _canonical(v)] for k, v in value.items()]}


def _collection(value: tuple | set | frozenset) -> dict:
    """A tuple, set or frozenset tagged with its type; a set's items in an order of their own (not the set's)."""
    kind = type(value)
    items = [_canonical(v) for v in value]
    return {"$" + kind.__name__: items if kind is tuple else sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}


# Values JSON has as they are (None, bool, str) and the builtin containers, by their exact type.
_PLAIN = {int: _number, float: _number, type(None): lambda value: value, bool: lambda value: value,
          str: lambda value: value, list: lambda value: [_canonical(v) for v in value], dict: _dict,
          tuple: _collection, set: _collection, frozenset: _collection}
# Values of the grader's own types, each as a tag of its own (a NoValue's is a tag no value has: a crash is never the
# string a function returned).
_TAGGED = {Instance: lambda value: {"$obj": [value.type_name, _canonical(value.base)]},
           NoValue: lambda value: {"$novalue": [value.how, str(value.detail)]}}   # its English: fingerprints as before


def fingerprint(scenario: int, expected, actual, allow: frozenset = STRICT) -> str:
    """What an answer did on the `scenario`-th scenario of a rule where it first departs from the reference."""
    at = None
    if isinstance(expected, list) and isinstance(actual, list):
        at = next((i for i, (e, a) in enumerate(zip(expected, actual)) if not same(e, a, allow)), None)
    what = actual[at] if at is not None else actual
    text = json.dumps(_canonical(what), sort_keys=True, default=repr)
    return f"{scenario}:{'' if at is None else at}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def signature(verdict) -> tuple | None:
    """(rule, seen) of each failing rule; None when the verdict says nothing diagnosable (a pass, a note, a rule not run).

    A verdict that hung on a later scenario keeps its signature: only each rule's first failing scenario counts."""
    failed = [r for r in verdict.rules if not r.passed]
    if not failed or verdict.status != Outcome.GRADED or not all(r.seen for r in failed):
        return None
    return tuple(sorted((r.name, r.seen) for r in failed))


def _name(assignment) -> str:
    return assignment if isinstance(assignment, str) else assignment.name


def path(assignment) -> Path:
    return ASSIGNMENTS_DIR / _name(assignment) / "mistakes.yml"


@caches.cached("an assignment's name", "mistakes.yml is data of the checkout: an edit is read by a new process (or after forget())")
def texts(assignment) -> dict[str, dict[str, dict[str, str]]]:
    """{mutant name: {language: {"mistake": ..., "hint": ...}}} ({} when the assignment has no file)."""
    file = path(assignment)
    return (yaml.safe_load(file.read_text(encoding="utf-8")) or {}) if file.exists() else {}


# The version of what the catalogue stores. Bump it when a change alters what a verdict or its signature holds
# for the same run: how a signature is made (fingerprint, _canonical, signature, DIGITS, how a rule's first failing
# scenario and its departure are found, grader/compare.py's same), what a judge decides or puts in its Message (not
# its words: they are not kept), how a stub's failing case is written (the values in its Message, its snippet:
# grader/snippets.py, the assignment's cases.py, shrink.py), or what a run of unchanged code observes (grader/runner,
# the drivers' encoding, lab/ code the reference does not exercise the same way); then run `python -m grader.build
# mistakes`. Everything else a verdict depends on is data in _key itself, and a comment or a change that alters none
# of this needs neither. The drift guard (drift(), tested in tests/grader/test_diagnose.py) fails on a forgotten bump.
CATALOGUE_VERSION = 4


@caches.cached("a Grader (by identity)", "a Grader is fixed once built; the digest is of its data")
def _key(grader) -> str:
    """A digest of the data a mutant's signature and a stub's verdict depend on, and CATALOGUE_VERSION for the code:
    the assignment and seed, the given cells, the driver and the visible checks' helpers, the reference, the
    reference's observations of every scenario (the child's lines, exactly), each task's ids and rules (names,
    allowances, whether judged, and every scenario), the mutants and the released stubs. No source text: an edit that
    changes no verdict (a comment, unrelated code) leaves it as it is. Points are not in it: a stored stub verdict
    takes its task's ids, points and quotes afresh (grade.Grader._stored), and a signature holds none of them.

    Once per Grader (it is fixed once built): it hashes every scenario, and each failing TODO of every student asks
    for it under the lock."""
    parts = [CATALOGUE_VERSION, grader.assignment.name, grader.seed, grader.setup, grader.checks, grader.driver,
             grader.reference,
             sorted((name, line.decode("utf-8", "surrogateescape")) for name, (line, _) in grader.known.items()),
             [(t.answer_id, t.task_id, t.test_id,
               [(r.name, sorted(r.allows), r.judge is not None, r.scenarios) for r in t.rules])
              for t in grader.tasks],
             [(m.answer_id, m.name, m.find, m.replace) for m in grader.assignment.mutants],
             sorted((gid, sorted(stubs)) for gid, stubs in released_stubs(grader.assignment).items())]
    # a scenario's label is a Message: as data
    text = json.dumps(parts, sort_keys=True, default=lambda value: {type(value).__name__: dataclasses.asdict(value)})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _compute(grader) -> tuple[dict[str, list], list[str]]:
    """({answer_id: [[mutant name, signature]]}, mutants that could not be graded): each mutant graded once, on its
    own TODO. A mutant that could not be graded (a busy machine, a master it no longer applies to) is left out."""
    tasks = {t.answer_id: t for t in grader.tasks}
    found: dict[str, list] = {}
    missed = []
    for mutant in grader.assignment.mutants:
        try:
            verdict = grader.grade_task(tasks[mutant.answer_id], mutant.apply(grader.reference[mutant.answer_id]))
        except (KeyError, ValueError) as exc:
            missed.append(f"{mutant.name}: {exc}")
            continue
        if not verdict.status.ran:
            missed.append(f"{mutant.name}: {verdict.note}")
            continue
        mine = signature(verdict)
        if mine is not None:
            found.setdefault(mutant.answer_id, []).append([mutant.name, [list(pair) for pair in mine]])
    return found, missed


def code_digest(source: str) -> str | None:
    """A digest of the code of an answer cell, its comments and layout aside (None if it is not Python, and then
    the answer is run as any other is)."""
    try:
        dump = ast.dump(parse(source))   # one thread at a time: grading threads call this (python/cpython#106905)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return None
    return hashlib.sha256(dump.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def released_stubs(assignment) -> dict[str, dict[str, str]]:
    """{answer_id: {code digest: the answer cell as released}}, for every language edition (Assignment.stubs); an
    answer with no stub that parses is left out."""
    stubs = {gid: {digest: source for source in sources if (digest := code_digest(source))}
             for gid, sources in assignment.stubs.items()}
    return {gid: found for gid, found in stubs.items() if found}


def stored_form(verdict) -> dict:
    """What the catalogue keeps of a stub's verdict: what the stub did, not what is read afresh (grade.Grader._stored
    takes the task's ids, points and quotes as they are now, and words each Message afresh: no English text is kept
    of a rule that has one)."""
    from dataclasses import asdict, is_dataclass

    rules = []
    for rule in verdict.rules:
        kept = {"name": rule.name, "passed": rule.passed, "seen": rule.seen, "snippet": rule.snippet}
        rules.append({**kept, "message": asdict(rule.message)} if rule.message is not None else {**kept, "detail": rule.detail})
    note = asdict(verdict.note) if is_dataclass(verdict.note) else verdict.note   # a Message as data, worded afresh
    return {"rules": rules, "note": note, "hung": verdict.hung, "status": verdict.status.value}


def _compute_released(grader) -> tuple[dict[str, dict], list[str]]:
    """({answer_id: {code digest: stored_form of its verdict}}, stubs that could not be graded): each stub graded on its TODO."""
    tasks = {t.answer_id: t for t in grader.tasks}
    found: dict[str, dict] = {}
    missed = []
    for gid, stubs in released_stubs(grader.assignment).items():
        for digest, source in stubs.items():
            verdict = grader.grade_task(tasks[gid], source)
            if verdict.hung or not verdict.status.ran:
                missed.append(f"{gid} as released: {verdict.note or 'ran past its time limit'}")
                continue
            found.setdefault(gid, {})[digest] = stored_form(verdict)
    return found, missed


def shipped(assignment) -> Path:
    """The catalogue `make notebooks` writes beside the assignment, for the default seed (generated: never edited)."""
    return ASSIGNMENTS_DIR / _name(assignment) / "mistakes.signatures.json"


def _shipped(grader, key: str, part: str) -> dict | None:
    try:
        data = json.loads(shipped(grader.assignment).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get(part) if isinstance(data, dict) and data.get("key") == key else None


def shipped_is_current(grader) -> bool:
    """The assignment's shipped catalogue was made under this grader's data and CATALOGUE_VERSION (else a class computes it)."""
    return _shipped(grader, _key(grader), "catalogue") is not None


def write_shipped(grader) -> Path:
    """Grade every mutant and every stub once and write the assignment's catalogue (make notebooks), so no class pays for it."""
    (found, missed), (stubs, unmade) = _compute(grader), _compute_released(grader)
    if missed or unmade:
        raise RuntimeError(f"{grader.assignment.name}: {len(missed + unmade)} mutant(s) or stub(s) could not be graded: "
                           f"{(missed + unmade)[0][:200]}")
    path = shipped(grader.assignment)
    data = {"key": _key(grader), "catalogue": found, "released": stubs}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _cut_down(rule: dict) -> bool:
    """A stored rule whose failing case was cut down (grade.Grader._shrink, within a time budget: it may be cut less)."""
    scenario = (rule.get("message") or {}).get("params", {}).get("scenario")
    return isinstance(scenario, dict) and scenario.get("key") == "cut_down"


def drift(grader) -> list[str]:
    """How the assignment's shipped catalogue differs from what grading its mutants and stubs gives now ([] if it does
    not): a change that alters a verdict or a signature without changing _key's data needs CATALOGUE_VERSION bumped.
    A failing case that was cut down is compared by its rule's verdict and signature only (cutting is timed)."""
    try:
        data = json.loads(shipped(grader.assignment).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"no shipped catalogue ({exc})"]
    if data.get("key") != _key(grader):
        return ["its key is not this grader's: the data it is keyed on changed since it was made (run python -m grader.build mistakes)"]
    (found, missed), (stubs, unmade) = _compute(grader), _compute_released(grader)
    problems = [f"could not be graded: {what}" for what in missed + unmade]
    problems += _catalogue_drift(found, data.get("catalogue", {}))
    for gid in sorted(set(stubs) | set(data.get("released", {}))):
        problems += _stub_drift(gid, stubs.get(gid, {}), data["released"].get(gid, {}))
    return problems


def _catalogue_drift(found: dict, shipped_: dict) -> list[str]:
    """The mutants whose signature now is not the shipped one."""
    problems = []
    for gid in sorted(set(found) | set(shipped_)):
        now, then = dict(map(tuple, found.get(gid, []))), dict(map(tuple, shipped_.get(gid, [])))
        problems += [f"{gid}: the signature of {name!r} is not the shipped one" for name in sorted(set(now) | set(then))
                     if now.get(name) != then.get(name)]
    return problems


def _stub_drift(gid: str, now: dict, then: dict) -> list[str]:
    """How the stored verdicts of one TODO's stubs ({digest: stored_form}) now differ from the shipped ones."""
    problems = []
    for digest in sorted(set(now) | set(then)):
        mine, theirs = now.get(digest), then.get(digest)
        if mine is None or theirs is None or len(mine["rules"]) != len(theirs["rules"]):
            problems.append(f"{gid} as released ({digest[:8]}): {'not shipped' if theirs is None else 'not graded now' if mine is None else 'other rules'}")
            continue
        for a, b in zip(mine["rules"], theirs["rules"]):
            if _cut_down(a) or _cut_down(b):
                a, b = ({k: rule[k] for k in ("name", "passed", "seen")} for rule in (a, b))
            if a != b:
                problems.append(f"{gid} as released ({digest[:8]}): rule {b['name']!r} is not the shipped one")
        if (mine["note"], mine["hung"], mine.get("status")) != (theirs["note"], theirs["hung"], theirs.get("status")):
            problems.append(f"{gid} as released ({digest[:8]}): its note is not the shipped one")
    return problems


def _load(grader, part: str, memory: dict, compute, what: str, then: str) -> dict:
    """One part of the catalogue under this grader's scenarios: from memory, from the assignment's shipped file
    (the default seed), from build/cache/, or graded now (another seed, or code changed since make notebooks)."""
    key = _key(grader)
    file = CACHE_DIR / f"{grader.assignment.name}-{key}{'' if part == 'catalogue' else '.' + part}.json"
    with _LOCK:  # the first student who needs it waits; the others then share it
        if key not in memory and (found := _shipped(grader, key, part)) is not None:
            memory[key] = found
        if key not in memory:
            try:
                memory[key] = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                memory[key], missed = compute(grader)
                if missed:  # kept for this process only: the next run tries them again
                    from .safe_io import say
                    say(f"  common mistakes: {len(missed)} {what} could not be graded, {then}: {missed[0][:200]}")
                    return memory[key]
                try:
                    file.parent.mkdir(parents=True, exist_ok=True)
                    tmp = file.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_text(json.dumps(memory[key]), encoding="utf-8")
                    tmp.replace(file)
                except OSError:  # a read-only checkout: keep it in memory only
                    pass
    return memory[key]


def catalogue(grader) -> dict[str, list]:
    """The mutants' signatures: {answer_id: [[mutant name, signature]]}."""
    return _load(grader, "catalogue", _CATALOGUES, _compute, "mutant(s)", "so they are not diagnosed")


def as_released(grader, answer_id: str, source: str) -> dict | None:
    """The verdict (as JSON) of an answer whose code is a release's stub for its TODO, comments aside; else None.

    The same code gets the same verdict: it was graded once, as any answer is, when the catalogue was made."""
    digest = code_digest(source)
    if digest not in _stubs_of(grader).get(answer_id, {}):
        return None
    stubs = _load(grader, "released", _RELEASED, _compute_released, "stub(s)", "so their TODOs are graded by running them")
    return stubs.get(answer_id, {}).get(digest)


@caches.cached("a Grader (by identity)", "the released notebooks a Grader's assignment read are fixed for its life")
def _stubs_of(grader) -> dict[str, dict[str, str]]:
    return released_stubs(grader.assignment)


def diagnose(grader, verdict) -> str | None:
    """The name of the first mutant whose signature the verdict has exactly, else None."""
    mine = signature(verdict)
    if mine is None:
        return None
    wanted = [list(pair) for pair in mine]
    return next((name for name, theirs in catalogue(grader).get(verdict.answer_id, []) if theirs == wanted), None)


def attach(grader, verdicts) -> None:
    """Set verdict.mistake (name, and what it is and a hint per language) on each verdict that behaves like a mutant."""
    for verdict in verdicts:
        try:
            name = diagnose(grader, verdict)
        except Exception as exc:  # noqa: BLE001 - a diagnosis is advice: its failure never costs a student the page
            from .safe_io import say
            say(f"  common mistakes: no diagnosis for {verdict.task_id} ({type(exc).__name__}: {str(exc)[:200]})")
            continue
        said = texts(grader.assignment.name).get(name) if name else None
        if said:
            verdict.mistake = {"name": name, **{lang: dict(said[lang]) for lang in LANGUAGES if lang in said}}


def advice(mistake: dict, language: str) -> str:
    """The feedback's lines for a diagnosed mistake, in `language` ('' for none)."""
    said = mistake.get(language) or mistake.get("en") if mistake else None
    if not said:
        return ""
    if language == "zh":
        return f"你的答案的表现与一个常见错误相同：{said['mistake']}\n提示：{said['hint']}"
    return f"Your answer behaves like a common mistake: {said['mistake']}\nHint: {said['hint']}"
