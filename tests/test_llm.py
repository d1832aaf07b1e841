"""The real litellm path against a local OpenAI-compatible server (scripted answers, faults on demand)."""
import json
from collections import Counter

import pytest

from ffbench_lib.config.league import League
from ffbench_lib.llm import ReplayMiss, parse_json
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, demo_league, digests, run_engine

PRICE_IN, PRICE_OUT = 2e-6, 8e-6
TRANSPORT = {"429": "RateLimitError", "500": "InternalServerError", "slow": "Timeout"}
INVALID = ("malformed", "empty", "illegal", "hallucinated", "truncated")


def llm_league(api_base, cache_dir, n_llm=10, weeks=17, **llm):
    d = demo_league().model_dump(mode="json")
    for i in range(n_llm):
        d["teams"][i] = {"name": f"M{i}", "agent": {
            "kind": "llm", "model": f"openai/fake-model-{i % 3}", "api_base": api_base, "timeout_s": 1.0,
            "max_tokens": 2000, "input_cost_per_token": PRICE_IN, "output_cost_per_token": PRICE_OUT,
            "max_concurrency": 4}}
    d["weeks"] = weeks
    d["trades"]["weeks"] = [w for w in d["trades"]["weeks"] if w <= weeks]
    d["llm"] = {"backoff_s": 0.01, "retries": 4, "cache_dir": str(cache_dir), **llm}
    return League.model_validate(d)


def test_parse_json_variants():
    assert parse_json('{"a": 1}') == ({"a": 1}, None)
    assert parse_json('Sure, here:\n```json\n{"a": 2}\n```\nbye')[0] == {"a": 2}
    assert parse_json('<think>maybe {"a": 0}</think>\nFinal: {"a": 3} done')[0] == {"a": 3}
    assert parse_json('I pick {"player_id": "00-1"} because')[0] == {"player_id": "00-1"}
    assert "empty" in parse_json("")[1] and "empty" in parse_json(None)[1]
    assert "incomplete or malformed" in parse_json('{"lineup": {"QB": ["00-')[1]
    assert "no JSON object" in parse_json("I start Mahomes.")[1]
    assert parse_json("[1, 2]")[0] is None


SEASON_LLM = 4  # LLM teams of the shared season: more than the provider's 3 calls in flight, so the limit binds


@pytest.fixture(scope="module")
def llm_season(prepared_2024, tmp_path_factory):
    """Four weeks (the draft, lineups, the week-4 trade window: every kind of call) of 4 LLM teams and 6 bots,
    the provider limited to 3 calls in flight, on a server answering after 50 ms (so the 4 teams' lineup calls
    overlap wherever the limit allows): the ledger test and the concurrency test read it."""
    out = tmp_path_factory.mktemp("llm-season")
    with FakeOpenAIServer(latency_s=0.05) as srv:
        d = llm_league(srv.api_base, out / "cache", n_llm=SEASON_LLM, weeks=4).model_dump(mode="json")
        for t in d["teams"][:SEASON_LLM]:  # a fault-free season: no client timeout on a loaded machine either
            t["agent"].update(max_concurrency=3, timeout_s=60.0)
        state, _ = run_engine(League.model_validate(d), prepared_2024, out / "run")
    return state, out / "run", srv.requests, srv.max_inflight


def test_full_llm_season_and_ledger(llm_season):
    state, folder, requests, _ = llm_season
    run = RunDir(folder)
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    decisions = run.decisions()
    llm_decisions = [d for d in decisions if d["agent"].startswith("llm:")]
    # one ledger line per HTTP call and one call per LLM decision (no faults here): the draft, 4 weeks, trades
    assert len(calls) == requests == len(llm_decisions) > 100
    assert {d["decision"] for d in llm_decisions} >= {"draft_shortlist", "draft_pick", "set_lineup", "propose_trade"}
    assert {d["decided_by"] for d in decisions} == {"agent"}
    for c in calls[:50]:
        assert c["messages"][0]["role"] == "system" and "DECISION:" in c["messages"][1]["content"]
        assert c["prompt_tokens"] > 0 and c["completion_tokens"] > 0
        assert c["cost_usd"] == pytest.approx(c["prompt_tokens"] * PRICE_IN + c["completion_tokens"] * PRICE_OUT)
        assert c["parsed"] is not None and c["latency_s"] > 0
    total = sum(c["cost_usd"] for c in calls)
    assert state.llm_cost_usd == pytest.approx(total, rel=1e-6)
    summary = run.table("llm_summary")
    assert len(summary) == SEASON_LLM and summary["calls"].sum() == len(calls)
    assert (summary["fallback_rate"] == 0).all() and summary["cost_usd"].sum() == pytest.approx(total)
    lineups = run.table("lineups")
    assert (lineups["decided_by"] == "agent").all()
    llm_teams = {f"M{i}" for i in range(SEASON_LLM)}
    assert lineups.loc[lineups["team"].isin(llm_teams), "team"].nunique() == SEASON_LLM
    assert (lineups["agent"].str.startswith("llm:openai/") == lineups["team"].isin(llm_teams)).all()


