"""Answers to look at (grader/similarity.py): renamed and reformatted copies of the corpus answers are all found, copies
edited once mostly are, the independently written answers are not (save two pairs that are the same code apart from
comments), a planted answer written another way is not, and the normal form ignores a consistent renaming."""
import ast
import copy
import itertools
import keyword
import re
import builtins

import nbformat
from hypothesis import given, settings, strategies as st

from grader import class_report, similarity
from grader.assignment import get, load
from grader.paths import assignment_names
from grader.submission import answers_of

# Pairs of the corpus (with the reference) that are the same code apart from comments and docstrings: no method can
# tell them from a copy, and they are reported (test_the_independent_answers_are_not_reported checks they are that).
SAME_CODE = {("02_decode_scheduling", "todo4", "w2-numpy-zh", "w3-functional-en"),
             ("03_batch_scheduling", "todo3", "ref", "w2-numpy-zh")}
SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Pass)
SHORT = 12   # tokens of a statement an edit adds, removes or moves


def independent(name: str) -> dict[str, dict[str, str]]:
    """{answer grade_id: {who: source}}: the reference and each corpus answer, written independently."""
    a = load(name)
    found = {gid: {"ref": a.reference[gid]} for gid in a.answer_ids}
    for path in a.corpus:
        nb = nbformat.read(path, as_version=4)
        for gid, source in answers_of(nb, a.answer_ids).items():
            found[gid][path.stem] = source
    for alt, answers in a.alternatives.items():
        for gid, source in answers.items():
            found[gid][alt] = source
    return found


def every_todo():
    for name in assignment_names():
        stubs = get(name).stubs
        for gid, answers in independent(name).items():
            yield name, gid, answers, stubs[gid]


def keep_of(stubs) -> frozenset:
    return frozenset().union(*map(similarity.bound, stubs))


def renamed(source: str, keep: frozenset, prefix: str = "copied_") -> ast.Module:
    """The answer with every name it binds (but the stub's) renamed consistently."""
    new = {n: f"{prefix}{i}_{n[::-1]}" for i, n in enumerate(sorted(similarity.bound(source) - keep))}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        for attr in ("id", "arg", "asname"):
            if isinstance(getattr(node, attr, None), str) and getattr(node, attr) in new and not isinstance(node, ast.Attribute):
                setattr(node, attr, new[getattr(node, attr)])
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.ExceptHandler)) and node.name in new:
            node.name = new[node.name]
    return tree


def disguised(source: str, keep: frozenset) -> str:
    """A copy as one might hand it in: names renamed, strings and docstrings reworded, laid out anew, commented."""
    tree = renamed(source, keep)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = f"reworded: {node.value[::-1]}"
    lines = ast.unparse(tree).splitlines()
    return "\n".join(f"{line}  # my own work" if line.strip() and not line.rstrip().endswith((",", "(")) else line
                     for line in lines) + "\n\n# done\n"


def edited(source: str, keep: frozenset) -> list[str]:
    """Disguised copies edited once: a short statement of a function's own body removed, one added, or two adjacent
    short ones swapped."""
    tree = renamed(source, keep)
    short = lambda s: isinstance(s, SIMPLE) and len(similarity.tokens(ast.unparse(s))) <= SHORT  # noqa: E731
    out = []
    for f, fn in enumerate(tree.body):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for i in range(len(fn.body) + 1):
            for kind in ("remove", "add", "swap"):
                t = copy.deepcopy(tree)
                body = t.body[f].body
                if kind == "remove" and i < len(body) and short(body[i]) and len(body) > 1:
                    del body[i]
                elif kind == "add":
                    body.insert(i, ast.parse("checked = True").body[0])
                elif kind == "swap" and i + 1 < len(body) and short(body[i]) and short(body[i + 1]):
                    body[i], body[i + 1] = body[i + 1], body[i]
                else:
                    continue
                out.append(ast.unparse(ast.fix_missing_locations(t)))
    return out


def reported(found: similarity.Findings) -> set[tuple[str, str]]:
    pairs = {tuple(sorted(p)) for group in found.clusters for p in itertools.combinations(group, 2)}
    return pairs | {tuple(sorted((a, b))) for _, a, b in found.near}


