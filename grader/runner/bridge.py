# The bridge between a grading child and its reference server. Sent as text to both processes (like
# child.py, it imports nothing from grader/). The child runs the student's answer for one TODO; the server
# runs the reference answers of the other TODOs. A call from one side to a function the other side owns
# travels as plain data: the objects reachable from its arguments go across, the callee runs, and the
# objects reachable from the arguments and the result come back and are written into the caller's objects
# in place. So the child never holds a line of another TODO's reference; it can only ask for its results.
#
# Message: one JSON line {"x": exchange, "op": "call" | "return" | "raise" | "abort", ...}; a "return" of a pure export
# may hold "batch" (see Bridge._speculate).
# Values: JSON scalars; {"f": repr} non-finite float; {"t": [...]} tuple; {"z": [...]} frozenset;
# {"e": class, "v": value} enum member; {"c": class} a class; {"r": id} an object in the message's graph;
# {"g": name} a function of the notebook's namespace; {"fn": module:qualname} a function of lab;
# {"m": value, "n": name} a bound method; {"log": id}, as a field only: the log (a list) of that id, kept by the child
# (see Sink). A message may hold "logs": [[id, value], ...], appends to logs, and "carry": [value, ...], the values
# appended to logs earlier in this exchange (they exist on both sides, as the message's objects do).
#
# Every message is hostile to the side that reads it (the child runs student code and may write anything). So what
# a message can name is a fixed, static allowlist: a call goes only to this side's exports; "c", "g" and "fn" name
# only classes and functions a notebook or lab module body defines (found in their __dict__, never by getattr); "m"
# only a method defined in the body of a notebook or lab class of the object (found in the MRO's __dict__), never a
# dunder. Any other callable (a lambda, a builtin, a partial) crosses as an opaque placeholder that raises when
# called, and never as something the other side can call. An object's fields are written only if they are data
# fields its class may have: never a dunder, never a name that would hide a method, property or class of its class.
import collections
import dataclasses
import enum
import functools
import importlib
import itertools
import json
import math
import numbers
import os
import signal
import types

MAX_DEPTH = 60          # nested calls across the bridge; deeper is a runaway recursion
MAX_MESSAGE = 32 << 20  # bytes of one message
MAX_BATCH = 256         # values a reply of a pure export may bring for other objects (Bridge._speculate)
CACHE_LIMIT = 4096      # names a side remembers per cache (a flood of fresh names from the other side starts it again)
# A message's graph holds each object once ({"r": id} elsewhere), so it has no cycle to look for.
ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)


class BridgeError(RuntimeError):
    """The bridge could not carry a value or a message."""


class Abort(BaseException):
    """The other side gave up on this exchange (its time ran out): unwind without a reply."""


class LogRead(BaseException):
    """A reference did more with a log (suite.py's LOGS) than append to it: the declaration is wrong. Not an Exception,
    so no `except Exception` catches it: the server's run ends, and the grade is a grading error."""


class _Aliased(Exception):
    """A log is reachable in a message otherwise than as a log field: that message, and the side's later ones, send it whole."""


class Sink:
    """The server's stand-in for the log (a list) of id `rid` that the child keeps (suite.py's LOGS, such as 02's
    timeline): it takes appends, which go back with the server's next message and are appended to that list; anything
    Python routes through the object raises LogRead (its contents are not here, so a reference that read them would see
    something else than in one process). It lives for its exchange only (ids start again with the next)."""

    __slots__ = ("_bridge", "_rid", "_live", "_whole")

    def __init__(self, bridge, rid):
        self._bridge, self._rid, self._live, self._whole = bridge, rid, True, None

    def append(self, value):
        if not self._live:   # kept past its exchange
            raise LogRead("a stand-in of a log appended to after it ended")
        if self._whole is not None:   # the child sent this log whole since: it is here now, and goes back whole
            self._whole.append(value)
        else:
            self._bridge.appended.append((self._rid, value))

    def __getattr__(self, name):
        raise LogRead(f"a log used other than by append ({name})")


def _refuse(self, *args, **kwargs):
    raise LogRead("a log read")


for _dunder in ("__len__", "__iter__", "__reversed__", "__getitem__", "__setitem__", "__delitem__", "__contains__",
                "__bool__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__add__", "__radd__",
                "__iadd__", "__mul__", "__rmul__", "__imul__", "__repr__", "__str__", "__format__", "__copy__",
                "__deepcopy__", "__reduce__", "__reduce_ex__", "__getstate__", "__sizeof__", "__dir__"):
    setattr(Sink, _dunder, _refuse)


