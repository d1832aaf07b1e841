"""SUPERFLEX and 2QB leagues are configuration only (issue 12, item 6): every rule that knows about flex slots
(lineups, draft needs, repair, prompts, bots, the fake LLM, metrics) works for each flex slot the roster has."""
from collections import Counter
from itertools import combinations_with_replacement

import numpy as np
import pytest
from scipy.stats import chisquare

from ffbench_lib.analysis import metrics
from ffbench_lib.present import plots
from ffbench_lib.agents.prompts import messages
from ffbench_lib.config.league import League, Roster
from ffbench_lib.game.decisions import roster_from_rules
from ffbench_lib.game.rules.lineup import best_lineup, legal_lineups, random_lineup, slot_counts, validate_and_repair
from ffbench_lib.sport.lineup import lineup_value
from ffbench_lib.game.rules.roster import draft_pick_problem, unmet_starters
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import demo_league, run_engine

SF = Roster(QB=1, RB=2, WR=2, TE=1, FLEX=1, SUPERFLEX=1, BENCH=6)
POSITIONS = ("QB", "RB", "WR", "TE")
#: small rosters for brute force: superflex, superflex without FLEX, two of each flex class, 2QB
SMALL = {
    "superflex": Roster(QB=1, RB=1, WR=1, TE=0, FLEX=1, SUPERFLEX=1, BENCH=4),
    "superflex_only": Roster(QB=1, RB=1, WR=1, TE=1, FLEX=0, SUPERFLEX=2, BENCH=3),
    "narrow_flex": Roster(QB=0, RB=1, WR=1, TE=0, FLEX=2, SUPERFLEX=1, BENCH=3, flex_positions=("RB", "WR"),
                          superflex_positions=("QB", "RB", "WR")),
    "two_qb": Roster(QB=2, RB=1, WR=1, TE=1, FLEX=1, BENCH=3),
}


def _legal(lineup, positions, roster):
    """Every slot full with eligible players, each at most once."""
    ids = [p for ps in lineup.values() for p in ps]
    return (set(lineup) == set(slot_counts(roster)) and None not in ids and len(ids) == len(set(ids))
            and all(len(lineup[s]) == n for s, n in slot_counts(roster).items())
            and all(roster.eligible(s, positions[p]) for s, ps in lineup.items() for p in ps))


@pytest.mark.parametrize("name", list(SMALL))
def test_best_lineup_is_optimal_against_brute_force(name):
    roster, rng = SMALL[name], np.random.default_rng(12)
    checked = 0
    for trial in range(150):
        n = int(rng.integers(5, 11))
        positions = {f"p{i}": POSITIONS[int(rng.integers(len(POSITIONS)))] for i in range(n)}
        values = {p: float(rng.integers(-1, 8)) for p in positions}  # ties and the -1 of a player on bye
        legal = list(legal_lineups(positions, roster))
        best = best_lineup(positions, values, roster)
        if not legal:  # no legal lineup: best_lineup leaves the unfillable slots empty
            assert any(None in ids for ids in best.values())
            continue
        checked += 1
        assert _legal(best, positions, roster), (trial, best)
        assert {s: sorted(ids) for s, ids in best.items()} in legal
        assert lineup_value(best, values) == max(lineup_value(lu, values) for lu in legal), (trial, positions, values)
    assert checked > 40


def test_superflex_starts_the_second_qb_and_2qb_starts_two():
    positions = {"q1": "QB", "q2": "QB", "r1": "RB", "r2": "RB", "r3": "RB", "w1": "WR", "w2": "WR", "w3": "WR",
                 "t1": "TE"}
    values = {"q1": 22.0, "q2": 18.0, "r1": 15.0, "r2": 12.0, "r3": 9.0, "w1": 14.0, "w2": 11.0, "w3": 10.0,
              "t1": 6.0}
    lineup = best_lineup(positions, values, SF)
    assert lineup == {"QB": ["q1"], "RB": ["r1", "r2"], "WR": ["w1", "w2"], "TE": ["t1"], "FLEX": ["w3"],
                      "SUPERFLEX": ["q2"]}
    two_qb = Roster(QB=2, RB=2, WR=2, TE=1, FLEX=1, BENCH=6)
    assert best_lineup(positions, values, two_qb)["QB"] == ["q1", "q2"]
    assert best_lineup(positions, values, Roster())["FLEX"] == ["w3"]  # no QB at FLEX in a default league


