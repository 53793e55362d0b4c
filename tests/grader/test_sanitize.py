"""grader/sanitize.py through its public names: outputs reduced to inert data, Markdown to an allow-list, and a page
with anything that could run refused (the whole feedback path is tested in test_feedback_leak.py and test_config.py)."""
import nbformat

from grader import sanitize


def test_an_output_keeps_only_plain_text_and_images():
    html = {"output_type": "display_data", "data": {"text/html": "<script>alert(1)</script>", "text/plain": "ok",
                                                     "application/javascript": "alert(1)"}}
    assert sanitize.clean_output(html) == {"output_type": "display_data", "data": {"text/plain": "ok"}, "metadata": {}}
    only_html = sanitize.clean_output({"output_type": "display_data", "data": {"text/html": "<b>x</b>"}})
    assert only_html["data"] == {"text/plain": "[text/html not shown on the feedback page]"}
    not_base64 = sanitize.clean_output({"output_type": "display_data", "data": {"image/png": "<svg onload=x>"}})
    assert "image/png" not in not_base64["data"]
    stream = sanitize.clean_output({"output_type": "stream", "name": "<b>", "text": ["a" * (sanitize.TEXT_CAP + 5)]})
    assert stream["name"] == "stdout" and stream["text"].endswith("[... 5 more characters not shown]")
    result = sanitize.clean_output({"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "1"}})
    assert result["output_type"] == "execute_result" and result["execution_count"] == 3


def test_markdown_keeps_its_formatting_and_loses_what_could_run():
    cleaned = sanitize.clean_markdown('**bold** <img src=x onerror="alert(1)"> [a](javascript:alert(1))')
    assert "<strong>bold</strong>" in cleaned
    assert "<img" not in cleaned and "&lt;img" in cleaned   # shown as text, not dropped silently
    assert 'href="javascript:' not in cleaned


def test_a_notebook_is_cleaned_in_place_and_trusted_prose_is_kept_as_written():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("<b onclick=x>ours</b>"),
                                         nbformat.v4.new_markdown_cell("<b onclick=x>theirs</b>"),
                                         nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                                             "display_data", data={"text/html": "<i>h</i>", "text/plain": "p"})])])
    assert sanitize.clean_notebook(nb, trusted_markdown=frozenset({"<b onclick=x>ours</b>"})) == []
    assert nb.cells[0].source == "<b onclick=x>ours</b>" and "<b onclick" not in nb.cells[1].source
    assert nb.cells[2].outputs[0]["data"] == {"text/plain": "p"}
    late = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", text="t")])])
    assert sanitize.clean_notebook(late, clean_seconds=-1)[0].startswith("cell 0 and later") and late.cells[0].outputs == []


def test_a_page_gets_a_policy_and_is_refused_if_anything_could_still_run():
    page, why = sanitize.clean_page("<html><head></head><body><script>x()</script><p>ok</p></body></html>")
    assert why == "" and "<script" not in page and sanitize.CSP in page
    for active in ('<img src="https://example.org/x.png">', "<a href=' javascript:x()'>a</a>", "<p onclick=x>p</p>",
                   "<iframe></iframe>", '<meta http-equiv="refresh" content="0">'):
        page, why = sanitize.clean_page(f"<html><head></head><body>{active}</body></html>")
        assert page is None and why.startswith("active content left on the page"), active
    page, why = sanitize.clean_page("<p>" + "x" * 2048 + "</p>", page_cap=1024)
    assert page is None and "cap" in why
