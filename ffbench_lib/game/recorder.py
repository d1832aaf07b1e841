"""The one writer of a run's rows: decisions, draft picks, lineups, bench, rosters, trades and standings.

The engine and the importer of recorded runs both record through :class:`RunRecorder`, so a table has one
schema (``records.tables.COLUMNS``, also the column order of an empty table) and one way its rows are made,
whoever played the season. Rows are kept in the league state (a checkpoint holds them); decisions go to a sink (the engine
appends them to ``decisions.jsonl`` as they happen, the importer collects them).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.frozen import encode_both
from ffbench_lib.game.views import json_hash
from ffbench_lib.records.tables import COLUMNS


class RunRecorder:
    """Rows of one run. ``sink(record, view_json)`` receives every decision record (a plain dict, the
    ``decisions.jsonl`` line) and its view's JSON (``(canonical_json, spaced)``, both made in the walk that hashes
    it, or None): a writer of the line need not encode the view again."""

    def __init__(self, state: LeagueState, run_id: str, season: int,
                 sink: Callable[[dict, tuple[str, str] | None], None]):
        self.state, self.run_id, self.season, self.sink = state, run_id, season, sink

    def agent(self, team: str) -> str:
        return self.state.agent_ids[team]

    def add(self, table: str, rows: Iterable[dict[str, Any]]) -> None:
        if table not in COLUMNS:
            raise KeyError(f"unknown table {table!r}; add its columns to records.tables.COLUMNS")
        self.state.add_rows(table, list(rows))

    # -- decisions --------------------------------------------------------------------------------------------
    def decision(self, *, team: str, decision: str, view: dict | None, answer: Any, applied: Any, decided_by: str,
                 problems: list[str] | None = None, week: int | None = None, pick: int | None = None,
                 step: int | None = None, extra: dict | None = None, agent: str | None = None,
                 hashed: bool = True) -> dict[str, Any]:
        """One decision as ``decisions.jsonl`` holds it: the exact view, the raw answer, what was applied, by whom
        and why (``problems``). ``hashed=False`` for views that are not ffbench views (an imported prompt)."""
        texts = encode_both(view) if hashed else None  # canonical_json(view), and as json.dumps spaces it
        text = texts[0] if texts else None
        record = {"run_id": self.run_id, "season": self.season, "week": week, "pick": pick, "step": step,
                  "team": team, "agent": agent or self.agent(team), "decision": decision,
                  "view_hash": json_hash(text) if text is not None else None, "view": view, "raw_answer": answer,
                  "applied": applied, "decided_by": decided_by, "reason": "; ".join(problems or []) or None,
                  **(extra or {})}
        self.state.decisions += 1
        self.sink(record, texts)
        return record

    # -- draft ------------------------------------------------------------------------------------------------
    def draft_pick(self, *, pick: int, rnd: int, team: str, player_id: str, player_name: str, position: str | None,
                   proj_points: float, prev_points: float, adp: float | None, shortlist: list[str],
                   in_shortlist: bool, decided_by: str, reason: str | None, agent: str | None = None) -> None:
        self.state.rosters[team].append(player_id)
        self.add("draft_picks", [{
            "pick": pick, "round": rnd, "team": team, "agent": agent or self.agent(team), "player_id": player_id,
            "player_name": player_name, "position": position, "proj_points": proj_points,
            "prev_points": prev_points, "adp": adp, "shortlist": shortlist, "in_shortlist": in_shortlist,
            "decided_by": decided_by, "reason": reason}])

    # -- weeks ------------------------------------------------------------------------------------------------
    def lineup(self, week: int, team: str, starters: Iterable[tuple[str, str | None, str]],
               roster: Iterable[str], position: Mapping[str, str | None], points: Mapping[str, float],
               starter_points: Mapping[str, float] | None = None) -> float:
        """A team's week: its starters (slot, player or None for an empty slot, decided_by), its bench (the
        roster minus the starters) and its roster as the week kicked off; returns the starters' total.
        ``starter_points`` overrides ``points`` for starters (an imported run's own scores). Players on IR are
        no part of the roster that could start: they go to ``ir_players`` (an IR league only)."""
        agent = self.agent(team)
        ir = self.state.on_ir(team)
        if ir:
            self.add("ir_players", [{"week": week, "team": team, "agent": agent, "player_id": p,
                                     "position": position.get(p), "points": float(points.get(p, 0.0))}
                                    for p in sorted(ir)])
            roster = [p for p in roster if p not in ir]
        rows, started = [], set()
        for slot, pid, by in starters:
            pts = (starter_points or points).get(pid, 0.0) if pid else 0.0
            rows.append({"week": week, "team": team, "agent": agent, "slot": slot, "player_id": pid,
                         "position": position.get(pid) if pid else None, "points": float(pts), "decided_by": by})
            if pid:
                started.add(pid)
        roster = list(roster)
        self.add("lineups", rows)
        self.add("bench", [{"week": week, "team": team, "agent": agent, "player_id": p, "position": position.get(p),
                            "points": float(points.get(p, 0.0))} for p in sorted(roster) if p not in started])
        self.add("rosters", [{"week": week, "team": team, "agent": agent, "player_id": p,
                              "position": position.get(p)} for p in sorted(roster)])
        return round(sum(r["points"] for r in rows), 2)

    def dropped(self, week: int, position: Mapping[str, str | None], points: Mapping[str, float]) -> None:
        """Actual points of every player once on a roster (drafted or added) who is on none this week, so a
        player's season is whole in the tables wherever he spent it (draft and trade value count it)."""
        held = self.state.drafted()
        once = {r["player_id"] for r in self.state.tables.get("draft_picks", [])}
        once |= {r["add"] for r in self.state.tables.get("transactions", []) if r["add"] is not None}
        if once - held:  # none without waivers: the checkpoint then stays as it always was
            self.add("dropped_points", [{"week": week, "player_id": p, "position": position.get(p),
                                         "points": float(points.get(p, 0.0))} for p in sorted(once - held)])

    def results(self, week: int, pairs: list[list[str]], totals: dict[str, float]) -> None:
        """The week's matchups and the standings after it."""
        self.state.record_week(week, pairs, totals)

    # -- trades -----------------------------------------------------------------------------------------------
    def trade_step(self, *, week: int, negotiation: str, step: int, actor: str, action: str, proposer: str,
                   receiver: str | None, proposer_gives: list[str], receiver_gives: list[str],
                   rationale: str | None, decided_by: str, reason: str | None) -> None:
        self.add("trade_steps", [{"week": week, "negotiation": negotiation, "step": step, "actor": actor,
                                  "agent": self.agent(actor), "action": action, "proposer": proposer,
                                  "receiver": receiver, "proposer_gives": proposer_gives,
                                  "receiver_gives": receiver_gives, "rationale": rationale,
                                  "decided_by": decided_by, "reason": reason}])

    # -- waivers ----------------------------------------------------------------------------------------------
    def claim(self, *, week: int, phase: str, team: str, rank: int, add: str, drop: str, bid: int | None,
              result: str, reason: str | None, decided_by: str) -> None:
        """One claim as processed: ``result`` won / lost (another team got the player) / skipped (why in
        ``reason``)."""
        self.add("waiver_claims", [{"week": week, "phase": phase, "team": team, "agent": self.agent(team),
                                    "rank": rank, "add": add, "drop": drop, "bid": bid, "result": result,
                                    "reason": reason, "decided_by": decided_by}])

    def transaction(self, *, week: int, team: str, kind: str, add: str | None, drop: str | None, bid: int | None,
                    position: Mapping[str, str | None], name: Mapping[str, str]) -> None:
        """A roster move outside the draft and trades (``kind`` waiver / free_agent, or ``ir_return``: the drop
        that makes room for a player back from IR, ``add`` None); ``drop`` is None for a claim into an open
        spot. The names are recorded because a player picked up this way may never have been drafted."""
        self.add("transactions", [{"week": week, "team": team, "agent": self.agent(team), "kind": kind,
                                   "add": add, "add_name": name.get(add), "add_position": position.get(add),
                                   "drop": drop, "drop_name": name.get(drop), "drop_position": position.get(drop),
                                   "bid": bid}])

    def ir_move(self, *, week: int, team: str, move: str, player: str, drop: str | None, status: str | None,
                decided_by: str, position: Mapping[str, str | None], name: Mapping[str, str]) -> None:
        """A player moved ``to_ir`` or back (``from_ir``, with the player dropped for him or None) and his
        injury-report status that week."""
        self.add("ir_moves", [{"week": week, "team": team, "agent": self.agent(team), "move": move,
                               "player_id": player, "player_name": name.get(player), "position": position.get(player),
                               "status": status, "drop": drop, "decided_by": decided_by}])

    def trade(self, *, week: int, negotiation: str, proposer: str, receiver: str, proposer_gives: list[str],
              receiver_gives: list[str], accepted_step: int, made_by: str) -> None:
        self.add("trades", [{"week": week, "negotiation": negotiation, "proposer": proposer, "receiver": receiver,
                             "proposer_agent": self.agent(proposer), "receiver_agent": self.agent(receiver),
                             "proposer_gives": proposer_gives, "receiver_gives": receiver_gives,
                             "accepted_step": accepted_step, "made_by": made_by}])
