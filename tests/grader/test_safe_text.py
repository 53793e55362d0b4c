"""grader/safe_text.py: text a student controls, shown inert; a failing case in report Markdown as code, unescaped."""
import mistune
import pytest

from grader.safe_text import code_block, inert

HOSTILE = ["x = '```' + '[a](http://e.com) <script>alert(1)</script>'\n# heading",
           "f(`` ` ``) | **bold** ![i](http://e.com/i.png) www.e.com",
           "\x1b[2J\rforged 100%"]


def rendered(lines: list[str]) -> str:
    return mistune.html("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_block_shows_the_text_as_it_is_and_nothing_else(text):
    block = code_block(text)
    html = rendered(block)
    assert len(block) == 3 and block[1] == inert(text, markup=False)  # one line, printable
    assert html.startswith("<pre><code") and html.count("<pre>") == 1 and "<a " not in html and "<img" not in html
    assert "<script" not in html and "<strong>" not in html
    assert "[" in block[1] or "`" in block[1] or "\\x1b" in block[1]  # brackets and backticks kept, not &#91;


def test_the_fence_is_longer_than_any_backtick_run():
    """A line of backticks alone would close a fence as long: the block would show nothing of it."""
    assert code_block("a ```` b")[0] == "`````python"
    assert "<code class=\"language-python\">```\n" in rendered(code_block("```"))
    short = rendered(["```python", "```", "```"])   # the positive control: a fence of three, closed by the text
    assert "<code class=\"language-python\"></code>" in short


def test_inert_still_escapes_markup_by_default():
    assert inert("[a](http://e.com)") == "&#91;a&#93;(http&#58;//e.com)"
    assert inert(inert("<b>|*`")) == inert("<b>|*`")

