"""Fantasy Premier League files in a local directory: the layout of the public ``vaastav/Fantasy-Premier-League``
repository (``<season>/gws/gw<N>.csv``, ``fixtures.csv``, ``teams.csv``, ``players_raw.csv``), as ``fpl/`` of
the data folder holds it. Only the gameweek rows so far (issue #28 adds fixtures, clubs and the prepared season).

A gameweek file has one row per player per fixture: a double gameweek gives a player two rows, a blank one none.
``players_raw.csv`` and ``cleaned_players.csv`` are end-of-season snapshots and are never read for a view.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ffbench_lib.data.base import DataError, read_csv
from ffbench_lib.sport.fpl import NOT_PLAYERS, POSITION_ALIASES
#: columns every gameweek file must have: keys and every stat the FPL rules score (``defensive_contribution``
#: only from 2025-26, so it is not required)
GAMEWEEK_REQUIRED = ("element", "name", "position", "team", "fixture", "kickoff_time", "minutes", "goals_scored",
                     "assists", "clean_sheets", "goals_conceded", "own_goals", "penalties_saved",
                     "penalties_missed", "yellow_cards", "red_cards", "saves", "bonus", "total_points", "value",
                     "selected")
FIX = "copy the season's folder again from the source repository's layout (see docs/data.md)"


def gameweek_files(folder: Path) -> dict[int, Path]:
    """``gw<N>.csv`` files of a season's ``gws/`` folder by gameweek N, in order."""
    found = {int(m.group(1)): p for p in Path(folder).glob("gw*.csv") if (m := re.fullmatch(r"gw(\d+)\.csv", p.name))}
    return dict(sorted(found.items()))


def gameweek_rows(season_dir: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every player-fixture row of a season (``<fpl>/<season>``) with its ``gameweek``, positions as GK, DEF,
    MID, FWD; and what was changed or left out on the way (``{"GKP read as GK": n, "AM rows (not players) left out": n}``), for
    the prepare report. A missing folder, file or column is a DataError naming it."""
    gws = Path(season_dir) / "gws"
    files = gameweek_files(gws)
    if not files:
        raise DataError(f"FPL season {Path(season_dir).name}: no gameweek files (gw1.csv, ...) in {gws}; {FIX}")
    frames = []
    for gw, path in files.items():
        df = read_csv(path, f"FPL gameweek {gw}", GAMEWEEK_REQUIRED, complete_lines=True, encoding="utf-8")
        frames.append(df.assign(gameweek=gw))
    rows = pd.concat(frames, ignore_index=True)
    notes = {}
    aliased = rows["position"].isin(list(POSITION_ALIASES))
    if aliased.any():
        notes[", ".join(f"{a} read as {b}" for a, b in POSITION_ALIASES.items())] = int(aliased.sum())
        rows["position"] = rows["position"].replace(POSITION_ALIASES)
    managers = rows["position"].isin(NOT_PLAYERS)
    if managers.any():
        notes[f"{'/'.join(NOT_PLAYERS)} rows (not players) left out"] = int(managers.sum())
        rows = rows[~managers].reset_index(drop=True)
    return rows, notes
