"""Every notebook executes under papermill (on the synthetic season; SportsData.io on real data) and writes what it
promises."""
import json
import re
import shutil

import pandas as pd
import pytest

from ffbench_lib.config.league import Waivers

from ffbench_lib.runs.notebooks import execute

from analysis_helpers import ANALYSIS, errors, newcomer_notebook, newcomer_project, run_as_in_jupyterlab
from engine_helpers import demo_league, run_engine
from project_copy import copy_project

#: a player id as nflverse (and the synthetic world) writes them: 00-0031234, 00-9000123
GSIS_ID = re.compile(r"\b00-\d{7}\b")


@pytest.mark.slow
def test_prepare_notebook_executes(real_data_dir, tmp_path, capfd):
    """SportsData.io's 2023 season (real data: the synthetic world is nflverse-only)."""
    out = tmp_path / "prep"
    nb = execute("01_prepare_data.ipynb", tmp_path / "01.ipynb",
                 {"season": 2023, "source": "sportsdataio", "data_dir": str(real_data_dir), "out": str(out),
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
    """A project copy of this module's own (notebook 01, the waiver runs)."""
    return copy_project(tmp_path_factory.mktemp("newcomer") / "ffbench")


@pytest.fixture(scope="module")
def simulated(data_dir, prepared_2024, tmp_path_factory):
    """The newcomer's project once notebook 02 ran with its defaults (analysis_helpers, shared with
    test_analysis: its outputs/runs also holds four more demo seeds and a partial run)."""
    return newcomer_project(tmp_path_factory, data_dir, prepared_2024)


@pytest.mark.slow
def test_prepare_notebook_defaults_from_notebooks_folder(project, data_dir):
    run_as_in_jupyterlab(project, "01_prepare_data", data_dir)
    prepared = project / "outputs" / "prepared" / "2024-nflverse-ppr"
    assert json.loads((prepared / "manifest.json").read_text())["season"] == 2024
    assert (prepared / "points_by_position.png").exists()


@pytest.mark.slow
def test_simulate_notebook_defaults_from_notebooks_folder(simulated):
    run = simulated / "outputs" / "runs" / "demo-s1"
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    # the engine's prepared-season cache also defaults to the root's outputs/
    assert any((simulated / "outputs" / "prepared").glob("2024-nflverse-builtin-*/manifest.json"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ANALYSIS)
def test_analysis_notebook_defaults_from_notebooks_folder(simulated, data_dir, tmp_path_factory, name):
    """Executed once per test run (test_analysis checks what the same executions show)."""
    executed = newcomer_notebook(tmp_path_factory, simulated, data_dir, name)
    assert errors(executed) == [] and any((simulated / "outputs" / "analysis").glob("*.png"))
    if name == "09_waivers":  # the demo runs have waivers off: one line says so, no empty figure
        assert any("no run used waivers" in t for t in texts(executed))
        assert not list((simulated / "outputs" / "analysis").glob("waiver*"))


def texts(nb_path):
    cells = json.loads(nb_path.read_text())["cells"]
    return ["".join(t) for c in cells for o in c.get("outputs", [])
            for t in ([o.get("text", "")] + [o.get("data", {}).get("text/plain", "")])]


def traded_undrafted(run) -> set[str]:
    """Players the run's trades moved whom nobody drafted (waiver pickups)."""
    drafted = set(pd.read_parquet(run / "draft_picks.parquet")["player_id"])
    trades = pd.read_parquet(run / "trades.parquet")
    return {p for r in trades.itertuples() for p in [*r.proposer_gives, *r.receiver_gives]} - drafted


@pytest.fixture(scope="module")
def waiver_run(project, prepared_2024, tmp_path_factory):
    """A short demo season with waivers on (the bots claim and add free agents), inside the project copy: the first
    seed whose week-4 trades move players nobody drafted (chosen from the data, not known in advance)."""
    tries = tmp_path_factory.mktemp("waiver_tries")
    for seed in range(1, 9):
        league = demo_league(weeks=4, seed=seed).model_copy(update={"waivers": Waivers(enabled=True)})
        run_engine(league, prepared_2024, tries / f"demo-s{seed}")
        if traded_undrafted(tries / f"demo-s{seed}"):
            out = project / "outputs" / "waiver_runs" / f"demo-s{seed}"
            shutil.copytree(tries / f"demo-s{seed}", out)
            return out
    pytest.fail("no seed of 1-8 trades a player nobody drafted in week 4 of a 4-week demo season with waivers")


@pytest.mark.slow
def test_transactions_name_the_players_including_undrafted_ones(waiver_run, prepared_2024):
    tx = pd.read_parquet(waiver_run / "transactions.parquet")
    drafted = set(pd.read_parquet(waiver_run / "draft_picks.parquet")["player_id"])
    names = prepared_2024.players.set_index("player_id")["player_name"]
    assert len(tx) and (~tx["add"].isin(drafted)).any()  # some pickups were never drafted
    assert traded_undrafted(waiver_run)  # notebook 07 must name them too
    assert tx["add_name"].tolist() == names.reindex(tx["add"]).tolist()
    assert tx["drop_name"].tolist() == names.reindex(tx["drop"]).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["07_trades", "09_waivers"])
def test_analysis_notebooks_on_a_run_with_waivers(project, waiver_run, data_dir, name):
    out = project / "outputs" / "analysis_waivers"
    executed = run_as_in_jupyterlab(project, name, data_dir, {"runs": "outputs/waiver_runs/*",
                                                              "out": "outputs/analysis_waivers"}, tag="-waivers")
    shown = " ".join(texts(executed))
    assert "no run used waivers" not in shown and not GSIS_ID.search(shown)  # tables name players, never ids
    if name == "09_waivers":
        assert (out / "waiver_pickup_points.png").stat().st_size > 10_000
        pickups = pd.read_csv(out / "waiver_pickups.csv")
        assert len(pickups) and pickups["add_name"].notna().all() and pickups["drop_name"].notna().all()
        per_agent = pd.read_csv(out / "waiver_summary_by_agent.csv").set_index("agent")
        assert per_agent["pickup_started_points"].sum() == pytest.approx(pickups["points_started"].sum(), abs=0.05)
        assert per_agent.loc["bot:adp", "claims"] == 0  # the ADP bot never claims
        results = pd.read_csv(out / "waiver_claim_results.csv")
        assert results["won"].sum() == len(pickups)
        ci = pd.read_csv(out / "waiver_value_ci.csv")
        assert set(ci["agent"]) == set(per_agent.index) and (ci["runs"] == 1).all()
