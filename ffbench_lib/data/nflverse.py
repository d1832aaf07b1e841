"""nflverse files in a local directory (the open default).

The layout is what ``ffbench data download`` writes and what ``../shared/data/nflverse`` holds:
``stats_player_week_{season}.csv.gz`` (current release) or ``player_stats_week_{season}.csv`` (legacy,
``nfl_data_py.import_weekly_data``), ``games*.csv`` (schedules), ``injuries_{season}.csv``,
``roster_{season}.csv`` and ``db_playerids*.csv`` (id crosswalk).
"""
from __future__ import annotations

import re

import pandas as pd

from . import schema
from .base import DataError, DataSource


class NflverseDir(DataSource):
    name = "nflverse"

    @property
    def folder(self):
        return self._sub("nflverse")

    def available_seasons(self) -> list[int]:
        seasons = set()
        for p in self.folder.glob("*stats*_week_*.csv*"):
            m = re.search(r"_(\d{4})\.csv", p.name)
            if m:
                seasons.add(int(m.group(1)))
        return sorted(seasons)

    def raw_weekly(self, season: int) -> pd.DataFrame:
        """The weekly file as published (current schema preferred, legacy renamed to current names)."""
        current = self.folder / f"stats_player_week_{season}.csv.gz"
        legacy = self.folder / f"player_stats_week_{season}.csv"
        if current.exists():
            df = pd.read_csv(current, low_memory=False, dtype={"player_id": "string"})
        elif legacy.exists():
            df = pd.read_csv(legacy, low_memory=False, dtype={"player_id": "string"})
            df = df.rename(columns=schema.LEGACY_RENAMES)
        else:
            raise DataError(f"nflverse weekly stats for {season}: neither {current.name} nor {legacy.name} in "
                            f"{self.folder}; available seasons: {self.available_seasons() or 'none'}")
        return df

    def weekly(self, season: int) -> pd.DataFrame:
        df = self.raw_weekly(season)
        # Rows without a player id are team-level leftovers (one per game, all zeros): not player-weeks.
        df = df[(df["season_type"] == "REG") & df["player_id"].notna()].copy()
        df["player_name"] = df.get("player_display_name", df["player_name"]).fillna(df["player_name"])
        df["source_player_id"] = df["player_id"]
        return schema.conform_weekly(df)

    def schedule(self, season: int) -> pd.DataFrame:
        path = self._file(self.folder, "games*.csv", "nflverse schedules")
        g = pd.read_csv(path, low_memory=False)
        g = g[(g["season"] == season) & (g["game_type"] == "REG")]
        if g.empty:
            raise DataError(f"nflverse schedules: no {season} regular-season games in {path}")
        return g[list(schema.SCHEDULE_COLUMNS)].reset_index(drop=True)

    def byes(self, season: int) -> pd.DataFrame:
        return byes_from_schedule(self.schedule(season))

    def injuries(self, season: int) -> pd.DataFrame:
        path = self.folder / f"injuries_{season}.csv"
        if not path.exists():
            raise DataError(f"nflverse injuries for {season}: {path.name} missing in {self.folder}")
        inj = pd.read_csv(path, low_memory=False, dtype={"gsis_id": "string"})
        inj = inj[inj["game_type"] == "REG"].rename(columns={"gsis_id": "player_id", "full_name": "player_name"})
        inj = inj.sort_values("date_modified").drop_duplicates(["season", "week", "player_id"], keep="last")
        return inj[list(schema.INJURY_COLUMNS)].reset_index(drop=True)

    def rookies(self, season: int) -> pd.DataFrame:
        """Players drafted into the NFL before ``season`` (known preseason): id, name, position, team, pick."""
        path = self.folder / f"roster_{season}.csv"
        if not path.exists():
            return pd.DataFrame(columns=["player_id", "player_name", "position", "team", "draft_number"])
        r = pd.read_csv(path, low_memory=False, dtype={"gsis_id": "string"})
        r = r[(r["rookie_year"] == season) & r["position"].isin(schema.FANTASY_POSITIONS)]
        r = r.rename(columns={"gsis_id": "player_id", "full_name": "player_name", "draft_club": "draft_team"})
        r["team"] = schema.normalize_team(r["draft_team"].fillna(r["team"]))
        return r[["player_id", "player_name", "position", "team", "draft_number"]].dropna(subset=["player_id"])


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
