import pandas as pd
import pytest

from ffbench_lib.data import schema
from ffbench_lib.data.base import DataError
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.base import name_key


REAL = pytest.mark.realdata  # the newest real season and SportsData.io are the real data's only


@pytest.mark.parametrize("source, season", [*(("nflverse", s) for s in range(2021, 2025)),
                                            pytest.param("nflverse", 2025, marks=REAL),
                                            *(pytest.param("sportsdataio", s, marks=REAL) for s in (2022, 2023, 2024))])
def test_weekly_is_canonical_and_tidy(request, source, season):
    real = source == "sportsdataio" or season == 2025
    w = get_source(source, request.getfixturevalue("real_data_dir" if real else "data_dir")).weekly(season)
    # every position's columns (a league keeps its own: schema.weekly_columns(positions))
    assert list(w.columns) == list(schema.weekly_columns(schema.FANTASY_POSITIONS))
    assert not w.duplicated(["player_id", "week"]).any()  # one row per player-week
    assert (w["season"] == season).all() and set(w["season_type"]) == {"REG"}
    assert w["week"].between(1, 18).all()
    assert w["player_id"].notna().all()
    assert w["team"].dropna().isin(schema.NFL.team_codes).all()


def test_nflverse_legacy_and_current_files_agree(real_data_dir):
    """2023 exists in both schemas; the canonical tables agree on the scoring stats (a few stat corrections aside)."""
    nv = get_source("nflverse", real_data_dir)
    cur = nv.weekly(2023)
    legacy = pd.read_csv(real_data_dir / "nflverse" / "player_stats_week_2023.csv", low_memory=False)
    legacy = schema.conform_weekly(legacy.rename(columns=schema.LEGACY_RENAMES))
    legacy = legacy[legacy["season_type"] == "REG"]
    m = cur.merge(legacy, on=["player_id", "week"], suffixes=("", "_l"))
    assert len(m) > 0.95 * len(legacy)
    assert ((m["fantasy_points_ppr"] - m["fantasy_points_ppr_l"]).abs() < 0.01).mean() > 0.99


@pytest.mark.parametrize("source", ["nflverse", pytest.param("sportsdataio", marks=REAL)])
def test_byes_cover_every_team_once(request, source):
    root = request.getfixturevalue("real_data_dir" if source == "sportsdataio" else "data_dir")
    b = get_source(source, root).byes(2024)
    assert len(b) == 32 and b["team"].is_unique and set(b["team"]) == schema.NFL.team_codes
    assert b["bye_week"].between(5, 14).all()


def test_byes_agree_across_sources(real_data_dir):
    data_dir = real_data_dir
    nv = get_source("nflverse", data_dir).byes(2024).set_index("team")["bye_week"]
    sd = get_source("sportsdataio", data_dir).byes(2024).set_index("team")["bye_week"]
    assert (nv == sd.reindex(nv.index)).all()


def test_injury_reports_present(data_dir):
    inj = get_source("nflverse", data_dir).injuries(2024)
    assert {"Out", "Questionable", "Doubtful"} <= set(inj["report_status"].dropna())
    assert not inj.duplicated(["player_id", "week"]).any()
    assert inj["week"].between(1, 18).all()


def test_sportsdataio_maps_ids_and_keeps_unmatched(real_data_dir):
    data_dir = real_data_dir
    sd = get_source("sportsdataio", data_dir)
    raw = pd.concat(pd.read_csv(data_dir / "sportsdataio" / "2024" / str(w) / "PlayerGameStatsByWeek.csv")
                    for w in range(1, 18))
    raw = raw[(raw["SeasonType"] == 1) & (raw["Played"] == 1)]
    w = sd.weekly(2024)
    assert len(w) == len(raw)  # nobody dropped
    off = w[w["position"].isin(schema.FANTASY_POSITIONS)]
    assert off["player_id"].str.startswith("00-").mean() > 0.99
    um = sd.unmatched(2024)
    assert um["player_id"].str.startswith("sdio:").all() and len(um) > 0
    barkley = w[w["player_name"] == "Saquon Barkley"]["player_id"].unique()
    assert list(barkley) == ["00-0034844"]


