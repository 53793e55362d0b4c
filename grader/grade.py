"""Per-TODO verdicts from observations, computed outside any kernel the student's code ran in.

For TODO k a fresh sandboxed child runs the given cells, the student's answer for k
and stand-ins for the other TODOs, then replays k's scenarios and reports what
happened. A stand-in forwards each call to a reference server (another sandbox,
which runs the reference answers of the other TODOs and no student code) over the
bridge of grader/runner/bridge.py, so the child never holds another TODO's reference.
This process compares the observations with the reference's.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import threading
import time
from dataclasses import asdict

from . import definitions, promises, shrink, snippets
from .messages import Joined, Message, Named, error_words, from_json, kind_name
from .assignment import Assignment, get
from .compare import STRICT, by_key, key, loosened, same, same_type
from .config import DEFAULTS, Config
from .diagnose import as_released, fingerprint
from .runner.cold import likely_level, sandbox_level
from .runner.limits import Limits
from .runner.protocol import BRIDGE_SOURCE, CHILD, ChildRun, expected_lines, run_child, run_pair
from .runner.warm import shared
from .observed import CRASH, INVALID, TIMEOUT, NoValue, key_kinds, kind
from .child_values import CELL_TIMEOUT, Budget, problem, short_text
from .contract import Task, label as scenario_label
from .term import PUBLIC_SEED
from .verdict import Outcome, RuleResult, TaskVerdict

LOADED = 0.25           # a child that timed out having waited this share of its time for a CPU was starved: re-run it


def labelled(scenario: str | Named | Message, what: Message | str) -> Message:
    """'<scenario>: <what went wrong>': the scenario's label worded in the page's language, and `what` (a judge's own
    words cut short are English text, shown as they are)."""
    return Message("scenario_detail", {"scenario": Named(scenario, "scenario") if isinstance(scenario, str) else scenario, "what": what})


def failed(name: str, detail: Message | str, snippet: str = "", quotes: dict | None = None, seen: str = "") -> RuleResult:
    """A failing rule's result: `detail` in English, and the Message it is (None for a text still worded in English only)."""
    return RuleResult(name, False, str(detail), snippet, quotes or {}, seen, detail if isinstance(detail, Message) else None)


def _short(value, limit: int = 160) -> str:
    """A value of the reference's (ours, not the child's) as the page shows it: as Python prints it (ascii())."""
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


NO_KEY = "no such key"   # the side of a difference that lacks a key the other has


def first_diff(expected, actual, shown: Budget | None = None, path: tuple = (), allow: frozenset = STRICT) -> Message:
    """Where two observations first differ, as 'path: expected X, got Y' (the child's side within `shown`'s budget).

    Both values are shown as Python prints them; where their types differ, each is named after it: 'expected (3, 6)
    (tuple), got [3, 6] (list)', and for dicts whose keys differ in type, 'expected {0: 1} (int keys), got {'0': 1}
    (str keys)'. `path`: the parts of the path so far (a str shown as it is, or a Message: its first word, such as
    _root("returned"), and a request's label); with none, the path is 'value'. `allow`: the looser types the rule allows (grader/compare.py)."""
    shown = shown or Budget()
    where = Joined(path or (Message("path_value"),))
    if not same_type(expected, actual, allow):
        return _types_differ(expected, actual, shown, where)
    mine, theirs = loosened(expected, allow), loosened(actual, allow)
    found = None
    if type(mine) is dict and type(theirs) is dict:
        found = _key_types_differ(expected, actual, mine, theirs, shown, where, allow)
        found = found or _dict_diff(mine, theirs, shown, path, allow)
    elif type(mine) in (list, tuple) and type(theirs) in (list, tuple) and len(mine) == len(theirs):
        found = _items_diff(mine, theirs, shown, path, allow)
    if found is not None:
        return found
    want = _short(expected)
    return Message("diff", {"where": where, "want": want, "got": shown.value(actual)})


def _types_differ(expected, actual, shown: Budget, where: Joined) -> Message:
    """Two values of different types, each named after it (the child's within `shown`'s budget)."""
    want, want_kind = _short(expected), kind_name(kind(expected))
    got, got_kind = shown.value(actual), kind_name(shown.kind(actual))
    return Message("diff_kinds", {"where": where, "want": want, "want_kind": want_kind, "got": got, "got_kind": got_kind})


