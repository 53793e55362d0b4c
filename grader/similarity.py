"""Answers to look at, per TODO: the same code once names, comments, strings and layout are set aside, or nearly so.

An answer's normal form is its syntax tree without dead statements (a bare expression that calls nothing, a
call-free value stored in names the cell never reads: padding such as `_ = (0, 1, 2)`), with every name the cell
binds (arguments, assigned names, nested functions, `import ... as` names) renamed by order of first appearance,
docstrings dropped and every string
constant (f-strings too) replaced by one placeholder, written back as code: comments and layout do not survive
it (names the stub binds, its arguments say, are kept). Answers with the same normal form form a cluster. Two
answers of different normal forms are compared on what each adds to the code the release gives (the stub's
tokens matched out first), every renamed name one token `_v` (an edit above a name would renumber the rest):
their ratio is twice the longest common subsequence of the two token lists over their lengths (difflib's ratio
where its matching finds that subsequence). A pair at or above THRESHOLD is a near pair. An answer that adds
fewer than MIN_OWN tokens to the stub is too short to tell a shared idea from a shared text, and is in neither.

THRESHOLD comes from the corpora (tests/grader/test_similarity.py measures it again): among the independently
written correct answers of each TODO (grader/assignments/*/corpus/ and the reference, 130 pairs) the highest
ratio of two different normal forms is 0.945 (03's TODO 1, whose given code lays out each step); of 1269
copies renamed, reformatted and then edited once (a short statement of a function's body added, removed or
swapped with the next) 96% score 0.95 or more, and over 97% of those of answers adding 40 tokens or more. Two corpus pairs have the same normal form: they are the same
code apart from comments and docstrings, and are reported. Each TODO's answers are also compared with the solved
edition's (SOLVED), which self-learners can read. This is a list for an instructor to read, never a finding:
answers to a narrow TODO can coincide, and the class report says so.
"""
from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from dataclasses import dataclass, field

from .verdict import Outcome

THRESHOLD = 0.95    # near pair: ratio of the answers' own tokens at least this
MIN_OWN = 12        # tokens an answer must add to the stub to be compared at all
MAX_TOKENS = 3000   # of an answer compared (difflib's work grows with the product of the lengths)
PLACEHOLDER = "S"   # every string constant


class _Bound(ast.NodeVisitor):
    """The names a cell binds: arguments, stored names, nested function and class names, `as` names."""

    def __init__(self):
        self.names: set[str] = set()
        self.depth = 0

    def visit_arg(self, node: ast.arg) -> None:
        self.names.add(node.arg)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.add(node.id)

    def visit_alias(self, node: ast.alias) -> None:
        if node.asname:
            self.names.add(node.asname)

    def _scope(self, node) -> None:
        if self.depth:  # a top-level def's name is the stub's: kept
            self.names.add(node.name)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)


