"""Misconception diagnosis (grader/diagnose.py): every mutant is named, correct answers and other bugs are not."""
import json
from functools import lru_cache

import nbformat
import pytest

from grader import diagnose, i18n
from grader.check_assignment import mistakes_file_problems
from grader.grade import Grader, RuleResult, TaskVerdict
from grader.assignment import MUTANTS, load, mutated_answers
from grader.contract import Mutant
from grader.observed import CRASH, TIMEOUT, NoValue
from grader.pipeline import grader_for
from grader.submission import answers_of
from grader.paths import assignment_names

NAMES = assignment_names()

# Catalogued bugs written another way: the same behaviour, so the same name.
REWRITTEN = [
    ("02_decode_scheduling", "ignores the key (FIFO)", Mutant("todo4", "", "sorted(candidates, key=self._schedule_key)",
                                                              "sorted(candidates, key=self.queue.index)")),
    ("03_batch_scheduling", "floor instead of ceiling division",
     Mutant("todo2", "", "-(-(seq.num_computed_tokens + num_new_tokens) // self.block_size)",
            "int((seq.num_computed_tokens + num_new_tokens) / self.block_size)")),
    ("03_batch_scheduling", "victim goes to the back of the queue",
     Mutant("todo3", "", "self._prepend_waiting(seq)", "self.waiting.insert(len(self.waiting), seq)")),
]


def graded(grader, answers) -> dict[str, TaskVerdict]:
    verdicts = grader.grade(answers)
    diagnose.attach(grader, verdicts)
    return {v.answer_id: v for v in verdicts}


def with_mutant(assignment, mutant):
    return mutated_answers(assignment, mutant)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The mutants' signatures computed afresh (no cache), and another Grader for the students, with nothing reused."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(diagnose, "CACHE_DIR", tmp_path_factory.mktemp("mistakes"))
        patch.setattr(diagnose, "_CATALOGUES", {})
        yield {name: Grader(name) for name in NAMES}


@pytest.mark.parametrize("assignment", NAMES)
def test_every_mutant_has_a_mistake_and_a_hint_in_both_languages(assignment):
    assert diagnose.path(assignment).exists()
    assert mistakes_file_problems(assignment) == []
    assert len({m.name for m in MUTANTS[assignment]}) == len(MUTANTS[assignment]), "mutant names are the keys"


def test_the_mistakes_check_catches_a_bad_file():
    name = "02_decode_scheduling"
    said = {k: {lang: dict(v) for lang, v in entry.items()} for k, entry in diagnose.texts(name).items()}
    said.pop("forgets preemptible")
    said["no such thing"] = said["drops the deadline"]
    said["drops the deadline"] = {"en": said["drops the deadline"]["en"]}
    said["admits at enqueue"]["en"]["hint"] = "write admitted=True, after preemptible=preemptible,"
    said["swaps the two lengths"]["zh"]["hint"] = "检查每个阶段的延迟"
    said["serves the largest key first"]["en"]["mistake"] = "it fails the seed test"
    found = "\n".join(mistakes_file_problems(name, said))
    for expected in ("forgets preemptible: no entry", "no such thing: no such mutant", "drops the deadline: no zh mistake",
                     "admits at enqueue: the en hint gives the code", "swaps the two lengths: zh hint",
                     "serves the largest key first: the en mistake uses the course's internal jargon"):
        assert expected in found, found


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_every_mutant_is_diagnosed_as_itself_or_an_equivalent(assignment, fresh):
    catalogue = diagnose.catalogue(grader_for(assignment))   # signatures from one grader, students graded by another
    signatures = {name: sig for mutants in catalogue.values() for name, sig in mutants}
    assert set(signatures) == {m.name for m in MUTANTS[assignment]}, "every mutant has a signature"
    for mutant in MUTANTS[assignment]:
        verdicts = graded(fresh[assignment], with_mutant(assignment, mutant))
        name = verdicts[mutant.answer_id].mistake.get("name")
        assert name == mutant.name or (name and signatures[name] == signatures[mutant.name]), (mutant.name, name)
        assert verdicts[mutant.answer_id].mistake["zh"]["hint"]
        assert not [v.answer_id for v in verdicts.values() if v.mistake and v.answer_id != mutant.answer_id]


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_correct_alternatives_and_blanks_get_no_diagnosis(assignment):
    grader = grader_for(assignment)
    corpus = load(assignment).corpus
    assert len(corpus) >= load(assignment).figures.corpus
    for path in corpus:
        verdicts = graded(grader, answers_of(nbformat.read(path, as_version=4), grader.answer_ids))
        assert all(v.score == v.points for v in verdicts.values()), path.name
        assert not [v.answer_id for v in verdicts.values() if v.mistake], path.name
    from grader.sample_submissions import release_answers
    blank = graded(grader, release_answers(assignment))
    assert all(v.score == 0 and not v.mistake for v in blank.values())


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_bugs_outside_the_catalogue_get_no_diagnosis(assignment):
    grader = grader_for(assignment)
    for bug in load(assignment).outside:   # its mutants.py's OUTSIDE
        verdict = graded(grader, with_mutant(assignment, bug))[bug.answer_id]
        assert verdict.score < verdict.points, f"{bug.name}: not a bug the suite catches"
        assert not verdict.mistake, f"{bug.name} was diagnosed as {verdict.mistake.get('name')!r}"


