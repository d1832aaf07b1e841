"""Waivers and free agents through the real engine: who wins a claim, what it costs, what the pool holds."""
import json
import re

import pandas as pd
import pytest

from ffbench_lib.config.league import Waivers
from ffbench_lib.game.decisions.waiver_claims import pool
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall

from engine_helpers import ScriptedAgent, agents_with, demo_league, run_engine, same_run


def waiver_league(mode="faab", weeks=4, **waivers):
    lg = demo_league(seed=2, weeks=weeks)
    return lg.model_copy(update={"waivers": Waivers(enabled=True, mode=mode, **waivers),
                                 "trades": lg.trades.model_copy(update={"weeks": []})})


def top_swap(view, nth=0):
    """The best free agent by projection (the ``nth`` best the team can swap for), dropping the team's weakest
    player of that position."""
    free = [c for cards in view["free_agents"].values() for c in cards]
    mine = view["my_roster"]
    swaps = []
    for fa in sorted(free, key=lambda c: (-(c["proj_week"] or 0), c["id"])):
        same = sorted((c for c in mine if c["pos"] == fa["pos"]), key=lambda c: ((c["proj_week"] or 0), c["id"]))
        if len(same) > 1:
            swaps.append((fa["id"], same[0]["id"]))
            if len(swaps) > nth:
                return swaps[nth]
    raise AssertionError("no swap found")


def claim(bid=None, only_week=2, nth=0):
    def answer(view):
        if view["week"] != only_week:
            return {"claims": []}
        add, drop = top_swap(view, nth)
        return {"claims": [{"add": add, "drop": drop, **({"bid": bid} if bid is not None else {})}]}
    return answer


@pytest.fixture(scope="module")
def faab_run(prepared_2024, tmp_path_factory):
    """One 4-week FAAB season of the default bots, shared by the tests that only read it (weeks 2-4 hold
    waiver claims, drops of drafted players and free-agent adds)."""
    lg = waiver_league(weeks=4)
    out = tmp_path_factory.mktemp("faab") / "run"
    run_engine(lg, prepared_2024, out)
    return lg, out


def scripted(league, **scripts):
    return agents_with(league, {t: ScriptedAgent(t, league.seed, s) for t, s in scripts.items()})


def table(run, name):
    return pd.read_parquet(run / f"{name}.parquet")


def test_faab_highest_bid_wins_and_pays(prepared_2024, tmp_path):
    lg = waiver_league()
    a, b = lg.teams[0].name, lg.teams[1].name
    none = {"free_agent_adds": lambda v: {"claims": []}}
    agents = scripted(lg, **{a: {"waiver_claims": claim(30), **none}, b: {"waiver_claims": claim(31), **none}})
    for t in [t.name for t in lg.teams if t.name not in (a, b)]:
        agents[t] = ScriptedAgent(t, lg.seed, {"waiver_claims": lambda v: {"claims": []}, **none})
    state, _ = run_engine(lg, prepared_2024, tmp_path / "run", agents=agents)
    claims = table(tmp_path / "run", "waiver_claims")
    w2 = claims[claims["week"] == 2].set_index("team")
    assert w2.loc[b, "result"] == "won" and w2.loc[a, "result"] == "lost"
    assert state.extras["waivers"]["faab"][b] == 69 and state.extras["waivers"]["faab"][a] == 100
    tx = table(tmp_path / "run", "transactions")
    assert tx[["week", "team", "kind", "bid"]].values.tolist() == [[2, b, "waiver", 31]]
    added = tx["add"].iloc[0]
    rosters = table(tmp_path / "run", "rosters")
    assert added in set(rosters[(rosters["week"] == 2) & (rosters["team"] == b)]["player_id"])
    assert added not in set(rosters[(rosters["week"] == 1)]["player_id"])


