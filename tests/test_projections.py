import numpy as np
import pandas as pd
import pytest

from ffbench_lib.data import projections
from ffbench_lib.data.prepare import prepare_season
from ffbench_lib.data.report import projection_report


def _toy_weekly():
    rows = []
    for pid, pos, ppg in (("a", "RB", 20.0), ("b", "RB", 5.0), ("c", "WR", 10.0)):
        for week in range(1, 11):
            rows.append({"player_id": pid, "position": pos, "team": "KC", "player_name": pid, "week": week,
                         "fantasy_points": ppg + week})
    return pd.DataFrame(rows)


def test_weekly_projection_uses_only_earlier_weeks():
    w = _toy_weekly()
    pre = pd.Series({"a": 15.0, "b": 6.0, "c": 9.0})
    base = projections.weekly(w, pre, 10)
    for cut in (1, 4, 8):
        perturbed = w.copy()
        perturbed.loc[perturbed["week"] >= cut, "fantasy_points"] *= 7.0
        again = projections.weekly(perturbed, pre, 10)
        before = base[base["week"] <= cut].reset_index(drop=True)
        pd.testing.assert_frame_equal(before, again[again["week"] <= cut].reset_index(drop=True))
        assert not base[base["week"] > cut + 1].equals(again[again["week"] > cut + 1])


def test_weekly_projection_hand_computed():
    w = _toy_weekly()
    pre = pd.Series({"a": 15.0, "b": 6.0, "c": 9.0})
    out = projections.weekly(w, pre, 10).set_index(["player_id", "week"])["proj_points_builtin"]
    assert out[("a", 1)] == 15.0  # nothing played yet: the preseason number
    # week 3 sees weeks 1-2 (21, 22) and 3 prior games at 15
    assert out[("a", 3)] == pytest.approx(round((21 + 22 + 3 * 15) / 5, 2))


def test_preseason_regresses_small_samples_and_handles_rookies():
    last = _toy_weekly()
    one_game = pd.DataFrame([{"player_id": "d", "position": "RB", "team": "KC", "player_name": "d", "week": 1,
                              "fantasy_points": 40.0}])
    last = pd.concat([last, one_game], ignore_index=True)
    rookies = pd.DataFrame({"player_id": ["r1", "r2"], "player_name": ["r1", "r2"], "position": ["RB", "WR"],
                            "team": ["KC", "KC"], "draft_number": [10, 200]})
    prior = projections.rookie_prior([])
    out = projections.preseason(last, None, rookies, prior).set_index("player_id")
    base = np.median([np.mean(range(21, 31)), np.mean(range(6, 16))])  # RB median ppg (players with 4+ games)
    assert out.loc["d", "proj_ppg"] == pytest.approx((40 + 4 * base) / 5)  # one 40-point game is mostly luck
    assert out.loc["a", "proj_ppg"] > out.loc["b", "proj_ppg"]
    assert out.loc["r1", "proj_ppg"] == prior[("RB", 0)] and out.loc["r2", "proj_ppg"] == prior[("WR", 2)]
    assert (out["proj_points"] == (out["proj_ppg"] * out["proj_games"]).round(2)).all()


def test_builtin_preseason_ignores_the_season_it_projects(data_dir, tmp_path):
    """Perturb every actual stat of 2024 in a copy of the data: the 2024 preseason projections do not move."""
    import shutil

    copy = tmp_path / "data"
    shutil.copytree(data_dir / "nflverse", copy / "nflverse")
    for other in ("projections", "sportsdataio"):
        if (data_dir / other).exists():
            (copy / other).symlink_to(data_dir / other)
    perturbed = 0
    for name in ("stats_player_week_2024.csv.gz", "player_stats_week_2024.csv"):
        p = copy / "nflverse" / name
        if not p.exists():  # the legacy file is real data's only
            continue
        df = pd.read_csv(p, low_memory=False)
        num = [c for c in df.columns if c.startswith(("passing_", "rushing_", "receiving_")) and df[c].dtype.kind in "if"
               and df[c].sum() > 0]
        df[num] = df[num] * 3 + 1  # the file's own points no longer follow: drop them (compared with nothing)
        df.drop(columns=["fantasy_points_ppr"], errors="ignore").to_csv(p, index=False)
        perturbed += len(num)
    assert perturbed > 10  # the stats that make the points were changed
    a = prepare_season(2024, "nflverse", data_dir).players.set_index("player_id")
    b = prepare_season(2024, "nflverse", copy).players.set_index("player_id")
    pool = a.index[a["in_draft_pool"]]
    pd.testing.assert_series_equal(a.loc[pool, "proj_points_builtin"], b.loc[pool, "proj_points_builtin"])


@pytest.mark.parametrize("season", [2023, 2024])
def test_projection_accuracy_is_reported_and_sane(real_data_dir, season):
    """Accuracy against real outcomes, and the real sources' ranking (only real data can show it)."""
    rep = projection_report(prepare_season(season, "nflverse", real_data_dir)).set_index(["source", "players"])
    assert {"builtin", "sportsdataio", "fantasypros", "adp (rank)"} <= set(rep.index.get_level_values(0))
    assert rep.loc[("builtin", "own"), "pearson"] > 0.6
    assert rep.loc[("builtin", "common"), "spearman"] > 0.3
    assert rep.loc[("sportsdataio", "own"), "pearson"] > rep.loc[("builtin", "common"), "pearson"]
    assert np.isfinite(rep.loc[("builtin", "own"), "mae"])
