# The bridge between a grading child and its reference server. Sent as text to both processes (like
# child.py, it imports nothing from grader/). The child runs the student's answer for one TODO; the server
# runs the reference answers of the other TODOs. A call from one side to a function the other side owns
# travels as plain data: the objects reachable from its arguments go across, the callee runs, and the
# objects reachable from the arguments and the result come back and are written into the caller's objects
# in place. So the child never holds a line of another TODO's reference; it can only ask for its results.
#
# Message: one JSON line {"x": exchange, "op": "call" | "return" | "raise" | "abort", ...}.
# Values: JSON scalars; {"f": repr} non-finite float; {"t": [...]} tuple; {"z": [...]} frozenset;
# {"e": class, "v": value} enum member; {"c": class} a class; {"r": id} an object in the message's graph;
# {"g": name} a function of the notebook's namespace; {"fn": module:qualname} a function of lab;
# {"m": value, "n": name} a bound method; {"h": id} any other callable, called back on its owner's side.
import collections
import enum
import functools
import importlib
import json
import math
import numbers
import os
import signal
import types

MAX_DEPTH = 60          # nested calls across the bridge; deeper is a runaway recursion
MAX_MESSAGE = 32 << 20  # bytes of one message


class BridgeError(RuntimeError):
    """The bridge could not carry a value or a message."""


class Abort(BaseException):
    """The other side gave up on this exchange (its time ran out): unwind without a reply."""


SCALARS = {int, str, bool, type(None)}   # JSON carries these as they are
CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)


class Mirror:
    """Stands for an object whose class this side does not have; it carries the fields."""


class Opaque:
    """Stands for an object that cannot travel (an array, a generator): it only comes back as itself."""


def _qual(cls):
    return f"{cls.__module__}:{cls.__qualname__}"