SCALARS = {int, str, bool, type(None)}   # JSON carries these as they are
CONTAINERS = {list, dict, set, collections.deque}
FLAT = SCALARS | {float}
WRAPPED = {tuple: "t", frozenset: "z"}   # immutable containers: they cross as values
SEQUENCES = {list: "list", collections.deque: "deque"}
NOT_A_NUMBER = object()
EMPTY = {"list": list, "dict": dict, "set": set}
NAMES = {str}


def _flat(values):
    """True when every value is a JSON scalar or a finite float: a record that can cross as it is."""
    kinds = set(map(type, values))
    if kinds <= SCALARS:
        return True
    return kinds <= FLAT and all(math.isfinite(v) for v in values if type(v) is float)


def _number(value):
    """A numpy scalar or another kind of number as the Python number it stands for; else NOT_A_NUMBER."""
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return value.item()   # numpy scalars travel as Python numbers
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return NOT_A_NUMBER


class Mirror:
    """Stands for an object whose class this side does not have; it carries the fields."""


class Opaque:
    """Stands for an object that cannot travel (an array, a generator): it only comes back as itself."""


class OpaqueCallable(Opaque):
    """Stands for a function the bridge does not name (a lambda, a builtin): it comes back as itself, and cannot be called here."""

    def __call__(self, *args, **kwargs):
        raise TypeError("a function of the other side of the bridge: it cannot be called from here")


def _qual(cls):
    return f"{getattr(cls, '__module__', None)}:{getattr(cls, '__qualname__', None)}"


def _plain_name(name):
    """A name a message may use: an identifier, never a dunder or a name Python mangles."""
    return type(name) is str and _plain(name)


@functools.lru_cache(maxsize=4096)
def _plain(name):
    return name.isidentifier() and not name.startswith("__")


def _lab(module):
    return isinstance(module, str) and (module == "lab" or module.startswith("lab.")) and all(map(_plain_name, module.split(".")))


