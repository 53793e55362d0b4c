# Bootstrap of the sandboxed feedback run. The sandbox passes this file's text to `python -I -c`;
# it imports nothing from grader/, so the sandbox never needs (or sees) instructor files.
#
# argv: assignment, student id, cell timeout. $GRADER_INPUT_COURSE: the read-only course (release
# edition only: no solutions, no hidden tests) with the submission. It copies the course into its
# private scratch, runs `nbgrader autograde` there, and writes to $GRADER_RESULT_FD one JSON header
# line {"returncode": int, "stderr": str} followed by the executed notebook's bytes. The grader
# treats all of it as untrusted: the student's kernel ran in this same sandbox.
import json
import os
import shutil
import subprocess
import sys


def main():
    out = os.fdopen(int(os.environ.pop("GRADER_RESULT_FD")), "wb")
    name, student, cell_timeout = sys.argv[1:4]
    course = os.path.join(os.environ["GRADER_SCRATCH"], "course")
    shutil.copytree(os.environ["GRADER_INPUT_COURSE"], course)
    # stderr to a file, not a pipe: a process the kernel left behind may hold it open for ever.
    with open(os.path.join(os.environ["GRADER_SCRATCH"], "nbgrader.err"), "w+b") as err:
        proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", name, "--student", student, "--force",
                               f"--Execute.timeout={cell_timeout}", "--log-level=WARN"],
                              cwd=course, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        err.seek(max(0, os.fstat(err.fileno()).st_size - 4096))
        stderr = err.read()
    body = b""
    try:
        with open(os.path.join(course, "autograded", student, name, name + ".ipynb"), "rb") as handle:
            body = handle.read()
    except OSError:
        pass
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    header = {"returncode": proc.returncode, "stderr": lines[-1][:200] if lines else ""}
    out.write(json.dumps(header).encode() + b"\n" + body)
    out.close()


main()
