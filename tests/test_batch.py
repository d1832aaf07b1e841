import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict

import pandas as pd
import pytest
import yaml

from ffbench_lib.runs.batch import load_batch, run_batch, run_configs
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.game.rules.draft import draft_order
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, run_engine

BASE = REPO / "params" / "demo.yaml"
SHORT = {"weeks": 3, "trades": {"weeks": [2]}}  # what a batch's bookkeeping needs of a season: a few weeks


def spec_file(tmp_path, **kw):
    d = {"name": "t", "base": str(BASE), "seeds": [0, 1], "workers": 1, "out": str(tmp_path / "batch"),
         "analysis": False, **kw}
    f = tmp_path / "batch.yaml"
    f.write_text(yaml.safe_dump(d))
    return f


def test_committed_batch_spec_is_valid():
    spec, base = load_batch(REPO / "params" / "batch_demo.yaml")
    assert base.resolve() == BASE.resolve() and len(spec.seeds) >= 4 and spec.workers == 2
    cfgs = run_configs(spec, base)
    assert all(isinstance(c, dict) and len(c["teams"]) == 10 and c["season"] == 2024 for c in cfgs.values())


def test_batch_spec_errors_name_the_field(tmp_path):
    with pytest.raises(ConfigError, match="seeds: Value error|seeds: a seed is listed twice|a seed is listed twice"):
        load_batch(spec_file(tmp_path, seeds=[1, 1]))
    with pytest.raises(ConfigError, match="worker: unknown key"):
        load_batch(spec_file(tmp_path, worker=2))
    with pytest.raises(ConfigError, match=r"analysis: .*'03_standing': expected true, false or a list of analysis "
                                          r"notebooks from 03_standings, 04_positions"):
        load_batch(spec_file(tmp_path, analysis=["03_standing"]))


def test_a_spec_picks_its_analysis_notebooks_in_their_order(tmp_path):
    pick = load_batch(spec_file(tmp_path, analysis=["08_model_comparison", "03_standings"]))[0]
    assert pick.analysis_notebooks == ("03_standings", "08_model_comparison")
    assert load_batch(spec_file(tmp_path, analysis=True))[0].analysis_notebooks[-1] == "09_waivers"
    assert load_batch(spec_file(tmp_path, analysis=False))[0].analysis_notebooks == ()


def test_rotate_design_balances_draft_slots(tmp_path):
    spec, base = load_batch(spec_file(tmp_path, seeds=list(range(10))))
    slots = defaultdict(list)
    for seed, cfg in run_configs(spec, base).items():
        league = League.model_validate(cfg)
        for i, team in enumerate(draft_order([t.name for t in league.teams], league.draft.order, seed)):
            slots[team].append(i)
    assert all(sorted(v) == list(range(10)) for v in slots.values())


