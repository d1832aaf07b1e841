"""nflverse files in a local directory (the open default).

The layout is what ``ffbench data download`` writes and what ``../shared/data/nflverse`` holds:
``stats_player_week_{season}.csv.gz`` (current release) or ``player_stats_week_{season}.csv`` (legacy,
``nfl_data_py.import_weekly_data``), ``games*.csv`` (schedules), ``injuries_{season}.csv``,
``roster_{season}.csv`` and ``db_playerids*.csv`` (id crosswalk).
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ffbench_lib.data import schema
from ffbench_lib.data.base import REFETCH, DataError, DataSource, check_season, csv_columns, read_csv
from ffbench_lib.data.defense import TEAM_REQUIRED, nflverse_dst_rows
from ffbench_lib.data.projection_files import CROSSWALK_POSITIONS

#: Columns every weekly file must have (after the legacy renames): ids, keys and every counting stat, so no
#: scoring rule can silently score a missing stat as zero (``fumbles_lost`` is derived from its three parts).
WEEKLY_REQUIRED = ("player_id", "player_name", "position", "team", "season", "week", "season_type",
                   *(c for c in schema.WEEKLY_STATS if c != "fumbles_lost"))
SCHEDULE_REQUIRED = (*schema.SCHEDULE_COLUMNS, "game_type")
INJURY_REQUIRED = ("season", "week", "game_type", "gsis_id", "full_name", "team", "position", "report_status",
                   "practice_status", "report_primary_injury", "date_modified")
ROSTER_REQUIRED = ("gsis_id", "full_name", "position", "team", "draft_club", "draft_number", "rookie_year")
ROOKIE_COLUMNS = ["player_id", "player_name", "position", "team", "draft_number"]
#: DynastyProcess's codes (the id crosswalk file) where they differ from nflverse's
CROSSWALK_TEAMS = {"GBP": "GB", "KCC": "KC", "LVR": "LV", "NEP": "NE", "NOS": "NO", "SFO": "SF", "TBB": "TB"}


class NflverseDir(DataSource):
    name = "nflverse"

    @property
    def folder(self):
        return self._sub("nflverse")

    def available_seasons(self) -> list[int]:
        seasons = set()
        for pattern in ("stats_player_week_*.csv.gz", "player_stats_week_*.csv"):  # not stats_team_week_*
            for p in self.folder.glob(pattern):
                m = re.search(r"_(\d{4})\.csv", p.name)
                if m:
                    seasons.add(int(m.group(1)))
        return sorted(seasons)

    def weekly_file(self, season: int) -> Path:
        """The season's weekly stats file: the current release if present, else the legacy one."""
        current = self.folder / f"stats_player_week_{season}.csv.gz"
        legacy = self.folder / f"player_stats_week_{season}.csv"
        for path in (current, legacy):
            if path.exists():
                return path
        raise DataError(f"nflverse weekly stats for {season}: neither {current.name} nor {legacy.name} in "
                        f"{self.folder}; available seasons: {self.available_seasons() or 'none'}")

    @staticmethod
    def _require_weekly(path: Path, columns) -> None:
        have = {schema.LEGACY_RENAMES.get(c, c) for c in columns}
        missing = [c for c in WEEKLY_REQUIRED if c not in have]
        if missing:
            raise DataError(f"nflverse weekly stats: {path} lacks column(s) {', '.join(missing)}; {REFETCH}")

    def kicking_problem(self, season: int) -> str | None:
        """Why the season's weekly file cannot score kickers (it lacks the kicking columns: the legacy
        ``player_stats`` files of 2021/2022 do), else None. A missing file is :meth:`weekly_file`'s error."""
        path = self.weekly_file(season)
        have = set(self.raw_weekly(season).columns)
        missing = [c for c in schema.KICKING_STATS if c not in have]
        if not missing:
            return None
        return (f"nflverse weekly stats {season}: {path} lacks the kicking column(s) {', '.join(missing)}, which "
                f"kickers (K) are scored from; use the current stats_player release (stats_player_week_{season}"
                f".csv.gz, `ffbench data download --seasons {season} --out DIR`), another season, or remove K "
                "from the roster")

    def defense_file(self, season: int) -> Path:
        """The season's team-week stats file that team defenses (DST) are built from, else a DataError."""
        path = self.folder / f"stats_team_week_{season}.csv"
        if not path.exists():
            raise DataError(f"nflverse team stats for {season}: {path.name} missing in {self.folder}; team "
                            f"defenses (DST) are built from it: add the nflverse stats_team weekly release "
                            f"(`ffbench data download --seasons {season} --out DIR` writes it), choose another "
                            "season, or remove DST from the roster")
        return path

    def defense(self, season: int) -> pd.DataFrame:
        """Team defenses, one row per team-week (``DST:<team>``), canonical columns; read once per object."""
        from ffbench_lib.data.checks import checked_weekly
        cache = self.__dict__.setdefault("_defense_cache", {})
        if season not in cache:
            path = self.defense_file(season)
            stats = read_csv(path, f"nflverse team stats {season}", TEAM_REQUIRED, complete_lines=True,
                             low_memory=False)
            check_season(stats, "season", season, f"nflverse team stats {season}", path)
            rows = nflverse_dst_rows(stats, self.schedule(season), str(path))
            # points allowed is the schedule's final score: blank for a game the games file has not scored yet
            cache[season] = checked_weekly(rows, f"nflverse team defense {season}", str(path),
                                           may_be_blank=("points_allowed",))
        return cache[season]

    def check(self, season: int) -> None:
        """Read the files :meth:`weekly`, :meth:`schedule` and :meth:`injuries` need (a DataError if one is
        missing, truncated, lacks its columns or breaks a rule of ``checks``)."""
        self.weekly(season)
        self.byes(season)  # and the schedule they come from
        if "injury_report" not in self.unavailable(season):  # a missing report is run as unavailable
            self.injuries(season)

    def unavailable(self, season: int) -> dict[str, str]:
        """The season's optional files that are missing (the newest season has no injury report or rosters
        yet), each with what a run uses instead; the prepared manifest, run.json and the views say so."""
        out = {}
        if not (self.folder / f"injuries_{season}.csv").exists():
            out["injury_report"] = (f"injuries_{season}.csv missing: no official injury report, so no player is "
                                    "marked Out, Doubtful or Questionable (a player who misses a game scores 0; "
                                    "injured reserve cannot be used)")
        if not (self.folder / f"roster_{season}.csv").exists():
            rookies = (f"rookies, their NFL draft pick and team come from the id crosswalk (db_playerids*.csv "
                       f"draft_year {season}: every drafted rookie, undrafted ones only partly)"
                       if any(self.folder.glob("db_playerids*.csv")) else
                       "no rookie is in the draft pool (no id crosswalk db_playerids*.csv either)")
            out["rosters"] = (f"roster_{season}.csv missing: {rookies}; a veteran's preseason team is the one an "
                              f"ADP or projection file gives, else his last team of {season - 1} (an offseason move "
                              f"then shows from his first {season} game)")
        return out

    def raw_weekly(self, season: int) -> pd.DataFrame:
        """The weekly file as published (current schema preferred, legacy renamed to current names); read
        once per source object (the input check and the preparation share it). Callers must not modify it."""
        cache = self.__dict__.setdefault("_raw_weekly", {})
        if season not in cache:
            cache[season] = self._read_weekly(season)
        return cache[season]

    def _read_weekly(self, season: int) -> pd.DataFrame:
        path = self.weekly_file(season)
        df = read_csv(path, f"nflverse weekly stats {season}", complete_lines=True, low_memory=False,
                      dtype={"player_id": "string"})
        self._require_weekly(path, df.columns)
        df = df.rename(columns=schema.LEGACY_RENAMES)
        for col in ("season", "week"):
            if len(df) and not pd.api.types.is_numeric_dtype(df[col]):  # no rows yet: a season not started
                raise DataError(f"nflverse weekly stats: {path} column {col!r} is not numeric; {REFETCH}")
        check_season(df, "season", season, f"nflverse weekly stats {season}", path)
        return df

    def _weekly_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        df = self.raw_weekly(season)
        kinds = set(df["season_type"].dropna()) - {"REG", "POST"}
        if kinds or df["season_type"].isna().any():  # else regular-season rows would be dropped unseen
            raise DataError(f"nflverse weekly stats {season}: {self.weekly_file(season)} column season_type has "
                            f"{sorted(map(str, kinds)) or 'missing values'} (allowed: REG, POST); {REFETCH}")
        # Rows without a player id are team-level leftovers (one per game, all zeros): not player-weeks.
        df = df[(df["season_type"] == "REG") & df["player_id"].notna()].copy()
        df["player_name"] = df.get("player_display_name", df["player_name"]).fillna(df["player_name"])
        df["source_player_id"] = df["player_id"]
        return df, str(self.weekly_file(season))

    def _schedule_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        path = self._file(self.folder, "games*.csv", "nflverse schedules")
        g = read_csv(path, "nflverse schedules", SCHEDULE_REQUIRED, low_memory=False)
        g = g[(g["season"] == season) & (g["game_type"] == "REG")]
        if g.empty:
            raise DataError(f"nflverse schedules: no {season} regular-season games in {path}")
        return g[list(schema.SCHEDULE_COLUMNS)].reset_index(drop=True), str(path)

    def season_calendar(self, season: int) -> tuple[pd.DataFrame, Path]:
        """Every game of ``season`` in the schedules file, playoffs included where it lists them: ``week``,
        ``game_type``, ``gameday`` (a date; the scheduled one for a game not yet played), and the file read."""
        path = self._file(self.folder, "games*.csv", "nflverse schedules")
        cols = ["season", "week", "game_type", "gameday"]
        g = read_csv(path, "nflverse schedules", cols, usecols=cols, low_memory=False)
        g = g[g["season"] == season].copy()
        g["gameday"] = pd.to_datetime(g["gameday"], errors="coerce").dt.date
        return g.dropna(subset=["gameday"]).reset_index(drop=True), path

    def _bye_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        path = self._file(self.folder, "games*.csv", "nflverse schedules")
        return byes_from_schedule(self.schedule(season)), f"byes derived from {path}"

    def injury_file(self, season: int) -> Path:
        """The season's official injury report file with its columns, else a DataError saying what to do."""
        path = self.folder / f"injuries_{season}.csv"
        if not path.exists():
            raise DataError(f"nflverse injuries for {season}: {path.name} missing in {self.folder}; the weekly "
                            f"views need the official injury report: add it (`ffbench data download --seasons "
                            f"{season} --out DIR`) or choose a season that has one")
        missing = [c for c in INJURY_REQUIRED if c not in csv_columns(path, f"nflverse injuries {season}")]
        if missing:
            raise DataError(f"nflverse injuries {season}: {path} lacks column(s) {', '.join(missing)}; {REFETCH}")
        return path

    def injuries(self, season: int) -> pd.DataFrame:
        path = self.injury_file(season)
        inj = read_csv(path, f"nflverse injuries {season}", complete_lines=True, low_memory=False,
                       dtype={"gsis_id": "string"})
        if not pd.api.types.is_numeric_dtype(inj["week"]):
            raise DataError(f"nflverse injuries {season}: {path} column 'week' is not numeric; {REFETCH}")
        check_season(inj, "season", season, f"nflverse injuries {season}", path)
        inj = inj[inj["game_type"] == "REG"].rename(columns={"gsis_id": "player_id", "full_name": "player_name"})
        inj = inj.sort_values("date_modified").drop_duplicates(["season", "week", "player_id"], keep="last")
        return inj[list(schema.INJURY_COLUMNS)].reset_index(drop=True)

    def rookies(self, season: int) -> pd.DataFrame:
        """Players drafted into the NFL before ``season`` (known preseason): id, name, position, team, pick."""
        path = self.folder / f"roster_{season}.csv"
        if not path.exists():
            return self._rookies_from_crosswalk(season)
        r = read_csv(path, f"nflverse roster {season}", ROSTER_REQUIRED, low_memory=False, dtype={"gsis_id": "string"})
        if "season" in r:  # another season's roster would make that season's rookies this season's
            check_season(r, "season", season, f"nflverse roster {season}", path)
        r = r[(r["rookie_year"] == season) & r["position"].isin(schema.FANTASY_POSITIONS)]
        r = r.rename(columns={"gsis_id": "player_id", "full_name": "player_name", "draft_club": "draft_team"})
        r["team"] = schema.normalize_team(r["draft_team"].fillna(r["team"]))
        return r[["player_id", "player_name", "position", "team", "draft_number"]].dropna(subset=["player_id"])

    def _rookies_from_crosswalk(self, season: int) -> pd.DataFrame:
        """:meth:`rookies` without the season's roster file (see :meth:`unavailable`): the DynastyProcess id
        file's players with ``draft_year == season`` (its team is the file's snapshot team)."""
        frames = []
        for path in sorted(self.folder.glob("db_playerids*.csv")):
            cols = ["gsis_id", "name", "position", "team", "draft_year", "draft_ovr"]
            frames.append(read_csv(path, "player id crosswalk", cols, usecols=cols, dtype={"gsis_id": "string"}))
        if not frames:
            return pd.DataFrame(columns=ROOKIE_COLUMNS)
        r = pd.concat(frames, ignore_index=True)
        mapped = r["gsis_id"].str.startswith("00-").fillna(False)  # rows without a gsis id never play
        r = r[(pd.to_numeric(r["draft_year"], errors="coerce") == season) & mapped]
        r = r.assign(position=r["position"].replace(CROSSWALK_POSITIONS),
                     team=schema.normalize_team(r["team"].replace(CROSSWALK_TEAMS)),
                     draft_number=pd.to_numeric(r["draft_ovr"], errors="coerce"))
        r = r[r["position"].isin(schema.FANTASY_POSITIONS)].drop_duplicates("gsis_id")
        r = r.rename(columns={"gsis_id": "player_id", "name": "player_name"})
        return r[ROOKIE_COLUMNS].reset_index(drop=True)


def byes_from_schedule(games: pd.DataFrame) -> pd.DataFrame:
    """Each team's bye: the first regular-season week in which it has no game (2022 BUF/CIN's cancelled
    week-17 game is not a bye; it just means no points that week)."""
    season = int(games["season"].iloc[0])
    last = int(games["week"].max())
    teams = sorted(set(games["home_team"]) | set(games["away_team"]))
    rows = []
    for team in teams:
        played = set(games.loc[(games["home_team"] == team) | (games["away_team"] == team), "week"].astype(int))
        missing = [w for w in range(1, last + 1) if w not in played]
        rows.append({"season": season, "team": team, "bye_week": missing[0] if missing else pd.NA})
    return pd.DataFrame(rows).astype({"bye_week": "Int64"})
