"""The knowledge probe (`ffbench probe`): through the real CLI, LLM client and litellm against the local fake
server, scripted to know the 2024 season or not."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from ffbench_lib.cli import main
from ffbench_lib.runs.probe import POSITIONS, ProbeError, draw_sample, name_key, parse_answer, score, season_truth, summary, top5_hits
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO

CANARY = "sk-canary-probe-" + "5" * 32


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """Prepared-season and LLM-cache folders shared by this module's probes."""
    root = tmp_path_factory.mktemp("probe")
    return {"prepared": root / "prepared", "cache": root / "cache"}


@pytest.fixture(scope="module")
def knowledge(prepared_2024):
    """What a model that remembers 2024 says, computed here from the weekly stats (not by the probe): each
    player's season PPR points within 5 (a memory, not a copy), the real top 5s; three sampled players forgotten
    (the sample's first QB, RB and WR in probe-id order)."""
    w = prepared_2024.weekly
    totals = w.groupby("player_id", as_index=False)["fantasy_points"].sum().merge(
        prepared_2024.players[["player_id", "player_name", "position"]], on="player_id")  # names as in the prompt
    noise = np.random.default_rng(0).uniform(-5, 5, len(totals))
    points = {n: round(p + e, 1) for n, p, e in zip(totals["player_name"], totals["fantasy_points"], noise)}
    sample = draw_sample(season_truth(prepared_2024), 2024)
    forgotten = set(sample.groupby("position")["player_name"].first()[["QB", "RB", "WR"]])
    for name in forgotten:
        points.pop(name)
    top = {pos: g.sort_values("fantasy_points", ascending=False)["player_name"].head(5).tolist()
           for pos, g in totals.groupby("position")}
    top["WR"] = [n.upper().replace(".", "") for n in top["WR"]]  # names as a model may write them
    return {"points": points, "top5": top, "forgotten": forgotten, "sampled": sample["player_name"].iloc[-1]}


def write_league(path, shared, teams, seed=1, league=None, **extra):
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d.update(league or {})
    for i, team in enumerate(teams):
        d["teams"][i] = team
    d["seed"] = seed
    d["data"]["prepared_dir"] = str(shared["prepared"])
    d["llm"] = {"cache_dir": str(shared["cache"]), "backoff_s": 0.01, **extra}
    path.write_text(yaml.safe_dump(d))
    return path


