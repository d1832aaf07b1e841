"""One generic random-legal-play test (as OpenSpiel runs a random simulation on every game), over league presets.

Every team is the ``random`` bot, which chooses uniformly among the legal actions the rules enumerate, so a
whole season must run without one repaired answer; every decision kind the preset can reach must be asked;
rosters must stay full, within caps and disjoint; and each logged answer, judged again by its decision type
against the view logged with it, must give what the engine applied."""
from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict

import pandas as pd
import pytest

from ffbench_lib.agents.bots import RandomBot
from ffbench_lib.config.load import parse_config
from ffbench_lib.game.decisions import KINDS, REGISTRY
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.runs.rundir import RunDir

from engine_helpers import demo_league, run_engine

WAIVER_KINDS = {"waiver_claims", "free_agent_adds"}
#: notes the engine adds itself (not an agent's mistake): a shortlisted player taken while the team was on deck,
#: a proposal asked again after an earlier trade changed the rosters
ON_DECK, SUPERSEDED = "taken while on deck: ", "rosters changed by an earlier trade this week; asked again"

#: preset name -> changes to the demo league (short seasons: 5 weeks, trade windows in weeks 2 and 4)
PRESETS = {
    "demo": {},
    "no_flex": {"roster": {"FLEX": 0}},
    "superflex": {"roster": {"flex_positions": ["QB", "RB", "WR", "TE"], "caps": {"QB": 4, "RB": 6, "WR": 6,
                                                                                   "TE": 3}}},
    "waivers_faab": {"waivers": {"enabled": True, "mode": "faab", "budget": 100, "max_claims": 3}},
    "waivers_rolling": {"waivers": {"enabled": True, "mode": "rolling", "max_claims": 2}},
    "ir_faab": {"roster": {"IR": 2}, "waivers": {"enabled": True, "mode": "faab", "budget": 100, "max_claims": 3}},
    "big_trades": {"trades": {"max_players_per_side": 3}},
    "no_on_deck": {"draft": {"on_deck": False}},
    "draft_queue": {"draft": {"mode": "queue", "queue_size": 1}},  # one-player queues: some run dry (a re-ask)
    # the Premier League under FPL rules (real 2024-25 data): formations, an ordered bench, automatic substitutions
    "fpl": {"sport": "fpl", "waivers": {"enabled": True, "mode": "rolling", "max_claims": 2},
            "playoffs": {"enabled": True, "teams": 2, "round_weeks": [1]}},  # gameweek 5: the final
    "fpl_queue_faab": {"sport": "fpl", "draft": {"mode": "queue", "queue_size": 1},
                       "waivers": {"enabled": True, "mode": "faab", "budget": 100, "max_claims": 3}},
}
DRAFT_KINDS = {"shortlist": {"draft_shortlist", "draft_pick"}, "queue": {"draft_queue"}}


def random_league(preset: str, seed: int):
    """The demo league, every team a random bot, changed by ``PRESETS[preset]`` and validated like a config file
    (a preset of another sport: the demo's teams, seasons and sections in that sport's defaults)."""
    cfg = demo_league().model_dump(mode="json")
    cfg.update(seed=seed, weeks=5, trades={**cfg["trades"], "weeks": [2, 4]})
    changes = dict(PRESETS[preset])
    if "sport" in changes:
        cfg = {k: v for k, v in cfg.items() if k not in ("season", "roster", "scoring", "data")}
        cfg["sport"] = changes.pop("sport")
    for team in cfg["teams"]:
        team["agent"] = {"kind": "bot", "strategy": "random"}
    for section, change in changes.items():
        cfg[section] = {**cfg.get(section, {}), **change}
    return parse_config(cfg, f"preset {preset}")


_RUNS: dict[str, tuple] = {}


@pytest.fixture
def played(request, tmp_path_factory):
    """(league, RunDir) of a random-play season of the preset ``request.param`` (played once per session)."""
    preset = request.param
    if preset not in _RUNS:
        league = random_league(preset, seed=list(PRESETS).index(preset) + 1)
        prepared = request.getfixturevalue("prepared_fpl" if league.sport == "fpl" else "prepared_2024")
        out = tmp_path_factory.mktemp(f"random_{preset}") / "run"
        run_engine(league, prepared, out)
        _RUNS[preset] = (league, RunDir(out))
    return _RUNS[preset]