def test_faab_tie_goes_to_the_worse_record(prepared_2024, tmp_path):
    lg = waiver_league()
    names = [t.name for t in lg.teams]
    scripts = {t: {"waiver_claims": claim(10), "free_agent_adds": lambda v: {"claims": []}} for t in names}
    state, _ = run_engine(lg, prepared_2024, tmp_path / "run", agents=scripted(lg, **scripts))
    st = table(tmp_path / "run", "standings")
    worst = st[st["week"] == 1].sort_values("rank")["team"].iloc[-1]  # last after week 1: the worse record
    w2 = table(tmp_path / "run", "waiver_claims").query("week == 2")
    assert w2[w2["result"] == "won"]["team"].tolist()[0] == worst


def test_rolling_priority_winner_moves_to_the_end(prepared_2024, tmp_path):
    lg = waiver_league("rolling")
    names = [t.name for t in lg.teams]
    # each team claims a different free agent (its i-th best swap), so several claims can win
    scripts = {t: {"waiver_claims": claim(nth=i), "free_agent_adds": lambda v: {"claims": []}}
               for i, t in enumerate(names)}
    state, _ = run_engine(lg, prepared_2024, tmp_path / "run", agents=scripted(lg, **scripts))
    first = state.draft_order[-1]  # priority starts in reverse draft order
    w2 = table(tmp_path / "run", "waiver_claims").query("week == 2")
    assert w2[w2["result"] == "won"]["team"].tolist()[0] == first
    assert w2["bid"].isna().all()  # no bids under rolling priority
    # every winner went to the end of the order as it won (claims only in week 2)
    wins = w2[w2["result"] == "won"]["team"].tolist()
    start = state.draft_order[::-1]
    assert len(wins) > 1 and state.extras["waivers"]["order"] == [t for t in start if t not in wins] + wins


def test_dropped_players_wait_a_week_and_caps_hold(prepared_2024, tmp_path):
    lg = waiver_league(weeks=4)
    names = [t.name for t in lg.teams]
    seen = {}

    def fa_adds(view):
        seen.setdefault(view["week"], set()).update(c["id"] for cs in view["free_agents"].values() for c in cs)
        return {"claims": []}

    scripts = {t: {"waiver_claims": claim(5), "free_agent_adds": fa_adds} for t in names}
    run_engine(lg, prepared_2024, tmp_path / "run", agents=scripted(lg, **scripts))
    tx = table(tmp_path / "run", "transactions")
    dropped = set(tx[tx["week"] == 2]["drop"])
    assert dropped and not dropped & seen[2]  # not offered as free agents the week they were dropped
    rosters = table(tmp_path / "run", "rosters")
    caps = lg.roster.caps
    for (week, team), grp in rosters.groupby(["week", "team"]):
        assert len(grp) == lg.roster.size and grp["player_id"].is_unique
        for pos, n in grp["position"].value_counts().items():
            assert n <= caps.get(pos, lg.roster.size), (week, team, pos)
    assert not rosters.groupby("week")["player_id"].apply(lambda s: s.duplicated().any()).any()


def test_illegal_claims_are_dropped_and_marked(prepared_2024, tmp_path):
    lg = waiver_league(weeks=2, max_claims=4)
    a = lg.teams[0].name

    def bad(view):
        add, drop = top_swap(view)
        mine = view["my_roster"][0]["id"]
        return {"claims": [{"add": mine, "drop": drop, "bid": 1},  # a rostered player
                           {"add": add, "drop": "nobody", "bid": 1},  # a drop not on the roster
                           {"add": add, "drop": drop, "bid": 101},  # above the budget
                           {"add": add, "drop": drop, "bid": 7}]}  # legal: kept
    agents = scripted(lg, **{a: {"waiver_claims": bad, "free_agent_adds": lambda v: "not json"}})
    run_engine(lg, prepared_2024, tmp_path / "run", agents=agents)
    recs = [json.loads(x) for x in open(tmp_path / "run" / "decisions.jsonl")]
    wc = next(r for r in recs if r["team"] == a and r["decision"] == "waiver_claims")
    assert wc["decided_by"] == "fallback" and len(wc["applied"]) == 1 and wc["applied"][0]["bid"] == 7
    assert "claim 1: " in wc["reason"] and "not an available free agent" in wc["reason"]
    assert "'nobody' is not on your roster" in wc["reason"] and "outside 0..100" in wc["reason"]
    fa = next(r for r in recs if r["team"] == a and r["decision"] == "free_agent_adds")
    assert fa["decided_by"] == "fallback" and fa["applied"] == [] and "no 'claims' list" in fa["reason"]


