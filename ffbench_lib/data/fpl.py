"""Fantasy Premier League files in a local directory: the layout of the public ``vaastav/Fantasy-Premier-League``
repository (``<season>/gws/gw<N>.csv``, ``fixtures.csv``, ``teams.csv``, ``players_raw.csv``), as ``fpl/`` of
the data folder holds it: the gameweek rows, the player-gameweek table, the fixture list, the preseason market, and
from them the prepared season a league plays (:func:`prepare_season`).

A gameweek file has one row per player per fixture: a double gameweek gives a player two rows, a blank one none.
``players_raw.csv`` and ``cleaned_players.csv`` are end-of-season snapshots and are never read for a view.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from filelock import FileLock

from ffbench_lib import __version__
from ffbench_lib.data import schema
from ffbench_lib.data.base import DataError, read_csv
from ffbench_lib.core.paths import outputs_dir
from ffbench_lib.data.prepared import PreparedSeason, load_prepared, write_prepared
from ffbench_lib.sport.fpl import FPL, NOT_PLAYERS, POSITION_ALIASES, POSITIONS, rules as season_rules
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


def player_gameweeks(season_dir: Path, rules: Mapping[str, Rules], notes: dict | None = None) -> pd.DataFrame:
    """One row per player per gameweek he has a fixture in (two fixtures in a double gameweek are one row, a blank
    gameweek none), nflverse-style: ``player_id`` ``fpl:<code>`` (``players_raw.csv``'s ``code``, the same in
    every season; only the id is read from that end-of-season file), ``club`` (``teams.csv``'s short name),
    ``fixtures``, the :data:`SUMMED` stats, ``fantasy_points`` (``rules`` scored on each fixture, then added:
    minutes, saves and goals conceded score per match), and the gameweek's ``value`` and ``selected``. ``club``,
    ``value`` and ``selected`` are those of the gameweek's first match (a player moved between a double gameweek's
    two matches would show his first club; the real data has none)."""
    season_dir = Path(season_dir)
    rows, found = gameweek_rows(season_dir)
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
    if notes is not None:  # what reading changed, and how many rows the rules score as FPL did
        notes.update(found)
        same = (rows["fantasy_points"] - rows["total_points"]).abs() < 1e-9
        notes["parity"] = {"rows": int(len(rows)), "matching": int(same.sum())}
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


# ---------------------------------------------------------------------------------------------- the prepared season
#: in-season projections: the preseason per-fixture rate counts as this many fixtures against the season so far
PRIOR_FIXTURES = 6.0


def missing_season(root: Path, name: str) -> str:
    """Why season ``name`` cannot be read from data folder ``root``, and the fix."""
    return (f"FPL season {name}: no {Path(root) / 'fpl' / name / 'gws'} folder (the gameweek files); copy the "
            f"season's folder into {Path(root) / 'fpl'} from the source repository's layout (see docs/data.md)")


def season_dir(root: Path, name: str) -> Path:
    """A season's folder: ``<root>/fpl/<name>`` (the data folder), or ``<root>/<name>`` (the fpl folder itself)."""
    root = Path(root)
    return root / "fpl" / name if (root / "fpl").is_dir() else root / name


def _summary(pgw: pd.DataFrame) -> pd.DataFrame:
    """Per player of an earlier season: points, gameweeks he played in (minutes above 0), fixtures he was listed
    for, and his gameweek-1 price (``value``: the market's view of him that season)."""
    played = pgw["minutes"] > 0
    g = pgw.assign(played=played).groupby("player_id")
    out = pd.DataFrame({"points": g["fantasy_points"].sum(), "games": g["played"].sum().astype(int),
                        "fixtures": g["fixtures"].sum().astype(int)})
    gw1 = pgw[pgw["gameweek"] == 1].set_index("player_id")
    out["value"] = gw1["value"].reindex(out.index)
    out["position"] = g["position"].last()
    return out


def _price_prior(summary: pd.DataFrame | None) -> dict[str, tuple[float, float]]:
    """Per position, the least-squares line of a season's points on its gameweek-1 price (players priced then):
    what a price has been worth, fitted on an earlier season only."""
    if summary is None:
        return {}
    out = {}
    for pos, g in summary.dropna(subset=["value"]).groupby("position"):
        if len(g) >= 3 and g["value"].nunique() > 1:
            slope, icpt = np.polyfit(g["value"].to_numpy(float), g["points"].to_numpy(float), 1)
            out[str(pos)] = (float(slope), float(icpt))
    return out


