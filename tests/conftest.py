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
FONT_STATES = ("installed", "hidden")  # the machine's CJK fonts as installed, and hidden with LAB_HIDE_CJK_FONTS=1
STAND_IN_CJK = "Noto Sans CJK SC"  # the name lab.fonts looks for first


def font_env(state: str) -> dict[str, str]:
    """os.environ for a process that sees the CJK fonts in `state` ("installed" or "hidden")."""
    from lab.fonts import HIDE_ENV

    return os.environ | {HIDE_ENV: "1" if state == "hidden" else "0"}


def stand_in_cjk_font_env(folder: Path) -> dict[str, str]:
    """An environment whose processes find a CJK font on any machine: DejaVu Sans renamed to a CJK family.

    It has no Hanzi, so drawn Chinese is tofu (harmless, only PNGs and stderr show it); lab.fonts finds it, so
    label() takes the Chinese path exactly as with a real CJK font. Matplotlib gets a fresh cache to list it.
    """
    from fontTools.ttLib import TTFont

    fonts = folder / "data" / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    face = TTFont(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    for record in face["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = STAND_IN_CJK
        elif record.nameID == 6:
            record.string = STAND_IN_CJK.replace(" ", "")
    face.save(fonts / "StandInCJK.ttf")
    return font_env("installed") | {"XDG_DATA_HOME": str(folder / "data"), "MPLCONFIGDIR": str(folder / "mpl")}


def as_saved(assignment: str, answers: dict, form: str, folder: Path) -> dict:
    """The answers after a round trip through a saved file, read exactly as `make autograde` reads it."""
    from grader import examples, masters, paths, submission

    path = examples.write({"student": examples.filled(assignment, answers)}, folder, form=form)[0]
    nb = submission.read(path)
    submission.identify(nb, assignment, [n for n in paths.assignment_names() if n != assignment])
    return submission.prepare(nb, examples.release(assignment), masters.answer_ids(masters.nbgrader_source(assignment))).answers
