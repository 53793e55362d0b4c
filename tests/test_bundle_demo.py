"""The student bundle carries no solutions or grader; the demo writes its plots."""
import zipfile

from conftest import ROOT
from grader import bundle, demo, masters
from grader.feedback import hidden_snippets


def test_student_bundle_has_what_students_need_and_nothing_else(capsys):
    bundle.main()
    names = zipfile.ZipFile(bundle.BUNDLE).namelist()
    inner = {n.split("/", 1)[1] for n in names}
    assert {"README.md", "environment.yml", "requirements.txt", "pyproject.toml", "lab/__init__.py",
            "notebooks/02_decode_scheduling.ipynb", "notebooks/03_batch_scheduling.ipynb", "lab/engine/scheduler.py"} <= inner
    assert not [n for n in inner if n.startswith(("solutions/", "grader/", "tests/", ".ci/"))]
    snippets = [s for name in ("02_decode_scheduling", "03_batch_scheduling") for s in hidden_snippets(masters.nbgrader_source(name))]
    with zipfile.ZipFile(bundle.BUNDLE) as zf:
        for name in names:
            text = zf.read(name).decode("utf-8")
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN" not in text, name
            assert not [s for s in snippets if s in text], name
        assert zf.read("decode-scheduling/notebooks/02_decode_scheduling.ipynb") == (ROOT / "notebooks" / "02_decode_scheduling.ipynb").read_bytes()


def test_demo_worked_examples_write_pngs(tmp_path, capsys):
    written = demo.worked_examples(tmp_path)
    assert len(written) == 8 and all(p.suffix == ".png" and p.stat().st_size > 5000 for p in written)
    printed = capsys.readouterr().out
    assert "4 requests on 2 slots" in printed and "preemption and resume" in printed
    assert "engine step model" in printed and "p99_ttft_ms=" in printed