FAULT_LLM = 4  # LLM teams: calls enough for every fault kind to be injected (the test checks it is)


def test_fault_season_accounts_for_every_fault_and_replays_from_cache(prepared_2024, tmp_path):
    """Every request carries an attempt id, so the ledger is matched to what the server received request by
    request. A busy machine may make the client give up on a request the server has not read yet (it never
    counts it) or answered too late: those are the client's Timeouts, recorded as such, never silent. Four weeks
    (the draft, lineups, the week-4 trades: every kind of call, every fault kind) of FAULT_LLM LLM teams, played
    and then replayed."""
    with FakeOpenAIServer(fault_rate=0.3, seed=11) as srv:  # a slow answer waits for the client to hang up
        league = llm_league(srv.api_base, tmp_path / "cache", n_llm=FAULT_LLM, weeks=4)
        run_engine(league, prepared_2024, tmp_path / "run")
        injected, requests = Counter(srv.injected), srv.requests
        received = {e["attempt_id"]: e["fault"] for e in srv.log}
    assert sum(injected.values()) > 0.25 * requests and set(injected) == {
        "429", "500", "slow", "malformed", "prose", "fence", "hallucinated", "illegal", "empty", "truncated"}
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    attempts = {a["id"]: a for c in calls for a in (c["attempts"] or [])}
    assert len(attempts) == sum(len(c["attempts"]) for c in calls) and len(received) == requests
    assert set(received) <= set(attempts)  # every request the server saw is an attempt in the ledger
    unseen = set(attempts) - set(received)  # the client gave up before the server read the request
    assert all(attempts[i]["error"] in ("Timeout", "APIConnectionError") for i in unseen)
    for i, fault in received.items():  # each injected transport fault is the error of that very request
        error = attempts[i]["error"]
        assert error == TRANSPORT[fault] if fault in TRANSPORT else error in (None, "Timeout"), (fault, error)
    for c in calls:  # prose and fence are parsed; every other content fault is flagged
        if not c["error"]:
            assert bool(c["problems"]) == (received[c["attempts"][-1]["id"]] in INVALID), c["problems"]
    errors = sum(1 for a in attempts.values() if a["error"])
    invalid = sum(1 for c in calls if c["problems"])
    summary = run.table("llm_summary")
    assert summary["invalid_answers"].sum() == invalid and summary["transport_errors"].sum() == errors
    # the engine repaired whatever stayed invalid after the re-asks, and said so
    fallbacks = [d for d in run.decisions() if d["decided_by"] == "fallback"]
    assert all(d["reason"] for d in fallbacks)

    # replay: a new server that must not be called, replay_only on, same outputs
    with FakeOpenAIServer() as srv2:
        replay = llm_league(srv2.api_base, tmp_path / "cache", n_llm=FAULT_LLM, weeks=4, replay_only=True)
        run_engine(replay, prepared_2024, tmp_path / "replay")
        assert srv2.requests == 0
    a, b = digests(tmp_path / "run"), digests(tmp_path / "replay")
    for name in ("decisions.jsonl", "draft_picks.parquet", "lineups.parquet", "standings.parquet", "trades.parquet",
                 "trade_steps.parquet"):
        assert a[name] == b[name], name
    assert all(c["cache_hit"] or c["error"] for c in RunDir(tmp_path / "replay").llm_calls())


