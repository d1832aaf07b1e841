"""League state as plain data: rosters, draft, schedule, standings and the rows of every output table.

Everything here is JSON-serialisable so a checkpoint is one file and a resumed run continues from exactly
the state an uninterrupted run had at that point.
"""
from __future__ import annotations

import json
import re
from json.encoder import encode_basestring
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from operator import is_
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from ffbench_lib.game.frozen import FrozenDict, freeze

#: ``new`` -> ``draft:<rounds done>`` -> ``drafted`` -> ``week:<last completed week>``; a live run also stops at
#: ``decided:<week>``: that week's decisions made (lineups in ``decided``), its games not yet played
PHASE = re.compile(r"new|draft:([1-9][0-9]*)|drafted|week:([1-9][0-9]*)|decided:([1-9][0-9]*)")
_STRICT = ConfigDict(extra="forbid", strict=True)  # a checkpoint is checked field by field, nothing coerced
OPTIONAL = ("extras", "decided")  # written only when a league (or a live run's decided week) uses them
#: tables the scoring of a week writes: a decided, unscored week has no rows in them yet
SCORED = ("lineups", "bench", "rosters", "ir_players", "dropped_points", "playoffs")
#: tables of player-weeks with the player's actual points
POINTS = ("lineups", "bench", "ir_players", "dropped_points")


class StateError(ValueError):
    """A serialised state that is not a valid league state; ``str()`` names the problems."""


@dataclass
class Record:
    __pydantic_config__ = _STRICT

    wins: int = 0
    losses: int = 0
    ties: int = 0
    points_for: float = 0.0
    points_against: float = 0.0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def win_pct(self) -> float:
        return (self.wins + 0.5 * self.ties) / self.games if self.games else 0.0


