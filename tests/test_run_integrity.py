"""Run-directory integrity: one writer per directory, resume from any moment (SIGKILL included) ends
byte-identical to an uninterrupted run, a resume must be the same run (config, data, an intact checkpoint),
the budget stops at a checkpoint (the draft included), and signals leave a resumable, labelled run."""
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ffbench_lib.cli import main
from ffbench_lib.config.load import load_config
from ffbench_lib.runs.runner import Engine, ResumeMismatch, SimulatedCrash, code_fingerprint
from ffbench_lib.runs.rundir import CheckpointError, RunDir, RunLocked, exclusive
from ffbench_lib.core.aio import run_sync
from ffbench_lib.runs.season import run_season
from ffbench_lib.game.state import LeagueState
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, ScriptedAgent, agents_with, digests, run_engine, same_run

BOTS = [("VORP-1", "vorp"), ("ADP-1", "adp"), ("Form-1", "recent_form"), ("Random-1", "random"),
        ("VORP-2", "vorp"), ("Random-2", "random")]
ROUNDS = 12  # the default roster size
PHASES = [f"draft:{r}" for r in range(1, ROUNDS)] + ["drafted"]


#: starting slots and bench of the LLM leagues: a 6-round draft (every LLM call is an HTTP round trip)
LLM_ROSTER = {"QB": 1, "RB": 1, "WR": 1, "TE": 1, "FLEX": 1, "BENCH": 1}


