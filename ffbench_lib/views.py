"""The information firewall: the only code that turns data tables into what an agent sees.

An agent never receives a table, only a view (a plain, JSON-serialisable dict) built here:

* the **draft** view is built from preseason columns of the players table only (projections, ADP, bye,
  previous seasons) - never from the played season's stats;
* the **week-w** views (lineups, trades) are built from :class:`WeekKnowledge`, which is constructed from the
  played weeks ``< w`` plus what is published before week *w* kicks off (the week's projections, the
  injury report, byes and the schedule).

Tests prove it: perturbing every actual stat from week *w* on leaves every view before *w* byte-identical.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .config import League
from .data.prepare import PreparedSeason
from .rules.lineup import slot_counts
from .rules.roster import unmet_starters
from .state import LeagueState

#: The only players-table columns any view may use: all known before the season starts.
PRESEASON_COLUMNS = ("player_id", "player_name", "position", "team", "bye_week", "adp", "proj_points",
                     "proj_points_builtin", "proj_points_sportsdataio", "proj_points_fantasypros", "proj_source",
                     "prev_points", "prev_games", "prev2_points", "prev2_games", "rookie", "draft_number",
                     "in_draft_pool")
RECENT_GAMES = 3


def _r(x: Any) -> float | None:
    if x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA:
        return None
    return round(float(x), 2)


def view_hash(view: dict) -> str:
    return hashlib.sha256(canonical_json(view).encode()).hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class WeekKnowledge:
    """What is knowable just before week ``week`` kicks off, per player."""

    week: int
    games: dict[str, int]
    points: dict[str, float]
    recent: dict[str, list[list[float]]]  # player -> [[week, points], ...] last RECENT_GAMES games
    team: dict[str, str]  # latest known NFL team
    projection: dict[str, float]  # this week's projection (published before kickoff)
    status: dict[str, str]  # this week's official injury report status
    opponent: dict[str, str | None]  # NFL team -> opponent this week (None: bye)


class Firewall:
    def __init__(self, prepared: PreparedSeason, league: League):
        self._league = league
        pl = prepared.players
        self._players = pl.loc[pl["in_draft_pool"] | pl["player_id"].isin(prepared.weekly["player_id"]),
                               list(PRESEASON_COLUMNS)].set_index("player_id", drop=False)
        self._players.index.name = None
        self._pool = self._players[self._players["in_draft_pool"]].sort_values(["proj_points", "player_id"],
                                                                                 ascending=[False, True])
        self._weekly = prepared.weekly[["player_id", "week", "team", "fantasy_points"]]
        self._wproj = prepared.weekly_projections.set_index(["week", "player_id"])["proj_points_builtin"]
        self._injuries = prepared.injuries[["week", "player_id", "report_status"]]
        self._schedule = prepared.schedule[["week", "home_team", "away_team"]]
        self._byes = dict(zip(prepared.byes["team"], prepared.byes["bye_week"]))
        self._rows = dict(zip(self._players["player_id"], self._players.to_dict("records")))
        self._cards = {pid: self._make_card(row) for pid, row in self._rows.items()}
        self._pool_ids = list(self._pool["player_id"])
        self._pool_by_pos = {pos: list(self._pool.loc[self._pool["position"] == pos, "player_id"])
                             for pos in ("QB", "RB", "WR", "TE")}
        self._weeks: dict[int, WeekKnowledge] = {}
        self.position = self._players["position"].to_dict()
        self.name = self._players["player_name"].to_dict()
        self.preseason_proj = self._players["proj_points"].fillna(0.0).to_dict()
        self.adp = self._players["adp"].to_dict()

    # ------------------------------------------------------------------------------------------ players
    @staticmethod
    def _make_card(p: dict[str, Any]) -> dict[str, Any]:
        return {"id": p["player_id"], "name": p["player_name"], "pos": p["position"],
                "team": None if pd.isna(p["team"]) else p["team"],
                "bye": None if pd.isna(p["bye_week"]) else int(p["bye_week"]),
                "adp": _r(p["adp"]), "proj": _r(p["proj_points"]),
                "prev_pts": _r(p["prev_points"]), "prev_g": int(p["prev_games"])}

    def player_card(self, pid: str) -> dict[str, Any]:
        """The preseason card of a player (a fresh copy: views are never shared mutable state)."""
        return dict(self._cards[pid])

    def _league_rules(self) -> dict[str, Any]:
        lg = self._league
        return {"roster_slots": slot_counts(lg.roster), "bench": lg.roster.BENCH,
                "flex_positions": list(lg.roster.flex_positions), "caps": dict(lg.roster.caps),
                "scoring": {k: v for k, v in lg.scoring_weights.items() if v}, "teams": len(lg.teams),
                "weeks": lg.weeks, "season": lg.season}

    def _roster_summary(self, ids: list[str]) -> dict[str, Any]:
        positions = [self.position[p] for p in ids]
        counts = {pos: positions.count(pos) for pos in ("QB", "RB", "WR", "TE")}
        return {"counts": counts, "unfilled_starters": unmet_starters(positions, self._league.roster)}

    # --------------------------------------------------------------------------------------------- draft
    def draft_view(self, state: LeagueState, team: str, pick: int, rnd: int) -> dict[str, Any]:
        """Roster, open slots and caps, and the best available players per position by preseason projection."""
        lg = self._league
        mine = state.rosters[team]
        taken = state.drafted()
        summary = self._roster_summary(mine)
        thin = [pos for pos, n in summary["counts"].items() if n < getattr(lg.roster, pos)]
        available: dict[str, list[dict]] = {}
        for pos in ("QB", "RB", "WR", "TE"):
            cands = [p for p in self._pool_by_pos[pos] if p not in taken][: lg.draft.show_per_position]
            available[pos] = [self.player_card(pid) for pid in cands]
        drafted = [self.position[p] for p in taken]
        return {"decision": "draft", "season": lg.season, "pick": pick, "round": rnd, "rounds": lg.roster.size,
                "team": team, "rules": self._league_rules(),
                "drafted_by_position": {pos: drafted.count(pos) for pos in ("QB", "RB", "WR", "TE")},
                "roster": [self.player_card(p) for p in mine], "roster_summary": summary, "thin_positions": thin,
                "shortlist_size": lg.draft.shortlist_size, "available": available}

    def available_ids(self, state: LeagueState) -> list[str]:
        """Every draftable player not yet taken, best preseason projection first (the legal pick set)."""
        taken = state.drafted()
        return [p for p in self._pool_ids if p not in taken]

    def shortlist_detail(self, ids: list[str]) -> list[dict[str, Any]]:
        """Richer preseason detail: previous seasons per game, games played, projection breakdown."""
        out = []
        for pid in ids:
            p = self._rows[pid]
            card = self.player_card(pid)
            card.update({
                "prev_ppg": _r(p["prev_points"] / p["prev_games"]) if p["prev_games"] else None,
                "prev2_pts": _r(p["prev2_points"]), "prev2_g": int(p["prev2_games"]),
                "prev2_ppg": _r(p["prev2_points"] / p["prev2_games"]) if p["prev2_games"] else None,
                "proj_builtin": _r(p["proj_points_builtin"]), "proj_sportsdataio": _r(p["proj_points_sportsdataio"]),
                "proj_fantasypros": _r(p["proj_points_fantasypros"]), "proj_source": p["proj_source"],
                "rookie": bool(p["rookie"]),
                "nfl_draft_pick": None if pd.isna(p["draft_number"]) else int(p["draft_number"]),
                "injury_note": None,  # no preseason injury feed in the data; nothing later may leak in
            })
            out.append(card)
        return out

    # -------------------------------------------------------------------------------------------- weeks
    def week(self, w: int) -> WeekKnowledge:
        """Build the week-``w`` knowledge from played weeks < w and pre-kickoff publications of week w."""
        if w not in self._weeks:
            self._weeks[w] = self._build_week(w)
        return self._weeks[w]

    def _build_week(self, w: int) -> WeekKnowledge:
        played = self._weekly[self._weekly["week"] < w]  # the firewall: nothing from week w on
        g = played.groupby("player_id")
        games = g["week"].nunique().to_dict()
        points = g["fantasy_points"].sum().round(2).to_dict()
        last = played.sort_values(["player_id", "week"]).groupby("player_id").tail(RECENT_GAMES)
        recent: dict[str, list[list[float]]] = {}
        for pid, wk, pts in zip(last["player_id"], last["week"], last["fantasy_points"]):
            recent.setdefault(pid, []).append([int(wk), round(float(pts), 2)])
        team = self._players["team"].dropna().to_dict()
        team.update(played.sort_values("week").groupby("player_id")["team"].last().dropna().to_dict())
        proj = self._wproj.xs(w, level="week").to_dict() if w in self._wproj.index.get_level_values(0) else {}
        inj = self._injuries[(self._injuries["week"] == w) & self._injuries["report_status"].notna()]
        status = dict(zip(inj["player_id"], inj["report_status"].astype(str)))
        games_w = self._schedule[self._schedule["week"] == w]
        opponent: dict[str, str | None] = {t: None for t in self._byes}
        for h, a in zip(games_w["home_team"], games_w["away_team"]):
            opponent[h], opponent[a] = a, h
        return WeekKnowledge(w, games, points, recent, team, proj, status, opponent)

    def player_week(self, pid: str, w: int) -> dict[str, Any]:
        """One rostered player as seen before week ``w``: season to date, last season, recent games,
        this week's projection and opponent, and zero flags knowable before kickoff (bye, ruled Out)."""
        k = self.week(w)
        card = self.player_card(pid)
        team = k.team.get(pid)
        g = k.games.get(pid, 0)
        pts = k.points.get(pid, 0.0)
        status = k.status.get(pid)
        on_bye = team is not None and k.opponent.get(team, None) is None
        card.update({"team": team, "opp": k.opponent.get(team) if team else None,
                     "std_g": g, "std_pts": _r(pts), "std_ppg": _r(pts / g) if g else None,
                     "recent": k.recent.get(pid, []),
                     "last3_avg": _r(np.mean([x[1] for x in k.recent[pid]])) if pid in k.recent else None,
                     "proj_week": _r(k.projection.get(pid)), "injury": status,
                     "zero_flags": [f for f, on in (("bye", on_bye), ("out", status == "Out")) if on]})
        return card

    def lineup_view(self, state: LeagueState, team: str, w: int) -> dict[str, Any]:
        lg = self._league
        rec = state.records[team]
        return {"decision": "lineup", "season": lg.season, "week": w, "team": team, "rules": self._league_rules(),
                "record": {"wins": rec.wins, "losses": rec.losses, "ties": rec.ties, "points_for": round(rec.points_for, 2)},
                "opponent_team": self.matchup_opponent(state, team, w),
                "players": [self.player_week(p, w) for p in sorted(state.rosters[team])]}

    @staticmethod
    def matchup_opponent(state: LeagueState, team: str, w: int) -> str | None:
        for a, b in state.schedule.get(str(w), []):
            if team in (a, b):
                return b if a == team else a
        return None

    # ------------------------------------------------------------------------------------------- trades
    def positional_strength(self, state: LeagueState, w: int) -> dict[str, dict[str, float]]:
        """Per team and position: the summed weekly projection of its best starters at that position."""
        k = self.week(w)
        out = {}
        for team, ids in state.rosters.items():
            strength = {}
            for pos in ("QB", "RB", "WR", "TE"):
                vals = sorted((k.projection.get(p, 0.0) for p in ids if self.position[p] == pos), reverse=True)
                strength[pos] = round(float(sum(vals[: max(1, getattr(self._league.roster, pos))])), 2)
            out[team] = strength
        return out

    def trade_view(self, state: LeagueState, team: str, w: int, offer: dict[str, Any] | None = None,
                   counterparty: str | None = None, step: str = "propose",
                   history: list[dict[str, Any]] | None = None, locked: set[str] | None = None) -> dict[str, Any]:
        """A trade decision as seen by ``team``: its roster, the other rosters (or the counterparty's), records,
        positional strengths, and the offer from its own side ("you give" / "you get")."""
        lg = self._league
        strength = self.positional_strength(state, w)
        teams = [counterparty] if counterparty else [t for t in state.teams if t != team]
        view: dict[str, Any] = {
            "decision": f"trade_{step}", "season": lg.season, "week": w, "team": team, "rules": self._league_rules(),
            "max_players_per_side": lg.trades.max_players_per_side, "weeks_left": lg.weeks - w + 1,
            "locked_players": sorted(locked or ()),  # traded earlier this week: cannot move again
            "my_roster": [self.player_week(p, w) for p in sorted(state.rosters[team])],
            "my_record": self._record(state, team), "my_strength": strength[team],
            "league_avg_strength": {pos: round(float(np.mean([strength[t][pos] for t in sorted(strength)])), 2)
                                    for pos in ("QB", "RB", "WR", "TE")},  # summed in one order, whatever the dict's
            "other_teams": [{"team": t, "record": self._record(state, t), "strength": strength[t],
                             "roster": [self.player_week(p, w) for p in sorted(state.rosters[t])]} for t in teams],
        }
        if offer is not None:
            view["offer"] = {"from_team": counterparty,
                             "you_give": [self.player_week(p, w) for p in offer["you_give"]],
                             "you_get": [self.player_week(p, w) for p in offer["you_get"]]}
        if history:
            view["negotiation"] = history  # earlier steps, each from this team's side, rationale untrusted
        return view

    @staticmethod
    def _record(state: LeagueState, team: str) -> dict[str, Any]:
        r = state.records[team]
        return {"wins": r.wins, "losses": r.losses, "ties": r.ties, "points_for": round(r.points_for, 2)}
