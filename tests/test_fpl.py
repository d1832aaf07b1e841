"""Premier League scoring (issue #28): the FPL rules, as general scoring rules (per-position weights, points per
whole block of a stat, tiers), reproduce FPL's own ``total_points`` on every player-fixture row of every season."""
import pandas as pd
import pytest

from ffbench_lib.data.base import DataError
from ffbench_lib.data.fpl import (GAMEWEEK_REQUIRED, blank_clubs, clubs, deadlines, fixtures, gameweek_rows,
                                  player_gameweeks, preseason_market)
from ffbench_lib.sport import fpl
from ffbench_lib.sport.scoring import Rules, fantasy_points, position_points

#: season -> (player-fixture rows after the aliases and without the managers, what the reader notes)
SEASONS = {"2021-22": (25447, {"GKP read as GK": 101}), "2022-23": (26505, {}), "2023-24": (29725, {}),
           "2024-25": (27283, {"AM rows (not players) left out": 322}), "2025-26": (22343, {"identical duplicate rows dropped": 10})}


@pytest.mark.parametrize("season", sorted(SEASONS))
def test_fpl_rules_reproduce_total_points_on_every_row(fpl_data_dir, season):
    rows, notes = gameweek_rows(fpl_data_dir / season)
    n, want_notes = SEASONS[season]
    assert len(rows) == n and notes == want_notes
    assert set(rows["position"]) == set(fpl.POSITIONS)
    points = position_points(rows, fpl.rules(int(season[:4])))
    wrong = rows[points.to_numpy() != rows["total_points"].to_numpy()]
    assert wrong.empty, wrong[["name", "position", "gameweek", "minutes", "total_points"]].head().to_string()
    # the season's rules are what make it: 2025-26 without defensive contributions, or an earlier season scored
    # with a flat goal value, no longer matches
    if season == "2025-26":
        assert (position_points(rows, fpl.rules(2024)) != rows["total_points"]).sum() > 1000
    flat = {p: Rules({**r.weights, "goals_scored": 5.0}, r.tiers, r.every) for p, r in fpl.rules(2024).items()}
    assert (position_points(rows, flat) != rows["total_points"]).sum() > 100


def test_the_published_rules_the_data_never_exercises():
    """No goalkeeper scored, no outfielder saved a shot or a penalty in these seasons: the rules are pinned here."""
    rows = pd.DataFrame([
        {"position": "GK", "minutes": 90, "goals_scored": 1, "saves": 7, "penalties_saved": 1, "goals_conceded": 3},
        {"position": "DEF", "minutes": 30, "saves": 3, "penalties_saved": 1, "penalties_missed": 1, "red_cards": 1},
        {"position": "FWD", "minutes": 60, "goals_conceded": 4, "clean_sheets": 1, "own_goals": 1, "bonus": 3},
        {"position": "MID", "minutes": 0, "defensive_contribution": 12}]).fillna(0)
    assert position_points(rows, fpl.rules(2024)).tolist() == [2 + 6 + 2 + 5 - 1, 1 + 5 - 2 - 3, 2 - 2 + 3, 0]
    assert position_points(rows, fpl.rules(2025)).tolist() == [2 + 6 + 2 + 5 - 1, 1 + 5 - 2 - 3, 2 - 2 + 3, 2]


def test_rules_are_checked_and_frozen():
    r = fpl.rules(2025)
    assert r["GK"].tiers["minutes"] == ((0.0, 0.0), (59.0, 1.0), (None, 2.0))
    with pytest.raises(TypeError):
        r["DEF"].tiers["minutes"] = ()
    assert fpl.rules(2025)["DEF"].tiers == r["DEF"].tiers
    with pytest.raises(ValueError, match=r"every.saves must be \[n, points\] with n a whole number above 0"):
        Rules({}, every={"saves": (0, 1)})
    with pytest.raises(ValueError, match="tiers.minutes must be .* ascending finite bounds, the last null"):
        Rules({}, tiers={"minutes": [[None, 2], [59, 1], [0, 0]]})
    with pytest.raises(ValueError, match="weights.goals_scored must be a finite number"):
        Rules({"goals_scored": float("nan")})


