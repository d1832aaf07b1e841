"""Fantasy Premier League files in a local directory: the layout of the public ``vaastav/Fantasy-Premier-League``
repository (``<season>/gws/gw<N>.csv``, ``fixtures.csv``, ``teams.csv``, ``players_raw.csv``), as ``fpl/`` of
the data folder holds it. The gameweek rows, the player-gameweek table, the fixture list and the preseason market so
far (issue #28 adds the prepared season).

A gameweek file has one row per player per fixture: a double gameweek gives a player two rows, a blank one none.
``players_raw.csv`` and ``cleaned_players.csv`` are end-of-season snapshots and are never read for a view.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

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
#: columns no row may leave empty
KEYS = ("element", "name", "position", "team", "fixture", "kickoff_time")
FIX = "copy the season's folder again from the source repository's layout (see docs/data.md)"


def _teams(season_dir: Path, *columns: str) -> pd.DataFrame:
    """The season's ``teams.csv`` (its 20 clubs) with ``columns`` required."""
    return read_csv(Path(season_dir) / "teams.csv", f"FPL clubs {Path(season_dir).name}", columns)


def gameweek_files(folder: Path) -> dict[int, Path]:
    """``gw<N>.csv`` files of a season's ``gws/`` folder by gameweek N, in order."""
    found = {int(m.group(1)): p for p in Path(folder).glob("gw*.csv") if (m := re.fullmatch(r"gw(\d+)\.csv", p.name))}
    return dict(sorted(found.items()))


