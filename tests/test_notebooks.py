"""Every notebook executes under papermill on real data and writes what it promises."""
import json

import papermill as pm
import pytest

from ffbench_lib.notebooks import KERNEL_ARGS, execute

from project_copy import OVERRIDES, copy_project

ANALYSIS = ["03_standings", "04_positions", "05_draft", "06_start_sit", "07_trades", "08_model_comparison"]


def errors(nb_path):
    cells = json.loads(nb_path.read_text())["cells"]
    return [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.slow
def test_prepare_notebook_executes(data_dir, tmp_path, capfd):
    out = tmp_path / "prep"
    nb = execute("01_prepare_data.ipynb", tmp_path / "01.ipynb",
                 {"season": 2023, "source": "sportsdataio", "data_dir": str(data_dir), "out": str(out),
                  "scoring": "half_ppr"}, timeout_s=600)
    for f in ("players.parquet", "weekly.parquet", "manifest.json", "points_by_position.png",
              "projected_vs_actual.svg", "projection_accuracy.csv"):
        assert (out / f).exists(), f
    assert json.loads((out / "manifest.json").read_text())["scoring"]["receptions"] == 0.5
    cells = json.loads(nb.read_text())["cells"]
    assert errors(nb) == []
    assert any(c.get("metadata", {}).get("tags") == ["injected-parameters"] for c in cells)
    # the kernel's "running over TCP without encryption" notice is not repeated on every kernel start
    assert "without encryption" not in capfd.readouterr().err


# --- As a newcomer opens them: JupyterLab starts the kernel in notebooks/, parameters left at their defaults.

@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("newcomer") / "ffbench")


def run_as_in_jupyterlab(project, name, data_dir):
    """Execute ``notebooks/<name>.ipynb`` of the copy with its default parameters and the kernel's cwd in
    ``notebooks/`` (papermill's ``cwd``; not ffbench_lib.notebooks.execute, which starts it at the root)."""
    executed = project.parent / "executed" / f"{name}.ipynb"
    executed.parent.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for k in OVERRIDES:
            mp.delenv(k, raising=False)
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        pm.execute_notebook(str(project / "notebooks" / f"{name}.ipynb"), str(executed), kernel_name="python3",
                            cwd=str(project / "notebooks"), progress_bar=False, execution_timeout=600,
                            extra_arguments=KERNEL_ARGS)
    assert errors(executed) == []
    assert not (project / "notebooks" / "outputs").exists(), "outputs landed in notebooks/outputs"
    return executed


@pytest.fixture(scope="module")
def simulated(project, data_dir):
    return run_as_in_jupyterlab(project, "02_simulate_season", data_dir)


@pytest.mark.slow
def test_prepare_notebook_defaults_from_notebooks_folder(project, data_dir):
    run_as_in_jupyterlab(project, "01_prepare_data", data_dir)
    prepared = project / "outputs" / "prepared" / "2024-nflverse-ppr"
    assert json.loads((prepared / "manifest.json").read_text())["season"] == 2024
    assert (prepared / "points_by_position.png").exists()


@pytest.mark.slow
def test_simulate_notebook_defaults_from_notebooks_folder(project, simulated):
    run = project / "outputs" / "runs" / "demo-s1"
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    # the engine's prepared-season cache also defaults to the root's outputs/
    assert any((project / "outputs" / "prepared").glob("2024-nflverse-builtin-*/manifest.json"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ANALYSIS)
def test_analysis_notebook_defaults_from_notebooks_folder(project, simulated, data_dir, name):
    run_as_in_jupyterlab(project, name, data_dir)
    assert any((project / "outputs" / "analysis").glob("*.png"))
