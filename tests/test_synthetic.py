"""The synthetic world (ffbench_lib.testing.synthetic): reproducible, coherent, and read by the real pipeline."""
from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from ffbench_lib.data.prepare import prepare_season
from ffbench_lib.testing.synthetic import TEAMS, write_world


def _digests(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_same_seed_writes_the_same_bytes_and_another_seed_another_world(synthetic_dir, tmp_path):
    again = write_world(tmp_path / "again", seasons=range(2021, 2025))
    assert _digests(again) == _digests(synthetic_dir)
    other = _digests(write_world(tmp_path / "other", seed=1, seasons=range(2023, 2025)))
    mine = _digests(synthetic_dir)
    assert other["nflverse/stats_player_week_2024.csv.gz"] != mine["nflverse/stats_player_week_2024.csv.gz"]


@pytest.fixture(scope="module")
def season_2024(synthetic_dir):
    nv = synthetic_dir / "nflverse"
    weekly = pd.read_csv(nv / "stats_player_week_2024.csv.gz")
    games = pd.read_csv(nv / "games_synthetic.csv").query("season == 2024")
    team = pd.read_csv(nv / "stats_team_week_2024.csv")
    return weekly, games, team


def test_team_games_add_up(season_2024):
    """Passing is catching; a team's score is its touchdowns, conversions, kicks and defensive points."""
    weekly, games, team = season_2024
    by_game = weekly.groupby(["week", "team"]).sum(numeric_only=True)
    assert (by_game["passing_tds"] == by_game["receiving_tds"]).all()
    assert (by_game["passing_yards"] == by_game["receiving_yards"]).all()
    assert (by_game["completions"] == by_game["receptions"]).all()
    assert (by_game["passing_2pt_conversions"] == by_game["receiving_2pt_conversions"]).all()
    fg = by_game.filter(regex=r"^fg_made_").sum(axis=1)
    t = team.set_index(["week", "team"])
    defense = 6 * (t["def_tds"] + t["fumble_recovery_tds"]) + 2 * t["def_safeties"]
    tds = by_game["rushing_tds"] + by_game["receiving_tds"] + by_game["special_teams_tds"]
    two = by_game[["rushing_2pt_conversions", "receiving_2pt_conversions"]].sum(axis=1)
    expected = (6 * tds + 2 * two + by_game["pat_made"] + 3 * fg).add(defense, fill_value=0)
    sides = pd.concat([games[["week", "home_team", "home_score"]].set_axis(["week", "team", "score"], axis=1),
                       games[["week", "away_team", "away_score"]].set_axis(["week", "team", "score"], axis=1)])
    scores = sides.set_index(["week", "team"])["score"]
    assert len(scores) == 32 * 17
    assert (expected.reindex(scores.index) == scores).all()
    assert 15 < scores.mean() < 30  # NFL-like scoring


def test_a_season_looks_like_an_nfl_season(season_2024):
    weekly, games, _ = season_2024
    assert sorted(set(games["home_team"]) | set(games["away_team"])) == list(TEAMS)
    per_team = pd.concat([games["home_team"], games["away_team"]]).value_counts()
    assert (per_team == 17).all() and games["week"].nunique() == 18
    season = weekly.groupby(["player_id", "position"])["fantasy_points_ppr"].sum().reset_index()
    for pos, top_range in {"QB": (250, 550), "RB": (220, 450), "WR": (220, 480), "TE": (130, 330)}.items():
        top = season.loc[season["position"] == pos, "fantasy_points_ppr"].nlargest(12)
        assert top_range[0] < top.iloc[0] < top_range[1], (pos, top.iloc[0])
        assert top.iloc[-1] > 0.3 * top.iloc[0]
    assert weekly["team"].groupby(weekly["player_id"]).nunique().max() == 2  # a few change teams in season


def test_the_pipeline_prepares_it_with_full_parity_injuries_rookies_and_adp(synthetic_dir, tmp_path):
    prep = prepare_season(2024, "nflverse", synthetic_dir, positions=("QB", "RB", "WR", "TE", "K", "DST"),
                          out=tmp_path / "prep")
    parity = prep.manifest["ppr_parity"]
    assert parity["rows_compared"] > 4000 and parity["matching"] == parity["rows_compared"]
    players = prep.players
    assert set(players["position"]) == {"QB", "RB", "WR", "TE", "K", "DST"}
    assert players["rookie"].sum() > 20 and players["draft_number"].notna().sum() > 20
    assert players["adp"].notna().sum() > 200 and players.loc[players["position"] == "DST", "adp"].notna().any()
    assert players["prev_points"].gt(0).sum() > 300  # history: the built-in projection has seasons to read
    assert set(prep.injuries["report_status"]) == {"Out", "Doubtful", "Questionable"}
    assert "unavailable" not in prep.manifest


def test_a_season_under_way_has_results_through_its_last_played_week(tmp_path):
    root = write_world(tmp_path / "live", seasons=range(2023, 2026), last_played=6)
    prep = prepare_season(2025, "nflverse", root, out=tmp_path / "prep")
    assert prep.manifest["played_weeks"] == 6 and int(prep.weekly["week"].max()) == 6
    assert "rosters" in prep.manifest["unavailable"]


def test_two_data_folders_never_share_a_prepared_season(synthetic_dir, tmp_path):
    """The prepared-season cache is keyed by the data folder, so a league on one world after a league on another
    plays its own players. (They once shared a folder: two processes preparing different data at once could leave
    one's tables under the other's manifest, and a run on real data played generated players.)"""
    from ffbench_lib.config.load import load_config
    from ffbench_lib.data.prepare import prepared_for

    other = write_world(tmp_path / "other", seed=1, seasons=range(2022, 2025))
    base = load_config("params/demo.yaml").model_dump(mode="json")
    leagues = []
    for root in (synthetic_dir, other, synthetic_dir):
        d = {**base, "data": {**base["data"], "dir": str(root)}}
        leagues.append(type(load_config("params/demo.yaml")).model_validate(d))
    firsts = [set(prepared_for(lg, cache_root=tmp_path / "cache").players["player_name"]) for lg in leagues]
    assert firsts[0] == firsts[2] and firsts[0] != firsts[1]
    assert len(list((tmp_path / "cache").glob("*/manifest.json"))) == 2
