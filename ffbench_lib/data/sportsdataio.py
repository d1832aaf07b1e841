"""SportsData.io CSV exports (the earlier FantasyFootballBench's data), keyed by ``PlayerID``.

Layout: ``{season}/{week}/PlayerGameStatsByWeek.csv`` and ``PlayerGameProjectionStatsByWeek.csv`` for
weeks 1-17, ``{season}/PlayerSeasonProjectionStats.csv`` (preseason projections with ADP), ``Byes.csv``.
PlayerIDs are mapped to gsis ids through the nflverse crosswalk (``fantasy_data_id``) when it is present;
unmapped players keep ``sdio:<PlayerID>`` and are listed by :meth:`unmatched` - never dropped.
"""
from __future__ import annotations

from functools import cached_property

import pandas as pd

from ffbench_lib.data import schema
from ffbench_lib.data.base import DataError, DataSource, check_season, csv_columns, name_key, read_csv
from ffbench_lib.data.checks import CANCELLED, PPR_TOLERANCE
from ffbench_lib.data.defense import SDIO_REQUIRED, sdio_dst_rows

#: SportsData.io column -> canonical column.
STAT_MAP = {
    "PassingCompletions": "completions",
    "PassingAttempts": "attempts",
    "PassingYards": "passing_yards",
    "PassingTouchdowns": "passing_tds",
    "PassingInterceptions": "passing_interceptions",
    "PassingSacks": "sacks_suffered",
    "TwoPointConversionPasses": "passing_2pt_conversions",
    "RushingAttempts": "carries",
    "RushingYards": "rushing_yards",
    "RushingTouchdowns": "rushing_tds",
    "TwoPointConversionRuns": "rushing_2pt_conversions",
    "Receptions": "receptions",
    "ReceivingTargets": "targets",
    "ReceivingYards": "receiving_yards",
    "ReceivingTouchdowns": "receiving_tds",
    "TwoPointConversionReceptions": "receiving_2pt_conversions",
    "FumblesLost": "fumbles_lost",
    "FantasyPointsPPR": "fantasy_points_ppr",
}
KEY_MAP = {"Name": "player_name", "Position": "position", "Team": "team", "Opponent": "opponent_team",
           "Season": "season", "Week": "week"}
#: Columns each weekly stats file must have (so no scored stat is silently zero).
WEEKLY_REQUIRED = ("PlayerID", "SeasonType", "Played", *KEY_MAP, *STAT_MAP)
PROJECTION_REQUIRED = ("PlayerID", "SeasonType", "InjuryStatus", *KEY_MAP)


#: the fix for a file of another season in a season's folder
EXPORT_FIX = "the SportsData.io export of {season}"
#: positions whose FantasyPointsPPR is a PPR line (everyone else's counts kicking or individual-defense points)
PPR_POSITIONS = frozenset(schema.DEFAULT_POSITIONS) | {a for a, p in schema.NFL.position_aliases.items()
                                                        if p in schema.DEFAULT_POSITIONS}


