"""make bench's notebook timings: the timed run is an ordinary run (every cell keeps its output) and every cell is timed.
Nothing here asserts a time."""
import nbformat
import pytest

from conftest import ROOT
from grader import bench, editions

pytestmark = pytest.mark.slow   # every test here starts a process or takes seconds (tests/conftest.py)


def printed(nb) -> list[str]:
    """What the code cells print (stdout) and show as text (tables, results), cell by cell."""
    return ["".join(o.get("text", "") if o.get("name") == "stdout" else "".join(o.get("data", {}).get("text/plain", ""))
                    for o in c.outputs) for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("name", ["01_continuous_batching", "03_batch_scheduling"])
def test_a_timed_run_keeps_every_cell_output_and_times_every_cell(tmp_path, name):
    """03: its expensive cells (the SLO runs, the aging rates on the fast engine) still print and draw what the
    committed edition shows."""
    nb = editions.solved_edition(name)
    seconds, per_cell = bench.run_all(nb, tmp_path)
    committed = nbformat.read(ROOT / "solutions" / f"{name}.ipynb", as_version=4)
    assert printed(nb) == printed(committed) and any(printed(nb))
    images = [sum("image/png" in o.get("data", {}) for o in c.outputs) for c in nb.cells if c.cell_type == "code"]
    assert images == [sum("image/png" in o.get("data", {}) for o in c.outputs) for c in committed.cells if c.cell_type == "code"]
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    assert sorted(per_cell) == code and all(s >= 0 for s in per_cell.values()) and seconds >= sum(per_cell.values())


def test_every_edition_names_its_visible_checks():
    """The solved edition has no nbgrader metadata: its checks are found by the master's ids, position for position."""
    name = "03_batch_scheduling"
    checks = set(editions.test_ids(editions.nbgrader_source(name)))
    found = bench.editions_to_run(name)
    assert sorted(found) == ["solved en", "solved zh", "student en", "student zh"]
    for edition, (nb, ids) in found.items():
        assert len(ids) == len(nb.cells) and {i for i in ids if i in checks} == checks, edition
        assert all("def test_" in nb.cells[i].source for i, gid in enumerate(ids) if gid in checks), edition