def league_dict(seed: int, weeks: int = 6, llm_teams: int = 0, api_base: str | None = None,
                roster: dict | None = None, waivers: bool = False, **llm) -> dict:
    """A 6-team league on the 2024 season (small enough for many runs)."""
    teams = [{"name": n, "agent": {"kind": "bot", "strategy": s}} for n, s in BOTS]
    for i in range(llm_teams):
        teams[i] = {"name": f"M{i}", "agent": {
            "kind": "llm", "model": f"openai/fake-model-{i}", "api_base": api_base, "timeout_s": 5.0,
            "max_tokens": 2000, "input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6}}
    d = {"name": "integrity", "season": 2024, "weeks": weeks, "seed": seed, "teams": teams,
         "trades": {"weeks": [w for w in (2, 4) if w <= weeks]}}
    if roster:
        d["roster"] = roster
    if waivers:
        d["waivers"] = {"enabled": True}
    if llm_teams or llm:
        d["llm"] = {**({"backoff_s": 0.01} if llm_teams else {}), **llm}
    return d


def write_league(path: Path, **kw) -> Path:
    path.write_text(yaml.safe_dump(league_dict(**kw), sort_keys=False))
    return path


@pytest.fixture(scope="module")
def cli_env(data_dir):
    """The subprocesses' environment: the test run's data and its shared prepared-season cache (FFBENCH_CACHE_DIR,
    set by conftest), as the in-process runs see them."""
    return {**os.environ, "FFBENCH_DATA_DIR": str(data_dir), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def ffbench(capsys, *args) -> tuple[int, str]:
    """``ffbench ARGS`` in this process: main's exit code and stderr (a subprocess start costs 3-6 s under load;
    the tests about processes (kill -9, signals, the lock of a killed holder) start real ones)."""
    capsys.readouterr()
    rc = main(list(map(str, args)))
    return rc, capsys.readouterr().err


def popen(env, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ffbench_lib", *map(str, args)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def status(run: Path) -> str | None:
    try:
        return json.loads((run / "run.json").read_text()).get("status")
    except (OSError, ValueError):
        return None


def kill_at_size(proc: subprocess.Popen, log: Path, size: int, sig=signal.SIGKILL) -> None:
    """Send ``sig`` as soon as ``log`` holds ``size`` bytes (polling the file, never a fixed sleep)."""
    while proc.poll() is None:
        if log.exists() and log.stat().st_size >= size:
            proc.send_signal(sig)
            break
        time.sleep(0.001)
    proc.wait(timeout=120)


@pytest.fixture(scope="module")
def whole3(prepared_2024, tmp_path_factory):
    """One uninterrupted 3-week league (seed 4), played once: what the runs below, interrupted, damaged or locked
    in other ways, must each end as once resumed."""
    tmp = tmp_path_factory.mktemp("whole3")
    league = load_config(write_league(tmp / "l.yaml", seed=4, weeks=3))
    run_engine(league, prepared_2024, tmp / "whole")
    return league, tmp / "whole"


@pytest.fixture(scope="module")
def whole_cli(tmp_path_factory):
    """A 4-week league with waivers and trade weeks 2 and 4 (seed 1) as ``run_season`` plays it, once: the run the
    CLI, killed or signalled and resumed, must end as."""
    tmp = tmp_path_factory.mktemp("whole-cli")
    cfg = write_league(tmp / "s1.yaml", seed=1, weeks=4, waivers=True)
    run_season(cfg, out=tmp / "whole", progress=False)
    return cfg, tmp / "whole"


# ----------------------------------------------------------------------------------------- state round trip
def test_checkpoint_round_trips_exactly(prepared_2024, tmp_path):
    """Insertion order survives (rosters in team order, not sorted): the old sort_keys checkpoint reordered
    rosters and a resumed run summed league_avg_strength in another order."""
    league = load_config(write_league(tmp_path / "l.yaml", seed=1))
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", crash_after="week:2")
    text = (tmp_path / "run" / "checkpoint.json").read_text().strip()
    state = LeagueState.from_json(text)
    assert state.to_json() == text
    assert list(state.rosters) == list(state.records) == state.teams == [n for n, _ in BOTS]
    assert state.teams != sorted(state.teams)  # the case where sorting changes the order


def test_run_sync_does_not_chain_the_loop_check():
    async def boom():
        raise ValueError("the run's own error")

    with pytest.raises(ValueError) as err:
        run_sync(boom())
    assert err.value.__context__ is None  # no "During handling of ... no running event loop"


# ------------------------------------------------------------------------------ resume at every checkpoint
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_resume_at_every_phase_is_identical(prepared_2024, tmp_path, seed):
    """Crash after every checkpoint in turn (each draft round, the draft, every week), resuming each time
    with a new engine: the run ends byte-identical to an uninterrupted one."""
    league = load_config(write_league(tmp_path / "l.yaml", seed=seed, weeks=4))
    run_engine(league, prepared_2024, tmp_path / "whole")
    phases = PHASES + [f"week:{w}" for w in range(1, 4)]
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", crash_after=phases[0])
    for phase in phases[1:]:
        with pytest.raises(SimulatedCrash):
            run_engine(league, prepared_2024, tmp_path / "run", resume=True, crash_after=phase)
    run_engine(league, prepared_2024, tmp_path / "run", resume=True)
    resumes = same_run(tmp_path / "whole", tmp_path / "run")
    assert [r["from_phase"] for r in resumes] == phases and {r["from_status"] for r in resumes} == {"running"}


def test_demo_resumed_after_the_draft_is_identical(prepared_2024, tmp_path):
    """The issue's case: demo seed 1 resumed after the draft differed in 14 decision lines."""
    league = load_config(REPO / "params" / "demo.yaml", seed=1)
    run_engine(league, prepared_2024, tmp_path / "whole")
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", crash_after="drafted")
    run_engine(league, prepared_2024, tmp_path / "run", resume=True)
    same_run(tmp_path / "whole", tmp_path / "run")


class AgentDied(BaseException):
    """Stands for the process dying inside an agent call (not an agent error the engine repairs)."""


def test_death_before_first_checkpoint_and_torn_tail(whole3, prepared_2024, tmp_path):
    """Dying in the first draft round, with a torn last line: resume starts over instead of appending the
    redone draft to the old log (the issue: 800 decision lines instead of 462, or JSONDecodeError forever)."""
    league, whole = whole3

    def die(view):
        raise AgentDied("killed")

    dying = ScriptedAgent("ADP-1", 4, {"draft_pick": die})
    with pytest.raises(AgentDied):
        run_engine(league, prepared_2024, tmp_path / "run", agents=agents_with(league, {"ADP-1": dying}))
    run = tmp_path / "run"
    assert not (run / "checkpoint.json").exists() and (run / "decisions.jsonl").stat().st_size > 0
    with open(run / "decisions.jsonl", "a") as fh:
        fh.write('{"run_id": "integrity-s4", "team": "VORP-1", "view": {"avail')  # torn by the kill
    run_engine(league, prepared_2024, run, resume=True)
    same_run(whole, run)
    assert len(RunDir(run).decisions()) == len(RunDir(whole).decisions())


def test_torn_tail_after_a_checkpoint(whole3, prepared_2024, tmp_path):
    league, whole = whole3
    run = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, run, crash_after="draft:4")
    with open(run / "decisions.jsonl", "a") as fh:
        fh.write('{"pick": 25, "team": "ADP-1"}\n{"pick": 26, "te')
    (run / ".run.json.abc123.tmp").write_text("{half")  # what a kill inside an atomic write leaves
    run_engine(league, prepared_2024, run, resume=True)
    same_run(whole, run)


def test_fallback_guard_counts_across_a_resume(prepared_2024, tmp_path):
    """The fallback-rate guard stops a resumed run where it stops an uninterrupted one (its counts are rebuilt
    from the decisions before the checkpoint, not restarted at zero)."""
    from ffbench_lib.llm import FatalLLMError

    league = load_config(write_league(tmp_path / "l.yaml", seed=1, weeks=14))

    def agents():
        bad = ScriptedAgent("ADP-1", 1, {"set_lineup": lambda view: {"lineup": "start my best guys"}})
        bad.agent_id = "llm:scripted"  # the guard watches LLM teams only
        return agents_with(league, {"ADP-1": bad})

    with pytest.raises(FatalLLMError, match="ADP-1"):
        run_engine(league, prepared_2024, tmp_path / "whole", agents=agents())
    stopped = RunDir(tmp_path / "whole").meta().phase
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", agents=agents(), crash_after="week:3")
    with pytest.raises(FatalLLMError, match="ADP-1"):
        run_engine(league, prepared_2024, tmp_path / "run", agents=agents(), resume=True)
    assert RunDir(tmp_path / "run").meta().phase == stopped != "week:14"
    assert digests(tmp_path / "whole")["decisions.jsonl"] == digests(tmp_path / "run")["decisions.jsonl"]


# ------------------------------------------------------------------------------------- kill anywhere (CLI)
def _kill_targets(whole: Path, rng: random.Random) -> dict[str, int]:
    """A log size inside each phase of the uninterrupted run (a random byte of that phase's lines): the first draft
    round (before any checkpoint), a later round, week 1's lineups, week 2's trades, week 3's waivers (after week
    2's games) and the last byte of week 3 (the kill then lands in its tables and checkpoint write)."""
    lines = (whole / "decisions.jsonl").read_bytes().splitlines(keepends=True)
    ends = [sum(map(len, lines[: i + 1])) for i in range(len(lines))]
    recs = [json.loads(x) for x in lines]

    def inside(pick) -> int:
        spans = [(ends[i] - len(lines[i]), ends[i]) for i, r in enumerate(recs) if pick(i, r)]
        assert spans, "the whole run has no lines of a phase the kills aim at"
        lo, hi = rng.choice(spans)
        return rng.randrange(lo + 1, hi)

    per_round = 2 * len(BOTS)  # a shortlist and a pick per team
    return {
        "draft round 1": inside(lambda i, r: i < per_round),
        "later draft round": inside(lambda i, r: per_round * 4 <= i < per_round * (ROUNDS - 1)),
        "week 1 lineups": inside(lambda i, r: r["week"] == 1 and r["decision"] == "set_lineup"),
        "week 2 trades": inside(lambda i, r: r["week"] == 2 and r["decision"] in ("propose_trade", "respond_to_offer")),
        "week 3 waivers": inside(lambda i, r: r["week"] == 3 and r["decision"] in ("waiver_claims", "free_agent_adds")),
        "week 3 checkpoint": max(e for e, r in zip(ends, recs) if (r["week"] or 0) <= 3),
    }


@pytest.mark.slow
def test_sigkill_anywhere_then_resume_is_identical(tmp_path, cli_env, whole_cli):
    """SIGKILL the real CLI once inside each phase (by the size of decisions.jsonl: the first draft round before
    any checkpoint, a later round, a lineup week, waivers, a trade week, a checkpoint write), each kill the next
    ``--resume`` of the same run (a kill of a resume included), then resume it in-process (the same
    ``run_season``) and compare every file with an uninterrupted run's; run.json lists every resume."""
    cfg, whole = whole_cli
    targets = _kill_targets(whole, random.Random(20261130))
    out, log, moments, expected = tmp_path / "killed", tmp_path / "killed" / "decisions.jsonl", {}, []
    for k, (phase, target) in enumerate(targets.items()):
        target = max(target, log.stat().st_size + 1 if log.exists() else 0)  # past the last kill: a resumed run
        kill_at_size(popen(cli_env, "run", cfg, "--out", out, *(["--resume"] if k else []), "--quiet"), log, target)
        cp, was = out / "checkpoint.json", status(out)
        moments[phase] = json.loads(cp.read_text())["phase"] if cp.exists() else "new"
        assert was in ("running", None), (phase, was)  # every target is before the end
        if was is not None:  # no resume is recorded for a run that had not yet written run.json
            expected.append({"from_status": was, "from_phase": moments[phase], "changes": {}})
    code_fingerprint.cache_clear()  # the code as the killed CLI saw it (other work may have edited it meanwhile)
    run_season(cfg, out=out, resume=True, progress=False)
    assert same_run(whole, out) == expected, moments
    assert sum(m == "new" or m.startswith("draft:") for m in moments.values()) >= 2, moments  # kills in the draft
    print("killed at phases:", moments)


@pytest.fixture(scope="module")
def llm_srv():
    """One local fake OpenAI server for the module's LLM leagues (their configs name its address)."""
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def llm_whole(llm_srv, tmp_path_factory):
    """An LLM league (one fake model, a 6-round draft, 2 weeks, week 2 a trade week) played uninterrupted once, with
    its own replay cache: what the killed and the budget-stopped runs below must each end as."""
    tmp = tmp_path_factory.mktemp("llm-whole")
    cfg = write_league(tmp / "llm.yaml", seed=2, weeks=2, llm_teams=1, api_base=llm_srv.api_base, roster=LLM_ROSTER)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_LLM_CACHE", str(tmp / "cache-whole"))
        run_season(cfg, out=tmp / "whole", progress=False)
    return cfg, tmp / "whole"


@pytest.mark.slow
def test_llm_league_killed_and_resumed_matches(tmp_path, cli_env, llm_whole, monkeypatch):
    """An LLM league (local fake OpenAI server) SIGKILLed mid-draft, its CLI resume SIGKILLed mid-season, then
    resumed: decisions and tables byte-identical; the ledger holds each call once (replayed answers marked as
    cache hits). The uninterrupted run and the last resume run in-process (importing litellm in each CLI process
    is slow)."""
    cfg, whole = llm_whole
    lines = (whole / "decisions.jsonl").read_bytes().splitlines(keepends=True)
    # the draft's logged views are most of the bytes: mid-season is the first byte of week 2's decisions
    week2 = sum(map(len, lines[:next(i for i, x in enumerate(lines) if json.loads(x)["week"] == 2)])) + 1
    out, env = tmp_path / "killed", {**cli_env, "FFBENCH_LLM_CACHE": str(tmp_path / "cache")}
    for k, target in enumerate((week2 // 4, week2)):
        kill_at_size(popen(env, "run", cfg, "--out", out, *(["--resume"] if k else []), "--quiet"),
                     out / "decisions.jsonl", target)
        assert status(out) == "running"
    monkeypatch.setenv("FFBENCH_LLM_CACHE", str(tmp_path / "cache"))
    code_fingerprint.cache_clear()  # the code as the killed CLI saw it (other work may have edited it meanwhile)
    run_season(cfg, out=out, resume=True, progress=False)
    a, b = digests(whole), digests(out)
    assert set(a) == set(b)
    volatile = {"run.json", "checkpoint.json", "llm_calls.jsonl", "llm_summary.parquet"}
    for name in set(a) - volatile:
        assert a[name] == b.get(name), name
    cp_a, cp_b = (json.loads((d / "checkpoint.json").read_text()) for d in (whole, out))
    assert cp_a.pop("llm_cost_usd") >= cp_b.pop("llm_cost_usd")  # replayed answers cost nothing
    del cp_a["log_bytes"]["llm_calls.jsonl"], cp_b["log_bytes"]["llm_calls.jsonl"]  # latencies differ
    assert cp_a == cp_b
    ledger = [sorted(_stable(c) for c in RunDir(d).llm_calls()) for d in (whole, out)]
    assert ledger[0] == ledger[1] and len(ledger[0]) == len(RunDir(whole).llm_calls())
    summary = [RunDir(d).table("llm_summary").drop(columns=["cache_hits", "latency_s_mean"]) for d in (whole, out)]
    assert summary[0].equals(summary[1])  # calls, tokens, cost, fallbacks: none counted twice
    meta = [json.loads((d / "run.json").read_text()) for d in (whole, out)]
    assert [r["from_status"] for r in meta[1].pop("resumes")] == ["running", "running"] and meta[0] == meta[1]


def _stable(call: dict) -> str:
    """A ledger line without what depends on timing or on the cache (latency, waiting, attempts, cache_hit)."""
    return json.dumps({k: v for k, v in call.items()
                       if k not in ("latency_s", "wait_s", "attempts", "retries", "cache_hit")},
                      sort_keys=True)


# ------------------------------------------------------------------------------------------ one writer
def test_two_engines_on_one_directory(whole3, prepared_2024, tmp_path):
    """Two resumes of one killed run at once: one plays, the other is refused (before: both wrote, and the
    logs held the weeks twice)."""
    league, whole = whole3
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", crash_after="drafted")

    async def both():
        return await asyncio.gather(*(Engine(league, prepared_2024, tmp_path / "run", progress=False).run(resume=True)
                                      for _ in range(2)), return_exceptions=True)

    results = asyncio.run(both())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], RunLocked), results
    assert str(errors[0]).startswith(f"{tmp_path / 'run'}: another process is writing this run directory")
    same_run(whole, tmp_path / "run")


def test_second_writer_gets_a_clear_error(tmp_path, capsys):
    cfg = write_league(tmp_path / "l.yaml", seed=1, weeks=2)
    run = tmp_path / "run"
    spec = tmp_path / "batch.yaml"
    spec.write_text(yaml.safe_dump({"base": str(cfg), "seeds": [1], "out": str(tmp_path / "batch"),
                                    "analysis": False}))
    with exclusive(run):
        for args in (("run", cfg, "--out", run), ("run", cfg, "--out", run, "--resume")):
            rc, err = ffbench(capsys, *args, "--quiet")
            assert rc == 2 and "Traceback" not in err, err
            assert f"{run}: another process is writing this run directory" in err
    with exclusive(tmp_path / "batch", "batch directory"):
        rc, err = ffbench(capsys, "batch", spec, "--quiet")
        assert rc == 2 and "another process is writing this batch directory" in err, err
    assert not (tmp_path / "batch" / "runs").exists()


def test_lock_is_released_when_its_holder_is_killed(tmp_path):
    code = (f"import time; from ffbench_lib.runs.rundir import exclusive\nwith exclusive({str(tmp_path)!r}):\n"
            "    print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with pytest.raises(RunLocked):
        with exclusive(tmp_path):
            pass
    proc.kill()
    proc.wait()
    with exclusive(tmp_path):
        pass


# ------------------------------------------------------------------------------------ same run or refuse
def test_resume_with_another_config_is_refused(prepared_2024, tmp_path, capsys):
    cfg = write_league(tmp_path / "l.yaml", seed=3, weeks=4)
    league = load_config(cfg)
    run = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, run, crash_after="week:1")
    before = digests(run)
    with pytest.raises(ResumeMismatch, match=r"seed: 3 in the run, 5 now"):
        run_engine(load_config(cfg, seed=5), prepared_2024, run, resume=True)
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**league_dict(seed=3, weeks=6), "scoring": "standard"}))
    rc, err = ffbench(capsys, "run", other, "--out", run, "--resume", "--quiet")
    assert rc == 2 and "Traceback" not in err
    assert "weeks: 4 in the run, 6 now" in err and "scoring.preset: 'ppr' in the run, 'standard' now" in err
    rc, err = ffbench(capsys, "run", cfg, "--seed", "5", "--out", run, "--resume", "--quiet")
    assert rc == 2 and "seed: 3 in the run, 5 now" in err
    assert digests(run) == before  # a refused resume changes nothing


