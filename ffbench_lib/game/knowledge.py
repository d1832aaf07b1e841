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

from dataclasses import dataclass
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
    if x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA:
        return None
    return round(float(x), 2)


class PlayerCatalog:
    """Static preseason facts of every player of a prepared season (draft pool, plus anyone who plays).

    Only :data:`PRESEASON_COLUMNS` are read; the weekly table is consulted for its player ids alone (which
    players the season has, so the engine can look up anyone). Which of them an agent may know of in a given
    week is :meth:`Knowledge.known_players`: the draft pool (:attr:`preseason_ids`) from the start.
    """

    def __init__(self, prepared: PreparedSeason):
        pl = prepared.players
        players = pl.loc[pl["in_draft_pool"] | pl["player_id"].isin(prepared.weekly["player_id"]),
                         list(PRESEASON_COLUMNS)].set_index("player_id", drop=False)
        players.index.name = None
        pool = players[players["in_draft_pool"]].sort_values(["proj_points", "player_id"], ascending=[False, True])
        self._rows: dict[str, dict[str, Any]] = dict(zip(players["player_id"], players.to_dict("records")))
        self._cards = {pid: self._make_card(row) for pid, row in self._rows.items()}
        #: the draft pool, best preseason projection first
        self.pool_ids: tuple[str, ...] = tuple(pool["player_id"])
        #: players known to exist before the season (the draft pool)
        self.preseason_ids: frozenset[str] = frozenset(self.pool_ids)
        self._pool_by_position = {pos: tuple(ids) for pos, ids in pool.groupby("position", sort=False)["player_id"]}
        self.position: dict[str, str] = players["position"].to_dict()
        self.name: dict[str, str] = players["player_name"].to_dict()
        self.preseason_proj: dict[str, float] = players["proj_points"].fillna(0.0).to_dict()
        self.adp: dict[str, float] = players["adp"].to_dict()
        #: preseason NFL team (players without one are absent)
        self.team: dict[str, str] = players["team"].dropna().to_dict()
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
        """The preseason card of a player (a fresh copy: views are never shared mutable state)."""
        return dict(self._cards[pid])


    def row(self, pid: str) -> dict[str, Any]:
        """Every preseason column of a player (a fresh copy)."""
        return dict(self._rows[pid])

    def pool(self, position: str) -> tuple[str, ...]:
        """The draft pool of one position, best preseason projection first (empty if the data has none)."""
        return self._pool_by_position.get(position, ())


@dataclass(frozen=True)
class Publication:
    """What is published about week ``week`` before it kicks off."""

    week: int
    projection: dict[str, float]  # player -> this week's projection
    status: dict[str, str]  # player -> official injury report status
    games: tuple[tuple[str, str], ...]  # (home, away) NFL teams


@dataclass(frozen=True)
class Knowledge:
    """What is knowable just before week ``week`` kicks off, per player (only players known by then)."""

    week: int
    known: frozenset[str]  # players known to exist: the draft pool and whoever played in a week < week
    games: dict[str, int]
    points: dict[str, float]
    recent: dict[str, list[list[float]]]  # player -> [[week, points], ...] last RECENT_GAMES games
    team: dict[str, str]  # latest known NFL team
    projection: dict[str, float]  # this week's projection (published before kickoff)
    status: dict[str, str]  # this week's official injury report status
    opponent: dict[str, str | None]  # NFL team -> opponent this week (None: bye)

    @classmethod
    def as_of(cls, feed: SeasonFeed, week: int) -> Knowledge:
        """The knowledge of ``week`` that ``feed`` releases (same as ``feed.as_of(week)``)."""
        return feed.as_of(week)

    @classmethod
    def from_rows(cls, catalog: PlayerCatalog, played: pd.DataFrame, pub: Publication) -> Knowledge:
        """Build from the played rows of weeks < ``pub.week`` and that week's publication; refuses later rows."""
        w = pub.week
        if len(played) and int(played["week"].max()) >= w:
            raise ValueError(f"knowledge of week {w} was handed a row of week {int(played['week'].max())}")
        known = catalog.preseason_ids | frozenset(played["player_id"])
        g = played.groupby("player_id")
        games = g["week"].nunique().to_dict()
        points = g["fantasy_points"].sum().round(2).to_dict()
        last = played.sort_values(["player_id", "week"]).groupby("player_id").tail(RECENT_GAMES)
        recent: dict[str, list[list[float]]] = {}
        for pid, wk, pts in zip(last["player_id"], last["week"], last["fantasy_points"]):
            recent.setdefault(pid, []).append([int(wk), round(float(pts), 2)])
        team = {p: t for p, t in catalog.team.items() if p in known}
        team.update(played.sort_values("week").groupby("player_id")["team"].last().dropna().to_dict())
        opponent: dict[str, str | None] = {t: None for t in catalog.byes}
        for h, a in pub.games:
            opponent[h], opponent[a] = a, h
        return cls(w, known, games, points, recent, team,
                   {p: v for p, v in pub.projection.items() if p in known},
                   {p: s for p, s in pub.status.items() if p in known}, opponent)

    def known_players(self) -> frozenset[str]:
        """Players whose existence is known before this week: the draft pool, and anyone who has played."""
        return self.known


class SeasonFeed:
    """The played season's rows, released only as the knowledge of a week (rows of earlier weeks + that
    week's pre-kickoff publications). Nothing else reads the weekly table."""

    def __init__(self, prepared: PreparedSeason, catalog: PlayerCatalog):
        self._catalog = catalog
        self._weekly = prepared.weekly[["player_id", "week", "team", "fantasy_points"]]
        self._wproj = prepared.weekly_projections.set_index(["week", "player_id"])["proj_points_builtin"]
        self._injuries = prepared.injuries[["week", "player_id", "report_status"]]
        self._schedule = prepared.schedule[["week", "home_team", "away_team"]]
        self._weeks: dict[int, Knowledge] = {}

    def _played_before(self, w: int) -> pd.DataFrame:
        return self._weekly[self._weekly["week"] < w]

    def _published(self, w: int) -> Publication:
        proj = self._wproj.xs(w, level="week").to_dict() if w in self._wproj.index.get_level_values(0) else {}
        inj = self._injuries[(self._injuries["week"] == w) & self._injuries["report_status"].notna()]
        games = self._schedule[self._schedule["week"] == w]
        return Publication(w, proj, dict(zip(inj["player_id"], inj["report_status"].astype(str))),
                           tuple(zip(games["home_team"], games["away_team"])))

    def as_of(self, w: int) -> Knowledge:
        """What is knowable just before week ``w`` kicks off (cached: knowledge never changes)."""
        if w not in self._weeks:
            self._weeks[w] = Knowledge.from_rows(self._catalog, self._played_before(w), self._published(w))
        return self._weeks[w]
