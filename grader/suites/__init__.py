"""Hidden suites, one module per assignment, each with DRIVER and build(seed)."""
import importlib


def load(assignment: str):
    """The suite module of an assignment (e.g. '02_decode_scheduling')."""
    name = assignment.split("_", 1)[1] if assignment[:2].isdigit() else assignment
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        raise SystemExit(f"no hidden suite for assignment {assignment!r}") from exc
