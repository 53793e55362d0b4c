"""Broken variants of __NAME__'s reference answers: each must lose points on its own TODO and no other."""
from grader.mutants import Mutant

MUTANTS = [
    Mutant("todo1", "forgets the output tokens", 'request["prompt"] + request["output"]', 'request["prompt"]'),
    Mutant("todo2", "ties go to the highest id", '(request["arrival"], request["id"])', '(request["arrival"], -request["id"])'),
]
