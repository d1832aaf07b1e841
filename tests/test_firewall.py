"""The information rule, proven end to end: perturb the future, and nothing an agent saw before it moves."""
import dataclasses
import json

import numpy as np
import pytest

from ffbench_lib import projections
from ffbench_lib.data.schema import WEEKLY_STATS
from ffbench_lib.scoring import fantasy_points
from ffbench_lib.views import Firewall, canonical_json

from engine_helpers import demo_league, run_engine


def perturb(prepared, from_week: int, seed: int = 0):
    """A copy of the season whose actual stats from ``from_week`` on are different (scaled, shifted, and a
    fifth of the player-weeks removed), with every table derived from them rebuilt."""
    rng = np.random.default_rng(seed)
    w = prepared.weekly.copy()
    future = w["week"] >= from_week
    stats = [c for c in WEEKLY_STATS if c in w.columns]
    w.loc[future, stats] = w.loc[future, stats].fillna(0) * 1.7 + 3
    w["fantasy_points"] = fantasy_points(w, prepared.scoring)
    w = w[~(future & (rng.random(len(w)) < 0.2))].reset_index(drop=True)
    pre = prepared.players.set_index("player_id")["proj_ppg_builtin"].fillna(0.0)
    wp_new = projections.weekly(w, pre, int(prepared.weekly_projections["week"].max()))
    wp = prepared.weekly_projections.drop(columns=["proj_points_builtin", "games_to_date"]).merge(
        wp_new, on=["week", "player_id"], how="left")
    return dataclasses.replace(prepared, weekly=w, weekly_projections=wp[prepared.weekly_projections.columns])


def decisions(run_dir):
    with open(run_dir / "decisions.jsonl") as fh:
        return [json.loads(line) for line in fh]


@pytest.mark.parametrize("week", [1, 6, 12])
def test_views_before_week_w_are_byte_identical(prepared_2024, tmp_path, week):
    league = demo_league(seed=4)
    run_engine(league, prepared_2024, tmp_path / "real")
    run_engine(league, perturb(prepared_2024, week), tmp_path / "perturbed")
    real, fake = decisions(tmp_path / "real"), decisions(tmp_path / "perturbed")

    def before(recs):  # the draft, and every decision of weeks up to w (week w's views hold weeks < w)
        return [r for r in recs if r["week"] is None or r["week"] <= week]

    a, b = before(real), before(fake)
    assert len(a) == len(b) > 240
    for ra, rb in zip(a, b):
        assert canonical_json(ra["view"]) == canonical_json(rb["view"]), (ra["decision"], ra["week"], ra["team"])
        assert ra["raw_answer"] == rb["raw_answer"]
    # the perturbation is real: later views do change
    later = [(x, y) for x, y in zip(real, fake) if x["week"] is not None and x["week"] > week]
    assert any(canonical_json(x["view"]) != canonical_json(y["view"]) for x, y in later)


def test_week_knowledge_holds_only_earlier_weeks(prepared_2024):
    fw = Firewall(prepared_2024, demo_league())
    for w in (1, 2, 9, 17):
        k = fw.week(w)
        assert all(wk < w for games in k.recent.values() for wk, _ in games)
        assert sum(k.games.values()) == len(prepared_2024.weekly.query("week < @w"))
    assert fw.week(1).points == {}


def test_draft_view_uses_preseason_columns_only(prepared_2024):
    """Even if the players table carried an actual-points column, no view could show it."""
    p = prepared_2024
    players = p.players.assign(actual_points=999.0, fantasy_points=999.0)
    fw = Firewall(dataclasses.replace(p, players=players), demo_league())
    from ffbench_lib.state import LeagueState

    teams = [t.name for t in demo_league().teams]
    state = LeagueState(teams=teams, agent_ids={t: "x" for t in teams}, draft_order=teams, schedule={})
    view = canonical_json(fw.draft_view(state, teams[0], 1, 1))
    assert "999" not in view and "actual" not in view
    detail = canonical_json(fw.shortlist_detail([c["id"] for c in fw.draft_view(state, teams[0], 1, 1)["available"]["RB"]]))
    assert "999" not in detail
