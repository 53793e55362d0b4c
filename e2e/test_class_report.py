"""The class report in Chromium: a graded class's class-report.html has no script and every figure renders."""
from __future__ import annotations

import shutil

from grader import autograde, sample_submissions

NAME = "02_decode_scheduling"


def test_the_class_report_renders_without_script(browser, shots, tmp_path):
    subs = tmp_path / "subs"
    sample_submissions.write(sample_submissions.demo_submissions(NAME), subs)
    autograde.run(NAME, subs, tmp_path / "out", cell_timeout=10)
    report = tmp_path / "out" / "class-report.html"
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("document.querySelectorAll('script').length") == 0
        images = page.evaluate("Array.from(document.images, img => [img.complete, img.naturalWidth, img.alt])")
        assert len(images) >= 4, images
        assert all(complete and width > 0 for complete, width, _ in images), images
        assert "What to reteach" in page.inner_text("body")
        page.screenshot(path=str(shots / "class-report.png"), full_page=True)
    finally:
        page.close()
    shutil.copy(report, shots / "class-report.html")
