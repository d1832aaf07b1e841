"""The type of a prepared season, apart from how one is made (:mod:`ffbench_lib.data.prepare`): the game reads
a ``PreparedSeason`` without loading the source readers that build it."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ffbench_lib.core.atomic import write_json, write_parquet
from ffbench_lib.data import schema
from ffbench_lib.data.errors import DataError

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


def write_prepared(prepared: PreparedSeason, out: str | Path) -> Path:
    """Write every table, then the manifest last: a folder with a manifest is complete."""
    out = Path(out)
    for name, df in prepared.tables().items():
        write_parquet(out / f"{name}.parquet", df)
    write_json(out / "manifest.json", prepared.manifest)
    return out


def load_prepared(folder: str | Path) -> PreparedSeason:
    folder = Path(folder)
    mpath = folder / "manifest.json"
    if not mpath.exists():
        raise DataError(f"{folder} is not a prepared season (no manifest.json); run `ffbench data prepare`")
    m = json.loads(mpath.read_text())
    tables = {name: pd.read_parquet(folder / f"{name}.parquet") for name in TABLES}
    return PreparedSeason(season=m["season"], source=m["source"], projection_source=m["projection_source"],
                          scoring=m["scoring"], manifest=m, tiers=m.get("tiers", {}),
                          positions=tuple(m.get("positions", schema.DEFAULT_POSITIONS)), **tables)
