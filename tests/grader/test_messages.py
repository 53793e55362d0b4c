"""What the grader says of a file itself is a Message: worded in the student's language on the plain page, in
English (with its key) in report.json and the logs, and counted by key in the class report."""
import copy
import dataclasses
import json
import os
import re
import string

import nbformat
import pytest

from english import english_sentences
from grader import class_report, editions, glossary, messages, paths, report, safe_io, sample_submissions, submission
from grader.assignment import load
from grader.feedback import visible_text
from grader.messages import Message

NAME = "02_decode_scheduling"
OTHER = "01_continuous_batching"
HANZI = re.compile(r"[\u4e00-\u9fff]")
# The English as the f-strings of grader/submission.py and grader/autograde.py wrote it (tests, README and
# instructors' scripts quote it): the catalogue must give it byte for byte.
ENGLISH = [
    (Message("file_too_large", {"size": 40, "limit": 32}), "file too large (40 MiB; the limit is 32 MiB)"),
    (Message("too_many_containers", {"limit": 500000}), "more than 500000 JSON objects and arrays: not a notebook this grader reads"),
    (Message("not_utf8", {"why": "invalid start byte", "at": 0}), "unreadable JSON: not UTF-8 text (invalid start byte at byte 0)"),
    (Message("bad_json", {"error": "Expecting value: line 1 column 2 (char 1)"}), "unreadable JSON: Expecting value: line 1 column 2 (char 1)"),
    (Message("not_nbformat_4", {"found": "'3'"}), "not a Jupyter notebook in format 4 (found nbformat='3')"),
    (Message("invalid_notebook", {"error": "x"}), "not a valid Jupyter notebook: x"),
    (Message("too_many_cells", {"count": 2001, "limit": 2000}), "2001 cells; the limit is 2000"),
    (Message("too_many_outputs", {"count": 20001, "limit": 20000}), "20001 outputs; the limit is 20000"),
    (Message("symlink", {"name": "'a.ipynb'"}), "'a.ipynb' is a symbolic link, not a regular file"),
    (Message("cannot_open", {"name": "'a.ipynb'", "why": "Permission denied"}), "cannot open 'a.ipynb' as a plain file (Permission denied)"),
    (Message("not_regular_file", {"name": "'a.ipynb'"}), "'a.ipynb' is not a regular file"),
    (Message("above_limit", {"name": "'a.ipynb'", "size": 40, "limit": 32}), "'a.ipynb' is 40 MiB, above the 32 MiB limit"),
    (Message("grew_past_limit", {"name": "'a.ipynb'", "limit": 32}), "'a.ipynb' grew past the 32 MiB limit"),
    (Message("no_graded_cells", {"assignment": NAME}), f"some other notebook: none of the graded cells of {NAME} are in it"),
    (Message("other_assignment", {"found": OTHER, "assignment": NAME}), f"some other notebook: this is {OTHER}, not {NAME}"),
    (Message("no_given_cells", {"assignment": NAME}), f"some other notebook: none of the given cells of {NAME} are in it"),
    (Message("metadata_changed", {"gid": "todo1"}), "the nbgrader metadata of cell todo1 was changed; the release's is used, so this costs nothing"),
    (Message("foreign_metadata", {"count": 2}), "2 cell(s) had nbgrader metadata the release does not have; it was removed, so this costs nothing"),
    (Message("answer_repeated", {"gid": "todo1", "count": 2}), "answer cell todo1 appears 2 times; the last copy is graded, as the kernel ran it last"),
    (Message("cell_repeated", {"gid": "todo1_tests", "count": 2}), "cell todo1_tests appears 2 times; one copy is kept"),
    (Message("cell_edited", {"gid": "todo1_tests"}), "cell todo1_tests was edited; the original is used for grading, so this costs nothing"),
    (Message("answer_deleted", {"gid": "todo4"}), "answer cell todo4 was deleted: TODO scores 0"),
    (Message("cell_deleted", {"gid": "todo4_tests"}), "cell todo4_tests was deleted: restored from the release; this costs nothing"),
    (Message("plain_page", {"error": "RuntimeError: x"}), "feedback fell back to a plain page: RuntimeError: x"),
    (Message("bad_file_name", {"hex": "2e"}), "file name is not a usable student id (letters, digits, _.@+-; not invalid-...); "
                                             "the name's bytes in hex: 2e"),
    # grader/deadline.py (tests/grader/test_deadline.py)
    (Message("late_per_day", {"days": 2, "due": "2026-12-01 23:59+08:00", "per_day": "10", "points": "2.4", "raw": "12"}),
     "2 day(s) late (due 2026-12-01 23:59+08:00), 10%/day: -2.4 of 12 points"),
    (Message("late_flat", {"days": 2, "due": "D", "flat": "20", "points": "2.4", "raw": "12"}), "2 day(s) late (due D), 20% once late: -2.4 of 12 points"),
    (Message("late_per_day_flat", {"days": 1, "due": "D", "flat": "20", "per_day": "10", "points": "3.6", "raw": "12"}),
     "1 day(s) late (due D), 20% once late and 10%/day: -3.6 of 12 points"),
    (Message("late_capped", {"days": 9, "due": "D", "percent": "50", "points": "6", "raw": "12"}),
     "9 day(s) late (due D): 50%, the most this assignment takes: -6 of 12 points"),
    (Message("late_no_penalty", {"days": 1, "due": "D"}), "1 day(s) late (due D); this assignment takes no late penalty"),
    (Message("late_extension", {"due": "D", "extended": "E"}), "submitted after the due date (D) but within the extension to E: no late penalty"),
    (Message("late_no_time", {"due": "D"}), "no submission time found while a due date is set (D): graded with no late penalty; check the time by hand"),
    (Message("late_bad_time", {"due": "D", "time": "'x'"}), "the submission time 'x' could not be read (due D): graded with no late penalty; check the time by hand"),
    # grader/grade.py: why a hidden rule failed (tests/grader/test_zh_failure_paths.py checks the whole of explain()'s)
    (Message("no_answer_cell"), "no answer cell"),
    (Message("grading_error"), "not graded: grading error"),
    (Message("scenario_detail", {"scenario": "trace 0", "what": "x"}), "trace 0: x"),
    (Message("cut_down", {"scenario": "summary #3"}), "summary #3, cut down to a smaller case"),
    # a scenario's label (grader/contract.py): the names the suites' f-strings wrote
    (Message("scenario_numbered", {"name": "tight KV", "number": 3}), "tight KV #3"),
    (Message("scenario_counted", {"name": "preemption and resume", "number": 1}), "preemption and resume (1)"),
    (Message("worked_example", {"name": "A-E"}), "worked example: A-E"),
    (Message("visible_check", {"name": "check_small()"}), "visible check: check_small()"),
    (Message("scenario_static", {"name": "A-E"}), "A-E, static"),
    (Message("scenario_continuous", {"name": "A-E"}), "A-E, continuous"),
    (Message("trace", {"number": 0}), "trace 0"),
    (Message("held_out_trace", {"letter": "B"}), "held-out trace B"),
    (Message("vllm_test", {"name": "test_schedule"}), "vLLM test_schedule"),
    (Message("not_run", {"status": "timeout", "detail": "stopped after 120 s"}), "not run (timeout: stopped after 120 s)"),
    (Message("did_not_finish", {"status": "timeout"}), "the scenario did not finish: timeout"),
    (Message("status_timeout"), "timeout"),
    (Message("status_skipped"), "skipped after 3 timeouts in a row"),
    (Message("crash", {"error": "MemoryError"}), "crash: MemoryError"),
    (Message("invalid_observation", {"problem": "an unknown tag"}), "'invalid observation: an unknown tag'"),
    (Message("an_error"), "an error"),
    (Message("observation_count", {"count": 3, "got": "2"}), "expected 3 observations, got 2"),
    (Message("step", {"number": 3, "op": "sim.step()", "what": "x"}), "step 3, sim.step(): x"),
    (Message("expected_to", {"want": "return 1", "got": "raised KeyError"}), "expected to return 1, but it raised KeyError"),
    (Message("want_raise", {"error": "ValueError"}), "raise ValueError"),
    (Message("want_return", {"value": "1"}), "return 1"),
    (Message("got_raised", {"error": "KeyError"}), "raised KeyError"),
    (Message("got_raised_an_error"), "raised an error"),
    (Message("got_returned", {"value": "2"}), "returned 2"),
    (Message("state", {"diff": "clock: expected 1, got 7"}), "state clock: expected 1, got 7"),
    (Message("diff", {"where": "returned", "want": "1", "got": "2"}), "returned: expected 1, got 2"),
    (Message("diff_kinds", {"where": "value", "want": "(3, 6)", "want_kind": "tuple", "got": "[3, 6]", "got_kind": "list"}),
     "value: expected (3, 6) (tuple), got [3, 6] (list)"),
    (Message("diff_key_kinds", {"where": "returned", "want": "{0: 1}", "want_kind": "int", "got": "{'0': 1}", "got_kind": "str"}),
     "returned: expected {0: 1} (int keys), got {'0': 1} (str keys)"),
    (Message("diff_no_key_got", {"where": "returned.b", "want": "2"}), "returned.b: expected 2, got no such key"),
    (Message("diff_no_key_wanted", {"where": "returned['b']", "got": "2"}), "returned['b']: expected no such key, got 2"),
    (Message("kinds_and"), " and "),
    (Message("an_object"), "an object"),
    (Message("path_value"), "value"),
    (Message("path_returned"), "returned"),
    (Message("path_observed"), "observed"),
    (Message("path_checks"), "checks"),
    (Message("request", {"id": 3}), "request 3"),
    (Message("visible_raised", {"error": "KeyError", "number": 2}), "it raised KeyError before its check 2"),
    (Message("visible_ended", {"number": 2}), "it ended before its check 2"),
    (Message("visible_failed", {"number": 2, "got": "[1]"}), "its check 2 does not hold, where the answer gave [1]"),
    (Message("judge_problem", {"problem": "an unknown tag"}), "the value could not be judged: an unknown tag"),
    (Message("judge_error", {"error": "ZeroDivisionError"}), "the value could not be judged (ZeroDivisionError)"),
    (Message("cell_timeout"), "the cell itself ran past the time limit"),
    # the judges of 01 and 03 (tests/grader/test_zh_failure_paths.py's judge_messages runs each)
    (Message("judge_no_return", {"value": "'timeout'"}), "the function did not return: 'timeout'"),
    (Message("judge_not_a_pair", {"value": "[1]", "kind": "list"}), "expected a (jobs, slots) pair, got [1] (list)"),
    (Message("judge_rejected", {"error": "'x'"}), "lab.schedule rejects the workload: 'x'"),
    (Message("judge_trivial"), "make it non-trivial: at least 2 slots, more jobs than slots, and not all the same length"),
    (Message("judge_not_same", {"static": 4, "continuous": 3}), "static takes 4 ticks and continuous 3: not the same"),
    (Message("judge_ratio", {"static": 4, "continuous": 3, "ratio": "1.33", "want": 2}), "static 4 / continuous 3 = 1.33, below 2"),
    (Message("workload_jobs", {"limit": 200}), "expected a list of at most 200 jobs"),
    (Message("workload_slots", {"limit": 64}), "slots must be an int from 1 to 64"),
    (Message("workload_job_size", {"tokens": 1000, "arrival": 1000}), "keep it small: at most 1000 tokens and arrival at most 1000 per job"),
    (Message("workload_total", {"limit": 20000}), "keep it small: at most 20000 tokens in all"),
    (Message("slo_key_slow", {"seconds": "30", "count": 2000}),
     "slo_key took more than 30 s of CPU for this trace's 2000 requests (keep a key fast)"),
    (Message("slo_key_not_run", {"value": "'timeout'"}), "the key was not run: 'timeout'"),
    (Message("slo_key_missing"), "there is no slo_key function in the TODO 5 cell"),
    (Message("slo_key_raised", {"error": "ValueError"}), "calling slo_key on this trace's requests raised ValueError "
                                                         "(lab.engine.serving_order(slo_key, infos) gives the same error where you can read it)"),
    (Message("slo_order_invalid"), "the order given is not one place per request"),
    (Message("slo_misses", {"misses": "a"}), "a"),
    (Message("semicolon"), "; "),
    (Message("cell_raised", {"task": "TODO 2", "error": "ValueError: x"}), "your TODO 2 cell raised ValueError: x"),
    (Message("skipped_cell", {"why": Message("why_ended")}), "[not run] not run: the run ended early"),
    (Message("why_uses_graded_hang", {"todo": "TODO 4"}), "TODO 4 ran past its time limit when graded, and this cell uses it"),
    (Message("why_uses_hang", {"todo": "TODO 1"}), "TODO 1 ran past its time limit, and this cell uses it"),
    (Message("why_budget", {"seconds": "90"}), "the notebook's 90 s budget was used up"),
    (Message("why_no_stop", {"index": 12}), "cell 12 did not stop when interrupted"),
    (Message("why_ended"), "the run ended early"),
    (Message("why_stopped"), "the run was stopped"),
    (Message("child_ended", {"status": "timeout", "detail": "stopped after 120 s"}), "grading child timeout: stopped after 120 s"),
    (Message("answer_cell_missing"), "the answer cell is missing"),
    (Message("grading_error_rerun", {"fault": Message("fault_server", {"status": "crashed", "detail": "ended early (exit code 70)"})}),
     "grading error, re-run (the reference server crashed: ended early (exit code 70))"),
    (Message("fault_server", {"status": "garbled", "detail": "x"}), "the reference server garbled: x"),
    (Message("fault_busy", {"waited": "100", "elapsed": "120"}), "the machine was busy: the run waited 100 s of 120 s for a CPU"),
    # how a run ended (grader/runner/protocol.py's ChildRun.detail), as its f-strings wrote it
    (Message("run_stopped_after", {"seconds": "120"}), "stopped after 120 s"),
    (Message("run_no_progress_cpu", {"seconds": "10"}), "stopped: no progress in 10 s of CPU time"),
    (Message("run_no_progress", {"seconds": "60"}), "stopped: no progress for 60 s"),
    (Message("run_stopped", {"why": "kill"}), "stopped (kill)"),
    (Message("run_stopped_watcher"), "stopped (watcher)"),
    (Message("run_ended_early", {"code": -9}), "ended early (exit code -9)"),
    (Message("run_wrote", {"what": Message("record_malformed")}), "the child wrote a malformed result record"),
    (Message("server_not_started"), "the reference server did not start"),
    (Message("server_not_needed"), "not needed: the child called no other TODO"),
    (Message("record_after_end"), "a record after the end"),
    (Message("record_too_long", {"size": 3000000}), "a record of 3000000 bytes"),
    (Message("record_unreadable"), "something that is not a result record"),
    (Message("record_malformed"), "a malformed result record"),
    (Message("record_not_end"), "an unexpected record where the end belongs"),
    (Message("record_cells_malformed"), "a malformed cells record"),
    (Message("record_not_scenario"), "an unexpected record where a scenario belongs"),
    (Message("record_end_malformed"), "a malformed end of a scenario"),
    # why an observation was refused (grader/child_values.py, grader/observed.py)
    (Message("problem_values", {"limit": 20000}), "more than 20000 values"),
    (Message("problem_depth", {"limit": 12}), "nested deeper than 12"),
    (Message("problem_int", {"bits": 65}), "an integer of 65 bits"),
    (Message("problem_string", {"length": 10000}), "a string of 10000 characters"),
    (Message("problem_type", {"type": "bytes"}), "a bytes"),
    (Message("problem_tag", {"tag": "$tuple"}), "a malformed $tuple tag"),
    (Message("problem_unknown_tag"), "an unknown tag"),
    (Message("problem_key_twice"), "a dict with a key twice"),
    (Message("problem_item_twice", {"type": "frozenset"}), "a frozenset with an item twice"),
    (Message("problem_numpy_kind"), "a numpy scalar of an unknown kind"),
    (Message("problem_type_name"), "an object's type name of the wrong length"),
    (Message("problem_base"), "an object's builtin value of the wrong kind"),
]


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def fixed_words(template: str) -> list[str]:
    """The template's own text between its fields (what must not show in the other language)."""
    return [part.strip(" ();:,.'") for part in re.split(r"{\w+}", template) if len(part.strip(" ();:,.'")) >= 4]


