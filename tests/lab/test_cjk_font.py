"""lab's shipped CJK subset (lab/cjk_font/, Noto Sans CJK SC under the SIL OFL 1.1): it covers every character a zh
figure draws, it ships with its licence, and it draws the zh figures where no CJK font is installed or they are hidden
(LAB_HIDE_CJK_FONTS=1). After a change to lab.i18n's Chinese strings: `make cjk-font` (see lab/font_subset.py)."""
import ast
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, font_env
from grader import editions
from grader.paths import assignment_names
from lab import font_subset, fonts
from lab import i18n as lab_i18n

PLANTED = "时钟龘"   # 龘 (U+9F98): a character no label uses, so not in the subset


def label_templates() -> set[str]:
    """The literal templates of label()/lab.label() calls in lab and in every master's code cells."""
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "lab").rglob("*.py")]
    sources += [cell.source for name in assignment_names() for cell in editions.read_master(name).cells
                if cell.cell_type == "code"]
    found = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a cell with IPython magics: its label() calls are found on the lines that parse
            tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            func = getattr(node, "func", None)
            name = getattr(func, "attr", None) or getattr(func, "id", None)
            if name == "label" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def figure_strings() -> list[str]:
    """Every string a zh figure can draw: all of lab.i18n's Chinese (label() maps any name tr() gave back to its
    template), and each literal label() template as the zh edition draws it (its translation, or itself)."""
    return [*lab_i18n.ZH.values(), *(lab_i18n.ZH.get(t, t) for t in label_templates())]


@pytest.mark.slow
def test_the_subset_covers_every_character_a_zh_figure_draws(monkeypatch):
    templates = label_templates()
    assert {"slot {slot}", "Who waits under each policy", "engine step", "TTFT (ms, log scale)"} <= templates  # lab, 02, 03
    assert font_subset.subset_missing(strings=figure_strings()) == []
    assert font_subset.subset_missing() == []
    # the check can fail: a label with a character the subset lacks is named, by the file's cmap
    assert font_subset.subset_missing(strings=[*figure_strings(), PLANTED]) == ["龘"]
    monkeypatch.setitem(lab_i18n.ZH, "tick", PLANTED)
    assert font_subset.subset_missing(strings=figure_strings()) == ["龘"] and font_subset.subset_missing() == ["龘"]


def test_the_font_ships_with_its_licence_and_is_small():
    from fontTools.ttLib import TTFont

    assert fonts.SHIPPED_FONT.stat().st_size < 100_000
    face = TTFont(fonts.SHIPPED_FONT)
    assert face["name"].getDebugName(1) == fonts.SHIPPED_FAMILY
    assert "SIL Open Font License" in face["name"].getDebugName(13) and "Adobe" in face["name"].getDebugName(0)
    licence = fonts.SHIPPED_LICENSE.read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Copyright 2014-2021 Adobe" in licence
    assert "lab/cjk_font/OFL.txt" in (ROOT / "README.md").read_text(encoding="utf-8")


# Draws each of lab's figures in zh in a fresh process and reports, per figure, its texts with Hanzi, the font files
# matplotlib resolves for each, and the glyph warnings; PRELUDE lets a test break something first.
DRAW = r"""
import json, sys, warnings
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager, text as mtext
import lab
exec(sys.argv[1])
lab.set_language("zh")
steps = [{"step": 0, "num_decode_tokens": 0, "num_prefill_tokens": 8, "num_batched_tokens": 8, "max_num_batched_tokens": 16,
          "num_used_blocks": 2, "num_blocks": 4, "preempted": [7]}]
events = [{"request_id": 1, "action": "prefill_to_decode", "preempted_request_id": None, "deadline_missed": False},
          {"request_id": 1, "action": "finish", "preempted_request_id": None, "deadline_missed": False}]
draws = {"slots": lambda: lab.plot_slots(lab.FOUR_ON_TWO.jobs, 2), "timeline": lambda: lab.plot_timeline(events),
         "lifecycle": lab.plot_lifecycle, "batch": lambda: lab.engine.plot_batch_composition(steps),
         "kv": lambda: lab.engine.plot_kv_occupancy(steps)}
report = {}
for name, draw in draws.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = draw()
        fig.canvas.draw()
    texts = [t for t in fig.findobj(mtext.Text) if t.get_text()]
    report[name] = {"texts": [t.get_text() for t in texts],
                    "hanzi": {t.get_text(): [str(p) for p in font_manager.fontManager._find_fonts_by_props(t.get_fontproperties())]
                              for t in texts if any("\u4e00" <= c <= "\u9fff" for c in t.get_text())},
                    "warnings": [str(w.message) for w in caught if "missing from font" in str(w.message)]}
print(json.dumps(report))
"""


def zh_figures(prelude: str = "") -> dict:
    env = font_env("hidden")
    proc = subprocess.run([sys.executable, "-c", DRAW, prelude], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def problems(report: dict) -> list[str]:
    """What keeps a zh figure from being Chinese drawn by the shipped font: no Hanzi, a Hanzi text whose fonts do not
    include the shipped file, a glyph warning (a tofu box), a character of a text the shipped font lacks."""
    from fontTools.ttLib import TTFont

    cmap = TTFont(fonts.SHIPPED_FONT, lazy=True).getBestCmap()
    found = []
    for name, figure in report.items():
        if not figure["hanzi"]:
            found.append(f"{name}: no Chinese label in {figure['texts'][:6]}")
        for text, paths in figure["hanzi"].items():
            if os.path.realpath(fonts.SHIPPED_FONT) not in {os.path.realpath(p) for p in paths}:
                found.append(f"{name}: {text!r} drawn with {paths}")
            lacking = sorted({c for c in text if ord(c) > 0x2e80 and ord(c) not in cmap})
            if lacking:
                found.append(f"{name}: {text!r} has {lacking}, which the shipped font lacks")
        found += [f"{name}: {w}" for w in figure["warnings"]]
    return found


@pytest.mark.slow
def test_with_the_installed_fonts_hidden_zh_figures_are_chinese_in_the_shipped_font():
    report = zh_figures()
    assert problems(report) == []
    assert "槽位 0" in report["slots"]["hanzi"] and "等待" in report["lifecycle"]["hanzi"]
    assert "引擎步" in report["batch"]["hanzi"] and "池大小" in report["kv"]["hanzi"]
    # the check can fail: without the shipped file the labels are English; a planted character it lacks, drawn
    # regardless, is a tofu box
    gone = zh_figures("import lab.fonts as f; from pathlib import Path; f.SHIPPED_FONT = Path('/nonexistent.otf')")
    assert len(problems(gone)) == len(gone) and all("no Chinese label" in p for p in problems(gone)), problems(gone)
    tofu = zh_figures("import lab.fonts as f, lab.i18n as i; i.ZH['tick'] = '时钟龘'; f.missing_glyphs = lambda *a: []")
    assert [p for p in problems(tofu) if "龘" in p and "lacks" in p] and [p for p in problems(tofu) if "missing from font" in p]
