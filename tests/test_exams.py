"""Exams (``ffbench exam build`` / ``ffbench exam run``): states drawn from bot seasons, frozen and hashed, each view
the season's own; every candidate answers every state through the season's agents (LLMs through litellm, the
ledger and the replay cache); start/sit scored exactly (a brute force agrees on small rosters) and equal to the
season metric's regret of the same team-week; bad input refused with one line (exit 2)."""
from __future__ import annotations

import asyncio
import itertools
import json
import random
import re

import pandas as pd
import pytest
import yaml

from engine_helpers import REPO
from ffbench_lib.agents.bots import make_bot
from ffbench_lib.agents.prompts import messages
from ffbench_lib.analysis.metrics import load_runs, start_sit
from ffbench_lib.cli import main as cli
from ffbench_lib.config.league import Roster
from ffbench_lib.config.load import load_config
from ffbench_lib.game.skills import SKILLS, scarcity, stratified
from ffbench_lib.runs.exam import COLUMNS, RESULTS, STATES, SUITE, build_suite, load_suite, run_exam
from ffbench_lib.sport.lineup import hindsight_points

START_SIT = SKILLS["start_sit"]


# ------------------------------------------------------------------------------------------------ scoring
def brute_force(positions: dict[str, str], points: dict[str, float], roster: Roster) -> float:
    """The best points over every legal assignment of players to the starting slots, by enumeration: each player
    at most once, a slot's positions only, a formation's most-per-position, and every slot filled that can be (a
    lineup may not leave a slot empty while an eligible player sits, even one who scored below zero)."""
    slots = [slot for slot, n in roster.slot_counts().items() for _ in range(n)]
    ok = roster.slot_positions()
    found: dict[int, float] = {}  # slots filled -> the best points with that many
    ids = list(positions) + [None] * len(slots)
    for pick in itertools.permutations(ids, len(slots)):
        if any(p is not None and positions[p] not in ok[s] for p, s in zip(pick, slots)):
            continue
        chosen = [p for p in pick if p is not None]
        if len(set(chosen)) < len(chosen):
            continue
        if roster.most and any(sum(positions[p] == pos for p in chosen) > m for pos, m in roster.most.items()):
            continue
        found[len(chosen)] = max(found.get(len(chosen), -1e9), sum(points[p] for p in chosen))
    return found[max(found)]


@pytest.mark.parametrize("case", range(40))
def test_the_start_sit_oracle_is_the_brute_force_best_on_small_rosters(case):
    rng = random.Random(case)
    if case % 3 == 2:  # a formation (FPL): each position's least in its slots, at most ``most`` in all
        roster = Roster.model_validate({"sport": "fpl", "GK": 1, "DEF": 1, "MID": 1, "FWD": 1, "FLEX": 2, "BENCH": 3,
                                        "most": {"GK": 1, "DEF": 2, "MID": 2, "FWD": 2}})
        kinds = ["GK", "DEF", "MID", "FWD"]
    else:  # NFL slots, with and without FLEX
        roster = Roster.model_validate({"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1 - case % 3,
                                        "BENCH": 3, "caps": {"TE": 0, "K": 0, "DST": 0}})
        kinds = ["QB", "RB", "WR"]
    pool = [f"p{i}" for i in range(rng.randint(3, 7))]
    positions = {p: rng.choice(kinds) for p in pool}
    points = {p: round(rng.uniform(-2, 30), 1) for p in pool}
    got = hindsight_points(positions, points, roster.slot_counts(), roster.slot_positions(), roster.most)
    assert got == pytest.approx(brute_force(positions, points, roster))


def test_every_legal_lineup_scores_its_starters_and_the_oracles_has_no_regret(synthetic_suite):
    """On states of a played season: a random legal lineup scores exactly its starters' points, never above the best
    possible; the hindsight-optimal lineup as an answer has regret 0; no answer is repaired, and says so."""
    from ffbench_lib.game.decisions import roster_from_rules
    from ffbench_lib.sport.lineup import best_lineup

    root, _ = synthetic_suite
    _, states = load_suite(root / "suite")
    for state in [s for s in states if s["skill"] == "start_sit"][:6]:
        points = state["truth"]["points"]
        for i in range(10):
            answer = asyncio.run(make_bot("random", f"r{i}", i).decide("set_lineup", state["view"]))
            s = START_SIT.score(state, answer)
            assert s.decided_by == "agent" and s.score == round(sum(points[p] for p in s.extra["started"]), 2)
            assert s.score <= s.best_possible and s.regret >= 0
        roster = roster_from_rules(state["view"]["rules"])
        oracle = best_lineup({p["id"]: p["pos"] for p in state["view"]["players"]}, points, roster.slot_counts(),
                             roster.slot_positions())
        s = START_SIT.score(state, {"lineup": oracle})
        assert s.decided_by == "agent" and s.regret == 0
        s = START_SIT.score(state, None)  # no answer: the rules repair it (the engine's policy), and say so
        assert s.decided_by == "fallback" and s.problems and s.score <= s.best_possible