def test_every_key_has_english_and_chinese_with_the_same_fields():
    assert set(messages.TEXT) == {"en", "zh"} and set(messages.TEXT["en"]) == set(messages.TEXT["zh"])
    for key, english in messages.TEXT["en"].items():
        chinese = messages.TEXT["zh"][key]
        assert fields(english) == fields(chinese), key
        assert (HANZI.search(chinese) or key in messages.PUNCTUATION) and english_sentences(chinese) == [], (key, chinese)
    assert messages.LAYOUT < set(messages.TEXT["en"])


def test_the_english_is_worded_as_before():
    assert {m.key for m, _ in ENGLISH} == set(messages.TEXT["en"])
    for message, english in ENGLISH:
        assert message.text("en") == str(message) == english


def test_the_chinese_uses_the_glossary_terms():
    """grader/glossary.py reads this catalogue: a planted variant in it is caught."""
    path = glossary.ROOT / "grader" / "messages.py"
    assert path in glossary.PY_CATALOGUES
    source = path.read_text(encoding="utf-8")
    assert [v for *_, text, key in glossary.python_strings(source) for v in glossary.violations(text, key)] == []
    planted = source.replace("评分程序", "评分器", 1)
    assert [v for *_, text, key in glossary.python_strings(planted) for v in glossary.violations(text, key)]


