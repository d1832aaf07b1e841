"""What can be known, and when: the static player catalog, and the knowledge of one week.

* :class:`PlayerCatalog` holds the preseason facts of every player of a prepared season (the preseason
  columns of the players table, the draft pool, cards, byes). It never holds weekly stats. It is also the
  engine's player lookup (``catalog.position[pid]``...).
* :class:`SeasonFeed` is the only holder of the played season's rows. It releases them one week at a time:
  :meth:`SeasonFeed.as_of` builds the week-*w* :class:`Knowledge` from the rows of weeks < *w* and the
  facts published before week *w* kicks off (that week's projections, injury report and games), nothing else.
* :class:`Knowledge` therefore holds no row of week >= *w*: the future is absent from it, not filtered
  at read time. It only speaks of players whose existence is known by then (:meth:`Knowledge.known_players`).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ffbench_lib.data.prepared import PreparedSeason
from ffbench_lib.sport import sport

#: The only players-table columns any view may use: all known before the season starts.
PRESEASON_COLUMNS = ("player_id", "player_name", "position", "team", "bye_week", "adp", "proj_points",
                     "proj_points_builtin", "proj_points_sportsdataio", "proj_points_fantasypros", "proj_source",
                     "prev_points", "prev_games", "prev2_points", "prev2_games", "rookie", "draft_number",
                     "in_draft_pool")
RECENT_GAMES = 3
#: the official injury-report status of a player ruled out of the week's game (scores 0; may go to IR)
OUT = sport("nfl").out_status


def rounded(x: Any) -> float | None:
    """A number as views show it (2 decimals), None for a missing one."""
    if type(x) is float:  # most calls: a plain float (NaN is the one float unequal to itself)
        return round(x, 2) if x == x else None
    if x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA:
        return None
    return round(float(x), 2)


def mean_points(games: list[list[float]]) -> float:
    """``np.mean`` of the points of a few ``[week, points]`` games, the same float without an array per call:
    below 8 values numpy adds them in order from 0.0, as ``sum`` does (pairwise blocks only from 8 on)."""
    if not 0 < len(games) < 8:
        return float(np.mean([g[1] for g in games]))
    return sum([g[1] for g in games]) / len(games)


class PlayerCatalog:
    """Static preseason facts of every player of a prepared season (draft pool, plus anyone who plays).

    Only :data:`PRESEASON_COLUMNS` are read; the weekly table is consulted for its player ids alone (which
    players the season has, so the engine can look up anyone). Which of them an agent may know of in a given
    week is :meth:`Knowledge.known_players`: the draft pool (:attr:`preseason_ids`) from the start.
    """

    def __init__(self, prepared: PreparedSeason):
        pl = prepared.players
        plays = set(prepared.weekly["player_id"].to_numpy(dtype=object).tolist())  # a set: arrow's isin is slow
        played = np.array([p in plays for p in pl["player_id"].to_numpy(dtype=object).tolist()], dtype=bool)
        players = pl.loc[pl["in_draft_pool"].to_numpy(dtype=bool) | played,
                         list(PRESEASON_COLUMNS)].set_index("player_id", drop=False)
        players.index.name = None
        pool = players[players["in_draft_pool"]].sort_values(["proj_points", "player_id"], ascending=[False, True])
        # columns, not a row dict and a card per player: a season's views read a few hundred of them
        #: column -> values in row order, missing ones None (as ``to_dict("records")`` gives them)
        self._columns: dict[str, list[Any]] = {c: [None if v is pd.NA else v for v in players[c].tolist()]
                                               for c in PRESEASON_COLUMNS}
        self._at: dict[str, int] = {pid: i for i, pid in enumerate(self._columns["player_id"])}  # player -> row
        #: the draft pool, best preseason projection first
        self.pool_ids: tuple[str, ...] = tuple(pool["player_id"])
        #: players known to exist before the season (the draft pool)
        self.preseason_ids: frozenset[str] = frozenset(self.pool_ids)
        self._pool_by_position = {pos: tuple(ids) for pos, ids in pool.groupby("position", sort=False)["player_id"]}
        ids = self._columns["player_id"]
        # player -> value, what the column's to_dict() gives (values as tolist() gives them), without pandas'
        # value-by-value boxing
        self.position: dict[str, str] = dict(zip(ids, players["position"].tolist()))
        self.name: dict[str, str] = dict(zip(ids, players["player_name"].tolist()))
        self.preseason_proj: dict[str, float] = dict(zip(ids, players["proj_points"].fillna(0.0).tolist()))
        self.adp: dict[str, float] = dict(zip(ids, players["adp"].tolist()))
        #: preseason NFL team (players without one are absent)
        self.team: dict[str, str] = {p: t for p, t in zip(ids, players["team"].tolist()) if pd.notna(t)}
        #: NFL team -> bye week, published with the schedule before the season
        self.byes: dict[str, int] = dict(zip(prepared.byes["team"], prepared.byes["bye_week"]))

    @staticmethod
    def _make_card(p: dict[str, Any]) -> dict[str, Any]:
        return {"id": p["player_id"], "name": p["player_name"], "pos": p["position"],
                "team": None if pd.isna(p["team"]) else p["team"],
                "bye": None if pd.isna(p["bye_week"]) else int(p["bye_week"]),
                "adp": rounded(p["adp"]), "proj": rounded(p["proj_points"]),
                "prev_pts": rounded(p["prev_points"]), "prev_g": int(p["prev_games"])}

    def card(self, pid: str) -> dict[str, Any]:
        """The preseason card of a player (a fresh one: views are never shared mutable state)."""
        return self._make_card(self.row(pid))

    def row(self, pid: str) -> dict[str, Any]:
        """Every preseason column of a player (a fresh dict, in :data:`PRESEASON_COLUMNS` order)."""
        i = self._at[pid]
        return {c: vals[i] for c, vals in self._columns.items()}

    def pool(self, position: str) -> tuple[str, ...]:
        """The draft pool of one position, best preseason projection first (empty if the data has none)."""
        return self._pool_by_position.get(position, ())

    def pool_positions(self) -> tuple[str, ...]:
        """The positions the draft pool holds players of."""
        return tuple(self._pool_by_position)

    def pool_size(self, position: str) -> int:
        return len(self._pool_by_position.get(position, ()))


@dataclass(frozen=True)
class Publication:
    """What is published about week ``week`` before it kicks off."""

    week: int
    projection: dict[str, float]  # player -> this week's projection
    status: dict[str, str]  # player -> official injury report status
    games: tuple[tuple[str, str], ...]  # (home, away) NFL teams
    #: player -> (price, managers who own him) as the week's market publishes them before its deadline (FPL's
    #: ``value`` and ``selected``); empty where the sport has no such market
    market: dict[str, tuple[float, float]] = field(default_factory=dict)


class Recent(Mapping):
    """player -> ``[[week, points], ...]``, his last RECENT_GAMES games (points to 2 decimals), each player's list
    made when first read: a season's views read a few hundred players of the thousands who played."""

    def __init__(self, bounds: dict[str, tuple[int, int]], weeks: list[int], points: list[float]):
        # a player's rows: [lo, hi) of the lists; weeks as ints, points already rounded to 2 decimals
        self._bounds, self._weeks, self._points = bounds, weeks, points
        self._made: dict[str, list[list[float]]] = {}

    def __getitem__(self, pid: str) -> list[list[float]]:
        got = self._made.get(pid)
        if got is None:
            lo, hi = self._bounds[pid]
            got = self._made[pid] = [[w, p] for w, p in zip(self._weeks[lo:hi], self._points[lo:hi])]
        return got

    def __contains__(self, pid: object) -> bool:
        return pid in self._bounds

    def __iter__(self) -> Iterator[str]:
        return iter(self._bounds)

    def __len__(self) -> int:
        return len(self._bounds)


