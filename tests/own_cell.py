"""Answer cells of every kind, for the property that a TODO's marks come from its own cell alone (tests/grader/test_own_cell.py).

For each TODO of an assignment: the reference, a catalogued mistake, the cell as released, and three hostile cells
written as a student who knows a correct answer for every TODO could write them:

- "fixer": a correct answer for its own TODO, then code that installs correct bodies for every *other* TODO where a
  run of the whole notebook would meet them: it swaps the course's `todo` decorator (by a computed name) so that
  later answer cells get a correct body whatever they hold, sets correct methods on the classes under computed
  names (`setattr`), and wraps the classes' `__init__` so that every new object gets them back (the issue's two
  attacks, in general form); `exec` builds the bodies.
- "saboteur": a correct answer for its own TODO, then patches that would break the others in a shared process:
  a `todo` that gives later cells a raising body, a course class's method, a builtin, a module in sys.modules and
  an import hook.
- "leaning": its TODO's functions only forward, by computed names, to what a fixer cell would have left behind.

Every cell is the same text in every notebook it appears in: notebooks that share a TODO's cell share it byte for byte.
"""
from __future__ import annotations

import ast

from grader import definitions, editions, sample_submissions
from grader.assignment import get

KINDS = ("reference", "mistake", "released", "fixer", "saboteur", "leaning")


def _labels(source: str) -> list[str]:
    """The `@todo("TODO k")` labels of a reference cell."""
    return sorted({deco.args[0].value for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
                   for deco in node.decorator_list if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "todo"})


def _names(source: str) -> list[tuple[str | None, str]]:
    """(owner class or None, function name) of each export of a reference cell."""
    return [(e.rpartition(".")[0] or None, e.rpartition(".")[2]) for e in definitions.exports(source)]


def fixer(assignment: str, gid: str) -> str:
    a = get(assignment)
    others = {label: a.reference[g] for g in a.answer_ids if g != gid for label in _labels(a.reference[g])}
    names = [(owner, name) for g in a.answer_ids if g != gid for owner, name in _names(a.reference[g])]
    return a.reference[gid].rstrip("\n") + f'''


# --- a correct body for every other TODO, wherever a shared run would meet them
import types as _types
_SOURCES = {others!r}
_course_todo = todo


def _correct(name):
    scope = dict(globals())
    scope["to" + "do"], scope["add_to_class"] = _course_todo, (lambda cls: (lambda fn: fn))
    for _source in _SOURCES.values():
        exec(_source, scope)
    return scope[name]


def _hijack(label):
    def decorate(fn):
        return _correct(fn.__name__) if label in _SOURCES else _course_todo(label)(fn)
    return decorate


globals()["to" + "do"] = _hijack
for _owner, _name in {names!r}:
    if _owner is None:
        globals()["_x" + "_" + _name] = _correct(_name)
    else:
        setattr(globals()[_owner], "_x" + "_" + _name, _correct(_name))
for _owner in {sorted({o for o, _ in names if o})!r}:
    _cls = globals()[_owner]

    def _restore(self, *args, __init=_cls.__init__, __owner=_owner, **kwargs):
        __init(self, *args, **kwargs)
        for _o, _n in {names!r}:
            if _o == __owner:
                setattr(self, _n, _types.MethodType(_correct(_n), self))

    _cls.__init__ = _restore
'''


def saboteur(assignment: str, gid: str) -> str:
    a = get(assignment)
    mine = set(_labels(a.reference[gid]))
    owners = sorted({o for g in a.answer_ids for o, _ in _names(a.reference[g]) if o})
    return a.reference[gid].rstrip("\n") + f'''


# --- patches that would break the other TODOs in a shared process
import builtins as _builtins
import importlib.abc as _abc
import sys as _sys
import types as _types
_course_todo = todo


def _sabotage(label):
    def decorate(fn):
        if label in {sorted(mine)!r}:
            return _course_todo(label)(fn)

        def broken(*args, **kwargs):
            raise ZeroDivisionError("sabotaged")
        broken.__name__ = fn.__name__
        return broken
    return decorate


globals()["to" + "do"] = _sabotage
for _owner in {owners!r}:
    setattr(globals()[_owner], "__repr__", lambda self: "sabotaged")
_real_sorted = _builtins.sorted
_builtins.sorted = lambda *args, **kwargs: list(reversed(_real_sorted(*args, **kwargs)))
_sys.modules["bisect"] = _types.ModuleType("bisect")


class _Hook(_abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("statistics", "fractions"):
            raise ImportError("sabotaged")
        return None


_sys.meta_path.insert(0, _Hook())
'''