@dataclass(repr=False)
class LeagueState:
    __pydantic_config__ = _STRICT

    teams: list[str]
    agent_ids: dict[str, str]
    draft_order: list[str]
    schedule: dict[str, list[list[str]]]  # week (as str for JSON) -> [[team_a, team_b], ...]
    rosters: dict[str, list[str]] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    phase: str = "new"  # see PHASE
    decisions: int = 0
    log_bytes: dict[str, int] = field(default_factory=dict)  # JSONL log -> length at this checkpoint
    llm_cost_usd: float = 0.0  # spent on live provider calls (replayed answers cost nothing)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)  # a weekly phase's own state (e.g. FAAB budgets), by phase
    # the week's lineups between the lineup decisions and the scoring: team -> [[slot, player or None, decided_by]]
    # (empty at every ``week:<w>`` checkpoint; a live run's ``decided:<w>`` checkpoint holds them)
    decided: dict[str, list[list[str | None]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for t in self.teams:
            self.rosters.setdefault(t, [])
            self.records.setdefault(t, Record())

    def __repr__(self) -> str:
        """Short: the full state is every table of the season (megabytes), and asyncio reprs a finished task's
        result each time ``asyncio.run`` checks its SIGINT handler (twice a season, 5 ms each)."""
        rows = sum(map(len, self.tables.values()))
        return (f"LeagueState(phase={self.phase!r}, teams={len(self.teams)}, decisions={self.decisions}, "
                f"table_rows={rows})")

    # -- queries ---------------------------------------------------------------------------------------
    def owner_of(self, player_id: str) -> str | None:
        for team, ids in self.rosters.items():
            if player_id in ids:
                return team
        return None

    def drafted(self) -> set[str]:
        return {p for ids in self.rosters.values() for p in ids}

    def on_ir(self, team: str) -> list[str]:
        """The team's players on injured reserve (``extras['ir']``, in the order they went there; none in a league
        without IR slots). ``rosters`` holds every player a team holds, IR players included."""
        return list(self.extras.get("ir", {}).get(team, []))

    def active(self, team: str) -> list[str]:
        """The team's active players (its roster less its IR): the only ones who start, are traded or dropped."""
        ir = set(self.on_ir(team))
        return [p for p in self.rosters[team] if p not in ir]

    def last_completed_week(self) -> int:
        if self.phase.startswith("decided:"):
            return int(self.phase.split(":")[1]) - 1
        return int(self.phase.split(":")[1]) if self.phase.startswith("week:") else 0

    def decided_week(self) -> int | None:
        """The week whose decisions are made and whose games are not yet scored (``decided:<w>``), else None."""
        return int(self.phase.split(":")[1]) if self.phase.startswith("decided:") else None

    def rounds_done(self, rounds: int) -> int:
        """Draft rounds completed (``rounds`` is the roster size, i.e. all of them once drafted)."""
        if self.phase == "new":
            return 0
        return int(self.phase.split(":")[1]) if self.phase.startswith("draft:") else rounds

    def standings_order(self) -> list[str]:
        """Win percentage, then points for, then team name (deterministic)."""
        return sorted(self.teams, key=lambda t: (-self.records[t].win_pct, -self.records[t].points_for, t))

    def record_week(self, week: int, pairs: list[list[str]], totals: dict[str, float]) -> None:
        """Score a week's matchups: update records, append the matchups and the standings after the week."""
        rows = []
        for a, b in pairs:
            for team, opp in ((a, b), (b, a)):
                pf, pa = totals[team], totals[opp]
                result = "W" if pf > pa else "L" if pf < pa else "T"
                rec = self.records[team]
                rec.wins += result == "W"
                rec.losses += result == "L"
                rec.ties += result == "T"
                rec.points_for = round(rec.points_for + pf, 2)
                rec.points_against = round(rec.points_against + pa, 2)
                rows.append({"week": week, "team": team, "agent": self.agent_ids[team], "opponent": opp,
                             "points_for": pf, "points_against": pa, "result": result})
        self.add_rows("matchups", rows)
        self.add_rows("standings", [{"week": week, "team": t, "agent": self.agent_ids[t],
                                     "wins": self.records[t].wins, "losses": self.records[t].losses,
                                     "ties": self.records[t].ties, "points_for": self.records[t].points_for,
                                     "points_against": self.records[t].points_against, "rank": i + 1}
                                    for i, t in enumerate(self.standings_order())])

    def add_rows(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Rows are read-only once added (a change raises): every checkpoint encodes a row once (:meth:`to_json`)."""
        self.tables.setdefault(table, []).extend(freeze(r) for r in rows)

    # -- (de)serialisation ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (shallow: rows are already read-only dicts of plain values)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)
             if f.name not in OPTIONAL or getattr(self, f.name)}  # a league without waivers saves as it always did
        d["records"] = {t: asdict(r) for t, r in self.records.items()}
        return d

    def to_json(self) -> str:
        """Compact JSON that keeps every dict's insertion order (rosters, records, rows): ``from_json`` gives
        back a state whose every iteration order, and so every view and float sum, is the one saved. The same
        text as ``json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False, default=_plain)``, with
        each read-only table row encoded once for all checkpoints (:meth:`_tables_json`)."""
        return "{" + ",".join(encode_basestring(k) + ":" + (self._tables_json(v) if k == "tables" else _JSON.encode(v))
                              for k, v in self.to_dict().items()) + "}"

    def _tables_json(self, tables: dict[str, list[dict[str, Any]]]) -> str:
        """``tables`` as :meth:`to_json` encodes it; a row's text is kept while the table still holds that very row
        at that place (a row is frozen: the same object has the same content), anything else is encoded anew.
        Each table keeps its unbroken frozen prefix: its rows, their texts and those texts joined (a checkpoint
        after rows were only added encodes and joins just the new ones)."""
        if not all(type(k) is str and type(v) is list for k, v in tables.items()):
            return _JSON.encode(tables)
        kept_all: dict[str, tuple[list, list[str], str]] = self.__dict__.setdefault("_row_json", {})
        parts = []
        for name, rows in tables.items():
            kept_rows, texts, joined = kept_all.get(name, ([], [], ""))
            n = len(kept_rows)
            if n > len(rows) or not all(map(is_, kept_rows, rows)):  # a row replaced or removed: the prefix left
                n = next((i for i, (a, b) in enumerate(zip(kept_rows, rows)) if a is not b), min(n, len(rows)))
                kept_rows, texts = kept_rows[:n], texts[:n]
                joined = ",".join(texts)
            new = [_JSON.encode(r) for r in rows[n:]]
            body = joined + "," + ",".join(new) if joined and new else joined or ",".join(new)
            frozen = next((i for i, r in enumerate(rows[n:]) if type(r) is not FrozenDict), len(new))
            if frozen == len(new):
                kept_all[name] = (kept_rows + rows[n:], texts + new, body)
            else:  # only an unbroken frozen prefix is kept
                texts = texts + new[:frozen]
                kept_all[name] = (kept_rows + rows[n:n + frozen], texts, ",".join(texts))
            parts.append(encode_basestring(name) + ":[" + body + "]")
        return "{" + ",".join(parts) + "}"

    @classmethod
    def from_json(cls, text: str | bytes) -> "LeagueState":
        """Parse and type-check (strictly: no coercion, no unknown keys); :class:`StateError` names the fields."""
        try:
            state = _ADAPTER.validate_json(text)
        except ValidationError as exc:
            raise StateError("; ".join(_explain(e) for e in exc.errors()[:3])
                             + (f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else "")) from None
        state.tables = {name: [freeze(r) for r in rows] for name, rows in state.tables.items()}  # as add_rows keeps them
        return state

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LeagueState":
        return cls.from_json(json.dumps(d))

    # -- consistency ------------------------------------------------------------------------------------------
    def _roster_replay_problems(self) -> list[str]:
        try:
            replay = _replay(self)
        except (KeyError, TypeError, AttributeError) as exc:
            return [f"the recorded picks and moves cannot be replayed ({type(exc).__name__}: {exc})"]
        return [f"{t}'s roster is not what its recorded picks, waiver moves and trades lead to" for t in self.teams
                if sorted(replay.get(t, [])) != sorted(self.rosters[t])]


    def _decided_problems(self) -> list[str]:
        """A decided week's lineups: one per team, of its active players, each once; none at any other phase."""
        if self.decided_week() is None:
            return ["lineups are held for a week that is not decided"] if self.decided else []
        if list(self.decided) != self.teams:
            return [f"phase {self.phase}: the decided lineups must list exactly the league's teams"]
        out = []
        ir = self.extras.get("ir") if isinstance(self.extras.get("ir"), dict) else {}
        for team, entries in self.decided.items():
            ids = [e[1] for e in entries if len(e) == 3 and e[1] is not None]
            if any(len(e) != 3 or e[2] not in ("agent", "fallback") for e in entries) or len(ids) != len(set(ids)):
                out.append(f"{team}'s decided lineup is not a list of [slot, player, agent|fallback], each player once")
            on_ir = ir.get(team) if isinstance(ir.get(team), list) else []
            out += [f"{team}'s decided lineup starts {p}, who is not on its active roster" for p in ids
                    if p not in self.rosters.get(team, []) or p in on_ir][:1]
        return out

    def points_problems(self, actual: dict[int, dict[str, float]]) -> list[str]:
        """Every recorded player-week's points (lineups, bench, IR, dropped players) must be his actual points of
        the prepared season (``actual``: week -> player -> points, what scoring read; 0 for an empty slot)."""
        for table in POINTS:
            for i, r in enumerate(self.tables.get(table, [])):
                pid = r.get("player_id")
                want = float(actual.get(r.get("week"), {}).get(pid, 0.0)) if pid else 0.0
                if r.get("points") != want:
                    return [f"{table} row {i} (week {r.get('week')}, {r.get('team', 'no team')}, player {pid}) has "
                            f"{r.get('points')!r} points; the season's actual points are {want!r}"]
        return []

    def results_problems(self, totals: dict[int, dict[str, float]]) -> list[str]:
        """Records, matchups and standings must be exactly what :meth:`record_week` makes of the played
        regular-season weeks' lineup totals (``totals``: week -> team -> points), rebuilt from fresh records:
        the same sums in the same order, rounded the same way, so a genuine checkpoint always matches."""
        again = LeagueState(self.teams, self.agent_ids, self.draft_order, self.schedule)
        for w in sorted(totals):
            missing = [t for t in self.teams if t not in totals[w]]
            if missing:
                return [f"lineups of week {w} have no rows of {missing[0]}"]
            again.record_week(w, self.schedule[str(w)], totals[w])
        out = [f"{t}'s record ({_record(self.records[t])}) is not what its recorded lineups give "
               f"({_record(again.records[t])})" for t in self.teams if self.records[t] != again.records[t]][:2]
        for table in ("matchups", "standings"):
            rows, want = self.tables.get(table, []), again.tables.get(table, [])
            bad = next((i for i, (a, b) in enumerate(zip(rows, want)) if a != b), None)
            if bad is not None:
                diff = ", ".join(f"{k} {rows[bad].get(k)!r} (the lineups give {v!r})" for k, v in want[bad].items()
                                 if rows[bad].get(k) != v) or "unknown fields"
                out.append(f"{table} row {bad} (week {want[bad]['week']}, {want[bad]['team']}) is not what the "
                           f"recorded lineups give: {diff}")
            elif len(rows) != len(want):
                out.append(f"{table} hold {len(rows)} rows; the recorded lineups give {len(want)}")
        return out

    def problems(self, fresh: "LeagueState", rounds: int, weeks: int, caps: dict[str, int],
                 position: dict[str, str], regular_weeks: int | None = None) -> list[str]:
        """Why this state cannot be a point of the league whose starting state is ``fresh`` (same teams, agents,
        draft order and schedule); ``rounds`` is the roster size, ``position`` knows every player id. Records,
        standings and matchups cover the ``regular_weeks`` only (default: every week; the playoff weeks after
        them are checked by the playoffs phase)."""
        out = [f"{name} does not match the config" for name in ("teams", "agent_ids", "draft_order", "schedule")
               if getattr(self, name) != getattr(fresh, name)]
        if out:
            return out
        m = PHASE.fullmatch(self.phase)
        if not m:
            return [f"phase {self.phase!r} is not one of new, draft:<round>, drafted, week:<week>, decided:<week>"]
        if m.group(1) and int(m.group(1)) >= rounds:
            return [f"phase {self.phase}: the draft has only {rounds} rounds"]
        week, decided = self.last_completed_week(), self.decided_week()
        if (decided or week) > weeks:
            return [f"phase {self.phase}: the league plays {weeks} weeks"]
        out += self._decided_problems()
        done = self.rounds_done(rounds)
        if list(self.rosters) != self.teams or list(self.records) != self.teams:
            out.append("rosters and records must list exactly the league's teams")
        owner: dict[str, str] = {}
        ir = self.extras.get("ir") if isinstance(self.extras.get("ir"), dict) else {}
        for team, ids in self.rosters.items():
            listed = ir.get(team)  # a damaged list is the ir phase's to name; here it only must not crash
            on_ir = {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()
            active = [p for p in ids if p not in on_ir]  # IR slots (the ir phase checks them) come on top
            if "ir" in self.extras and done == rounds:  # an IR league after the draft: open active spots allowed
                if len(active) > done:
                    out.append(f"{team} holds {len(active)} active players; at most {done}")
            elif len(ids) != done:
                out.append(f"{team} holds {len(ids)} players; at phase {self.phase} every team holds {done}")
            for pid in ids:
                if pid not in position:
                    out.append(f"{team} holds unknown player {pid!r}")
                elif pid in owner:
                    out.append(f"player {pid} is on two rosters ({owner[pid]} and {team})")
                owner.setdefault(pid, team)
            counts = Counter(position.get(p) for p in active)  # caps bind active players
            out += [f"{team} holds {counts[pos]} {pos}, above the cap of {cap}" for pos, cap in caps.items()
                    if counts[pos] > cap]
        picks = len(self.tables.get("draft_picks", []))
        if picks != done * len(self.teams):
            out.append(f"{picks} draft picks recorded; phase {self.phase} has {done * len(self.teams)}")
        played = set(range(1, (decided or week) + 1))  # a decided week has its decisions' rows, not its games'
        regular = min(week, weeks if regular_weeks is None else regular_weeks)  # regular-season weeks played
        for table in ("standings", "matchups"):
            seen = {r.get("week") for r in self.tables.get(table, [])}
            if seen != set(range(1, regular + 1)):
                out.append(f"{table} cover weeks {sorted(seen, key=repr)}; phase {self.phase} has weeks "
                           f"1..{regular}")
        for table, rows in self.tables.items():  # every weekly table: nothing beyond the phase
            if not rows or "week" not in rows[0] or table in ("standings", "matchups"):
                continue
            late = {r.get("week") for r in rows} - (played - ({decided} if table in SCORED else set()))
            if late:
                out.append(f"{table} hold week(s) {sorted(late, key=repr)} beyond phase {self.phase}")
        out += [f"{t}'s record has {r.games} games after {regular} regular-season weeks"
                if regular < week else f"{t}'s record has {r.games} games after {week} weeks"
                for t, r in self.records.items() if r.games != regular]
        if not out:
            out += self._roster_replay_problems()
        if any(n < 0 for n in self.log_bytes.values()) or self.decisions < 0:
            out.append("negative log length or decision count")
        return out


def _moved(ids: list[str], out: Any, into: Any) -> list[str]:
    out, into = ([] if x is None else [x] if isinstance(x, str) else list(x) for x in (out, into))
    return [p for p in ids if p not in out] + into


def _replay(state: "LeagueState") -> dict[str, list[str]]:
    """The rosters the recorded picks and moves lead to: the draft, then each week its waiver and free-agent
    moves, then its trades (the order the season plays them). A move may add or drop nobody (a claim into an
    open spot, a drop for a player back from IR); moves to and from IR keep a player on his roster."""
    rosters: dict[str, list[str]] = {t: [] for t in state.teams}
    for r in state.tables.get("draft_picks", []):
        rosters[r["team"]].append(r["player_id"])
    moves: dict[int, list[tuple[str, Any, Any]]] = {}
    for r in state.tables.get("transactions", []):
        moves.setdefault(r["week"], []).append((r["team"], r["drop"], r["add"]))
    for r in state.tables.get("trades", []):
        moves.setdefault(r["week"], []).extend([(r["proposer"], r["proposer_gives"], r["receiver_gives"]),
                                                (r["receiver"], r["receiver_gives"], r["proposer_gives"])])
    for w in sorted(moves):
        for team, out, into in moves[w]:
            rosters[team] = _moved(rosters[team], out, into)
    return rosters


def _record(r: Record) -> str:
    return f"{r.wins}-{r.losses}-{r.ties}, points for {r.points_for}, against {r.points_against}"


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers; anything else that is not JSON is a bug, never silently a string."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    raise TypeError(f"{type(value).__name__} in the league state is not JSON data")


#: what ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=_plain)`` builds, built once
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_plain)


def _explain(err: dict[str, Any]) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(err["loc"]))
    msg = err["msg"] if err["type"] != "unexpected_keyword_argument" else "unknown field"
    return f"{path or '(top level)'}: {msg}"


_ADAPTER = TypeAdapter(LeagueState)
