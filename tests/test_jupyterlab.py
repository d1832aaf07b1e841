"""A newcomer opens the simulation notebook in a real JupyterLab (kernel in notebooks/) and runs all cells with
the default parameters: it works, and its outputs go to the project's outputs/. Needs Chromium: skipped without
it locally, failed under CI (tests/jupyterlab_helpers.py)."""
import json

import pytest

from jupyterlab_helpers import FINISHED, UNRUN, launch, need_chromium, run_all


@pytest.mark.slow
@pytest.mark.browser
def test_simulation_notebook_runs_all_cells_in_jupyterlab(lab, tmp_path):
    sync_api = need_chromium()
    url, project = lab
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(180_000)  # a busy CI machine: a bound, not a timing assertion
            page.goto(f"{url}/lab/tree/notebooks/02_simulate_season.ipynb")
            run_all(page)
            page.wait_for_function(FINISHED, timeout=600_000)
            page.screenshot(path=str(tmp_path / "02_in_jupyterlab.png"))
            assert page.get_by_text("Traceback").count() == 0 and page.evaluate(UNRUN) == 0, page.inner_text(
                ".jp-Notebook")[-3000:]
        finally:
            browser.close()
    meta = json.loads((project / "outputs" / "runs" / "demo-s1" / "run.json").read_text())
    assert meta["status"] == "complete"
    assert not (project / "notebooks" / "outputs").exists()