def test_resume_under_other_code_is_refused(prepared_2024, tmp_path, capsys):
    """A run started by another version of the code would end as a mix of two versions: refused, naming why."""
    cfg = write_league(tmp_path / "l.yaml", seed=3, weeks=3)
    run = tmp_path / "run"
    with pytest.raises(SimulatedCrash):
        run_engine(load_config(cfg), prepared_2024, run, crash_after="week:1")
    meta = json.loads((run / "run.json").read_text())
    assert len(meta["code_fingerprint"]) == 16
    meta["code_fingerprint"] = "0" * 16  # as if the code had changed since
    (run / "run.json").write_text(json.dumps(meta))
    before = digests(run)
    rc, err = ffbench(capsys, "run", cfg, "--out", run, "--resume", "--quiet")
    assert rc == 2 and "Traceback" not in err
    assert "the ffbench code changed since the run started" in err
    assert digests(run) == before


def test_resume_may_raise_the_budget_and_records_it(whole3, prepared_2024, tmp_path):
    league, whole = whole3
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "run", crash_after="week:1")
    raised = tmp_path / "raised.yaml"
    raised.write_text(yaml.safe_dump(league_dict(seed=league.seed, weeks=league.weeks, budget_usd=5.0)))
    run_engine(load_config(raised), prepared_2024, tmp_path / "run", resume=True)
    meta = RunDir(tmp_path / "run").meta().dump()
    assert meta["status"] == "complete" and meta["budget"] == {"limit_usd": 5.0, "spent_usd": 0.0}
    assert meta["resumes"] == [{"from_status": "running", "from_phase": "week:1",
                                "changes": {"llm.budget_usd": [None, 5.0]}}]
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["llm"]["budget_usd"] == 5.0
    a, b = digests(whole), digests(tmp_path / "run")
    assert {k: v for k, v in a.items() if k not in ("run.json", "config.yaml")} == \
        {k: v for k, v in b.items() if k not in ("run.json", "config.yaml")}