def test_every_block_and_position_rules_on_a_small_frame():
    stats = pd.DataFrame({"position": ["GK", "GK", "DEF", "FWD"], "saves": [2, 7, 3, 0], "minutes": [0, 45, 60, 90],
                          "goals_conceded": [0, 5, 3, 1], "goals_scored": [0, 0, 1, 1]})
    # a point per 3 whole saves: 0, 2, 1, 0
    assert fantasy_points(stats, {}, every={"saves": (3, 1)}).tolist() == [0, 2, 1, 0]
    assert fantasy_points(stats, {}, every={"missing": (3, 1)}).tolist() == [0, 0, 0, 0]
    rules = {"GK": Rules({}, {"minutes": [[0, 0], [59, 1], [None, 2]]}, {"goals_conceded": (2, -1)}),
             "DEF": Rules({"goals_scored": 6}), "FWD": Rules({"goals_scored": 4})}
    assert position_points(stats, rules).tolist() == [0, -1, 6, 4]
    with pytest.raises(ValueError, match=r"no scoring rules for position\(s\) FWD; the rules cover GK, DEF"):
        position_points(stats, {k: rules[k] for k in ("GK", "DEF")})


def test_a_broken_gameweek_folder_is_a_data_error_naming_the_file(tmp_path):
    season = tmp_path / "2024-25"
    with pytest.raises(DataError, match=r"no gameweek files \(gw1.csv, ...\) in .*2024-25/gws"):
        gameweek_rows(season)
    (season / "gws").mkdir(parents=True)
    row = {c: 0 for c in GAMEWEEK_REQUIRED} | {"name": "A", "position": "GKP", "team": "X",
                                               "kickoff_time": "2024-08-17T14:00:00Z"}
    pd.DataFrame([row, {**row, "position": "AM"}]).to_csv(season / "gws" / "gw1.csv", index=False)
    rows, notes = gameweek_rows(season)
    assert rows["position"].tolist() == ["GK"] and rows["gameweek"].tolist() == [1]
    assert notes == {"GKP read as GK": 1, "AM rows (not players) left out": 1}
    pd.DataFrame([row]).drop(columns=["saves"]).to_csv(season / "gws" / "gw2.csv", index=False)
    with pytest.raises(DataError, match=r"FPL gameweek 2: .*gw2.csv lacks column\(s\) saves"):
        gameweek_rows(season)
    later = {**row, "fixture": 2}
    pd.DataFrame([later, later]).to_csv(season / "gws" / "gw2.csv", index=False)  # a row twice: counted, dropped
    assert gameweek_rows(season)[1]["identical duplicate rows dropped"] == 1
    pd.DataFrame([later, {**later, "minutes": 90}]).to_csv(season / "gws" / "gw2.csv", index=False)
    with pytest.raises(DataError, match=r"gameweek 2 has two different rows for player 0 \(A\) in fixture 2"):
        gameweek_rows(season)


@pytest.mark.parametrize("season", ["2021-22", "2025-26"])
def test_a_player_gameweek_is_his_fixtures_scored_one_by_one(fpl_data_dir, season):
    """One row per player and gameweek with a fixture; its points are FPL's for those fixtures, and scoring the
    summed stats instead would be wrong (minutes, saves and goals conceded score per match)."""
    folder = fpl_data_dir / season
    rules = fpl.rules(int(season[:4]))
    pgw = player_gameweeks(folder, rules)
    rows, _ = gameweek_rows(folder)
    assert not pgw.duplicated(["gameweek", "player_id"]).any()
    assert pgw["player_id"].str.fullmatch(r"fpl:\d+").all() and pgw["club"].str.fullmatch(r"[A-Z]{3}").all()
    assert pgw["fixtures"].sum() == len(rows) and (pgw["fixtures"] == 2).sum() > 50  # double gameweeks
    assert (pgw["fantasy_points"] == pgw["total_points"]).all()
    assert pgw["total_points"].sum() == rows["total_points"].sum()
    doubles = pgw[pgw["fixtures"] == 2]
    lumped = position_points(doubles, rules)  # the two matches' stats added, then scored as one
    assert (lumped != doubles["fantasy_points"]).sum() > 10


def test_the_same_player_keeps_his_id_across_seasons(fpl_data_dir):
    """``fpl:<code>`` joins seasons; the season's own ``element`` numbers do not (they are renumbered)."""
    a, b = (player_gameweeks(fpl_data_dir / s, fpl.rules(int(s[:4])))
            .drop_duplicates("player_id").set_index("player_id")[["element", "player_name"]]
            for s in ("2023-24", "2024-25"))
    both = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
    assert len(both) > 300
    assert (both["player_name_a"] == both["player_name_b"]).mean() > 0.9
    assert (both["element_a"] != both["element_b"]).mean() > 0.5