def zh_page(outcome: report.Outcome) -> str:
    return visible_text(report.plain_page(NAME, [], outcome))


def assert_worded_in(page: str, note: Message, language: str) -> None:
    """`note` is on the page in `language`, and no fixed text of the other language's template is."""
    other = "en" if language == "zh" else "zh"
    assert note.text(language) in page, (note.text(language), page)
    assert [w for w in fixed_words(messages.TEXT[other][note.key]) if w in page] == [], page


def refusal(make) -> Message:
    with pytest.raises(submission.NotASubmission) as caught:
        make()
    assert str(caught.value) == caught.value.message.text("en")  # logs and `match=` read the English
    return caught.value.message


def _cells(count: int, outputs: int = 0) -> bytes:
    cell = {"cell_type": "code", "metadata": {}, "source": "", "execution_count": None,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ""}] * outputs}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell] * count}).encode()


def _not_given() -> nbformat.NotebookNode:
    """The zh edition with every cell rewritten: its grade_ids are there, none of its given cells."""
    nb = sample_submissions.release(NAME, "zh")
    for i, cell in enumerate(nb.cells):
        cell.source = f"# {i}"
    return nb


PARSED = {  # what submission.parse refuses, by the key it says it with
    "file_too_large": lambda: b" " * (safe_io.MAX_SUBMISSION + 1),
    "too_many_containers": lambda: b"[" * (submission.MAX_CONTAINERS + 1),
    "not_utf8": lambda: b"\xff\xfe{}",
    "bad_json": lambda: b'{"cells": [',
    "not_nbformat_4": lambda: b'{"nbformat": 3, "worksheets": []}',
    "invalid_notebook": lambda: b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]}',
    "too_many_cells": lambda: _cells(submission.MAX_CELLS + 1),
    "too_many_outputs": lambda: _cells(2, submission.MAX_OUTPUTS // 2 + 1),
}
IDENTIFIED = {  # what submission.identify refuses
    "no_graded_cells": lambda: nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]),
    "other_assignment": lambda: sample_submissions.release(OTHER, "zh"),
    "no_given_cells": _not_given,
}