@pytest.mark.parametrize("case", range(12))
def test_a_trade_scores_the_rest_of_season_value_of_the_roster_it_leaves(case):
    """Accept scores the roster after the trade, reject (and a counter: the roster is held) the roster as it is,
    each the sum over the remaining weeks of its brute-force best lineup; best possible: the better of the two."""
    rng = random.Random(100 + case)
    rules = {"roster_slots": {"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1}, "bench": 3,
             "flex_positions": ["RB", "WR", "TE"], "caps": {"TE": 0, "K": 0, "DST": 0}}
    roster = Roster.model_validate({"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1, "BENCH": 3,
                                    "caps": {"TE": 0, "K": 0, "DST": 0}})
    card = lambda i: {"id": f"p{i}", "pos": rng.choice(["QB", "RB", "WR"])}  # noqa: E731
    mine, theirs = [card(i) for i in range(5)], [card(i) for i in range(5, 7)]
    give = rng.sample(mine, len(theirs))
    weeks = {str(w): {c["id"]: round(rng.uniform(0, 25), 1) for c in mine + theirs} for w in (5, 6, 7)}
    view = {"decision": "trade_respond_to_offer", "week": 5, "team": "me", "rules": rules, "my_roster": mine,
            "offer": {"from_team": "them", "you_give": give, "you_get": theirs}}
    state = {"skill": "trade_acceptance", "kind": "respond_to_offer", "view": view, "truth": {"weeks": weeks}}
    pos = {c["id"]: c["pos"] for c in mine + theirs}

    def ros(ids):
        return round(sum(brute_force({p: pos[p] for p in ids}, pts, roster) for pts in weeks.values()), 2)

    keep = ros([c["id"] for c in mine])
    after = ros([c["id"] for c in mine if c not in give] + [c["id"] for c in theirs])
    skill = SKILLS["trade_acceptance"]
    yes, no = skill.score(state, {"action": "accept"}), skill.score(state, {"action": "reject"})
    assert (yes.score, no.score, yes.best_possible) == (pytest.approx(after), pytest.approx(keep),
                                                        pytest.approx(max(keep, after)))
    assert min(yes.regret, no.regret) == 0 and yes.decided_by == no.decided_by == "agent"
    bad = skill.score(state, {"action": "maybe"})  # repaired to the default (reject), and marked
    assert bad.decided_by == "fallback" and bad.score == no.score and bad.problems


def test_a_draft_pick_scores_the_picks_points_above_replacement_and_the_best_on_the_board(synthetic_suite,
                                                                                          prepared_2024):
    """Every legal board player named first scores his own value, the best of them is the best possible; an illegal
    first name is skipped (the next legal one is the pick) and an empty answer repaired, and said; the replacement
    level is the (teams x starting slots + 1)-th best season at the position, recomputed from the weekly data."""
    root, _ = synthetic_suite
    meta, states = load_suite(root / "suite", )
    skill = SKILLS["draft_pick"]
    drafts = [s for s in states if s["skill"] == "draft_pick"]
    assert drafts and {s["round"] for s in drafts} >= {1} and all(s["week"] is None for s in drafts)
    assert any(s["truth"]["taken_before_turn"] for s in drafts)  # on-deck boards: the previous pick still shown
    for state in drafts[:8]:
        par, legal = state["truth"]["par"], set(state["view"]["legal_positions"])
        taken = set(state["truth"]["taken_before_turn"])
        cards = [c for cs in state["view"]["available"].values() for c in cs if c["id"] not in taken]
        ok = [c["id"] for c in cards if c["pos"] in legal]
        if taken:  # shown on deck, drafted before the turn: dropped, and said; alone, the repair
            gone = skill.score(state, {"shortlist": [*taken][:1] + ok[:1]})
            assert gone.extra["pick"] == ok[0] and any("taken while on deck" in x for x in gone.problems)
            alone = skill.score(state, {"shortlist": [*taken][:1]})
            assert alone.decided_by == "fallback" and "drafted before the turn" in alone.problems[0]
        scores = {p: skill.score(state, {"shortlist": [p]}) for p in ok}
        assert all(sc.score == round(par[p], 2) and sc.decided_by == "agent" for p, sc in scores.items())
        assert max(sc.score for sc in scores.values()) == scores[ok[0]].best_possible
        assert min(sc.regret for sc in scores.values()) == 0
        bad = [c["id"] for c in cards if c["pos"] not in legal]
        if bad:
            sc = skill.score(state, {"shortlist": [bad[0], ok[-1]]})
            assert sc.extra["pick"] == ok[-1] and sc.problems
        assert skill.score(state, {"shortlist": []}).decided_by == "fallback"
    # the replacement level, independently: season points per player of the prepared weekly rows
    league = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    w = prepared_2024.weekly
    w = w[w["week"] <= league["weeks"]].sort_values("week").groupby(["player_id", "week"]).last().reset_index()
    season = w.groupby("player_id")["fantasy_points"].sum()
    pos = w.groupby("player_id")["position"].last()
    wr = season[pos == "WR"].sort_values(ascending=False)
    level = wr.iloc[len(league["teams"]) * league["roster"]["WR"]]
    some = next(s for s in drafts if any(c["pos"] == "WR" for c in s["view"]["available"].get("WR", [])))
    pid = some["view"]["available"]["WR"][0]["id"]
    assert some["truth"]["par"][pid] == pytest.approx(season[pid] - level, abs=0.01)


@pytest.mark.parametrize("case", range(8))
def test_a_waiver_claim_scores_the_rest_of_season_value_of_the_roster_its_top_claim_leaves(case):
    """Drawn from a window's view (every legal single move valued once by brute force here too): the top legal claim
    is the move, no claim keeps the roster, the best over all moves is the best possible; an illegal claim is
    skipped (the next is the move), marked."""
    rng = random.Random(200 + case)
    rules = {"roster_slots": {"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1}, "bench": 1,
             "flex_positions": ["RB", "WR", "TE"], "caps": {"TE": 0, "K": 0, "DST": 0}}
    roster = Roster.model_validate({"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1, "BENCH": 1,
                                    "caps": {"TE": 0, "K": 0, "DST": 0}})
    card = lambda i, pos: {"id": f"p{i}", "pos": pos}  # noqa: E731
    mine = [card(0, "QB"), card(1, "RB"), card(2, "WR"), card(3, rng.choice(["RB", "WR"])), card(4, "QB")]
    free = {"RB": [card(5, "RB")], "WR": [card(6, "WR"), card(7, "WR")], "QB": [card(8, "QB")]}
    view = {"decision": "waivers", "week": 6, "team": "me", "rules": rules, "mode": "rolling", "budget_left": None,
            "max_claims": 2, "my_roster": mine, "free_agents": free}
    pts = {w: {f"p{i}": round(rng.uniform(0, 25), 1) for i in range(9)} for w in (6, 7, 8)}

    class Truth:
        weeks = 8

        def points(self, w):
            return pts[w]

    skill = SKILLS["waiver_choice"]
    state = {"skill": "waiver_choice", "kind": "waiver_claims",
             **skill.draw([{"decision": "waiver_claims", "week": 6, "view": view}], Truth(), 1, rng)[0]}
    pos = {c["id"]: c["pos"] for c in mine + [c for cs in free.values() for c in cs]}

    def ros(ids):
        return round(sum(brute_force({p: pos[p] for p in ids}, pts[w], roster) for w in (6, 7, 8)), 2)

    keep = ros([c["id"] for c in mine])
    moves = {(a, d): ros([c["id"] for c in mine if c["id"] != d] + [a]) for a in ("p5", "p6", "p7", "p8")
             for d in ("p0", "p1", "p2", "p3", "p4")}
    legal = {m: v for m, v in moves.items() if skill.score(state, {"claims": [{"add": m[0], "drop": m[1]}]}).decided_by == "agent"}
    assert legal and len(legal) < len(moves)  # dropping the only QB for a WR is no legal move
    for (a, d), v in legal.items():
        assert skill.score(state, {"claims": [{"add": a, "drop": d}]}).score == pytest.approx(v)
    nothing = skill.score(state, {"claims": []})
    assert nothing.score == pytest.approx(keep) and nothing.best_possible == pytest.approx(max([keep, *legal.values()]))
    (a, d), v = next(iter(legal.items()))
    skipped = skill.score(state, {"claims": [{"add": "p0", "drop": "p1"}, {"add": a, "drop": d}]})
    assert skipped.score == pytest.approx(v) and skipped.decided_by == "fallback" and skipped.problems


@pytest.mark.parametrize("case", range(10))
def test_an_ir_answer_scores_by_its_rule_against_a_brute_force_over_every_answer(case):
    """Every answer the rules accept (found here over every subset of active players and every back-or-stay with
    every drop) is valued by a week-by-week replay of the rule written again: a spot a move to IR frees takes the
    shown free agent worth most (a drop's stays open), an IR player comes back the first later week he plays, into an open spot, for the latest such
    free agent, or for the active player scoring least from then when he scores less; an illegal answer is repaired
    and marked; the best possible is the best legal answer."""
    rng = random.Random(300 + case)
    rules = {"roster_slots": {"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1}, "bench": 1,
             "flex_positions": ["RB", "WR", "TE"], "caps": {"TE": 0, "K": 0, "DST": 0}}
    roster = Roster.model_validate({"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1, "BENCH": 1,
                                    "caps": {"TE": 0, "K": 0, "DST": 0}})
    weeks = (6, 7, 8)
    out = {w: {f"p{i}" for i in range(10) if rng.random() < 0.3} for w in weeks}
    card = lambda i, pos: {"id": f"p{i}", "pos": pos, "injury": "Out" if f"p{i}" in out[6] else None}  # noqa: E731
    n_active = rng.choice([4, 5])  # 4: an open spot already
    mine = [card(0, "QB"), card(1, "RB"), card(2, "WR"), card(3, rng.choice(["RB", "WR"])), card(4, "QB")][:n_active]
    mine[1]["injury"] = "Out"  # an RB ruled Out: IR-eligible (the only RB: only with another back)
    on_ir = [card(9, rng.choice(["RB", "WR"]))]
    free = {"RB": [card(5, "RB")], "WR": [card(6, "WR"), card(7, "WR")], "QB": [card(8, "QB")]}
    view = {"decision": "ir", "week": 6, "team": "me", "rules": rules, "ir_slots": 2, "active_spots": 5,
            "my_roster": mine, "ir": on_ir}
    pts = {w: {f"p{i}": 0.0 if f"p{i}" in out[w] else round(rng.uniform(0, 25), 1) for i in range(10)}
           for w in weeks}

    class Truth:
        def points(self, w):
            return pts[w]

        def plays(self, w):
            return frozenset(f"p{i}" for i in range(10) if f"p{i}" not in out[w] and not (w == 6 and i == 1))

        weeks = 8

    skill = SKILLS["ir_choice"]
    records = [{"decision": "ir_moves", "week": 6, "view": view},
               {"decision": "waiver_claims", "week": 6, "view": {"free_agents": free},
                "protected_view": {"free_agents": {"QB": [card(8, "QB")]}}}]  # a protected team's cut list
    state = {"skill": "ir_choice", "kind": "ir_moves", **skill.draw(records, Truth(), 1, rng)[0]}
    pos = {c["id"]: c["pos"] for c in mine + on_ir + [c for cs in free.values() for c in cs]}

    def lineup(ids, w):
        return brute_force({p: pos[p] for p in ids}, pts[w], roster)

    def replay(answer, shown=("p5", "p6", "p7", "p8")):
        gone = set(answer["to_ir"]) | {b["drop"] for b in answer["from_ir"] if b["drop"]}
        back = [b["player"] for b in answer["from_ir"]]
        active = [c["id"] for c in mine if c["id"] not in gone] + back
        ir = [c["id"] for c in on_ir if c["id"] not in back] + answer["to_ir"]
        fills = []
        for _ in range(len(answer["to_ir"]) - len(back)):  # spots freed by moves to IR that no return takes
            options = [f for f in shown if f not in fills]
            fills.append(max(options, key=lambda f: (sum(lineup(active + fills + [f], w) for w in weeks), f)))
        total, returned = 0.0, []
        for w in weeks:
            for p in ir if w > 6 else []:
                if p in returned or p in out[w]:  # he plays the first later week he is not out
                    continue
                if len(active) + len(fills) + len(returned) < 5:
                    returned.append(p)
                elif fills:
                    fills.pop()
                    returned.append(p)
                else:  # for the active player who scores least from here, if he scores less
                    rest = {q: sum(pts[y][q] for y in weeks if y >= w) for q in active}
                    weakest = min(active, key=lambda q: (rest[q], q))
                    if rest[weakest] < sum(pts[y][p] for y in weeks if y >= w):
                        active = [q for q in active if q != weakest]
                        returned.append(p)
            total += lineup(active + fills + returned, w)
        return round(total, 2)

    ids = [c["id"] for c in mine]
    answers = [{"to_ir": list(t), "from_ir": [b for b in backs if b]}
               for k in range(len(ids) + 1) for t in itertools.combinations(ids, k)
               for backs in itertools.product([None, *({"player": "p9", "drop": d} for d in [None, *ids])])]
    legal = {}
    for a in answers:
        got = skill.score(state, a)
        if got.decided_by == "agent":
            legal[json.dumps(a)] = got.score
            assert got.score == pytest.approx(replay(a)), a
            assert skill.score(state, a, protected=True).score == pytest.approx(replay(a, ("p8",))), a
    assert 2 <= len(legal) < len(answers)
    best = max(legal.values())
    nothing = skill.score(state, {"to_ir": [], "from_ir": []})
    assert nothing.best_possible == pytest.approx(best) and nothing.regret == pytest.approx(best - nothing.score)
    bad = skill.score(state, {"to_ir": ["p9"], "from_ir": [{"player": "p1"}]})  # p9 is on IR, p1 is not
    assert bad.decided_by == "fallback" and bad.problems and bad.score == pytest.approx(nothing.score)


def test_week_bins_draw_early_middle_and_late_weeks():
    rng = random.Random(1)
    for _ in range(50):
        got = stratified(list(range(1, 18)), 3, rng)
        assert len(got) == 3 and got == sorted(got) and got[0] <= 6 and 6 <= got[1] <= 12 and got[2] >= 12
    assert stratified([4, 2], 3, rng) == [2, 4]


def test_a_team_seasons_few_states_cover_a_short_roster_and_a_full_one():
    """Position scarcity as a stratum: with short weeks anywhere in 17 (players on bye or Out cannot fill the
    lineup: one early week, two, the last, most of them), three draws always hold both strata, still one per week
    bin; with one stratum the draw is the bins' alone."""
    rng = random.Random(2)
    for short in ({5, 9}, {3}, {1, 2}, {17}, {7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}):
        for _ in range(50):
            got = stratified(list(range(1, 18)), 3, rng, lambda w: "short" if w in short else "full")
            assert got[0] <= 6 <= got[1] <= 12 <= got[2] and short & set(got) and set(got) - short, (short, got)
    assert stratified(list(range(1, 18)), 3, random.Random(5)) == stratified(list(range(1, 18)), 3, random.Random(5),
                                                                           lambda w: "full")  # one stratum: bins
    rules = {"roster_slots": {"QB": 1, "RB": 1, "WR": 1, "TE": 0, "K": 0, "DST": 0, "FLEX": 1}, "bench": 1,
             "flex_positions": ["RB", "WR", "TE"], "caps": {"TE": 0, "K": 0, "DST": 0}, "teams": 4}
    card = lambda pos, *flags: {"pos": pos, "zero_flags": list(flags)}  # noqa: E731
    week = {"decision": "lineup", "rules": rules, "players": [card("QB"), card("RB"), card("WR"), card("WR")]}
    assert scarcity(week) == "full"
    assert scarcity({**week, "players": [card("QB"), card("RB"), card("WR"), card("WR", "bye")]}) == "short"  # FLEX
    assert scarcity({**week, "players": [*week["players"], card("RB", "out"), card("RB")]}) == "full"
    assert scarcity({**week, "players": [card("QB"), card("RB", "out"), card("WR"), card("WR"), card("WR")]}) == \
        "short"  # no RB who plays
    board = {"decision": "draft", "rules": rules, "thin_positions": ["RB"], "drafted_by_position": {"RB": 1}}
    assert scarcity(board) == "open"
    assert scarcity({**board, "drafted_by_position": {"RB": 2}}) == "scarce"  # half the league's 4 RB starters
    assert scarcity({**board, "thin_positions": ["QB"], "drafted_by_position": {"RB": 4}}) == "open"  # not needed


# ------------------------------------------------------------------------------------------------ suites
def spec_file(tmp_path, **changes) -> str:
    spec = {"name": "t-exam", "base": str(REPO / "params" / "demo.yaml"), "seasons": [2024], "seeds": [1, 2],
            "skills": {"start_sit": {"per_team_season": 2}, "draft_pick": {"per_team_season": 2}}, **changes}
    f = tmp_path / "spec.yaml"
    f.write_text(yaml.safe_dump(spec))
    return str(f)


@pytest.fixture(scope="module")
def synthetic_suite(prepared_2024, tmp_path_factory):
    root = tmp_path_factory.mktemp("exam")
    spec = spec_file(root)
    build_suite(spec, root / "suite", prepared_for=lambda league: prepared_2024)
    return root, spec


def test_a_suite_is_frozen_its_views_are_the_seasons_and_it_builds_the_same_twice(synthetic_suite, prepared_2024,
                                                                                tmp_path):
    root, spec = synthetic_suite
    meta, states = load_suite(root / "suite")
    assert meta["states"] == len(states) == 80 and meta["by_skill"] == {"start_sit": 40, "draft_pick": 40}
    assert {s["source_agent"] for s in states} == {"bot:adp", "bot:vorp", "bot:recent_form", "bot:random"}
    recorded: dict[tuple, dict] = {}
    for seed in (1, 2):
        for r in map(json.loads, (root / "suite" / "sources" / "nfl-2024" / f"seed-{seed}" / "decisions.jsonl").open()):
            at = r["week"] if r["decision"] == "set_lineup" else r["view"].get("round")
            recorded.setdefault((f"nfl-2024-s{seed}-{r['team']}", r["decision"], at), r)  # a round's first ask
    holdable = list(load_config(REPO / "params" / "demo.yaml").roster.holdable)
    for s in states:
        rec = recorded[(s["team_season"], s["kind"], s["week"] if s["week"] is not None else s["round"])]
        assert s["view"] == rec["view"]  # the view the season logged (decisions.jsonl sorts its keys) ...
        assert "truth" not in json.dumps(s["view"])
        if s["skill"] == "start_sit":
            assert messages("set_lineup", s["view"]) == messages("set_lineup", rec["view"])  # ... and its prompt
            assert set(s["truth"]["points"]) == {p["id"] for p in s["view"]["players"]}
        else:  # ... in the season's own key order: the board by position as the league lists them, not sorted
            assert list(s["view"]["available"]) == holdable != sorted(holdable)
            assert messages("draft_shortlist", s["view"]) != messages("draft_shortlist", rec["view"])
    again = tmp_path / "again"
    build_suite(spec, again, prepared_for=lambda league: prepared_2024)
    assert (again / STATES).read_bytes() == (root / "suite" / STATES).read_bytes()


def test_bots_answer_every_state_and_the_regret_is_the_season_metrics(synthetic_suite, tmp_path):
    root, _ = synthetic_suite
    df = run_exam(root / "suite", REPO / "params" / "exam_bots.yaml", tmp_path / "res")
    assert list(df.columns) == COLUMNS and len(df) == 4 * 80
    back = pd.read_parquet(tmp_path / "res" / RESULTS)
    lists = ["roster", "started"]
    assert back.drop(columns=lists).equals(df.drop(columns=lists))
    assert all(back[c].map(list).tolist() == df[c].tolist() for c in lists)
    p = df[df["skill"] == "start_sit"].pivot_table(index="state_id", columns="agent", values="regret")
    assert (p["adp"] == p["vorp"]).all()  # one lineup policy: identical answers on every state
    assert (df["decided_by"] == "agent").all() and (df["regret"] >= 0).all()
    assert df[df["skill"] == "draft_pick"].groupby("agent")["regret"].mean().idxmin() == "adp"
    # the exam's regret of a state is the season metric's for the same team-week (its own policy answering)
    meta, states = load_suite(root / "suite")
    checked, metric = 0, {}
    for s in states:
        own = s["source_agent"].split(":")[1]
        if own == "random" or s["skill"] != "start_sit":  # a random bot draws by its team name and seed
            continue
        if s["source"] not in metric:
            metric[s["source"]] = start_sit(load_runs(root / "suite" / meta["sources"][s["source"]]["run"]))
        ss = metric[s["source"]]
        row = ss[(ss["team"] == s["team_season"].removeprefix(s["source"] + "-")) & (ss["week"] == s["week"])].iloc[0]
        got = df[(df["state_id"] == s["state_id"]) & (df["agent"] == own)].iloc[0]
        assert (got["regret"], got["best_possible"]) == (row["left_on_table"], row["optimal_points"])
        checked += 1
    assert checked == 32  # 8 of the demo league's 10 teams play a deterministic bot, 2 states a season each


def test_llm_candidates_answer_through_the_ledger_and_a_rerun_replays_from_the_cache(synthetic_suite, tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    root, _ = synthetic_suite
    cands = tmp_path / "cands.yaml"
    with FakeOpenAIServer() as srv:
        cands.write_text(yaml.safe_dump({
            "candidates": [{"name": "fake", "agent": {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                                      "timeout_s": 30}}, {"name": "adp", "agent": {"kind": "bot", "strategy": "adp"}}],
            "llm": {"cache_dir": str(tmp_path / "cache")}}))
        live = run_exam(root / "suite", cands, tmp_path / "live")
    calls = [json.loads(x) for x in (tmp_path / "live" / "llm_calls.jsonl").open()]
    mine = live[live["agent"] == "fake"]
    assert {c["state_id"] for c in calls} == set(mine["state_id"]) and len(mine) == 80  # the ledger names each state
    assert not any(c["cache_hit"] for c in calls) and all(c["exam"] == "t-exam" for c in calls)
    assert (mine["decided_by"] == "agent").mean() > 0.9
    # the server is gone: a rerun replays every answer from the cache, byte for byte the same results
    cfg = yaml.safe_load(cands.read_text())
    cfg["llm"]["replay_only"] = True
    cands.write_text(yaml.safe_dump(cfg))
    replay = run_exam(root / "suite", cands, tmp_path / "replay")
    assert replay.equals(live)
    again = [json.loads(x) for x in (tmp_path / "replay" / "llm_calls.jsonl").open()]
    assert len(again) == len(calls) and all(c["cache_hit"] for c in again)


# ------------------------------------------------------------------------------------------------ refusals
def _cli_error(capsys, argv) -> str:
    capsys.readouterr()
    assert cli(argv) == 2
    cap = capsys.readouterr()
    assert cap.err.startswith("error") and "Traceback" not in cap.err, cap.err
    return cap.err


@pytest.mark.parametrize("changes, says", [
    ({"skills": {"draft_oracle": {}}}, "unknown skill(s) draft_oracle"),
    ({"seasons": [2019]}, "seasons[0]: 2019 is no NFL season ffbench has data for"),
    ({"seeds": [1, 1]}, "seeds: a seed is listed twice"),
    ({"base": "nowhere.yaml"}, "league file"),
    ({"skills": {"start_sit": {"per_team_season": 0}}}, "per_team_season"),
    ({"seasons": {"nfl": [2024]}}, "base: give one league file with a list of seasons"),
    ({"skills": {"start_sit": {"per_team_season": {"nfl": 3}}}}, "counts per sport need seasons per sport"),
    ({"base": {"nfl": str(REPO / "params" / "demo.yaml")}, "seasons": {"nfl": [2024]},
      "skills": {"start_sit": {"per_team_season": {"nfl": 3, "fpl": 30}}}},
     "skills.start_sit.per_team_season: counts for fpl, nfl; the spec's sports are nfl"),
    ({"skills": {"start_sit": {"per_team_season": {"nfl": 41}}}}, "per_team_season"),
])
def test_a_bad_spec_is_refused_naming_the_field(tmp_path, capsys, changes, says):
    err = _cli_error(capsys, ["exam", "build", spec_file(tmp_path, **changes), "--out", str(tmp_path / "s")])
    assert says in err and "spec.yaml" in err, err
    assert not (tmp_path / "s" / SUITE).exists()


def test_a_spec_whose_skills_draw_no_state_is_refused(prepared_2024, tmp_path, capsys):
    league = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    league["trades"] = {"weeks": []}
    (tmp_path / "notrades.yaml").write_text(yaml.safe_dump(league))
    spec = spec_file(tmp_path, base=str(tmp_path / "notrades.yaml"), skills={"trade_acceptance": {}})
    with pytest.raises(Exception, match="the skills drew no state"):
        build_suite(spec, tmp_path / "s", prepared_for=lambda league: prepared_2024)
    assert not (tmp_path / "s" / SUITE).exists()


def test_a_bad_base_league_is_named_not_the_spec(tmp_path, capsys):
    league = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    league["bogus_field"] = 1
    (tmp_path / "bad_league.yaml").write_text(yaml.safe_dump(league))
    err = _cli_error(capsys, ["exam", "build", spec_file(tmp_path, base=str(tmp_path / "bad_league.yaml")), "--out",
                              str(tmp_path / "s")])
    assert "bad_league.yaml" in err and "bogus_field" in err and "spec.yaml" not in err


def test_validate_on_an_exam_file_says_which_command_takes_it(capsys):
    for name, says in (("exam_suite.yaml", "this is an exam spec"), ("exam_bots.yaml", "this is an exam candidates")):
        err = _cli_error(capsys, ["validate", str(REPO / "params" / name)])
        assert says in err and "ffbench exam" in err


def test_a_source_league_with_an_llm_team_is_refused(tmp_path, capsys):
    league = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    league["teams"][0]["agent"] = {"kind": "llm", "model": "openai/gpt-4o"}
    (tmp_path / "llm.yaml").write_text(yaml.safe_dump(league))
    err = _cli_error(capsys, ["exam", "build", spec_file(tmp_path, base=str(tmp_path / "llm.yaml")), "--out",
                              str(tmp_path / "s")])
    assert "not bots" in err and "VORP-1" in err


def test_an_edited_suite_a_bad_candidates_file_and_a_used_folder_are_refused(synthetic_suite, tmp_path, capsys):
    import shutil

    root, spec = synthetic_suite
    copy = tmp_path / "suite"
    shutil.copytree(root / "suite", copy)
    with open(copy / STATES, "a") as fh:
        fh.write("{}\n")
    assert "SHA-256 is not the one suite.json records" in _cli_error(
        capsys, ["exam", "run", str(copy), str(REPO / "params" / "exam_bots.yaml"), "--out", str(tmp_path / "r")])
    bad = tmp_path / "c.yaml"
    bad.write_text("candidates:\n  - {name: me, agent: {kind: human, name: me}}\n")
    assert "candidates.0.agent" in _cli_error(capsys, ["exam", "run", str(root / "suite"), str(bad), "--out",
                                                       str(tmp_path / "r")]).replace("[0]", ".0")
    bad.write_text("candidates:\n  - {name: a, agent: {kind: bot, strategy: adp}}\n"
                   "  - {name: a, agent: {kind: bot, strategy: vorp}}\n")
    assert "a named twice" in _cli_error(capsys, ["exam", "run", str(root / "suite"), str(bad), "--out",
                                                  str(tmp_path / "r")])
    assert "holds an exam suite already" in _cli_error(capsys, ["exam", "build", spec, "--out", str(root / "suite")])
    half = tmp_path / "half"  # an interrupted build: its sources, no suite.json
    (half / "sources").mkdir(parents=True)
    assert "holds an interrupted build" in _cli_error(capsys, ["exam", "build", spec, "--out", str(half)])
    (tmp_path / "file").write_text("x")
    assert "is a file" in _cli_error(capsys, ["exam", "build", spec, "--out", str(tmp_path / "file")])
    assert "is a file" in _cli_error(capsys, ["exam", "run", str(root / "suite"), str(REPO / "params" / "exam_bots.yaml"),
                                              "--out", str(tmp_path / "file")])
    assert "not an exam suite" in _cli_error(capsys, ["exam", "run", str(tmp_path), str(bad), "--out",
                                                      str(tmp_path / "r")])


# ------------------------------------------------------------------------------------------------ real data
def test_the_demo_suite_spans_two_nfl_seasons_and_two_premier_league_ones(real_data_dir, fpl_data_dir, tmp_path):
    """params/exam_suite.yaml on the real data: NFL 2023 and 2024 and FPL 2023-24 and 2024-25 (one seed); adp and
    vorp answer every start/sit state alike, random is the worst in both sports; each deterministic bot's regret of
    its own team-week is the season metric's (an FPL bench's automatic substitutions included), and on its own
    trade offers and draft boards it answers as it did in the season (the states are the season's views)."""
    spec = yaml.safe_load((REPO / "params" / "exam_suite.yaml").read_text())
    spec["base"] = {k: str(REPO / "params" / v) for k, v in spec["base"].items()}
    spec["seeds"] = [1]  # the file's own seasons and skills, one seed (half the time)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    meta = build_suite(tmp_path / "spec.yaml", tmp_path / "suite")
    assert {s.rsplit("-s", 1)[0] for s in meta["sources"]} == {"nfl-2023", "nfl-2024", "fpl-2023-24", "fpl-2024-25"}
    df = run_exam(tmp_path / "suite", REPO / "params" / "exam_bots.yaml", tmp_path / "res")
    assert set(df["sport"]) == {"nfl", "fpl"} and set(df["season"]) == {"2023", "2024", "2023-24", "2024-25"}
    assert set(df["skill"]) == {"start_sit", "trade_acceptance", "draft_pick", "waiver_choice"}
    assert set(df.loc[df["skill"] == "waiver_choice", "sport"]) == {"fpl"}  # the demo NFL league has waivers off
    assert df.groupby("agent")["state_id"].nunique().eq(meta["states"]).all()  # one id per state
    draft = df[(df["skill"] == "draft_pick") & (df["sport"] == "nfl")].groupby("agent")["regret"].mean()
    assert draft.idxmin() == "adp" and draft["vorp"] < draft[["random", "recent_form"]].min()  # full seasons' order
    lineups = df[df["skill"] == "start_sit"]
    p = lineups.pivot_table(index="state_id", columns="agent", values="regret")
    assert (p["adp"] - p["vorp"]).abs().max() == 0
    by_sport = lineups.groupby(["sport", "agent"])["regret"].mean()
    assert by_sport["nfl"].idxmax() == "random" and by_sport["fpl"].idxmax() == "random"  # the worst lineups
    assert (lineups["sport"] == "fpl").sum() == 4 * 10 * 30 * 2  # 4 bots, FPL: 30 states per team-season
    _, states = load_suite(tmp_path / "suite")
    checked, replayed = 0, {}
    for source, info in meta["sources"].items():
        run = tmp_path / "suite" / info["run"]
        ss = start_sit(load_runs(run))
        logged = {(r["team"], r["week"], json.dumps(r["view"], sort_keys=True)): r["applied"] for r in
                  map(json.loads, (run / "decisions.jsonl").open())
                  if r["decision"] in ("respond_to_offer", "draft_shortlist", "waiver_claims")}
        for s in (s for s in states if s["source"] == source and not s["source_agent"].endswith("random")):
            team = s["team_season"].removeprefix(source + "-")
            got = df[(df["state_id"] == s["state_id"]) & (df["agent"] == s["source_agent"].split(":")[1])].iloc[0]
            if s["skill"] == "start_sit":
                row = ss[(ss["team"] == team) & (ss["week"] == s["week"])].iloc[0]
                assert (got["regret"], got["best_possible"]) == (row["left_on_table"], row["optimal_points"])
                checked += 1
            else:
                assert json.loads(got["applied"]) == logged[(team, s["week"], json.dumps(s["view"], sort_keys=True))]
                replayed[s["skill"]] = replayed.get(s["skill"], 0) + 1
    # the plan: per sport; each sport's two real seasons give full-season seeds beside the states
    from ffbench_lib.analysis.exams import power_plan
    plan = power_plan(tmp_path / "res").set_index(["skill", "sport", "better", "worse"])
    same = plan.loc[[i for i in plan.index if i[:2] == ("start_sit", "nfl") and set(i[2:]) == {"adp", "vorp"}][0]]
    assert same["identical"] == 1.0 and same["season_seeds_needed"] >= 2  # seasons see only the rosters
    fpl = plan.xs(("start_sit", "fpl"), level=("skill", "sport"))
    assert fpl["season_seeds_needed"].notna().all() and fpl["states_needed"].notna().sum() == 2  # adp = vorp
    # 8 deterministic teams of 10 in each of the 4 seasons, 3 states each (FPL start/sit 30); every offer they met
    assert checked == 8 * 2 * 3 + 8 * 2 * 30 and replayed["draft_pick"] == 96 and replayed["trade_acceptance"] > 10
    assert replayed["waiver_choice"] == 48  # FPL's 8 deterministic teams, 3 windows each


def test_the_ir_suite_values_every_legal_ir_answer_and_bots_answer_as_in_their_season(real_data_dir, tmp_path):
    """params/exam_ir.yaml (the standard league: an IR slot, FAAB waivers) on real NFL 2024, one seed: IR states
    come from weeks with a waiver view; every deterministic bot answers its own team's IR state as it did in the
    season; the bots share one IR policy (identical answers), random regrets more; no answer beats the best."""
    spec = yaml.safe_load((REPO / "params" / "exam_ir.yaml").read_text())
    spec.update(base=str(REPO / "params" / spec["base"]), seasons=[2024], seeds=[1])
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    meta = build_suite(tmp_path / "spec.yaml", tmp_path / "suite")
    df = run_exam(tmp_path / "suite", REPO / "params" / "exam_bots.yaml", tmp_path / "res")
    ir = df[df["skill"] == "ir_choice"]
    assert meta["by_skill"]["ir_choice"] >= 20 and ir["week"].min() >= 2 and (ir["regret"] >= 0).all()
    p = ir.pivot_table(index="state_id", columns="agent", values="regret")
    assert (p["adp"] == p["vorp"]).all() and (p["adp"] == p["recent_form"]).all()  # one shared IR policy
    assert p["random"].mean() > p["adp"].mean()
    run = tmp_path / "suite" / meta["sources"]["nfl-2024-s1"]["run"]
    logged = {(r["team"], r["week"]): r["applied"] for r in map(json.loads, (run / "decisions.jsonl").open())
              if r["decision"] == "ir_moves"}
    _, states = load_suite(tmp_path / "suite")
    own = 0
    for s in (s for s in states if s["skill"] == "ir_choice" and not s["source_agent"].endswith("random")):
        got = ir[(ir["state_id"] == s["state_id"]) & (ir["agent"] == s["source_agent"].split(":")[1])].iloc[0]
        assert json.loads(got["applied"]) == logged[(s["team_season"].removeprefix("nfl-2024-s1-"), s["week"])]
        assert got["score"] <= got["best_possible"] and json.loads(got["detail"])["keep_value"] > 0
        assert "injured reserve" in messages(s["kind"], s["view"], "v2")[-1]["content"].lower()  # a model's prompt
        own += 1
    assert own >= 10


# ------------------------------------------------------------------------------------------------ analysis
def test_the_two_way_clustered_mean_is_the_t_interval_without_clusters_and_wider_with_them():
    import numpy as np
    from scipy import stats as st

    from ffbench_lib.core.stats import twoway_cluster_mean, twoway_cluster_test

    rng = np.random.default_rng(3)
    x = rng.normal(2.0, 3.0, 60)
    own = twoway_cluster_mean(x, range(60), [f"w{i}" for i in range(60)])  # every state its own cluster both ways
    assert own["se"] == pytest.approx(x.std(ddof=1) / np.sqrt(60))
    lo, hi = st.t.interval(0.95, 59, loc=x.mean(), scale=x.std(ddof=1) / np.sqrt(60))
    assert (own["low"], own["high"]) == (pytest.approx(lo), pytest.approx(hi))
    # a shared shock per week: clustering by week widens the interval (never narrower than one way)
    weeks = np.repeat(np.arange(10), 6)
    y = x + rng.normal(0, 5, 10)[weeks]
    both = twoway_cluster_mean(y, range(60), weeks)
    iid = twoway_cluster_mean(y, range(60), range(60))
    assert both["se"] > iid["se"] and both["df"] == 9
    assert twoway_cluster_test(np.zeros(8), range(8), range(8))["p"] == 1.0


def test_the_analysis_pairs_states_finds_identical_policies_and_plans_states_against_seasons(synthetic_suite,
                                                                                           tmp_path, capsys):
    from ffbench_lib.analysis.exams import load_results, pair_tests, power_plan, skill_table

    root, _ = synthetic_suite
    run_exam(root / "suite", REPO / "params" / "exam_bots.yaml", tmp_path / "res")
    df = load_results(tmp_path / "res")
    table = skill_table(df)
    assert set(table["agent"]) == {"adp", "vorp", "recent_form", "random"}
    lineups, drafts = table[table["skill"] == "start_sit"], table[table["skill"] == "draft_pick"]
    assert (lineups["low"] <= lineups["regret"]).all() and (lineups["regret"] <= lineups["high"]).all()
    assert drafts["low"].isna().all()  # one real season: every pick's outcome shares it, so no interval ...
    assert drafts["note"].str.startswith("no interval: 1 real-season (or week) cluster(s)").all()  # ... and it says so
    from ffbench_lib.analysis.exams import format_plan, states_needed
    draft_plan = states_needed(df[df["skill"] == "draft_pick"])
    assert not draft_plan["estimable"].any() and "cannot be estimated" in format_plan(draft_plan)
    assert "one candidate: no pair to separate" in format_plan(states_needed(df[df["agent"] == "adp"]))
    pairs = pair_tests(df)
    pairs = pairs[pairs["skill"] == "start_sit"].set_index(["a", "b"])
    same = pairs.loc[("adp", "vorp")]
    assert same["identical"] == 1.0 and same["diff"] == 0 and same["p"] == 1.0
    assert (pairs["p_holm"] >= pairs["p"]).all()
    assert pairs.loc[("random", "vorp"), "diff"] > 0  # random regrets more than vorp on the same states
    plan = power_plan(tmp_path / "res")
    first = plan[(plan["better"].isin(["adp", "vorp"])) & (plan["worse"].isin(["adp", "vorp"]))].iloc[0]
    assert pd.isna(first["states_needed"]) and first["identical"] == 1.0
    assert (plan["season_note"] == "one real season").all()  # two seeds of one season: no season-side estimate
    assert cli(["power", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    assert "the same answer on every state: nothing to separate" in out
    assert "full seasons: not estimated (one real season: seeds of it share its outcomes)" in out
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / RESULTS).write_text("not parquet")
    err = _cli_error(capsys, ["power", str(tmp_path / "bad")])
    assert "not readable as parquet" in err


def test_the_exam_notebook_runs_on_results_and_builds_them_when_missing(synthetic_suite, prepared_2024, data_dir,
                                                                      tmp_path):
    from analysis_helpers import errors
    from ffbench_lib.runs.notebooks import execute

    root, spec = synthetic_suite
    res = tmp_path / "res"
    run_exam(root / "suite", REPO / "params" / "exam_bots.yaml", res)
    out = tmp_path / "analysis"
    nb = execute("12_exams.ipynb", tmp_path / "12.ipynb", {"results": str(res), "suite": str(root / "suite"),
                                                             "out": str(out)}, timeout_s=600)
    assert errors(nb) == []
    for f in ("exam_skills.csv", "exam_strata.csv", "exam_pairs.csv", "exam_power.csv", "exam_regret.png",
              "exam_regret.svg"):
        assert (out / f).is_file(), f
    assert set(pd.read_csv(out / "exam_skills.csv")["agent"]) == {"adp", "vorp", "recent_form", "random"}
    strata = pd.read_csv(out / "exam_strata.csv")
    assert set(strata["stratum"]) <= {"short", "full", "scarce", "open"} and strata["states"].sum() == len(
        pd.read_parquet(res / RESULTS))
    # no results yet: the notebook builds the suite from its spec and runs the candidates (the synthetic season)
    fresh = tmp_path / "fresh"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        nb = execute("12_exams.ipynb", tmp_path / "12b.ipynb", {"results": str(fresh / "res"),
                                                                  "suite": str(fresh / "suite"), "spec": spec,
                                                                  "out": str(tmp_path / "analysis2")}, timeout_s=600)
    assert errors(nb) == [] and (fresh / "res" / RESULTS).is_file() and (fresh / "suite" / SUITE).is_file()
    assert json.loads((fresh / "res" / "results.json").read_text())["source"] == "exam"  # as exam run writes it


@pytest.mark.slow
def test_the_exam_notebook_with_its_defaults_as_jupyterlab_opens_it(real_data_dir, fpl_data_dir, tmp_path):
    """Kernel in notebooks/, parameters as written: the demo suite is built under the project's outputs/ from
    params/exam_suite.yaml (both sports), the four bots answer it, and the tables and figure are written."""
    from analysis_helpers import run_as_in_jupyterlab
    from project_copy import copy_project

    project = copy_project(tmp_path / "ffbench")
    run_as_in_jupyterlab(project, "12_exams", real_data_dir)
    assert (project / "outputs" / "exams" / "demo" / SUITE).is_file()
    skills = pd.read_csv(project / "outputs" / "analysis" / "exam_skills.csv")
    assert set(skills["skill"]) == {"start_sit", "trade_acceptance", "draft_pick", "waiver_choice"} and (project / "outputs" / "analysis" /
                                                                         "exam_regret.png").is_file()


def test_the_report_shows_the_exam_beside_the_runs_and_refuses_a_folder_without_results(synthetic_suite, tmp_path,
                                                                                       capsys):
    root, _ = synthetic_suite
    res = tmp_path / "res"
    run_exam(root / "suite", REPO / "params" / "exam_bots.yaml", res)
    page = tmp_path / "report.html"
    assert cli(["report", str(root / "suite" / "sources" / "nfl-2024"), "--out", str(page), "--exam", str(res)]) == 0
    text = page.read_text()
    assert "Exams: the same states for every candidate" in text and "hindsight-optimal lineup of the same roster" in text
    assert "The same answer on every state: adp and vorp (start_sit, nfl)" in text
    err = _cli_error(capsys, ["report", str(root / "suite" / "sources" / "nfl-2024"), "--out",
                              str(tmp_path / "r2.html"), "--exam", str(tmp_path)])
    assert "no exam results" in err and not (tmp_path / "r2.html").exists()


def test_a_dead_model_is_refused_not_ranked_as_the_engines_fallback(synthetic_suite, tmp_path, capsys):
    """Every call fails (nothing listens): every answer is the rules' repair, so the candidate would score exactly as
    the projection bot; like a season's fallback guard, the exam refuses it (exit 2) and writes no results."""
    root, _ = synthetic_suite
    cands = tmp_path / "dead.yaml"
    cands.write_text(yaml.safe_dump({
        "candidates": [{"name": "dead", "agent": {"kind": "llm", "model": "openai/fake-0",
                                                  "api_base": "http://127.0.0.1:9/v1", "timeout_s": 5}}],
        "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0, "max_reasks": 0}}))
    err = _cli_error(capsys, ["exam", "run", str(root / "suite"), str(cands), "--out", str(tmp_path / "r")])
    assert "the rules repaired 80 of its 80 answers" in err and "max_fallback_rate" in err
    assert not (tmp_path / "r" / RESULTS).exists()


def test_the_budget_bounds_the_spend_across_attempts_into_one_folder(synthetic_suite, tmp_path, capsys):
    from ffbench_lib.runs.exam import BATCH
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    root, _ = synthetic_suite
    cands, out = tmp_path / "c.yaml", tmp_path / "r"

    def write(budget):
        cands.write_text(yaml.safe_dump({
            "candidates": [{"name": "fake", "agent": {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                                      "timeout_s": 30, "input_cost_per_token": 1e-6,
                                                      "output_cost_per_token": 1e-6}}],
            "llm": {"cache_dir": str(tmp_path / "cache"), "budget_usd": budget}}))

    def live_calls():
        return [json.loads(x) for x in (out / "llm_calls.jsonl").open() if not json.loads(x)["cache_hit"]]

    with FakeOpenAIServer() as srv:
        write(0.01)
        assert cli(["exam", "run", str(root / "suite"), str(cands), "--out", str(out)]) == 3
        assert "llm.budget_usd 0.01 spent" in capsys.readouterr().err and not (out / RESULTS).exists()
        first = live_calls()
        spent = sum(c["cost_usd"] for c in first)
        # checked before each batch of BATCH states: only the last batch began under the limit and passed it
        assert spent >= 0.01 and len(first) < 80 and len(first) % BATCH == 0
        assert sum(c["cost_usd"] for c in first[:-BATCH]) < 0.01
        # the same folder again: the earlier attempt's spend counts, so nothing more is called
        assert cli(["exam", "run", str(root / "suite"), str(cands), "--out", str(out)]) == 3
        assert len(live_calls()) == len(first)
        write(100)  # a larger budget: the answers so far replay from the cache, the rest are called
        assert cli(["exam", "run", str(root / "suite"), str(cands), "--out", str(out)]) == 0
    meta = json.loads((out / "exam.json").read_text())
    assert meta["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in live_calls()), abs=1e-6)
    assert meta["cost_usd_earlier_attempts"] == pytest.approx(spent, abs=1e-6)


def test_a_masked_exam_shows_pseudonyms_and_scores_real_players(synthetic_suite, prepared_2024, data_dir, tmp_path):
    """information.masking in the candidates file: a model reads each source season's pseudonyms (no real name or id
    in any prompt), its answers map back to real players and score as usual."""
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.runs.exam import load_candidates
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    root, _ = synthetic_suite
    _, states = load_suite(root / "suite")
    cands = tmp_path / "c.yaml"
    with FakeOpenAIServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        cands.write_text(yaml.safe_dump({
            "candidates": [{"name": "fake", "agent": {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                                      "timeout_s": 30}}],
            "llm": {"cache_dir": str(tmp_path / "cache")}, "information": {"masking": "players_and_teams"}}))
        df = run_exam(root / "suite", cands, tmp_path / "r")
    calls = [json.loads(x) for x in (tmp_path / "r" / "llm_calls.jsonl").open()]
    text = "\n".join(m["content"] for c in calls for m in c["messages"])
    names = {p["name"] for s in states if s["skill"] == "start_sit" for p in s["view"]["players"]}
    ids = {p["id"] for s in states if s["skill"] == "start_sit" for p in s["view"]["players"]}
    assert len(names) > 50 and not [n for n in names if n in text] and not [i for i in ids if i in text]
    assert "RB-" in text and (df["decided_by"] == "agent").mean() > 0.9
    started = {p for lst in df.loc[df["skill"] == "start_sit", "started"] for p in lst}
    assert started and started <= ids  # real ids back
    cands.write_text(yaml.safe_dump({"candidates": [{"name": "a", "agent": {"kind": "bot", "strategy": "adp"}}],
                                     "information": {"masking": "players_and_teams", "numbers": "protected"}}))
    with pytest.raises(ConfigError, match="needs a suite built with `protected: true`"):  # its boards are exact
        run_exam(root / "suite", cands, tmp_path / "p")


def test_a_protected_exam_cuts_boards_as_a_protected_season_and_leaves_exact_candidates_alone(prepared_2024, data_dir,
                                                                                           tmp_path):
    """A suite built with ``protected: true`` freezes each draft board and free-agent list also as a protected team
    saw it at that moment (the firewall's own cut, by the protected value of the run's seed); a masked model with
    protected numbers answers those views (ranges, pseudonyms of the cut board's players) and is judged on them; a
    bot answers the exact views, and every exact candidate's results equal the same spec's unprotected suite's."""
    from ffbench_lib.config.league import League
    from ffbench_lib.game.masking import Masker
    from ffbench_lib.game.views import Firewall
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    skills = {"start_sit": {"per_team_season": 2}, "draft_pick": {"per_team_season": 3},
              "waiver_choice": {"per_team_season": 2}}
    built = {}
    for name, flag in (("exact", False), ("protected", True)):
        (tmp_path / name).mkdir()
        spec = spec_file(tmp_path / name, seeds=[1], skills=skills, overrides={"waivers": {"enabled": True}},
                         protected=flag)
        built[name] = build_suite(spec, tmp_path / name / "suite", prepared_for=lambda league: prepared_2024)
    _, exact_states = load_suite(tmp_path / "exact" / "suite")
    meta, states = load_suite(tmp_path / "protected" / "suite")
    assert [s["view"] for s in states] == [s["view"] for s in exact_states]  # the exact views are the season's
    cut = [s for s in states if "protected_view" in s]
    assert {s["skill"] for s in cut} == {"draft_pick", "waiver_choice"} and len(cut) == 50
    key = {"draft_pick": "available", "waiver_choice": "free_agents"}
    ids = lambda v, k: {c["id"] for cs in v[k].values() for c in cs}  # noqa: E731
    differ = [s for s in cut if ids(s["view"], key[s["skill"]]) != ids(s["protected_view"], key[s["skill"]])]
    assert len(differ) > 25
    # the cut is the firewall's: the protected order of the pool, its first untaken players
    (info,) = meta["sources"].values()  # one source season
    league = League.model_validate({**info["config"], "information": {"masking": "players_and_teams",
                                                                      "numbers": "protected"}})
    fw = Firewall(prepared_2024, league)
    picks = pd.read_parquet(tmp_path / "protected" / "suite" / info["run"] / "draft_picks.parquet")
    for s in (s for s in cut if s["skill"] == "draft_pick"):
        before = set(picks.loc[picks["pick"] < s["view"]["pick"], "player_id"])  # on deck: the last may be shown
        for pos, cards in s["protected_view"]["available"].items():
            shown = [c["id"] for c in cards]
            ranked = fw.protector.ranked(fw.catalog.pool(pos), "proj", None)
            skipped = [p for p in ranked[: ranked.index(shown[-1])] if p not in shown]
            assert set(skipped) <= before and len(shown) == len(s["view"]["available"][pos])
    bots = REPO / "params" / "exam_bots.yaml"
    a = run_exam(tmp_path / "exact" / "suite", bots, tmp_path / "exact" / "r")
    b = run_exam(tmp_path / "protected" / "suite", bots, tmp_path / "protected" / "r")
    cols = [c for c in COLUMNS if c != "suite"]
    assert a[cols].equals(b[cols])  # bots see exact views: the protected suite changes nothing for them
    cands = tmp_path / "c.yaml"
    with FakeOpenAIServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        cands.write_text(yaml.safe_dump({
            "candidates": [{"name": "fake", "agent": {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                                      "timeout_s": 30}}, {"name": "adp", "agent": {"kind": "bot",
                                                                                                   "strategy": "adp"}}],
            "llm": {"cache_dir": str(tmp_path / "cache")},
            "information": {"masking": "players_and_teams", "numbers": "protected"}}))
        df = run_exam(tmp_path / "protected" / "suite", cands, tmp_path / "r")
    assert df[df["agent"] == "adp"][cols].reset_index(drop=True).equals(
        b[b["agent"] == "adp"][cols].reset_index(drop=True))
    calls = {c["state_id"]: c for c in map(json.loads, (tmp_path / "r" / "llm_calls.jsonl").open())}
    masker = Masker(Firewall(prepared_2024, league), league)
    assert masker.protect is not None
    for s in differ:
        prompt = "\n".join(m["content"] for m in calls[s["state_id"]]["messages"])
        only_cut = ids(s["protected_view"], key[s["skill"]]) - ids(s["view"], key[s["skill"]])
        only_exact = ids(s["view"], key[s["skill"]]) - ids(s["protected_view"], key[s["skill"]])
        assert all(re.search(rf"\b{masker.players[p]}\b", prompt) for p in only_cut)
        assert not any(re.search(rf"\b{masker.players[p]}\b", prompt) for p in only_exact)
        assert "Protected numbers" in prompt
    assert set(df.loc[df["agent"] == "adp", "view"]) == {"exact"}  # a bot answers exact views
    fake = df[df["agent"] == "fake"].set_index("state_id")["view"]
    assert {s for s in fake.index if fake[s] == "protected"} == {s["state_id"] for s in cut}
    from ffbench_lib.analysis.exams import pair_tests, skill_table
    pairs = pair_tests(df).set_index(["skill", "a", "b"])
    draft = pairs.loc[("draft_pick", "adp", "fake")]
    assert draft["other_view"] == 30 and draft["states"] == 0  # a cut board is no pair for an exact one
    assert pairs.loc[("start_sit", "adp", "fake"), "other_view"] == 0
    table = skill_table(df).set_index(["skill", "agent"])
    assert table.loc[("draft_pick", "fake"), "protected"] == 1.0 and table.loc[("start_sit", "fake"), "protected"] == 0
    mine = df[(df["agent"] == "fake") & (df["skill"] == "draft_pick")]
    by_id = {s["state_id"]: s for s in cut}
    picks = [(json.loads(d)["pick"], r) for d, r in zip(mine["detail"], mine["state_id"])]
    assert all(p is None or p in ids(by_id[r]["protected_view"], "available") for p, r in picks)  # judged on its view
    assert (df.loc[df["agent"] == "fake", "decided_by"] == "agent").mean() > 0.9
