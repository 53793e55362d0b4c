"""Grading beyond one machine: split a class into shards an existing batch system runs, then merge.

    python -m grader.autograde ... --shard K/N --out OUT/shard-K       # one array task (K = 0 .. N-1)
    python -m grader.shard merge OUT/shard-* --out OUT                  # once, after all of them

A student's shard is a hash of their id (the file name), so it does not depend on which machine
lists the folder or on what else is in it. The merge checks that the shards graded the same
assignment in the same term (its fingerprint, grader/term.py) and sandbox level, that no student appears twice (by the hash of the
file name's bytes, report.json's "key", not by the printed id), and writes
grades.csv, report.json, report.md and feedback/ as one unsharded run would have.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

from . import class_report
from .report import write_report_md
from .safe_text import csv_cell, inert
from .shard_keys import parse_shard, shard_of, student_key  # noqa: F401 - where the merge's callers know them


KEYS = ("assignment", "term", "sandbox", "task_columns", "max_total", "deadline")   # the same in every shard


def merge(shards: list[Path], out: Path) -> dict:
    """Merge the outputs of several shards into `out`; returns the merged report."""
    reports = _reports(shards)
    students = [s for report in reports for s in report["students"]]
    _check_once_each(students)
    header, rows = _grade_rows(shards)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(sorted(rows, key=lambda row: row[0]))
    merged = {k: reports[0].get(k) for k in KEYS if k in reports[0]} | {"sandbox_means": reports[0].get("sandbox_means", ""),
                                                 "students": sorted(students, key=lambda s: s["student_id"])}
    (out / "report.json").write_text(json.dumps(merged, indent=1), encoding="utf-8")
    write_report_md(out, merged, f"{len(students)} submissions, merged from {len(shards)} shards")
    class_report.write(out, merged)
    _copy_feedback(shards, out)
    return merged


def _reports(shards: list[Path]) -> list[dict]:
    """Each shard's report.json, having checked that all were graded alike."""
    reports = []
    for folder in shards:
        path = folder / "report.json"
        if not path.is_file():
            raise SystemExit(f"error: {folder} has no report.json: did that shard finish?")
        reports.append(json.loads(path.read_text(encoding="utf-8")))
    for folder, report in zip(shards, reports):
        differs = [k for k in KEYS if report.get(k) != reports[0].get(k)]
        if differs:
            raise SystemExit(f"error: {folder} was graded with a different {', '.join(differs)} than {shards[0]}")
    return reports


def _check_once_each(students: list[dict]) -> None:
    """Stops the merge when a student is in more than one shard."""
    seen = Counter(s.get("key") or s["student_id"] for s in students)  # by the raw name: two may print alike
    twice = sorted(inert(s["student_id"]) for s in students if seen[s.get("key") or s["student_id"]] > 1)
    if twice:
        raise SystemExit(f"error: in more than one shard: {', '.join(twice)}")


def _grade_rows(shards: list[Path]) -> tuple[list[str] | None, list[list[str]]]:
    """(header, rows) of the shards' grades.csv, which must all have the same columns."""
    rows, header = [], None
    for folder in shards:
        with open(folder / "grades.csv", newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            head = next(reader)
            if header is not None and head != header:
                raise SystemExit(f"error: {folder}/grades.csv has other columns ({head} vs {header})")
            header = head
            rows += [[csv_cell(row[0]), *row[1:]] for row in reader if row]
    return header, rows


def _copy_feedback(shards: list[Path], out: Path) -> None:
    """Copies each shard's feedback pages (regular files only) into out/feedback."""
    (out / "feedback").mkdir(exist_ok=True)
    for folder in shards:
        for page in sorted((folder / "feedback").glob("*.html")):
            if page.is_file() and not page.is_symlink():
                shutil.copyfile(page, out / "feedback" / page.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    merging = sub.add_parser("merge", help="merge the OUT folders of all shards")
    merging.add_argument("shards", nargs="+", type=Path)
    merging.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    merged = merge(args.shards, args.out)
    print(f"merged {len(merged['students'])} students from {len(args.shards)} shards into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
