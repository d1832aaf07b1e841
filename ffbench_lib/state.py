"""League state as plain data: rosters, draft, schedule, standings and the rows of every output table.

Everything here is JSON-serialisable so a checkpoint is one file and a resumed run continues from exactly
the state an uninterrupted run had at that point.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class Record:
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


@dataclass
class LeagueState:
    teams: list[str]
    agent_ids: dict[str, str]
    draft_order: list[str]
    schedule: dict[str, list[list[str]]]  # week (as str for JSON) -> [[team_a, team_b], ...]
    rosters: dict[str, list[str]] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    phase: str = "new"  # new -> drafted -> week:1 ... week:N (last completed) -> complete
    decisions: int = 0
    log_bytes: dict[str, int] = field(default_factory=dict)  # JSONL log -> length at this checkpoint
    llm_cost_usd: float = 0.0  # spent on live provider calls (replayed answers cost nothing)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for t in self.teams:
            self.rosters.setdefault(t, [])
            self.records.setdefault(t, Record())

    # -- queries ---------------------------------------------------------------------------------------
    def owner_of(self, player_id: str) -> str | None:
        for team, ids in self.rosters.items():
            if player_id in ids:
                return team
        return None

    def drafted(self) -> set[str]:
        return {p for ids in self.rosters.values() for p in ids}

    def last_completed_week(self) -> int:
        return int(self.phase.split(":")[1]) if self.phase.startswith("week:") else 0

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
        self.tables.setdefault(table, []).extend(rows)

    # -- (de)serialisation ------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (shallow: rows are already plain dicts of plain values)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["records"] = {t: asdict(r) for t, r in self.records.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LeagueState":
        d = dict(d)
        d["records"] = {t: Record(**r) for t, r in d["records"].items()}
        return cls(**d)