@dataclass(frozen=True)
class Knowledge:
    """What is knowable just before week ``week`` kicks off, per player (only players known by then)."""

    week: int
    known: frozenset[str]  # players known to exist: the draft pool and whoever played in a week < week
    games: dict[str, int]
    points: dict[str, float]
    recent: Mapping[str, list[list[float]]]  # player -> [[week, points], ...] last RECENT_GAMES games (Recent)
    team: dict[str, str]  # latest known NFL team
    projection: dict[str, float]  # this week's projection (published before kickoff)
    status: dict[str, str]  # this week's official injury report status
    opponent: dict[str, str | None]  # team -> opponent this week ("A+B": two games; None: bye)
    market: dict[str, tuple[float, float]] = field(default_factory=dict)  # Publication.market of known players

    @classmethod
    def as_of(cls, feed: SeasonFeed, week: int) -> Knowledge:
        """The knowledge of ``week`` that ``feed`` releases (same as ``feed.as_of(week)``)."""
        return feed.as_of(week)

    @classmethod
    def from_rows(cls, catalog: PlayerCatalog, played: pd.DataFrame | Mapping[str, np.ndarray],
                  pub: Publication, season_ids: list[str] | None = None) -> Knowledge:
        """Build from the played rows of weeks < ``pub.week`` (a frame, or its columns as arrays) and that week's
        publication; refuses later rows. Numpy over the rows (pandas row access is slow), with pandas' own group
        sums and orders: the same Kahan-summed points, each player's games sorted by week, the same dict orders
        (players sorted by id). :class:`SeasonFeed` also hands each row's ``code`` (its player's index in the
        season's sorted ids, ``season_ids``) and ``points_2dp``, made once per season instead of every week."""
        w = pub.week
        weeks = np.asarray(played["week"])
        if len(weeks) and int(weeks.max()) >= w:
            raise ValueError(f"knowledge of week {w} was handed a row of week {int(weeks.max())}")
        fp = np.asarray(played["fantasy_points"], dtype=float)
        if season_ids is None:
            season_codes, season_ids = pd.factorize(np.asarray(played["player_id"], dtype=object), sort=True)
            season_ids, rounded_fp = season_ids.tolist(), None
        else:
            season_codes, rounded_fp = np.asarray(played["code"]), np.asarray(played["points_2dp"])
        # the rows' players, sorted by id (season codes follow id order): pd.factorize(sort=True) of these rows
        uniq, codes = np.unique(season_codes, return_inverse=True)
        ids = [season_ids[c] for c in uniq.tolist()]
        known = catalog.preseason_ids | frozenset(ids)
        n = len(ids)
        span = int(weeks.max()) + 1 if len(weeks) else 1
        if "minutes" in played:  # rows of gameweeks a player was listed but did not play are no games of his
            on = np.asarray(played["minutes"], dtype=float) > 0
            games = dict(zip(ids, np.bincount(np.unique(codes[on] * span + weeks[on]) // span, minlength=n).tolist()))
        else:
            games = dict(zip(ids, np.bincount(np.unique(codes * span + weeks) // span, minlength=n).tolist()))
        sums = pd.Series(fp).groupby(codes).sum().round(2)
        points = dict(zip(ids, sums.to_numpy().tolist()))
        # the last RECENT_GAMES games of each player: rows sorted by (player, week), the tail of each group
        order = np.lexsort((weeks, codes))
        sc = codes[order]
        ends = np.searchsorted(sc, sc, side="right")
        last = order[(ends - np.arange(len(sc))) <= RECENT_GAMES]
        lc = codes[last]  # grouped by player (in id order), each group in week order
        starts = np.flatnonzero(np.r_[True, lc[1:] != lc[:-1]]) if len(lc) else np.zeros(0, dtype=int)
        bounds = np.r_[starts, len(lc)].tolist()
        recent = Recent(dict(zip([ids[c] for c in lc[starts].tolist()], zip(bounds[:-1], bounds[1:]))),
                        weeks[last].tolist(), [round(p, 2) for p in fp[last].tolist()] if rounded_fp is None
                        else rounded_fp[last].tolist())
        team = {p: t for p, t in catalog.team.items() if p in known}
        # the latest known NFL team: the last non-missing one in week order (pandas' sort: quicksort by week)
        teams = np.asarray(played["team"], dtype=object)
        in_week_order = np.argsort(weeks, kind="quicksort")
        in_week_order = in_week_order[~pd.isna(teams[in_week_order])]
        rev = codes[in_week_order][::-1]
        seen, first = np.unique(rev, return_index=True)  # first in reverse = last in week order, by code
        team.update(zip([ids[c] for c in seen.tolist()], teams[in_week_order][::-1][first].tolist()))
        opponent: dict[str, str | None] = {t: None for t in catalog.byes}
        for h, a in pub.games:  # several games in a week (a soccer double gameweek): "ARS+CHE", in schedule order
            opponent[h] = a if opponent.get(h) is None else f"{opponent[h]}+{a}"
            opponent[a] = h if opponent.get(a) is None else f"{opponent[a]}+{h}"
        return cls(w, known, games, points, recent, team,
                   {p: v for p, v in pub.projection.items() if p in known},
                   {p: s for p, s in pub.status.items() if p in known}, opponent,
                   {p: m for p, m in pub.market.items() if p in known})

    def known_players(self) -> frozenset[str]:
        """Players whose existence is known before this week: the draft pool, and anyone who has played."""
        return self.known


class SeasonFeed:
    """The played season's rows, released only as the knowledge of a week (rows of earlier weeks + that
    week's pre-kickoff publications). Nothing else reads the weekly table."""

    def __init__(self, prepared: PreparedSeason, catalog: PlayerCatalog):
        self._catalog = catalog
        wk = prepared.weekly
        # plain numpy columns (object strings), no frame: a week's rows are a boolean mask over each (a frame
        # would hold the strings in arrow again, and every week's filter and read convert them)
        fp = wk["fantasy_points"].to_numpy(dtype=float)
        codes, ids = pd.factorize(wk["player_id"].to_numpy(dtype=object), sort=True)
        #: the season's player ids, sorted (a row's ``code`` indexes them)
        self._ids: list[str] = ids.tolist()
        self._weekly: dict[str, np.ndarray] = {
            "code": codes, "week": wk["week"].to_numpy(), "team": wk["team"].to_numpy(dtype=object),
            "fantasy_points": fp, "points_2dp": np.array([round(p, 2) for p in fp.tolist()], dtype=float)}
        if "minutes" in wk.columns:  # a sport whose rows list squad players who did not play (FPL)
            self._weekly["minutes"] = wk["minutes"].fillna(0).to_numpy(dtype=float)
        self._weeks_col = self._weekly["week"]
        wp = prepared.weekly_projections
        #: week -> player -> projection, in the table's order
        self._wproj: dict[int, dict[str, float]] = {
            w: dict(zip(pids, vals)) for w, pids, vals in by_week(
                wp["week"], wp["player_id"].to_numpy(dtype=object), wp["proj_points_builtin"].to_numpy(dtype=float))}
        inj = prepared.injuries
        inj = inj[inj["report_status"].notna()]
        self._status: dict[int, dict[str, str]] = {
            w: dict(zip(pids, sts)) for w, pids, sts in by_week(
                inj["week"], inj["player_id"].to_numpy(dtype=object),
                inj["report_status"].astype(str).to_numpy(dtype=object))}
        sc = prepared.schedule
        self._games: dict[int, list[tuple[str, str]]] = {
            w: list(zip(hs, aws)) for w, hs, aws in by_week(
                sc["week"], sc["home_team"].to_numpy(dtype=object), sc["away_team"].to_numpy(dtype=object))}
        #: week -> player -> (price, ownership) published before its deadline, where the projections table has
        #: the market's columns (the Premier League's)
        self._market: dict[int, dict[str, tuple[float, float]]] = {}
        if {"value", "selected"} <= set(wp.columns):
            on = wp[wp["value"].notna()]
            self._market = {w: dict(zip(pids, zip(vals, sel))) for w, pids, vals, sel in by_week(
                on["week"], on["player_id"].to_numpy(dtype=object), on["value"].to_numpy(dtype=float),
                on["selected"].to_numpy(dtype=float))}
        self._weeks: dict[int, Knowledge] = {}

    def _played_before(self, w: int) -> dict[str, np.ndarray]:
        rows = self._weeks_col < w
        return {name: col[rows] for name, col in self._weekly.items()}

    def _published(self, w: int) -> Publication:
        return Publication(w, dict(self._wproj.get(w, {})), dict(self._status.get(w, {})),
                           tuple(self._games.get(w, ())), dict(self._market.get(w, {})))

    def as_of(self, w: int) -> Knowledge:
        """What is knowable just before week ``w`` kicks off (cached: knowledge never changes)."""
        if w not in self._weeks:
            self._weeks[w] = Knowledge.from_rows(self._catalog, self._played_before(w), self._published(w),
                                                 self._ids)
        return self._weeks[w]


def by_week(week: pd.Series, *columns: np.ndarray) -> list[tuple[Any, ...]]:
    """Per week (in order of first appearance), each column's values of its rows as plain lists, in table order:
    what a loop appending row by row to per-week lists gives, with numpy doing the grouping."""
    weeks = week.to_numpy()
    uniq, first = np.unique(weeks, return_index=True)
    out = []
    for w in uniq[np.argsort(first, kind="stable")].tolist():
        rows = np.flatnonzero(weeks == w)
        out.append((w, *(c[rows].tolist() for c in columns)))
    return out