def gameweek_rows(season_dir: Path) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every player-fixture row of a season (``<fpl>/<season>``) with its ``gameweek``, positions as GK, DEF,
    MID, FWD; and what was changed or left out on the way, for the prepare report (``{"GKP read as GK": n,
    "AM rows (not players) left out": n, "identical duplicate rows dropped": n}``). A missing folder, file or
    column is a DataError naming it."""
    gws = Path(season_dir) / "gws"
    files = gameweek_files(gws)
    if not files:
        raise DataError(f"FPL season {Path(season_dir).name}: no gameweek files (gw1.csv, ...) in {gws}; {FIX}")
    frames = []
    for gw, path in files.items():
        df = read_csv(path, f"FPL gameweek {gw}", GAMEWEEK_REQUIRED, complete_lines=True, encoding="utf-8")
        for col in KEYS:
            if df[col].isna().any():
                raise DataError(f"FPL gameweek {gw}: {path} has a row without {col} (line "
                                f"{int(df.index[df[col].isna()][0]) + 2}); {FIX}")
        if len(df):  # a gameweek whose every match was postponed (2022-23's 7th) has a header only
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
    twins = rows.duplicated()
    if twins.any():  # 2025-26 lists two players' rows of gameweeks 1-9 twice, byte for byte
        notes["identical duplicate rows dropped"] = int(twins.sum())
        rows = rows[~twins].reset_index(drop=True)
    clash = rows.duplicated(["element", "fixture"], keep=False)
    if clash.any():
        r = rows[clash].iloc[0]
        raise DataError(f"FPL season {Path(season_dir).name}: gameweek {r['gameweek']} has two different rows for "
                        f"player {r['element']} ({r['name']}) in fixture {r['fixture']}; {FIX}")
    return rows, notes


#: stats summed over a player's fixtures of a gameweek (for display: points are scored fixture by fixture)
SUMMED = ("minutes", "goals_scored", "assists", "clean_sheets", "goals_conceded", "own_goals", "penalties_saved",
          "penalties_missed", "yellow_cards", "red_cards", "saves", "bonus", "total_points")


def player_gameweeks(season_dir: Path, rules: Mapping[str, Rules]) -> pd.DataFrame:
    """One row per player per gameweek he has a fixture in (two fixtures in a double gameweek are one row, a blank
    gameweek none), nflverse-style: ``player_id`` ``fpl:<code>`` (``players_raw.csv``'s ``code``, the same in
    every season; only the id is read from that end-of-season file), ``club`` (``teams.csv``'s short name),
    ``fixtures``, the :data:`SUMMED` stats, ``fantasy_points`` (``rules`` scored on each fixture, then added:
    minutes, saves and goals conceded score per match), and the gameweek's ``value`` and ``selected``. ``club``,
    ``value`` and ``selected`` are those of the gameweek's first match (a player moved between a double gameweek's
    two matches would show his first club; the real data has none)."""
    season_dir = Path(season_dir)
    rows, _ = gameweek_rows(season_dir)
    raw = read_csv(season_dir / "players_raw.csv", f"FPL players {season_dir.name}", ("id", "code"))
    teams = _teams(season_dir, "name", "short_name")
    if raw["id"].duplicated().any() or raw["code"].isna().any():
        raise DataError(f"FPL players {season_dir.name}: players_raw.csv has "
                        f"{'an id twice' if raw['id'].duplicated().any() else 'a player without a code'}; {FIX}")
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


FIXTURES_REQUIRED = ("id", "event", "kickoff_time", "team_h", "team_a", "team_h_score", "team_a_score", "finished")


def fixtures(season_dir: Path) -> pd.DataFrame:
    """The season's fixture list, one row per match: ``fixture``, ``gameweek`` (missing for a match not yet
    scheduled), ``kickoff_time``, ``home`` and ``away`` clubs (short names), and the scores of finished matches
    (missing before). Who plays whom and when is known before the season; a score only once played.

    The file is the schedule as it was finally played (or stood when copied): a match postponed and moved shows at
    its new date from the start, days or months before managers knew of the move."""
    season_dir = Path(season_dir)
    fx = read_csv(season_dir / "fixtures.csv", f"FPL fixtures {season_dir.name}", FIXTURES_REQUIRED)
    teams = _teams(season_dir, "id", "short_name")
    clubs = dict(zip(teams["id"], teams["short_name"]))
    unknown = sorted((set(fx["team_h"]) | set(fx["team_a"])) - set(clubs))
    if unknown:
        raise DataError(f"FPL fixtures {season_dir.name}: club id(s) {', '.join(map(str, unknown[:5]))} are not in "
                        f"teams.csv; {FIX}")
    done = fx["finished"].astype(str).str.lower() == "true"
    out = pd.DataFrame({"fixture": fx["id"], "gameweek": fx["event"].astype("Int64"),
                        "kickoff_time": fx["kickoff_time"], "home": fx["team_h"].map(clubs),
                        "away": fx["team_a"].map(clubs),
                        "home_score": fx["team_h_score"].where(done).astype("Int64"),
                        "away_score": fx["team_a_score"].where(done).astype("Int64")})
    return out.sort_values(["gameweek", "kickoff_time", "fixture"], kind="stable", na_position="last").reset_index(
        drop=True)


def _gameweeks(fixture_list: pd.DataFrame) -> range:
    """Every gameweek of the season, 1 to the last scheduled (one with no match at all included)."""
    return range(1, int(fixture_list["gameweek"].max()) + 1)


def deadlines(fixture_list: pd.DataFrame) -> dict[int, str | None]:
    """Each gameweek's deadline for a manager's decisions: its first kickoff (ISO, UTC as the data gives it; the
    issue's rule: FPL itself closes 90 minutes earlier); None for a gameweek without a match."""
    first = fixture_list.dropna(subset=["gameweek"]).groupby("gameweek")["kickoff_time"].min()
    return {gw: (str(first[gw]) if gw in first.index else None) for gw in _gameweeks(fixture_list)}


def blank_clubs(fixture_list: pd.DataFrame, clubs: Sequence[str]) -> dict[int, list[str]]:
    """The ``clubs`` (the season's, ``teams.csv``) without a match in each gameweek (a blank gameweek; every club,
    in a gameweek whose every match was postponed)."""
    scheduled = fixture_list.dropna(subset=["gameweek"])
    playing = {int(gw): set(g["home"]) | set(g["away"]) for gw, g in scheduled.groupby("gameweek")}
    return {gw: sorted(set(clubs) - playing.get(gw, set())) for gw in _gameweeks(fixture_list)}


def clubs(season_dir: Path) -> list[str]:
    """The season's 20 clubs (short names, ``teams.csv``)."""
    return sorted(_teams(season_dir, "short_name")["short_name"])


def preseason_market(player_gameweeks: pd.DataFrame) -> pd.DataFrame:
    """The market's view before the season, FPL's analogue of ADP: each player in gameweek 1's file (published
    before its deadline) with his price (``value``) and how many managers own him (``selected``) there, ranked
    ``market_rank`` 1, 2, ... by ownership (then price, then id). A player who joined later was not yet in the
    game, so he is not in it."""
    gw1 = player_gameweeks[player_gameweeks["gameweek"] == 1]
    if gw1.empty:
        raise DataError("FPL preseason market: the season has no gameweek 1 rows; " + FIX)
    cols = ["player_id", "player_name", "position", "club", "value", "selected"]
    out = gw1[cols].sort_values(["selected", "value", "player_id"], ascending=[False, False, True], kind="stable")
    return out.reset_index(drop=True).assign(market_rank=lambda d: range(1, len(d) + 1))