def test_renamed_and_reformatted_copies_are_all_found():
    copies = 0
    for name, gid, answers, stubs in every_todo():
        keep = keep_of(stubs)
        for who, source in answers.items():
            copy_of = disguised(source, keep)
            assert copy_of != source
            found = similarity.find({who: source, "copier": copy_of}, stubs)
            assert found.clusters == [sorted([who, "copier"])], (name, gid, who)
            copies += 1
    assert copies >= 60


def test_the_threshold_separates_the_independent_answers_from_edited_copies():
    """The numbers of grader/similarity.py's docstring, measured again."""
    highest, same, ratios, big = 0.0, set(), [], []
    for name, gid, answers, stubs in every_todo():
        keep = keep_of(stubs)
        stub = similarity.tokens(similarity.normal_form(stubs[0], keep))
        mine = lambda source: similarity.own(similarity.tokens(similarity.normal_form(source, keep)), stub)  # noqa: E731
        for (x, a), (y, b) in itertools.combinations(answers.items(), 2):
            if similarity.normal_form(a, keep) == similarity.normal_form(b, keep):
                same.add((name, gid, x, y))
            else:
                highest = max(highest, similarity.ratio(mine(a), mine(b)))
        for source in answers.values():
            base = mine(source)
            for variant in edited(source, keep):
                ratios.append(similarity.ratio(base, mine(variant)))
                if len(base) >= 40:
                    big.append(ratios[-1])
    found = sum(r >= similarity.THRESHOLD for r in ratios) / len(ratios)
    print(f"independent: highest {highest:.3f}; edited copies: {len(ratios)}, {found:.1%} found, lowest {min(ratios):.2f}; "
          f"of answers adding 40 tokens or more {sum(r >= similarity.THRESHOLD for r in big) / len(big):.1%}")
    assert same == SAME_CODE
    assert highest < similarity.THRESHOLD
    assert found >= 0.9


def test_the_independent_answers_are_not_reported():
    for name, gid, answers, stubs in every_todo():
        got = reported(similarity.find(answers, stubs))
        known = {(x, y) for n, g, x, y in SAME_CODE if (n, g) == (name, gid)}
        assert got == known, (name, gid, got)
        for x, y in known:  # the same code apart from comments and docstrings: a copy or not, nothing can tell
            assert shape(answers[x]) == shape(answers[y])


def shape(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


# TODO 1 of 01 written another way (a sort of every serve, then one pass): correct, and no copy of any corpus answer.
PLANTED = '''@todo("TODO 1")
def waits_and_flows(jobs: list[dict], trace: list[dict]) -> dict[int, tuple[int, int]]:
    """Map each job id to (wait, flow), using only its arrival and the ticks it was served."""
    serves = sorted((job_id, row["tick"]) for row in trace for job_id in row["served"])
    span = {}
    for job_id, tick in serves:
        lo, hi = span.get(job_id, (tick, tick))
        span[job_id] = (min(lo, tick), max(hi, tick))
    arrival = {job["id"]: job["arrival"] for job in jobs}
    return {job_id: (span[job_id][0] - arrival[job_id], span[job_id][1] + 1 - arrival[job_id]) for job_id in arrival}
'''


def test_a_planted_answer_written_another_way_is_not_reported():
    name = "01_continuous_batching"
    answers = independent(name)["todo1"]
    stubs = get(name).stubs["todo1"]
    assert reported(similarity.find(answers | {"planted": PLANTED}, stubs)) == set()
    # while a copy of it, renamed and laid out anew, is
    copied = disguised(PLANTED, keep_of(stubs))
    assert reported(similarity.find(answers | {"planted": PLANTED, "copier": copied}, stubs)) == {("copier", "planted")}


def test_answers_left_as_given_or_too_short_are_not_compared():
    name = "01_continuous_batching"
    stubs = get(name).stubs["todo2"]
    short = stubs[0].replace("raise NotImplementedError()", "return None")
    found = similarity.find({"a": stubs[0], "b": stubs[1], "c": short, "d": short + "\n# mine\n"}, stubs)
    assert found.compared == 0 and found.clusters == [] and found.near == []
    assert similarity.find({"a": stubs[0], "b": stubs[1]}, stubs, min_own=0).compared == 0  # left as given: by its form
    assert similarity.find({"c": short, "d": short}, stubs, min_own=0).clusters == [["c", "d"]]


def test_a_cell_that_does_not_parse_is_still_compared_by_its_text():
    broken = "def f(x):\n    return x +\n    # oops\n" + "    y = [x, x, x, x, x, x, x, x]\n" * 3
    found = similarity.find({"a": broken, "b": broken.replace("# oops", "# mine")})
    assert found.clusters == [["a", "b"]]


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and not hasattr(builtins, n) and not n.startswith("_v"))
SOURCES = sorted({source for _, _, answers, _ in every_todo() for source in answers.values()})