def test_pool_holds_only_players_known_before_the_week(prepared_2024):
    lg = waiver_league()
    fw = Firewall(prepared_2024, lg)
    free_agents = lambda state, w: pool(fw, state, w)  # noqa: E731
    weekly = prepared_2024.weekly
    first = weekly.groupby("player_id")["week"].min()
    late = [p for p, w in first.items() if w >= 3 and p not in fw.catalog.preseason_ids]
    assert late, "2024 has players who first play mid-season"
    state = LeagueState(teams=["A", "B"], agent_ids={"A": "x", "B": "y"}, draft_order=["A", "B"], schedule={})
    for p in late:
        w = int(first[p])
        assert p not in free_agents(state, w) and p in free_agents(state, w + 1)


def test_waivers_resume_byte_identical(prepared_2024, tmp_path):
    lg = waiver_league(weeks=4)
    run_engine(lg, prepared_2024, tmp_path / "whole")
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp_path / "run", crash_after="week:2")
    run_engine(lg, prepared_2024, tmp_path / "run", resume=True)
    same_run(tmp_path / "whole", tmp_path / "run")
    cp = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    faab = cp["extras"]["waivers"]["faab"]
    assert set(faab) == {t.name for t in lg.teams} and sum(faab.values()) < 100 * len(lg.teams)


def test_waivers_off_writes_no_waiver_state(prepared_2024, tmp_path):
    lg = demo_league(seed=2, weeks=2)
    run_engine(lg, prepared_2024, tmp_path / "run")
    cp = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    assert "extras" not in cp
    assert table(tmp_path / "run", "waiver_claims").empty and list(table(tmp_path / "run", "transactions").columns)
    recs = [json.loads(x) for x in open(tmp_path / "run" / "decisions.jsonl")]
    assert not {r["decision"] for r in recs} & {"waiver_claims", "free_agent_adds"}