def leaning(assignment: str, gid: str) -> str:
    """The TODO's functions, each forwarding to a computed name that only a fixer cell would have set."""
    a = get(assignment)
    lines = []
    labels = _labels(a.reference[gid])
    for owner, name in _names(a.reference[gid]):
        if owner:
            lines += [f"@add_to_class({owner})", f"@todo({labels[0]!r})", f"def {name}(self, *args, **kwargs):",
                      f'    return getattr(self, "_x" + "_" + {name!r})(*args, **kwargs)', "", ""]
        else:
            lines += [f"@todo({labels[0]!r})", f"def {name}(*args, **kwargs):",
                      f'    return globals()["_x" + "_" + {name!r}](*args, **kwargs)', "", ""]
    return "\n".join(lines)


def cell(assignment: str, gid: str, kind: str) -> str:
    """TODO `gid`'s answer cell of this kind (the same text wherever it appears)."""
    a = get(assignment)
    if kind == "reference":
        return a.reference[gid].rstrip("\n") + "\n# my own words\n"
    if kind == "mistake":
        mutant = next(m for m in a.mutants if m.answer_id == gid)
        return mutant.apply(a.reference[gid])
    if kind == "released":
        return sample_submissions.release_answers(assignment)[gid]
    return {"fixer": fixer, "saboteur": saboteur, "leaning": leaning}[kind](assignment, gid)


def design(assignment: str) -> list[dict[str, str]]:
    """Notebooks as {answer grade_id: kind}, in two families of len(KINDS): in family A, TODO j of notebook i has kind
    (i + j) mod 6, in family B (i + 2j) mod 6. For every TODO k and kind, one notebook of each family gives k that
    kind, and the two differ in every other answer cell (j - k is not 0 mod 6 for fewer than 7 TODOs)."""
    ids = get(assignment).answer_ids
    assert len(ids) < len(KINDS) + 1
    n = len(KINDS)
    return [{gid: KINDS[(i + step * j) % n] for j, gid in enumerate(ids)} for step in (1, 2) for i in range(n)]


def notebook(assignment: str, kinds: dict[str, str], language: str = "en"):
    """The student edition with these answer cells, saved as Jupyter saves it (sample_submissions.write: lines)."""
    return sample_submissions.filled(assignment, {gid: cell(assignment, gid, kind) for gid, kind in kinds.items()}, language)


def attacks() -> dict[str, tuple[str, dict[str, str]]]:
    """The issue's two attacks on notebook 02, as written there: {name: (assignment, answers)}. TODO 2 scores 0 on its
    own in both (a call of a name its cell does not define; the stub).

    1. TODO 2's cell only calls a computed name; TODO 1's cell holds a correct enqueue and a decorator that puts a
       correct key body on the class under that name.
    2. TODO 2 is left as released; TODO 1's cell wraps DecodeSchedulerSim.__init__ so that every new simulator gets a
       correct key back."""
    name = "02_decode_scheduling"
    a = get(name)
    ref, stub = dict(a.reference), sample_submissions.release_answers(name)
    key_body = editions.strip_solution_marks(ref["todo2"]).replace("@add_to_class(DecodeSchedulerSim)\n", "").replace(
        '@todo("TODO 2")\n', "")
    decorator = ref["todo1"].rstrip("\n") + f'''


def _also_the_key(cls):
    scope = dict(globals())
    exec({key_body!r}, scope)
    setattr(cls, "_x" + "_k", scope["_schedule_key"])
    return cls


_also_the_key(DecodeSchedulerSim)
'''
    computed = '''@add_to_class(DecodeSchedulerSim)
@todo("TODO 2")
def _schedule_key(self, req: RequestState) -> tuple[int, int, int, int, int, int]:
    """Key of deadline slack, phase, cache, effective priority and stable fields; smaller runs first."""
    return getattr(self, "_x" + "_k")(req)
'''
    restore = ref["todo1"].rstrip("\n") + f'''


import types as _types
_scope = dict(globals())
exec({key_body!r}, _scope)
_init = DecodeSchedulerSim.__init__


def _with_a_key(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self._schedule_key = _types.MethodType(_scope["_schedule_key"], self)


DecodeSchedulerSim.__init__ = _with_a_key
'''
    return {"computed_name": (name, ref | {"todo1": decorator, "todo2": computed}),
            "wrapped_init": (name, ref | {"todo1": restore, "todo2": stub["todo2"]})}