def test_random_lineup_is_uniform_over_legal_lineups():
    """Counting on a tiny roster: every legal lineup drawn about equally often (a seeded chi-square test)."""
    roster = Roster(QB=1, RB=1, WR=1, TE=0, FLEX=1, SUPERFLEX=1, BENCH=2, flex_positions=("RB", "WR"),
                    superflex_positions=("QB", "RB", "WR"))
    positions = {"q1": "QB", "q2": "QB", "q3": "QB", "r1": "RB", "r2": "RB", "w1": "WR", "w2": "WR"}
    legal = [tuple((s, tuple(ids)) for s, ids in lu.items()) for lu in legal_lineups(positions, roster)]
    # QB (3) x RB (2) x WR (2) x FLEX from the RB and WR left (2) x SUPERFLEX from the 3 left (2 QB, 1 other)
    assert len(legal) == len(set(legal)) == 3 * 2 * 2 * 2 * 3
    rng = np.random.default_rng(7)
    draws = Counter(tuple((s, tuple(ids)) for s, ids in random_lineup(positions, roster, rng).items())
                    for _ in range(200 * len(legal)))
    assert set(draws) == set(legal)
    assert chisquare([draws[lu] for lu in legal]).pvalue > 1e-3


def _fewest_additions(held, roster):
    """Brute force: the fewest players of any positions to add so that a legal lineup exists."""
    for k in range(roster.starters + 1):
        for extra in combinations_with_replacement(POSITIONS, k):
            positions = {f"p{i}": pos for i, pos in enumerate([*held, *extra])}
            if next(legal_lineups(positions, roster), None) is not None:
                return k
    raise AssertionError("unreachable")


@pytest.mark.parametrize("held, expected", [
    (["QB", "QB"], 6),             # RB RB WR WR TE + FLEX; the second QB fills SUPERFLEX
    (["QB", "QB", "QB"], 6),       # a third QB cannot fill FLEX
    (["RB"] * 4, 4),               # QB WR WR TE; the spare RBs fill FLEX and SUPERFLEX
    (["QB", "RB", "RB", "WR", "WR", "TE", "TE"], 1),  # one flex slot left
])
def test_unmet_starters_with_two_flex_classes(held, expected):
    assert unmet_starters(held, SF) == expected == _fewest_additions(held, SF)


@pytest.mark.parametrize("name", list(SMALL))
def test_unmet_starters_matches_brute_force(name):
    roster, rng = SMALL[name], np.random.default_rng(3)
    for _ in range(40):
        held = [POSITIONS[int(i)] for i in rng.integers(len(POSITIONS), size=int(rng.integers(0, 7)))]
        assert unmet_starters(held, roster) == _fewest_additions(held, roster), held


def test_draft_allows_a_second_qb_only_where_he_can_start():
    full = SF.model_copy(update={"BENCH": 0})  # 8 picks for 8 starters
    assert draft_pick_problem(["QB"], "QB", full) is None  # he fills SUPERFLEX
    assert "too few picks" in draft_pick_problem(["QB", "QB"], "QB", full)