class _Normalise(ast.NodeTransformer):
    """Bound names renamed _v0, _v1, ... by first appearance (a walk of the tree, not of the text), docstrings and
    bare strings dropped, string constants replaced."""

    def __init__(self, bound: set[str]):
        self.bound, self.canon = bound, {}
        self.depth = 0

    def name(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.canon.setdefault(name, f"_v{len(self.canon)}")

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.name(node.arg)
        self.generic_visit(node)
        return node

    def visit_alias(self, node: ast.alias) -> ast.alias:
        node.asname = node.asname and self.name(node.asname)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        node.name = node.name and self.name(node.name)
        return self.generic_visit(node)

    def visit_Global(self, node):
        node.names = [self.name(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def _scope(self, node):
        if self.depth:
            node.name = self.name(node.name)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(node.value, "value", ""), str):
            return None  # a docstring, or a string used as a comment
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, (str, bytes)):
            return ast.copy_location(ast.Constant(PLACEHOLDER), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.Constant:
        return ast.copy_location(ast.Constant(PLACEHOLDER), node)

    def generic_visit(self, node):
        super().generic_visit(node)
        if isinstance(getattr(node, "body", None), list) and not node.body:  # left empty by a dropped docstring
            node.body = [ast.Pass()]
        return node


_IMPURE = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


def _pure(node: ast.AST) -> bool:
    """An expression that calls nothing and binds nothing (what it computes is thrown away if nothing reads it)."""
    return not any(isinstance(n, _IMPURE) for n in ast.walk(node))


def _names(target: ast.AST) -> list[str] | None:
    """The plain names an assignment target binds; None if it binds anything else (an attribute, an item)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        found = [_names(t) for t in target.elts]
        return None if None in found else [n for names in found for n in names]
    return None


def _dead(statement: ast.stmt, read: set[str]) -> bool:
    """A statement that changes nothing the rest of the cell sees: a bare call-free expression, or a call-free value
    stored in names the cell never reads (padding such as `_ = (0, 1, 2)` between copied lines)."""
    if isinstance(statement, ast.Expr):
        return _pure(statement.value)
    if isinstance(statement, ast.Assign):
        names = [_names(t) for t in statement.targets]
        return None not in names and not read.intersection(*names) and _pure(statement.value)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        names = _names(statement.target)
        return names is not None and not read.intersection(names) and (statement.value is None or _pure(statement.value))
    return False


def _without_dead(tree: ast.Module) -> ast.Module:
    """The tree with its dead statements (_dead) taken out, until none is left (one taken out may leave another)."""
    for _ in range(8):
        read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        removed = False
        for node in ast.walk(tree):
            for name in ("body", "orelse", "finalbody"):
                body = getattr(node, name, None)
                if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                    kept = [s for s in body if not _dead(s, read)]
                    removed |= len(kept) < len(body)
                    setattr(node, name, kept or ([ast.Pass()] if name == "body" else []))
        if not removed:
            break
    return tree


def _without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(_without_magics(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def bound(source: str) -> frozenset[str]:
    """The names a cell binds (its arguments among them); none if it does not parse."""
    tree = _parse(source)
    if tree is None:
        return frozenset()
    found = _Bound()
    found.visit(tree)
    return frozenset(found.names)


def normal_form(source: str, keep: frozenset[str] = frozenset()) -> str:
    """The answer as code with names, comments, docstrings, strings and layout set aside; the source with its
    comments and blank lines dropped if it does not parse. Names in `keep` (the stub's own) are left as they are."""
    tree = _parse(source)
    if tree is None:
        return "\n".join(line.split("#", 1)[0].rstrip() for line in source.splitlines() if line.split("#", 1)[0].strip())
    tree = _without_dead(tree)
    found = _Bound()
    found.visit(tree)
    tree = _Normalise(found.names - keep).visit(tree)
    try:
        return ast.unparse(ast.fix_missing_locations(tree))
    except (RecursionError, ValueError):
        return ast.dump(tree)


class _Shorten(ast.NodeTransformer):
    """What normal_form sets aside anyway, taken out of an answer's code: bare strings (docstrings) dropped as
    _Normalise drops them, and a long string constant cut (normal_form writes every string as one placeholder)."""

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(node.value, "value", ""), str):
            return None  # as _Normalise.visit_Expr
        return self.generic_visit(node)

    def generic_visit(self, node):
        super().generic_visit(node)
        if isinstance(getattr(node, "body", None), list) and not node.body:  # as _Normalise.generic_visit
            node.body = [ast.Pass()]
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, (str, bytes)) and len(node.value) > 80:
            node.value = node.value[:60]
        return node


def stored(source: str, limit: int) -> str:
    """An answer as report.json keeps it, at most `limit` characters, with the same normal form as the whole answer
    wherever the code does: one over `limit` is first written without its comments, docstrings, bare strings and
    the length of its long strings (ast.unparse), so padding such as a 20,400-character comment cannot push the
    code out of what is kept and compared. A cell that does not parse keeps what its fallback form does."""
    if len(source) <= limit:
        return source
    tree = _parse(source)
    if tree is None:
        return normal_form(source)[:limit]
    try:
        return ast.unparse(ast.fix_missing_locations(_Shorten().visit(tree)))[:limit]
    except (RecursionError, ValueError):
        return source[:limit]


WORD = re.compile(r"\w+|[^\w\s]")
CANONICAL = re.compile(r"_v\d+")


def tokens(form: str) -> list[str]:
    """The tokens of a normal form: names, operators, constants, and indentation as tokens of its own."""
    out: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(form).readline):
            if tok.type == tokenize.INDENT:
                out.append("<in>")
            elif tok.type == tokenize.DEDENT:
                out.append("<out>")
            elif tok.type == tokenize.NEWLINE:
                out.append(";")
            elif tok.type == tokenize.NAME and CANONICAL.fullmatch(tok.string):
                out.append("_v")  # which renamed name: the order of first appearance shifts with any edit above
            elif tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER) and tok.string:
                out.append(tok.string)
            if len(out) >= MAX_TOKENS:
                break
    except (tokenize.TokenError, SyntaxError):  # the fallback form of a cell that does not parse
        out = WORD.findall(form)[:MAX_TOKENS]
    return out


def own(answer: list[str], stub: list[str]) -> list[str]:
    """The tokens of `answer` that are not the stub's (what the student wrote around the given lines)."""
    if not stub:
        return answer
    matcher = difflib.SequenceMatcher(None, stub, answer, autojunk=False)
    return [t for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("insert", "replace") for t in answer[j1:j2]]


def masks(tokens: list[str]) -> dict[str, int]:
    """For each token, the bits of the positions it holds in `tokens` (what lcs() reads the second list by)."""
    found: dict[str, int] = {}
    for i, token in enumerate(tokens):
        found[token] = found.get(token, 0) | 1 << i
    return found


def lcs(a: list[str], b: list[str], b_masks: dict[str, int] | None = None) -> int:
    """The length of the longest common subsequence of two token lists, bit-parallel (Hyyrö 2004): a few integer
    operations per token of `a`, so a class's pairs cost seconds, not the minutes difflib would take."""
    b_masks = masks(b) if b_masks is None else b_masks
    full = (1 << len(b)) - 1
    v = full
    for token in a:
        u = v & b_masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def ratio(a: list[str], b: list[str], b_masks: dict[str, int] | None = None) -> float:
    """The similarity of two token lists, 0 to 1: twice their longest common subsequence over their lengths."""
    return 2 * lcs(a, b, b_masks) / (len(a) + len(b)) if a or b else 1.0


