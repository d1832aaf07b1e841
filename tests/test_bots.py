"""Bots are legal by construction: they choose among the legal actions the rules enumerate, so the engine never
has to repair a bot answer, and ``random`` is exactly uniform over those actions."""
import asyncio
import json
from collections import Counter
from itertools import combinations

import pytest
from scipy.stats import chisquare

from ffbench_lib.agents import bots
from ffbench_lib.agents.bots import RandomBot, VORPBot, roster_rules, trade_market
from ffbench_lib.config.league import Roster
from ffbench_lib.game.rules.lineup import best_lineup, legal_lineups, slot_counts, validate_and_repair
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.game.rules.trades import Offer, OfferSpace, offer_problem
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.game.state import LeagueState

from engine_helpers import demo_league, run_engine

POS = {"q": "QB", "r": "RB", "w": "WR", "t": "TE"}
# small league: FLEX takes RB/WR, no TE slot, tight caps - so many offers break a cap or the lineup
SMALL = Roster(QB=1, RB=1, WR=1, TE=0, FLEX=1, BENCH=1, flex_positions=("RB", "WR"),
               caps={"QB": 2, "RB": 2, "WR": 3, "TE": 1})
ROSTERS = {"A": ["q1", "r1", "w1", "w2", "t1"], "B": ["q2", "q3", "r2", "r3", "w3"], "C": ["q4", "r4", "r5", "w4", "w5"]}


def card(pid, proj=0.0):
    return {"id": pid, "pos": POS[pid[0]], "proj_week": proj, "zero_flags": [], "last3_avg": None}


def rules(roster):
    return {"roster_slots": slot_counts(roster), "bench": roster.BENCH, "flex_positions": list(roster.flex_positions),
            "caps": dict(roster.caps)}


def trade_view(me, rosters, roster=SMALL, maxn=2, locked=(), offer=None, decision="trade_propose", proj=None):
    """A trade view in the engine's shape (what ``Firewall.trade_view`` builds), for small synthetic leagues."""
    proj = proj or {}
    others = [t for t in rosters if t != me] if offer is None else [offer["from_team"]]
    view = {"decision": decision, "week": 4, "team": me, "rules": rules(roster), "max_players_per_side": maxn,
            "locked_players": sorted(locked), "my_roster": [card(p, proj.get(p, 0.0)) for p in rosters[me]],
            "other_teams": [{"team": t, "roster": [card(p, proj.get(p, 0.0)) for p in rosters[t]]} for t in others]}
    if offer is not None:
        view["offer"] = {"from_team": offer["from_team"], "you_give": [card(p) for p in offer["you_give"]],
                         "you_get": [card(p) for p in offer["you_get"]]}
    return view


def draw(method, view, n):
    """``n`` answers of fresh random bots (seeds 0..n-1) as hashable keys."""
    async def go():
        return [await getattr(RandomBot(view["team"], s), method)(view) for s in range(n)]
    return [json.dumps({k: v for k, v in a.items() if k != "rationale"}, sort_keys=True) for a in asyncio.run(go())]


def proposal(o):
    return json.dumps({"action": "propose", "get": list(o.b_gives), "give": list(o.a_gives), "to_team": o.b},
                      sort_keys=True)


def assert_uniform(samples, support):
    counts = Counter(samples)
    assert set(counts) == set(support), "drawn actions differ from the legal set"
    p = chisquare([counts[a] for a in support]).pvalue
    assert p > 1e-4, p  # fixed seeds: deterministic, and a fair draw sits far above this


# ----------------------------------------------------------------------------------------- the rules' sets
def brute_force_legal(market, me, partners, size=None):
    """Every pair of equal-size player sets (locked or not, any size up to max+1) that offer_problem accepts."""
    state = LeagueState(teams=list(market.rosters), agent_ids={}, draft_order=[], schedule={},
                        rosters={t: list(v) for t, v in market.rosters.items()})
    out = set()
    for b in partners:
        for k in range(1, market.max_per_side + 2):
            for give in combinations(market.rosters[me], k):
                for get in combinations(market.rosters[b], k):
                    o = Offer(me, b, tuple(sorted(give)), tuple(sorted(get)))
                    if offer_problem(state, o, market.positions, market.roster, market.max_per_side,
                                     set(market.locked), size) is None:
                        out.add(o)
    return out


