"""Sharding: --shard K/N by a hash of the student id, and a merge that equals one unsharded run."""
import argparse
import json
import os
import re

import pytest
from hypothesis import given, strategies as st

from grader import autograde, sample_submissions, shard
from grader.feedback import visible_text

NAME = "02_decode_scheduling"
ALIKE = [os.fsdecode(b"dup2\xff"), "dup2\\xff"]  # a byte 0xff, and the four characters that once printed it


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=40, unique=True), st.integers(1, 9))
def test_every_student_lands_in_exactly_one_shard(ids, count):
    owners = {sid: shard.shard_of(sid, count) for sid in ids}
    assert all(0 <= k < count for k in owners.values())
    assert owners == {sid: shard.shard_of(sid, count) for sid in reversed(ids)}  # independent of order and company


@pytest.mark.parametrize("text", ["2/2", "-1/3", "1", "a/b", "1/0"])
def test_bad_shard_arguments_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        shard.parse_shard(text)


def scores_of(out):
    return (out / "grades.csv").read_text()


def students(out):
    report = json.loads((out / "report.json").read_text())
    for student in report["students"]:
        student.pop("seconds")
    return report


def verdict_lines(page):
    return [line for line in visible_text(page.read_text()).splitlines() if " points (" in line]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    batch = sample_submissions.demo_submissions(NAME) | {"dan_bad_json": '{"cells": [ this is not json'}
    batch |= {name: '{"cells": []}' for name in ALIKE}
    sample_submissions.write(batch, subs)
    base = tmp_path_factory.mktemp("runs")
    autograde.run(NAME, subs, base / "whole", cell_timeout=10)
    for k in range(2):
        autograde.run(NAME, subs, base / f"shard-{k}", cell_timeout=10, shard=(k, 2))
    shard.main(["merge", str(base / "shard-0"), str(base / "shard-1"), "--out", str(base / "merged")])
    return base, set(batch)


@pytest.mark.slow
def test_each_shard_grades_only_its_students(runs):
    base, everyone = runs
    raw = {shard.student_key(name): name for name in everyone}  # the printed id of an invalid name is a hash
    seen = []
    for k in range(2):
        names = [raw[s["key"]] for s in students(base / f"shard-{k}")["students"]]
        assert all(shard.shard_of(name, 2) == k for name in names)
        seen += names
    assert sorted(seen) == sorted(everyone)


@pytest.mark.slow
def test_merged_shards_equal_one_unsharded_run(runs):
    base, _ = runs
    whole, merged = base / "whole", base / "merged"
    assert scores_of(merged) == scores_of(whole)
    assert students(merged) == students(whole)
    pages = sorted(p.name for p in (whole / "feedback").glob("*.html"))
    assert pages == sorted(p.name for p in (merged / "feedback").glob("*.html")) and len(pages) == 4
    for name in pages:
        assert verdict_lines(merged / "feedback" / name) == verdict_lines(whole / "feedback" / name)
    assert "merged from 2 shards" in (merged / "report.md").read_text()


def without_timing(text):
    return re.sub(r"grading time: [^<\n]*", "grading time: ...", text)


@pytest.mark.slow
def test_merged_shards_give_the_same_class_report(runs):
    base, _ = runs
    whole, merged = base / "whole", base / "merged"
    for name in ("class-report.md", "class-report.html"):
        mine, theirs = (merged / name).read_text(), (whole / name).read_text()
        assert without_timing(mine) == without_timing(theirs) and "grading time: " in mine, name
    assert (merged / "rules.csv").read_text() == (whole / "rules.csv").read_text()
    assert "| TODO 3 | ranks the victims by raw priority: " in (merged / "class-report.md").read_text()
    for png in (whole / "class-report").glob("*.png"):
        assert (merged / "class-report" / png.name).read_bytes() == png.read_bytes(), png.name


@pytest.mark.slow
def test_a_student_in_two_shards_is_refused(runs, tmp_path):
    base, _ = runs
    with pytest.raises(SystemExit, match="in more than one shard"):
        shard.merge([base / "shard-0", base / "shard-0"], tmp_path / "out")


@pytest.mark.slow
def test_names_that_print_alike_stay_two_students(runs):
    """Both are invalid ids: each gets its own hashed name, and the merge tells them apart by the raw name's hash."""
    base, _ = runs
    report = students(base / "merged")["students"]
    alike = [s for s in report if s["key"] in {shard.student_key(name) for name in ALIKE}]
    assert len(alike) == 2 and len({s["student_id"] for s in alike}) == 2
    assert all(s["student_id"].startswith("invalid-") and s["status"] == "bad" for s in alike)