# ------------------------------------------------------------------------------- damaged or edited runs
def _edit(cp: dict, how: str) -> dict | bytes:
    if how == "phase skipped":
        return {**cp, "phase": "week:3"}
    if how == "15-player roster":
        extra = [p for p in cp["rosters"]["VORP-2"][:3]]
        return {**cp, "rosters": {**cp["rosters"], "ADP-1": cp["rosters"]["ADP-1"] + extra}}
    if how == "player on two teams":
        a = cp["rosters"]["ADP-1"]
        return {**cp, "rosters": {**cp["rosters"], "VORP-1": [a[0], *cp["rosters"]["VORP-1"][1:]]}}
    if how == "log_bytes beyond the log":
        return {**cp, "log_bytes": {**cp["log_bytes"], "decisions.jsonl": cp["log_bytes"]["decisions.jsonl"] + 999}}
    if how == "wrong schema":
        return {**cp, "teams": "VORP-1", "rosters": 3}
    if how == "unknown field":
        return {**cp, "hacked": True}
    raise AssertionError(how)


DAMAGE = {
    "phase skipped": "standings cover weeks [1, 2]; phase week:3 has weeks 1..3",
    "15-player roster": "ADP-1 holds 15 players; at phase week:2 every team holds 12",
    "player on two teams": "is on two rosters (VORP-1 and ADP-1)",
    "log_bytes beyond the log": "fewer than the",
    "wrong schema": "teams: Input should be a valid array",
    "unknown field": "hacked: unknown field",
    "truncated": "Invalid JSON: EOF",
    "binary": "Invalid JSON",
    "empty": "Invalid JSON",
}


