"""Fantasy Premier League files in a local directory: the layout of the public ``vaastav/Fantasy-Premier-League``
repository (``<season>/gws/gw<N>.csv``, ``fixtures.csv``, ``teams.csv``, ``players_raw.csv``), as ``fpl/`` of
the data folder holds it. The gameweek rows and the player-gameweek table so far (issue #28 adds the fixtures and
the prepared season).

A gameweek file has one row per player per fixture: a double gameweek gives a player two rows, a blank one none.
``players_raw.csv`` and ``cleaned_players.csv`` are end-of-season snapshots and are never read for a view.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

import pandas as pd

from ffbench_lib.data.base import DataError, read_csv
from ffbench_lib.sport.fpl import NOT_PLAYERS, POSITION_ALIASES
from ffbench_lib.sport.scoring import Rules, position_points
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


#: stats summed over a player's fixtures of a gameweek (for display: points are scored fixture by fixture)
SUMMED = ("minutes", "goals_scored", "assists", "clean_sheets", "goals_conceded", "own_goals", "penalties_saved",
          "penalties_missed", "yellow_cards", "red_cards", "saves", "bonus", "total_points")


def player_gameweeks(season_dir: Path, rules: Mapping[str, Rules]) -> pd.DataFrame:
    """One row per player per gameweek he has a fixture in (two fixtures in a double gameweek are one row, a blank
    gameweek none), nflverse-style: ``player_id`` ``fpl:<code>`` (``players_raw.csv``'s ``code``, the same in
    every season; only the id is read from that end-of-season file), ``club`` (``teams.csv``'s short name),
    ``fixtures``, the :data:`SUMMED` stats, ``fantasy_points`` (``rules`` scored on each fixture, then added:
    minutes, saves and goals conceded score per match), and the gameweek's ``value`` and ``selected``."""
    season_dir = Path(season_dir)
    rows, _ = gameweek_rows(season_dir)
    raw = read_csv(season_dir / "players_raw.csv", f"FPL players {season_dir.name}", ("id", "code"))
    teams = read_csv(season_dir / "teams.csv", f"FPL clubs {season_dir.name}", ("name", "short_name"))
    codes = dict(zip(raw["id"], raw["code"]))
    unknown = sorted(set(rows["element"]) - set(codes))
    clubs = dict(zip(teams["name"], teams["short_name"]))
    no_club = sorted(set(rows["team"]) - set(clubs))
    if unknown or no_club:
        what = (f"player(s) {', '.join(map(str, unknown[:5]))} not in players_raw.csv" if unknown else
                f"club(s) {', '.join(no_club[:5])} not in teams.csv")
        raise DataError(f"FPL season {season_dir.name}: the gameweek files name {what}; {FIX}")
    rows = rows.assign(fantasy_points=position_points(rows, rules), player_id="fpl:" +
                       rows["element"].map(codes).astype(int).astype(str), club=rows["team"].map(clubs))
    rows = rows.sort_values(["gameweek", "player_id", "kickoff_time", "fixture"], kind="stable")
    keys = ["gameweek", "player_id"]
    g = rows.groupby(keys, sort=True)
    first = g[["element", "name", "position", "club", "kickoff_time", "value", "selected"]].first()
    out = first.rename(columns={"name": "player_name", "kickoff_time": "first_kickoff"})
    out = out.join(g.size().rename("fixtures")).join(g[list(SUMMED)].sum()).join(g["fantasy_points"].sum())
    out = out.reset_index().assign(season=season_dir.name)
    lead = ["season", "gameweek", "player_id", "player_name", "position", "club"]
    return out[lead + [c for c in out.columns if c not in lead]]
