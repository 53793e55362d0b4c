"""Instructor-side tooling: build notebooks, grade submissions, bundle releases.

Nothing here is shipped to students (see `make student-bundle`).
"""
import sys

# jsonschema (imported by nbformat) imports rfc3987_syntax only to check the "iri" string formats, and that import
# compiles some 35 Lark grammars: 0.6-0.8 s of every grading process's start (python-jsonschema/jsonschema#1428).
# No notebook schema uses those formats, so a process of ours does without them. Left alone if already imported.
sys.modules.setdefault("rfc3987_syntax", None)
# jupytext's package imports its Jupyter contents managers, and with them jupyter_server (0.1 s); grader only reads and
# writes text notebooks (jupytext.reads, jupytext.writes). Left alone if a Jupyter server already imported them.
for _manager in ("jupytext.sync_contentsmanager", "jupytext.async_contentsmanager"):
    sys.modules.setdefault(_manager, None)