@pytest.mark.slow
@pytest.mark.parametrize("assignment, name, bug", REWRITTEN, ids=[r[1] for r in REWRITTEN])
def test_a_catalogued_bug_written_another_way_is_recognised(assignment, name, bug):
    verdict = graded(grader_for(assignment), with_mutant(assignment, bug))[bug.answer_id]
    assert verdict.score < verdict.points and verdict.mistake.get("name") == name


def verdict(rules, note="", mistake=None, status="graded"):
    return TaskVerdict("TODO 1", "todo1", "todo1_tests", 2.0, 1.0, rules, note, mistake=mistake or {}, status=status)


def test_a_signature_is_every_failing_rule_and_what_it_did():
    a, b = RuleResult("a", False, "x", seen="0:1:abc"), RuleResult("b", True)
    assert diagnose.signature(verdict([a, b])) == (("a", "0:1:abc"),)
    assert diagnose.signature(verdict([b])) is None, "a pass has nothing to diagnose"
    assert diagnose.signature(verdict([a], note="a note alone says nothing", status="raised")) is None
    assert diagnose.signature(verdict([a], note="your TODO 1 cell raised ValueError")) is not None, "read by Outcome, not text"
    assert diagnose.signature(verdict([a, RuleResult("c", False, "not run")])) is None, "a rule not run says nothing"
    assert diagnose.signature(verdict([a, RuleResult("c", False, "y", seen="0:0:def")])) != diagnose.signature(verdict([a]))


def test_fingerprints_allow_the_float_tolerance_and_nothing_more():
    expected = [{"value": 1.0}, {"value": 2.0}]
    base = diagnose.fingerprint(0, expected, [{"value": 1.0}, {"value": 2.5}])
    assert diagnose.fingerprint(0, expected, [{"value": 1.0}, {"value": 2.5 * (1 + 1e-13)}]) == base
    assert diagnose.fingerprint(0, expected, [{"value": 1.0}, {"value": 2.5001}]) != base
    assert diagnose.fingerprint(1, expected, [{"value": 1.0}, {"value": 2.5}]) != base, "another scenario"
    assert diagnose.fingerprint(0, expected, [{"value": 1.5}, {"value": 2.5}]) != base, "another step"
    assert diagnose.fingerprint(0, expected, NoValue(TIMEOUT)) != diagnose.fingerprint(0, expected, NoValue(CRASH, "ValueError"))
    assert diagnose.fingerprint(0, expected, "crash: ValueError") != diagnose.fingerprint(0, expected, NoValue(CRASH, "ValueError")), \
        "a returned str is not the crash it spells"


def test_the_feedback_names_the_mistake_in_the_submissions_language():
    said = diagnose.texts("02_decode_scheduling")["serves the largest key first"]
    v = verdict([RuleResult("a", False, "x", seen="0:1:abc")], mistake={"name": "serves the largest key first", **said})
    en, zh = i18n.summary(v, "en"), i18n.summary(v, "zh")
    assert "Your answer behaves like a common mistake: " + said["en"]["mistake"] in en and "Hint: " + said["en"]["hint"] in en
    assert said["zh"]["mistake"] in zh and "提示：" + said["zh"]["hint"] in zh and said["en"]["hint"] not in zh
    assert en.splitlines()[0].startswith("TODO 1: 1 / 2 points"), "the score stays the first line"
    assert "common mistake" not in i18n.summary(verdict([RuleResult("a", False, "x", seen="0:1:abc")]), "en")


