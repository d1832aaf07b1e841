"""Issue 25: a resume trusts nothing in checkpoint.json that the recorded rows and logs determine (points, records,
standings, FAAB budgets, LLM spend: an edited one is refused), a run stopped by a failing disk says so in run.json
and is resumable, and a batch refuses a negative seed up front."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ffbench_lib.cli import main
from ffbench_lib.runs.batch import load_batch
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import SimulatedCrash, code_fingerprint
from ffbench_lib.runs.rundir import CheckpointError

from engine_helpers import REPO, run_engine, same_run

STANDARD = REPO / "params" / "standard_10.yaml"


@pytest.fixture(scope="module")
def cache(data_dir) -> Path:
    """The test run's shared prepared-season cache (FFBENCH_CACHE_DIR, set by conftest): a season another test
    prepared is loaded, not prepared again."""
    return Path(os.environ["FFBENCH_CACHE_DIR"])


@pytest.fixture(scope="module")
def standard(data_dir, cache):
    league = load_config(STANDARD, data={"dir": str(data_dir)})
    return league, prepared_for(league, cache_root=cache)


@pytest.fixture(scope="module")
def crashed5(standard, tmp_path_factory) -> Path:
    """standard_10 (FAAB waivers, IR, trades, playoffs) killed right after week 5's checkpoint."""
    league, prepared = standard
    run = tmp_path_factory.mktemp("crashed") / "run"
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared, run, crash_after="week:5")
    return run


def _won(cp: dict) -> int:
    return next(i for i, r in enumerate(cp["tables"]["waiver_claims"]) if r["result"] == "won")


def _bump(row: dict, key: str, by=50.0) -> None:
    row[key] = round(row[key] + by, 2)


def _claim_and_budget(cp: dict) -> None:
    """A won bid lowered by 1 in transactions and the team's budget raised by 1 (consistent with each other), the
    claim row left as it was."""
    claim = cp["tables"]["waiver_claims"][_won(cp)]
    tx = next(r for r in cp["tables"]["transactions"] if r["kind"] == "waiver" and r["add"] == claim["add"])
    tx["bid"] -= 1
    cp["extras"]["waivers"]["faab"][claim["team"]] += 1


TAMPER = {  # what is edited -> what the refusal names
    "records points_for": (lambda cp: _bump(cp["records"]["VORP-1"], "points_for"),
                           "VORP-1's record (", "is not what its recorded lineups give"),
    "records W/L": (lambda cp: cp["records"]["VORP-1"].update(wins=cp["records"]["VORP-1"]["wins"] + 1,
                                                              losses=cp["records"]["VORP-1"]["losses"] - 1),
                    "VORP-1's record (", "is not what its recorded lineups give"),
    "standings row": (lambda cp: _bump(cp["tables"]["standings"][3], "points_for"),
                      "standings row 3 (week 1, ", "points_for"),
    "standings rank": (lambda cp: cp["tables"]["standings"][0].update(rank=2),
                       "standings row 0 (week 1, ", "rank 2 (the lineups give 1)"),
    "matchup points": (lambda cp: _bump(cp["tables"]["matchups"][0], "points_for"),
                       "matchups row 0 (week 1, ", "points_for"),
    "lineup point": (lambda cp: _bump(cp["tables"]["lineups"][0], "points"),
                     "lineups row 0 (week 1, ", "the season's actual points are"),
    "bench point": (lambda cp: _bump(cp["tables"]["bench"][-1], "points", -3.0),
                    "bench row ", "the season's actual points are"),
    "FAAB budget": (lambda cp: cp["extras"]["waivers"]["faab"].update({"VORP-1": 100}),
                    "waivers: the saved FAAB budgets", "not what the recorded waiver moves lead to"),
    "won bid and budget": (_claim_and_budget, "waivers: the won claims of waiver_claims", "transaction"),
    "llm_cost_usd negative": (lambda cp: cp.update(llm_cost_usd=-5.0), "llm_cost_usd is negative (-5.0)", ""),
    "llm_cost_usd altered": (lambda cp: cp.update(llm_cost_usd=0.25),
                             "llm_cost_usd is 0.25 USD; the live calls in llm_calls.jsonl", "cost 0.0 USD"),
}


def _tampered(src: Path, dst: Path, edit) -> Path:
    shutil.copytree(src, dst)
    cp = json.loads((dst / "checkpoint.json").read_text())
    edit(cp)
    (dst / "checkpoint.json").write_text(json.dumps(cp, separators=(",", ":")))
    return dst


@pytest.mark.parametrize("what", list(TAMPER))
def test_an_edited_checkpoint_value_is_refused(standard, crashed5, tmp_path, what):
    league, prepared = standard
    edit, *named = TAMPER[what]
    run = _tampered(crashed5, tmp_path / "run", edit)
    before = (run / "decisions.jsonl").read_bytes()
    with pytest.raises(CheckpointError) as err:
        run_engine(league, prepared, run, resume=True)
    msg = str(err.value)
    assert "checkpoint.json does not fit the league or the logs" in msg and "damaged or edited" in msg, msg
    assert all(n in msg for n in named) and "\n" not in msg, msg
    assert (run / "decisions.jsonl").read_bytes() == before  # refused before anything is touched


def test_an_unedited_checkpoint_still_resumes_identically(standard, crashed5, tmp_path):
    league, prepared = standard
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared, tmp_path / "whole", crash_after="week:6")
    shutil.copytree(crashed5, tmp_path / "run")
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared, tmp_path / "run", resume=True, crash_after="week:6")
    resumes = same_run(tmp_path / "whole", tmp_path / "run")
    assert [r["from_phase"] for r in resumes] == ["week:5"]