def llm_team(name, model, api_base, **agent):
    return {"name": name, "agent": {"kind": "llm", "model": model, "api_base": api_base, "timeout_s": 30,
                                    "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, **agent}}


def probe(capsys, *args):
    try:
        code = main(["probe", *map(str, args)])
    except SystemExit as exc:  # argparse's own errors (a bad --out), as the command exits
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_probe_tells_a_model_that_knows_the_season_from_one_that_does_not(shared, knowledge, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setenv("FFBENCH_PROBE_CANARY_KEY", CANARY)
    with FakeOpenAIServer(probe_knowledge={k: knowledge[k] for k in ("points", "top5")},
                          echo_auth_in_answers=True) as knows, FakeOpenAIServer() as not_:
        cfg = write_league(tmp_path / "league.yaml", shared, [
            llm_team("Knows", "openai/knows-2024", knows.api_base, api_key_env="FFBENCH_PROBE_CANARY_KEY"),
            llm_team("Knows-2", "openai/knows-2024", knows.api_base, api_key_env="FFBENCH_PROBE_CANARY_KEY"),
            llm_team("Forgets", "openai/forgets-2024", not_.api_base)])
        code, out, err = probe(capsys, cfg, "--season", "2024", "--out", tmp_path / "probe")
        asked = knows.requests + not_.requests
    assert code == 0, err
    assert asked == 2  # one call per distinct model, none for the bots
    result = json.loads((tmp_path / "probe" / "probe.json").read_text())
    assert result["season"] == 2024 and result["weeks"] == [1, 18] and result["sample_seed"] == 13
    n = result["sample_size"]
    assert 50 <= n <= 60 and sum(result["strata_counts"].values()) == n
    by_model = {m["model"]: m for m in result["models"]}
    assert set(by_model) == {"openai/knows-2024", "openai/forgets-2024"}
    k, f = by_model["openai/knows-2024"], by_model["openai/forgets-2024"]
    for m in (k, f):
        assert set(m) >= {"model", "agent_id", "recall_advantage", "ci_low", "ci_high", "n", "coverage",
                          "top5_hits_model", "top5_hits_projection", "remembers", "verdict"}
        assert m["agent_id"] == f"llm:{m['model']}" and m["n"] == n
        assert m["ci_low"] <= m["recall_advantage"] <= m["ci_high"]
    assert k["remembers"] is True and f["remembers"] is False
    assert k["ci_low"] > f["ci_high"]  # told apart: the intervals do not overlap
    assert k["ci_low"] > 30  # much better than the projection, not barely
    assert k["top5_hits_model"] == 20 and f["top5_hits_model"] < k["top5_hits_model"]  # upper-case, no dots: matched
    assert k["top5_hits_projection"] == f["top5_hits_projection"] < 20
    answers = pd.read_csv(tmp_path / "probe" / "probe_answers.csv")
    assert len(answers) == 2 * n and set(answers["position"]) == set(POSITIONS)
    ka = answers[answers["model"] == "openai/knows-2024"]
    missing = set(ka.loc[~ka["answered"], "player_name"])
    assert len(knowledge["forgotten"]) == 3 and missing == knowledge["forgotten"]
    assert k["coverage"] == pytest.approx(1 - len(missing) / n, abs=1e-3) and f["coverage"] == 1.0
    assert (ka.loc[~ka["answered"], "gain"] == 0).all()  # unanswered: the projection's own error, no gain
    assert (ka.loc[ka["answered"], "error_answer"] <= 5.01).all()
    assert k["recall_advantage"] == pytest.approx(ka["gain"].mean(), abs=1e-3)
    assert "remembers the 2024 season" in k["verdict"] and "no evidence" in f["verdict"]
    assert "openai/knows-2024" in out and "openai/forgets-2024" in out and "remembers" in out
    # the ledger: one line per call with the prompt (real names, probe ids) and the answer; no key anywhere
    calls = [json.loads(line) for line in (tmp_path / "probe" / "llm_calls.jsonl").read_text().splitlines()]
    assert len(calls) == 2 and {c["decision"] for c in calls} == {"knowledge_probe"}
    for c in calls:
        prompt = c["messages"][-1]["content"]
        assert "P01 |" in prompt and knowledge["sampled"] in prompt and c["parsed"]["points"] and c["response"]
        assert c["agent"] == f"llm:{c['model']}" and c["cost_usd"] > 0 and c["run_id"] == "probe-2024"
    assert "***" in next(c["response"] for c in calls if c["model"] == "openai/knows-2024")  # echoed, masked
    for folder in (tmp_path / "probe", shared["cache"]):
        for p in folder.rglob("*"):
            assert not p.is_file() or CANARY.encode() not in p.read_bytes(), p
    assert CANARY not in out + err
    config = yaml.safe_load((tmp_path / "probe" / "config.yaml").read_text())
    assert config["season"] == 2024 and config["teams"][0]["agent"]["api_key_env"] == "FFBENCH_PROBE_CANARY_KEY"


def test_sample_is_fixed_whatever_the_league_seed(shared, tmp_path, capsys):
    """Two leagues with other seeds, teams and rules (a 3-week half-PPR season with K, DST and a week-2 trade)
    ask about the same players with the same prompt: the second probe is replayed from the cache."""
    outs = []
    other = {"weeks": 3, "trades": {"weeks": [2]}, "scoring": "half_ppr",
             "roster": {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "K": 1, "DST": 1, "FLEX": 1, "BENCH": 4}}
    with FakeOpenAIServer() as srv:
        for seed, rules in ((1, None), (7, other)):
            cfg = write_league(tmp_path / f"s{seed}.yaml", shared, [llm_team(f"T{seed}", "openai/seed-check",
                                                                            srv.api_base)], seed=seed, league=rules)
            code, _, err = probe(capsys, cfg, "--out", tmp_path / f"p{seed}")
            assert code == 0, err
            outs.append(pd.read_csv(tmp_path / f"p{seed}" / "probe_answers.csv"))
        assert srv.requests == 1
    cols = ["probe_id", "player_id", "stratum"]
    assert outs[0][cols].equals(outs[1][cols])
    ledger = [json.loads(x) for x in (tmp_path / "p7" / "llm_calls.jsonl").read_text().splitlines()]
    assert [c["cache_hit"] for c in ledger] == [True]


def test_sample_strata_follow_their_definitions(prepared_2024):
    truth = season_truth(prepared_2024)
    s = draw_sample(truth, 2024)
    assert s.equals(draw_sample(truth, 2024)) and s["probe_id"].is_unique
    depth = {"QB": 1, "RB": 2, "WR": 2, "TE": 1}
    for r in s.itertuples():
        pre, act = r.pre_rank / depth[r.position], r.actual_rank / depth[r.position]
        assert {"breakout": pre > 15 and act <= 12, "bust": pre <= 10 and act > 20, "star": pre <= 5,
                "mid_round": 5 < pre <= 15, "late_round": 15 < pre <= 30}[r.stratum], r
    assert s.groupby(["position", "stratum"]).size().max() == 3
    # every total is the player's regular-season PPR points (weeks 1-18), summed here from the weekly stats
    w = prepared_2024.weekly
    assert w["week"].max() == 18 and set(s["stratum"]) == {"breakout", "bust", "star", "mid_round", "late_round"}
    totals = w.groupby("player_id")["fantasy_points"].sum()
    assert s["actual"].tolist() == pytest.approx(totals.reindex(s["player_id"]).fillna(0.0).tolist(), abs=0.006)


def test_sample_totals_match_the_real_season(real_prepared_2024):
    """A known real total: Ja'Marr Chase's 2024 regular season, 403.0 PPR points, a star of the sample."""
    s = draw_sample(season_truth(real_prepared_2024), 2024)
    chase = s[s["player_name"] == "Ja'Marr Chase"].iloc[0]
    assert chase["actual"] == pytest.approx(403.0) and chase["stratum"] == "star"
    assert real_prepared_2024.weekly["week"].max() == 18


def test_scoring_by_hand():
    sample = pd.DataFrame({"probe_id": ["P01", "P02", "P03", "P04"], "stratum": ["star", "bust", "breakout", "star"],
                           "player_name": ["Marvin Harrison Jr.", "D.J. Moore", "Amon-Ra St. Brown", "José Test"],
                           "projection": [200.0, 250.0, 100.0, 150.0], "actual": [180.0, 120.0, 260.0, 150.0]})
    points, named = parse_answer({"points": {"p1": "about 190 points", "P02": None, "amon ra st brown": 240,
                                             "P4": {"points": 150}, "P99": 5},
                                  "top5": {"wr": ["DJ Moore", "marvin harrison", "Nobody", "DJ Moore"]}}, sample)
    assert points == {"P01": 190.0, "P03": 240.0, "P04": 150.0}  # P02 null: unanswered; P99 is no player
    scored = score(sample, points)
    # gains: P01 |200-180| - |190-180| = 10; P02 unanswered 0; P03 |100-260| - |240-260| = 140; P04 0 - 0 = 0
    assert scored["gain"].tolist() == [10.0, 0.0, 140.0, 0.0]
    truth = {"actual": {"WR": ["D.J. Moore", "Marvin Harrison", "X", "Y", "Z"], "QB": ["Q"]},
             "projection": {"WR": ["D.J. Moore", "A", "B", "C", "D"], "QB": ["Q"]}}
    assert top5_hits(named, truth["actual"]) == 2  # a repeated name counts once; spelling does not matter
    s = summary("m", 2024, scored, named, truth)
    assert s["recall_advantage"] == 37.5 and s["coverage"] == 0.75 and s["n"] == 4
    assert s["top5_hits_model"] == 2 and s["top5_hits_projection"] == 2
    assert s["ci_low"] <= 37.5 <= s["ci_high"] and s["remembers"] == (s["ci_low"] > 0)
    none = summary("m", 2024, score(sample, {}), {}, truth)
    assert none["remembers"] is None and none["coverage"] == 0
    # nothing measured: no advantage that reads like a measured zero
    assert (none["recall_advantage"], none["ci_low"], none["ci_high"], none["ranked_advantage"]) == (None,) * 4
    assert name_key("José Test") == name_key("jose test") == name_key("Jose Test III")
    assert name_key("Kenneth Walker III") == name_key("Kenneth Walker") != name_key("Kenneth Walters")
    assert parse_answer(None, sample) == ({}, {})
    assert parse_answer({"P03": "250", "top5": "none"}, sample) == ({"P03": 250.0}, {})


def test_unfinished_season_is_refused(prepared_2024):
    cut = dataclasses.replace(prepared_2024, weekly=prepared_2024.weekly[prepared_2024.weekly["week"] <= 12])
    with pytest.raises(ProbeError, match=r"season 2024 is not over .*week\(s\) 13, 14, 15, 16, 17, 18"):
        season_truth(cut)


def test_bad_input_is_one_clear_line(shared, tmp_path, capsys):
    def refused(*args, match):
        code, out, err = probe(capsys, *args)
        assert code == 2 and match in err and "Traceback" not in err, err
        return err

    refused(REPO / "params" / "demo.yaml", "--out", tmp_path / "a", match="no team has an LLM agent")
    llm = write_league(tmp_path / "llm.yaml", shared, [llm_team("M", "openai/m", "http://127.0.0.1:9/v1")])
    refused(llm, "--season", "2019", "--out", tmp_path / "b", match="--season 2019: no data for season 2019")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "probe.json").write_text("{}")
    refused(llm, "--out", tmp_path / "full", match="already exists and is not an empty folder")
    (tmp_path / "file").write_text("x")
    refused(llm, "--out", tmp_path / "file" / "sub", match="is a file")
    empty = tmp_path / "nodata"
    (empty / "nflverse").mkdir(parents=True)
    d = yaml.safe_load(llm.read_text())
    d["data"]["dir"] = str(empty)
    (tmp_path / "nodata.yaml").write_text(yaml.safe_dump(d))
    err = refused(tmp_path / "nodata.yaml", "--season", "2023", "--out", tmp_path / "c", match="season 2023")
    assert str(empty) in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("sequential", [True, False])
def test_unreadable_answers_are_reasked_and_the_budget_stops_the_probe(shared, tmp_path, capsys, sequential):
    """One model at a time (llm.sequential, and whenever a budget is set: concurrent asks would all be sent before
    any cost is known): the first only ever answers broken JSON (re-asked, then no verdict),
    the second (priced; the first is free) wraps its JSON in prose (read all the same) and spends past llm.budget_usd, so the third is not
    asked: exit 3, and every model has its entry."""
    with FakeOpenAIServer(fault_rate=1.0, faults=("malformed",)) as broken, \
            FakeOpenAIServer(fault_rate=1.0, faults=("prose",)) as chatty, FakeOpenAIServer() as never:
        cfg = write_league(tmp_path / "l.yaml", shared, [
            llm_team("A", "openai/broken", broken.api_base, input_cost_per_token=0, output_cost_per_token=0),
            llm_team("B", "openai/chatty", chatty.api_base),
            llm_team("C", "openai/never", never.api_base)], sequential=sequential, budget_usd=1e-9, max_reasks=1,
            cache_dir=str(tmp_path / "cache"))  # its own cache: every call is live and priced
        code, out, err = probe(capsys, cfg, "--out", tmp_path / "p")
        assert (broken.requests, chatty.requests, never.requests) == (2, 1, 0)
    assert code == 3 and "llm.budget_usd" in err
    models = {m["model"]: m for m in json.loads((tmp_path / "p" / "probe.json").read_text())["models"]}
    assert models["openai/broken"]["remembers"] is None and "no readable answer" in models["openai/broken"]["error"]
    assert models["openai/chatty"]["coverage"] == 1.0 and models["openai/chatty"]["remembers"] is False
    assert models["openai/never"]["remembers"] is None and "budget" in models["openai/never"]["error"]
    calls = [json.loads(x) for x in (tmp_path / "p" / "llm_calls.jsonl").read_text().splitlines()]
    assert [(c["model"], c["reask"], bool(c["problems"])) for c in calls] == [
        ("openai/broken", 0, True), ("openai/broken", 1, True), ("openai/chatty", 0, False)]


def test_a_model_that_cannot_be_asked_fails_the_probe(shared, tmp_path, capsys):
    with FakeOpenAIServer(fault_rate=1.0, faults=("500",)) as down:
        cfg = write_league(tmp_path / "l.yaml", shared, [llm_team("A", "openai/down", down.api_base)], retries=1)
        code, out, err = probe(capsys, cfg, "--out", tmp_path / "p")
    assert code == 1 and "could not probe openai/down" in err and "Traceback" not in err
    m = json.loads((tmp_path / "p" / "probe.json").read_text())["models"][0]
    assert m["remembers"] is None and "InternalServerError" in m["error"] and "could not be probed" in m["verdict"]
    assert m["recall_advantage"] is None and m["ci_low"] is None
    assert "openai/down" in out and " - " in out.splitlines()[2]  # the printed table: no +0.0 for it


def test_gains_only_on_breakouts_and_busts_do_not_count_as_remembering():
    """A model that pulls every answer toward a typical season beats the projection on breakouts and busts (which
    the projection misses by selection) but not on players chosen by preseason rank: it does not "remember", and
    the verdict says why; memory gains on both."""
    sample = pd.DataFrame({"probe_id": [f"P{i:02d}" for i in range(1, 13)],
                           "stratum": ["breakout"] * 5 + ["bust"] * 5 + ["star"] * 2,
                           "player_name": list("ABCDEFGHIJKL"),
                           "projection": [50.0] * 5 + [300.0] * 5 + [200.0] * 2,
                           "actual": [250.0] * 5 + [100.0] * 5 + [250.0] * 2})
    regressor = score(sample, dict.fromkeys(sample["probe_id"], 170.0))  # gains 120 x5, 130 x5, -30 x2
    s = summary("m", 2024, regressor, {}, {"actual": {}, "projection": {}})
    assert s["ci_low"] > 0 and s["remembers"] is False and "no clear evidence" in s["verdict"]
    assert s["ranked_advantage"] == -30.0 and "stars and mid- and late-round picks (" in s["verdict"]
    assert s["by_stratum"] == {"breakout": 120.0, "bust": 130.0, "star": -30.0}
    memory = score(sample, dict(zip(sample["probe_id"], sample["actual"] + 3)))
    s = summary("m", 2024, memory, {}, {"actual": {}, "projection": {}})
    assert s["remembers"] is True and s["ranked_advantage"] > 0 and "remembers the 2024 season" in s["verdict"]
