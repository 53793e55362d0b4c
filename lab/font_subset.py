"""Builds lab's CJK font subset (lab/cjk_font/) from the full Noto Sans CJK SC and checks that it covers every
character a zh figure can draw; a build tool, apart from lab.fonts so that drawing never imports the strings.

After a change to lab.i18n's Chinese strings, rebuild the subset (tests/lab/test_cjk_font.py fails until then):

    python -m lab.font_subset NotoSansCJK-Regular.ttc     # or NotoSansCJKsc-Regular.otf; `make cjk-font`
"""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

from .fonts import SHIPPED_FAMILY, SHIPPED_FONT
from .i18n import ZH

def drawn_characters(strings=None) -> set[str]:
    """Every character a zh figure can draw: lab.i18n's Chinese strings (label() draws only those, filled with
    numbers and names that are themselves label()s), without their {placeholders}, and printable ASCII."""
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
    if len(argv) != 1:
        print("usage: python -m lab.font_subset NotoSansCJKsc-Regular.otf|NotoSansCJK-Regular.ttc", file=sys.stderr)
        return 2
    target = subset(Path(argv[0]))
    missing = subset_missing(target)
    print(f"wrote {target} ({target.stat().st_size} bytes, {len(drawn_characters())} characters)"
          + (f"; the source lacks {missing}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
