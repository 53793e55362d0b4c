"""The private parts of nbconvert (pinned: requirements.txt) the feedback page's exporter uses, in one place.

grader/feedback.py's exporter renders as nbconvert's HTMLExporter.from_notebook_node does, less its BeautifulSoup
pass, so it sets up a page the way that method does: with Exporter._init_resources (the resources dict nbconvert's
templates expect) and the exporter's _nb_metadata (the notebooks' metadata by name, filled as each is converted, which
the widget-output filter reads). Neither is public API: tests/grader/test_nbconvert_shim.py fails if a new nbconvert
drops them (PRIVATE), and checks a page is the one nbconvert's own HTMLExporter renders.
"""
from __future__ import annotations

# The private names used here: (module, class, attribute, whether it is set on an instance rather than the class).
PRIVATE = (("nbconvert.exporters.exporter", "Exporter", "_init_resources", False),
           ("nbconvert.exporters.exporter", "Exporter", "_nb_metadata", True))


def page_resources(exporter, resources):
    """`resources` as nbconvert's templates read them (a ResourcesDict, with its metadata and output extension)."""
    return exporter._init_resources(resources)


def data_type_filter(exporter, resources):
    """The filter_data_type filter HTMLExporter registers: each output's first displayable type, widgets included
    when the notebook's metadata holds their state."""
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    return WidgetsDataTypeFilter(notebook_metadata=exporter._nb_metadata, parent=exporter, resources=resources)


def missing() -> list[str]:
    """The names of PRIVATE the installed nbconvert no longer has."""
    import importlib

    found = []
    for module, cls, name, on_instance in PRIVATE:
        kind = getattr(importlib.import_module(module), cls, None)
        if kind is None:
            found.append(f"{module}.{cls}")
            continue
        holder = kind if not on_instance else __import__("nbconvert").HTMLExporter()   # the instance's, set in __init__
        if not hasattr(holder, name):
            found.append(f"{module}.{cls}.{name}")
    return found
