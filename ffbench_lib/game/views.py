"""The information firewall: the only code that turns data tables into what an agent sees.

An agent never receives a table, only a view (a plain, JSON-serialisable dict) built here; the parts many views
show (a player's card of a week, the rules) are one shared, read-only object each (:mod:`~ffbench_lib.game.frozen`),
so a view is built and encoded without copying them, and changing one raises instead of changing other views:

* the **draft** view is built from the :class:`~ffbench_lib.game.knowledge.PlayerCatalog` (preseason columns of the
  players table only: projections, ADP, bye, previous seasons) - never from the played season's stats;
* the **week-w** views (lineups, trades, waivers) are built from the catalog and ``Knowledge.as_of(w)``, which holds
  only the played weeks ``< w`` plus what is published before week *w* kicks off (the week's projections,
  the injury report, byes and the schedule): the future is absent from it, not filtered out.

Decision kinds with views of their own (waivers) build them from this class's public pieces (``player_week``,
``week``, ``rules``, ``record``), never from a table. Tests prove it: perturbing every actual stat from week *w*
on leaves every view before *w* byte-identical.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from contextlib import contextmanager
from itertools import islice
from typing import Any

import numpy as np
import pandas as pd

from ffbench_lib.config.league import DEFAULT_SPORT, League
from ffbench_lib.data.prepared import PreparedSeason
from ffbench_lib.game.frozen import COMPACT, FrozenDict, FrozenList, encode, freeze
from ffbench_lib.game.frozen import spaced_json  # noqa: F401 (re-exported: made in frozen, used there)
from ffbench_lib.game.knowledge import OUT, Knowledge, PlayerCatalog, SeasonFeed, mean_points
from ffbench_lib.game.knowledge import rounded as _r
from ffbench_lib.game.rules.roster import unmet_starters
from ffbench_lib.game.state import LeagueState


#: inputs a prepared season may lack (its manifest's ``unavailable``) that views and prompts must name
VIEW_UNAVAILABLE = ("injury_report", "adp")


def view_hash(view: dict) -> str:
    return json_hash(canonical_json(view))


def json_hash(text: str) -> str:
    """The view hash of a view's :func:`canonical_json` (for a caller that keeps the encoding)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)``; the shared,
    read-only parts of a view (cards, rules: :mod:`~ffbench_lib.game.frozen`) are encoded once, not per view."""
    return encode(obj, COMPACT)


class Firewall:
    """Views for one league: the player catalog, and the knowledge of each week from the season feed
    (the firewall never reads the played season's rows itself)."""

    def __init__(self, prepared: PreparedSeason, league: League):
        self._league = league
        self.catalog = PlayerCatalog(prepared)
        self._feed = SeasonFeed(prepared, self.catalog)
        #: (player, week) -> his card of that week, built once (the knowledge of a week never changes) and
        #: shared read-only by every view (a FrozenDict); player -> his preseason card, likewise
        self._player_weeks: dict[tuple[str, int], dict[str, Any]] = {}
        self._cards: dict[str, dict[str, Any]] = {}
        self._details: dict[str, dict[str, Any]] = {}  # player -> his draft shortlist detail, likewise
        self._rules: dict[str, Any] | None = None
        #: (week and active rosters, positional strengths, their league average): see :meth:`_strengths`
        self._strength_kept: tuple[Any, dict, dict] | None = None
        self.position = self.catalog.position
        self.name = self.catalog.name
        self.preseason_proj = self.catalog.preseason_proj
        self.adp = self.catalog.adp
        #: publications the season lacks that every view names (no injury report: nobody is marked Out)
        self.unavailable = [u for u in prepared.manifest.get("unavailable", []) if u in VIEW_UNAVAILABLE]
        #: whether the season publishes a weekly market (price and ownership before each deadline: FPL)
        self._market = {"value", "selected"} <= set(prepared.weekly_projections.columns)
        #: the teams shown protected numbers (``information.numbers: protected``: the masked seats, set by the
        #: runner); their boards are cut by the protected value (:meth:`board`), so a card's presence on a board
        #: says no more than the card itself
        self.protected_teams: frozenset[str] = frozenset()
        self._protector = None
        self._protected_pool: dict[str, list[str]] = {}

    @property
    def protector(self):
        """The league's :class:`~ffbench_lib.game.protect.Protector` (one per firewall: its partitions are built
        once), or None with exact numbers."""
        if self._protector is None and self._league.information.numbers == "protected":
            from ffbench_lib.game.protect import Protector
            self._protector = Protector(self, self._league.seed)
        return self._protector

    @contextmanager
    def shown_protected(self, team: str):
        """Views built inside are ``team``'s as a team shown protected numbers sees them (its draft boards and
        free-agent lists cut by the protected value), in a league of exact numbers too: an exam suite's source
        season freezes both. The protector is the one a protected run of this league would use (its seed)."""
        if self._protector is None:
            from ffbench_lib.game.protect import Protector
            self._protector = Protector(self, self._league.seed)
        was = self.protected_teams
        self.protected_teams = was | {team}
        try:
            yield
        finally:
            self.protected_teams = was

    def board(self, team: str, pos: str) -> list[str]:
        """The draft pool of ``pos`` in the order ``team``'s board takes its first untaken players from: the best
        preseason projection first, or for a team shown protected numbers the best protected projection (its
        class's midpoint), ties in the protection's keyed order."""
        if team not in self.protected_teams:
            return self.catalog.pool(pos)
        if pos not in self._protected_pool:
            self._protected_pool[pos] = self.protector.ranked(self.catalog.pool(pos), "proj", None)
        return self._protected_pool[pos]

    @property
    def league(self) -> League:
        return self._league

    def player_card(self, pid: str) -> dict[str, Any]:
        """The preseason card of a player: shared by every view and read-only (``dict(card)`` to change one)."""
        card = self._cards.get(pid)
        if card is None:
            card = self._cards[pid] = freeze(self.catalog.card(pid))
        return card

    def rules(self) -> dict[str, Any]:
        """The league's rules as every view shows them (slots, bench, flex, caps, scoring, size, season)."""
        return self._league_rules()

    def _league_rules(self) -> dict[str, Any]:
        """The rules, built once (the league never changes under a firewall), shared read-only by every view."""
        if self._rules is None:
            self._rules = freeze(self._make_rules())
        return self._rules

    def _make_rules(self) -> dict[str, Any]:
        lg = self._league
        # superflex_positions only in leagues with the slot, so other leagues' views stay as they were
        superflex = {"superflex_positions": list(lg.roster.superflex_positions)} if lg.roster.SUPERFLEX else {}
        return {"roster_slots": lg.roster.slot_counts(), "bench": lg.roster.BENCH,
                "flex_positions": list(lg.roster.flex_positions), **superflex, "caps": dict(lg.roster.caps),
                # a formation, an ordered bench and another sport only in leagues that have them
                **({"most_starters": dict(lg.roster.most)} if lg.roster.most else {}),
                **({"auto_subs": True} if lg.roster.auto_subs else {}),
                **({"sport": lg.sport, "unit": lg.sport_spec.calendar_unit} if lg.sport != DEFAULT_SPORT else {}),
                **({"position_scoring": {pos: r.as_dict() for pos, r in lg.position_rules.items()}}
                   if lg.position_rules else {}),
                "scoring": {k: v for k, v in lg.scoring_weights.items() if v},
                # tiered rules ([[upto, points], ...], e.g. DST points allowed) only in leagues that have them
                **({"scoring_tiers": lg.scoring_tiers} if lg.scoring_tiers else {}), "teams": len(lg.teams),
                "weeks": lg.weeks, "season": lg.season,
                # IR slots and the playoff format only in leagues that have them
                **({"ir_slots": lg.roster.IR} if lg.roster.IR else {}),
                # only in seasons that lack one of them, so other seasons' views stay as they were
                **({"unavailable": list(self.unavailable)} if self.unavailable else {}),
                **({"playoffs": {"teams": lg.playoffs.teams, "regular_weeks": lg.regular_weeks,
                                 "round_weeks": list(lg.playoffs.round_weeks)}} if lg.playoffs.enabled else {})}

    def _roster_summary(self, ids: list[str]) -> dict[str, Any]:
        positions = [self.position[p] for p in ids]
        counts = {pos: positions.count(pos) for pos in self._league.roster.positions}
        return {"counts": counts, "unfilled_starters": unmet_starters(positions, self._league.roster)}

    # --------------------------------------------------------------------------------------------- draft
    def draft_view(self, state: LeagueState, team: str, pick: int, rnd: int) -> dict[str, Any]:
        """Roster, open slots and caps, and the best available players per position by preseason projection."""
        lg = self._league
        mine = state.rosters[team]
        taken = state.drafted()
        summary = self._roster_summary(mine)
        thin = [pos for pos, n in summary["counts"].items() if n < lg.roster.starting(pos)]
        available: dict[str, list[dict]] = {}
        for pos in lg.roster.holdable:  # the pool's first untaken players, not every untaken one
            cands = list(islice((p for p in self.board(team, pos) if p not in taken), lg.draft.show_per_position))
            available[pos] = [self.player_card(pid) for pid in cands]
        drafted = [self.position[p] for p in taken]
        return {"decision": "draft", "season": lg.season, "pick": pick, "round": rnd, "rounds": lg.roster.size,
                "team": team, "rules": self._league_rules(),
                "drafted_by_position": {pos: drafted.count(pos) for pos in lg.roster.positions},
                "roster": [self.player_card(p) for p in mine], "roster_summary": summary, "thin_positions": thin,
                "shortlist_size": lg.draft.shortlist_size, "available": available}

    def picks_so_far(self, state: LeagueState) -> list[dict[str, Any]]:
        """Every pick made so far in the draft, in order: who took which player (id, name, position)."""
        return [{"pick": r["pick"], "round": r["round"], "team": r["team"], "id": r["player_id"],
                 "name": self.name[r["player_id"]], "pos": self.position[r["player_id"]]}
                for r in state.tables.get("draft_picks", [])]

    def available_ids(self, state: LeagueState) -> list[str]:
        """Every draftable player not yet taken, best preseason projection first (the legal pick set)."""
        taken = state.drafted()
        return [p for p in self.catalog.pool_ids if p not in taken]

    def supply(self, state: LeagueState) -> dict[str, int]:
        """Draftable players not yet taken, per position (what :meth:`available_ids` holds of each): the pool's
        count less the taken pool players, without a pass over the pool at every pick."""
        pool = self.catalog.preseason_ids
        taken = Counter(self.position[p] for p in state.drafted() if p in pool)
        return {pos: self.catalog.pool_size(pos) - taken[pos] for pos in self.catalog.pool_positions()}

    def shortlist_detail(self, ids: list[str]) -> list[dict[str, Any]]:
        """Richer preseason detail: previous seasons per game, games played, projection breakdown (each player's
        built once, shared read-only like every card)."""
        return [self._details[pid] if pid in self._details else self._detail(pid) for pid in ids]

    def _detail(self, pid: str) -> dict[str, Any]:
        p = self.catalog.row(pid)
        card = dict(self.player_card(pid))
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
        card = self._details[pid] = freeze(card)
        return card

    # -------------------------------------------------------------------------------------------- weeks
    def week(self, w: int) -> Knowledge:
        """What is knowable just before week ``w`` kicks off (played weeks < w and week w's publications)."""
        return Knowledge.as_of(self._feed, w)

    def player_week(self, pid: str, w: int) -> dict[str, Any]:
        """One rostered player as seen before week ``w``: season to date, last season, recent games,
        this week's projection and opponent, and zero flags knowable before kickoff (bye, ruled Out).
        Built once per player and week (it depends on nothing else), shared read-only by every view."""
        card = self._player_weeks.get((pid, w))
        if card is None:
            card = self._player_weeks[(pid, w)] = self._player_week(pid, w)
        return card

    def _player_week(self, pid: str, w: int) -> dict[str, Any]:
        k = self.week(w)
        if pid not in k.known:
            raise ValueError(f"player {pid} is not known before week {w} (first plays later): no view may show them")
        team = k.team.get(pid)
        g = k.games.get(pid, 0)
        pts = k.points.get(pid, 0.0)
        status = k.status.get(pid)
        on_bye = team is not None and k.opponent.get(team, None) is None
        recent = k.recent[pid] if pid in k.recent else None  # never empty when there
        # read-only as built (what freeze() of the plain card gives, without copying it twice): the preseason
        # card's keys in their order, then the week's; "recent" and "zero_flags" read-only lists
        card = {**self.player_card(pid), "team": team, "opp": k.opponent.get(team) if team else None,
                "std_g": g, "std_pts": _r(pts), "std_ppg": _r(pts / g) if g else None,
                "recent": FrozenList([FrozenList(x) for x in recent or ()]),
                "last3_avg": _r(mean_points(recent)) if recent else None,
                "proj_week": _r(k.projection.get(pid)), "injury": status,
                "zero_flags": FrozenList([f for f, on in (("bye", on_bye), ("out", status == OUT)) if on])}
        if self._market:  # a sport with a market (FPL): the week's price (in millions) and ownership, or None
            price, owned = k.market.get(pid, (None, None))
            card["price"] = None if price is None else round(price / 10, 1)
            card["owned"] = None if owned is None else int(owned)
        return FrozenDict(card)

    def lineup_view(self, state: LeagueState, team: str, w: int) -> dict[str, Any]:
        """The team's active players (who may start); in a league with IR slots also its IR players (``ir``)."""
        lg = self._league
        rec = state.records[team]
        view = {"decision": "lineup", "season": lg.season, "week": w, "team": team, "rules": self._league_rules(),
                "record": {"wins": rec.wins, "losses": rec.losses, "ties": rec.ties, "points_for": round(rec.points_for, 2)},
                "opponent_team": self.matchup_opponent(state, team, w),
                "players": [self.player_week(p, w) for p in sorted(state.active(team))]}
        if lg.roster.IR:
            view["ir"] = [self.player_week(p, w) for p in state.on_ir(team)]
        if lg.playoff_round(w):
            view["playoff"] = self.playoff_context(state, team, w)
        return view

    def playoff_context(self, state: LeagueState, team: str, w: int) -> dict[str, Any]:
        """Where a team stands in a playoff week: the round, whether it plays, and in the second week of a two-week
        round the points both sides have so far (from the playoffs table: weeks already played)."""
        lg = self._league
        rnd = lg.playoff_round(w)
        first = lg.playoff_rounds()[rnd - 1][0]
        pairs = state.extras.get("playoffs", {}).get("pairs", {}).get(str(w), [])
        playing = any(team in p for p in pairs)
        out: dict[str, Any] = {"round": rnd, "rounds": lg.playoffs.rounds, "week_of_round": w - first + 1,
                               "weeks_in_round": lg.playoffs.round_weeks[rnd - 1],
                               "status": "playing" if playing else "eliminated or not qualified"}
        opp = self.matchup_opponent(state, team, w)
        if playing and opp is None:
            out["status"] = "bye"
        if playing and opp is not None and w > first:
            rows = [r for r in state.tables.get("playoffs", []) if first <= r["week"] < w]
            pts = {t: round(sum(r["points_for"] for r in rows if r["team"] == t), 2) for t in (team, opp)}
            out["round_points_so_far"] = {"you": pts[team], "opponent": pts[opp]}
        return out

    @staticmethod
    def matchup_opponent(state: LeagueState, team: str, w: int) -> str | None:
        """The regular-season opponent, or in a playoff week the bracket's (None: a bye or out of the playoffs)."""
        pairs = state.schedule.get(str(w)) or state.extras.get("playoffs", {}).get("pairs", {}).get(str(w), [])
        for a, b in pairs:
            if team in (a, b):
                return b if a == team else a
        return None

    # ------------------------------------------------------------------------------------------- trades
    def positional_strength(self, state: LeagueState, w: int) -> dict[str, dict[str, float]]:
        """Per team and position: the summed weekly projection of its best starters at that position."""
        return self._strengths(state, w)[0]

    def _strengths(self, state: LeagueState, w: int) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
        """The positional strengths and their league average, read-only, kept for the week and the active
        rosters they were computed from: a trade window shows them in every view, and only a trade changes them."""
        key = (w, tuple((t, tuple(state.active(t))) for t in state.rosters))
        if self._strength_kept is None or self._strength_kept[0] != key:
            strength = self._positional_strength(state, w)
            avg = {pos: round(float(np.mean([strength[t][pos] for t in sorted(strength)])), 2)
                   for pos in self._league.roster.positions}  # summed in one order, whatever the dict's
            self._strength_kept = (key, freeze(strength), freeze(avg))
        return self._strength_kept[1], self._strength_kept[2]

    def _positional_strength(self, state: LeagueState, w: int) -> dict[str, dict[str, float]]:
        k = self.week(w)
        out = {}
        for team in state.rosters:
            ids = state.active(team)  # IR players neither start nor trade
            strength = {}
            for pos in self._league.roster.positions:
                vals = sorted((k.projection.get(p, 0.0) for p in ids if self.position[p] == pos), reverse=True)
                strength[pos] = round(float(sum(vals[: max(1, self._league.roster.starting(pos))])), 2)
            out[team] = strength
        return out

    def trade_view(self, state: LeagueState, team: str, w: int, offer: dict[str, Any] | None = None,
                   counterparty: str | None = None, step: str = "propose",
                   history: list[dict[str, Any]] | None = None, locked: set[str] | None = None) -> dict[str, Any]:
        """A trade decision as seen by ``team``: its roster, the other rosters (or the counterparty's), records,
        positional strengths, and the offer from its own side ("you give" / "you get")."""
        lg = self._league
        strength, league_avg = self._strengths(state, w)
        teams = [counterparty] if counterparty else [t for t in state.teams if t != team]
        view: dict[str, Any] = {
            "decision": f"trade_{step}", "season": lg.season, "week": w, "team": team, "rules": self._league_rules(),
            "max_players_per_side": lg.trades.max_players_per_side, "weeks_left": lg.weeks - w + 1,
            "locked_players": sorted(locked or ()),  # traded earlier this week: cannot move again
            "my_roster": [self.player_week(p, w) for p in sorted(state.active(team))],  # IR players never trade
            "my_record": self._record(state, team), "my_strength": strength[team],
            "league_avg_strength": league_avg,
            "other_teams": [{"team": t, "record": self._record(state, t), "strength": strength[t],
                             "roster": [self.player_week(p, w) for p in sorted(state.active(t))]} for t in teams],
        }
        if offer is not None:
            view["offer"] = {"from_team": counterparty,
                             "you_give": [self.player_week(p, w) for p in offer["you_give"]],
                             "you_get": [self.player_week(p, w) for p in offer["you_get"]]}
        if history:
            view["negotiation"] = history  # earlier steps, each from this team's side, rationale untrusted
        return view

    @staticmethod
    def record(state: LeagueState, team: str) -> dict[str, Any]:
        """A team's record as views show it."""
        return Firewall._record(state, team)

    @staticmethod
    def _record(state: LeagueState, team: str) -> dict[str, Any]:
        r = state.records[team]
        return {"wins": r.wins, "losses": r.losses, "ties": r.ties, "points_for": round(r.points_for, 2)}
