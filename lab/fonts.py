"""The CJK fonts that draw Chinese plot labels: an installed one if matplotlib's font manager finds one, and behind
it (or alone) the subset of Noto Sans CJK SC that lab ships (lab/cjk_font/, SIL Open Font License 1.1: OFL.txt there).

Only text drawn into a figure depends on this: printed text follows the language alone (lab.i18n.tr).
LAB_HIDE_CJK_FONTS=1 hides the *installed* CJK fonts from this process, so that a machine with one draws exactly
as a fresh machine without one does (the tests run both states); the shipped subset is never hidden, so zh figures
are Chinese on any machine (Colab and Kaggle have no CJK font).

The subset covers every character lab.i18n can put into a figure; lab.font_subset builds and checks it.
"""
from __future__ import annotations

import functools
import os
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