def _small_league(path: Path, data_dir: Path) -> Path:
    teams = [{"name": n, "agent": {"kind": "bot", "strategy": s}} for n, s in
             (("VORP-1", "vorp"), ("ADP-1", "adp"), ("Form-1", "recent_form"), ("Random-1", "random"))]
    path.write_text(yaml.safe_dump({"name": "disk", "season": 2024, "weeks": 2, "seed": 1, "teams": teams,
                                    "trades": {"weeks": [2]}, "data": {"dir": str(data_dir)}}, sort_keys=False))
    return path


def test_the_issue_edit_through_the_cli(tmp_path, data_dir, cache, capsys):
    """The tester's edit (+50 points for VORP-1) used to resume with exit 0 and another season: now exit 2 (the CLI
    in-process: its exit code and message are main's)."""
    cfg = _small_league(tmp_path / "l.yaml", data_dir)
    league = load_config(cfg)
    code_fingerprint.cache_clear()  # the code as the CLI below sees it (other work may have edited it meanwhile)
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_for(league, cache_root=cache), tmp_path / "run", crash_after="week:1")
    cp = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    TAMPER["records points_for"][0](cp)
    (tmp_path / "run" / "checkpoint.json").write_text(json.dumps(cp))
    capsys.readouterr()
    rc, err = main(["run", str(cfg), "--out", str(tmp_path / "run"), "--resume", "--quiet"]), capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert "VORP-1's record (" in err and "start the run again with another --out" in err, err


# ------------------------------------------------------------------------------------------- a failing disk
def _cli(env, *args, preexec_fn=None):
    return subprocess.run([sys.executable, "-m", "ffbench_lib", *map(str, args)], env=env, capture_output=True,
                          text=True, preexec_fn=preexec_fn)


def _file_size_limit(limit: int):
    def apply() -> None:  # writes past the limit fail with EFBIG (SIGXFSZ ignored, so the run sees the error)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.fixture(scope="module")
def disk_env(data_dir, cache):
    return {**os.environ, "FFBENCH_DATA_DIR": str(data_dir), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "FFBENCH_CACHE_DIR": str(cache)}


@pytest.fixture(scope="module")
def small_whole(disk_env, data_dir, cache, tmp_path_factory) -> tuple[Path, Path]:
    """The small league run whole (in-process, as the CLI's ``run_season`` plays it), once: what each
    stopped-then-resumed run below must end as."""
    from ffbench_lib.runs.season import run_season

    tmp = tmp_path_factory.mktemp("small")
    cfg = _small_league(tmp / "l.yaml", data_dir)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_CACHE_DIR", str(cache))
        run_season(cfg, out=tmp / "whole", progress=False)
    return cfg, tmp / "whole"


def _stopped_then_resumed(cfg: Path, run: Path, whole: Path, env: dict, preexec_fn=None, move_to: Path | None = None):
    r = _cli(env, "run", cfg, "--out", run, "--quiet", preexec_fn=preexec_fn)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "continue with:" in r.stderr and "--resume" in r.stderr, r.stderr
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "failed" and "--resume continues from the last checkpoint" in meta["reason"], meta
    if move_to is not None:  # off the full disk
        shutil.copytree(run, move_to)
        run = move_to
    r = _cli(env, "run", cfg, "--out", run, "--resume", "--quiet")
    assert r.returncode == 0, r.stderr
    resumes = same_run(whole, run)
    assert [x["from_status"] for x in resumes] == ["failed"]
    return meta


def test_a_write_that_fails_records_the_stop_and_resumes(tmp_path, disk_env, small_whole):
    """A real write failure without root: a file-size limit (RLIMIT_FSIZE) makes the decisions log's appends fail
    with EFBIG mid-draft; run.json (small) still records the stop, and --resume ends as an uninterrupted run."""
    cfg, whole = small_whole
    limit = (whole / "decisions.jsonl").stat().st_size // 3
    meta = _stopped_then_resumed(cfg, tmp_path / "run", whole, disk_env, _file_size_limit(limit))
    assert "File too large" in meta["reason"] and meta["phase"].startswith("draft:"), meta


def test_a_full_disk_records_the_stop_and_resumes(tmp_path, disk_env, small_whole):
    """A real full disk (a small tmpfs: root only): the torn log tail is cut back to the checkpoint to make room
    for run.json, which records the stop; moved to a disk with room, --resume ends as an uninterrupted run."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    cfg, whole = small_whole
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    size = (whole / "decisions.jsonl").stat().st_size // 2 // 1024  # full in the middle of the run
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}k", "tmpfs", str(mnt)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        meta = _stopped_then_resumed(cfg, mnt / "run", whole, disk_env, move_to=tmp_path / "run")
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert "No space left on device" in meta["reason"] and "the tables could not be written" in meta["reason"]


# ------------------------------------------------------------------------------------------------- batches
def test_a_negative_batch_seed_is_refused_up_front(tmp_path):
    f = tmp_path / "batch.yaml"
    f.write_text(yaml.safe_dump({"name": "t", "base": str(REPO / "params" / "demo.yaml"), "seeds": [-1],
                                 "out": str(tmp_path / "batch"), "analysis": False}))
    with pytest.raises(ConfigError, match=r"seeds\[0\]: Input should be greater than or equal to 0"):
        load_batch(f)
