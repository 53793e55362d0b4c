"""A CJK font for Chinese plot labels, found through matplotlib's font manager; None if there is none.

Only text drawn into a figure depends on this: printed text follows the language alone (lab.i18n.tr).
LAB_HIDE_CJK_FONTS=1 hides the installed CJK fonts from this process, so that a machine with one can
draw exactly as a fresh machine without one does (the tests run both states).
"""
from __future__ import annotations

import os

HIDE_ENV = "LAB_HIDE_CJK_FONTS"

# Simplified Chinese faces first; Debian's fonts-noto-cjk registers its .ttc as "Noto Sans CJK JP",
# which covers every Hanzi the labels use.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
             "Noto Sans CJK JP", "Noto Sans CJK TC", "Source Han Sans CN", "SimHei", "Microsoft YaHei",
             "PingFang SC", "Heiti SC", "Arial Unicode MS")


def cjk_fonts_hidden() -> bool:
    """True when LAB_HIDE_CJK_FONTS (read at each call) asks this process to act as if no CJK font were installed."""
    return os.environ.get(HIDE_ENV, "").strip() not in ("", "0")


def find_cjk_font(candidates: tuple[str, ...] = CJK_FONTS) -> str | None:
    """The first installed font family among `candidates`, or None (always None while the fonts are hidden)."""
    if cjk_fonts_hidden():
        return None
    from matplotlib import font_manager

    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((name for name in candidates if name in installed), None)


def use_cjk_font(candidates: tuple[str, ...] = CJK_FONTS) -> bool:
    """Append an installed CJK font to matplotlib's fallback list; False (labels stay English) if none."""
    import matplotlib

    name = find_cjk_font(candidates)
    if name is None:
        return False
    family = list(matplotlib.rcParams["font.family"])
    if name not in family:  # a second family: Latin text keeps its face, each missing glyph falls back to it
        matplotlib.rcParams["font.family"] = [*family, name]
    return True
