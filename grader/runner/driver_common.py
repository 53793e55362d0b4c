# Shared prelude of every observation driver (grader/assignments/<name>/driver.py; grader/contract.py driver_source() prepends it).
#
# What the code under test returned crosses to the grader as JSON that keeps its Python type (grader/observed.py
# decodes it): None, bool, int, float, str and list as JSON writes them, and everything else as a JSON object of one
# key that starts with "$":
#   {"$tuple": [...]}  {"$set": [...]}  {"$frozenset": [...]}  {"$dict": [[key, value], ...]}
#   {"$numpy": [dtype name, value]}                            a numpy bool, int or float scalar
#   {"$obj": [type name, repr, null | [base, value]]}          any other object; base: the builtin it is an instance of
# A dict whose keys are all str, none of them starting with "$", is a JSON object as it is. So {0: 1} and {"0": 1},
# (0, 1) and [0, 1], 1 and 1.0, True and 1 and numpy.int64(1) all arrive as what they were.
# A driver passes each value it reports through _plain once (a second pass would take the tags for a dict's keys).
import numbers

_BASES = (dict, list, tuple, set, frozenset, str, int, float)   # an object of a subclass crosses with its builtin value
_NUMPY_KINDS = "biuf"   # numpy scalars that cross as themselves: bool, signed and unsigned int, float (dtype.kind)
_TEXT = 200             # characters of an object's repr that cross (the grader bounds every string again)


def _plain(value):
    """JSON-safe copy of `value` that keeps its types (see above); a recursive value raises RecursionError."""
    kind = type(value)
    if value is None or _as_is(kind):
        return value
    if kind is list:
        return [_plain(item) for item in value]
    if kind is dict:
        if _plain_keys(value):
            return {key: _plain(item) for key, item in value.items()}
        return {"$dict": [[_plain(key), _plain(item)] for key, item in value.items()]}
    if kind is tuple:
        return {"$tuple": [_plain(item) for item in value]}
    if kind is set or kind is frozenset:
        return {"$" + kind.__name__: [_plain(item) for item in value]}
    return _other(value, kind)


def _as_is(kind):
    """A type JSON writes as it is (by identity: a class's metaclass may say it equals anything)."""
    return kind is bool or kind is int or kind is float or kind is str


def _plain_keys(mapping):
    """Whether a dict's keys are all str, none starting with "$" (it crosses as a JSON object as it is)."""
    for key in mapping:   # a loop, not all() over a generator: no deeper than _plain was (a nested value's depth)
        if type(key) is not str or key[:1] == "$":
            return False
    return True


def _other(value, kind):
    """A numpy bool, int or float scalar as itself; anything else as its type name, repr and builtin value."""
    if _numpy_scalar(kind):
        dtype = value.dtype
        if dtype.kind in _NUMPY_KINDS and dtype.itemsize <= 8:
            return {"$numpy": [dtype.name, value.item()]}
    return {"$obj": [_type_name(kind), _repr(value), _base(value)]}


def _numpy_scalar(kind):
    """A numpy scalar type (numpy.generic's), found without importing numpy."""
    return any(c.__name__ == "generic" and c.__module__ == "numpy" for c in kind.__mro__)


def _type_name(kind):
    module, name = getattr(kind, "__module__", "?"), getattr(kind, "__qualname__", "?")
    return f"{module}.{name}"[:120] if type(module) is str and type(name) is str else "?"


def _repr(value):
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises is the object's own business
        return f"<{type(value).__name__} object>"
    if type(text) is not str:
        return f"<{type(value).__name__} object>"
    return text if len(text) <= _TEXT else text[: _TEXT - 3] + "..."


def _base(value):
    """[builtin name, its value] for an instance of a subclass of a builtin (an enum member of str, a namedtuple)."""
    if isinstance(value, bool) or not isinstance(value, _BASES):
        return None
    if isinstance(value, numbers.Number) and not isinstance(value, (int, float)):
        return None
    for base in _BASES:
        if isinstance(value, base):
            if base is str:
                return ["str", "".join([value])]          # the characters, whatever __str__ says
            if base is int or base is float:
                return [base.__name__, getattr(base, f"__{base.__name__}__")(value)]
            return [base.__name__, _plain(base(value))]
    return None
