"""The information rule, proven end to end: perturb the future, and nothing an agent saw before it moves."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from ffbench_lib.data import projections
from ffbench_lib.config.league import Waivers
from ffbench_lib.data.schema import ALL_STATS
from ffbench_lib.game.knowledge import PRESEASON_COLUMNS, Knowledge, PlayerCatalog, Publication, SeasonFeed
from ffbench_lib.sport.scoring import fantasy_points
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall, canonical_json

from engine_helpers import demo_league, run_engine


def perturb(prepared, from_week: int, seed: int = 0):
    """A copy of the season whose actual stats from ``from_week`` on are different (scaled, shifted, and a
    fifth of the player-weeks removed), with every table derived from them rebuilt. Kicking, defense and points
    allowed change too; a stat a row does not have (a kicker's rushing yards) stays missing."""
    rng = np.random.default_rng(seed)
    w = prepared.weekly.copy()
    future = w["week"] >= from_week
    stats = [c for c in ALL_STATS if c in w.columns]
    w.loc[future, stats] = w.loc[future, stats] * 1.7 + 3
    w["fantasy_points"] = fantasy_points(w, prepared.scoring, prepared.tiers)
    w = w[~(future & (rng.random(len(w)) < 0.2))].reset_index(drop=True)
    pre = prepared.players.set_index("player_id")["proj_ppg_builtin"].fillna(0.0)
    wp_new = projections.weekly(w, pre, int(prepared.weekly_projections["week"].max()))
    wp = prepared.weekly_projections.drop(columns=["proj_points_builtin", "games_to_date"]).merge(
        wp_new, on=["week", "player_id"], how="left")
    return dataclasses.replace(prepared, weekly=w, weekly_projections=wp[prepared.weekly_projections.columns])


def decisions(run_dir):
    with open(run_dir / "decisions.jsonl") as fh:
        return [json.loads(line) for line in fh]


def assert_views_before_week_unmoved(prepared, tmp_path, week: int, waivers: str | None) -> None:
    """Play the demo league on ``prepared`` and on it perturbed from ``week`` on: every view of the draft and of
    weeks up to ``week`` is byte-identical, and a later one is not. The league stops one week after ``week``: the
    perturbed data still holds the whole season, so a leak of any later week would still show."""
    league = demo_league(seed=4, weeks=week + 1)
    if waivers:  # waiver and free-agent views (the pool: players known before the week) are covered too
        league = league.model_copy(update={"waivers": Waivers(enabled=True, mode=waivers)})
    run_engine(league, prepared, tmp_path / "real")
    run_engine(league, perturb(prepared, week), tmp_path / "perturbed")
    real, fake = decisions(tmp_path / "real"), decisions(tmp_path / "perturbed")

    def before(recs):  # the draft, and every decision of weeks up to w (week w's views hold weeks < w)
        return [r for r in recs if r["week"] is None or r["week"] <= week]

    a, b = before(real), before(fake)
    assert len(a) == len(b) > 240
    kinds = {r["decision"] for r in a}
    assert {"waiver_claims", "free_agent_adds"} <= kinds if waivers else not kinds & {"waiver_claims"}
    for ra, rb in zip(a, b):
        assert canonical_json(ra["view"]) == canonical_json(rb["view"]), (ra["decision"], ra["week"], ra["team"])
        assert ra["raw_answer"] == rb["raw_answer"]
    # the perturbation is real: later views do change
    later = [(x, y) for x, y in zip(real, fake) if x["week"] is not None and x["week"] > week]
    assert later and any(canonical_json(x["view"]) != canonical_json(y["view"]) for x, y in later)


@pytest.mark.parametrize("week,waivers", [(1, None), (6, "faab"), (12, "rolling")])
def test_views_before_week_w_are_byte_identical(prepared_2024, tmp_path, week, waivers):
    assert_views_before_week_unmoved(prepared_2024, tmp_path, week, waivers)


def test_views_before_week_w_are_byte_identical_on_the_real_season(real_prepared_2024, tmp_path):
    """The same on the real 2024 season: its own late arrivals, injuries, byes and trades mid-season."""
    assert_views_before_week_unmoved(real_prepared_2024, tmp_path, 6, "faab")


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
    teams = [t.name for t in demo_league().teams]
    state = LeagueState(teams=teams, agent_ids={t: "x" for t in teams}, draft_order=teams, schedule={})
    view = canonical_json(fw.draft_view(state, teams[0], 1, 1))
    assert "999" not in view and "actual" not in view
    detail = canonical_json(fw.shortlist_detail([c["id"] for c in fw.draft_view(state, teams[0], 1, 1)["available"]["RB"]]))
    assert "999" not in detail


def late_arrivals(prepared) -> dict[str, int]:
    """Players outside the draft pool -> the first week they play."""
    pool = set(prepared.players.loc[prepared.players["in_draft_pool"], "player_id"])
    first = prepared.weekly.groupby("player_id")["week"].min()
    return {p: int(w) for p, w in first.items() if p not in pool}


def only_weeks_before(prepared, w: int):
    """The season as it stands just before week ``w`` kicks off: played rows of weeks < w, and only week w's
    pre-kickoff publications (projections, injury report, games)."""
    return dataclasses.replace(prepared, weekly=prepared.weekly[prepared.weekly["week"] < w],
                               weekly_projections=prepared.weekly_projections.query("week == @w"),
                               injuries=prepared.injuries.query("week == @w"),
                               schedule=prepared.schedule.query("week == @w"))


@pytest.mark.parametrize("week", [1, 2, 9, 17])
def test_knowledge_of_week_w_holds_no_data_of_later_weeks(prepared_2024, week):
    """Built from the whole season, the week-w knowledge equals the one built from a season that ends before
    week w: nothing of week >= w (but week w's publications) is in it."""
    k = Knowledge.as_of(SeasonFeed(prepared_2024, PlayerCatalog(prepared_2024)), week)
    cut = only_weeks_before(prepared_2024, week)
    assert k == SeasonFeed(cut, PlayerCatalog(cut)).as_of(week)
    assert not any(isinstance(v, (pd.DataFrame, pd.Series, SeasonFeed)) for v in vars(k).values())
    assert all(wk < week for games in k.recent.values() for wk, _ in games)
    assert k.projection and len(k.status) > 0 and k.week == week


def test_knowledge_refuses_rows_of_its_own_week(prepared_2024):
    with pytest.raises(ValueError, match="knowledge of week 5 was handed a row of week 5"):
        Knowledge.from_rows(PlayerCatalog(prepared_2024), prepared_2024.weekly.query("week <= 5"),
                            Publication(5, {}, {}, ()))


def test_known_players_exclude_those_who_have_not_played_yet(prepared_2024):
    fw = Firewall(prepared_2024, demo_league())
    late = late_arrivals(prepared_2024)
    assert late and any(w > 1 for w in late.values())
    pool = fw.catalog.preseason_ids
    for pid, first in late.items():
        before, after = fw.week(first), fw.week(first + 1)
        assert pid not in before.known_players() and pid in after.known_players()
        # nothing about them either: no team, projection or injury status before they are known
        assert all(pid not in d for d in (before.team, before.projection, before.status, before.games))
        with pytest.raises(ValueError, match=f"player {pid} is not known before week {first}"):
            fw.player_week(pid, first)
        assert fw.player_week(pid, first + 1)["std_g"] == 1
    for w in (1, 10):
        k = fw.week(w)
        assert pool <= k.known_players()
        assert k.known_players() - pool == {p for p, first in late.items() if first < w}
        for d in (k.team, k.projection, k.status, k.games, k.points, k.recent):
            assert set(d) <= k.known_players()


def _catalog_json(catalog: PlayerCatalog) -> str:
    return json.dumps(vars(catalog), sort_keys=True,
                      default=lambda o: sorted(o) if isinstance(o, frozenset) else str(o))


def test_catalog_holds_no_weekly_stats(prepared_2024):
    """The same catalog from a season whose every weekly stat, team and week is scrambled."""
    catalog = PlayerCatalog(prepared_2024)
    for v in vars(catalog).values():
        assert not isinstance(v, (pd.DataFrame, pd.Series))
    assert all(set(catalog.row(p)) == set(PRESEASON_COLUMNS) for p in catalog.position)
    rng = np.random.default_rng(1)
    w = prepared_2024.weekly.copy()
    num = w.select_dtypes("number").columns
    w[num] = rng.permutation(w[num].to_numpy())
    w["team"] = rng.permutation(w["team"].to_numpy())
    scrambled = dataclasses.replace(prepared_2024, weekly=w)
    assert _catalog_json(PlayerCatalog(scrambled)) == _catalog_json(catalog)


def test_views_follow_the_league_positions(prepared_2024):
    league = demo_league()
    fw = Firewall(prepared_2024, league)
    teams = [t.name for t in league.teams]
    state = LeagueState(teams=teams, agent_ids={t: "x" for t in teams}, draft_order=teams,
                        schedule={"3": [teams[:2]]})
    for i, pid in enumerate(fw.available_ids(state)[: 2 * league.roster.size]):
        state.rosters[teams[i % 2]].append(pid)
    positions = list(league.roster.positions)
    draft = fw.draft_view(state, teams[0], 1, 1)
    assert list(draft["available"]) == list(draft["drafted_by_position"]) == positions
    assert list(draft["roster_summary"]["counts"]) == positions
    trade = fw.trade_view(state, teams[0], 3)
    assert list(trade["my_strength"]) == list(trade["league_avg_strength"]) == positions
