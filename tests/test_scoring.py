import numpy as np
import pandas as pd
import pytest

from ffbench_lib.sport import scoring
from ffbench_lib.data import schema
from ffbench_lib.data.sources import get_source


@pytest.mark.parametrize("season", [2021, 2022, 2023, 2024])
def test_ppr_reproduces_nflverse_every_row(real_data_dir, season):
    """Scoring parity with nflverse's own totals, on its legacy files (real data only)."""
    raw = pd.read_csv(real_data_dir / "nflverse" / f"player_stats_week_{season}.csv", low_memory=False)
    df = schema.conform_weekly(raw.rename(columns=schema.LEGACY_RENAMES))
    raw = raw.sort_values(["season", "week", "player_id"], kind="stable").reset_index(drop=True)
    assert len(df) == len(raw) > 5000 and (df["player_id"] == raw["player_id"]).all()
    pts = scoring.fantasy_points(df, scoring.PRESETS["ppr"])
    mismatches = (pts - raw["fantasy_points_ppr"].to_numpy()).abs() > 1e-9
    assert mismatches.sum() == 0, df.loc[mismatches, ["player_name", "week"]].head()
    std = scoring.fantasy_points(df, scoring.PRESETS["standard"])
    assert ((std - raw["fantasy_points"].to_numpy()).abs() > 1e-9).sum() == 0


@pytest.mark.parametrize("season", [2023, 2024])
@pytest.mark.parametrize("root", ["data_dir", pytest.param("real_data_dir", marks=pytest.mark.realdata)])
def test_ppr_reproduces_current_schema_file(request, root, season):
    w = get_source("nflverse", request.getfixturevalue(root)).weekly(season)
    pts = scoring.fantasy_points(w, scoring.PRESETS["ppr"])
    assert (pts - w["fantasy_points_ppr"]).abs().max() < 1e-9


def test_sportsdataio_match_rate(real_data_dir):
    """SportsData.io's own FantasyPointsPPR leaves out return TDs; everything else agrees."""
    w = get_source("sportsdataio", real_data_dir).weekly(2024)
    w = w[w["position"].isin(schema.DEFAULT_POSITIONS)]  # offensive players: kickers have no PPR line
    pts = scoring.fantasy_points(w, scoring.PRESETS["ppr"])
    ok = (pts - w["fantasy_points_ppr"]).abs() < 0.005
    assert ok.mean() > 0.995
    # every mismatch is explained by a special-teams TD
    assert (w.loc[~ok, "special_teams_tds"] > 0).mean() > 0.9


def test_known_season_totals(real_data_dir):
    nv = get_source("nflverse", real_data_dir)
    w23 = nv.weekly(2023)
    cmc = w23[w23["player_name"] == "Christian McCaffrey"]
    assert scoring.fantasy_points(cmc, scoring.PRESETS["ppr"]).sum() == pytest.approx(391.3, abs=0.01)
    w24 = nv.weekly(2024)
    assert w24.loc[w24["player_name"] == "Saquon Barkley", "rushing_yards"].sum() == 2005
    sd = get_source("sportsdataio", real_data_dir).weekly(2024)  # weeks 1-17 only: Barkley sat out week 18
    assert sd.loc[sd["player_name"] == "Saquon Barkley", "rushing_yards"].sum() == 2005


def test_presets_relations():
    df = pd.DataFrame({"receptions": [5.0], "passing_2pt_conversions": [1.0], "special_teams_tds": [1.0],
                       "receiving_yards": [50.0], "fumbles_lost": [1.0]})
    ppr = scoring.fantasy_points(df, scoring.PRESETS["ppr"])[0]
    assert ppr == pytest.approx(5 + 2 + 6 + 5 - 2)
    assert scoring.fantasy_points(df, scoring.PRESETS["half_ppr"])[0] == pytest.approx(ppr - 2.5)
    assert scoring.fantasy_points(df, scoring.PRESETS["standard"])[0] == pytest.approx(ppr - 5)
    assert scoring.fantasy_points(df, scoring.PRESETS["ffbench_v1"])[0] == pytest.approx(ppr - 8)


def test_explicit_weights_override_and_reject_unknown():
    w = scoring.resolve_weights("ppr", {"passing_tds": 6})
    assert w["passing_tds"] == 6 and w["receptions"] == 1
    assert scoring.resolve_weights(None, {"receptions": 2}) == {"receptions": 2.0}
    with pytest.raises(ValueError, match="scoring.weights.passing_td: unknown stat"):
        scoring.resolve_weights("ppr", {"passing_td": 6})
    with pytest.raises(ValueError, match="unknown preset"):
        scoring.resolve_weights("full_ppr")


def test_missing_columns_and_nans_score_zero():
    df = pd.DataFrame({"rushing_yards": [np.nan, 10.0]})
    assert scoring.fantasy_points(df, scoring.PRESETS["ppr"]).tolist() == [0.0, 1.0]