@pytest.mark.parametrize("key", PARSED)
def test_a_file_that_cannot_be_read_is_refused_in_chinese_on_a_zh_page(key):
    data = PARSED[key]()
    note = refusal(lambda: submission.parse(data))
    assert note.key == key
    page = zh_page(report.Outcome("alice", "bad", {}, note.inert(report.NOTE_CHARS), language="zh"))
    assert_worded_in(page, note.inert(report.NOTE_CHARS), "zh")


@pytest.mark.parametrize("key", IDENTIFIED)
def test_some_other_notebook_is_refused_in_chinese_on_a_zh_page(key):
    nb = IDENTIFIED[key]()
    note = refusal(lambda: submission.identify(nb, load(NAME), [load(OTHER)]))
    assert note.key == key
    page = zh_page(report.Outcome("alice", "bad", {}, note, language="zh"))
    assert_worded_in(page, note, "zh")
    assert english_sentences(page) == [], page


@pytest.mark.slow
def test_the_language_of_a_refusal_is_that_of_the_notebook_handed_in(tmp_path):
    """Through autograde (pipeline.identify chooses): another assignment's zh edition is refused in Chinese only;
    a notebook that shares no cell with any edition and has no edition mark, in each language (review B1)."""
    from grader import autograde, pipeline

    other_zh = nbformat.read(paths.NOTEBOOKS_DIR / "zh" / f"{OTHER}.ipynb", as_version=4)
    work = pipeline.Work(nb=copy.deepcopy(other_zh))
    with pytest.raises(submission.NotASubmission):
        pipeline.identify(pipeline.prepare(NAME), work, pipeline.DEFAULTS)
    assert work.language == "zh"
    unmarked = _not_given()
    del unmarked.metadata["language_edition"]
    sample_submissions.write({"alice": other_zh, "bob": unmarked, "cat": sample_submissions.release(OTHER), "dan": _not_given()},
                             tmp_path / "in")
    autograde.run(NAME, tmp_path / "in", tmp_path / "out", cell_timeout=10)
    entries = {e["student_id"]: e for e in json.loads((tmp_path / "out" / "report.json").read_text())["students"]}
    assert {sid: (e["reason_key"], e["language"]) for sid, e in entries.items()} == {
        "alice": ("other_assignment", "zh"), "bob": ("no_given_cells", ""), "cat": ("other_assignment", "en"),
        "dan": ("no_given_cells", "zh")}  # no cell shared, but the build's mark says zh
    alice = visible_text((tmp_path / "out" / "feedback" / "alice.html").read_text(encoding="utf-8"))
    note = Message("other_assignment", {"found": OTHER, "assignment": NAME})
    assert_worded_in(alice, note, "zh")
    assert english_sentences(alice) == [], alice
    bob = visible_text((tmp_path / "out" / "feedback" / "bob.html").read_text(encoding="utf-8"))
    assert all(Message("no_given_cells", {"assignment": NAME}).text(language) in bob for language in ("en", "zh"))


