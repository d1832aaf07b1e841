"""Engine paths no other test reaches: the on-deck draft, superseded trade proposals and ``llm.sequential``.
Written against the public Engine, the run directory's tables and ``decisions.jsonl``."""
from __future__ import annotations


from ffbench_lib.config.league import League
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import ScriptedAgent, agents_with, demo_league, digests, run_engine

TAKEN = "taken while on deck: "


def league_of(weeks: int, trade_weeks: list[int], **sections) -> League:
    d = demo_league().model_dump(mode="json")
    d["weeks"], d["trades"]["weeks"] = weeks, trade_weeks
    for name, values in sections.items():
        d[name] = {**d[name], **values}
    return League.model_validate(d)


def everyone(league: League, script: dict) -> tuple[dict, dict]:
    scripted = {t.name: ScriptedAgent(t.name, league.seed, script) for t in league.teams}
    return agents_with(league, scripted), scripted


# ------------------------------------------------------------------------------------------------ on deck
def best_one(view: dict) -> dict:
    """Shortlist only the best-projected player the team may draft: the team on deck names the same player as
    the team on the clock (same board, same legal positions in round 1), who is then gone."""
    cards = [c for pos, cs in view["available"].items() if pos in view["legal_positions"] for c in cs]
    top = min(cards, key=lambda c: (-(c["proj"] or 0.0), c["id"]))
    return {"shortlist": [top["id"]]}


def draft_run(prepared, out, on_deck: bool):
    league = league_of(1, [], draft={"on_deck": on_deck})
    agents, scripted = everyone(league, {"draft_shortlist": best_one})
    run_engine(league, prepared, out, agents=agents)
    run = RunDir(out)
    shortlists = [d for d in run.decisions() if d["decision"] == "draft_shortlist"]
    picks = run.table("draft_picks").set_index("pick")
    return league, run, shortlists, picks, scripted


def test_on_deck_shortlist_of_taken_players_is_noted_and_asked_again(prepared_2024, tmp_path):
    league, run, shortlists, picks, scripted = draft_run(prepared_2024, tmp_path / "run", on_deck=True)
    n = len(league.teams)
    redone = [d for d in shortlists if d.get("on_deck")]
    # round 1: every team but the first was on deck while the team before it took the one player it named
    assert sorted(d["pick"] for d in redone if d["pick"] <= n) == list(range(2, n + 1))
    for d in redone:
        gone = picks.loc[d["pick"] - 1, "player_id"]  # the pick made while this team was on deck
        assert d["reason"] == TAKEN + gone and d["applied"] == [] and d["decided_by"] == "agent"
        assert d["raw_answer"] == {"shortlist": [gone]}
        # then the same team, same pick, asked again with the board as it is now
        again = [x for x in shortlists if x["pick"] == d["pick"] and not x.get("on_deck")]
        assert len(again) == 1 and again[0]["team"] == d["team"]
        assert again[0]["applied"] != [gone] and again[0]["decided_by"] == "agent" and again[0]["reason"] is None
        board = {c["id"] for cs in again[0]["view"]["available"].values() for c in cs}
        assert gone not in board and gone in {c["id"] for cs in d["view"]["available"].values() for c in cs}
        assert picks.loc[d["pick"], "player_id"] == again[0]["applied"][0]
    # the agent itself was asked twice for those picks
    team = redone[0]["team"]
    asked = [v["pick"] for kind, v in scripted[team].seen if kind == "draft_shortlist"]
    assert asked.count(redone[0]["pick"]) == 2
    # the snake's turn (the same team picks twice) has no team on deck
    assert n + 1 not in {d["pick"] for d in redone}


def test_without_on_deck_every_shortlist_is_asked_once_on_the_current_board(prepared_2024, tmp_path):
    league, run, shortlists, picks, scripted = draft_run(prepared_2024, tmp_path / "run", on_deck=False)
    assert not any(d.get("on_deck") for d in shortlists)
    assert not any(TAKEN in (d["reason"] or "") for d in shortlists)
    assert sorted(d["pick"] for d in shortlists) == list(picks.index)  # one shortlist per pick
    assert all(d["decided_by"] == "agent" for d in shortlists)


# ------------------------------------------------------------------------------------------ superseded
def swap_a_wide_receiver(view: dict) -> dict:
    """Offer my first movable WR for the first movable WR of the next team (alphabetically, wrapping)."""
    locked = set(view["locked_players"])
    mine = [p["id"] for p in view["my_roster"] if p["pos"] == "WR" and p["id"] not in locked]
    others = sorted(view["other_teams"], key=lambda t: t["team"])
    to = next((t for t in others if t["team"] > view["team"]), others[0])
    theirs = [p["id"] for p in to["roster"] if p["pos"] == "WR" and p["id"] not in locked]
    if not mine or not theirs:
        return {"action": "pass"}
    return {"action": "propose", "to_team": to["team"], "give": [mine[0]], "get": [theirs[0]]}


def trade_run(prepared, out, sequential: bool = False):
    league = league_of(3, [3], llm={"sequential": sequential})
    agents, scripted = everyone(league, {"propose_trade": swap_a_wide_receiver,
                                         "respond_to_offer": lambda v: {"action": "accept"}})
    run_engine(league, prepared, out, agents=agents)
    run = RunDir(out)
    proposals = [d for d in run.decisions() if d["decision"] == "propose_trade" and d["week"] == 3]
    return league, run, proposals, scripted


