"""A real JupyterLab server (and formgrader's Jupyter server) on 127.0.0.1 and a real Chromium driven by Playwright,
for `make e2e`."""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "build" / "e2e"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Flags this machine needs: no sandbox as root, and no background traffic to hosts it cannot reach.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# Grading here (make autograde, nbgrader's) uses the repository's own hidden cases, never a term secret of the machine's.
os.environ["LAB_TERM_SECRET"] = "public"
# tests/nbgrader_course.py (the nbgrader course the lifecycle test runs) is shared; appended, so `conftest` stays ours.
if str(ROOT / "tests") not in sys.path:
    sys.path.append(str(ROOT / "tests"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, seconds: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"jupyter did not answer {url} within {seconds:.0f} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def shots() -> Path:
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    return SHOTS


@contextlib.contextmanager
def step(page, shots: Path, name: str):
    """Run one step; on failure keep a screenshot and fail with the step's name."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - any failure is reported with the step that broke
        with contextlib.suppress(Exception):
            page.screenshot(path=str(shots / f"FAILED-{slug}.png"), full_page=False)
        pytest.fail(f"e2e step failed: {name}: {type(exc).__name__}: {exc}", pytrace=False)
    with contextlib.suppress(Exception):
        page.screenshot(path=str(shots / f"{slug}.png"))


def private_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment with a HOME and Jupyter folders of its own: no user's settings, kernels or extensions."""
    return {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "lab-settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            **extra}


@contextlib.contextmanager
def jupyter(app: str, root_dir: Path, env: dict[str, str], log: Path, *options: str):
    """`.venv/bin/jupyter <app>` on 127.0.0.1 with a token, started in `root_dir`; stopped by its PID."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [str(Path(sys.executable).parent / "jupyter"), app, "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root_dir}", "--ServerApp.open_browser=False", "--allow-root", *options]
    with open(log, "w") as handle:
        proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", 300, proc, log)  # generous: a busy machine
        yield {"url": f"http://127.0.0.1:{port}", "token": token, "workspace": root_dir, "pid": proc.pid}
    finally:
        stop(proc)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, shots):
    """`.venv/bin/jupyter lab` on 127.0.0.1 with a token, in an empty workspace; stopped by its PID."""
    work = tmp_path_factory.mktemp("e2e")
    workspace, home = work / "workspace", work / "home"
    settings = home / "lab-settings" / "@jupyterlab" / "notebook-extension"
    workspace.mkdir()
    settings.mkdir(parents=True)
    # Render every cell (no virtual scrolling), so the n-th cell of the page is the n-th cell of the file.
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env = private_env(home, MPLBACKEND="module://matplotlib_inline.backend_inline")
    with jupyter("lab", workspace, env, shots / "jupyter-server.log",
                 "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate") as server:
        yield server


def stop(proc: subprocess.Popen) -> None:
    """End the server and the kernels it started (its process group), by its PID."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: `make e2e` installs Debian's chromium (needs root and apt)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