def test_the_build_mark_words_a_refusal_before_shared_cells():
    """A zh edition of another assignment whose prose no longer matches any release (fetched before a rewording)
    is still refused in Chinese: the build's language_edition mark comes first, as for a graded notebook."""
    nb = copy.deepcopy(nbformat.read(paths.NOTEBOOKS_DIR / "zh" / f"{OTHER}.ipynb", as_version=4))
    assert nb.metadata["language_edition"] == "zh"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = "reworded " + cell.source
    english = sample_submissions.release(OTHER)
    nb.cells += [c for c in english.cells if c.cell_type == "markdown"]  # now it shares more with the English
    assert submission.refusal_language(nb, [load(NAME), load(OTHER)]) == "zh"
    del nb.metadata["language_edition"]  # without the mark, the shared cells decide: the English edition
    assert submission.refusal_language(nb, [load(NAME), load(OTHER)]) == "en"


def _link(tmp_path):
    real = sample_submissions.write({"real": sample_submissions.release(NAME, "zh")}, tmp_path)[0]
    (tmp_path / "link.ipynb").symlink_to(real)
    return tmp_path / "link.ipynb"


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "fifo.ipynb")
    return tmp_path / "fifo.ipynb"


def _big(tmp_path):
    with open(tmp_path / "big.ipynb", "wb") as handle:  # sparse: refused by its size, never read
        handle.truncate(safe_io.MAX_SUBMISSION + (8 << 20))
    return tmp_path / "big.ipynb"


