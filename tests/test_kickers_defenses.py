"""Kickers (K) and team defenses (DST): data, scoring, tiers, the prepared season and the SportsData.io check."""
import numpy as np
import pandas as pd
import pytest

from ffbench_lib.sport import scoring
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.load import dump_config, parse_config
from ffbench_lib.data import schema
from ffbench_lib.data.base import DataError
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.parity import REASONS, dst_parity, parity_summary
from ffbench_lib.data.prepare import check_inputs, input_problems, prepare_season

ALL = ("QB", "RB", "WR", "TE", "K", "DST")
TEAMS = [{"name": n, "agent": {"kind": "bot", "strategy": "adp"}} for n in ("a", "b")]


@pytest.fixture(scope="module")
def prepared_kd_2024(data_dir, tmp_path_factory):
    return prepare_season(2024, "nflverse", data_dir, scoring="half_ppr", positions=ALL,
                          out=tmp_path_factory.mktemp("prep") / "kd2024")


# ------------------------------------------------------------------------------------------------ scoring

def test_tiers_score_only_rows_with_the_stat():
    pa = [0, 1, 6, 7, 13, 14, 20, 21, 27, 28, 34, 35, 50, np.nan]
    df = pd.DataFrame({"points_allowed": pa, "def_sacks": [1.0] * len(pa)})
    pts = scoring.fantasy_points(df, {"def_sacks": 1.0}, {"points_allowed": scoring.POINTS_ALLOWED_TIERS})
    # a sack each, plus the tier: 0:10, 1-6:7, 7-13:4, 14-20:1, 21-27:0, 28-34:-1, 35+:-4; no value: no tier
    assert pts.tolist() == [11, 8, 8, 5, 5, 2, 2, 1, 1, 0, 0, -3, -3, 1]
    # an offensive row has no points_allowed column at all: nothing from the tiers
    assert scoring.fantasy_points(pd.DataFrame({"receptions": [3.0]}), {"receptions": 1.0},
                                  {"points_allowed": scoring.POINTS_ALLOWED_TIERS}).tolist() == [3.0]