class Bridge:
    """One end of the bridge. `owned`: export name -> callable this side runs for the other."""

    def __init__(self, read_fd, write_fd, namespace, parity, timeout_error=TimeoutError, pure=(), logs=(), holds_logs=False):
        self.rfile = os.fdopen(read_fd, "rb", buffering=1 << 16)
        self.wfile = os.fdopen(write_fd, "wb", buffering=1 << 16)
        self.ns, self.parity, self.timeout_error = namespace, parity, timeout_error
        self.owned = {}
        # Exports the assignment declares pure (suite.py's PURE): a function of the state reachable from its arguments,
        # writing nothing. The server answers a call of one for every object of its argument's class at once; the
        # child keeps those answers while the state it would send stays byte for byte the same (Batch).
        self.pure, self.batch, self.speculating = frozenset(pure), None, False
        # Logs the assignment declares (suite.py's LOGS: "Class.field", a list the references only append to): the child
        # (holds_logs) keeps them and sends {"log": id} in their place; the server holds a Sink there, whose appends go
        # back with its next message ("logs": [[id, value], ...]). Class -> its log fields, found lazily.
        self.log_names, self.holds_logs, self.log_fields = collections.defaultdict(set), holds_logs, {}
        self.sends_logs = bool(logs)   # until a log is met twice in one message: from then on this side sends logs whole (_pack)
        for name in logs:
            owner, _, field = name.rpartition(".")
            self.log_names[owner].add(field)
        self.crossings, self.timer, self.cpu_limit = 0, None, 0.0   # calls made across; the server's CPU timer (serve_forever)
        self.exchange, self.depth = 0, 0
        # Kept for the pair's life: module:qualname -> what it names; class -> the names its instances' fields may
        # not take, whether its objects travel field by field, field names found settable. The server's namespace and
        # classes are fixed once its cells have run (it runs no student code, and no message writes a class or a
        # namespace); the child's may change, but they are the student's own.
        self.resolved, self.hidden, self.travelling, self.settable = {}, {}, {}, {}
        self._reset()

    def _reset(self):
        self.objs, self.ids, self.next_id = {}, {}, self.parity
        for sink in getattr(self, "sinks", {}).values():
            sink._live = False
        # A Sink's appends not sent yet; the values appended to logs in this exchange (each message carries them, as it
        # would the log); the Sinks of this exchange by id (never in objs: no message can name one); the child's log
        # ids of this exchange; the ids of lists that crossed whole in it (never a log after: the other side has them);
        # the log ids this message leaves out.
        self.appended, self.carried, self.sinks, self.log_ids, self.whole, self.marked = [], [], {}, set(), set(), set()

    # -- what a message may name -----------------------------------------------------------------
    def _resolve(self, qual):
        """A class or function *defined* in the notebook or in lab (never one they merely import), or None.

        It is looked up in the module's and classes' own __dict__, never with getattr, so no name reaches a
        property, a module __getattr__ or an attribute of a function."""
        if not isinstance(qual, str):
            return None
        if qual not in self.resolved:
            if len(self.resolved) >= CACHE_LIMIT:   # kept for the pair's life: a flood of names must not grow it
                self.resolved.clear()
            self.resolved[qual] = self._lookup(qual)
        return self.resolved[qual]

    def _lookup(self, qual):
        module, _, path = qual.partition(":")
        parts = path.split(".")
        if not all(map(_plain_name, parts)):
            return None
        if module == self.ns.get("__name__"):
            scope = self.ns
        elif _lab(module):
            try:
                scope = vars(importlib.import_module(module))
            except Exception:  # noqa: BLE001 - no such lab module
                return None
        else:
            return None
        found = None
        for part in parts:
            found = scope.get(part)
            if isinstance(found, staticmethod):
                found = found.__func__
            scope = vars(found) if isinstance(found, type) else {}
        defined = getattr(found, "__module__", None) == module and getattr(found, "__qualname__", None) == path
        return found if defined and isinstance(found, (type, types.FunctionType)) else None

    def _defined(self, obj):
        """True for a class or function the notebook or lab defines under its own name."""
        return self._resolve(_qual(obj)) is obj

    def _method(self, owner, name):
        """owner.name bound, if `name` is a plain function defined in the body of one of its notebook or lab classes."""
        if not _plain_name(name) or isinstance(owner, type):
            return None
        for cls in type(owner).__mro__:
            if name in vars(cls):
                fn = vars(cls)[name]
                ok = isinstance(fn, types.FunctionType) and self._defined(cls) and (
                    fn.__module__ == self.ns.get("__name__") or _lab(fn.__module__))
                return types.MethodType(fn, owner) if ok else None
        return None

    def _travels(self, value):
        """True for an object whose fields cross (an instance of a notebook or lab class, or a Mirror)."""
        kind = type(value)
        if kind not in self.travelling:   # its class is checked first: nothing of a foreign object's is looked up
            self.travelling[kind] = kind is Mirror or not issubclass(
                kind, (list, dict, set, collections.deque, BaseException, enum.Enum, type)) and self._defined(kind)
        return self.travelling[kind] and type(getattr(value, "__dict__", None)) is dict

    def _logs_of(self, cls):
        """The names of `cls`'s log fields: declared (LOGS) for this class, defined by the notebook under that name."""
        if cls not in self.log_fields:
            declared = self.log_names.get(getattr(cls, "__qualname__", None), ())
            ours = declared and getattr(cls, "__module__", None) == self.ns.get("__name__") and self._defined(cls)
            self.log_fields[cls] = frozenset(declared) if ours else frozenset()
        return self.log_fields[cls]

    def _log_id(self, value, graph):
        """The id this log field value crosses as ({"log": id}), or None: the child's own list (met nowhere else in this
        message), or a Sink of this exchange."""
        if not self.holds_logs:
            if type(value) is not Sink:
                return None
            if not value._live or self.sinks.get(value._rid) is not value:
                raise LogRead("a stand-in of a log kept past its exchange")
            return None if value._whole is not None else value._rid   # (_field then sends the list that replaced it)
        if type(value) is not list:
            return None
        rid = self._id(value)
        if rid in self.whole:
            return None   # it crossed whole in this exchange: the other side holds it as a list, and gets it so again
        if rid in graph:
            raise _Aliased()   # already in this message another way: the other side must get its contents
        self.marked.add(rid)
        self.log_ids.add(rid)
        return rid

    def _hidden(self, cls):
        """Names an instance field of `cls` may not take: what its classes define that is not data (methods,
        properties, classmethods, classes), dunders aside; a dataclass field is data even with a default."""
        if cls not in self.hidden:
            fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
            self.hidden[cls] = {name for klass in cls.__mro__ for name, attr in vars(klass).items()
                                if name not in fields and (callable(attr) or hasattr(type(attr), "__get__"))}
        return self.hidden[cls]

    def _settable(self, obj, names):
        """May a message set these fields of `obj`? Data fields of its class: no dunder, no name that hides a class attribute."""
        cls = type(obj)
        known = self.settable.setdefault(cls, set())   # names already found to be data fields of this class
        if names.keys() <= known:
            return True
        fresh = [name for name in names if name not in known]
        if not all(map(_plain_name, fresh)):
            return False
        hidden, own = (set(), {}) if cls is Mirror else (self._hidden(cls), vars(obj))
        if any(name in hidden and name not in own for name in fresh):
            return False
        if len(known) < CACHE_LIMIT:
            known.update(name for name in fresh if name not in hidden)
        return True

    # -- values --------------------------------------------------------------------------------
    def encode(self, value, graph):
        kind = type(value)
        if value is None or kind in (bool, int, str):
            return value
        if kind is float:
            return value if math.isfinite(value) else {"f": repr(value)}
        if kind in CONTAINERS or self.travelling.get(kind):   # the common case first: an object that crosses by reference
            return self._reference(value, graph)
        if kind in WRAPPED:
            return {WRAPPED[kind]: [self.encode(v, graph) for v in value]}
        if isinstance(value, enum.Enum):
            return {"e": _qual(kind), "v": self.encode(value.value, graph)}
        if isinstance(value, type):
            return {"c": _qual(value)}
        number = _number(value)
        if number is not NOT_A_NUMBER:
            return self.encode(number, graph)
        named = self._named(value, graph)
        return self._reference(value, graph) if named is None else named

    def _named(self, value, graph):
        """A bound method or a function a message may name, or None (it then crosses as a placeholder)."""
        if isinstance(value, types.MethodType):
            name = getattr(value.__func__, "__name__", None)
            method = self._method(value.__self__, name)
            if method is not None and method.__func__ is value.__func__:
                return {"m": self.encode(value.__self__, graph), "n": name}
        elif isinstance(value, types.FunctionType) and self._defined(value):
            module = value.__module__
            return {"g": value.__qualname__} if module == self.ns.get("__name__") else {"fn": _qual(value)}
        return None

    def _id(self, value):
        """The object's id in this exchange, given it the first time."""
        rid = self.ids.get(id(value))
        if rid is None or self.objs.get(rid) is not value:
            self.next_id = rid = self.next_id + 2
            self.objs[rid], self.ids[id(value)] = value, rid
        return rid

    def _reference(self, value, graph):
        """{"r": id}, with the object's contents in `graph` the first time this message meets it."""
        rid = self.ids.get(id(value))   # self._id(value), inline: the hottest path of a crossing
        if rid is None or self.objs.get(rid) is not value:
            self.next_id = rid = self.next_id + 2
            self.objs[rid], self.ids[id(value)] = value, rid
        if self.marked and rid in self.marked:
            raise _Aliased()   # a log this message leaves out, met another way
        if rid not in graph:
            graph[rid] = None   # placeholder first: cycles end here
            graph[rid] = self._shallow(value, graph)
        return {"r": rid}

    def _kind(self, value):
        """How an object travels: list, deque, dict, set, obj (its fields) or opaque (only as itself)."""
        kind = type(value)
        if kind in (list, dict, set):
            return kind.__name__
        if kind is collections.deque:
            return "deque"
        return "obj" if self._travels(value) else "opaque"

    def _shallow(self, value, graph):
        kind = type(value)
        if self.travelling.get(kind) and type(getattr(value, "__dict__", None)) is dict:   # the common case first
            return self._shallow_fields(value, kind, graph)
        if kind in SEQUENCES:
            if self.log_names and kind is list:
                self.whole.add(self.ids[id(value)])
            return self._shallow_sequence(value, kind, graph)
        if kind is dict:
            if set(map(type, value)) <= SCALARS and set(map(type, value.values())) <= SCALARS:
                return {"k": "dict", "s": list(value.items())}   # events, per-step counts: as they are
            return {"k": "dict", "v": [[self.encode(k, graph), self.encode(v, graph)] for k, v in value.items()]}
        if kind is set:
            return {"k": "set", "v": [self.encode(v, graph) for v in value]}
        if not self._travels(value):   # it stays on its side; the other side holds a placeholder that comes back as it
            return {"k": "opaque", **({"call": 1} if callable(value) else {})}
        return self._shallow_fields(value, kind, graph)

    def _shallow_fields(self, value, kind, graph):
        """An object that travels, field by field."""
        fields = value.__dict__
        if _flat(fields.values()):   # a record of numbers and strings (a request): its fields as they are
            return {"k": "obj", "c": _qual(kind), "s": list(fields.items())}
        logs = self._logs_of(kind) if self.sends_logs else ()
        if not logs:
            return {"k": "obj", "c": _qual(kind), "v": {str(k): v if type(v) in SCALARS else self.encode(v, graph) for k, v in fields.items()}}
        return {"k": "obj", "c": _qual(kind), "v": {str(k): v if type(v) in SCALARS else self._field(k, v, logs, graph)
                                                    for k, v in fields.items()}}

    def _field(self, name, value, logs, graph):
        log = self._log_id(value, graph) if name in logs else None
        if log is not None:
            return {"log": log}
        return self.encode(value._whole if type(value) is Sink else value, graph)

    def _shallow_sequence(self, value, kind, graph):
        """A list or a deque (with its maxlen); of scalars only (block tables, free lists), as it is."""
        name = SEQUENCES[kind]
        spec = {"k": name}
        if set(map(type, value)) <= SCALARS:
            spec["s"] = list(value)
        else:
            spec["v"] = [self.encode(v, graph) for v in value]
        if kind is not list:
            spec["n"] = value.maxlen
        return spec

    def decode(self, value):
        if not isinstance(value, dict):
            if isinstance(value, list):
                raise BridgeError("a bare list in a message")
            return value
        if "r" in value:
            return self.objs[value["r"]]
        for key, decoder in DECODERS:   # in this order: the first key a value holds says what it is
            if key in value:
                return decoder(self, value)
        raise BridgeError("an unknown value in a message")

    def _decode_enum(self, value):
        cls = self._resolve(value["e"])
        if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
            raise BridgeError("an unknown enum")
        return cls(self.decode(value["v"]))

    def _decode_class(self, value):
        cls = self._resolve(value["c"])
        if not isinstance(cls, type):
            raise BridgeError("an unknown class")
        return cls

    def _decode_method(self, value):
        owner = value["m"]
        if not (isinstance(owner, dict) and "r" in owner):
            raise BridgeError("a method of something other than an object")
        method = self._method(self.decode(owner), value.get("n"))
        if method is None:
            raise BridgeError("not a method that a notebook or lab class defines")
        return method

    def _decode_global(self, value):
        fn = self._resolve(f"{self.ns.get('__name__')}:{value['g']}")
        if fn is None:
            raise BridgeError("an unknown name")
        return fn

    def _decode_function(self, value):
        fn = self._resolve(value["fn"])
        if not isinstance(fn, types.FunctionType) or not _lab(fn.__module__):
            raise BridgeError("an unknown function")
        return fn

    def apply_graph(self, graph):
        """Create the objects this side has not seen, then write every object's contents in place."""
        for rid, spec in graph.items():
            if rid not in self.objs:
                obj = self._empty(spec)
                self.objs[rid], self.ids[id(obj)] = obj, rid
            elif self._kind(self.objs[rid]) != spec["k"]:
                raise BridgeError("an object sent back as something else")
            if spec["k"] == "list" and self.log_names:
                self.whole.add(rid)
                if rid in self.sinks:   # the child sends that log whole now: its Sink appends to it, and sends it so
                    self.sinks[rid]._whole = self.objs[rid]
        for rid, spec in graph.items():
            self._fill(self.objs[rid], spec)

    def _empty(self, spec):
        kind = spec["k"]
        if kind == "deque":
            return collections.deque(maxlen=spec["n"])
        if kind in ("list", "dict", "set"):
            return EMPTY[kind]()
        if kind == "opaque":
            return OpaqueCallable() if spec.get("call") else Opaque()
        if kind != "obj":
            raise BridgeError("an unknown kind of object")
        cls = self._resolve(spec["c"])
        if isinstance(cls, type) and not issubclass(cls, (BaseException, enum.Enum)):
            try:
                obj = object.__new__(cls)   # no constructor runs: the fields follow
            except TypeError:
                return Mirror()
            if self._travels(obj):
                return obj
        return Mirror()

    def _fill(self, obj, spec):
        kind = spec["k"]
        if kind == "opaque":
            return
        if kind == "obj":
            self._fill_fields(obj, spec)
            return
        values = self._contents(kind, spec)
        if kind == "list":
            obj[:] = values
        else:
            obj.clear()
            (obj.extend if kind == "deque" else obj.update)(values)

    def _fill_fields(self, obj, spec):
        plain = "s" in spec   # plain fields, sent as they are
        fields = dict(spec["s"]) if plain else spec["v"]
        if plain and not (set(map(type, fields)) <= NAMES and _flat(fields.values())):
            raise BridgeError("a plain object holds something else")
        if not self._settable(obj, fields):
            raise BridgeError("a field that is not data of its class")
        if not plain:
            fields = {k: v if type(v) in SCALARS else self._log(obj, k, v["log"]) if type(v) is dict and "log" in v
                      else self.decode(v) for k, v in fields.items()}   # decode(v) is v for these
        obj.__dict__.clear()
        obj.__dict__.update(fields)

    def _log(self, obj, name, rid):
        """The value of log field `name` of `obj`, sent as {"log": rid}: on the child its own list of that id, on the
        server that list's Sink."""
        if name not in self._logs_of(type(obj)) or type(rid) is not int:
            raise BridgeError("a log the assignment does not declare")
        if self.holds_logs:
            if rid not in self.log_ids:
                raise BridgeError("a log this side did not send")
            return self.objs[rid]
        if rid in self.objs or rid in self.whole:
            raise BridgeError("a log of an id that names something else")
        log = self.sinks.get(rid)
        if log is None:
            log = self.sinks[rid] = Sink(self, rid)
        return log

    def _append_logs(self, entries):
        """Append what the server's Sinks took to the child's logs, in the order they were appended; they are carried
        with every later message of the exchange."""
        if entries and not self.holds_logs:
            raise BridgeError("appends to a log this side does not keep")
        for rid, value in entries:
            if rid not in self.log_ids or type(self.objs.get(rid)) is not list:
                raise BridgeError("an append to something that is not a log")
            value = self.decode(value)
            self.objs[rid].append(value)
            self.carried.append(value)

    def _contents(self, kind, spec):
        """The values of a list, deque or set, or the (key, value) pairs of a dict."""
        if "s" not in spec:
            if kind == "dict":
                return [(self.decode(k), self.decode(v)) for k, v in spec["v"]]
            return [v if type(v) in SCALARS else self.decode(v) for v in spec["v"]]
        values = list(map(tuple, spec["s"])) if kind == "dict" else spec["s"]   # scalars only, as they are
        flat = itertools.chain.from_iterable(values) if kind == "dict" else values
        if not set(map(type, flat)) <= SCALARS:
            raise BridgeError("a container of scalars holds something else")
        return values

    # -- messages ------------------------------------------------------------------------------
    def send(self, message, graph=None):
        """Write one message; `graph`: its graph already encoded (not encoded twice)."""
        if graph is None:
            data = ENCODER.encode(message)
        else:
            data = ENCODER.encode({k: v for k, v in message.items() if k != "graph"})[:-1] + ',"graph":' + graph + "}"
        self.wfile.write(data.encode() + b"\n")
        self.wfile.flush()

    def receive(self):
        line = self.rfile.readline(MAX_MESSAGE + 1)
        if not line:
            raise EOFError("the other side of the bridge closed")
        if len(line) > MAX_MESSAGE:
            raise BridgeError("a message over the size limit")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise BridgeError("a message that is not JSON") from None
        if type(message) is not dict:
            raise BridgeError("a message that is not an object")
        return message

    def _pack(self, op, roots, **extra):
        outer, self.marked = self.marked, set()   # a message encoded while another is (student code ran in between)
        try:
            graph, encoded = self._encode_all(roots)
        except _Aliased:   # a log is also reachable another way: from now on this side sends logs whole
            self.sends_logs = False
            self.marked = set()
            graph, encoded = self._encode_all(roots)
        finally:
            self.marked = outer
        message = {"x": self.exchange, "op": op, "roots": encoded, "graph": graph, **extra}
        if self.appended:
            message["logs"] = [[rid, self.encode(value, graph)] for rid, value in self.appended]
            self.carried += [value for _, value in self.appended]
            self.appended = []
        return message

    def _encode_all(self, roots):
        """The message's graph and its roots, with the values appended to logs in this exchange carried as extra roots."""
        graph = {}
        encoded = [self.encode(root, graph) for root in roots]
        if self.carried:
            encoded.append({"carry": [self.encode(value, graph) for value in self.carried]})
        return graph, encoded

    def _unpack(self, message, count):
        try:
            self.apply_graph({int(k): v for k, v in message["graph"].items()})
            roots = message["roots"]
            if roots and type(roots[-1]) is dict and "carry" in roots[-1]:   # decoded to check them: apply_graph wrote them
                [self.decode(value) for value in roots.pop()["carry"]]
            roots = [self.decode(root) for root in roots]
            self._append_logs(message.get("logs") or ())
        except BridgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - a malformed message
            raise BridgeError(f"a malformed message ({type(exc).__name__})") from None
        if len(roots) != count:
            raise BridgeError("a message with the wrong number of values")
        return roots

    def call(self, target, args, kwargs):
        """Run export `target` on the other side; nested calls are served meanwhile."""
        self.crossings += 1   # counted even when refused: a reference that catches the refusal still tried
        if self.speculating:   # before anything of this exchange changes: the batch being made stays intact
            raise BridgeError("a pure export called across the bridge")
        top = self.depth == 0
        if top:
            self.exchange += 2
            self._reset()
        if self.depth >= MAX_DEPTH:
            raise RecursionError("calls nest too deep across TODOs")
        self.depth += 1
        try:
            message = self._pack("call", [args, kwargs], target=target)
            sent = ENCODER.encode(message["graph"]) if top and target in self.pure else None
            answer = self.batch.answer(target, sent, message["roots"]) if sent and self.batch else None
            if answer is not None:   # the reply the server would send, received for this state already
                return self._unpack(answer, 3)[2]
            # A batch holds only until the next message crosses: the server's answers depend on the message and on its
            # own classes, which a call can change (a class passed as an argument is written to like an object).
            self.batch = None
            self.send(message, sent)
            return self._reply(target, sent)
        except (Abort, BridgeError, EOFError):
            raise
        except BaseException:
            self._abort()   # the other side is waiting on this exchange: tell it to unwind
            raise
        finally:
            self.depth -= 1
            if top:
                self._reset()

    def _reply(self, target, sent):
        """The value of this exchange's call (serving the other side's calls until it comes), keeping a batch it brings."""
        while True:
            message = self.receive()
            if message.get("x") != self.exchange:
                continue   # left over from an exchange this side abandoned
            op = message.get("op")
            if op == "call":
                self._serve(message)
                continue
            if op == "abort":
                raise Abort()
            if op == "return":
                result = self._unpack(message, 3)[2]
                batch = Batch.of(target, sent, message) if sent is not None else None
                self.batch = batch
                return result
            if op == "raise":
                if message.get("roots"):
                    self._unpack(message, 2)
                raise self._error(message.get("error"), message.get("text"))

    def _abort(self):
        try:
            self.send({"x": self.exchange, "op": "abort"})
        except OSError:
            pass

    def _error(self, name, text):
        if name == "timeout":
            return self.timeout_error()
        name, text = (name if isinstance(name, str) else ""), str(text)[:300]
        module, _, short = name.rpartition(":")
        cls = vars(__import__("builtins")).get(short) if module == "builtins" else self._resolve(name)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = type(short if short.isidentifier() else "RemoteError", (RuntimeError,), {})  # the type name is what a driver reports
        return cls(text)

    def _serve(self, message):
        """Run one call from the other side and reply; an Abort unwinds without a reply.

        Only an export of this side answers; for any other target nothing of the message is decoded and nothing
        of this side is sent back."""
        target = message.get("target")
        fn = self.owned.get(target) if isinstance(target, str) else None
        if fn is None:
            self._fail("BridgeError", "no such function across the bridge")
            return
        try:
            args, kwargs = self._unpack(message, 2)
            if type(args) is not tuple or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
                raise BridgeError("a malformed call")
        except BridgeError as exc:   # nothing of it was run
            self._fail("BridgeError", str(exc))
            return
        top, crossings = self.depth == 0, self.crossings
        self.depth += 1
        try:
            result = fn(*args, **kwargs)
        except Abort:
            raise
        except self.timeout_error:
            self._fail("timeout")
            return
        except Exception as exc:  # noqa: BLE001 - the caller's side raises the same type
            self.send(self._pack("raise", [args, kwargs], error=_qual(type(exc)), text=str(exc)[:300]))
            return
        except BaseException:
            self._abort()
            raise
        finally:
            self.depth -= 1
        reply, graph = self._pack("return", [args, kwargs, result]), None
        if top and target in self.pure and self.crossings == crossings:   # one that called across is never batched
            graph = self._add_batch(reply, fn, args, kwargs, message["graph"])
        self.send(reply, graph)

    def _add_batch(self, reply, fn, args, kwargs, received):
        """Put in `reply` the values of the pure export `fn` for the other objects of its item's class, if it may; return
        the reply's graph as it was encoded to check the state (send does not encode it again), or None."""
        try:
            batch, graph = self._speculate(fn, args, kwargs, received, reply) or (None, None)
        except (self.timeout_error, Exception):  # noqa: BLE001 - the call's time ran out, or its reply will not encode
            batch, graph = None, None
        finally:
            self.speculating = False
        if not batch:
            return None
        reply["batch"] = batch
        return graph

    def _speculate(self, fn, args, kwargs, received, reply):
        """([[id, value], ...] of fn(owner, other) for the other objects of the item's class, the reply's graph encoded),
        or None if anything wrote."""
        # A later call in the same state then gets, from the child's Batch, the reply this side would send: it would
        # decode the same state, and a pure export's value depends on that state alone. Whether fn wrote is seen in the
        # state's encoding: after the call itself (as it left it) and after calling ahead.
        before = self._unwritten(args, kwargs, received, reply)
        if before is None:
            return None
        room = MAX_MESSAGE - len(before) - len(ENCODER.encode(reply["roots"])) - 4096   # the batch fits in the reply
        found, kind = [], type(args[1])
        self.speculating = True
        for rid, obj in list(self.objs.items()):
            if room <= 0 or len(found) >= MAX_BATCH or self._time_short():
                break
            ahead = self._ahead(fn, args[0], rid, obj) if type(obj) is kind and obj is not args[1] else None
            if ahead is not None and ahead[1] <= room:
                found.append(ahead[0])
                room -= ahead[1]
        if self.appended:   # a call ahead appended to a log: a write, and one the child must never get
            self.appended = []
            return None
        after = {}
        for root in (args, kwargs):
            self.encode(root, after)
        return (found, before) if ENCODER.encode(after) == before else None   # before: the reply's graph, byte for byte

    def _unwritten(self, args, kwargs, received, reply):
        """The received state's encoding, if the call was fn(owner, item) and left that state as it came; else None."""
        if kwargs or type(args) is not tuple or len(args) != 2 or not self._travels(args[1]) or reply.get("logs"):
            return None   # (an append to a log is a write)
        before = ENCODER.encode(received)
        if len(self.objs) != len(received) or ENCODER.encode(reply["graph"]) != before:
            return None   # it wrote, or made an object (its reply is more than this state)
        return before

    def _ahead(self, fn, owner, rid, obj):
        """([id, value], its size in the reply) of fn(owner, obj), or None: it raised, tried to call across, or will not do."""
        crossings = self.crossings
        try:
            value = fn(owner, obj)
        except self.timeout_error:
            raise
        except Exception:  # noqa: BLE001 - the child asks for it, and gets the error, if it ever needs it
            return None
        if self.crossings != crossings:   # refused, and perhaps caught by the reference: its value is not the real one
            return None
        graph = {}
        try:
            encoded = self.encode(value, graph)
            size = len(ENCODER.encode([rid, encoded])) + 1
        except Exception:  # noqa: BLE001 - an int of over 4,300 digits, say: its own call will say so
            return None
        return None if graph else ([rid, encoded], size)   # a value with an object in it goes only as its own call's

    def _time_short(self):
        """True once less than half of the served call's CPU time is left: calling ahead never costs the call itself."""
        left = signal.getitimer(self.timer)[0] if self.timer is not None else 0.0
        return 0 < left < self.cpu_limit / 2

    def _fail(self, error, text=""):
        """End this exchange with an error and no state sent back (a timeout, a malformed call)."""
        self.appended = []   # nor what was appended to a log
        self.send({"x": self.exchange, "op": "raise", "roots": [], "graph": {}, "error": error, "text": text})

    def serve_forever(self, cpu_limit, timer):
        """The server's loop: answer top-level calls until the child closes its end; each gets `cpu_limit` s of CPU.

        Nothing a message holds ends it: a malformed exchange fails, and the next one is served."""
        self.timer, self.cpu_limit = timer, cpu_limit
        while True:
            try:
                if not self._serve_next(cpu_limit, timer):
                    return
            except self.timeout_error:
                continue   # the alarm went off just as a call ended: there is nothing left to answer
            except OSError:
                return   # a broken channel: the child has gone

    def _serve_next(self, cpu_limit, timer):
        """Answer the next top-level call; False once the child has closed its end."""
        try:
            message = self.receive()
        except EOFError:
            return False
        except BridgeError:
            return True   # not a call: there is no exchange to answer
        if message.get("op") != "call":
            return True
        self.exchange = message.get("x")
        self._reset()
        signal.setitimer(timer, cpu_limit)
        try:
            self._serve(message)
        except Abort:
            pass
        except self.timeout_error:
            self._fail("timeout")
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001 - a malformed nested call, a value that would not encode
            self._fail("BridgeError", f"a malformed exchange ({type(exc).__name__})")
        finally:
            signal.setitimer(timer, 0)
            self._reset()
            self.speculating = False   # even if the alarm went off in _add_batch's own finally
        return True