NEVER_READ = {"symlink": (_link, "'link.ipynb' is a symbolic link, not a regular file"),
              "not_regular_file": (_fifo, "'fifo.ipynb' is not a regular file"),
              "above_limit": (_big, "'big.ipynb' is 40 MiB, above the 32 MiB limit")}


@pytest.mark.parametrize("key", NEVER_READ)
def test_a_file_safe_io_refuses_is_refused_in_chinese(tmp_path, key):
    """safe_io.Refused's reasons are catalogue keys: the zh page has no English sentence (review B2)."""
    make, english = NEVER_READ[key]
    note = refusal(lambda: submission.read(make(tmp_path)))
    assert note.key == key and str(note) == english  # the English as before
    page = zh_page(report.Outcome("alice", "bad", {}, note.inert(report.NOTE_CHARS), language="zh"))
    assert_worded_in(page, note.inert(report.NOTE_CHARS), "zh")
    assert english_sentences(page) == [], page


def test_a_file_never_read_says_why_in_each_language():
    """A file name or a file that is not a notebook has no edition: its page says why in English and in Chinese."""
    for note in (Message("bad_file_name", {"hex": "2e"}), Message("file_too_large", {"size": 40, "limit": 32})):
        page = zh_page(report.Outcome("invalid-0123", "bad", {}, note, language=""))
        assert note.text("en") in page and note.text("zh") in page


