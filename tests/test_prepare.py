import json
import subprocess
import sys

import pandas as pd
import pytest

from ffbench_lib.sport import scoring
from ffbench_lib.data import schema
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.download import download, parse_seasons
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.prepare import TABLES, load_prepared, prepare_season
from ffbench_lib.data.base import DataError

from engine_helpers import data_copy


def games_file(root) -> str:
    """The schedules file's name (games_1999_2025.csv in the real data, games_synthetic.csv in the synthetic)."""
    return sorted(p.name for p in (root / "nflverse").glob("games*.csv"))[-1]


def crosswalk_file(root) -> str:
    return sorted(p.name for p in (root / "nflverse").glob("db_playerids*.csv"))[-1]


FULL = (*schema.DEFAULT_POSITIONS, "K", "DST")


@pytest.fixture(scope="module")
def full_2024(data_dir):
    """The synthetic 2024 season with kickers and defenses, prepared once for this module."""
    return prepare_season(2024, "nflverse", data_dir, positions=FULL)


@pytest.mark.parametrize("fixture", ["prepared_2024", pytest.param("real_prepared_2024", marks=pytest.mark.realdata),
                                     pytest.param("prepared_2024_sdio", marks=pytest.mark.realdata)])
def test_prepared_tables(request, fixture, data_dir):
    p = request.getfixturevalue(fixture)
    pl = p.players
    # a league without K/DST (the default positions) has no kicker or defense rows or columns
    assert pl["player_id"].is_unique and pl["position"].isin(schema.DEFAULT_POSITIONS).all()
    assert list(p.weekly.columns) == [*schema.WEEKLY_COLUMNS, "fantasy_points"]
    assert p.weekly["position"].isin(schema.DEFAULT_POSITIONS).all() and p.tiers == {}
    pool = pl[pl["in_draft_pool"]]
    real = fixture != "prepared_2024"
    assert len(pool) > (600 if real else 300)
    for col in ("player_name", "position", "proj_points", "prev_points", "prev_games"):
        assert pool[col].notna().all(), col
    top = pool.sort_values("adp").head(120)
    assert top["bye_week"].notna().all() and top["team"].notna().all()
    # previous-season points are the 2023 points under the league scoring
    if real:
        cmc = pl[pl["player_name"] == "Christian McCaffrey"].iloc[0]
        assert cmc["prev_points"] == pytest.approx(391.3 + (21.2 if p.source == "nflverse" else 0), abs=30)
        assert cmc["adp"] <= 2
    else:
        w23 = NflverseDir(data_dir).weekly(2023)
        w23 = w23.assign(pts=scoring.fantasy_points(w23, p.scoring))
        veterans = pool[pool["prev_games"] > 0].sort_values("adp").head(20)
        ours = w23.groupby("player_id")["pts"].sum().round(2).reindex(veterans["player_id"]).to_numpy()
        assert veterans["prev_points"].to_numpy() == pytest.approx(ours, abs=0.01)
    w = p.weekly
    assert (w["fantasy_points"].round(2) == w["fantasy_points"]).all()
    assert not w.duplicated(["player_id", "week"]).any()
    wp = p.weekly_projections
    assert not wp.duplicated(["player_id", "week"]).any() and wp["proj_points_builtin"].notna().all()
    assert set(p.injuries["report_status"]) >= {"Out", "Questionable"}
    assert len(p.byes) == 32 and len(p.schedule) in (256, 272)


def test_sportsdataio_weekly_projections_scored(prepared_2024_sdio, real_data_dir):
    wp = prepared_2024_sdio.weekly_projections
    assert wp["proj_points_sportsdataio"].notna().mean() > 0.5
    # each player-week gets the points of its own projected line (kickers' rows in the file once shifted
    # every later row's points onto another player)
    sp = get_source("sportsdataio", real_data_dir).weekly_projections(2024)
    sp = sp[sp["position"].isin(["QB", "RB", "WR", "TE"])].drop_duplicates(["week", "player_id"])
    sp = sp.assign(direct=scoring.fantasy_points(sp, scoring.PRESETS["ppr"]))
    m = wp.merge(sp[["week", "player_id", "direct"]], on=["week", "player_id"])
    assert len(m) > 10000 and (m["direct"] - m["proj_points_sportsdataio"]).abs().max() < 1e-9