def preseason_projection(market: pd.DataFrame, last: pd.DataFrame | None, before: pd.DataFrame | None,
                         weeks: int) -> pd.Series:
    """Projected season points of every player in the preseason market, from earlier seasons and gameweek 1's
    prices only: last season's points (and half the season before's) per gameweek played, over the share of
    gameweeks he played, shrunk toward what his price was worth last season (:func:`_price_prior`) by how little
    he played; a player new to the league gets his price's worth."""
    prior = _price_prior(last)
    m = market.set_index("player_id")
    slope_icpt = m["position"].map(lambda p: prior.get(p, (0.0, 0.0)))
    price_pts = pd.Series([a * v + b for (a, b), v in zip(slope_icpt, m["value"].astype(float))], index=m.index)
    price_pts = price_pts.clip(lower=0.0) * (weeks / 38.0)
    pts = pd.Series(0.0, index=m.index)
    games = pd.Series(0.0, index=m.index)
    for summary, weight in ((last, 1.0), (before, 0.5)):
        if summary is not None:
            pts += weight * summary["points"].reindex(m.index).fillna(0.0)
            games += weight * summary["games"].reindex(m.index).fillna(0)
    per_game = (pts / games.where(games > 0)).fillna(0.0)
    share = (games / 1.5 / 38.0).clip(upper=1.0)  # weighted gameweeks played over the most possible
    history_pts = per_game * share * weeks
    trust = (games / 1.5 / 19.0).clip(upper=1.0)  # half a season played: his own record counts fully
    return (trust * history_pts + (1 - trust) * price_pts).round(2).rename("proj_points")


def weekly_projection(weekly: pd.DataFrame, pre_rate: pd.Series, club_fixtures: Mapping[int, Mapping[str, int]],
                      preseason_club: Mapping[str, str], weeks: int) -> pd.DataFrame:
    """The projection of each player for each gameweek w, from gameweeks < w only: his points per fixture so far,
    shrunk toward his preseason rate (:data:`PRIOR_FIXTURES`), times the fixtures his club has in w (0 in a
    blank gameweek, 2 in a double) by the fixture list, which is known in advance; his club the latest he
    played for before w (else the preseason one)."""
    ids = sorted(set(pre_rate.index) | set(weekly["player_id"]))
    pts = {pid: 0.0 for pid in ids}
    fixtures = {pid: 0 for pid in ids}
    club = {pid: preseason_club.get(pid) for pid in ids}
    by_gw = {gw: g for gw, g in weekly.groupby("week")}
    rows = []
    for w in range(1, weeks + 1):
        if w > 1 and (w - 1) in by_gw:
            g = by_gw[w - 1]
            for pid, p, n, c in zip(g["player_id"], g["fantasy_points"], g["fixtures"], g["team"]):
                pts[pid] += float(p)
                fixtures[pid] += int(n)
                club[pid] = c
        fx = club_fixtures.get(w, {})
        for pid in ids:
            if club[pid] is None:
                continue
            rate = (PRIOR_FIXTURES * float(pre_rate.get(pid, 0.0)) + pts[pid]) / (PRIOR_FIXTURES + fixtures[pid])
            rows.append((w, pid, round(rate * fx.get(club[pid], 0), 2)))
    return pd.DataFrame(rows, columns=["week", "player_id", "proj_points_builtin"])