def normal(x):
    """A value as decisions.jsonl holds it (tuples as lists)."""
    return json.loads(json.dumps(x))


def rejudge(d: dict):
    """(answer, view) to judge a logged decision again with. A draft shortlist first loses the players the
    engine noted as taken while the team was on deck (the engine judged it against the board as it was when
    the team went on the clock)."""
    answer, view = d["raw_answer"], d["view"]
    if d["decision"] == "draft_shortlist" and d["reason"] and d["reason"].startswith(ON_DECK):
        taken = set(d["reason"].removeprefix(ON_DECK).split(", "))
        answer = {**answer, "shortlist": [p for p in answer["shortlist"] if p not in taken]}
        view = {**view, "available": {pos: [c for c in cards if c["id"] not in taken]
                                      for pos, cards in view["available"].items()}}
    return answer, view


@pytest.mark.parametrize("played", list(PRESETS), indirect=True)
def test_random_play_is_legal_in_every_preset(played):
    league, run = played
    roster = league.roster
    teams = [t.name for t in league.teams]
    decisions = run.decisions()
    assert all(d["agent"] == "bot:random" for d in decisions)

    # every kind the preset can reach is asked (waiver kinds only with waivers on, IR moves with IR slots),
    # nothing else
    expected = set(KINDS) - (set() if league.waivers.enabled else WAIVER_KINDS) - (set() if roster.IR else {"ir_moves"})
    expected -= {k for mode, kinds in DRAFT_KINDS.items() if mode != league.draft.mode for k in kinds}
    if league.waivers.enabled and not league.waivers.free_agents:
        expected.discard("free_agent_adds")
    counts = Counter(d["decision"] for d in decisions)
    assert set(counts) == expected, counts
    picks = [d for d in decisions if d["decision"] in ("draft_pick", "draft_queue") and not d.get("queue_dry")]
    assert len(picks) == len(teams) * roster.size
    assert counts["set_lineup"] == len(teams) * league.weeks
    if league.waivers.enabled:  # weeks 2..5: every team every week
        assert counts["waiver_claims"] == counts["free_agent_adds"] == len(teams) * (league.weeks - 1)

    # random chooses only legal actions: nothing is ever repaired, no problem noted but the engine's own notes
    assert [(d["team"], d["decision"], d["reason"]) for d in decisions if d["decided_by"] != "agent"] == []
    notes = [d["reason"] for d in decisions if d["reason"] and not d.get("queue_dry")]
    assert all(d["reason"].startswith("queue ran dry: ") for d in decisions if d.get("queue_dry"))  # the engine's
    assert all(n.startswith(ON_DECK) or n == SUPERSEDED for n in notes), Counter(notes).most_common(3)
    if not league.draft.on_deck:
        assert not any(d.get("on_deck") for d in decisions)

    # each answer judged again against its logged view gives what was applied
    for d in decisions:
        if d["applied"] == "superseded":  # a proposal asked again with the new rosters; not judged
            assert d["decision"] == "propose_trade" and d["reason"] == SUPERSEDED
            continue
        if d.get("on_deck") and d["applied"] == []:  # every shortlisted player was taken: asked again
            assert set(d["raw_answer"]["shortlist"]) == set(d["reason"].removeprefix(ON_DECK).split(", "))
            continue
        answer, view = rejudge(d)
        out = REGISTRY[d["decision"]].resolve(answer, view)
        where = (d["decision"], d["team"], d["week"], d["pick"], d["step"])
        assert (out.decided_by, out.problems) == ("agent", []), where
        if d["decision"] == "draft_queue":  # the queue judged again; the pick is its entry at the position used
            assert normal(out.applied) == d["queue"], where
            assert d["applied"] is None if d.get("queue_dry") else d["queue"][d["queue_position"] - 1] == d["applied"]
            continue
        assert normal(out.applied) == d["applied"], where
        assert REGISTRY[d["decision"]].validate(answer, view) == [], where

    # random really plays and the preset really changes the game: it trades (offers up to the size allowed),
    # fills FLEX from every flex position (a QB too in superflex), and is noted on deck only when on deck
    steps = run.table("trade_steps")
    assert (steps["action"] == "propose").sum() >= 2 and len(run.table("trades")) >= 1
    assert steps["proposer_gives"].map(len).max() == league.trades.max_players_per_side
    lineups = run.table("lineups")
    flex_played = set(lineups.loc[lineups["slot"] == "FLEX", "position"])
    assert flex_played <= set(roster.flex_positions)
    assert (flex_played == set()) if roster.FLEX == 0 else ("QB" in roster.flex_positions) == ("QB" in flex_played)
    assert (league.draft.on_deck and league.draft.mode == "shortlist") == any(n.startswith(ON_DECK) for n in notes)
    if league.draft.mode == "queue":  # short random queues run dry now and then: asked again at the team's turn
        assert any(d.get("queue_dry") for d in decisions)

    # rosters as every week kicked off: full (active players: IR frees spots), within caps, able to field a
    # lineup, no player on two teams
    rosters = run.table("rosters")
    assert sorted(set(zip(rosters["week"], rosters["team"]))) == sorted(
        (w, t) for w in range(1, league.weeks + 1) for t in teams)
    for (week, team), g in rosters.groupby(["week", "team"]):
        assert len(g) == roster.size if not roster.IR else len(g) <= roster.size, (week, team)
        assert within_caps(list(g["position"]), roster) is None, (week, team)
        assert can_field_lineup(list(g["position"]), roster), (week, team)
    for week, g in rosters.groupby("week"):
        assert not g["player_id"].duplicated().any(), week
    if league.waivers.enabled:
        check_transactions(league, run, rosters)