class Batch:
    """The child's copy of a pure export's batch: the replies to calls of `target` on each object of the batch, valid
    while the state the child would send is byte for byte `sent` (its reply: the same state, and that object's value)."""

    def __init__(self, target, sent, call, values, graph):
        self.target, self.sent, self.call, self.values, self.graph = target, sent, call, values, graph

    @classmethod
    def of(cls, target, sent, reply):
        """The batch a reply brings (with its own call's value), or None."""
        batch, roots = reply.get("batch"), reply["roots"]
        on = _call_on(roots)
        try:
            values = {rid: value for rid, value in batch}
        except (TypeError, ValueError):   # no batch
            return None
        if on is None:
            return None
        owner, item = on
        values[item] = roots[2]
        return cls(target, sent, (owner, roots[1]), values, reply["graph"])

    def answer(self, target, sent, roots):
        """The reply to this call, if it is one of the batch's in the batch's state; else None."""
        on = _call_on(roots) if target == self.target and sent == self.sent else None
        if on is None:
            return None
        owner, item = on
        if (owner, roots[1]) != self.call or item not in self.values:
            return None
        return {"roots": [roots[0], roots[1], self.values[item]], "graph": self.graph}


def _call_on(roots):
    """The ids (owner, item) of a call's two objects, if its roots are a call on two objects (owner, item); else None."""
    try:
        owner, item = (root["r"] for root in roots[0]["t"])
    except (TypeError, KeyError, ValueError, IndexError):
        return None
    return owner, item


# What a value that is not an {"r": id} decodes to, by the first of these keys it holds.
DECODERS = (
    ("t", lambda bridge, value: tuple(bridge.decode(v) for v in value["t"])),
    ("z", lambda bridge, value: frozenset(bridge.decode(v) for v in value["z"])),
    ("f", lambda bridge, value: float(value["f"])),
    ("e", Bridge._decode_enum),
    ("c", Bridge._decode_class),
    ("m", Bridge._decode_method),
    ("g", Bridge._decode_global),
    ("fn", Bridge._decode_function),
)
