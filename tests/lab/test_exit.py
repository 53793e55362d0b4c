"""A process that imported lab leaves without the interpreter's collections over every object still alive."""
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.slow  # starts a Python
def test_importing_lab_freezes_the_heap_at_exit():
    """Exit handlers run last registered first: one registered before `import lab` sees what lab's did. The freeze is
    what makes a notebook kernel's shutdown short (make bench's notebook runs include the shutdown)."""
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: sys.stdout.write(f'frozen at exit: {gc.get_freeze_count() > 0}'))\n"
            "import lab\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "frozen at exit: True"