@pytest.fixture(scope="module")
def crashed_week2(prepared_2024, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("crashed")
    cfg = write_league(tmp / "l.yaml", seed=2, weeks=3)
    with pytest.raises(SimulatedCrash):
        run_engine(load_config(cfg), prepared_2024, tmp / "run", crash_after="week:2")
    return cfg, tmp / "run"


@pytest.mark.parametrize("how", list(DAMAGE))
def test_damaged_checkpoint_is_refused(crashed_week2, prepared_2024, tmp_path, how):
    cfg, src = crashed_week2
    run = tmp_path / "run"
    shutil.copytree(src, run)
    cp_path = run / "checkpoint.json"
    raw = cp_path.read_bytes()
    if how == "truncated":
        cp_path.write_bytes(raw[: len(raw) // 2])
    elif how == "binary":
        cp_path.write_bytes(bytes(range(256)) * 4)
    elif how == "empty":
        cp_path.write_bytes(b"")
    else:
        cp_path.write_text(json.dumps(_edit(json.loads(raw), how)))
    with pytest.raises(CheckpointError) as err:
        run_engine(load_config(cfg), prepared_2024, run, resume=True)
    msg = str(err.value)
    assert DAMAGE[how] in msg and str(run) in msg and "\n" not in msg, msg


def test_damaged_run_through_the_cli(crashed_week2, tmp_path, capsys):
    cfg, src = crashed_week2
    for name, data in (("checkpoint.json", b"\x89PNG\r\n\x1a\n\x00"), ("run.json", b"{"), ("config.yaml", b"[: x")):
        run = tmp_path / name
        shutil.copytree(src, run)
        (run / name).write_bytes(data)
        rc, err = ffbench(capsys, "run", cfg, "--out", run, "--resume", "--quiet")
        assert rc == 2 and "Traceback" not in err, err
        assert err.startswith(f"error: cannot resume {run}: {name}") and err.count("\n") == 1, err


def test_out_folder_holding_other_files_is_refused(tmp_path, capsys):
    cfg = write_league(tmp_path / "l.yaml", seed=1, weeks=1)
    (tmp_path / "notes.txt").write_text("mine")
    rc, err = ffbench(capsys, "run", cfg, "--out", tmp_path, "--quiet")
    assert rc == 2 and "is not empty and holds no run (it has l.yaml, notes.txt)" in err, err
    assert (tmp_path / "notes.txt").read_text() == "mine" and not (tmp_path / "run.json").exists()


# ---------------------------------------------------------------------------------------------- budget
def test_budget_stops_inside_the_draft_and_resumes_identically(tmp_path, llm_whole, prepared_2024, capsys):
    """The issue: a 0.30 limit spent 1.056 because the draft was never checked. Now the draft stops at the
    next round's checkpoint, the CLI exits 3 saying how to resume, and a raised budget resumes identically.
    The CLI runs in-process (its exit code is main's: a litellm-importing subprocess is slow)."""
    cfg, whole = llm_whole
    d = yaml.safe_load(cfg.read_text())
    rounds = sum(LLM_ROSTER.values())
    calls = RunDir(whole).llm_calls()
    draft_cost = sum(c["cost_usd"] for c in calls if c["decision"].startswith("draft"))
    round_cost = max(sum(c["cost_usd"] for c in calls if c["decision"].startswith("draft")
                         and (c["pick"] - 1) // len(BOTS) == r) for r in range(rounds))
    limit = round(draft_cost * 0.3, 6)
    capped = write_league_dict(tmp_path / "capped.yaml", {**d, "llm": {**d["llm"], "budget_usd": limit}},
                               tmp_path / "c1")
    rc, err = ffbench(capsys, "run", capped, "--out", tmp_path / "run", "--quiet")
    assert rc == 3, err
    meta = RunDir(tmp_path / "run").meta().dump()
    assert meta["status"] == "stopped_budget" and meta["phase"].startswith("draft:"), meta
    assert limit <= meta["budget"]["spent_usd"] < limit + round_cost + 1e-9
    assert meta["budget"]["limit_usd"] == limit
    assert "budget" in err and f"--out {tmp_path / 'run'} --resume" in err and "Traceback" not in err
    more = write_league_dict(tmp_path / "more.yaml", {**d, "llm": {**d["llm"], "budget_usd": 100.0}},
                             tmp_path / "c1")
    run_engine(load_config(more), prepared_2024, tmp_path / "run", resume=True)
    meta = RunDir(tmp_path / "run").meta().dump()
    assert meta["status"] == "complete" and meta["budget"]["limit_usd"] == 100.0
    assert meta["resumes"][0]["changes"] == {"llm.budget_usd": [limit, 100.0]}
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["llm"]["budget_usd"] == 100.0
    a, b = digests(whole), digests(tmp_path / "run")
    for name in ("decisions.jsonl", "draft_picks.parquet", "lineups.parquet", "standings.parquet", "trades.parquet"):
        assert a[name] == b[name], name
    assert RunDir(whole).meta().phase == "week:2"


def write_league_dict(path: Path, d: dict, cache: Path) -> Path:
    d = {**d, "llm": {**d.get("llm", {}), "cache_dir": str(cache)}}
    path.write_text(yaml.safe_dump(d, sort_keys=False))
    return path


# --------------------------------------------------------------------------------------------- signals
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_marks_the_run_interrupted_and_says_how_to_resume(tmp_path, cli_env, whole_cli, capsys, sig, code):
    """Before: SIGINT printed only "interrupted" and SIGTERM left run.json at status running. The signalled CLI is a
    real process; the resume it prints runs in-process."""
    cfg, whole = whole_cli
    out = tmp_path / "run"
    log, size = out / "decisions.jsonl", (whole / "decisions.jsonl").stat().st_size
    proc = popen(cli_env, "run", cfg, "--out", out, "--quiet")
    # freeze the process a third of the way in, check it is still running, then signal it and let it go on
    while proc.poll() is None and not (log.exists() and log.stat().st_size >= size // 3):
        time.sleep(0.001)
    proc.send_signal(signal.SIGSTOP)
    assert status(out) == "running"
    proc.send_signal(sig)
    proc.send_signal(signal.SIGCONT)
    stderr = proc.communicate(timeout=120)[1]
    assert proc.returncode == code, stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted" and meta["reason"].startswith(f"stopped by {sig.name} during "), meta
    command = f"ffbench run {cfg} --seed 1 --out {out} --resume"
    assert command in stderr and "Traceback" not in stderr, stderr
    code_fingerprint.cache_clear()  # the code as the signalled CLI saw it (other work may edit it meanwhile)
    rc, err = ffbench(capsys, *command.split()[1:], "--quiet")
    assert rc == 0, err
    assert same_run(whole, out)[0]["from_status"] == "interrupted"


def test_guard_settings_may_change_on_resume_and_count_decisions_only():
    """The guard's settings only decide whether to stop, like the budget: a resume may change them (the guard's
    own message suggests it). Superseded proposals and on-deck re-asks are not decisions for any fallback rate."""
    from ffbench_lib.config.load import parse_config
    from ffbench_lib.config.diff import config_differences
    from ffbench_lib.llm import FatalLLMError
    from ffbench_lib.records.decision import is_decision
    from ffbench_lib.runs.guard import FallbackGuard

    stored = league_dict(seed=1)
    raised = parse_config(league_dict(seed=1, max_fallback_rate=0.9, fallback_min_decisions=40))
    assert config_differences(stored, raised, include_resumable=False) == {}
    assert set(config_differences(stored, raised)) == {"llm.max_fallback_rate", "llm.fallback_min_decisions"}

    guard = FallbackGuard(0.25, 4)
    rec = {"team": "M0", "agent": "llm:m", "decided_by": "agent", "applied": "x"}
    for _ in range(3):
        guard.record(rec)
    for _ in range(5):  # would push the rate to 5/8 if counted
        guard.record({**rec, "decided_by": "fallback", "applied": "superseded"})
        guard.record({**rec, "decided_by": "fallback", "on_deck": True, "applied": []})
    assert not is_decision({**rec, "applied": "superseded"}) and is_decision(rec)
    guard.record({**rec, "decided_by": "fallback"})  # 1 of 4 is within 0.25
    with pytest.raises(FatalLLMError, match="llm.cache_dir"):
        guard.record({**rec, "decided_by": "fallback"})  # 2 of 5 is not
