"""The newcomer's project, built once per test run for test_notebooks and test_analysis: a copy of the project whose
outputs/runs holds the run notebook 02 makes with its defaults (demo-s1) beside four more demo seeds (0, 2, 3, 4)
and one partial run, and each analysis notebook executed once on it as JupyterLab runs it (defaults, kernel in
notebooks/). test_notebooks checks that the defaults work from notebooks/; test_analysis checks what the same
executions show: one execution per notebook serves both."""
from __future__ import annotations

import json
from pathlib import Path

import papermill as pm
import pytest

from conftest import built_once
from engine_helpers import demo_league, run_engine
from ffbench_lib.runs.notebooks import KERNEL_ARGS
from ffbench_lib.runs.runner import SimulatedCrash
from project_copy import OVERRIDES, copy_project

ANALYSIS = ["03_standings", "04_positions", "05_draft", "06_start_sit", "07_trades", "08_model_comparison",
            "09_waivers"]
#: the seeds played in-process beside notebook 02's demo-s1: five seeds of the demo in all
OTHER_SEEDS = (0, 2, 3, 4)


def errors(nb_path: Path) -> list[dict]:
    cells = json.loads(Path(nb_path).read_text())["cells"]
    return [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


def run_as_in_jupyterlab(project: Path, name: str, data_dir: Path, parameters: dict | None = None, tag: str = "",
                         executed: Path | None = None) -> Path:
    """Execute ``notebooks/<name>.ipynb`` of the copy with its default parameters (or ``parameters``) and the
    kernel's cwd in ``notebooks/`` (papermill's ``cwd``; not ffbench_lib.runs.notebooks.execute, which starts it at
    the root) into ``executed`` (default ``<project>/../executed/<name><tag>.ipynb``)."""
    executed = executed or project.parent / "executed" / f"{name}{tag}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for k in OVERRIDES:
            mp.delenv(k, raising=False)
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        pm.execute_notebook(str(project / "notebooks" / f"{name}.ipynb"), str(executed), kernel_name="python3",
                            parameters=parameters or {}, cwd=str(project / "notebooks"), progress_bar=False,
                            execution_timeout=600, extra_arguments=KERNEL_ARGS)
    assert errors(executed) == []
    assert not (project / "notebooks" / "outputs").exists(), "outputs landed in notebooks/outputs"
    return executed


def newcomer_project(tmp_path_factory, data_dir: Path, prepared) -> Path:
    """The project copy, once per test run: notebook 02 run with its defaults (outputs/runs/demo-s1, a full demo
    season), then demo seeds 0, 2, 3, 4 (full seasons, as notebook 02 plays them) and a partial run (crashed after
    week 1: every analysis notebook says it left it out) played in-process into the same outputs/runs."""
    def build(folder: Path) -> None:
        project = copy_project(folder / "ffbench")
        run_as_in_jupyterlab(project, "02_simulate_season", data_dir, executed=folder / "02_simulate_season.ipynb")
        runs = project / "outputs" / "runs"
        for seed in OTHER_SEEDS:
            run_engine(demo_league(seed=seed), prepared, runs / f"demo-s{seed}")
        with pytest.raises(SimulatedCrash):
            run_engine(demo_league(seed=9, weeks=3), prepared, runs / "partial", crash_after="week:1")

    return built_once(tmp_path_factory, "newcomer-project", build) / "ffbench"


def newcomer_notebook(tmp_path_factory, project: Path, data_dir: Path, name: str) -> Path:
    """Analysis notebook ``name`` executed once per test run on the newcomer's project, with its defaults (runs
    ``outputs/runs/*``, figures into ``outputs/analysis``); returns the executed copy."""
    def build(folder: Path) -> None:
        run_as_in_jupyterlab(project, name, data_dir, executed=folder / f"{name}.ipynb")

    return built_once(tmp_path_factory, f"newcomer-{name}", build) / f"{name}.ipynb"