def test_write_is_idempotent_and_atomic(data_dir, tmp_path):
    out = tmp_path / "prep"
    first = prepare_season(2024, "nflverse", data_dir, out=out)
    assert {f.name for f in out.iterdir()} == {f"{t}.parquet" for t in TABLES} | {"manifest.json"}
    mtimes = {f.name: f.stat().st_mtime_ns for f in out.iterdir()}
    again = prepare_season(2024, "nflverse", data_dir, out=out)  # same fingerprint: nothing rewritten
    assert mtimes == {f.name: f.stat().st_mtime_ns for f in out.iterdir()}
    forced = prepare_season(2024, "nflverse", data_dir, out=out, force=True)
    for t in TABLES:
        pd.testing.assert_frame_equal(getattr(first, t), pd.read_parquet(out / f"{t}.parquet"), check_dtype=False)
        pd.testing.assert_frame_equal(getattr(again, t), getattr(forced, t), check_dtype=False)
    assert not list(out.glob(".*.tmp"))
    m = json.loads((out / "manifest.json").read_text())
    assert m["rows"]["players"] == len(first.players) and m["fingerprint"] == first.manifest["fingerprint"]
    # a different scoring is a different fingerprint
    half = prepare_season(2024, "nflverse", data_dir, scoring="half_ppr", out=out)
    assert half.manifest["fingerprint"] != m["fingerprint"]
    assert load_prepared(out).scoring["receptions"] == 0.5


def test_unknown_projection_source_for_season_is_clear(data_dir):
    with pytest.raises(DataError, match="data.projections: 'fantasypros' has no preseason projections for 2021"):
        prepare_season(2021, "nflverse", data_dir, projection_source="fantasypros")


def test_selected_projection_source_fills_with_builtin(real_data_dir):
    p = prepare_season(2024, "nflverse", real_data_dir, projection_source="fantasypros").players
    fp = p["proj_points_fantasypros"].notna()
    assert (p.loc[fp, "proj_points"] == p.loc[fp, "proj_points_fantasypros"]).all()
    assert (p.loc[~fp, "proj_source"] == "builtin").all()