@settings(max_examples=60, deadline=None)
@given(source=st.sampled_from(SOURCES), names=st.lists(NAMES, min_size=40, max_size=40, unique=True))
def test_the_normal_form_ignores_a_consistent_renaming(source, names):
    own = sorted(similarity.bound(source))
    words = set(ast.dump(ast.parse(source)).replace("'", " ").split())
    fresh = [n for n in names if n not in words and n not in own]
    new = dict(zip(own, fresh))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in new:
            node.id = new[node.id]
        elif isinstance(node, ast.arg) and node.arg in new:
            node.arg = new[node.arg]
        elif isinstance(node, ast.alias) and node.asname in new:
            node.asname = new[node.asname]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.ExceptHandler)) and node.name in new and node not in tree.body:
            node.name = new[node.name]
    if len(fresh) < len(own):
        return
    assert similarity.normal_form(ast.unparse(tree)) == similarity.normal_form(source)


def test_the_class_report_shows_them_side_by_side():
    name = "01_continuous_batching"
    stubs = get(name).stubs
    answers = independent(name)
    keep = keep_of(stubs["todo1"])
    students = [{"student_id": who, "status": "graded", "warnings": [], "verdicts": [], "answers": {"todo1": source}}
                for who, source in answers["todo1"].items()]
    students += [{"student_id": "zed<b>", "status": "graded", "warnings": [], "verdicts": [],
                  "answers": {"todo1": disguised(answers["todo1"]["w1-heap-en"], keep)}}]
    report = {"assignment": name, "task_columns": list(answers), "max_total": 10, "students": students}
    summary = class_report.summarize(report)
    md, page = class_report.markdown(summary, {}, "x"), class_report.page(summary, {})
    section = md.split("## Answers to look at", 1)[1].split("\n## ", 1)[0]
    assert "not a finding about anyone" in section
    prose = re.sub(r"^```text$.*?^```$", "", md, flags=re.S | re.M)  # in a code block the id is shown as it is
    assert "w1-heap-en, zed&lt;b&gt;" in section and "zed<b>" not in prose and "zed<b>" in md
    assert "first_seen: dict[int, int] = {}" in section and "| " in section  # the two answers, in two columns
    assert "copied_" in section
    assert "<td><pre>" in page and "zed&lt;b&gt;" in page and "zed<b>" not in page
    # a class with no such answers says so
    quiet = class_report.summarize(report | {"students": [s for s in students[:-1] if s["student_id"] != "ref"]})
    assert "No two answers of a TODO are the same or nearly so." in class_report.markdown(quiet, {}, "x")


