"""grader/nbconvert_shim.py: the private names of nbconvert the feedback exporter uses are there, and a page rendered
with them is the one nbconvert's own HTMLExporter renders (less its BeautifulSoup pass)."""
import nbformat
import pytest
from bs4 import BeautifulSoup

from conftest import ROOT
from grader import feedback, nbconvert_shim

RESOURCES = {"nbgrader": {"notebook": "a", "assignment": "a", "score": 1.0, "max_score": 2, "late_penalty": 0, "late_reason": ""}}


def test_the_private_names_it_uses_are_in_the_pinned_nbconvert():
    assert nbconvert_shim.missing() == []


@pytest.mark.parametrize("gone", ["_init_resources", "_nb_metadata"])
def test_a_private_name_nbconvert_drops_is_named(monkeypatch, gone):
    from nbconvert.exporters.exporter import Exporter

    if gone == "_init_resources":
        monkeypatch.delattr(Exporter, gone)
    else:   # set in Exporter.__init__: an nbconvert that no longer sets it
        init = Exporter.__init__
        monkeypatch.setattr(Exporter, "__init__", lambda self, *a, **k: (init(self, *a, **k), delattr(self, gone))[0])
    assert nbconvert_shim.missing() == [f"nbconvert.exporters.exporter.Exporter.{gone}"]


def _normal(page: str) -> str:
    """The page as BeautifulSoup writes it, without the tabindex attributes HTMLExporter adds in that pass."""
    soup = BeautifulSoup(page, features="html.parser")
    for element in soup.select("[tabindex]"):
        del element.attrs["tabindex"]
    return str(soup)


def test_a_page_is_the_one_nbconvert_renders():
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor

    nb = nbformat.read(ROOT / "solutions" / "01_continuous_batching.ipynb", as_version=4)   # prose, code, figures
    mine = feedback.exporter()
    try:
        ours, resources = mine.from_notebook_node(nb, resources=dict(RESOURCES))
    finally:
        feedback._IDLE.put(mine)
    stock = HTMLExporter(config=feedback.template_config())
    stock.register_preprocessor(CSSHTMLHeaderPreprocessor(), enabled=True)
    theirs, _ = stock.from_notebook_node(nb, resources=dict(RESOURCES))
    assert "<img" in ours and resources["output_extension"] == ".html"
    assert _normal(ours) == _normal(theirs)


def test_a_widget_is_shown_from_the_notebooks_own_state():
    """The data type filter reads the widgets' state from the notebook's metadata (through _nb_metadata): a widget
    whose state the notebook keeps is shown as a widget, not as its text."""
    view, state = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("slider", outputs=[nbformat.v4.new_output(
        "display_data", data={view: {"model_id": "m1", "version_major": 2, "version_minor": 0}, "text/plain": "IntSlider(value=3)"})])])
    nb.metadata["widgets"] = {state: {"state": {"m1": {"model_name": "IntSliderModel", "model_module": "@jupyter-widgets/controls",
                                                       "model_module_version": "2.0.0", "state": {"value": 3}}},
                                      "version_major": 2, "version_minor": 0}}
    mine = feedback.exporter()
    try:
        page, _ = mine.from_notebook_node(nb, resources=dict(RESOURCES))
    finally:
        feedback._IDLE.put(mine)
    assert view in page and "IntSlider(value=3)" not in page
