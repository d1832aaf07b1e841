"""A real JupyterLab on 127.0.0.1 over a copy of the project, and the system's Chromium driven by playwright
(Debian's package: playwright cannot download its own browser here). Used by tests/test_jupyterlab.py and
tests/test_browser.py. Without Chromium those tests skip locally but FAIL under CI=true, so CI cannot pass
without having run them."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from project_copy import clean_env, copy_project

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and os.path.exists(p)), None)
# Run All has finished (every cell ran, or one failed and the rest were unqueued): no cell is queued or running
# and at least one has an execution count.
FINISHED = """() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);
                      return !p.some(t => t.includes('*')) && p.some(t => /\\[\\d+\\]/.test(t)); }"""
UNRUN = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                 .filter(e => !/\\[\\d+\\]/.test(e.textContent)).length"""
IDLE = "Python 3 (ipykernel) | Idle"


def need_chromium():
    """playwright's sync API, or skip (locally) / fail (CI) saying what is missing."""
    missing = ("Chromium is not installed (apt-get install chromium)" if CHROMIUM is None else None)
    try:
        from playwright import sync_api
    except ImportError:
        missing = missing or "playwright is not installed (pip install -e '.[dev]')"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: CI must run the browser tests (./run.sh test installs chromium as root)")
        pytest.skip(missing)
    return sync_api


def launch(p):
    """The system's Chromium, headless."""
    return p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])


def run_all(page) -> None:
    """Run > Run All Cells once the kernel is idle."""
    page.get_by_text(IDLE).wait_for(timeout=180_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path, data_dir):
    """JupyterLab serving a copy of the project that has the data at ../shared/data, as in the README:
    ``(url, project)``."""
    project = copy_project(tmp_path / "ffbench")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir, target_is_directory=True)
    port = free_port()
    env = clean_env(JUPYTER_CONFIG_DIR=str(tmp_path / "jcfg"), JUPYTER_RUNTIME_DIR=str(tmp_path / "jrt"),
                    JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "jws"))
    env.pop("FFBENCH_DATA_DIR", None)
    # no "Would you like to get notified about Jupyter news?" toast over the page (it would hide the widgets)
    news = tmp_path / "jcfg" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
                             "--ServerApp.port_retries=0", "--ServerApp.token=", "--ServerApp.password=",
                             f"--ServerApp.root_dir={project}", "--allow-root"],
                            cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(1)
        yield url, project
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