class SportsDataIODir(DataSource):
    name = "sportsdataio"
    ppr_column = "FantasyPointsPPR"

    @property
    def folder(self):
        return self._sub("sportsdataio")

    def available_seasons(self) -> list[int]:
        return sorted(int(p.name) for p in self.folder.iterdir() if p.is_dir() and p.name.isdigit())

    def _season_dir(self, season: int):
        d = self.folder / str(season)
        if not d.is_dir():
            raise DataError(f"sportsdataio: no folder for season {season} in {self.folder}; "
                            f"available: {self.available_seasons() or 'none'}")
        return d

    def _week_files(self, season: int, filename: str) -> list:
        d = self._season_dir(season)
        weeks = sorted(int(p.name) for p in d.iterdir() if p.is_dir() and p.name.isdigit())
        files = [d / str(w) / filename for w in weeks if (d / str(w) / filename).exists()]
        if not files:
            raise DataError(f"sportsdataio {season}: no {filename} under {d}/<week>/")
        return files

    def check(self, season: int) -> None:
        """Header-level check of the weekly stats and schedule files, and the byes."""
        for path in self._week_files(season, "PlayerGameStatsByWeek.csv"):
            have = csv_columns(path, f"sportsdataio weekly stats {season}")
            missing = [c for c in WEEKLY_REQUIRED if c not in have]
            if missing:
                raise DataError(f"sportsdataio weekly stats {season}: {path} lacks column(s) {', '.join(missing)}; "
                                "replace it with a complete export")
        self._week_files(season, "FantasyDefenseByGame.csv")
        self.weekly(season)
        self.byes(season)  # and the schedule

    def _weeks(self, season: int, filename: str, required: tuple[str, ...] = ()) -> pd.DataFrame:
        """All weeks' ``filename`` rows; read once per source object (callers must not modify it)."""
        cache = self.__dict__.setdefault("_weeks_cache", {})
        if (season, filename) not in cache:
            frames = []
            for path in self._week_files(season, filename):
                what = f"sportsdataio {season} {filename}"
                df = read_csv(path, what, required, low_memory=False)
                if "Season" in df:
                    check_season(df, "Season", season, what, path, EXPORT_FIX.format(season=season))
                frames.append(df)
            cache[season, filename] = pd.concat(frames, ignore_index=True)
        return cache[season, filename]

    def last_week(self, season: int) -> int:
        return 17  # the export stops at week 17 (see the module docstring)

    def _where(self, season: int, filename: str) -> str:
        return f"{self.folder / str(season)}/<week>/{filename}"

    def _canonical(self, raw: pd.DataFrame) -> pd.DataFrame:
        df = raw.rename(columns={**STAT_MAP, **KEY_MAP})
        df["special_teams_tds"] = raw.get("PuntReturnTouchdowns", 0) + raw.get("KickReturnTouchdowns", 0)
        df["source_player_id"] = raw["PlayerID"].astype("int64").astype(str)
        df["player_id"] = self.map_ids(raw["PlayerID"], raw["Name"], raw["Position"])
        df["season_type"] = "REG"
        return df

    def map_ids(self, player_ids: pd.Series, names: pd.Series, positions: pd.Series) -> pd.Series:
        """SportsData.io PlayerID -> gsis id: by ``fantasy_data_id``, else by a unique (name, position) match
        in the crosswalk, else ``sdio:<PlayerID>`` (kept, and listed by :meth:`unmatched`)."""
        ids = player_ids.astype("int64")
        out = ids.map(self._sdio_map)
        by_name = self._name_map
        keys = pd.Series([(name_key(n), p) for n, p in zip(names, positions)], index=ids.index)
        out = out.fillna(keys.map(by_name))
        return out.fillna("sdio:" + ids.astype(str)).astype("string")

    @cached_property
    def _name_map(self) -> dict[tuple[str, str], str]:
        cw = self.id_crosswalk.drop_duplicates("gsis_id")
        counts = cw.groupby(["name_key", "position"])["gsis_id"].transform("nunique")
        cw = cw[counts == 1]
        return dict(zip(zip(cw["name_key"], cw["position"]), cw["gsis_id"]))

    @cached_property
    def _sdio_map(self) -> dict[int, str]:
        return self.sdio_to_gsis()

    def _weekly_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        raw = self._weeks(season, "PlayerGameStatsByWeek.csv", WEEKLY_REQUIRED)
        raw = raw[(raw["SeasonType"] == 1) & (raw["Played"] == 1)]
        return self._canonical(raw.reset_index(drop=True)), self._where(season, "PlayerGameStatsByWeek.csv")

    def _ppr_reasons(self, rows: pd.DataFrame, season: int, gap: pd.Series) -> dict[str, tuple[pd.Series, str]]:
        """Why SportsData.io's ``FantasyPointsPPR`` differs from our ``ppr`` (every 2022-2024 row matches or is one
        of these): it leaves out return TDs, counts kicking and individual-defense points, and kept the points
        of the one game whose stats it zeroed."""
        kicked = rows.get("FieldGoalsMade", 0) + rows.get("ExtraPointsMade", 0)
        cancelled = CANCELLED.get(season, set())
        return {  # the first reason that holds classifies a row
            "return_tds": ((gap - 6 * rows["special_teams_tds"]).abs() <= PPR_TOLERANCE,
                           "kick and punt return TDs (6 points each in ppr) are not in SportsData.io's "
                           "FantasyPointsPPR"),
            "cancelled_game": (pd.Series(pd.MultiIndex.from_arrays([schema.normalize_team(rows["team"]),
                                                                    rows["week"]]).isin(list(cancelled)),
                                         index=rows.index),
                               "a game never finished (checks.CANCELLED): SportsData.io zeroed its stats but kept "
                               "its fantasy points"),
            "not_a_ppr_position": (~rows["position"].isin(PPR_POSITIONS),
                                   "kickers, punters, linemen and defensive players: SportsData.io's FantasyPointsPPR "
                                   "is their kicking or individual-defense points, not a PPR line"),
            "kicking": (pd.Series(kicked, index=rows.index).fillna(0) > 0,
                        "a player of another position kicked: SportsData.io's FantasyPointsPPR counts kicking "
                        "points"),
        }

    def weekly_projections(self, season: int) -> pd.DataFrame:
        raw = self._weeks(season, "PlayerGameProjectionStatsByWeek.csv", PROJECTION_REQUIRED)
        raw = raw[raw["SeasonType"] == 1].reset_index(drop=True)
        out = schema.conform_weekly(self._canonical(raw))
        status = raw.set_index(raw["PlayerID"].astype(str) + "|" + raw["Week"].astype(str))["InjuryStatus"]
        key = out["source_player_id"].astype(str) + "|" + out["week"].astype(str)
        out["injury_status"] = key.map(status[~status.index.duplicated()]).astype("string")
        return out

    def season_projections(self, season: int) -> pd.DataFrame:
        path = self._season_dir(season) / "PlayerSeasonProjectionStats.csv"
        if not path.exists():
            raise DataError(f"sportsdataio {season}: {path.name} missing in {path.parent}")
        raw = read_csv(path, f"sportsdataio {season} season projections",
                       ("PlayerID", "Name", "Position", "AverageDraftPositionPPR", "AverageDraftPosition", "Played"),
                       low_memory=False)
        if "Season" in raw:
            check_season(raw, "Season", season, f"sportsdataio {season} season projections", path,
                         EXPORT_FIX.format(season=season))
        raw = raw[raw["Position"].isin(schema.FANTASY_POSITIONS)].reset_index(drop=True)
        df = self._canonical(raw.assign(Week=0))
        df["adp"] = pd.to_numeric(raw["AverageDraftPositionPPR"], errors="coerce").fillna(
            pd.to_numeric(raw["AverageDraftPosition"], errors="coerce"))
        df["games"] = pd.to_numeric(raw["Played"], errors="coerce")
        keep = ["player_id", "source_player_id", "player_name", "position", "team", "adp", "games",
                *(c for c in schema.WEEKLY_STATS if c in df.columns)]
        return df[keep]

    def kicking_problem(self, season: int) -> str | None:
        """Kickers cannot be scored exactly from these files: field goals made are one 50+ band (not 50-59 and
        60+) and misses are a total, not by distance."""
        return (f"sportsdataio {season}: kickers (K) cannot be scored exactly from PlayerGameStatsByWeek.csv "
                "(field goals made 50+ are one band, not 50-59 and 60+, and misses are not split by distance); "
                "use data.source nflverse (stats_player_week files of 2023 or later) or remove K from the roster")

    def defense(self, season: int) -> pd.DataFrame:
        """Team defenses, one row per team-week (``DST:<team>``) from ``FantasyDefenseByGame.csv``."""
        from ffbench_lib.data.checks import checked_weekly
        cache = self.__dict__.setdefault("_defense_cache", {})
        if season not in cache:
            raw = self._weeks(season, "FantasyDefenseByGame.csv", SDIO_REQUIRED)
            cache[season] = checked_weekly(sdio_dst_rows(raw), f"sportsdataio team defense {season}",
                                           self._where(season, "FantasyDefenseByGame.csv"))
        return cache[season]

    def _bye_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        path = self._season_dir(season) / "Byes.csv"
        b = read_csv(path, f"sportsdataio {season} byes", ("Season", "Team", "Week"))
        check_season(b, "Season", season, f"sportsdataio {season} byes", path, EXPORT_FIX.format(season=season))
        b = b.rename(columns={"Season": "season", "Team": "team", "Week": "bye_week"})
        b["team"] = schema.normalize_team(b["team"])
        return b[["season", "team", "bye_week"]].astype({"bye_week": "Int64"}), str(path)

    def _schedule_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        raw = self._weeks(season, "FantasyDefenseByGame.csv",
                          ("HomeOrAway", "Season", "Week", "GameKey", "Team", "Opponent", "PointsAllowed", "Date"))
        home = raw[raw["HomeOrAway"] == "HOME"]
        g = pd.DataFrame({
            "season": home["Season"].astype(int), "week": home["Week"].astype(int),
            "game_id": home["GameKey"].astype(str), "home_team": schema.normalize_team(home["Team"]),
            "away_team": schema.normalize_team(home["Opponent"]),
            "home_score": pd.NA, "away_score": home["PointsAllowed"], "gameday": home["Date"].str[:10],
        })
        return g.sort_values(["week", "game_id"]).reset_index(drop=True), self._where(season, "FantasyDefenseByGame.csv")

    def injuries(self, season: int) -> pd.DataFrame:
        """Status from the weekly projection files (published before each week's games). Sparse: mostly Out."""
        p = self.weekly_projections(season)
        p = p[p["injury_status"].notna() & (p["injury_status"] != "")]
        return pd.DataFrame({
            "season": p["season"], "week": p["week"], "player_id": p["player_id"], "player_name": p["player_name"],
            "team": p["team"], "position": p["position"], "report_status": p["injury_status"],
            "practice_status": pd.NA, "report_primary_injury": pd.NA,
        })[list(schema.INJURY_COLUMNS)].reset_index(drop=True)

    def unmatched(self, season: int) -> pd.DataFrame:
        """Players in this season's weekly stats that the crosswalk could not map to a gsis id."""
        w = self.weekly(season)
        u = w[w["player_id"].str.startswith("sdio:")]
        return (u.groupby(["player_id", "player_name", "position"], as_index=False)
                 .agg(games=("week", "nunique"), ppr=("fantasy_points_ppr", "sum"))
                 .sort_values("ppr", ascending=False, ignore_index=True))