def roster_ids(view: dict, team: str) -> set[str]:
    if view["team"] == team:
        return {p["id"] for p in view["my_roster"]}
    return {p["id"] for t in view["other_teams"] if t["team"] == team for p in t["roster"]}


def test_a_trade_supersedes_the_proposals_asked_before_it(prepared_2024, tmp_path):
    league, run, proposals, scripted = trade_run(prepared_2024, tmp_path / "run")
    trades = run.table("trades")
    first = trades.iloc[0]
    assert first["negotiation"] == "w3-n1" and first["accepted_step"] == 2
    superseded = [d for d in proposals if d["applied"] == "superseded"]
    # the first team in the window's order traded; every later team's proposal was made on the old rosters
    assert len(superseded) == len(league.teams) - 1
    assert first["proposer"] not in {d["team"] for d in superseded}
    for d in superseded:
        assert d["reason"] == "rosters changed by an earlier trade this week; asked again"
        assert d["decided_by"] == "agent" and d["raw_answer"]["action"] == "propose"
        again = [x for x in proposals if x["team"] == d["team"] and x["applied"] != "superseded"]
        assert len(again) == 1 and again[0]["negotiation"] == d["negotiation"]
        old, new = d["view"], again[0]["view"]
        # the stale view still had the first trade's players where they were; the new one has them moved
        for side, gave, got in ((first["proposer"], first["proposer_gives"], first["receiver_gives"]),
                                (first["receiver"], first["receiver_gives"], first["proposer_gives"])):
            assert set(gave) <= roster_ids(old, side) and not set(got) & roster_ids(old, side)
            assert set(got) <= roster_ids(new, side) and not set(gave) & roster_ids(new, side)
        assert set(new["locked_players"]) >= set(first["proposer_gives"]) | set(first["receiver_gives"])
        asked = [v for kind, v in scripted[d["team"]].seen if kind == "propose_trade" and v["week"] == 3]
        assert len(asked) == 2
    # the tables show each team's one negotiation, none of the superseded proposals
    steps = run.table("trade_steps")
    openers = steps.loc[(steps["week"] == 3) & (steps["step"] == 1), "actor"]
    assert sorted(openers) == sorted(t.name for t in league.teams)


def test_sequential_proposals_are_never_superseded(prepared_2024, tmp_path):
    league, run, proposals, scripted = trade_run(prepared_2024, tmp_path / "run", sequential=True)
    assert len(run.table("trades")) >= 1
    assert not [d for d in proposals if d["applied"] == "superseded"]
    assert sorted(d["team"] for d in proposals) == sorted(t.name for t in league.teams)  # each asked once


# ------------------------------------------------------------------------------------------ sequential
def test_sequential_bots_league_writes_the_same_tables(prepared_2024, tmp_path):
    for sequential in (False, True):
        league = league_of(5, [4], llm={"sequential": sequential})
        run_engine(league, prepared_2024, tmp_path / f"seq-{sequential}")
    a, b = digests(tmp_path / "seq-False"), digests(tmp_path / "seq-True")
    tables = sorted(k for k in a if k.endswith(".parquet"))
    assert "trades.parquet" in tables and "draft_picks.parquet" in tables
    assert {k: a[k] for k in tables} == {k: b[k] for k in tables}
    assert len(RunDir(tmp_path / "seq-True").table("trade_steps")) > 0


def llm_league(api_base: str, cache_dir, sequential: bool, weeks: int = 2, **draft) -> League:
    """The demo league with three LLM teams on the local server, trading in its last week."""
    d = league_of(weeks, [weeks], llm={"sequential": sequential, "backoff_s": 0.01, "retries": 2,
                                       "cache_dir": str(cache_dir)}, draft=draft).model_dump(mode="json")
    for i in range(3):
        d["teams"][i] = {"name": f"M{i}", "agent": {"kind": "llm", "model": f"openai/fake-model-{i}",
                                                    "api_base": api_base, "timeout_s": 5.0, "max_tokens": 2000,
                                                    "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6,
                                                    "max_concurrency": 4}}
    return League.model_validate(d)


def test_sequential_llm_league_plays_against_the_local_server(prepared_2024, tmp_path):
    with FakeOpenAIServer() as srv:
        run_engine(llm_league(srv.api_base, tmp_path / "cache", sequential=True, on_deck=False),
                   prepared_2024, tmp_path / "run")
        requests, most = srv.requests, srv.max_inflight
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    assert most == 1  # one request at a time
    llm = [d for d in run.decisions() if d["agent"].startswith("llm:")]
    assert len(run.llm_calls()) == requests == len(llm)
    assert {d["decision"] for d in llm} >= {"draft_shortlist", "draft_pick", "set_lineup", "propose_trade"}
    assert {d["decided_by"] for d in llm} == {"agent"}
    assert len(run.table("lineups").query("week == 2")) == 10 * league_of(2, [2]).roster.starters


def test_sequential_llm_league_with_on_deck_asks_one_at_a_time(prepared_2024, tmp_path):
    with FakeOpenAIServer(latency_s=0.02) as srv:
        # the draft (on deck: the next team's shortlist) and one week
        run_engine(llm_league(srv.api_base, tmp_path / "cache", sequential=True, weeks=1), prepared_2024,
                   tmp_path / "run")
        assert srv.max_inflight == 1