def _key_types_differ(expected, actual, mine: dict, theirs: dict, shown: Budget, where: Joined,
                      allow: frozenset) -> Message | None:
    """Two dicts (`mine`, `theirs`: as loosened) whose keys differ in type, each named after their types (None if they do not)."""
    if mine and theirs and {key(k, allow)[0] for k in mine} != {key(k, allow)[0] for k in theirs}:
        want, want_kind = _short(expected), _kinds(key_kinds(mine))
        got, got_kind = shown.value(actual), _kinds(shown.key_kinds(theirs))
        return Message("diff_key_kinds", {"where": where, "want": want, "want_kind": want_kind, "got": got, "got_kind": got_kind})
    return None


def _dict_diff(mine: dict, theirs: dict, shown: Budget, path: tuple, allow: frozenset) -> Message | None:
    """The first key (ours first, then the child's) that one dict lacks or whose values differ (None if there is none)."""
    ours, child = by_key(mine, allow), by_key(theirs, allow)
    for k in list(ours) + [k for k in child if k not in ours]:
        if k not in child:
            return Message("diff_no_key_got", {"where": Joined(_step(path, ours[k][0])), "want": _short(ours[k][1])})
        if k not in ours:
            at = Joined(_step(path, child[k][0], shown))
            return Message("diff_no_key_wanted", {"where": at, "got": shown.value(child[k][1])})
        if not same(ours[k][1], child[k][1], allow):
            return first_diff(ours[k][1], child[k][1], shown, _step(path, ours[k][0]), allow)
    return None


def _items_diff(mine: list | tuple, theirs: list | tuple, shown: Budget, path: tuple, allow: frozenset) -> Message | None:
    """Where the first differing item of two sequences of one length differs (a request named by its id; None if none does)."""
    for index, (e, a) in enumerate(zip(mine, theirs)):
        if not same(e, a, allow):
            label = Message("request", {"id": e["request_id"]}) if isinstance(e, dict) and "request_id" in e else str(index)
            return first_diff(e, a, shown, (*path, "[", label, "]"), allow)
    return None


def _root(word: str) -> tuple:
    """A path that starts with one of the words the page names a value by (returned, observed, checks)."""
    return (Message(f"path_{word}"),)


def _kinds(names: str) -> Joined:
    """The types of a dict's keys ('int and str keys', as key_kinds writes them; no type's name holds a space) as parts."""
    listed = names[: -len(" keys")].split(" and ")
    parts = []
    for i, name in enumerate(listed):
        parts += [Message("kinds_and")] * bool(i) + [kind_name(name)]
    return Joined(tuple(parts))


def _step(path: tuple, k, shown: Budget | None = None) -> tuple:
    """`path` and a dict's key after it: '.name' for a str key that is a name (the driver's state has those), '[key]'
    for any other, as Python indexes it; a key only the child has is shown within `shown`'s budget."""
    if shown is not None:
        return (*path, f"[{shown.value(k)}]")
    if type(k) is str and k.isidentifier() and k.isascii():
        return (*path, f".{k}") if path else (k,)
    return (*path, f"[{_short(k)}]")


def departure(expected, actual, allow: frozenset = STRICT) -> int | None:
    """Index of the first op whose observation differs (None if the run did not finish or lengths differ)."""
    if not isinstance(actual, list):
        return None
    return next((i for i, (exp, act) in enumerate(zip(expected, actual)) if not same(exp, act, allow)), None)


def _same_result(expected: dict, actual, allow: frozenset = STRICT) -> bool:
    """True when an op returned (or raised) the same, so only the state after it differs."""
    return (isinstance(actual, dict) and same(expected.get("error"), actual.get("error"))
            and same(expected.get("value"), actual.get("value"), allow))


def _state_part(expected: dict, actual: dict, allow: frozenset = STRICT) -> str | None:
    """The first top-level key of the state where the student's run differs (our key: the reference's state names it)."""
    mine, theirs = expected.get("state"), actual.get("state")
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return next((key for key in mine if not same(mine[key], theirs.get(key, NO_KEY), allow)), None)
    return None


def _status(actual, shown: Budget) -> Message | str:
    """How a scenario that gave no list of observations ended: its NoValue in words, or any other value as the child's."""
    if type(actual) is not NoValue:
        return shown.value(actual)
    if actual.how == CRASH:
        return Message("crash", {"error": error_words(shown.name(actual.detail))})
    if actual.how == INVALID:   # the protocol's words (grader/runner), not the child's
        return Message("invalid_observation", {"problem": actual.detail})
    return Message("status_timeout" if actual.how == TIMEOUT else "status_skipped")