def test_name_key():
    assert name_key("D.J. Moore Jr.") == name_key("DJ Moore") == "dj moore"
    assert name_key("Amon-Ra St. Brown") == "amon ra st brown"
    assert name_key(None) == ""


def test_missing_files_give_clear_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        get_source("nflverse", tmp_path / "nope")
    (tmp_path / "nflverse").mkdir()
    with pytest.raises(DataError, match=r"weekly stats for 2024.*available seasons: none"):
        get_source("nflverse", tmp_path).weekly(2024)
    with pytest.raises(DataError, match="unknown data source 'espn'"):
        get_source("espn", tmp_path)


def sportsdataio_copy(tmp_path, data_dir, season=2024):
    """A SportsData.io folder of symlinks to the real files (the crosswalk beside it), to replace some of."""
    root = tmp_path / "data"
    (root / "nflverse").mkdir(parents=True)
    (root / "nflverse" / "db_playerids_2025.csv").symlink_to(data_dir / "nflverse" / "db_playerids_2025.csv")
    return root, link_season(data_dir, root, season)


def link_season(data_dir, root, season):
    """``root/sportsdataio/<season>/``: a symlink to every real file of that SportsData.io season."""
    real = data_dir / "sportsdataio" / str(season)
    for src in real.rglob("*"):
        if src.is_file():
            dst = root / "sportsdataio" / str(season) / src.relative_to(real)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    return root / "sportsdataio" / str(season)


@pytest.mark.parametrize("change, expect", [
    (lambda d: pd.concat([d, d[d["Played"] == 1].head(3)]), "3 row(s) repeat a player-week"),
    (lambda d: d.assign(ReceivingTargets=d["ReceivingTargets"].where(d.index != 5, -2)),
     "column targets is negative in 1 row(s)"),
    (lambda d: d.astype({"PassingTouchdowns": object}).assign(
        PassingTouchdowns=lambda x: x["PassingTouchdowns"].where(x.index != 5, "two")),
     "column passing_tds has 1 non-numeric or missing value(s)"),
])
def test_sportsdataio_weekly_rows_obey_the_same_rules(tmp_path, real_data_dir, change, expect):
    root, season_dir = sportsdataio_copy(tmp_path, real_data_dir)
    path = season_dir / "5" / "PlayerGameStatsByWeek.csv"
    df = pd.read_csv(path, low_memory=False)
    df.loc[df.index[5], "Played"] = 1
    path.unlink()
    change(df).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"sportsdataio weekly stats 2024: .*/2024/<week>/PlayerGameStatsByWeek.csv"):
        get_source("sportsdataio", root).weekly(2024)
    with pytest.raises(DataError) as err:
        get_source("sportsdataio", root).check(2024)
    assert expect in str(err.value) and "week 5" in str(err.value)


def test_sportsdataio_byes_must_match_the_schedule(tmp_path, real_data_dir):
    root, season_dir = sportsdataio_copy(tmp_path, real_data_dir)
    byes = pd.read_csv(season_dir / "Byes.csv")
    (season_dir / "Byes.csv").unlink()
    byes.assign(Week=byes["Week"].where(byes.index != 0, 3)).to_csv(season_dir / "Byes.csv", index=False)
    with pytest.raises(DataError, match=r"sportsdataio byes 2024: .*Byes.csv: bye in a week the team plays: \w+ week 3"):
        get_source("sportsdataio", root).byes(2024)


def test_unknown_season_type_is_refused(tmp_path, data_dir):
    """nflverse marks the regular season REG and the playoffs POST (weeks 19-22, dropped); anything else would
    silently drop rows."""
    root = tmp_path / "data"
    (root / "nflverse").mkdir(parents=True)
    name = "stats_player_week_2024.csv.gz"
    w = pd.read_csv(data_dir / "nflverse" / name, low_memory=False)
    w.assign(season_type=w["season_type"].where(w.index != 3, "REGULAR")).to_csv(root / "nflverse" / name, index=False)
    with pytest.raises(DataError, match=r"stats_player_week_2024.csv.gz column season_type has \['REGULAR'\]"):
        get_source("nflverse", root).weekly(2024)