def test_replay_only_miss_fails_clearly(prepared_2024, tmp_path, capsys):
    """The first call misses the empty cache: the run stops, failed; ``ffbench run`` says so, with exit code 2
    (in this process: a real process's exit 2 is test_bad_input's and test_checkpoint_trust's)."""
    from ffbench_lib.cli import main

    (tmp_path / "empty-cache").mkdir()  # an empty cache (no cache folder at all is refused before the run)
    league = llm_league("http://127.0.0.1:9/v1", tmp_path / "empty-cache", n_llm=1, weeks=1, replay_only=True)
    with pytest.raises(ReplayMiss, match="replay_only: no recorded answer"):
        run_engine(league, prepared_2024, tmp_path / "run")
    assert RunDir(tmp_path / "run").meta().status == "failed"
    cfg = tmp_path / "replay.yaml"
    cfg.write_text(json.dumps(league.model_dump(mode="json")))
    capsys.readouterr()
    rc = main(["run", str(cfg), "--out", str(tmp_path / "cli"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "replay_only: no recorded answer" in err and "Traceback" not in err
    assert RunDir(tmp_path / "cli").meta().status == "failed"


def test_secret_canary_never_written(prepared_2024, tmp_path, monkeypatch, capfd):
    canary = "sk-canary-" + "7" * 32
    monkeypatch.setenv("FFBENCH_CANARY_API_KEY", canary)
    with FakeOpenAIServer(fault_rate=0.5, faults=("500",), echo_auth_in_errors=True, seed=3) as srv:
        d = llm_league(srv.api_base, tmp_path / "cache", n_llm=2, weeks=1).model_dump(mode="json")
        for t in d["teams"][:2]:
            t["agent"]["api_key_env"] = "FFBENCH_CANARY_API_KEY"
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
        assert srv.injected["500"] > 0
    calls = RunDir(tmp_path / "run").llm_calls()
    assert any("***" in (a.get("message") or "") for c in calls for a in c["attempts"] or [])  # it was echoed
    for folder in (tmp_path / "run", tmp_path / "cache"):
        for f in folder.rglob("*"):
            if f.is_file():
                assert canary.encode() not in f.read_bytes(), f
    out, err = capfd.readouterr()
    assert canary not in out + err


def test_missing_key_variable_stops_the_run(prepared_2024, tmp_path, monkeypatch):
    from ffbench_lib.llm import FatalLLMError

    monkeypatch.delenv("FFBENCH_MISSING_KEY", raising=False)
    d = llm_league("http://127.0.0.1:9/v1", tmp_path / "cache", n_llm=1, weeks=1).model_dump(mode="json")
    d["teams"][0]["agent"]["api_key_env"] = "FFBENCH_MISSING_KEY"
    with pytest.raises(FatalLLMError, match="FFBENCH_MISSING_KEY"):
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")


def test_budget_stops_cleanly_and_resumes_identically(prepared_2024, tmp_path):
    """One LLM team, two weeks: the budget runs out at a checkpoint on the way (in the draft, its most calls)."""
    with FakeOpenAIServer() as srv:
        whole = llm_league(srv.api_base, tmp_path / "cache-a", n_llm=1, weeks=2)
        full_state, _ = run_engine(whole, prepared_2024, tmp_path / "whole")
        limit = round(full_state.llm_cost_usd * 0.6, 6)
        capped = llm_league(srv.api_base, tmp_path / "cache-b", n_llm=1, weeks=2, budget_usd=limit)
        state, _ = run_engine(capped, prepared_2024, tmp_path / "capped")
        meta = RunDir(tmp_path / "capped").meta().dump()
        assert meta["status"] == "stopped_budget" and meta["budget"]["spent_usd"] >= limit
        assert state.phase.startswith(("draft:", "drafted", "week:")) and state.phase != "week:2"  # a checkpoint
        more = llm_league(srv.api_base, tmp_path / "cache-b", n_llm=1, weeks=2, budget_usd=100)
        run_engine(more, prepared_2024, tmp_path / "capped", resume=True)
    assert RunDir(tmp_path / "capped").meta().status == "complete"
    a, b = digests(tmp_path / "whole"), digests(tmp_path / "capped")
    for name in ("decisions.jsonl", "lineups.parquet", "standings.parquet", "draft_picks.parquet"):
        assert a[name] == b[name], name


def test_provider_concurrency_limit_holds(llm_season):
    _, _, _, max_inflight = llm_season
    assert 2 <= max_inflight <= 3


def test_committed_llm_configs_are_valid():
    from ffbench_lib.config.load import load_config

    frontier = load_config(REPO / "params" / "league.yaml")
    assert all(t.agent.kind == "llm" for t in frontier.teams) and len({t.agent.model for t in frontier.teams}) == 10
    local = load_config(REPO / "params" / "local_llm.yaml")
    assert any(t.agent.kind == "llm" and t.agent.api_base for t in local.teams)
