"""A newcomer opens the simulation notebook in a real JupyterLab (kernel in notebooks/) and runs all cells with
the default parameters: it works, and its outputs go to the project's outputs/. Needs Chromium; skipped without."""
import json
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path, data_dir):
    """JupyterLab serving a copy of the project that has the data at ../shared/data, as in the README."""
    project = copy_project(tmp_path / "ffbench")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir, target_is_directory=True)
    port = free_port()
    env = clean_env(JUPYTER_CONFIG_DIR=str(tmp_path / "jcfg"), JUPYTER_RUNTIME_DIR=str(tmp_path / "jrt"),
                    JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "jws"))
    env.pop("FFBENCH_DATA_DIR", None)
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


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_simulation_notebook_runs_all_cells_in_jupyterlab(lab, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    url, project = lab
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(180_000)  # a busy CI machine: a bound, not a timing assertion
            page.goto(f"{url}/lab/tree/notebooks/02_simulate_season.ipynb")
            page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=180_000)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            page.wait_for_function(FINISHED, timeout=600_000)
            page.screenshot(path=str(tmp_path / "02_in_jupyterlab.png"))
            assert page.get_by_text("Traceback").count() == 0 and page.evaluate(UNRUN) == 0, page.inner_text(
                ".jp-Notebook")[-3000:]
        finally:
            browser.close()
    meta = json.loads((project / "outputs" / "runs" / "demo-s1" / "run.json").read_text())
    assert meta["status"] == "complete"
    assert not (project / "notebooks" / "outputs").exists()