def test_validate_and_repair_keeps_legal_superflex_answers_and_repairs_illegal_ones():
    positions = {"q1": "QB", "q2": "QB", "r1": "RB", "r2": "RB", "r3": "RB", "w1": "WR", "w2": "WR", "t1": "TE"}
    values = {"q1": 20.0, "q2": 15.0, "r1": 12.0, "r2": 10.0, "r3": 8.0, "w1": 11.0, "w2": 9.0, "t1": 5.0}
    legal = {"QB": ["q2"], "RB": ["r1", "r3"], "WR": ["w1", "w2"], "TE": ["t1"], "FLEX": ["r2"], "SUPERFLEX": ["q1"]}
    ok = validate_and_repair(legal, positions, values, SF)
    assert ok.slots == legal and ok.problems == []
    assert {d for ds in ok.decided_by.values() for d in ds} == {"agent"}
    # a QB at FLEX is not eligible: FLEX is repaired with the best flex player left, SUPERFLEX kept
    bad = validate_and_repair({**legal, "FLEX": ["q1"], "SUPERFLEX": ["q2"], "QB": ["r2"]}, positions, values, SF)
    assert "FLEX: q1 is a QB, not eligible" in bad.problems and "QB: r2 is a RB, not eligible" in bad.problems
    assert bad.slots["SUPERFLEX"] == ["q2"] and bad.decided_by["SUPERFLEX"] == ["agent"]
    assert bad.slots["QB"] == ["q1"] and bad.slots["FLEX"] == ["r2"]
    assert bad.decided_by["FLEX"] == ["fallback"] and _legal(bad.slots, positions, SF)
    # an empty SUPERFLEX is filled (a QB on the bench is the best left), a SUPERFLEX answer in a league without it
    # is an unknown slot
    part = validate_and_repair({k: v for k, v in legal.items() if k != "SUPERFLEX"}, positions, values, SF)
    assert part.slots["SUPERFLEX"] == ["q1"] and "SUPERFLEX: 1 slot(s) left empty" in part.problems
    other = validate_and_repair(legal, positions, values, Roster())
    assert "unknown slot(s) ['SUPERFLEX']; slots are ['QB', 'RB', 'WR', 'TE', 'FLEX']" in other.problems


def _sf_league(teams: int = 12, **updates) -> League:
    """The demo league with 12 bots and the roster QB1 RB2 WR2 TE1 FLEX1 SUPERFLEX1 BENCH6."""
    d = demo_league().model_dump(mode="json")
    strategies = ["vorp", "adp", "recent_form", "random"]
    d["teams"] = [{"name": f"{strategies[i % 4]}-{i}", "agent": {"kind": "bot", "strategy": strategies[i % 4]}}
                  for i in range(teams)]
    d.update({"roster": SF.model_dump(mode="json"), **updates})
    return League.model_validate(d)


def _views(roster: dict, prepared, out) -> dict[str, dict]:
    """The first view of each decision kind a short 4-bot season asks (with trades and waivers)."""
    d = demo_league().model_dump(mode="json")
    d.update(teams=d["teams"][:4], weeks=3, trades={"weeks": [2], "max_players_per_side": 1},
             waivers={"enabled": True}, roster=roster)
    run_engine(League.model_validate(d), prepared, out)
    seen: dict[str, dict] = {}
    for record in RunDir(out).decisions():
        seen.setdefault(record["decision"], record["view"])
    assert {"draft_pick", "set_lineup", "propose_trade", "waiver_claims"} <= set(seen)
    return seen


def test_rules_show_superflex_and_round_trip(prepared_2024, tmp_path):
    views = _views(SF.model_dump(mode="json"), prepared_2024, tmp_path / "sf")
    for decision, view in views.items():
        assert view["rules"]["superflex_positions"] == ["QB", "RB", "WR", "TE"], decision
        assert roster_from_rules(view["rules"]) == SF
    system, user = (m["content"] for m in messages("set_lineup", views["set_lineup"]))
    assert ("Starting lineup each week: QB=1 RB=2 WR=2 TE=1 FLEX=1 SUPERFLEX=1. FLEX may be any of RB/WR/TE. "
            "SUPERFLEX may be any of QB/RB/WR/TE. Bench: 6 players.") in system
    assert "SLOTS: QB=1 RB=2 WR=2 TE=1 FLEX=1 SUPERFLEX=1 (FLEX: RB/WR/TE; SUPERFLEX: QB/RB/WR/TE)\n" in user
    assert "FLEX from RB/WR/TE. SUPERFLEX from QB/RB/WR/TE." in user
    assert '"FLEX": [<id>], "SUPERFLEX": [<id>]}' in user
    # a league without the slot shows neither the slot nor its positions
    plain = _views(demo_league().roster.model_dump(mode="json"), prepared_2024, tmp_path / "plain")
    for decision, view in plain.items():
        assert "superflex_positions" not in view["rules"], decision
        assert "SUPERFLEX" not in "\n".join(m["content"] for m in messages(decision, view)), decision


@pytest.fixture(scope="module")
def sf_season(prepared_2024, tmp_path_factory):
    out = tmp_path_factory.mktemp("superflex") / "run"
    league = _sf_league()
    run_engine(league, prepared_2024, out)
    return league, out