def test_padding_cannot_push_an_answer_out_of_what_report_json_keeps():
    """report.json keeps each answer cut at report.ANSWER_CHARS characters, and the class report compares what it
    keeps: a copy behind a 20,400-character comment (or docstring, or long string) was kept as padding only and
    compared with nobody. An answer over the limit is kept without what its normal form sets aside."""
    from grader import report
    name = "02_decode_scheduling"
    stubs = get(name).stubs["todo4"]
    original = independent(name)["todo4"]["ref"]
    renamed = re.sub(r"#.*", "# mine", original)
    padded = {"comment": "# " + "notes " * 3400 + "\n" + renamed,
              "docstring": '"""' + "notes " * 3400 + '"""\n' + renamed,
              "string": "_ = '" + "notes " * 3400 + "'\n" + renamed,
              "inside": renamed.replace(":\n", ":\n    " + '"""' + "n " * 10200 + '"""\n', 1)}
    for how, source in padded.items():
        assert len(source) > report.ANSWER_CHARS + 300, how
        kept = report.student_json(report.Outcome("carol", "graded", {}, answers={"todo4": source}))["answers"]["todo4"]
        assert len(kept) <= report.ANSWER_CHARS, how
        found = similarity.find({"alice": original, "carol": kept}, stubs)
        assert found.clusters == [["alice", "carol"]] or found.near, how
    short = report.student_json(report.Outcome("alice", "graded", {}, answers={"todo4": original}))["answers"]["todo4"]
    assert short == original   # an answer within the limit is kept as it is


def test_dead_padding_between_copied_lines_hides_no_copy():
    """A renamed copy with call-free lines that change nothing (`_ = (0, ..., 15)`, a bare constant, a value stored in
    a name never read) between its statements is the same code: before, one such line dropped it below THRESHOLD."""
    for name, gid, answers, stubs in every_todo():
        keep = keep_of(stubs)
        for who, source in answers.items():
            tree = renamed(source, keep)
            for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
                padding = ["_ = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)", "42", "unused_total = 3 * 7 + 1"]
                for i, line in zip(range(len(fn.body), 0, -1), itertools.cycle(padding)):
                    fn.body.insert(i, ast.parse(line).body[0])
            padded = ast.unparse(ast.fix_missing_locations(tree))
            found = similarity.find({who: source, "copier": padded}, stubs)
            assert found.clusters == [sorted([who, "copier"])], (name, gid, who)
    # a line that calls something, or stores in a name read later, is code: it stays
    assert similarity.normal_form("def f(x):\n    y = g(x)\n    return x\n") != similarity.normal_form("def f(x):\n    return x\n")
    assert similarity.normal_form("def f(x):\n    y = 2\n    return x + y\n") != similarity.normal_form("def f(x):\n    return x\n")
    assert similarity.normal_form("def f(x):\n    y = 2\n    return x\n") == similarity.normal_form("def f(x):\n    return x\n")


def test_an_answer_like_the_solved_editions_is_listed_with_it():
    """The solved editions are published for self-learners: a student's answer that is theirs, renamed and
    reformatted, is listed beside SOLVED; the solved edition is not counted as a student, and independent answers
    are not listed with it (its corpus pair of the same code, SAME_CODE, aside)."""
    name = "02_decode_scheduling"
    stubs, answers = get(name).stubs, independent(name)
    reference = dict(get(name).reference)
    for gid, by_who in answers.items():
        keep = keep_of(stubs[gid])
        students = {who: source for who, source in by_who.items() if who != "ref"}
        students["copier"] = disguised(reference[gid], keep)
        found = similarity.find(students, stubs[gid], published={similarity.SOLVED: reference[gid]})
        listed = reported(found)
        assert (similarity.SOLVED, "copier") in listed, gid
        known = {(x, y) for n, g, x, y in SAME_CODE if (n, g) == (name, gid)}
        assert {p for p in listed if similarity.SOLVED not in p} == known, gid
        assert all("copier" in p for p in listed if similarity.SOLVED in p), (gid, listed)
        assert found.compared <= len(students)
    # through the class report: the solved edition's answer is shown beside the copier's
    students = [{"student_id": "copier", "status": "graded", "warnings": [], "verdicts": [],
                 "answers": {"todo4": disguised(reference["todo4"], keep_of(stubs["todo4"]))}},
                {"student_id": "other", "status": "graded", "warnings": [], "verdicts": [], "answers": {"todo4": answers["todo4"]["w1-heap-en"]}}]
    summary = class_report.summarize({"assignment": name, "task_columns": ["todo4"], "max_total": 12, "students": students})
    section = class_report.markdown(summary, {}, "x").split("## Answers to look at", 1)[1].split("\n## ", 1)[0]
    assert similarity.SOLVED in section and "copier" in section and "other" not in section.split("not compared.")[-1]
