"""The CJK fonts that draw Chinese plot labels: an installed one if matplotlib's font manager finds one, and behind
it (or alone) the subset of Noto Sans CJK SC that lab ships (lab/cjk_font/, SIL Open Font License 1.1: OFL.txt there).

Only text drawn into a figure depends on this: printed text follows the language alone (lab.i18n.tr).
LAB_HIDE_CJK_FONTS=1 hides the *installed* CJK fonts from this process, so that a machine with one draws exactly
as a fresh machine without one does (the tests run both states); the shipped subset is never hidden, so zh figures
are Chinese on any machine (Colab and Kaggle have no CJK font).

The subset covers every character lab.i18n can put into a figure (drawn_characters()). After a change to the
Chinese strings, rebuild it from the full font (tests/lab/test_cjk_font.py fails until then):

    python -m lab.fonts subset NotoSansCJK-Regular.ttc     # or NotoSansCJKsc-Regular.otf; `make cjk-font`
"""
from __future__ import annotations

import functools
import os
import re
import string
import sys
from pathlib import Path

HIDE_ENV = "LAB_HIDE_CJK_FONTS"

# Simplified Chinese faces first; Debian's fonts-noto-cjk registers its .ttc as "Noto Sans CJK JP",
# which covers every Hanzi the labels use.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
             "Noto Sans CJK JP", "Noto Sans CJK TC", "Source Han Sans CN", "SimHei", "Microsoft YaHei",
             "PingFang SC", "Heiti SC", "Arial Unicode MS")

# The shipped subset. Its family name is its own (an OFL Modified Version keeps no Reserved Font Name), so it is
# never mistaken for an installed Noto Sans CJK.
SHIPPED_DIR = Path(__file__).with_name("cjk_font")
SHIPPED_FONT = SHIPPED_DIR / "LabCJKSubset-Regular.otf"
SHIPPED_LICENSE = SHIPPED_DIR / "OFL.txt"
SHIPPED_FAMILY = "Lab CJK SC Subset"


def cjk_fonts_hidden() -> bool:
    """True when LAB_HIDE_CJK_FONTS (read at each call) asks this process to act as if no CJK font were installed."""
    return os.environ.get(HIDE_ENV, "").strip() not in ("", "0")


def find_cjk_font(candidates: tuple[str, ...] = CJK_FONTS) -> str | None:
    """The first installed font family among `candidates`, or None (always None while the fonts are hidden).

    The shipped subset is not an installed font: see cjk_families()."""
    if cjk_fonts_hidden():
        return None
    from matplotlib import font_manager

    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((name for name in candidates if name in installed), None)


def register_shipped_font() -> str | None:
    """Add lab's subset to matplotlib's font manager (once per process) and return its family; None if the file is
    missing (a broken install), so that labels stay English rather than turning into tofu boxes."""
    if not SHIPPED_FONT.is_file():
        return None
    from matplotlib import font_manager

    if not any(entry.name == SHIPPED_FAMILY for entry in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(SHIPPED_FONT))
    return SHIPPED_FAMILY


def cjk_families(candidates: tuple[str, ...] = CJK_FONTS) -> list[str]:
    """The families that draw Chinese, in order: an installed CJK font (if one is found), then the shipped subset
    (registered on first use). Empty only without either."""
    return [name for name in (find_cjk_font(candidates), register_shipped_font()) if name is not None]


def use_cjk_font(candidates: tuple[str, ...] = CJK_FONTS) -> bool:
    """Append cjk_families() to matplotlib's fallback list; False only if there is no CJK family at all."""
    import matplotlib

    names = cjk_families(candidates)
    family = list(matplotlib.rcParams["font.family"])
    added = [name for name in names if name not in family]
    if added:  # more families: Latin text keeps its face, each glyph it lacks falls back to the first that has it
        matplotlib.rcParams["font.family"] = [*family, *added]
    return bool(names)


@functools.lru_cache(maxsize=None)
def _charmap(path: str) -> frozenset[int]:
    from matplotlib import ft2font

    return frozenset(ft2font.FT2Font(path).get_charmap())