@pytest.mark.slow
def test_batch_reports_a_broken_run_and_finishes_the_rest(tmp_path, data_dir, capsys, monkeypatch):
    """Through the CLI's main() in this process (exit codes through a real process:
    test_run_failing_inside_the_notebook_...); the analysis runs over the complete runs only. One analysis notebook
    stands for the batch's wiring: each notebook on its own is tests/test_notebooks.py's and test_analysis.py's."""
    from ffbench_lib import cli

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    f = spec_file(tmp_path, seeds=[0, 1], workers=1, overrides=SHORT, seed_overrides={1: {"weeks": 99}},
                  analysis=["03_standings"])  # the notebook that draws win_rate_ci
    assert cli.main(["batch", str(f), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "seed 1 failed" in out and "weeks" in out and "Traceback" not in out + err, out + err
    assert "batch t: 1/2 runs complete" in out and "analysis 03_standings: ok" in out
    runs = pd.read_csv(tmp_path / "batch" / "batch_runs.csv").set_index("seed")
    assert runs.loc[0, "status"] == "complete"
    assert runs.loc[1, "status"] == "failed" and "less than or equal to 18" in runs.loc[1, "error"]
    summary = json.loads((tmp_path / "batch" / "batch_summary.json").read_text())
    assert summary["analysis"] == {"03_standings": "ok"}
    assert (tmp_path / "batch" / "analysis" / "win_rate_ci.png").exists()
    assert (tmp_path / "batch" / "notebooks" / "seed-0.ipynb").exists()
    assert not (tmp_path / "batch" / "notebooks" / "seed-1.ipynb").exists()  # refused before it ran
    cells = json.loads((tmp_path / "batch" / "analysis" / "03_standings.ipynb").read_text())["cells"]
    (injected,) = ["".join(c["source"]) for c in cells if "injected-parameters" in c["metadata"].get("tags", [])]
    assert str((tmp_path / "batch" / "runs" / "seed-0").resolve()) in injected and "seed-1" not in injected


@pytest.mark.slow
def test_killed_batch_resumes_without_redoing_finished_runs(tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    # one run finished, one not, at the kill (of the worker playing it: runner direct)
    f = spec_file(tmp_path, seeds=[0, 1], workers=1, overrides=SHORT, runner="direct")
    env = {**os.environ, "FFBENCH_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "ffbench_lib", "batch", str(f), "--quiet"], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    first = tmp_path / "batch" / "runs" / "seed-0" / "run.json"
    deadline = time.time() + 300
    while time.time() < deadline:
        if first.exists() and json.loads(first.read_text()).get("status") == "complete":
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the batch and its worker
    proc.wait()
    done_before = first.stat().st_mtime_ns
    statuses = {p.parent.name: json.loads(p.read_text())["status"]
                for p in (tmp_path / "batch" / "runs").glob("*/run.json")}
    assert statuses["seed-0"] == "complete" and statuses.get("seed-1") != "complete"
    summary = run_batch(f, progress=False)
    assert summary["complete"] == 2 and summary["failed"] == []
    assert first.stat().st_mtime_ns == done_before  # not redone
    runs = pd.read_csv(tmp_path / "batch" / "batch_runs.csv").set_index("seed")
    assert bool(runs.loc[0, "skipped"]) is True


def test_concurrency_limit_is_held_in_the_batch_limits_folder(prepared_2024, tmp_path, monkeypatch):
    """A run in a local batch worker holds its provider's limit in the batch's lock files (shared by all workers;
    across processes: tests/test_provider_limits.py)."""
    from test_llm import llm_league

    from ffbench_lib.llm.limits import slot_folder

    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", str(tmp_path / ".limits"))
    with FakeOpenAIServer(latency_s=0.05) as srv:
        d = llm_league(srv.api_base, tmp_path / "cache", n_llm=4, weeks=2).model_dump(mode="json")
        for t in d["teams"][:4]:  # the LLM teams
            t["agent"]["max_concurrency"] = 2
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
        assert srv.max_inflight == 2
    slots = slot_folder(tmp_path / ".limits", f"openai@{srv.api_base}")
    assert sorted(p.name for p in slots.iterdir()) == ["slot-0.lock", "slot-1.lock"]


@pytest.mark.slow
def test_run_failing_inside_the_notebook_is_one_line_naming_notebook_and_cell(tmp_path):
    """A run whose notebook raises is reported as notebook, cell and exception, never a traceback."""
    (tmp_path / "nodata" / "nflverse").mkdir(parents=True)
    f = spec_file(tmp_path, seeds=[1], seed_overrides={1: {"data": {"dir": str(tmp_path / "nodata")}}})
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "batch", str(f), "--quiet"], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 1 and "Traceback" not in r.stderr + r.stdout
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("  seed 1 failed: ")]
    assert "02_simulate_season.ipynb: cell" in line and "DataError" in line, line
    error = pd.read_csv(tmp_path / "batch" / "batch_runs.csv").set_index("seed").loc[1, "error"]
    assert "\n" not in error and "02_simulate_season.ipynb" in error


def test_seed_overrides_refuse_seed_and_unknown_seeds(tmp_path):
    with pytest.raises(ConfigError, match=r"seed_overrides: seed\(s\) 0 set `seed`.*list the seed you want in seeds"):
        load_batch(spec_file(tmp_path, seeds=[0, 1], seed_overrides={0: {"seed": 1}}))
    with pytest.raises(ConfigError, match=r"seed_overrides: seed\(s\) 5 not in seeds"):
        load_batch(spec_file(tmp_path, seeds=[0, 1], seed_overrides={5: {"weeks": 3}}))
    load_batch(spec_file(tmp_path, seeds=[0, 1], seed_overrides={1: {"weeks": 3}}))


@pytest.mark.slow
def test_changed_spec_never_reuses_the_old_runs(tmp_path, data_dir, monkeypatch):
    """A finished run is skipped only if it is this spec's run; after an edit the batch is refused before it
    writes anything (the finished batch's records are kept), naming out, the keys and the fix."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    short = {"weeks": 3, "trades": {"weeks": [2]}}
    f = spec_file(tmp_path, seeds=[0], seed_overrides={0: short}, runner="direct")
    assert run_batch(f, progress=False)["complete"] == 1
    assert run_batch(f, progress=False)["complete"] == 1  # unchanged: reused
    assert bool(pd.read_csv(tmp_path / "batch" / "batch_runs.csv").loc[0, "skipped"]) is True
    records = {p.name: p.read_bytes() for p in (tmp_path / "batch").glob("batch_*")}
    f = spec_file(tmp_path, seeds=[0], seed_overrides={0: {**short, "schedule": "round_robin"}})
    with pytest.raises(ConfigError, match=r"out: .* holds 1 run\(s\) of another config \(schedule: 'random' in the "
                                          r"runs, 'round_robin' now\).*use another out, or restore the spec"):
        run_batch(f, progress=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "batch").glob("batch_*")} == records and len(records) == 2
    run = json.loads((tmp_path / "batch" / "runs" / "seed-0" / "run.json").read_text())
    assert run["status"] == "complete"  # the old run is left as it was


@pytest.mark.slow
def test_workers_exit_when_the_batch_is_killed(tmp_path, data_dir):
    """kill -9 of the batch process leaves no orphaned worker (or kernel) behind."""
    psutil = pytest.importorskip("psutil")
    f = spec_file(tmp_path, seeds=[0, 1], workers=2)
    env = {**os.environ, "FFBENCH_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "ffbench_lib", "batch", str(f), "--quiet"], env=env, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.time() + 120
        workers = []
        while time.time() < deadline and not any(w.children() for w in workers):  # a worker has its kernel
            workers = parent.children()
            time.sleep(0.1)
        family = parent.children(recursive=True)
        assert workers and len(family) > len(workers), "no worker with a kernel started"
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        def alive(p):
            try:
                return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return False

        deadline = time.time() + 30  # a bound, not a timing assertion
        while time.time() < deadline and any(alive(p) for p in family):
            time.sleep(0.2)
        assert not [p.pid for p in family if alive(p)]
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.slow
def test_direct_runner_plays_the_notebooks_runs_byte_for_byte(tmp_path, data_dir, monkeypatch):
    """runner: direct plays each season in its worker without a kernel: the same run directory, every file byte
    for byte, as the notebook's (from another working folder too), what it printed in notebooks/seed-N.log, and a
    season's error as its exception."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    (tmp_path / "nodata" / "nflverse").mkdir(parents=True)
    bad = {"data": {"dir": str(tmp_path / "nodata")}}
    runs = {}
    for runner, seeds in (("notebook", [0]), ("direct", [0, 1])):  # a notebook's failure: test_run_failing_...
        (tmp_path / runner).mkdir()
        monkeypatch.chdir(tmp_path / runner)
        f = spec_file(tmp_path / runner, seeds=seeds, overrides=SHORT, runner=runner,
                      seed_overrides={1: bad} if 1 in seeds else {})
        summary = run_batch(f, progress=False)
        assert summary["complete"] == 1 and [r["seed"] for r in summary["failed"]] == seeds[1:]
        run = tmp_path / runner / "batch" / "runs" / "seed-0"
        runs[runner] = {p.relative_to(run).as_posix(): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}
    assert runs["direct"] == runs["notebook"] and "decisions.jsonl" in runs["direct"] and len(runs["direct"]) > 10
    error = pd.read_csv(tmp_path / "direct" / "batch" / "batch_runs.csv").set_index("seed").loc[1, "error"]
    assert error.startswith("DataError: ") and "\n" not in error, error
    notebooks = tmp_path / "direct" / "batch" / "notebooks"
    assert sorted(p.name for p in notebooks.iterdir()) == ["seed-0.log", "seed-1.log"]
    assert "DataError" not in (notebooks / "seed-0.log").read_text()


def test_direct_runner_is_for_the_local_executor(tmp_path):
    with pytest.raises(ConfigError, match="runner: direct runs each season inside a local worker process; with "
                                          "executor: dask use runner: notebook"):
        load_batch(spec_file(tmp_path, runner="direct", executor="dask"))
    with pytest.raises(ConfigError, match=r"runner: Input should be 'notebook' or 'direct'"):
        load_batch(spec_file(tmp_path, runner="kernel"))
