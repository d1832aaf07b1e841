"""The type of a prepared season, apart from how one is made (:mod:`ffbench_lib.data.prepare`): the game reads
a ``PreparedSeason`` without loading the source readers that build it."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ffbench_lib.data import schema

TABLES = ("players", "weekly", "weekly_projections", "injuries", "byes", "schedule")

@dataclass
class PreparedSeason:
    season: int
    source: str
    projection_source: str
    scoring: dict[str, float]
    players: pd.DataFrame
    weekly: pd.DataFrame
    weekly_projections: pd.DataFrame
    injuries: pd.DataFrame
    byes: pd.DataFrame
    schedule: pd.DataFrame
    manifest: dict = field(default_factory=dict)
    tiers: dict = field(default_factory=dict)
    positions: tuple[str, ...] = schema.DEFAULT_POSITIONS

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLES}

    @property
    def played_weeks(self) -> int:
        """The last week whose games the data has: the schedule's last week unless the season is under way."""
        return int(self.manifest.get("played_weeks", self.schedule["week"].max()))