@pytest.mark.slow
def test_a_mutant_that_cannot_be_graded_is_left_out_and_nothing_is_cached(tmp_path, monkeypatch, capsys):
    name = "02_decode_scheduling"
    stale = Mutant("todo1", "no longer in the master", "this line is not in the reference", "x")
    monkeypatch.setitem(load(name).__dict__, "mutants", [*load(name).mutants, stale])
    monkeypatch.setattr(diagnose, "_key", lru_cache(maxsize=None)(diagnose._key.__wrapped__))  # sees the stale mutant
    monkeypatch.setattr(diagnose, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(diagnose, "_CATALOGUES", {})
    catalogue = diagnose.catalogue(grader_for(name))
    names = {n for mutants in catalogue.values() for n, _ in mutants}
    assert stale.name not in names and names == {m.name for m in MUTANTS[name]}
    assert not list(tmp_path.iterdir()), "an incomplete catalogue is not cached"
    assert "1 mutant(s) could not be graded" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_the_shipped_catalogue_is_current_and_spares_a_class_the_mutants_runs(assignment, tmp_path, monkeypatch):
    """make notebooks writes <name>/mistakes.signatures.json; a change to what diagnose._key holds (the suite, the
    mutants, the reference, CATALOGUE_VERSION...) makes it stale."""
    grader = grader_for(assignment)
    data = json.loads(diagnose.shipped(assignment).read_text(encoding="utf-8"))
    assert data["key"] == diagnose._key(grader), "stale: run make notebooks (python -m grader.build mistakes)"
    assert diagnose.shipped_is_current(grader)
    monkeypatch.setattr(diagnose, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(diagnose, "_CATALOGUES", {})
    graded = []
    monkeypatch.setattr(diagnose, "_compute", lambda g: graded.append(g) or ({}, []))
    assert diagnose.catalogue(grader) == data["catalogue"] and graded == [], "the shipped file is used as it is"
    monkeypatch.setattr(diagnose, "_CATALOGUES", {})
    monkeypatch.setattr(diagnose, "_key", lambda g: "another seed or changed code")
    assert diagnose.catalogue(grader) == {} and graded == [grader], "a stale file is never trusted"
    assert not diagnose.shipped_is_current(grader)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_an_answer_left_as_released_gets_the_verdict_a_run_gives_and_a_blank_notebook_runs_nothing(assignment, monkeypatch):
    """The shipped verdict of each edition's stub is the one grading that stub gives now, and it is what a stub with
    comments of its own gets, with no child run; a stub with one line of code changed is run, as any answer."""
    from grader import grade as grade_module
    grader = grader_for(assignment)
    runs = []
    for name in ("run_child", "run_pair"):
        real = getattr(grade_module, name)
        monkeypatch.setattr(grade_module, name, lambda *a, _real=real, **k: runs.append(1) or _real(*a, **k))
    tasks = {t.answer_id: t for t in grader.tasks}
    for language in load(assignment).languages:
        stubs = answers_of(load(assignment).release(language), grader.answer_ids)
        signed = {gid: "# my notes\n" + source.replace("\n", "  # mine\n", 1) + "\n# the end\n" for gid, source in stubs.items()}
        before, runs[:] = grader.as_released, []
        verdicts = {v.answer_id: v for v in grader.grade(signed)}
        assert runs == [] and grader.as_released - before == len(stubs), "a blank notebook runs no child"
        for gid, source in stubs.items():   # the failing case shown is cut down within a time budget: not compared
            now = grader._grade_task(tasks[gid], source)
            assert verdicts[gid].score == now.score == 0 and verdicts[gid].note == now.note, (language, gid)
            assert [(r.name, r.passed, r.seen) for r in verdicts[gid].rules] == [(r.name, r.passed, r.seen) for r in now.rules]
    first = grader.answer_ids[0]
    changed = dict(signed)
    changed[first] = stubs[first].replace("raise NotImplementedError()", "raise NotImplementedError('not yet')", 1)
    assert changed[first] != stubs[first]
    runs[:] = []
    before = grader.as_released
    grader.grade(changed)
    assert runs and grader.as_released - before == len(stubs) - 1, "only the answers left as released are not run"


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_the_shipped_stub_verdicts_are_current_and_a_stale_file_is_not_trusted(assignment, tmp_path, monkeypatch):
    grader = grader_for(assignment)
    data = json.loads(diagnose.shipped(assignment).read_text(encoding="utf-8"))
    stubs = diagnose.released_stubs(load(assignment))
    assert {gid: set(found) for gid, found in data["released"].items()} == {gid: set(found) for gid, found in stubs.items()}
    monkeypatch.setattr(diagnose, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(diagnose, "_RELEASED", {})
    computed = []
    monkeypatch.setattr(diagnose, "_compute_released", lambda g: computed.append(g) or ({}, []))
    gid, (digest, source) = next((gid, next(iter(found.items()))) for gid, found in stubs.items())
    assert diagnose.as_released(grader, gid, source) == data["released"][gid][digest] and computed == []
    assert diagnose.as_released(grader, gid, source + "\nx = 1\n") is None and computed == [], "other code is not looked up"
    monkeypatch.setattr(diagnose, "_RELEASED", {})
    monkeypatch.setattr(diagnose, "_key", lambda g: "another seed or changed code")
    assert diagnose.as_released(grader, gid, source) is None and computed == [grader], "a stale file is never trusted"


@pytest.mark.slow
def test_a_catalogue_that_cannot_be_read_costs_a_blank_notebook_nothing_but_its_runs(monkeypatch):
    """The stub look-up is a short cut: if it fails, the answers are run, and the verdicts are the same."""
    from grader import grade as grade_module
    name = "02_decode_scheduling"
    grader = grader_for(name)
    stubs = answers_of(load(name).release("en"), grader.answer_ids)
    expected = [(v.score, [(r.name, r.passed) for r in v.rules]) for v in grader.grade(stubs)]

    def unreadable(*args):
        raise ValueError("a damaged catalogue")

    monkeypatch.setattr(grade_module, "as_released", unreadable)
    before = grader.as_released
    got = [(v.score, [(r.name, r.passed) for r in v.rules]) for v in grader.grade(stubs)]
    assert got == expected and grader.as_released == before


@pytest.mark.slow
def test_a_stored_stub_verdict_is_read_on_the_task_as_it_is_now():
    """Ids, points and the quotes of the TODO text come from the task now; stored rules that are no longer the task's
    are not used (the answer is then run)."""
    import dataclasses
    name = "02_decode_scheduling"
    grader = grader_for(name)
    task = grader.tasks[0]
    stub = answers_of(load(name).release("en"), grader.answer_ids)[task.answer_id]
    data = diagnose.as_released(grader, task.answer_id, stub)
    moved = dataclasses.replace(task, points=task.points + 1, test_id="renamed_tests")
    verdict = grader._stored(moved, data)
    assert (verdict.points, verdict.test_id, verdict.score) == (task.points + 1, "renamed_tests", 0)
    assert all(rule.quotes.get("en") for rule in verdict.rules if not rule.passed)
    verdict.rules[0].detail = "changed by one student's page"
    assert grader._stored(task, data).rules[0].detail != verdict.rules[0].detail, "each student gets objects of their own"
    renamed = dict(data, rules=[dict(data["rules"][0], name="a rule the task no longer has"), *data["rules"][1:]])
    assert grader._stored(task, renamed) is None


class Built:
    """What diagnose._key reads of a Grader, without its reference run (which starts a process): its observations made up."""

    def __init__(self, name, **changed):
        from grader.term import PUBLIC_SEED as DEFAULT_SEED
        assignment = load(name)
        self.assignment, self.seed = assignment, DEFAULT_SEED
        self.setup, self.checks, self.driver = assignment.setup, assignment.check_definitions, assignment.driver_source
        self.reference, self.tasks = assignment.reference, assignment.tasks(DEFAULT_SEED)
        self.known = {f"{t.answer_id}|0|{i}": (f'{{"obs": [{i}]}}'.encode(), [i]) for t in self.tasks for i in range(3)}
        self.__dict__.update(changed)


def key(grader) -> str:
    return diagnose._key.__wrapped__(grader)   # not the per-Grader cache


def test_the_catalogue_key_holds_no_source_text(monkeypatch):
    """A comment in grade.py (or any edit to the grader's code) leaves the shipped catalogue current: the key is the
    data a verdict depends on and CATALOGUE_VERSION, which a change of what a verdict holds bumps (see drift below)."""
    from pathlib import Path
    name = "02_decode_scheduling"
    before = key(Built(name))
    read = Path.read_text

    def commented(path, *args, **kwargs):
        text = read(path, *args, **kwargs)
        return text + "\n# a comment\n" if path.name in ("grade.py", "diagnose.py", "snippets.py", "suite.py", "cases.py") else text

    monkeypatch.setattr(Path, "read_text", commented)
    assert key(Built(name)) == before


def test_the_catalogue_key_changes_with_a_scenario_an_observation_a_mutant_a_stub_or_the_version(monkeypatch):
    import dataclasses
    name = "02_decode_scheduling"
    base = Built(name)
    before = key(base)
    task, rule = base.tasks[0], base.tasks[0].rules[0]
    scenario = dict(rule.scenarios[0], ops=rule.scenarios[0]["ops"][:-1])
    moved = [dataclasses.replace(task, rules=[dataclasses.replace(rule, scenarios=[scenario, *rule.scenarios[1:]]), *task.rules[1:]]),
             *base.tasks[1:]]
    assert key(Built(name, tasks=moved)) != before, "a scenario"
    renamed = dict(rule.scenarios[0], name="another name")   # a stub's stored message names its scenario
    assert key(Built(name, tasks=[dataclasses.replace(task, rules=[dataclasses.replace(rule, scenarios=[renamed, *rule.scenarios[1:]]),
                                                                   *task.rules[1:]]), *base.tasks[1:]])) != before
    first = next(iter(base.known))
    assert key(Built(name, known={**base.known, first: (b'{"obs": [7]}', [7])})) != before, "an expected observation"
    assert key(Built(name, driver=base.driver + "\nX = 1\n")) != before, "the driver"
    assert key(Built(name, seed=base.seed + 1)) != before
    assert key(Built(name, tasks=[dataclasses.replace(task, test_id="other_tests"), *base.tasks[1:]])) != before
    points = key(Built(name, tasks=[dataclasses.replace(task, points=task.points + 1), *base.tasks[1:]]))
    assert points == before, "points are read afresh (Grader._stored): a change of them keeps the catalogue"
    mutant = base.assignment.mutants[0]
    monkeypatch.setitem(base.assignment.__dict__, "mutants",
                        [Mutant(mutant.answer_id, mutant.name, mutant.find, mutant.replace + " "), *base.assignment.mutants[1:]])
    assert key(base) != before, "a mutant"
    monkeypatch.undo()
    assert key(base) == before
    stubs = diagnose.released_stubs(base.assignment)
    gid = next(iter(stubs))
    monkeypatch.setattr(diagnose, "released_stubs", lambda a: {**stubs, gid: {"another digest": "pass", **stubs[gid]}})
    assert key(base) != before, "a released stub"
    monkeypatch.undo()
    monkeypatch.setattr(diagnose, "CATALOGUE_VERSION", diagnose.CATALOGUE_VERSION + 1)
    assert key(base) != before, "the version"


DRIFT = "the shipped catalogue is not what grading gives now: bump CATALOGUE_VERSION and run python -m grader.build mistakes"


@pytest.mark.slow
@pytest.mark.parametrize("assignment", NAMES)
def test_the_shipped_catalogue_is_what_grading_gives_now(assignment):
    """The drift guard: the key holds data only, so a change of code that alters a signature or a stub's verdict
    (grader/diagnose.py's CATALOGUE_VERSION says which) is caught here, by grading every mutant and stub again."""
    found = diagnose.drift(grader_for(assignment))
    assert found == [], f"{DRIFT}: {found[:5]}"


@pytest.mark.slow
def test_the_drift_guard_catches_a_change_of_signature_logic_without_a_bump(monkeypatch):
    """A planted change of how a departure is fingerprinted (another op index), the version unchanged: the key is the
    same, so only the drift guard sees that every shipped signature is stale; a change of what a stub's page says too."""
    from grader import grade as grade_module
    name = "01_continuous_batching"
    grader = Grader(name)   # its own: verdicts graded here are not kept for the other tests
    real = diagnose.fingerprint
    monkeypatch.setattr(grade_module, "fingerprint", lambda scenario, *rest, **kw: real(scenario + 1, *rest, **kw))
    found = diagnose.drift(grader)
    assert diagnose.shipped_is_current(grader), "the key does not see it"
    assert any("the signature of" in f for f in found) and any("as released" in f for f in found), found
    monkeypatch.undo()
    grader._known.clear()
    monkeypatch.setattr(grade_module.snippets, "snippet", lambda *a, **k: "another way to show the case")
    found = diagnose.drift(grader)
    assert found and all("as released" in f for f in found), found