@pytest.mark.parametrize("size", [None, 1, 2])
def test_offer_space_is_exactly_the_legal_set(size):
    market = trade_market(trade_view("A", ROSTERS, locked={"r3", "w1"}))
    space = OfferSpace(market, "A", ["B", "C"], size)
    listed = list(space)
    assert [space[i] for i in range(len(space))] == listed  # index order is iteration order (unranking)
    assert len(set(listed)) == len(listed)
    legal = set(space.legal())
    assert legal == brute_force_legal(market, "A", ["B", "C"], size)
    assert 0 < len(legal) < len(listed)  # the fixture has both legal and illegal candidates


def test_legal_lineups_are_exactly_the_valid_ones():
    roster = Roster()
    positions = {p: POS[p[0]] for p in ["q1", "q2", "r1", "r2", "r3", "w1", "w2", "w3", "t1", "t2"]}
    lineups = list(legal_lineups(positions, roster))
    assert len(lineups) == 2 * 3 * 3 * 2 * 3  # QB x RB pair x WR pair x TE x FLEX from the 3 left over
    keys = {json.dumps(lu, sort_keys=True) for lu in lineups}
    assert len(keys) == len(lineups)
    for lu in lineups:
        res = validate_and_repair(lu, positions, {}, roster)
        assert not res.problems and res.slots == lu


def test_roster_rules_keep_zero_slots():
    roster = Roster(QB=1, RB=2, WR=3, TE=1, FLEX=0, BENCH=4)
    assert roster_rules({"rules": rules(roster)}) == roster


# ------------------------------------------------------------------------------------- random is uniform
def test_random_proposal_is_uniform_over_legal_offers_and_pass():
    view = trade_view("A", ROSTERS, locked={"r3"})
    space = OfferSpace(trade_market(view), "A", ["B", "C"])
    support = [json.dumps({"action": "pass"})] + [proposal(o) for o in space.legal()]
    assert 10 < len(support) < len(space)
    assert_uniform(draw("propose_trade", view, 150 * len(support)), support)


@pytest.mark.parametrize("method, fixed, counter", [("respond_to_offer", ["accept", "reject"], "counter"),
                                                    ("reply_to_counter", ["accept", "withdraw"], "final_counter")])
def test_random_reply_is_uniform_over_accept_reject_and_legal_counters(method, fixed, counter):
    offer = {"from_team": "B", "you_give": ["w1"], "you_get": ["w3"]}
    view = trade_view("A", ROSTERS, offer=offer, decision=f"trade_{method}")
    legal = list(OfferSpace(trade_market(view), "A", ["B"], size=1).legal())
    support = [json.dumps({"action": a}) for a in fixed] + [
        json.dumps({"action": counter, "give": list(o.a_gives), "get": list(o.b_gives)}, sort_keys=True)
        for o in legal]
    assert len(legal) > 2
    assert_uniform(draw(method, view, 200 * len(support)), support)


def test_uniform_when_the_legal_set_is_listed_and_pass_only_without_legal_offers(monkeypatch):
    # after MAX_DRAWS misses the bot lists the legal set: still uniform (forced here from the first draw)
    monkeypatch.setattr(bots, "MAX_DRAWS", 0)
    view = trade_view("A", ROSTERS, maxn=1)
    legal = list(OfferSpace(trade_market(view), "A", ["B", "C"]).legal())
    support = [json.dumps({"action": "pass"})] + [proposal(o) for o in legal]
    assert_uniform(draw("propose_trade", view, 100 * len(support)), support)
    # every player of the other teams locked: no legal offer exists, so the bot passes
    monkeypatch.setattr(bots, "MAX_DRAWS", 2000)
    view = trade_view("A", ROSTERS, locked=set(ROSTERS["B"] + ROSTERS["C"]))
    assert set(draw("propose_trade", view, 20)) == {json.dumps({"action": "pass"})}


def test_random_lineup_is_uniform_over_legal_lineups():
    roster = Roster()
    ids = ["q1", "q2", "r1", "r2", "r3", "w1", "w2", "w3", "t1", "t2"]
    view = {"decision": "lineup", "week": 3, "team": "A", "rules": rules(roster),
            "players": [card(p) | {"zero_flags": ["bye"] if p == "w2" else []} for p in ids]}
    support = [json.dumps({"lineup": lu}, sort_keys=True) for lu in legal_lineups({p: POS[p[0]] for p in ids}, roster)]
    assert_uniform(draw("set_lineup", view, 100 * len(support)), support)


