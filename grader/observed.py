"""What a grading child's code returned, with its Python types: the decoder of the drivers' encoding, and type names.

The child writes its observations with grader/runner/driver_common.py's `_plain` (its header gives the format): JSON, in
which every JSON object of one key that starts with "$" is a tag. `decode_hook` turns the tags back into Python
values while json.loads parses a record, bottom up: a tuple, set, frozenset or dict of values already decoded, a
numpy scalar of an allowlisted dtype built from a plain number, or an Instance, the stand-in for any other object.
Nothing is evaluated or unpickled, and no name the child writes is looked up. Decoding is total: whatever is not
a well-formed tag raises Malformed, which the protocol (grader/runner/protocol.py) turns into an invalid observation
of that scenario (a wrong answer, never a crash of the grader). Bounds are checked after, on the decoded value
(grader/child_values.py).

A scenario that gave no value (it crashed or ran out of time, or its value was refused) is a NoValue, never a str:
the child reports it in a field of its record no returned value can fill, so code that returns "crash: boom" has
returned a string.
"""
from __future__ import annotations

from dataclasses import dataclass

# numpy dtypes whose scalars cross as themselves, and the Python type of their .item()
NUMPY_DTYPES = {"bool": bool, **{f"{sign}int{bits}": int for sign in ("", "u") for bits in (8, 16, 32, 64)},
                **{f"float{bits}": float for bits in (16, 32, 64)}}
BASES = {"dict": dict, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "str": str, "int": int,
         "float": float}
MAX_TYPE_NAME = 120      # characters of a type's name the child may write (its own classes are named by the student)


# How a scenario gave no value: the first three the child reports, the last the protocol decides (NoValue.how).
TIMEOUT, SKIPPED, CRASH, INVALID = "timeout", "skipped", "crash", "invalid"
CHILD_ENDINGS = (TIMEOUT, SKIPPED, CRASH)


@dataclass(frozen=True)
class NoValue:
    """A scenario's observation when it gave no value: `how` (TIMEOUT, SKIPPED, CRASH, INVALID) and its `detail`
    (a crash: the name of the exception's type, as the child wrote it; invalid: why the protocol refused the value,
    a Message). It prints as the words the page gives it in English, quoted as a value is (a judge shows it as one)."""

    how: str
    detail: object = ""   # a str, or a messages.Message (this module sits below grader/messages.py)

    def __repr__(self) -> str:
        words = {TIMEOUT: "timeout", SKIPPED: "skipped after 3 timeouts in a row", CRASH: f"crash: {self.detail}",
                 INVALID: f"invalid observation: {self.detail}"}
        return repr(words.get(self.how, self.how))

    @property
    def ran_out(self) -> bool:
        """The scenario ran out of time, or was left out after three that did."""
        return self.how in (TIMEOUT, SKIPPED)


class Malformed(ValueError):
    """A tag the drivers' encoder never writes: the observation is invalid. Why is a key of grader/messages.py and its
    values (`key`, `params`), which the protocol makes a Message of: this module sits below messages.py."""

    def __init__(self, key: str, params: dict | None = None):
        self.key, self.params = key, params or {}
        super().__init__(key, self.params)   # args: it pickles as it was made


class Instance:
    """Any other object the code returned: its type's name, the child's repr() of it, and its builtin value.

    `base` is the value of the builtin type the object is an instance of (an enum member of a str enum, a namedtuple,
    a defaultdict), or None when it is none (a numpy array, a generator, an instance of the student's own class).
    It prints as the child printed it. Two Instances are equal when their types' names and builtin values are."""

    __slots__ = ("type_name", "text", "base")

    def __init__(self, type_name: str, text: str, base=None):
        self.type_name, self.text, self.base = type_name, printable(text), base

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        if type(other) is not Instance:
            return NotImplemented
        return self.type_name == other.type_name and type(self.base) is type(other.base) and self.base == other.base

    def __hash__(self) -> int:
        return hash(self.type_name)

    def __deepcopy__(self, memo):
        import copy
        return Instance(self.type_name, self.text, copy.deepcopy(self.base, memo))

    def __reduce__(self):
        return Instance, (self.type_name, self.text, self.base)