def test_llm_teams_make_waiver_decisions_through_litellm(prepared_2024, tmp_path):
    """A season of LLM teams against the local OpenAI-compatible server: waiver claims and free-agent adds are
    asked through the real litellm path, logged with decided_by, and won claims move players; an illegal
    answer (claims backwards, a negative bid) is re-asked and then repaired."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer
    from test_llm import llm_league

    with FakeOpenAIServer(fault_rate=0.15, faults=("illegal",), seed=3) as srv:
        lg = llm_league(srv.api_base, tmp_path / "cache", n_llm=4, weeks=3)
        lg = lg.model_copy(update={"waivers": Waivers(enabled=True, mode="faab")})
        run_engine(lg, prepared_2024, tmp_path / "run")
    recs = [json.loads(x) for x in open(tmp_path / "run" / "decisions.jsonl")]
    llm_teams = {f"M{i}" for i in range(4)}
    waiver = [r for r in recs if r["decision"] in ("waiver_claims", "free_agent_adds") and r["team"] in llm_teams]
    assert len(waiver) == 4 * 2 * 2  # four LLM teams, weeks 2-3, waivers then free agents
    assert {r["decided_by"] for r in waiver} <= {"agent", "fallback"} and any(r["applied"] for r in waiver)
    assert all(r["raw_answer"]["_llm"]["prompt_version"] == "v2" for r in waiver)
    calls = [json.loads(x) for x in open(tmp_path / "run" / "llm_calls.jsonl")]
    asked = [c for c in calls if c["decision"] == "waiver_claims"]
    assert asked and all("FREE AGENTS" in c["messages"][1]["content"] for c in asked)
    reasked = [c for c in asked if c["reask"] > 0]
    assert reasked and "Your previous answer was invalid: claim 1:" in reasked[0]["messages"][-1]["content"]
    tx = table(tmp_path / "run", "transactions")
    assert set(tx["team"]) & llm_teams


@pytest.mark.parametrize("edit,message", [
    (lambda cp: cp["extras"]["waivers"]["faab"].update({"ADP-1": -5}), "saved FAAB budgets are not what"),
    (lambda cp: cp["extras"]["waivers"]["faab"].update({t: 100 for t in cp["teams"]}), "saved FAAB budgets are not"),
    (lambda cp: cp["extras"]["waivers"].update({"order": ["x", 1]}), "saved FAAB budgets are not what"),
    (lambda cp: cp["extras"].update({"trades": {}}), "state of phase(s) ['trades']"),
    (lambda cp: cp.pop("extras"), "saved FAAB budgets are not what"),
    (lambda cp: cp["tables"]["transactions"][0].update({"bid": "lots"}), "names team"),
])
def test_a_checkpoint_with_bad_waiver_state_is_refused(prepared_2024, tmp_path, edit, message):
    from ffbench_lib.runs.rundir import CheckpointError

    lg = waiver_league(weeks=3)
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp_path / "run", crash_after="week:2")
    path = tmp_path / "run" / "checkpoint.json"
    cp = json.loads(path.read_text())
    edit(cp)
    path.write_text(json.dumps(cp))
    with pytest.raises(CheckpointError, match=re.escape(message)):
        run_engine(lg, prepared_2024, tmp_path / "run", resume=True)


def test_waiver_prompts_shorten_the_free_agents_to_fit(faab_run):
    from ffbench_lib.agents import fit
    from ffbench_lib.agents.prompts import messages

    _, run = faab_run
    recs = [json.loads(x) for x in open(run / "decisions.jsonl")]
    view = next(r["view"] for r in recs if r["decision"] == "waiver_claims")
    assert fit.levels(view) == 3 and all(len(c) == 8 for c in view["free_agents"].values())
    short, notes = fit.shorten(view, 3)
    assert all(len(c) == 2 for c in short["free_agents"].values()) and short["my_roster"] == view["my_roster"]
    assert notes == ["the free agents show the 2 best player(s) per position"]
    assert short["free_agents"]["RB"] == view["free_agents"]["RB"][:2]  # the best kept (views list them first)
    assert len(messages("waiver_claims", short)[1]["content"]) < len(messages("waiver_claims", view)[1]["content"])


def test_a_checkpoint_whose_rosters_its_moves_do_not_explain_is_refused(prepared_2024, tmp_path):
    """A roster edited to hold a free agent, or a transaction edited to add a player who first plays later in
    the season, is refused on resume."""
    from ffbench_lib.runs.rundir import CheckpointError

    lg = waiver_league("rolling", weeks=3)
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp_path / "run", crash_after="week:2")
    path = tmp_path / "run" / "checkpoint.json"
    good = json.loads(path.read_text())
    first = prepared_2024.weekly.groupby("player_id")["week"].min()
    late = next(p for p, w in first.items() if w >= 10 and p not in {x for ids in good["rosters"].values() for x in ids}
                and p not in set(prepared_2024.players.loc[prepared_2024.players["in_draft_pool"], "player_id"]))
    txs = good["tables"]["transactions"]
    i = next(i for i, t in enumerate(txs) if t["add"] in good["rosters"][t["team"]]
             and sum(x["add"] == t["add"] or x["drop"] == t["add"] for x in txs) == 1)
    team, added = txs[i]["team"], txs[i]["add"]

    def swap_in_late(cp):  # the move and the roster agree, but the player added first plays in week 10 or later
        cp["tables"]["transactions"][i]["add"] = late
        cp["rosters"][team][cp["rosters"][team].index(added)] = late

    pl = prepared_2024.players.set_index("player_id")
    held = {x for ids in good["rosters"].values() for x in ids}
    first_pos = pl.loc[good["rosters"][team][0], "position"]
    free = next(p for p in pl.index[pl["in_draft_pool"]] if p not in held and pl.loc[p, "position"] == first_pos)

    for edit, message in [(lambda cp: cp["rosters"][team].__setitem__(0, free), "is not what its recorded"),
                          (swap_in_late, "not known before week 2"),
                          (lambda cp: cp["extras"]["waivers"]["order"].reverse(), "saved waiver order")]:
        cp = json.loads(json.dumps(good))
        edit(cp)
        path.write_text(json.dumps(cp))
        with pytest.raises(CheckpointError, match=re.escape(message)):
            run_engine(lg, prepared_2024, tmp_path / "run", resume=True)


def test_faab_a_higher_bid_wins_even_when_ranked_second(prepared_2024, tmp_path):
    """Bids are compared per player across the league: B ranks X second but bids more for him than A, who
    ranks him first, so B gets X (and Y, which nobody else wants)."""
    lg = waiver_league(weeks=2)
    a, b = lg.teams[0].name, lg.teams[1].name

    def rbs(view):
        free = view["free_agents"]["RB"]
        mine = sorted((c for c in view["my_roster"] if c["pos"] == "RB"), key=lambda c: ((c["proj_week"] or 0), c["id"]))
        return free[0]["id"], free[1]["id"], mine[0]["id"], mine[1]["id"]

    def claims_a(view):
        x, _, d1, _ = rbs(view)
        return {"claims": [{"add": x, "drop": d1, "bid": 10}]}

    def claims_b(view):
        x, y, d1, d2 = rbs(view)
        return {"claims": [{"add": y, "drop": d1, "bid": 5}, {"add": x, "drop": d2, "bid": 20}]}

    quiet = {"waiver_claims": lambda v: {"claims": []}, "free_agent_adds": lambda v: {"claims": []}}
    agents = scripted(lg, **{t.name: quiet for t in lg.teams[2:]},
                      **{a: {**quiet, "waiver_claims": claims_a}, b: {**quiet, "waiver_claims": claims_b}})
    state, _ = run_engine(lg, prepared_2024, tmp_path / "run", agents=agents)
    rows = table(tmp_path / "run", "waiver_claims")
    won = rows[rows["result"] == "won"]
    assert won["team"].tolist() == [b, b] and sorted(won["bid"].tolist()) == [5, 20]
    assert rows[rows["team"] == a]["result"].tolist() == ["lost"]
    assert state.extras["waivers"]["faab"] == {**{t.name: 100 for t in lg.teams}, b: 75}


def test_a_dropped_players_points_still_count_for_the_draft(faab_run, prepared_2024):
    """Draft quality counts every point a drafted player scored in the run's weeks, also after his team dropped
    him (the dropped_points table), as before waivers existed."""
    from ffbench_lib.analysis import metrics

    lg, run = faab_run
    tx = table(run, "transactions")
    drafted = set(table(run, "draft_picks")["player_id"])
    dropped = [p for p in tx["drop"] if p in drafted]
    assert dropped and set(tx.loc[tx["drop"].isin(dropped), "week"]) - {lg.weeks}  # dropped with weeks to go
    dq = metrics.draft_quality(metrics.load_runs(run)).set_index("player_id")["actual_points"]
    w = prepared_2024.weekly
    truth = w[w["week"] <= lg.weeks].groupby("player_id")["fantasy_points"].sum()
    for p in dropped:
        assert dq[p] == pytest.approx(float(truth.get(p, 0.0)), abs=0.01), p
    dp = table(run, "dropped_points")
    assert len(dp) > 0
    rosters = table(run, "rosters")
    assert not set(zip(dp["week"], dp["player_id"])) & set(zip(rosters["week"], rosters["player_id"]))


def test_replay_widget_shows_waiver_moves_by_name(faab_run):
    from ffbench_lib.present.widgets import StandingsReplay

    _, run = faab_run
    tx = table(run, "transactions")
    w = StandingsReplay(run)
    w.slider.value = 2
    moves = w.frames(2)["waivers"]
    assert len(moves) == (tx["week"] == 2).sum() > 0
    undrafted = tx[~tx["add"].isin(set(table(run, "draft_picks")["player_id"]))].iloc[0]
    assert undrafted["add_name"] in w.names.values() and undrafted["add"] not in moves.to_string()
    assert moves["added"].iloc[0] in w.waivers.value


@pytest.mark.parametrize("patch,message", [
    ({"waivers": {"enabled": "yes"}}, "waivers.enabled: Input should be a valid boolean (got 'yes')"),
    ({"waivers": {"enabled": True, "budget": True}}, "waivers.budget: Input should be a valid integer (got True)"),
    ({"waivers": {"enabled": True, "max_claims": "3"}}, "waivers.max_claims: Input should be a valid integer"),
    ({"roster": {"QB": 0, "RB": 0, "WR": 0, "TE": 0, "FLEX": 0, "BENCH": 5}}, "the roster has no starting slots"),
    ({"roster": {"flex_positions": []}}, "FLEX=1 but flex_positions is empty"),
])
def test_config_mistakes_around_waivers_and_rosters_are_refused(patch, message):
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.config.load import parse_config

    d = demo_league().model_dump(mode="json")
    d.update(patch)
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(d)


def test_bids_that_are_not_whole_dollars_are_named():
    from ffbench_lib.game.decisions.waiver_claims import bid_problem

    for bad in (float("nan"), float("inf"), 2.5, True, "3", None):
        assert "must be a whole number of dollars" in bid_problem(bad, 10)
    assert "outside 0..10" in bid_problem(11, 10) and bid_problem(10, 10) is None and bid_problem(3.0, 10) is None


def test_a_position_nobody_may_hold_is_on_no_board(prepared_2024, tmp_path):
    lg = waiver_league(weeks=2)
    roster = lg.roster.model_dump(mode="json")
    roster.update(TE=0, caps={**roster["caps"], "TE": 0}, flex_positions=["RB", "WR"])
    lg = type(lg).model_validate({**lg.model_dump(mode="json"), "roster": roster})
    run_engine(lg, prepared_2024, tmp_path / "run")
    recs = [json.loads(x) for x in open(tmp_path / "run" / "decisions.jsonl")]
    boards = [r["view"].get("available") or r["view"].get("free_agents") for r in recs
              if r["decision"] in ("draft_shortlist", "waiver_claims", "free_agent_adds")]
    assert boards and all(set(b) == {"QB", "RB", "WR"} for b in boards)


def test_faab_per_point_ignores_rolling_runs_of_the_same_agent(faab_run, prepared_2024, tmp_path):
    from ffbench_lib.analysis import metrics

    _, faab = faab_run
    run_engine(waiver_league("rolling", weeks=4), prepared_2024, tmp_path / "rolling")
    alone = metrics.waiver_summary_by_agent(metrics.load_runs(faab)).set_index("agent")
    both = metrics.waiver_summary_by_agent(metrics.load_runs([faab, tmp_path / "rolling"])).set_index("agent")
    assert both.loc["bot:vorp", "claims"] > alone.loc["bot:vorp", "claims"]  # the rolling run is counted...
    for agent in ("bot:vorp", "bot:recent_form"):  # ...but not in dollars per point
        assert both.loc[agent, "faab_per_point"] == pytest.approx(alone.loc[agent, "faab_per_point"])
