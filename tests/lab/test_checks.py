"""lab.checks: what a check cell prints."""
import pytest

import lab
from lab.checks import passed


@pytest.mark.parametrize("language, count, said", [
    ("en", 1, "TODO 2: 1 visible check passed.\n"), ("en", 3, "TODO 2: 3 visible checks passed.\n"),
    ("zh", 1, "TODO 2：1 项可见检查通过。\n"), ("zh", 3, "TODO 2：3 项可见检查全部通过。\n"),
])
def test_a_check_cell_says_one_check_in_the_singular(language, count, said, capsys):
    """Issue 44: the template's check cells, one check each, printed "TODO 2: 1 visible checks passed."."""
    lab.set_language(language)
    try:
        passed("TODO 2", count)
    finally:
        lab.set_language("en")
    assert capsys.readouterr().out == said