def _legal_season(league, out):
    """Every week every team started a full legal lineup of its own players, all chosen by the bots."""
    run = RunDir(out)
    assert run.meta().status == "complete"
    lineups, rosters = run.table("lineups"), run.table("rosters")
    assert (lineups["decided_by"] == "agent").all() and lineups["player_id"].notna().all()
    held = rosters.groupby(["week", "team"])["player_id"].apply(set)
    counts = slot_counts(league.roster)
    for (week, team), g in lineups.groupby(["week", "team"]):
        assert g["slot"].value_counts().to_dict() == counts, (week, team)
        assert g["player_id"].is_unique and set(g["player_id"]) <= held[(week, team)], (week, team)
        assert all(league.roster.eligible(s, p) for s, p in zip(g["slot"], g["position"])), (week, team)
    assert lineups["week"].nunique() == league.weeks and lineups["team"].nunique() == len(league.teams)
    return run, lineups


def test_twelve_team_superflex_bot_season_plays_legally(sf_season):
    league, out = sf_season
    run, lineups = _legal_season(league, out)
    sf = lineups[lineups["slot"] == "SUPERFLEX"]
    assert (sf["position"] == "QB").any()
    # the vorp bots value a second quarterback: each drafts at least two
    picks = run.table("draft_picks")
    vorp_qbs = picks[picks["team"].str.startswith("vorp") & (picks["position"] == "QB")].groupby("team").size()
    assert len(vorp_qbs) == 3 and (vorp_qbs >= 2).all(), vorp_qbs


def test_two_qb_bot_season_starts_two_quarterbacks(prepared_2024, tmp_path):
    league = _sf_league(teams=10, weeks=4, trades={"weeks": [3], "max_players_per_side": 1},
                        roster={"QB": 2, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1, "BENCH": 6})
    run_engine(league, prepared_2024, tmp_path / "run")
    _, lineups = _legal_season(league, tmp_path / "run")
    assert (lineups[lineups["slot"] == "QB"].groupby(["week", "team"]).size() == 2).all()


def test_superflex_metrics_and_figure(sf_season):
    league, out = sf_season
    runs = metrics.load_runs([out])
    slots = metrics.points_by_slot(runs)
    assert "SUPERFLEX" in slots.columns and (slots["SUPERFLEX"] > 0).any()
    # the hindsight oracle solves SUPERFLEX too: never below what was started, and above it somewhere
    ss = metrics.start_sit(runs)
    assert (ss["left_on_table"] >= -1e-6).all() and (ss["left_on_table"] > 0).any()
    fig = plots.points_by_position(slots)
    assert "SUPERFLEX" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_llm_team_fills_superflex_against_the_fake_server(prepared_2024, tmp_path):
    with FakeOpenAIServer() as srv:
        league = _sf_league(weeks=3, trades={"weeks": [2], "max_players_per_side": 1})
        d = league.model_dump(mode="json")
        d["teams"][0] = {"name": "LLM", "agent": {"kind": "llm", "model": "openai/fake-model", "api_base": srv.api_base,
                                                  "timeout_s": 5.0, "max_tokens": 2000, "input_cost_per_token": 0.0,
                                                  "output_cost_per_token": 0.0}}
        d["llm"] = {"backoff_s": 0.01, "cache_dir": str(tmp_path / "cache")}
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    mine = [d for d in run.decisions() if d["team"] == "LLM" and d["decision"] == "set_lineup"]
    assert len(mine) == 3 and {d["decided_by"] for d in mine} == {"agent"}
    assert all(len(d["applied"]["SUPERFLEX"]) == 1 and d["applied"]["SUPERFLEX"][0] for d in mine)
    lineups = run.table("lineups")
    llm = lineups[(lineups["team"] == "LLM") & (lineups["slot"] == "SUPERFLEX")]
    assert len(llm) == 3 and (llm["decided_by"] == "agent").all()
    prompts = [c["messages"][1]["content"] for c in run.llm_calls() if c["decision"] == "set_lineup"]
    assert prompts and all("(FLEX: RB/WR/TE; SUPERFLEX: QB/RB/WR/TE)" in p for p in prompts)