def explain(ops: list, expected, actual, cases, shown: Budget | None = None, allow: frozenset = STRICT) -> Message:
    """The first point where the student's run departs from the reference, in words.

    Everything of the child's (`actual`) is shown through one Budget, so the message holds FEEDBACK_BUDGET
    characters of it at most, however the value is shaped. `cases`: the assignment's ops as code (snippets.py).
    `allow`: the looser types the rule allows."""
    shown = shown or Budget()
    if not isinstance(actual, list):
        return Message("did_not_finish", {"status": _status(actual, shown)})
    index = departure(expected, actual, allow)
    if index is None:
        return Message("observation_count", {"count": len(expected), "got": shown.value(len(actual))})
    exp, act = expected[index], actual[index]
    where = {"number": index + 1, "op": snippets.describe(cases, ops[index])}
    if ops[index][0] == snippets.VISIBLE and isinstance(act, dict) and isinstance(act.get("value"), list):
        numbers = ops[index][2] if len(ops[index]) > 2 else None   # the checks this rule takes of the case
        return Message("step", {**where, "what": _visible(exp.get('value') or [], act['value'], shown, numbers)})
    if not isinstance(act, dict):
        return Message("step", {**where, "what": first_diff(exp, act, shown, _root("observed"), allow)})
    if not same(exp.get("error"), act.get("error")):
        want = (Message("want_raise", {"error": exp["error"]}) if exp.get("error")
                else Message("want_return", {"value": _short(exp.get("value"))}))
        if act.get("error"):
            name = shown.name(act["error"])
            got = Message("got_raised_an_error") if name == "an error" else Message("got_raised", {"error": name})
        else:
            got = Message("got_returned", {"value": shown.value(act.get("value"))})
        return Message("step", {**where, "what": Message("expected_to", {"want": want, "got": got})})
    if not same(exp.get("value"), act.get("value"), allow):
        return Message("step", {**where, "what": first_diff(exp.get('value'), act.get('value'), shown, _root("returned"), allow)})
    return Message("step", {**where, "what": Message("state", {"diff": first_diff(exp.get('state'), act.get('state'), shown, allow=allow)})})


def _visible(expected: list, actual: list, shown: Budget, numbers: list[int] | None = None) -> Message:
    """Where a visible check's case departs (grader/runner/driver_visible.py records each of its checks): the first check
    that does not hold, and what the answer gave there (`numbers`: the case's checks these records are)."""
    for position, (exp, act) in enumerate(zip(expected, actual)):
        number = numbers[position] if numbers and position < len(numbers) else position + 1
        if same(exp, act):
            continue
        if isinstance(act, dict) and set(act) == {"error"}:
            return Message("visible_raised", {"error": error_words(shown.name(act['error'])), "number": number})
        if isinstance(act, dict) and act.get("absent"):
            return Message("visible_ended", {"number": number})
        if isinstance(act, dict) and act.get("held") is False:
            return Message("visible_failed", {"number": number, "got": shown.value(act.get('seen'))})
        break
    return first_diff(expected, actual, shown, _root("checks"))


PRELOADED = {"matplotlib", "numpy", "pandas"}   # what grader/runner/boot.py imports in the warm parent