def missing_glyphs(text: str, families: list[str] | None = None) -> list[str]:
    """The characters of `text` that neither matplotlib's default face (Latin) nor any of `families` (by default
    cjk_families()) can draw: what would be a tofu box."""
    from matplotlib import font_manager

    covered = set(_charmap(font_manager.findfont(font_manager.FontProperties())))
    for family in cjk_families() if families is None else families:
        try:
            covered |= _charmap(font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False))
        except ValueError:   # a family matplotlib cannot find draws nothing
            pass
    return sorted({ch for ch in text if not ch.isspace() and ord(ch) not in covered})


# --- the subset: which characters, and how it is built from the full font -------------------------------------------

def drawn_characters(strings=None) -> set[str]:
    """Every character a zh figure can draw: lab.i18n's Chinese strings (label() draws only those, filled with
    numbers and names that are themselves label()s), without their {placeholders}, and printable ASCII."""
    from .i18n import ZH

    chars = set(string.printable) - set(string.whitespace) | {" "}
    for text in (ZH.values() if strings is None else strings):
        chars |= set(re.sub(r"{\w*}", "", text))
    return chars - {"\n"}


def subset_missing(font: Path = SHIPPED_FONT, strings=None) -> list[str]:
    """The characters of drawn_characters(strings) the font at `font` has no glyph for (read with fontTools)."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(font, lazy=True).getBestCmap()
    return sorted(ch for ch in drawn_characters(strings) if ch != " " and ord(ch) not in cmap)


def _source_face(source: Path):
    """The Simplified Chinese face of `source`: an .otf as it is, or the "CJK SC" face of a collection (.ttc)."""
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() not in (".ttc", ".otc"):
        return TTFont(source, recalcTimestamp=False)
    faces = TTCollection(source, recalcTimestamp=False).fonts
    for face in faces:
        if "CJK SC" in (face["name"].getDebugName(1) or ""):
            return face
    raise SystemExit(f"{source}: no face whose family names 'CJK SC' (found {[f['name'].getDebugName(1) for f in faces]})")


def subset(source: Path, target: Path = SHIPPED_FONT) -> Path:
    """Write the subset of `source` (Noto Sans CJK SC or Source Han Sans SC) covering drawn_characters() to `target`,
    renamed to SHIPPED_FAMILY; the copyright and licence records are kept. The same source gives the same bytes."""
    from fontTools import subset as ft_subset

    face = _source_face(Path(source))
    options = ft_subset.Options()
    options.layout_features = []          # figures draw plain horizontal text: no vertical forms, no locl variants
    options.hinting = False
    options.desubroutinize = True         # smaller once so few glyphs share the subroutines
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]   # names, version, copyright, licence and its URL
    options.name_languages = [0x409]
    options.notdef_outline = True
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(drawn_characters())))
    subsetter.subset(face)
    postscript = SHIPPED_FAMILY.replace(" ", "") + "-Regular"
    names = {1: SHIPPED_FAMILY, 2: "Regular", 3: f"{postscript};subset of {face['name'].getDebugName(6)} by lab.fonts",
             4: f"{SHIPPED_FAMILY} Regular", 6: postscript}
    for record in list(face["name"].names):
        if record.nameID in names:
            face["name"].removeNames(nameID=record.nameID)
    for name_id, value in names.items():
        face["name"].setName(value, name_id, 3, 1, 0x409)
    if "CFF " in face:
        cff = face["CFF "].cff
        cff.fontNames = [postscript]
        top = cff.topDictIndex[0]
        for key in ("FullName", "FamilyName"):
            if hasattr(top, key):
                setattr(top, key, SHIPPED_FAMILY)
    target.parent.mkdir(parents=True, exist_ok=True)
    face.save(target)
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "subset":
        print("usage: python -m lab.fonts subset NotoSansCJKsc-Regular.otf|NotoSansCJK-Regular.ttc", file=sys.stderr)
        return 2
    target = subset(Path(argv[1]))
    missing = subset_missing(target)
    print(f"wrote {target} ({target.stat().st_size} bytes, {len(drawn_characters())} characters)"
          + (f"; the source lacks {missing}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
