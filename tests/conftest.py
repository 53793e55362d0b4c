import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

FORMS = ("lines", "string")  # as nbformat.write / JupyterLab save, and one string per source


def as_saved(assignment: str, answers: dict, form: str, folder: Path) -> dict:
    """The answers after a round trip through a saved file, read exactly as `make autograde` reads it."""
    from grader import examples, masters, paths, submission

    path = examples.write({"student": examples.filled(assignment, answers)}, folder, form=form)[0]
    nb = submission.read(path)
    submission.identify(nb, assignment, [n for n in paths.assignment_names() if n != assignment])
    return submission.prepare(nb, examples.release(assignment), masters.answer_ids(masters.nbgrader_source(assignment))).answers