def layout_accidents() -> nbformat.NotebookNode:
    """A zh submission with one of each layout accident repair() puts right."""
    nb = sample_submissions.filled(NAME, editions.reference_answers(NAME), "zh")
    at = lambda gid: next(i for i, c in enumerate(nb.cells) if editions.grade_id(c) == gid)  # noqa: E731
    nb.cells.insert(at("todo1") + 1, copy.deepcopy(nb.cells[at("todo1")]))         # answer_repeated
    nb.cells.insert(at("todo2_tests") + 1, copy.deepcopy(nb.cells[at("todo2_tests")]))  # cell_repeated
    nb.cells[at("todo3_tests")].source += "\nprint('mine')"                        # cell_edited
    nb.cells[at("todo1_tests")].metadata["nbgrader"]["points"] = 99                 # metadata_changed
    scratch = nbformat.v4.new_code_cell("x = 1")
    scratch.metadata["nbgrader"] = {"grade": True, "grade_id": "mine", "points": 5}
    nb.cells.append(scratch)                                                         # foreign_metadata
    nb.cells.pop(at("todo4_tests"))                                                  # cell_deleted
    nb.cells.pop(at("todo4"))                                                        # answer_deleted
    return nb


def test_every_layout_repair_is_told_in_chinese_on_a_zh_page():
    nb = layout_accidents()
    assert submission.language_of(nb, load(NAME)) == "zh"
    sub = submission.prepare(nb, sample_submissions.release(NAME, "zh"), editions.answer_ids(editions.nbgrader_source(NAME)))
    assert {w.key for w in sub.warnings} == messages.LAYOUT
    zh = zh_page(report.Outcome("alice", "graded", {}, warnings=sub.warnings, language="zh"))
    en = zh_page(report.Outcome("alice", "graded", {}, warnings=sub.warnings, language="en"))
    for note in sub.warnings:
        assert_worded_in(zh, note, "zh")
        assert_worded_in(en, note, "en")
    assert english_sentences(zh) == [], zh
    assert "TODO 单元格 todo4 被删除了：这个 TODO 得 0 分" in zh and "TODO 单元格 todo1 出现了 2 次" in zh


def test_report_json_keeps_the_english_and_adds_the_key():
    notes = [Message("cell_edited", {"gid": "todo1_tests"}), "cell 3 ran past its limit"]
    entry = report.student_json(report.Outcome("a", "graded", {}, warnings=notes, language="zh"))
    assert entry["warnings"] == [str(notes[0]), notes[1]] and entry["warning_keys"] == ["cell_edited", ""]
    bad = report.student_json(report.Outcome("b", "bad", {}, Message("bad_json", {"error": "<x>"})))
    assert (bad["reason"], bad["reason_key"]) == ("unreadable JSON: &lt;x&gt;", "bad_json")  # inert, as before


# The class report's old test: substrings of the English (grader/class_report.py before the keys).
OLD_LAYOUT = ("nbgrader metadata", "appears ", " was edited", " was deleted")


def test_the_class_report_counts_a_reworded_layout_warning_the_same(monkeypatch):
    nb = layout_accidents()
    sub = submission.prepare(nb, sample_submissions.release(NAME, "zh"), editions.answer_ids(editions.nbgrader_source(NAME)))
    notes = [*sub.warnings, "todo2_tests: the in-notebook checks passed but the hidden rules gave 0/2"]

    def counted():
        student = report.student_json(report.Outcome("a", "graded", {}, warnings=notes, language="zh"))
        ops = class_report.operations([student])
        old = sum(any(mark in w for mark in OLD_LAYOUT) for w in student["warnings"])
        return len(ops["layout"]), len(ops["answer_deleted"]), len(ops["other_notes"]), old

    assert counted() == (6, 1, 1, 7)
    for key in messages.LAYOUT:  # an editor rewords every layout warning
        reworded = (messages.TEXT["en"][key].replace("nbgrader metadata", "grading metadata").replace("appears", "occurs")
                    .replace("was edited", "has been changed").replace("was deleted", "has been removed"))
        monkeypatch.setitem(messages.TEXT["en"], key, reworded)
    assert counted() == (6, 1, 1, 0)  # by key: the same; by the old substrings: none left


def test_a_refusal_survives_pickle_and_copy():
    """A worker process returns its NotASubmission pickled (review B5); safe_io.Refused likewise."""
    import pickle

    for exc in (submission.NotASubmission("bad_json", error="x"), safe_io.Refused("symlink", name="'a.ipynb'")):
        for again in (pickle.loads(pickle.dumps(exc)), copy.copy(exc), copy.deepcopy(exc)):
            assert type(again) is type(exc) and again.message == exc.message and str(again) == str(exc)