class Bridge:
    """One end of the bridge. `owned`: export name -> callable this side runs for the other."""

    def __init__(self, read_fd, write_fd, namespace, parity, timeout_error=TimeoutError):
        self.rfile = os.fdopen(read_fd, "rb", buffering=1 << 16)
        self.wfile = os.fdopen(write_fd, "wb", buffering=1 << 16)
        self.ns, self.parity, self.timeout_error = namespace, parity, timeout_error
        self.owned = {}
        self.exchange, self.depth = 0, 0
        self._reset()

    def _reset(self):
        self.objs, self.ids, self.handles, self.next_id = {}, {}, {}, self.parity

    # -- values --------------------------------------------------------------------------------
    def _new_id(self, obj):
        self.next_id += 2
        self.objs[self.next_id], self.ids[id(obj)] = obj, self.next_id
        return self.next_id

    def encode(self, value, graph):
        kind = type(value)
        if value is None or kind in (bool, int, str):
            return value
        if kind is float:
            return value if math.isfinite(value) else {"f": repr(value)}
        if kind is tuple:
            return {"t": [self.encode(v, graph) for v in value]}
        if kind is frozenset:
            return {"z": [self.encode(v, graph) for v in value]}
        if isinstance(value, enum.Enum):
            return {"e": _qual(kind), "v": self.encode(value.value, graph)}
        if isinstance(value, type):
            return {"c": _qual(value)}
        if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
            return self.encode(value.item(), graph)   # numpy scalars travel as Python numbers
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return self.encode(float(value), graph)
        if isinstance(value, types.MethodType) and not isinstance(value.__self__, type):
            return {"m": self.encode(value.__self__, graph), "n": value.__func__.__name__}
        if isinstance(value, CALLABLES):
            return self._callable(value)
        rid = self.ids.get(id(value))
        if rid is None or self.objs.get(rid) is not value:
            rid = self._new_id(value)
        if rid not in graph:
            graph[rid] = None   # placeholder first: cycles end here
            graph[rid] = self._shallow(value, graph)
        return {"r": rid}

    def _callable(self, fn):
        name, module = getattr(fn, "__name__", None), getattr(fn, "__module__", None) or ""
        if module == self.ns.get("__name__") and name and self.ns.get(name) is fn:
            return {"g": name}
        if (module == "lab" or module.startswith("lab.")) and "<" not in getattr(fn, "__qualname__", "<"):
            return {"fn": f"{module}:{fn.__qualname__}"}
        handle = self._new_id(fn)
        self.handles[handle] = fn
        return {"h": handle}

    def _shallow(self, value, graph):
        kind = type(value)
        if kind in (list, collections.deque) and set(map(type, value)) <= SCALARS:  # block tables, free lists: as they are
            return {"k": "list" if kind is list else "deque", "s": list(value), **({"n": value.maxlen} if kind is not list else {})}
        if kind is dict and set(map(type, value)) <= SCALARS and set(map(type, value.values())) <= SCALARS:
            return {"k": "dict", "s": list(value.items())}   # events, per-step counts: as they are
        if kind is list:
            return {"k": "list", "v": [self.encode(v, graph) for v in value]}
        if kind is collections.deque:
            return {"k": "deque", "v": [self.encode(v, graph) for v in value], "n": value.maxlen}
        if kind is dict:
            return {"k": "dict", "v": [[self.encode(k, graph), self.encode(v, graph)] for k, v in value.items()]}
        if kind is set:
            return {"k": "set", "v": [self.encode(v, graph) for v in value]}
        fields = getattr(value, "__dict__", None)
        if type(fields) is not dict or isinstance(value, (list, dict, set, collections.deque, BaseException)):
            return {"k": "opaque"}   # it stays on its side; the other side holds a placeholder that comes back as it
        return {"k": "obj", "c": _qual(kind), "v": {str(k): self.encode(v, graph) for k, v in fields.items()}}

    def _resolve(self, qual):
        """A class or function *defined* in the notebook or in lab (never one they merely import)."""
        module, _, path = qual.partition(":")
        if module == self.ns.get("__name__"):
            found, parts = self.ns.get(path.split(".")[0]), path.split(".")[1:]
        elif module == "lab" or module.startswith("lab."):
            found, parts = importlib.import_module(module), path.split(".")
        else:
            return None
        for part in parts:
            found = getattr(found, part, None)
        defined = getattr(found, "__module__", None) == module and getattr(found, "__qualname__", None) == path
        return found if defined and isinstance(found, (type, types.FunctionType)) else None

    def decode(self, value):
        if not isinstance(value, dict):
            if isinstance(value, list):
                raise BridgeError("a bare list in a message")
            return value
        if "r" in value:
            return self.objs[value["r"]]
        if "t" in value:
            return tuple(self.decode(v) for v in value["t"])
        if "z" in value:
            return frozenset(self.decode(v) for v in value["z"])
        if "f" in value:
            return float(value["f"])
        if "e" in value:
            cls = self._resolve(value["e"])
            if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
                raise BridgeError(f"unknown enum {value['e']}")
            return cls(self.decode(value["v"]))
        if "c" in value:
            cls = self._resolve(value["c"])
            if not isinstance(cls, type):
                raise BridgeError(f"unknown class {value['c']}")
            return cls
        if "m" in value:
            owner = value["m"]
            if not (isinstance(owner, dict) and "r" in owner):
                raise BridgeError("a method of something other than an object")
            return getattr(self.decode(owner), value["n"])
        if "g" in value:
            fn = self.ns.get(value["g"])
            if not (isinstance(fn, (type, types.FunctionType)) and fn.__module__ == self.ns.get("__name__")):
                raise BridgeError(f"unknown name {value['g']}")
            return fn
        if "fn" in value:
            fn = self._resolve(value["fn"])
            if fn is None:
                raise BridgeError(f"unknown function {value['fn']}")
            return fn
        if "h" in value:
            handle = value["h"]
            if handle in self.handles:
                return self.handles[handle]
            return lambda *args, **kwargs: self.call(("h", handle), args, kwargs)
        raise BridgeError("an unknown value in a message")

    def apply_graph(self, graph):
        """Create the objects this side has not seen, then write every object's contents in place."""
        for rid, spec in graph.items():
            if rid not in self.objs:
                obj = self._empty(spec)
                self.objs[rid], self.ids[id(obj)] = obj, rid
        for rid, spec in graph.items():
            self._fill(self.objs[rid], spec)

    def _empty(self, spec):
        kind = spec["k"]
        if kind == "deque":
            return collections.deque(maxlen=spec["n"])
        if kind in ("list", "dict", "set", "opaque"):
            return {"list": list, "dict": dict, "set": set, "opaque": Opaque}[kind]()
        cls = self._resolve(spec["c"])
        if isinstance(cls, type) and not issubclass(cls, (BaseException, enum.Enum)):
            try:
                return object.__new__(cls)   # no constructor runs: the fields follow
            except TypeError:
                pass
        return Mirror()

    def _fill(self, obj, spec):
        kind = spec["k"]
        if kind == "opaque":
            return
        if kind == "obj":
            fields = {k: self.decode(v) for k, v in spec["v"].items()}
            obj.__dict__.clear()
            obj.__dict__.update(fields)
            return
        if "s" in spec:   # scalars only, sent as they are
            values = [tuple(pair) for pair in spec["s"]] if kind == "dict" else spec["s"]
            flat = [v for pair in values for v in pair] if kind == "dict" else values
            if not set(map(type, flat)) <= SCALARS:
                raise BridgeError("a container of scalars holds something else")
        elif kind == "dict":
            values = [(self.decode(k), self.decode(v)) for k, v in spec["v"]]
        else:
            values = [self.decode(v) for v in spec["v"]]
        if kind == "list":
            obj[:] = values
        else:
            obj.clear()
            (obj.extend if kind == "deque" else obj.update)(values)

    # -- messages ------------------------------------------------------------------------------
    def send(self, message):
        data = json.dumps(message, separators=(",", ":")).encode()
        self.wfile.write(data + b"\n")
        self.wfile.flush()

    def receive(self):
        line = self.rfile.readline(MAX_MESSAGE + 1)
        if not line:
            raise EOFError("the other side of the bridge closed")
        if len(line) > MAX_MESSAGE:
            raise BridgeError("a message over the size limit")
        return json.loads(line)

    def _pack(self, op, roots, **extra):
        graph = {}
        encoded = [self.encode(root, graph) for root in roots]
        return {"x": self.exchange, "op": op, "roots": encoded, "graph": graph, **extra}

    def _unpack(self, message):
        try:
            self.apply_graph({int(k): v for k, v in message["graph"].items()})
            return [self.decode(root) for root in message["roots"]]
        except BridgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - a malformed message
            raise BridgeError(f"a malformed message ({type(exc).__name__})") from None

    def call(self, target, args, kwargs):
        """Run `target` (an export name, or ("h", handle)) on the other side; nested calls are served meanwhile."""
        top = self.depth == 0
        if top:
            self.exchange += 2
            self._reset()
        if self.depth >= MAX_DEPTH:
            raise RecursionError("calls nest too deep across TODOs")
        self.depth += 1
        try:
            self.send(self._pack("call", [args, kwargs], target=target))
            while True:
                message = self.receive()
                if message.get("x") != self.exchange:
                    continue   # left over from an exchange this side abandoned
                if message["op"] == "call":
                    self._serve(message)
                    continue
                if message["op"] == "abort":
                    raise Abort()
                roots = self._unpack(message)
                if message["op"] == "return":
                    return roots[2]
                raise self._error(message["error"], message["text"])
        except (Abort, BridgeError, EOFError):
            raise
        except BaseException:
            self._abort()   # the other side is waiting on this exchange: tell it to unwind
            raise
        finally:
            self.depth -= 1
            if top:
                self._reset()

    def _abort(self):
        try:
            self.send({"x": self.exchange, "op": "abort"})
        except OSError:
            pass

    def _error(self, name, text):
        if name == "timeout":
            return self.timeout_error()
        module, _, short = name.partition(":")
        cls = getattr(__import__("builtins"), short, None) if module == "builtins" else self._resolve(name)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = type(name.rpartition(":")[2] or "RemoteError", (RuntimeError,), {})  # the type name is what a driver reports
        return cls(text)

    def _serve(self, message):
        """Run one call from the other side and reply; an Abort unwinds without a reply."""
        args, kwargs = self._unpack(message)
        target = message["target"]
        fn = self.handles.get(target[1]) if isinstance(target, list) else self.owned.get(target)
        self.depth += 1
        try:
            if fn is None:
                raise BridgeError(f"nothing here answers {target!r}")
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
        self.send(self._pack("return", [args, kwargs, result]))

    def _fail(self, error, text=""):
        """End this exchange with an error and no state sent back (a timeout, a malformed call)."""
        self.send({"x": self.exchange, "op": "raise", "roots": [], "graph": {}, "error": error, "text": text})

    def serve_forever(self, cpu_limit, timer):
        """The server's loop: answer top-level calls until the child closes its end; each gets `cpu_limit` s of CPU."""
        while True:
            try:
                message = self.receive()
            except EOFError:
                return
            if message.get("op") != "call":
                continue
            self.exchange = message.get("x")
            self._reset()
            signal.setitimer(timer, cpu_limit)
            try:
                self._serve(message)
            except Abort:
                pass
            except self.timeout_error:
                self._fail("timeout")
            except BridgeError as exc:   # a malformed call fails; nothing of it was run
                self._fail("BridgeError", str(exc))
            except OSError:
                return   # a broken channel: the child has gone
            finally:
                signal.setitimer(timer, 0)
                self._reset()

