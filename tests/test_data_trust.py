"""Data a run must not trust: blank stat cells, stats that disagree with the file's own points, another season's
file under this season's name, and scoring tiers that can never apply (issue #25)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine_helpers import data_copy
from ffbench_lib.sport import scoring
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.load import parse_config
from ffbench_lib.data.base import DataError
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.prepare import input_problems

CURRENT_24 = "stats_player_week_2024.csv.gz"
TEAMS = [{"name": n, "agent": {"kind": "bot", "strategy": "adp"}} for n in ("a", "b")]
DST_ROSTER = {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "DST": 1, "FLEX": 1, "BENCH": 5}


def _week1_player(data_dir: Path, position: str, stat: str) -> tuple[str, str, float]:
    """(id, full name, the file's PPR points) of the first player of ``position`` with ``stat`` in week 1."""
    df = pd.read_csv(data_dir / "nflverse" / CURRENT_24, low_memory=False)
    r = df[(df["week"] == 1) & (df["season_type"] == "REG") & (df["position"] == position) & (df[stat] > 0)].iloc[0]
    return r["player_id"], r["player_display_name"], float(r["fantasy_points_ppr"])


def _regular_rows(data_dir: Path) -> int:
    df = pd.read_csv(data_dir / "nflverse" / CURRENT_24, usecols=["season_type"], low_memory=False)
    return int((df["season_type"] == "REG").sum())


def _text(path: Path) -> pd.DataFrame:
    """Every cell as the file's exact text, so what is not edited is written back unchanged."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def _edited(path: Path, out: Path, edit) -> None:
    """``path`` after ``edit`` (in place, or returning the new table) written to ``out``."""
    df = _text(path)
    new = edit(df)
    df = df if new is None else new
    df.to_csv(out, index=False, compression="gzip" if out.suffix == ".gz" else None)


def _week1(df: pd.DataFrame, player: str) -> pd.Series:
    return (df["player_id"] == player) & (df["week"] == "1") & (df["season_type"] == "REG")


def _nflverse_2024(tmp_path, data_dir, edit) -> Path:
    root = data_copy(tmp_path, data_dir, drop=(CURRENT_24,))
    _edited(data_dir / "nflverse" / CURRENT_24, root / "nflverse" / CURRENT_24, edit)
    return root


def _sdio_copy(tmp_path, data_dir, season=2024) -> tuple[Path, Path]:
    """nflverse symlinks plus a SportsData.io season folder of symlinks (to replace some of)."""
    from test_data_sources import link_season

    root = data_copy(tmp_path, data_dir)
    return root, link_season(data_dir, root, season)


def _prepare_cli(root: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ffbench_lib", "data", "prepare", "--season", "2024", "--data-dir",
                           str(root), "--out", str(out), *args], capture_output=True, text=True)


# --------------------------------------------------------------------------------------------- blank cells

def test_blank_stat_cells_are_refused_by_prepare_naming_the_rows(tmp_path, data_dir):
    """Blank passing_yards / receptions used to score as 0 (real Rodgers week 1: 1.9 instead of 8.58), exit 0."""
    (qb, qb_name, _), (wr, wr_name, _) = (_week1_player(data_dir, "QB", "passing_yards"),
                                          _week1_player(data_dir, "WR", "receptions"))

    def blank(df):
        df.loc[_week1(df, qb), "passing_yards"] = ""
        df.loc[_week1(df, wr), "receptions"] = ""
    root = _nflverse_2024(tmp_path, data_dir, blank)
    r = _prepare_cli(root, tmp_path / "p")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    for text in (CURRENT_24, "column passing_yards is blank in 1 of", f"player {qb} ({qb_name}) week 1",
                 "column receptions is blank in 1 of", f"player {wr} ({wr_name}) week 1",
                 "a blank stat would score as 0", "fix the file or replace it with a complete copy"):
        assert text in r.stderr, r.stderr
    assert not (tmp_path / "p" / "weekly.parquet").exists()


def test_a_blank_cell_of_a_sportsdataio_file_is_refused(tmp_path, real_data_dir):
    root, season_dir = _sdio_copy(tmp_path, real_data_dir)
    path = season_dir / "3" / "PlayerGameStatsByWeek.csv"
    real = path.resolve()
    path.unlink()

    def blank(df):
        df.loc[df.index[(df["Played"] == "1") & (df["SeasonType"] == "1")][:2], "Receptions"] = ""
    _edited(real, path, blank)
    with pytest.raises(DataError, match=r"sportsdataio weekly stats 2024: .*column receptions is blank in 2 of "
                                        r"\d+ row\(s\).*week 3"):
        get_source("sportsdataio", root).weekly(2024)


def test_a_stat_the_source_never_gives_is_not_a_blank(real_data_dir):
    """A column blank in every row is one the source does not break down (legacy files: no kicking columns,
    SportsData.io: no fumbles by kind): NaN in the canonical table, as before. (Real files' quirks.)"""
    legacy = get_source("nflverse", real_data_dir).weekly(2022)
    assert legacy["fg_made_0_19"].isna().all() and legacy["passing_yards"].notna().all()
    sd = get_source("sportsdataio", real_data_dir).weekly(2024)
    assert sd["rushing_fumbles_lost"].isna().all() and sd["fumbles_lost"].notna().all()


# --------------------------------------------------------------------------------- the file's own points

def test_stats_that_disagree_with_the_files_own_points_are_refused(tmp_path, data_dir):
    """A changed stat (not blank, not negative) passes every other rule; the file's fantasy_points_ppr catches it."""
    wr, wr_name, points = _week1_player(data_dir, "WR", "receiving_yards")

    def change(df):
        row = _week1(df, wr)
        df.loc[row, "receiving_yards"] = str(int(df.loc[row, "receiving_yards"].iloc[0]) + 40)
    root = _nflverse_2024(tmp_path, data_dir, change)
    with pytest.raises(DataError) as err:
        get_source("nflverse", root).weekly(2024)
    msg = str(err.value)
    for text in (f"our PPR points differ from the file's own fantasy_points_ppr in 1 of {_regular_rows(data_dir)} "
                 "row(s) for no known reason", f"player {wr} ({wr_name}) week 1: ours {points + 4:g}",
                 f", the file's {points:g}",
                 "fix the file or replace it"):
        assert text in msg, msg
    assert input_problems(get_source("nflverse", root), 2024) and "fantasy_points_ppr" in input_problems(
        get_source("nflverse", root), 2024)[0]


def test_sportsdataio_points_differ_only_for_known_reasons(tmp_path, real_data_dir):
    """Return TDs, kickers and defenders are classified; a changed receiving line is not."""
    root, season_dir = _sdio_copy(tmp_path, real_data_dir)
    path = season_dir / "2" / "PlayerGameStatsByWeek.csv"
    real = path.resolve()
    path.unlink()
    df = _text(real)
    row = df.index[(df["Played"] == "1") & (df["Position"] == "WR") & (df["FantasyPointsPPR"].astype(float) > 5)][0]
    df.loc[row, "ReceivingYards"] = str(float(df.loc[row, "ReceivingYards"]) + 40)
    df.to_csv(path, index=False)
    with pytest.raises(DataError, match=rf"differ from the file's own FantasyPointsPPR in 1 of \d+ row\(s\) for no "
                                        rf"known reason .*\({df.loc[row, 'Name']}\) week 2: ours "):
        get_source("sportsdataio", root).weekly(2024)


def test_every_real_season_prepares_and_its_parity_is_known(real_data_dir):
    """nflverse's fantasy_points_ppr is our ppr in every row of every season; SportsData.io's differs only for the
    classified reasons; every team-defense season passes the blank rule too."""
    data_dir = real_data_dir
    nv = get_source("nflverse", data_dir)
    for season in (2021, 2022, 2023, 2024, 2025):
        p = nv.ppr_parity(season)
        assert p["column"] == "fantasy_points_ppr" and p["rows_compared"] == p["matching"] > 5000
        assert p["classified_mismatches"] == {}
        if season < 2025:
            assert len(nv.defense(season)) > 500
    sd = get_source("sportsdataio", data_dir)
    for season in (2022, 2023, 2024):
        p = sd.ppr_parity(season)
        m = p["classified_mismatches"]
        assert p["rows_compared"] == p["matching"] + sum(m.values()) and set(m) <= set(p["reasons"])
        assert 5 <= m["return_tds"] <= 20 and m["not_a_ppr_position"] > 8000
        assert len(sd.defense(season)) > 500
    assert sd.ppr_parity(2022)["classified_mismatches"]["cancelled_game"] == 26  # BUF-CIN, 2 January 2023
    assert sd.ppr_parity(2023)["classified_mismatches"]["kicking"] == 1  # a running back's field goal


def test_the_prepared_manifest_records_the_parity(prepared_2024, data_dir):
    rows = _regular_rows(data_dir)
    assert prepared_2024.manifest["ppr_parity"] == {"column": "fantasy_points_ppr", "rows_compared": rows,
                                                    "matching": rows, "classified_mismatches": {}}


def test_the_real_prepared_manifests_record_the_parity(real_prepared_2024, prepared_2024_sdio):
    assert real_prepared_2024.manifest["ppr_parity"] == {"column": "fantasy_points_ppr", "rows_compared": 18110,
                                                         "matching": 18110, "classified_mismatches": {}}
    p = prepared_2024_sdio.manifest["ppr_parity"]
    assert p["column"] == "FantasyPointsPPR" and p["classified_mismatches"]["return_tds"] == 11
    assert "return TDs" in p["reasons"]["return_tds"]


def test_a_file_without_points_of_its_own_is_compared_with_nothing(tmp_path, data_dir):
    root = _nflverse_2024(tmp_path, data_dir, lambda df: df.drop(columns=["fantasy_points_ppr"]))
    src = get_source("nflverse", root)
    assert src.ppr_parity(2024) == {"column": None, "rows_compared": 0, "note": "the file has no PPR points of its own"}
    assert len(src.weekly(2024)) == _regular_rows(data_dir)


# ----------------------------------------------------------------------------------- another season's file

def test_another_seasons_weekly_file_is_refused_by_prepare(tmp_path, data_dir):
    """The 2023 file saved as 2024's used to be refused as 'no rows for CLE, SEA, TB in week 5'."""
    root = data_copy(tmp_path, data_dir, drop=(CURRENT_24,))
    (root / "nflverse" / CURRENT_24).symlink_to(data_dir / "nflverse" / "stats_player_week_2023.csv.gz")
    r = _prepare_cli(root, tmp_path / "p")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    for text in (f"{CURRENT_24} holds season 2023 rows", "its season column), not 2024: it is another season's file",
                 "replace it with the 2024 one", "ffbench data download --seasons 2024"):
        assert text in r.stderr, r.stderr
    assert "no rows for" not in r.stderr


@pytest.mark.parametrize("name, other, read", [
    pytest.param("player_stats_week_2024.csv", "player_stats_week_2023.csv", lambda s: s.weekly(2024),
                 marks=pytest.mark.realdata),  # the legacy files are the real data's only
    ("stats_team_week_2024.csv", "stats_team_week_2023.csv", lambda s: s.defense(2024)),
    ("injuries_2024.csv", "injuries_2023.csv", lambda s: s.injuries(2024)),
    ("roster_2024.csv", "roster_2023.csv", lambda s: s.rookies(2024)),
], ids=["legacy-weekly", "team-stats", "injuries", "roster"])
def test_another_seasons_nflverse_file_is_refused(request, tmp_path, data_dir, name, other, read):
    if name.startswith("player_stats"):
        data_dir = request.getfixturevalue("real_data_dir")
    drop = (name, CURRENT_24) if name.startswith("player_stats") else (name,)  # the legacy file is read if alone
    root = data_copy(tmp_path, data_dir, drop=drop)
    (root / "nflverse" / name).symlink_to(data_dir / "nflverse" / other)
    with pytest.raises(DataError, match=rf"{name} holds season 2023 rows \(\d+ of \d+, its season column\), not "
                                        r"2024: it is another season's file; replace it with the 2024 one"):
        read(get_source("nflverse", root))


@pytest.mark.parametrize("rel", ["5/PlayerGameStatsByWeek.csv", "5/FantasyDefenseByGame.csv", "Byes.csv",
                                 "PlayerSeasonProjectionStats.csv", "5/PlayerGameProjectionStatsByWeek.csv"])
def test_another_seasons_sportsdataio_file_is_refused(tmp_path, real_data_dir, rel):
    data_dir = real_data_dir
    root, season_dir = _sdio_copy(tmp_path, data_dir)
    (season_dir / rel).unlink()
    (season_dir / rel).symlink_to(data_dir / "sportsdataio" / "2023" / rel)
    src = get_source("sportsdataio", root)
    read = {"PlayerSeasonProjectionStats.csv": lambda: src.season_projections(2024),
            "5/PlayerGameProjectionStatsByWeek.csv": lambda: src.weekly_projections(2024)}.get(rel, lambda: src.check(2024))
    with pytest.raises(DataError, match=rf"{rel.split('/')[-1]} holds season 2023 rows \(\d+ of \d+, its Season "
                                        r"column\), not 2024: .*the SportsData.io export of 2024"):
        read()


# ------------------------------------------------------------------------------------------ scoring tiers

def test_a_points_allowed_tier_no_team_can_reach_is_refused():
    with pytest.raises(ConfigError) as err:
        parse_config({"teams": TEAMS, "roster": DST_ROSTER,
                      "scoring": {"tiers": {"points_allowed": [[-5, 10], [None, 0]]}}})
    assert err.value.problems == ["scoring.tiers.points_allowed: tier 0: upto -5 is below 0, the lowest "
                                  "points_allowed can be, so the tier can never apply; give it an upto of 0 or more, "
                                  "e.g. [[0, 10], [6, 7], [null, -4]]"]
    with pytest.raises(ValueError, match=r"scoring.tiers.points_allowed: tier 0: upto -0.5 is below 0"):
        scoring.check_tiers({"points_allowed": [[-0.5, 10], [3, 1], [None, 0]]})
    # a shutout tier (upto 0) is the lowest that can apply, and the presets' own tiers pass
    parse_config({"teams": TEAMS, "roster": DST_ROSTER, "scoring": {"tiers": {"points_allowed": [[0, 10], [None, 0]]}}})
    assert scoring.check_tiers({"points_allowed": scoring.POINTS_ALLOWED_TIERS})
    assert scoring.lowest_value("passing_yards") == float("-inf") and scoring.lowest_value("def_sacks") == 0