def _list(value, tag: str) -> list:
    if type(value) is not list:
        raise Malformed("problem_tag", {"tag": tag})
    return value


def _dict(value) -> dict:
    pairs = _list(value, "$dict")
    if not all(type(pair) is list and len(pair) == 2 for pair in pairs):
        raise Malformed("problem_tag", {"tag": "$dict"})
    found = dict(pairs)   # a key that is not hashable raises TypeError: malformed
    if len(found) != len(pairs):
        raise Malformed("problem_key_twice")
    return found


def _collection(kind):
    def make(value):
        items = _list(value, f"${kind.__name__}")
        found = kind(items)
        if len(found) != len(items):
            raise Malformed("problem_item_twice", {"type": kind.__name__})
        return found
    return make


def _numpy(value):
    if type(value) is not list or len(value) != 2 or type(value[0]) is not str:
        raise Malformed("problem_tag", {"tag": "$numpy"})
    name, number = value
    if NUMPY_DTYPES.get(name) is not type(number):
        raise Malformed("problem_numpy_kind")
    import numpy   # the grader's own: the child's and the grader's venv are one
    return numpy.dtype(name).type(number)   # out of range raises OverflowError: malformed


def _object(value):
    if type(value) is not list or len(value) != 3 or type(value[0]) is not str or type(value[1]) is not str:
        raise Malformed("problem_tag", {"tag": "$obj"})
    name, text, base = value
    if not name or len(name) > MAX_TYPE_NAME:
        raise Malformed("problem_type_name")
    if base is not None:
        if type(base) is not list or len(base) != 2 or BASES.get(base[0]) is not type(base[1]):
            raise Malformed("problem_base")
        base = base[1]
    return Instance(name, text, base)


TAGS = {"$tuple": lambda value: tuple(_list(value, "$tuple")), "$set": _collection(set),
        "$frozenset": _collection(frozenset), "$dict": _dict, "$numpy": _numpy, "$obj": _object}


def decode_hook(obj: dict):
    """json.loads' object_hook: a tag becomes its value, any other JSON object stays a dict with str keys."""
    if len(obj) != 1:
        return obj
    for tag, value in obj.items():
        if tag[:1] != "$":
            return obj
        make = TAGS.get(tag)
        if make is None:
            raise Malformed("problem_unknown_tag")
        try:
            return make(value)
        except Malformed:
            raise
        except Exception:  # noqa: BLE001 - unhashable keys, numbers out of a dtype's range: the child wrote nonsense
            raise Malformed("problem_tag", {"tag": tag}) from None
    return obj


# ---------------------------------------------------------------- names of types, as the page writes them
def is_numpy(value) -> bool:
    return type(value).__module__ == "numpy"


def kind(value) -> str:
    """The name of `value`'s type, as type() would print it (numpy.int64, tuple, NoneType; an object: its class)."""
    if type(value) is Instance:
        return short_name(value.type_name)
    if is_numpy(value):
        return f"numpy.{type(value).__name__}"
    return type(value).__name__


def short_name(type_name: str) -> str:
    """A child's type name without the module a notebook's classes get in the child (`__graded__`), or builtins'."""
    for prefix in ("builtins.", "__graded__.", "__main__."):
        if type_name.startswith(prefix):
            return type_name[len(prefix):]
    return type_name


def key_kinds(mapping: dict) -> str:
    """The types of a dict's keys, as the page writes them: 'int keys', 'int and str keys'."""
    return " and ".join(sorted({kind(key) for key in mapping})) + " keys"


def printable(text: str) -> str:
    """`text` with each character that does not print written as its escape, as repr() writes a str's (one line)."""
    return text if text.isprintable() else "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