class Grader:
    """Grades one assignment's TODOs with the SETTINGS of a Config (grader/config.py); build once, then call grade()
    per submission. After a scenario times out, its TODO's next ones get retry_cpu each: a hang costs 1.4 s, not 3 x 1 s."""

    SETTINGS = ("scenario_cpu", "retry_cpu", "child_wall", "shrink_seconds")   # what it reads of its Config

    def __init__(self, assignment: Assignment | str, config: Config = DEFAULTS, *, seed: int = PUBLIC_SEED,
                 child_stall: float = CHILD.stall, warm: bool = True):
        """`seed`: the term's (grader/term.py: pipeline.grader_for derives it from config.term_secret); without one, the
        repository's own cases, as tests and the shipped catalogue use."""
        assignment = get(assignment)  # a name only from a command line or a test
        self.limits = dataclasses.replace(CHILD, wall=config.child_wall, stall=child_stall)   # each grading child's
        self.seed, self.scenario_cpu, self.retry_cpu = seed, config.scenario_cpu, config.retry_cpu
        self.shrink_seconds = config.shrink_seconds
        self.assignment = assignment
        # Children forked from one warm parent per process (grader/runner/warm.py); warm=False starts each afresh.
        # Started first, before the sandbox is probed: it imports for most of a second while this process probes and
        # reads the assignment. If the probe then finds that bwrap does not work here, it is started again.
        warm_parent = shared(likely_level()).start() if warm else None
        self.sandbox = sandbox_level()
        if warm_parent is not None and warm_parent.level != self.sandbox:
            warm_parent.close()
            warm_parent = shared(self.sandbox).start()
        self.tasks: list[Task] = assignment.tasks(self.seed)
        # Items a scenario's child may see only one at a time (grader/runner/feed.py), by the name the scenario travels under.
        self.feeds = {self._key(task, ri, si): sc["feed"] for task in self.tasks for ri, rule in enumerate(task.rules)
                      for si, sc in enumerate(rule.scenarios) if "feed" in sc}
        self.setup = assignment.setup
        self.checks = assignment.check_definitions   # run after the answer cells: the visible cases' helpers
        self.answer_ids = assignment.answer_ids
        self.reference = assignment.reference
        self.exports = {gid: definitions.exports(self.reference[gid]) for gid in self.answer_ids}
        self.stand_ins = {gid: definitions.stand_in(self.reference[gid]) for gid in self.answer_ids}
        self.pure = assignment.pure   # exports whose calls the bridge may answer in batches (suite.py's PURE)
        self.logs = assignment.logs   # fields the references only append to: the child keeps them (suite.py's LOGS)
        self.cases = assignment.cases
        self.driver = assignment.driver_source
        # The reference runs in a fresh child while the warm parent starts up beside it, unless the set-up imports
        # what the parent imports before it forks: a fresh child would then take as long, so it is forked instead.
        self.warm = warm_parent if definitions.words("\n".join(self.setup)) & PRELOADED else None
        self.known = {}   # no student's run is read yet: the reference's own is checked in full
        reference = self._reference_run()
        self.expected = observations(reference)
        self.known = expected_lines(reference)
        self.warm = warm_parent
        self._known: dict[tuple[str, str], TaskVerdict] = {}
        self._lock = threading.Lock()
        self.reused = 0   # verdicts taken from an identical answer graded earlier in this process
        self.as_released = 0   # TODO verdicts of answers left as released: the stub's, graded once (diagnose.as_released)

    @staticmethod
    def _key(task: Task, rule_index: int, scenario_index: int) -> str:
        """The name a scenario travels under between this process and a child."""
        return f"{task.answer_id}|{rule_index}|{scenario_index}"

    def _names(self, task: Task) -> list[str]:
        """The names `task`'s scenarios travel under, rule by rule."""
        return [self._key(task, ri, si) for ri, rule in enumerate(task.rules) for si in range(len(rule.scenarios))]

    def _named(self, task: Task) -> list[dict]:
        return [{"name": self._key(task, ri, si), "ops": sc["ops"], **{k: sc[k] for k in ("cpu_seconds",) if k in sc}}
                for ri, rule in enumerate(task.rules) for si, sc in enumerate(rule.scenarios)]

    def _run(self, cells: list[tuple[str, str]], scenarios: list[dict], timeout: float | None = None) -> ChildRun:
        payload = {"setup": self.setup, "cells": cells, "checks": self.checks, "driver": self.driver, "scenarios": scenarios,
                   "scenario_cpu": self.scenario_cpu, "retry_cpu": self.retry_cpu}
        return run_child(payload, self._limits(timeout), self.warm, known=self.known, feeds=self._feeds(scenarios))

    def _feeds(self, scenarios: list[dict]) -> dict[str, dict]:
        """The feeds of these scenarios (named as they travel): their items are never in the payload."""
        return {sc["name"]: self.feeds[sc["name"]] for sc in scenarios if sc["name"] in self.feeds}

    def _limits(self, timeout: float | None) -> Limits:
        return dataclasses.replace(self.limits, wall=timeout) if timeout else self.limits

    def _run_bridged(self, task: Task, answer_source: str, scenarios: list[dict] | None = None,
                     timeout: float | None = None) -> tuple[ChildRun, ChildRun]:
        """The student's child for `task` (its scenarios, or these): the set-up, the student's answer for `task` and
        stand-ins for the other TODOs, beside a reference server that holds the reference of those others and a
        stand-in for `task`'s answer: each side calls the other's exports across the bridge."""
        scenarios = self._named(task) if scenarios is None else scenarios
        mine = self.exports[task.answer_id]
        others = [e for gid in self.answer_ids if gid != task.answer_id for e in self.exports[gid]]
        limit = max([self.scenario_cpu, *(sc.get("cpu_seconds", 0) for sc in task.scenarios)])
        server = {"setup": self.setup, "checks": self.checks, "driver": "", "scenarios": [], "scenario_cpu": limit, "serve": True,
                  "cells": [(gid, self.stand_ins[gid] if gid == task.answer_id else self.reference[gid]) for gid in self.answer_ids],
                  "bridge": {"source": BRIDGE_SOURCE, "owned": others, "parity": 0, "pure": self.pure, "logs": self.logs}}
        child = {"setup": self.setup, "checks": self.checks, "driver": self.driver, "scenarios": scenarios,
                 "scenario_cpu": self.scenario_cpu, "retry_cpu": self.retry_cpu,
                 "cells": [(gid, answer_source if gid == task.answer_id else self.stand_ins[gid]) for gid in self.answer_ids],
                 "bridge": {"source": BRIDGE_SOURCE, "owned": mine, "parity": 1, "pure": self.pure, "logs": self.logs,
                            "holds_logs": True}}
        return run_pair(child, server, self._limits(timeout), self.warm, self.known, self._feeds(scenarios))

    def _reference_run(self) -> ChildRun:
        """The reference's run of every scenario (its observations are the expected ones)."""
        cells = [(gid, self.reference[gid]) for gid in self.answer_ids]
        run = self._run(cells, [sc for task in self.tasks for sc in self._named(task)])
        errors = run.records[0].get("errors") if run.records else None
        if run.status != "ok" or errors:
            raise RuntimeError(f"the reference does not run cleanly ({run.status} {run.detail} {errors}): fix the master")
        expected = {rec["name"]: rec["obs"] for rec in run.records if rec["kind"] == "scenario"}
        failing = self._failing_visible(expected)
        if failing:   # a case of a visible check that the reference fails: the check and the master disagree
            raise RuntimeError(f"the reference fails its own {failing[0]}: fix the master")
        invalid = _invalid(expected)
        if invalid:  # a student's equally oversized value would compare equal: the suite must fit the channel
            raise RuntimeError(f"the reference's observation of {invalid[0]} exceeds the result schema: {expected[invalid[0]].detail}")
        return run

    def _failing_visible(self, expected: dict[str, object]) -> list[str]:
        """The cases of visible checks (by their names) in which not every check held on the reference's run."""
        return [sc["name"] for task in self.tasks for ri, rule in enumerate(task.rules) for si, sc in enumerate(rule.scenarios)
                if visible(sc) and not _all_held(expected.get(self._key(task, ri, si)))]

    def grade_task(self, task: Task, answer_source: str) -> TaskVerdict:
        """The verdict on one answer; an answer already graded in this batch (a shared answer) is not run again.

        Scenarios are seeded, so the same source always gets the same verdict; runs that ended abnormally
        (a timeout, a crash) are not remembered, so they are always run afresh."""
        key = (task.answer_id, hashlib.sha256(answer_source.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            known = self._known.get(key)
            self.reused += known is not None
        if known is not None:
            return copy.deepcopy(known)
        verdict = self._grade_task(task, answer_source)
        if not verdict.hung and verdict.status.ran:
            with self._lock:
                self._known[key] = copy.deepcopy(verdict)
        return verdict

    def _quotes(self, task: Task, rule_name: str) -> dict[str, list[str]]:
        """The sentences of the TODO's text that state the rule, per language (grader/promises.py)."""
        return {lang: found for lang in promises.LANGUAGES if (found := promises.quotes(self.assignment, task.task_id, rule_name, lang))}

    def _case(self, label: Named | Message, ops: list, expected, actual, allow: frozenset = STRICT) -> tuple[Message, str]:
        """A failing case as feedback: where it departs from the reference (in words), and the code that shows it.
        `allow`: the looser types its rule allows (grader/compare.py)."""
        at = departure(expected, actual, allow)
        errors = [obs.get("error") if isinstance(obs, dict) else None for obs in expected] if isinstance(expected, list) else None
        state = (at is not None and _same_result(expected[at], actual[at], allow)
                 and (_state_part(expected[at], actual[at], allow) or True))
        code = snippets.snippet(self.cases, ops, at, state=state, errors=errors)
        return labelled(label, explain(ops, expected, actual, self.cases, allow=allow)), code

    def _grade_task(self, task: Task, answer_source: str) -> TaskVerdict:
        for _ in range(2):   # a failure of the grader's side is run again once, and never scored
            run, server = self._run_bridged(task, answer_source)
            fault = grading_fault(run, server)
            if not fault:
                break
        else:
            return TaskVerdict(task.task_id, task.answer_id, task.test_id, task.points, 0.0,
                               [failed(r.name, Message("grading_error")) for r in task.rules],
                               Message("grading_error_rerun", {"fault": fault}), status=Outcome.GRADING_ERROR)
        return self._verdict(task, answer_source, run)

    def _verdict(self, task: Task, answer_source: str, run: ChildRun) -> TaskVerdict:
        """The verdict on `task` from the observations of its scenarios in `run`, its own child."""
        names = set(self._names(task))
        observed = {name: obs for name, obs in observations(run).items() if name in names}
        cell_error = (run.records[0].get("errors", {}) if run.records else {}).get(task.answer_id)
        cases = {}   # {rule index: its failing case} of the rules that failed by comparison with the reference
        results = [self._rule_result(task, ri, run, observed, cases) for ri in range(len(task.rules))]
        passed = sum(r.passed for r in results)
        note, status = _note(task, cell_error, run)
        score = score_of(task.points, passed, len(results))
        hung = run.status == "timeout" or cell_error == CELL_TIMEOUT or any(map(ran_out, observed.values()))
        # Cases too long to read are cut down; the score is already fixed, and an answer that hung is not run again.
        if not hung and run.status == "ok":
            self._cut_down(task, answer_source, results, cases)
        return TaskVerdict(task.task_id, task.answer_id, task.test_id, task.points, score, results, note, hung, status=status)

    def _rule_result(self, task: Task, ri: int, run: ChildRun, observed: dict, cases: dict[int, tuple]) -> RuleResult:
        """Rule `ri`'s result: failed on its first scenario that fails (whose case, if it is one, goes in `cases`)."""
        rule = task.rules[ri]
        for si in range(len(rule.scenarios)):
            detail, code, seen = self._scenario_failure(task, ri, si, run, observed, cases)
            if detail:
                return failed(rule.name, detail, code, self._quotes(task, rule.name), seen)
        return RuleResult(rule.name, True)

    def _scenario_failure(self, task: Task, ri: int, si: int, run: ChildRun, observed: dict,
                          cases: dict[int, tuple]) -> tuple[Message | str, str, str]:
        """(detail, code, seen) of rule `ri`'s scenario `si` ('' each when it passes): not run, failed by its rule's
        judge, or departing from the reference (then its case goes in `cases`)."""
        rule = task.rules[ri]
        scenario = rule.scenarios[si]
        name = self._key(task, ri, si)
        label = scenario_label(scenario)
        if name not in observed:
            status = {"status": Named(run.status, "status"), "detail": run.detail}
            return labelled(label, Message("not_run", status)), "", ""
        if rule.judge is not None and not visible(scenario):
            # a fed scenario's value is what this process received on its feed, not what the child says of it
            verdict = judged(rule.judge, observed[name], {**scenario, "fed": run.fed.get(name)} if "feed" in scenario else scenario)
            if not verdict:
                return "", "", ""
            # a judge's own words cut short are English text: shown as they are, after its scenario's label
            return labelled(label, verdict), "", fingerprint(si, None, asdict(verdict) if isinstance(verdict, Message) else verdict)  # not its wording
        if same(self.expected[name], observed[name], rule.allows):
            return "", "", ""
        cases[ri] = (label, *up_to_departure(scenario["ops"], self.expected[name], observed[name], rule.allows), rule.allows)
        detail, code = self._case(*cases[ri])
        return detail, code, fingerprint(si, self.expected[name], observed[name], rule.allows)

    def _cut_down(self, task: Task, answer_source: str, results: list[RuleResult], cases: dict[int, tuple]) -> None:
        """Each failing case whose code is too long to read (and is a list of ops), in `results`, replaced by a
        smaller one that still fails, where _shrink finds one."""
        long = {ri: case for ri, case in cases.items() if not snippets.fits(results[ri].snippet) and isinstance(case[3], list)}
        if not long:
            return
        for ri, (label, *case) in self._shrink(task, answer_source, long).items():
            detail, results[ri].snippet = self._case(Message("cut_down", {"scenario": label}), *case)
            results[ri].detail, results[ri].message = str(detail), detail

    def _shrink(self, task: Task, answer_source: str, cases: dict[int, tuple]) -> dict[int, tuple]:
        """Smaller versions of failing cases ({rule index: (label, ops, expected, actual, allow)}) that still fail.

        At most SHRINK_ROUNDS rounds and shrink_seconds; each round runs a batch of candidates (shrink.py) once
        with the student's answer (bridged, as in grading) and once with the reference, side by side."""
        best, tried, smaller = dict(cases), set(), {}
        deadline = time.monotonic() + self.shrink_seconds
        for _ in range(shrink.SHRINK_ROUNDS):
            open_ = [ri for ri in best if not snippets.fits(self._case(*best[ri])[1])]
            left = deadline - time.monotonic()
            if not open_ or left < 1:
                break
            batch = self._shrink_batch(best, open_, tried)
            observed = self._observe_both(task, answer_source, [sc for _, sc in batch], left) if batch else None
            if observed is None:
                break
            self._keep_smaller(task, batch, *observed, cases, best, smaller)
        return smaller

    def _shrink_batch(self, best: dict[int, tuple], open_: list[int], tried: set) -> list[tuple[int, dict]]:
        """One round's candidates as (rule index, scenario): for each case still too long, its share of
        SHRINK_CANDIDATES not tried before (they are added to `tried`)."""
        share, batch = max(1, shrink.SHRINK_CANDIDATES // len(open_)), []
        for ri in open_:
            fresh = [ops for ops in shrink.candidates(self.cases.KIND, best[ri][1]) if (ri, shrink.key(ops)) not in tried]
            tried.update((ri, shrink.key(ops)) for ops in fresh[:share])
            batch += [(ri, {"name": f"shrink|{ri}|{n}", "ops": ops}) for n, ops in enumerate(fresh[:share])]
        return batch

    def _keep_smaller(self, task: Task, batch: list[tuple[int, dict]], expected: dict, actual: dict,
                      cases: dict[int, tuple], best: dict[int, tuple], smaller: dict[int, tuple]) -> None:
        """Each candidate of `batch` that still fails as its case did and whose code is shorter than the best so far
        becomes the best (in `best` and `smaller`)."""
        for ri, sc in batch:
            exp, act = expected.get(sc["name"]), actual.get(sc["name"])
            allow = task.rules[ri].allows
            if not shrink.disagrees(exp, act, cases[ri][2], allow):
                continue
            candidate = (best[ri][0], *up_to_departure(sc["ops"], exp, act, allow), allow)
            if shrink.size(self._case(*candidate)[1]) < shrink.size(self._case(*best[ri])[1]):
                best[ri] = smaller[ri] = candidate

    def _observe_both(self, task: Task, answer_source: str, scenarios: list[dict], timeout: float) -> tuple[dict, dict] | None:
        """The reference's and the student's observations of `scenarios` (None if either run did not end cleanly)."""
        reference: list[ChildRun] = []
        cells = [(gid, self.reference[gid]) for gid in self.answer_ids]
        # The reference child runs no student code: it may run beside the student's, as the reference server does.
        thread = threading.Thread(target=lambda: reference.append(self._run(cells, scenarios, timeout)))
        thread.start()
        try:
            run, server = self._run_bridged(task, answer_source, scenarios, timeout)
        finally:
            thread.join()
        if run.status != "ok" or server.status != "ok" or not reference or reference[0].status != "ok":
            return None
        return observations(reference[0]), observations(run)

    def _released(self, answers: dict[str, str]) -> dict[str, TaskVerdict]:
        """{answer_id: the stub's verdict} for each answer left as released (its code the release's stub)."""
        tasks = {t.answer_id: t for t in self.tasks}
        found = {}
        for gid, source in answers.items():
            try:
                data = as_released(self, gid, source) if gid in tasks else None
                verdict = self._stored(tasks[gid], data) if data is not None else None
            except Exception:  # noqa: BLE001 - a short cut only: the answer is then run, as any other
                verdict = None
            if verdict is not None:
                found[gid] = verdict
        with self._lock:
            self.as_released += len(found)
        return found

    def _stored(self, task: Task, data: dict) -> TaskVerdict | None:
        """A stored verdict's rule results on `task` as it is now: its ids, points and the quotes of its text are read
        afresh (None when the stored rules are no longer the task's: then the answer is run)."""
        if [rule["name"] for rule in data["rules"]] != [rule.name for rule in task.rules]:
            return None
        results = []
        for r in data["rules"]:   # diagnose.stored_form: a Message is worded afresh
            message = from_json(r.get("message"))
            results.append(RuleResult(r["name"], r["passed"], str(message) if message is not None else r.get("detail", ""), r["snippet"],
                                      {} if r["passed"] else self._quotes(task, r["name"]), r["seen"], message))
        score = score_of(task.points, sum(r.passed for r in results), len(results))
        return TaskVerdict(task.task_id, task.answer_id, task.test_id, task.points, score, results, data["note"], data["hung"],
                           status=data.get("status", Outcome.GRADED))

    def grade(self, answers: dict[str, str]) -> list[TaskVerdict]:
        """One verdict per TODO, each a function of the set-up, the release and that TODO's own answer cell only.

        An answer missing from `answers` scores 0 on its TODO only. An answer left as released (the stub, comments
        aside) gets the stub's verdict, graded once for the catalogue: it is not run again, and a notebook left blank
        runs no grading child. Every other answer is graded in its own child beside a reference server (grade_task):
        nothing of the student's other cells is there, so nothing they do (a patched class, module or builtin, a
        name defined for another cell) reaches this TODO's marks. One child at a time, never two at once: none holds
        another TODO's reference, but two that met could still trade what they learn from their servers. Other
        submissions still run in parallel (autograde's workers)."""
        released = self._released(answers)
        verdicts = []
        for task in self.tasks:
            source = answers.get(task.answer_id)
            if source is None:
                verdicts.append(TaskVerdict(task.task_id, task.answer_id, task.test_id, task.points, 0.0,
                                            [failed(r.name, Message("no_answer_cell"), quotes=self._quotes(task, r.name)) for r in task.rules],
                                            Message("answer_cell_missing"), status=Outcome.MISSING))
            else:
                verdicts.append(released.get(task.answer_id) or self.grade_task(task, source))
        return verdicts


def visible(scenario: dict) -> bool:
    """A case of a visible check cell (grader/contract.py): compared with the reference's, even in a rule with a judge."""
    return bool(scenario["ops"]) and scenario["ops"][0][0] == snippets.VISIBLE


def _all_held(observed) -> bool:
    """Every check of a visible case held (what the reference's run of the case must report)."""
    return isinstance(observed, list) and all(isinstance(obs, dict) and isinstance(obs.get("value"), list)
                                              and all(r == {"held": True} for r in obs["value"]) for obs in observed)


def observations(run: ChildRun) -> dict[str, object]:
    """Scenario name -> what the child observed, for the scenarios it reported."""
    return {rec["name"]: rec.get("obs") for rec in run.records if rec.get("kind") == "scenario"}


def ran_out(obs) -> bool:
    """An observation that is the child's word that the scenario ran out of time (or was left out after three that did)."""
    return type(obs) is NoValue and obs.ran_out


def score_of(points: float, passed: int, rules: int) -> float:
    """A TODO's score: its points times the share of its rules that hold, to the hundredth."""
    return round(points * passed / rules, 2)


def up_to_departure(ops: list, expected, actual, allow: frozenset = STRICT) -> tuple[list, object, object]:
    """A failing case cut after the op where the student's run departs (what follows cannot matter)."""
    at = departure(expected, actual, allow)
    return (ops, expected, actual) if at is None else (ops[: at + 1], expected[: at + 1], actual[: at + 1])


def _invalid(expected: dict[str, object]) -> list[str]:
    """The scenarios whose observation the protocol refused as invalid (too big for the result schema)."""
    return [name for name, obs in expected.items() if type(obs) is NoValue and obs.how == INVALID]


def grading_fault(run: ChildRun, server: ChildRun) -> Message | None:
    """Why a bridged run says nothing about the answer (None if it does): its reference server failed, or the
    machine was so loaded that the child ran out of wall time waiting for a CPU."""
    if server.status != "ok":
        return Message("fault_server", {"status": Named(server.status, "status"), "detail": server.detail})
    # Starved: one of its processes waited for a CPU a share of the time, while the run itself used little CPU (a run
    # whose own processes kept the CPUs busy starved itself: that is its answer's doing, and is scored).
    starved = run.waited > LOADED * run.elapsed and run.cpu < (1 - LOADED) * run.elapsed
    if run.status == "timeout" and run.why in ("wall", "idle") and starved:
        return Message("fault_busy", {"waited": f"{run.waited:.0f}", "elapsed": f"{run.elapsed:.0f}"})
    return None


def _note(task: Task, cell_error, run: ChildRun) -> tuple[Message | Joined | str, Outcome]:
    """A graded verdict's note (the answer cell raised; the grading child did not end cleanly) and its Outcome."""
    parts = []
    if cell_error:
        parts.append(Message("cell_raised", {"task": task.task_id, "error": error_words(short_text(cell_error))}))
    if run.status != "ok":
        parts.append(Message("child_ended", {"status": Named(run.status, "status"), "detail": run.detail}))
    status = (Outcome.GRADED if run.status == "ok" and not cell_error else Outcome.RAISED if run.status == "ok"
              else Outcome.TIMED_OUT if run.status == "timeout" else Outcome.CRASHED)
    if len(parts) < 2:
        return (parts[0] if parts else ""), status
    return Joined((parts[0], Message("semicolon"), parts[1])), status


def judged(judge, observed, scenario: dict) -> Message | str:
    """A property judge's verdict on a student's value (judge(observed, scenario)); it runs here, so a failure is contained.
    A judge says why the value fails as a Message ('' if it passes); one cut short (or still worded as English text) is English only."""
    if type(observed) is not NoValue and problem(observed):  # the protocol already replaced it, but a judge must never see unchecked data
        return Message("judge_problem", {"problem": problem(observed)})
    try:   # a copy: the value may be the reference's own observation (protocol.expected_lines), shared by every student
        said = judge(copy.deepcopy(observed), scenario)
        if isinstance(said, Message):
            return said if short_text(str(said), 300) == str(said) else short_text(str(said), 300)
        return short_text(said, 300)
    except Exception as exc:  # noqa: BLE001 - MemoryError, RecursionError: the rule fails, the batch goes on
        return Message("judge_error", {"error": type(exc).__name__})


def verdicts_to_json(verdicts: list[TaskVerdict]) -> list[dict]:
    return [asdict(v) for v in verdicts]