@pytest.mark.parametrize("season", sorted(SEASONS))
def test_the_fixture_list_deadlines_and_blank_gameweeks(fpl_data_dir, season):
    folder = fpl_data_dir / season
    fx = fixtures(folder)
    assert len(fx) == 380 and fx["fixture"].is_unique
    both = set(fx["home"]) | set(fx["away"])
    assert both == set(clubs(folder)) and len(both) == 20
    assert all((fx["home"] == c).sum() == 19 == (fx["away"] == c).sum() for c in both)
    played = fx["home_score"].notna()
    assert played.sum() == (380 - 89 if season == "2025-26" else 380)  # 2025-26 was copied in gameweek 29
    assert (fx["home_score"].notna() == fx["away_score"].notna()).all()
    due = deadlines(fx)
    assert sorted(due) == list(range(1, 39))
    assert all(due[gw] == fx.loc[fx["gameweek"] == gw, "kickoff_time"].min() for gw in due if due[gw])
    pgw = player_gameweeks(folder, fpl.rules(int(season[:4])))
    assert pgw["minutes"].dtype.kind == pgw["total_points"].dtype.kind == pgw["value"].dtype.kind == "i"
    blanks = blank_clubs(fx, clubs(folder))
    if season == "2022-23":  # every match of gameweek 7 was postponed (the Queen's death): no deadline, all blank
        assert due[7] is None and blanks[7] == sorted(clubs(folder)) and not (pgw["gameweek"] == 7).any()
    assert [gw for gw, d in due.items() if d is None] == ([7] if season == "2022-23" else [])
    assert any(blanks.values())
    for gw, out in blanks.items():  # a club without a match has no player row that gameweek
        assert pgw[(pgw["gameweek"] == gw) & pgw["club"].isin(out)].empty
    twice = fx.dropna(subset=["gameweek"]).melt(["gameweek"], ["home", "away"], value_name="club")
    twice = twice.groupby(["gameweek", "club"]).size()
    doubles = set(twice[twice == 2].index)
    assert doubles and {(int(g), c) for g, c, n in pgw[["gameweek", "club", "fixtures"]].itertuples(index=False)
                        if n == 2} <= doubles


def test_the_preseason_market_is_gameweek_ones_ownership(fpl_data_dir):
    pgw = player_gameweeks(fpl_data_dir / "2024-25", fpl.rules(2024))
    market = preseason_market(pgw)
    gw1 = pgw[pgw["gameweek"] == 1]
    assert len(market) == len(gw1) and market["player_id"].is_unique
    assert market["market_rank"].tolist() == list(range(1, len(market) + 1))
    assert market["selected"].is_monotonic_decreasing
    top = market.iloc[0]  # the most owned player's price and ownership are his gameweek-1 ones, not later ones
    row = gw1[gw1["player_id"] == top["player_id"]].iloc[0]
    assert (top["value"], top["selected"]) == (row["value"], row["selected"])
    later = pgw[(pgw["player_id"] == top["player_id"]) & (pgw["gameweek"] == 38)]
    assert later.empty or (later.iloc[0]["selected"], later.iloc[0]["value"]) != (top["selected"], top["value"])
    joined = set(pgw["player_id"]) - set(gw1["player_id"])  # January signings and the like: not in the market
    assert joined and not joined & set(market["player_id"])
    with pytest.raises(DataError, match="no gameweek 1 rows"):
        preseason_market(pgw[pgw["gameweek"] > 1])


def test_the_prompts_state_each_positions_rules_as_ranges():
    """2025-26's rules as the system prompt states them: defensive contributions count from 0 ("0-9: +0"), per-n
    rules name their positions, a value the positions share is stated once."""
    from ffbench_lib.game.render import _tier_ranges, position_scoring_text

    text = position_scoring_text({p: r.as_dict() for p, r in fpl.rules(2025).items()}, {"sport": "fpl"})
    assert "defensive contribution (DEF) 0-9: +0, 10+: +2" in text
    assert "defensive contribution (MID/FWD) 0-11: +0, 12+: +2" in text
    assert "minutes 0: +0, 1-59: +1, 60+: +2" in text and "saves +1 per 3 (GK)" in text and "assists +3" in text
    assert _tier_ranges([[100, 0], [None, 2]], float("-inf")) == "up to 100: +0, 101+: +2"