def check_transactions(league, run, rosters):
    """Waiver and free-agent moves: a player added was on no roster before the week, the player dropped was the
    team's (active, or back from IR that week), nobody dropped is added again the same week, FAAB bids stay
    within the budget; a claim names no drop only in a league with IR slots."""
    moves = run.table("transactions")
    back = run.table("ir_moves")
    back = back[back["move"] == "from_ir"]
    assert league.roster.IR or moves["drop"].notna().all()
    claims = run.table("waiver_claims")
    assert (claims["decided_by"] == "agent").all()
    assert set(claims["result"]) <= {"won", "lost", "skipped"}
    assert (claims["result"] == "won").sum() == (moves["kind"] != "ir_return").sum() > 0
    held = {(w, t): set(g["player_id"]) for (w, t), g in rosters.groupby(["week", "team"])}
    for week, g in moves.groupby("week"):
        before = set().union(*(held[(week - 1, t)] for t in {t for _, t in held}))
        dropped, added = set(), defaultdict(set)
        for team, add, drop in zip(g["team"], g["add"], g["drop"]):
            assert add not in before and add not in dropped, (week, add)
            returned = set(back.loc[(back["week"] == week) & (back["team"] == team), "player_id"])
            assert pd.isna(drop) or drop in held[(week - 1, team)] | added[team] | returned, (week, team, drop)
            dropped.add(drop)
            added[team].add(add)
    if league.waivers.mode == "faab":
        spent = moves[moves["kind"] == "waiver"].groupby("team")["bid"].sum()
        assert (spent <= league.waivers.budget).all() and (spent >= 0).all()
        assert moves.loc[moves["kind"] != "waiver", "bid"].isna().all()
    else:
        assert moves["bid"].isna().all()


@pytest.mark.parametrize("played", ["ir_faab", "draft_queue"], indirect=True)
def test_random_answers_vary_across_seeds(played):
    """Random is a policy over the legal set, not a constant: on the same logged view, bots of different
    seeds give different (legal) answers, for every kind (the two presets ask every kind between them)."""
    league, run = played
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for d in run.decisions():
        if d["applied"] != "superseded" and not d.get("on_deck") and len(by_kind[d["decision"]]) < 3:
            by_kind[d["decision"]].append(d)
    other = "shortlist" if league.draft.mode == "queue" else "queue"
    assert set(by_kind) == ({"draft_queue", "set_lineup", "propose_trade", "respond_to_offer", "reply_to_counter",
                             "final_decision"} if league.draft.mode == "queue" else set(KINDS) - DRAFT_KINDS[other])

    async def answers(d):
        return [await RandomBot(d["team"], seed).decide(d["decision"], d["view"]) for seed in range(12)]

    for kind, recs in by_kind.items():
        distinct = set()
        for d in recs:
            for a in asyncio.run(answers(d)):
                out = REGISTRY[kind].resolve(a, d["view"])
                assert (out.decided_by, out.problems) == ("agent", []), (kind, a)
                distinct.add(json.dumps({k: v for k, v in a.items() if k != "rationale"}, sort_keys=True))
        assert len(distinct) > 1, kind
