"""A failing case of __NAME__ as code: each op is a call of an exercise function."""
from grader.snippets import function_call

KIND = "batching"  # the shape of its ops, as grader/shrink.py knows it: [name, [args...]]


def call(op: list) -> str:
    """One op, [name, [args...]], as the call it stands for."""
    return function_call(op)