@pytest.mark.parametrize("tiers, message", [
    ({"points_allowed": [[0, 10], [6, 7]]}, "scoring.tiers.points_allowed: the last tier's upto must be null"),
    ({"points_allowed": [[6, 7], [0, 10], [None, 1]]}, "scoring.tiers.points_allowed: tier 1: upper bounds must ascend"),
    ({"points_allowed": [[0, "ten"], [None, 1]]}, "scoring.tiers.points_allowed: tier 0: points must be a finite"),
    ({"points_allowed": [[None, 1], [None, 2]]}, "tier 0: only the last tier may have no upper bound"),
    ({"pts_allowed": [[None, 1]]}, "scoring.tiers.pts_allowed: unknown stat 'pts_allowed'"),
    ({"points_allowed": 5}, "scoring.tiers.points_allowed: give a list of [upto, points] pairs"),
])
def test_bad_tiers_are_named(tiers, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        parse_config({"teams": TEAMS, "scoring": {"preset": "ppr", "tiers": tiers}})
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        scoring.check_tiers(tiers)


def test_league_keeps_only_its_positions_rules():
    plain = parse_config({"teams": TEAMS, "scoring": "half_ppr"})
    assert plain.scoring_weights == scoring.PRESETS["half_ppr"] and plain.scoring_tiers == {}
    assert "tiers" not in dump_config(plain)  # config.yaml of a league without tiers keeps its shape
    assert scoring.preset_name(plain.scoring_weights) == "half_ppr"
    full = parse_config({"teams": TEAMS, "scoring": "half_ppr", "roster": {"K": 1, "DST": 1}})
    w = full.scoring_weights
    assert w["fg_made_50_59"] == 5 and w["fg_missed_0_19"] == -1 and w["pat_made"] == 1 and w["def_sacks"] == 1
    assert full.scoring_tiers == {"points_allowed": [[0, 10], [6, 7], [13, 4], [20, 1], [27, 0], [34, -1], [None, -4]]}
    assert scoring.preset_name(w, full.scoring_tiers) == "half_ppr"
    kick = parse_config({"teams": TEAMS, "roster": {"K": 1}})
    assert "pat_made" in kick.scoring_weights and "def_sacks" not in kick.scoring_weights
    assert kick.scoring_tiers == {}
    with pytest.raises(ConfigError, match="no rule scores a DST stat"):  # ffbench_v1 has no DST rules: all 0
        parse_config({"teams": TEAMS, "scoring": "ffbench_v1", "roster": {"DST": 1}})
    custom = parse_config({"teams": TEAMS, "roster": {"DST": 1},
                           "scoring": {"preset": "ppr", "tiers": {"points_allowed": [[10, 5], [None, 0]]}}})
    assert custom.scoring_tiers == {"points_allowed": [[10.0, 5.0], [None, 0.0]]}
    assert "tiers" in dump_config(custom)
    # an explicit rule for a position the league lacks would be ignored: refused, naming it
    with pytest.raises(ConfigError, match="scoring.tiers.points_allowed: a DST stat, but the roster has no DST"):
        parse_config({"teams": TEAMS, "scoring": {"tiers": {"points_allowed": [[None, 1]]}}})
    with pytest.raises(ConfigError, match="scoring.weights.pat_made: a K stat, but the roster has no K"):
        parse_config({"teams": TEAMS, "scoring": {"preset": "ppr", "weights": {"pat_made": 2}}})
    # tiers only for stats no player row has (a receiver's row holds 0 passing yards, not "none")
    with pytest.raises(ConfigError, match="scoring.tiers.passing_yards: tiers are for team-level stats"):
        parse_config({"teams": TEAMS, "scoring": {"tiers": {"passing_yards": [[100, 0], [None, 3]]}}})


# -------------------------------------------------------------------------------------------- known totals

def kicker_points_by_hand(rows: pd.DataFrame) -> float:
    """Half-PPR kicker points from nflverse's raw kicking columns, written out (not through ``scoring``)."""
    c = rows.sum(numeric_only=True)
    return float(3 * (c["fg_made_0_19"] + c["fg_made_20_29"] + c["fg_made_30_39"]) + 4 * c["fg_made_40_49"]
                 + 5 * (c["fg_made_50_59"] + c["fg_made_60_"]) - sum(c[f"fg_missed_{b}"] for b in scoring.FG_BANDS)
                 + c["pat_made"] - c["pat_missed"])


def defense_points_by_hand(row) -> float:
    """Sack 1, interception 2, fumble recovered 2, TD 6, safety 2, blocked kick 2, and the points-allowed tier."""
    pa = row["points_allowed"]
    tier = next(pts for upto, pts in ((0, 10), (6, 7), (13, 4), (20, 1), (27, 0), (34, -1), (None, -4))
                if upto is None or pa <= upto)
    return float(row["def_sacks"] + 2 * row["def_interceptions"] + 2 * row["def_fumbles_recovered"]
                 + 6 * (row["def_tds"] + row["special_teams_tds"]) + 2 * row["def_safeties"]
                 + 2 * row["def_blocked_kicks"] + tier)


def raw_regular(root, season=2024):
    raw = pd.read_csv(root / "nflverse" / f"stats_player_week_{season}.csv.gz", low_memory=False)
    return raw[raw["season_type"] == "REG"]


def test_kicker_season_points_by_hand(data_dir, prepared_kd_2024):
    """Every kicker's season in the prepared weeks is his raw kicking lines scored by hand, game by game."""
    raw = raw_regular(data_dir)
    w = prepared_kd_2024.weekly
    kickers = w[w["position"] == "K"]
    assert kickers["player_id"].nunique() >= 32
    for pid, mine in kickers.groupby("player_id"):
        lines = raw[raw["player_id"] == pid]
        assert len(mine) == len(lines) and set(mine["week"]) == set(lines["week"]), pid
        assert mine["fantasy_points"].sum() == pytest.approx(kicker_points_by_hand(lines)), pid


def test_defense_week_by_hand(data_dir, prepared_kd_2024):
    """A defense's week (one with a touchdown and a blocked kick, if any) scored by hand, and its numbers as the
    raw team file says: its own sacks, interceptions and TDs, the kicks its opponent had blocked, and the
    opponent's final score as points allowed."""
    w = prepared_kd_2024.weekly
    d = w[w["position"] == "DST"]
    assert len(d) == 32 * 17  # 18 weeks, one bye each
    for _, row in d.iterrows():
        assert row["fantasy_points"] == pytest.approx(defense_points_by_hand(row)), (row["player_id"], row["week"])
    row = d.sort_values(["def_tds", "def_blocked_kicks", "def_sacks", "player_id", "week"]).iloc[-1]
    assert row["def_tds"] >= 1 and row["player_name"] == f"{row['team']} D/ST" and row["player_id"] == f"DST:{row['team']}"
    t = pd.read_csv(data_dir / "nflverse" / "stats_team_week_2024.csv")
    mine = t[(t["week"] == row["week"]) & (t["team"] == row["team"])].iloc[0]
    opp = t[(t["week"] == row["week"]) & (t["team"] == row["opponent_team"])].iloc[0]
    assert (mine["def_sacks"], mine["def_interceptions"], mine["def_tds"]) == (
        row["def_sacks"], row["def_interceptions"], row["def_tds"])
    assert opp["fg_blocked"] + opp["pat_blocked"] == row["def_blocked_kicks"]
    games = pd.read_csv(next((data_dir / "nflverse").glob("games_*.csv")))
    g = games[(games["season"] == 2024) & (games["week"] == row["week"])
              & ((games["home_team"] == row["team"]) | (games["away_team"] == row["team"]))].iloc[0]
    opp_score = g["home_score"] if g["home_team"] == row["opponent_team"] else g["away_score"]
    assert row["points_allowed"] == opp_score


@pytest.fixture(scope="module")
def real_kd_2024(real_data_dir, tmp_path_factory):
    return prepare_season(2024, "nflverse", real_data_dir, scoring="half_ppr", positions=ALL,
                          out=tmp_path_factory.mktemp("prep") / "real-kd2024")


def test_known_real_kicker_and_defense_totals(real_data_dir, real_kd_2024):
    """Real 2024 numbers checked by hand: Brandon Aubrey's season, the Rams D/ST at Seattle in week 9."""
    raw = raw_regular(real_data_dir)
    k = raw[raw["player_display_name"] == "Brandon Aubrey"]
    # 3 * (0 + 4 + 8) + 4 * 14 + 5 * (12 + 2) - (2 + 1 + 2) + 30 - 0
    assert kicker_points_by_hand(k) == 36 + 56 + 70 - 5 + 30 == 187
    w = real_kd_2024.weekly
    aubrey = w[w["player_id"] == k["player_id"].iloc[0]]
    assert len(aubrey) == 17 and set(aubrey["position"]) == {"K"}
    assert aubrey["fantasy_points"].sum() == pytest.approx(187.0)
    # won 26-20: 7 sacks, 3 interceptions, 1 interception-return TD, an extra point blocked, 20 points allowed
    row = w[(w["player_id"] == "DST:LA") & (w["week"] == 9)].iloc[0]
    assert (row["player_name"], row["position"], row["team"], row["opponent_team"]) == ("LA D/ST", "DST", "LA", "SEA")
    assert row[["def_sacks", "def_interceptions", "def_fumbles_recovered", "def_tds", "special_teams_tds",
                "def_safeties", "def_blocked_kicks", "points_allowed"]].tolist() == [7, 3, 0, 1, 0, 0, 1, 20]
    assert row["fantasy_points"] == defense_points_by_hand(row) == 7 + 6 + 6 + 2 + 1 == 22
    pl = real_kd_2024.players.set_index("player_id")
    assert pl.loc["DST:SF", "adp"] == pytest.approx(129.3)
    k = pl[pl["position"] == "K"]
    assert k.loc[k["adp"].idxmin(), "player_name"] == "Brandon Aubrey" and k.loc["00-0037692", "prev_points"] == 177.0


def test_prepared_kickers_and_defenses(data_dir, prepared_kd_2024):
    p = prepared_kd_2024
    assert p.positions == ALL and p.manifest["positions"] == list(ALL) and "points_allowed" in p.tiers
    assert list(p.weekly.columns) == [*schema.weekly_columns(ALL), "fantasy_points"]
    pl = p.players.set_index("player_id")
    dst = pl[pl["position"] == "DST"]
    assert len(dst) == 32 and set(dst["team"]) == schema.NFL.team_codes and dst["in_draft_pool"].all()
    assert (dst["prev_games"] == 17).all() and dst["bye_week"].notna().all()
    assert dst["rookie"].sum() == 0
    # ADP from FantasyPros where it lists them (D/ST rows are named by team, "KC Chiefs"), else NaN
    adp = pd.read_csv(data_dir / "projections" / "preseason_adp_2021_2024.csv").query("season == 2024")
    listed = adp[adp["position"] == "DST"].sort_values("adp")
    top = listed.iloc[0]
    team = top["player_name"].split()[0]
    assert pl.loc[f"DST:{team}", "adp"] == pytest.approx(top["adp"])
    assert pl.loc[f"DST:{team}", "player_name"] == f"{team} D/ST"
    assert dst["adp"].notna().sum() == len(listed) > 0 and dst["adp"].isna().sum() == 32 - len(listed)
    k = pl[pl["position"] == "K"]
    k_listed = adp[adp["position"] == "K"].sort_values("adp")
    assert k["adp"].notna().sum() == len(k_listed) > 0
    best = k["adp"].idxmin()
    assert k.loc[best, "player_name"] == k_listed["player_name"].iloc[0]
    # built-in projections from earlier seasons (2023's stats_player file has kicking columns)
    veteran = k[~k["rookie"]].sort_values("prev_points").index[-1]
    prev = raw_regular(data_dir, 2023)
    assert k.loc[veteran, "prev_points"] == pytest.approx(kicker_points_by_hand(prev[prev["player_id"] == veteran]))
    assert k.loc[veteran, "prev_points"] > 100 and k.loc[veteran, "proj_points_builtin"] > 100
    assert (k.loc[k["rookie"], "proj_points_builtin"] > 0).all() and k["rookie"].any()  # the K rookie prior
    assert dst["proj_points_builtin"].between(50, 200).all()
    # third-party stat lines have no kicking or defense columns: no 0-point projection from them
    assert k["proj_points_sportsdataio"].isna().all() and dst["proj_points_fantasypros"].isna().all()
    # in-season projections, weeks < w only: week 1 is the preseason per game, week 2 moves with week 1
    wp = p.weekly_projections
    kc = wp[wp["player_id"] == "DST:KC"].set_index("week")
    assert len(kc) == 18 and kc.loc[1, "games_to_date"] == 0 and kc.loc[2, "games_to_date"] == 1
    assert kc.loc[1, "proj_points_builtin"] == pytest.approx(pl.loc["DST:KC", "proj_ppg_builtin"], abs=0.01)
    # offensive players score as in a league without K/DST
    off = p.weekly[p.weekly["position"].isin(schema.DEFAULT_POSITIONS)]
    assert (off["fantasy_points"] == scoring.fantasy_points(off, scoring.PRESETS["half_ppr"])).all()


def test_default_league_has_no_kickers_or_defenses(prepared_2024):
    assert set(prepared_2024.players["position"]) == set(schema.DEFAULT_POSITIONS)
    assert list(prepared_2024.weekly.columns) == [*schema.WEEKLY_COLUMNS, "fantasy_points"]
    assert "positions" not in prepared_2024.manifest and "tiers" not in prepared_2024.manifest


# ------------------------------------------------------------------------------------------- clear errors

@pytest.fixture(scope="module")
def legacy_dir(data_dir, tmp_path_factory):
    """The synthetic world with 2022 in nflverse's legacy ``player_stats_week_2022.csv``, which (as the real one)
    has no kicking columns."""
    from engine_helpers import data_copy

    root = data_copy(tmp_path_factory.mktemp("legacy"), data_dir, drop=("stats_player_week_2022.csv.gz",))
    (root / "projections").symlink_to(data_dir / "projections")
    raw = pd.read_csv(data_dir / "nflverse" / "stats_player_week_2022.csv.gz", low_memory=False)
    raw.drop(columns=[c for c in schema.KICKING_STATS if c in raw]).to_csv(
        root / "nflverse" / "player_stats_week_2022.csv", index=False)
    return root


def test_kickers_need_kicking_columns(legacy_dir):
    data_dir = legacy_dir
    with pytest.raises(DataError) as err:
        prepare_season(2022, "nflverse", data_dir, positions=("QB", "RB", "WR", "TE", "K"))
    msg = str(err.value)
    assert "player_stats_week_2022.csv lacks the kicking column(s) fg_made_0_19" in msg
    assert "stats_player_week_2022.csv.gz" in msg and "ffbench data download" in msg and "remove K" in msg
    # a league without kickers prepares 2022 as always
    assert input_problems(get_source("nflverse", data_dir), 2022) == []


def test_kicker_history_follows_allow_missing_history(legacy_dir, tmp_path):
    data_dir = legacy_dir
    src = get_source("nflverse", data_dir)
    problems = input_problems(src, 2023, positions=("QB", "RB", "WR", "TE", "K"))
    assert len(problems) == 1 and "season 2023 with K needs the 2022 K stats" in problems[0]
    assert "allow_missing_history" in problems[0]
    assert input_problems(src, 2023, positions=("QB", "RB", "WR", "TE", "K"), allow_missing_history=True) == []
    p = prepare_season(2023, "nflverse", data_dir, positions=("QB", "RB", "WR", "TE", "K"),
                       allow_missing_history=True, out=tmp_path / "prep")
    k = p.players[p.players["position"] == "K"]
    assert len(k) > 30 and (k["prev_points"] == 0).all()  # no kicker history, like a missing season
    assert p.weekly.loc[p.weekly["position"] == "K", "fantasy_points"].sum() > 3000


def test_defenses_need_team_stats(data_dir):
    problems = input_problems(get_source("nflverse", data_dir), 2025, positions=(*schema.DEFAULT_POSITIONS, "DST"),
                              allow_missing_history=True)
    assert any("stats_team_week_2025.csv missing" in p and "remove DST" in p for p in problems)


def test_validate_reports_kicker_and_defense_problems(legacy_dir):
    league = parse_config({"teams": TEAMS, "season": 2022, "roster": {"K": 1, "DST": 1},
                           "data": {"dir": str(legacy_dir)}})
    with pytest.raises(DataError, match="lacks the kicking column"):
        check_inputs(league)
    check_inputs(parse_config({"teams": TEAMS, "season": 2024, "roster": {"K": 1, "DST": 1},
                               "data": {"dir": str(legacy_dir)}}))


def test_sportsdataio_defenses_yes_kickers_no(real_data_dir):
    data_dir = real_data_dir
    with pytest.raises(DataError, match="kickers .K. cannot be scored exactly.*use data.source nflverse"):
        prepare_season(2024, "sportsdataio", data_dir, positions=("QB", "RB", "WR", "TE", "K"))
    p = prepare_season(2024, "sportsdataio", data_dir, scoring="half_ppr", positions=(*schema.DEFAULT_POSITIONS, "DST"))
    d = p.weekly[p.weekly["position"] == "DST"]
    assert len(d) == 32 * 16  # weeks 1-17, a bye has no row
    # SportsData.io's final scores agree with the schedule's (nflverse) points allowed
    nv = get_source("nflverse", data_dir).defense(2024)
    m = d.merge(nv, on=["player_id", "week"], suffixes=("", "_nv"))
    assert len(m) == len(d) and (m["points_allowed"] == m["points_allowed_nv"]).all()


# ------------------------------------------------------------------------------------ SportsData.io check

#: measured 2022/2023/2024 match rates of our DST points (SportsData.io-matching rules) against theirs
MATCH_FLOOR = {2022: 0.88, 2023: 0.869, 2024: 0.896}


def test_dst_parity_with_sportsdataio(real_data_dir):
    data_dir = real_data_dir
    summary = parity_summary(data_dir).set_index("season")
    for season, floor in MATCH_FLOOR.items():
        row = summary.loc[season]
        assert row["rows"] >= 510 and row["match_rate"] >= floor, (season, row["match_rate"])
        assert row["unclassified"] == 0  # every mismatch is explained by the stats that differ
    m = dst_parity(data_dir, 2024)
    bad = m[~m["match"]]
    assert (bad["reasons"] != "").all() and (bad["unexplained"] == 0).all()
    assert set(bad["reasons"].str.split(";").explode()) <= set(REASONS)
    # the largest class: our points allowed is the final score, theirs leaves out return TDs
    others = [r for r in REASONS if r != "points_allowed_return_tds"]
    assert (summary["points_allowed_return_tds"] > summary[others].max(axis=1)).all()


def test_cli_prepare_and_validate_with_kickers_and_defenses(data_dir, legacy_dir, tmp_path):
    import subprocess
    import sys

    import yaml

    cfg = tmp_path / "kd.yaml"
    cfg.write_text(yaml.safe_dump({"teams": TEAMS, "season": 2024, "roster": {"K": 1, "DST": 1},
                                   "scoring": "half_ppr", "data": {"dir": str(data_dir)}}))
    out = tmp_path / "prep"
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "data", "prepare", "--season", "2024", "--data-dir",
                        str(data_dir), "--config", str(cfg), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    players = pd.read_parquet(out / "players.parquet")
    assert {"K", "DST"} <= set(players["position"])
    cfg.write_text(cfg.read_text().replace("season: 2024", "season: 2022").replace(str(data_dir), str(legacy_dir)))
    bad = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(cfg)], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "lacks the kicking column(s)" in bad.stderr and "remove K" in bad.stderr
