# The feedback run's cell runner: a notebook executed in IPython, each cell's outputs reported as nbformat outputs.
# Like child.py it imports nothing from grader/: the warm parent (boot.py) execs this text once, before it forks,
# and calls run_notebook(payload, emit) in each fork; a cold run (cold.py) runs it as `python -I -c` on its stdin.
#
# payload: {cells: [{index, source}], skip: {index: why}, deps: {answer index: [later index]}, labels: {index: "TODO n"},
#           counts: {index: the execution count the cell runs under (the page's In [n], and its tracebacks')}}
# records: {"kind": "start", index} before a cell; {"kind": "cell", index, status, outputs[, cpu | why]} after it;
# {"kind": "done", cpu} at the end. The grader interrupts a cell from outside with SIGINT (grader/notebook_run.py).
import json
import os
import signal
import sys
import time

os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
os.environ.setdefault("MPLCONFIGDIR", os.path.join(os.environ.get("TMPDIR", "/tmp"), "mpl"))

from IPython.core.displayhook import DisplayHook  # noqa: E402
from IPython.core.displaypub import DisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets.config import Config  # noqa: E402


class Outputs:
    """nbformat outputs of the cell being run."""

    def __init__(self):
        self.items = []

    def stream(self, name, text):
        if self.items and self.items[-1].get("output_type") == "stream" and self.items[-1]["name"] == name:
            self.items[-1]["text"] += text
        else:
            self.items.append({"output_type": "stream", "name": name, "text": text})


OUT = Outputs()


class Stream:
    def __init__(self, name):
        self.name = name

    def write(self, text):
        if isinstance(text, str) and text:
            OUT.stream(self.name, text)
        return len(text) if isinstance(text, str) else 0

    def flush(self):
        pass

    def isatty(self):
        return False


class Publisher(DisplayPublisher):
    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
        OUT.items.append({"output_type": "display_data", "data": data, "metadata": metadata or {}})

    def clear_output(self, wait=False):
        OUT.items.clear()


class Hook(DisplayHook):
    def start_displayhook(self):
        self._format = None

    def write_output_prompt(self):
        pass

    def write_format_data(self, format_dict, md_dict=None):
        OUT.items.append({"output_type": "execute_result", "data": format_dict, "metadata": md_dict or {},
                          "execution_count": self.shell.execution_count})

    def finish_displayhook(self):
        pass


class Shell(InteractiveShell):
    def enable_gui(self, gui=None):
        pass  # no event loop: figures are drawn inline

    def _showtraceback(self, etype, evalue, stb):
        OUT.items.append({"output_type": "error", "ename": getattr(etype, "__name__", str(etype)),
                          "evalue": str(evalue)[:2000], "traceback": list(stb)[-60:]})


def make_shell():
    config = Config()
    config.HistoryManager.enabled = False   # its saving thread would not survive a fork
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.xmode = "Context"
    shell = Shell.instance(config=config, display_pub_class=Publisher, displayhook_class=Hook)
    shell.enable_matplotlib("inline")
    return shell


SHELL = make_shell()

CELL_NAME = "<ipython-input-"


def run_notebook(payload, emit):
    """Run payload['cells'] in order. A cell the grader interrupts (SIGINT, from outside) ends with
    KeyboardInterrupt; then every later cell listed in payload['deps'] of an answer cell on the interrupted
    stack is not run, and its record says why."""
    state = {"in_cell": False}

    def on_interrupt(signum, frame):
        if state["in_cell"]:
            raise KeyboardInterrupt("interrupted: the cell ran past its time limit")

    signal.signal(signal.SIGINT, on_interrupt)
    sys.stdout, sys.stderr = Stream("stdout"), Stream("stderr")
    skipped = _by_index(payload.get("skip", {}))
    deps = _by_index(payload.get("deps", {}))
    labels = _by_index(payload.get("labels", {}))
    counts = {int(k): v for k, v in payload.get("counts", {}).items() if type(v) is int}
    by_count = {}
    for cell in payload["cells"]:
        index = cell["index"]
        if index in skipped:
            emit({"kind": "cell", "index": index, "status": "skipped", "why": skipped[index], "outputs": []})
            continue
        emit({"kind": "start", "index": index})
        OUT.items = []
        SHELL.execution_count = counts.get(index, SHELL.execution_count)
        by_count[SHELL.execution_count] = index
        cpu = time.process_time()
        error = _run_cell(cell["source"], state)
        if isinstance(error, KeyboardInterrupt):
            stack = _cells_on_stack(error, by_count)
            _skip_dependents([i for i in stack if i in deps] or [index], deps, labels, skipped)
        status = "interrupted" if isinstance(error, KeyboardInterrupt) else ("error" if error else "ok")
        emit({"kind": "cell", "index": index, "status": status, "outputs": OUT.items, "cpu": round(time.process_time() - cpu, 3)})
    emit({"kind": "done", "cpu": round(time.process_time(), 3)})


def _by_index(mapping: dict) -> dict:
    """A payload's {cell index as text: value} with int indices (JSON keys are text)."""
    return {int(k): v for k, v in mapping.items()}


def _run_cell(source: str, state: dict):
    """Runs one cell; its error, a KeyboardInterrupt when the grader interrupted it, or None."""
    state["in_cell"] = True
    try:
        result = SHELL.run_cell(source, store_history=True)
    except KeyboardInterrupt:
        result = None
    finally:
        state["in_cell"] = False
    return result.error_in_exec or result.error_before_exec if result is not None else KeyboardInterrupt()


def _cells_on_stack(error: BaseException, by_count: dict) -> list[int]:
    """The notebook cells on an interrupted cell's stack, outermost first (-1 for a cell not known)."""
    stack, tb = [], error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(CELL_NAME):
            stack.append(by_count.get(int(name[len(CELL_NAME):].split("-")[0]), -1))
        tb = tb.tb_next
    return stack


def _skip_dependents(hung: list[int], deps: dict, labels: dict, skipped: dict) -> None:
    """Marks every later cell that uses a cell that ran past its time limit as not to be run, and why."""
    for cell in hung:
        for later in deps.get(cell, []):
            skipped.setdefault(later, {"uses": labels.get(cell, f"cell {cell}")})   # worded by the grader (notebook_run)


def main():
    """A cold run: the payload on stdin, the records to $GRADER_RESULT_FD."""
    payload = json.loads(sys.stdin.read())
    out = os.fdopen(int(os.environ.pop("GRADER_RESULT_FD")), "w", buffering=1)

    def emit(record):
        out.write(json.dumps(record, default=repr) + "\n")
        out.flush()

    run_notebook(payload, emit)
    out.close()


if __name__ == "__main__":
    main()