def first_gameweek(fixture_list: pd.DataFrame) -> pd.Series:
    """Each match's gameweek in the schedule as first published: FPL numbers the 380 matches in that order, ten a
    gameweek (match ``id`` 1-10 gameweek 1, ...), and only a moved match's ``event`` differs from it (2021-22: 36
    moved, most of them COVID postponements; 2024-25: 5)."""
    return ((fixture_list["fixture"] - 1) // 10 + 1).astype("int64")


def published_schedule(fixture_list: pd.DataFrame, season: int, weeks: int) -> pd.DataFrame:
    """The schedule table (one row per match a gameweek's fixture list shows before its deadline), without
    knowing postponements before they happen: each gameweek lists the matches it finally holds, and a match
    first scheduled in it and postponed to a later gameweek (its postponement may have come on the day: 2024-25's
    Everton v Liverpool, gameweek 15, a storm), without a score (``played`` false). So a postponed match is never a
    blank known in advance; a rescheduled one shows at its new gameweek (a double gameweek)."""
    fx = fixture_list.assign(first=first_gameweek(fixture_list))
    held = fx.dropna(subset=["gameweek"]).assign(week=lambda d: d["gameweek"].astype("int64"), played=True)
    moved = fx[fx["gameweek"].isna() | (fx["gameweek"].astype("Float64") > fx["first"])]
    moved = moved.assign(week=moved["first"], played=False, home_score=pd.NA, away_score=pd.NA, kickoff_time=pd.NA)
    rows = pd.concat([held, moved], ignore_index=True)
    rows = rows[rows["week"] <= weeks].sort_values(["week", "played", "kickoff_time", "fixture"],
                                                    ascending=[True, False, True, True], kind="stable")
    return pd.DataFrame({"season": season, "week": rows["week"].astype("int64"),
                         "game_id": rows["fixture"].astype(str), "home_team": rows["home"].astype("string"),
                         "away_team": rows["away"].astype("string"),
                         "home_score": pd.to_numeric(rows["home_score"]).astype("float64"),
                         "away_score": pd.to_numeric(rows["away_score"]).astype("float64"),
                         "gameday": rows["kickoff_time"].astype("string"),
                         "played": rows["played"].astype(bool)}).reset_index(drop=True)


def fixtures_per_club(schedule: pd.DataFrame) -> dict[int, dict[str, int]]:
    """Gameweek -> club -> its matches that gameweek by a prepared schedule (2 in a double gameweek; a blank
    club is absent), known before the season."""
    out: dict[int, dict[str, int]] = {}
    for w, home, away in zip(schedule["week"], schedule["home_team"], schedule["away_team"]):
        for club in (home, away):
            out.setdefault(int(w), {}).setdefault(club, 0)
            out[int(w)][club] += 1
    return out


def played_gameweeks(fixture_list: pd.DataFrame) -> int:
    """The last gameweek up to which every scheduled match has a final score (the season is under way after it)."""
    sched = fixture_list.dropna(subset=["gameweek"])
    done = sched["home_score"].notna().groupby(sched["gameweek"].astype(int)).all()
    last = 0
    for gw in range(1, int(sched["gameweek"].max()) + 1):
        if gw in done.index and not done[gw]:
            break
        last = gw
    return last


def played_through(pgw: pd.DataFrame, fixture_list: pd.DataFrame, name: str) -> int:
    """The last gameweek up to which every gameweek is played: each match has its final score
    (:func:`played_gameweeks`) and each club of its matches has rows in its file. The gameweek after may be under
    way (its file not copied yet); a later gameweek with rows means a file is missing or cut short, a DataError:
    a gameweek without rows would score every player 0."""
    last = played_gameweeks(fixture_list)
    sched = fixture_list.dropna(subset=["gameweek"])
    have = {int(gw): set(g) for gw, g in pgw.groupby("gameweek")["club"]}
    need = {int(gw): set(g["home"]) | set(g["away"]) for gw, g in sched.groupby("gameweek")}
    upto = next((gw - 1 for gw in range(1, last + 1) if not need.get(gw, set()) <= have.get(gw, set())), last)
    later = [gw for gw in range(upto + 2, last + 1) if have.get(gw)]
    if later:
        gw = upto + 1
        missing = sorted(need[gw] - have.get(gw, set()))
        raise DataError(f"FPL season {name}: gameweek {gw} has no rows for {', '.join(missing)} (gws/gw{gw}.csv is "
                        f"missing or incomplete), though its matches are played and gameweek {later[0]} has rows; "
                        f"{FIX}")
    return upto


def last_played(root: Path, season: int) -> tuple[int, int]:
    """(:func:`played_through`, the schedule's last gameweek) of a season in a data folder (``ffbench validate``)."""
    name = FPL.season_name(season)
    folder = season_dir(root, name)
    fx = fixtures(folder)
    return played_through(player_gameweeks(folder, season_rules(season)), fx, name), int(fx["gameweek"].max())


def _fingerprint(root: Path, season: int, weeks: int, allow_missing_history: bool) -> str:
    """What a prepared season is made from: its parameters and the files of it and the two seasons before."""
    params = {"season": season, "source": "fpl", "weeks": weeks, "allow_missing_history": allow_missing_history}
    h = hashlib.sha256(json.dumps({"v": __version__, **params}, sort_keys=True, default=str).encode())
    for d in (season_dir(root, FPL.season_name(y)) for y in (season, season - 1, season - 2)):
        for p in sorted(d.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{d.name}/{p.relative_to(d)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _history(root: Path, year: int) -> pd.DataFrame | None:
    """An earlier season's per-player summary (:func:`_summary`), None where the data has no such season."""
    d = season_dir(root, FPL.season_name(year))
    if not (d / "gws").is_dir():
        return None
    return _summary(player_gameweeks(d, season_rules(year)))


def prepare_season(season: int, data_dir: str | Path, weeks: int = 38,
                   allow_missing_history: bool = False) -> PreparedSeason:
    """The prepared season of Premier League ``season`` (its start year) from an ``fpl/`` folder: the tables the
    engine reads, as for the NFL (``schema``): ``weekly`` one row per player-gameweek he is listed for (a squad
    player's 0-minute gameweeks too: ``minutes`` says who played) with ``week`` the gameweek, ``team`` his club,
    ``fantasy_points`` summed over his fixtures; ``schedule`` one row per
    match; ``players`` the preseason facts (the gameweek-1 market as ADP, projections from earlier seasons);
    ``byes`` empty (a blank gameweek is a club without a match that week, known from the schedule) and no injury
    report (FPL publishes none: marked unavailable)."""
    root = Path(data_dir)
    name = FPL.season_name(season)
    sdir = season_dir(root, name)
    if not (sdir / "gws").is_dir():
        raise DataError(missing_season(root, name))
    if not (season_dir(root, FPL.season_name(season - 1)) / "gws").is_dir() and not allow_missing_history:
        raise DataError(f"FPL season {name}: the season before ({FPL.season_name(season - 1)}) is not in {root}, so "
                        "no player has a history: every preseason projection would be 0 (the market's ownership rank, "
                        "the adp column, is all the draft has) and in-season projections start from 0; add that "
                        "season's folder, or set data.allow_missing_history: true to run without it")
    t0 = time.perf_counter()
    notes: dict = {}
    pgw = player_gameweeks(sdir, season_rules(season), notes)
    fx = fixtures(sdir)
    played = played_through(pgw, fx, name)
    last, before = _history(root, season - 1), _history(root, season - 2)

    schedule = published_schedule(fx, season, weeks)
    club_fixtures = fixtures_per_club(schedule)

    rows = pgw[pgw["gameweek"] <= min(weeks, played)]
    stats = [c for c in SUMMED if c != "total_points"]
    weekly = pd.DataFrame({
        "player_id": rows["player_id"].astype("string"), "player_name": rows["player_name"].astype("string"),
        "position": rows["position"].astype("string"), "team": rows["club"].astype("string"),
        "opponent_team": pd.array([pd.NA] * len(rows), dtype="string"), "season": season,
        "week": rows["gameweek"].astype("int64"), "season_type": "REG", "fixtures": rows["fixtures"].astype("int64"),
        **{c: rows[c].astype("float64") for c in stats}, "value": rows["value"].astype("float64"),
        "selected": rows["selected"].astype("float64"), "source_player_id": rows["element"].astype(str),
        "total_points": rows["total_points"].astype("float64"),
        "fantasy_points": rows["fantasy_points"].astype("float64")})
    # every gameweek a player is listed for a match of his club, a 0-minute one too (the feed counts only those
    # with minutes as his games)
    weekly = weekly.sort_values(["season", "week", "player_id"], kind="stable").reset_index(drop=True)

    market = preseason_market(pgw)
    proj = preseason_projection(market, last, before, weeks)
    m = market.set_index("player_id")
    later = weekly[~weekly["player_id"].isin(m.index)].drop_duplicates("player_id").set_index("player_id")
    ids = sorted(set(m.index) | set(later.index))
    players = pd.DataFrame({"player_id": pd.Series(ids, dtype="string")}).set_index("player_id")
    players["player_name"] = m["player_name"].reindex(ids).fillna(later["player_name"].reindex(ids))
    players["position"] = m["position"].reindex(ids).fillna(later["position"].reindex(ids))
    players["team"] = m["club"].reindex(ids)  # preseason club: gameweek 1's; a later joiner's is the engine's
    players["bye_week"] = pd.array([pd.NA] * len(ids), dtype="Int64")
    players["adp"] = m["market_rank"].reindex(ids).astype("float64")
    players["adp_source"] = pd.Series("fpl_market", index=players.index, dtype="string").where(players["adp"].notna())
    players["proj_points_builtin"] = proj.reindex(ids).astype("float64")
    players["proj_ppg_builtin"] = (players["proj_points_builtin"] / weeks).round(4)
    players["proj_points_sportsdataio"] = float("nan")
    players["proj_points_fantasypros"] = float("nan")
    players["proj_points"] = players["proj_points_builtin"].fillna(0.0)
    players["proj_source"] = pd.Series("builtin", index=players.index, dtype="string")
    for col, summary in (("prev", last), ("prev2", before)):
        players[f"{col}_points"] = summary["points"].reindex(ids).fillna(0.0).round(2) if summary is not None else 0.0
        players[f"{col}_games"] = summary["games"].reindex(ids).fillna(0).astype(int) if summary is not None else 0
    players["rookie"] = ~players.index.isin(last.index) if last is not None else False
    players["draft_number"] = pd.array([pd.NA] * len(ids), dtype="Int64")
    players["in_draft_pool"] = players.index.isin(m.index)
    players["value"] = m["value"].reindex(ids).astype("float64")  # gameweek 1's price and ownership
    players["selected"] = m["selected"].reindex(ids).astype("float64")
    players = players.reset_index()
    players["season"] = season
    for c in ("player_name", "position", "team"):
        players[c] = players[c].astype("string")

    pre_rate = players.set_index("player_id")["proj_points"] / weeks
    wp = weekly_projection(weekly, pre_rate, club_fixtures, dict(zip(m.index, m["club"])), weeks)
    # each gameweek's market, published before its deadline: the price and ownership its file gives (a player
    # without a fixture that gameweek has none)
    market = pgw[pgw["gameweek"] <= weeks][["gameweek", "player_id", "value", "selected"]]
    wp = wp.merge(market.rename(columns={"gameweek": "week"}).astype({"week": "int64"}), on=["week", "player_id"],
                  how="left")
    wp.insert(0, "season", season)
    wp = wp[wp["player_id"].isin(players["player_id"])].sort_values(["week", "player_id"]).reset_index(drop=True)

    injuries = pd.DataFrame({c: pd.Series(dtype="string" if c not in ("season", "week") else "int64")
                             for c in schema.INJURY_COLUMNS})
    byes = pd.DataFrame({"team": pd.Series(dtype="string"), "bye_week": pd.Series(dtype="Int64")})
    parity = notes.pop("parity")
    prepared = PreparedSeason(season=season, source="fpl", projection_source="builtin", scoring={}, players=players,
                              weekly=weekly, weekly_projections=wp, injuries=injuries, byes=byes,
                              schedule=schedule, tiers={}, positions=POSITIONS)
    prepared.manifest = {
        "ffbench_version": __version__, "fingerprint": _fingerprint(root, season, weeks, allow_missing_history),
        "season": season,
        "season_name": name, "sport": FPL.name, "source": "fpl", "projection_source": "builtin",
        "injury_source": None, "scoring": {}, "positions": list(POSITIONS),
        "scoring_rules": {p: r.as_dict() for p, r in season_rules(season).items()}, "weeks": weeks,
        "data_dir": str(root), "rows": {k: int(len(v)) for k, v in prepared.tables().items()},
        "missing_history": [FPL.season_name(season - 1)] if last is None else [],
        "draft_pool": int(players["in_draft_pool"].sum()), "read_notes": notes, "points_parity": parity,
        "seconds": round(time.perf_counter() - t0, 2),
        **({"played_weeks": played} if played < int(schedule["week"].max()) else {}),
        "unavailable": ["injury_report"],
        "unavailable_notes": {"injury_report": "FPL publishes no injury report: no player is marked Out"},
    }
    return prepared


def prepare_cached(season: int, data_dir: str | Path, weeks: int = 38, allow_missing_history: bool = False,
                   cache_root: str | Path | None = None) -> PreparedSeason:
    """:func:`prepare_season` through the prepared-season cache (as :func:`ffbench_lib.data.prepare.prepare_cached`
    for the NFL): one folder per season and data folder, reused while its fingerprint holds."""
    from ffbench_lib.core.settings import settings

    root = Path(data_dir)
    cache = Path(cache_root or settings().cache_dir or outputs_dir() / "prepared")
    data_key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:6]
    out = cache / f"{FPL.season_name(season)}-fpl-w{weeks}{'-nohist' if allow_missing_history else ''}-{data_key}"
    fp = _fingerprint(root, season, weeks, allow_missing_history)
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out.parent / f".{out.name}.lock")):
        manifest = out / "manifest.json"
        if manifest.exists() and json.loads(manifest.read_text()).get("fingerprint") == fp:
            return load_prepared(out)
        prepared = prepare_season(season, root, weeks, allow_missing_history)
        write_prepared(prepared, out)
        return prepared