def test_cli_prepare(data_dir, tmp_path):
    out = tmp_path / "cli"
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "data", "prepare", "--season", "2023", "--source",
                        "nflverse", "--data-dir", str(data_dir), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "players" in r.stdout and (out / "manifest.json").exists()
    bad = subprocess.run([sys.executable, "-m", "ffbench_lib", "data", "prepare", "--season", "2019",
                          "--data-dir", str(data_dir), "--out", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "2019" in bad.stderr


def test_cli_prepare_refuses_a_schedule_missing_a_week(data_dir, tmp_path):
    """A week cut from the schedule used to become every team's bye (bye_week 5 for all 32), exit 0."""
    games = games_file(data_dir)
    root = data_copy(tmp_path, data_dir, drop=(games,))
    g = pd.read_csv(data_dir / "nflverse" / games, low_memory=False)
    g[~((g["season"] == 2024) & (g["week"] == 5))].to_csv(root / "nflverse" / games, index=False)
    out = tmp_path / "p"
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "data", "prepare", "--season", "2024", "--data-dir",
                        str(root), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{games}: no games in week(s) 5 of weeks 1..18" in r.stderr
    assert not (out / "byes.parquet").exists()


class LocalFetcher:
    """Stands in for nflreadpy's network calls by reading the same releases from the local data folder."""

    def __init__(self, root):
        self.nv = root / "nflverse"
        self.games, self.crosswalk = games_file(root), crosswalk_file(root)
        self.calls = []

    def player_stats(self, season):
        self.calls.append(("player_stats", season))
        return pd.read_csv(self.nv / f"stats_player_week_{season}.csv.gz", low_memory=False)

    def team_stats(self, season):
        return pd.read_csv(self.nv / f"stats_team_week_{season}.csv", low_memory=False)

    def schedules(self):
        return pd.read_csv(self.nv / self.games, low_memory=False)

    def injuries(self, season):
        return pd.read_csv(self.nv / f"injuries_{season}.csv", low_memory=False)

    def rosters(self, season):
        return pd.read_csv(self.nv / f"roster_{season}.csv", low_memory=False)

    def ff_playerids(self):
        return pd.read_csv(self.nv / self.crosswalk, low_memory=False)


def test_download_writes_the_local_layout(data_dir, tmp_path, full_2024):
    fetcher = LocalFetcher(data_dir)
    files = download(parse_seasons("2023-2024"), tmp_path, fetcher=fetcher)
    names = sorted(f.name for f in files)
    assert names == sorted(["stats_player_week_2023.csv.gz", "stats_player_week_2024.csv.gz", "injuries_2023.csv",
                            "injuries_2024.csv", "roster_2023.csv", "roster_2024.csv", "games.csv",
                            "db_playerids.csv", "stats_team_week_2023.csv", "stats_team_week_2024.csv"])
    assert fetcher.calls == [("player_stats", 2023), ("player_stats", 2024)]
    downloaded, original = NflverseDir(tmp_path), NflverseDir(data_dir)
    pd.testing.assert_frame_equal(downloaded.weekly(2024), original.weekly(2024))
    pd.testing.assert_frame_equal(downloaded.byes(2024), original.byes(2024))
    pd.testing.assert_frame_equal(downloaded.injuries(2024), original.injuries(2024))
    # and a season prepared from the download matches one prepared from the original files, kickers and team
    # defenses too (the team stats file is downloaded with the player stats)
    a = prepare_season(2024, "nflverse", tmp_path, positions=FULL).weekly
    assert {"K", "DST"} <= set(a["position"])
    pd.testing.assert_frame_equal(a, full_2024.weekly)


def test_download_failure_is_clear_and_keeps_finished_files(data_dir, tmp_path):
    class Offline(LocalFetcher):
        def injuries(self, season):
            raise ConnectionError("Temporary failure in name resolution")

    with pytest.raises(DataError, match="download of nflverse injuries 2024 failed.*ConnectionError"):
        download([2024], tmp_path, fetcher=Offline(data_dir))
    assert (tmp_path / "nflverse" / "stats_player_week_2024.csv.gz").exists()
    assert not list((tmp_path / "nflverse").glob(".*.tmp"))


def test_parse_seasons():
    assert parse_seasons("2022-2024") == [2022, 2023, 2024]
    assert parse_seasons("2024, 2022") == [2022, 2024]
    with pytest.raises(DataError, match="--seasons"):
        parse_seasons("last year")


def test_the_draft_pool_never_depends_on_later_weeks(data_dir, tmp_path, full_2024):
    """Who is in the draft pool, and every preseason column of its players, is the same on data cut before the
    season and on the whole season: a player listed only in the SportsData.io ADP file (a kicker who first plays in
    week 10) once got his position, and so his place in the pool, from his first in-season row."""
    from ffbench_lib.testing.snapshots import cut_data_dir

    full = full_2024
    cut = prepare_season(2024, data_dir=cut_data_dir(data_dir, 2024, 0, tmp_path / "cut0"), positions=FULL)
    cols = ["player_id", "player_name", "position", "team", "adp", "proj_points", "in_draft_pool"]
    pool = {name: p.players.loc[p.players["in_draft_pool"], cols].sort_values("player_id").reset_index(drop=True)
            for name, p in (("full", full), ("cut", cut))}
    pd.testing.assert_frame_equal(pool["full"], pool["cut"])


def test_a_fresh_download_of_the_schedule_wins_over_an_older_copy(data_dir, tmp_path):
    """`ffbench data download` writes nflverse/games.csv; a data dir that already holds games_1999_2025.csv used to
    keep reading the older file (the last name in sort order), so a live run never saw the new week's scores."""
    root = data_copy(tmp_path, data_dir)
    games = pd.read_csv(data_dir / "nflverse" / games_file(data_dir), low_memory=False)
    newer = games.copy()
    newer.loc[(newer["season"] == 2024) & (newer["week"] == 3), "home_score"] = 99  # the new download's scores
    newer.to_csv(root / "nflverse" / "games.csv", index=False)
    sched = NflverseDir(root).schedule(2024)
    assert set(sched.loc[sched["week"] == 3, "home_score"]) == {99}
