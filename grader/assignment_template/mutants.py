"""Broken variants of __NAME__'s reference answers: each must lose points on its own TODO and no other."""
from grader.contract import Mutant

MUTANTS = [
    # One bug, one rule: the first request alone is right, so "no requests ..., one request its own" still holds.
    Mutant("todo1", "counts the first request only", "for request in requests)", "for request in requests[:1])"),
    Mutant("todo2", "ties go to the highest id", '(request["arrival"], request["id"])', '(request["arrival"], -request["id"])'),
]