def test_the_plain_page_note_is_worded_in_one_place():
    """autograde, pipeline and nbgrader's log all take messages.plain_page (review D2)."""
    assert str(messages.plain_page(RuntimeError("x"))) == "feedback fell back to a plain page: RuntimeError: x"
    assert messages.plain_page("page too large").params == {"error": "page too large"}
    wording = messages.TEXT["en"]["plain_page"].split("{")[0]
    holders = [p.name for p in (paths.ROOT / "grader").glob("*.py") if wording in p.read_text(encoding="utf-8")]
    assert holders == ["messages.py"]


def test_the_instructors_guide_names_the_report_json_fields():
    """docs/instructors.md, where report.json is described, names the keys' fields and the unknown language (review D8)."""
    guide = " ".join((paths.ROOT / "docs" / "instructors.md").read_text(encoding="utf-8").split())
    entry = report.student_json(report.Outcome("a", "bad", {}, Message("bad_file_name", {"hex": "2e"}), language=""))
    for name in ("reason_key", "warning_keys", "language"):
        assert name in entry and f"`{name}`" in guide, name
    assert "`language` in `report.json`, which is `\"\"` when no edition is known" in guide


# Workloads lab.schedule refuses (01's judge shows why): ids and keys of the student's, quotes, a message inside another
REFUSED_WORKLOADS = [
    ([{"id": 0, "arrival": 0}], 2), ([{"id": 7, "arrival": 0, "tokens": 1, "x": 1}], 2), ([{"id": 1.5, "arrival": 0, "tokens": 1}], 2),
    ([{"id": 0, "arrival": -1, "tokens": 1}], 2), ([{"id": 0, "arrival": 0, "tokens": 0}], 2), ([3], 2),
    ([{"id": 0, "arrival": 0, "tokens": 1}, {"id": 0, "arrival": 0, "tokens": 1}], 2),
    ([{"id": "{id}: field", "arrival": 0, "tokens": True}], 2),   # an id that spells a template's words
]


@pytest.mark.parametrize("workload", REFUSED_WORKLOADS, ids=range(len(REFUSED_WORKLOADS)))
def test_a_lab_refusal_is_worded_from_labs_own_template_never_read_back(workload, monkeypatch):
    """01's judge words lab's refusal on a zh page exactly as lab itself words it in a zh kernel (in the quotes a
    child's text is shown in), from the template and fields lab keeps (lab.i18n.refused), not by matching its English.
    Read back by pattern, 'job 0: field 'arrival' must be >= 0' matched the template it is nested in (作业 0 的字段 'arrival'
    where lab says 作业 0：字段 'arrival'), and an id '{id}: field' was itself translated ('{id}：field')."""
    import lab
    from lab import i18n as lab_i18n

    from grader import i18n  # noqa: F401 - the zh wording of Named texts
    said = load(OTHER).suite._judge_workload([{"value": workload}], None)
    monkeypatch.setitem(lab_i18n._state, "language", "zh")
    with pytest.raises(ValueError) as refused:
        lab.schedule(*workload, False)
    monkeypatch.setitem(lab_i18n._state, "language", "en")
    with pytest.raises(ValueError) as english:
        lab.schedule(*workload, False)
    assert said.text("en") == f"lab.schedule rejects the workload: {ascii(str(english.value))}"   # as before
    quote = ascii(str(english.value))[0]
    assert said.text("zh") == f"lab.schedule 拒绝了这个工作负载：{quote}{refused.value}{quote}"
    assert json.loads(json.dumps(dataclasses.asdict(said))) == dataclasses.asdict(messages.from_json(dataclasses.asdict(said)))


def test_a_lab_refusal_keeps_its_type_and_words_and_a_long_one_is_cut_in_english():
    import lab

    with pytest.raises(ValueError) as refused:
        lab.schedule([{"id": 0, "arrival": -1, "tokens": 1}], 2, False)
    assert type(refused.value) is ValueError and str(refused.value) == "job 0: field 'arrival' must be >= 0, got -1"
    assert refused.value.phrase.template == "job {id}: field '{field}' must be >= {minimum}, got {value}"
    long = load(OTHER).suite._judge_workload([{"value": ([{"id": "x" * 150, "arrival": 0}], 2)}], None)
    assert long.text("zh").endswith("...") and "job 'xxx" in long.text("zh"), "cut short: the English as it is"