# ---------------------------------------------------------------------------------------------- vorp
def test_vorp_proposes_the_best_legal_trade_not_one_over_a_cap():
    roster = Roster(QB=1, RB=1, WR=1, TE=0, FLEX=0, BENCH=2, caps={"QB": 2, "RB": 3, "WR": 3, "TE": 1})
    rosters = {"A": ["q1", "q2", "r1", "w1", "w2"], "B": ["q3", "q4", "r2", "r3", "w3"]}
    proj = {"q1": 10, "q2": 9, "r1": 5, "w1": 5, "w2": 1, "q3": 20, "q4": 20, "r2": 12, "r3": 12, "w3": 8}
    view = trade_view("A", rosters, roster=roster, maxn=1, proj=proj)
    market = trade_market(view)
    # the biggest gain (w2 for a 20-point QB) would leave A with 3 QB over the cap of 2
    assert "A would hold 3 QB exceeds the cap of 2" in market.problem(Offer("A", "B", ("w2",), ("q3",)))
    answer = asyncio.run(VORPBot("A", 0).propose_trade(view))
    assert (answer["action"], answer["to_team"]) == ("propose", "B")
    offer = Offer("A", "B", tuple(answer["give"]), tuple(answer["get"]))
    assert market.problem(offer) is None and offer.a_gives == ("w2",) and offer.b_gives in {("r2",), ("r3",)}


# --------------------------------------------------------------------------------- whole seasons, real data
@pytest.mark.parametrize("seed, flex", [(0, 1), (1, 1), (2, 0)])
def test_every_bot_decision_is_legal_in_real_seasons(prepared_2024, tmp_path, seed, flex):
    """OpenSpiel-style random play: every bot strategy, several seeds, trades on four weeks. No bot answer is
    ever repaired or faulted, random really trades, and every roster and oracle lineup is legal."""
    base = demo_league()
    league = demo_league(seed=seed, weeks=8, trades=base.trades.model_copy(update={"weeks": [2, 4, 6, 8]}),
                         roster=base.roster.model_copy(update={"FLEX": flex}))
    assert {t.agent.strategy for t in league.teams} == set(bots.BOTS)
    run_engine(league, prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    decisions = run.decisions()
    assert decisions and all(d["agent"].startswith("bot:") for d in decisions)
    repaired = [(d["team"], d["decision"], d["reason"]) for d in decisions if d["decided_by"] != "agent"]
    assert repaired == []  # bot fallback rate 0
    # nor any problem noted (only the engine's own notes: on-deck picks taken, proposals asked again)
    notes = ("taken while on deck", "rosters changed by an earlier trade")
    assert [d["reason"] for d in decisions if d["reason"] and not d["reason"].startswith(notes)] == []
    for table in ("draft_picks", "lineups", "trade_steps"):
        assert (run.table(table)["decided_by"] == "agent").all(), table
    steps = run.table("trade_steps")
    random_moves = steps[steps["agent"] == "bot:random"]["action"]
    assert (random_moves == "propose").sum() >= 4  # two random teams, four windows: it trades, not just passes
    # the engine still judges: every roster every week is within caps and can field a lineup
    roster = league.roster
    lineups, bench = run.table("lineups"), run.table("bench")
    started = lineups.groupby(["week", "team"])["points"].sum()
    points = {(w, t, p): x for tb in (lineups, bench)
              for w, t, p, x in zip(tb["week"], tb["team"], tb["player_id"], tb["points"])}
    for (week, team), g in run.table("rosters").groupby(["week", "team"]):
        positions = dict(zip(g["player_id"], g["position"]))
        assert within_caps(positions.values(), roster) is None and can_field_lineup(positions.values(), roster)
        # the hindsight oracle's lineup (as metrics.start_sit builds it) is legal and never below the started one
        actual = {p: points[(week, team, p)] for p in positions}
        oracle = best_lineup(positions, actual, roster)
        assert not validate_and_repair(oracle, positions, {}, roster).problems
        assert sum(actual[p] for ids in oracle.values() for p in ids) >= started[(week, team)] - 1e-9