@dataclass
class Findings:
    """One TODO's answers to look at: clusters of the same normal form, and near pairs of different ones."""

    clusters: list[list[str]] = field(default_factory=list)          # students, each list sorted, 2 or more
    near: list[tuple[float, str, str]] = field(default_factory=list)  # (ratio, student, student), highest first
    compared: int = 0                                                 # answers long enough to compare


def find(answers: dict[str, str], stubs: list[str] = (), threshold: float = THRESHOLD, min_own: int = MIN_OWN,
         published: dict[str, str] | None = None) -> Findings:
    """The clusters and near pairs among `answers` ({student: source} of one TODO). An answer whose normal form is a
    stub's (left as given) is not compared; `stubs` are the released stubs of the TODO (each edition's).
    `published` ({name: source}, the solved edition's answer) joins the comparison: a student's answer near it is
    listed with it; it is never counted as an answer compared, nor paired with another published one."""
    keep = frozenset().union(*map(bound, stubs))
    stub_forms = [normal_form(s, keep) for s in stubs]
    stub_tokens = tokens(stub_forms[0]) if stub_forms else []
    groups = _groups({**(published or {}), **answers}, keep, stub_forms)
    mine = {form: own(tokens(form), stub_tokens) for form in groups}
    ours = set(published or ())
    students = {form: [s for s in groups[form] if s not in ours] for form in groups}
    forms = _ordered([f for f in groups if len(mine[f]) >= min_own], groups, students)
    pairs = [(first, second) for j, second in enumerate(forms) for first in forms[:j] if students[first] or students[second]]
    return _findings(forms, groups, students, _near(pairs, mine, threshold))


def _findings(forms: list[str], groups: dict[str, list[str]], students: dict[str, list[str]], near: list) -> Findings:
    """The Findings of the forms compared: students counted, clusters of two names or more, near pairs by name."""
    found = Findings(compared=sum(len(students[f]) for f in forms))
    found.clusters = sorted((sorted(groups[f]) for f in forms if len(groups[f]) > 1 and students[f]), key=lambda c: (-len(c), c))
    found.near = sorted(((r, sorted(groups[x])[0], sorted(groups[y])[0]) for x, y, r in near), key=lambda n: (-n[0], n[1], n[2]))
    return found


def _ordered(forms: list[str], groups: dict[str, list[str]], students: dict[str, list[str]]) -> list[str]:
    """The forms by their first name, those with a student's answer first (a published answer alone is compared last)."""
    first = lambda f: sorted(groups[f])[0]  # noqa: E731
    return sorted((f for f in forms if students[f]), key=first) + sorted(f for f in forms if not students[f])


def _groups(answers: dict[str, str], keep: frozenset[str], stub_forms: list[str]) -> dict[str, list[str]]:
    """{normal form: the students whose answer has it}, answers left as a stub aside."""
    groups: dict[str, list[str]] = {}
    for student, source in answers.items():
        form = normal_form(source, keep)
        if form not in stub_forms:
            groups.setdefault(form, []).append(student)
    return groups


def _near(pairs: list[tuple[str, str]], mine: dict[str, list[str]], threshold: float) -> list[tuple[str, str, float]]:
    """(form, form, ratio rounded to the hundredth) of each pair at `threshold` or above."""
    found, b_masks = [], {}
    for first, second in pairs:
        a, b = mine[first], mine[second]
        if 2 * min(len(a), len(b)) < threshold * (len(a) + len(b)):  # no common part can be long enough
            continue
        if second not in b_masks:
            b_masks[second] = masks(b)
        r = ratio(a, b, b_masks[second])
        if r >= threshold:
            found.append((first, second, round(r, 2)))
    return found


SOLVED = "(the solved edition)"   # the published answer's name in the findings: no student id has parentheses


def of_report(report: dict, stubs: dict[str, list[str]], solved: dict[str, str]) -> dict[str, Findings]:
    """{answer grade_id: Findings} of a report.json whose students carry their "answers" (a TODO left as given, or
    whose answer cell was missing, is not compared), each TODO's also with the solved edition's answer (SOLVED).

    `stubs`: Assignment.stubs and `solved`: Assignment.reference, or {} where the assignment is not at hand."""
    by_todo: dict[str, dict[str, str]] = {c: {} for c in report["task_columns"]}
    for s in report["students"]:
        left = {v["answer_id"] for v in s.get("verdicts", []) if v.get("status") == Outcome.MISSING}
        for gid, source in (s.get("answers") or {}).items():
            if gid in by_todo and gid not in left:
                by_todo[gid][s["student_id"]] = source
    return {gid: find(answers, stubs.get(gid, []), published={SOLVED: solved[gid]} if gid in solved else None)
            for gid, answers in by_todo.items()}
