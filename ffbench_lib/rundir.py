"""The run directory: one season, one seed, everything needed to analyse it later without re-running.

=========================  ==============================================================================
``config.yaml``            the fully resolved league config
``run.json``               run id, seed, status (running / complete / failed), phase, data fingerprint
``checkpoint.json``        league state after the last completed phase (draft, then every week)
``decisions.jsonl``        every agent decision: the exact view, the raw answer, what was applied, by whom
``llm_calls.jsonl``        every LLM call (ledger): messages, raw response, parsed answer, tokens, cost, latency,
                           every attempt's error, re-asks, cache hits
``llm_summary.parquet``    per team and model: calls, re-asks, invalid answers, fallbacks, faults, tokens, cost
``draft_picks.parquet``    pick, round, team, agent, player, shortlist, decided_by
``lineups.parquet``        week, team, agent, slot, player_id, position, points, decided_by (starters)
``bench.parquet``          week, team, agent, player_id, position, points
``rosters.parquet``        week, team, agent, player_id, position (rosters as each week kicked off)
``matchups.parquet``       week, team, agent, opponent, points_for, points_against, result
``standings.parquet``      week, team, agent, wins, losses, ties, points_for, points_against, rank
``trade_steps.parquet``    every negotiation step: week, negotiation, step, actor, action, give, get, rationale
``trades.parquet``         accepted trades
=========================  ==============================================================================

Every file is written atomically; ``decisions.jsonl`` is append-only and truncated back to the checkpoint's
length on resume, so a resumed run ends byte-identical to an uninterrupted one. The parquet tables are written
after the draft, at the end of the run, and when it fails; while it runs, ``checkpoint.json`` holds their rows.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from .atomic import write_json, write_parquet, write_text
from .secrets import scrub
from .state import LeagueState

LOGS = ("decisions.jsonl", "llm_calls.jsonl")
TABLES = ("draft_picks", "lineups", "bench", "rosters", "matchups", "standings", "trade_steps", "trades")


class RunDir:
    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def file(self, name: str) -> Path:
        return self.path / name

    # -- writing ---------------------------------------------------------------------------------------
    def start(self, config_yaml: str, meta: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_text(self.file("config.yaml"), config_yaml)
        self.write_meta(meta)
        self.file("decisions.jsonl").touch()

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_json(self.file("run.json"), meta)

    def append(self, log: str, record: dict[str, Any]) -> int:
        """Append one JSON line to ``log`` (secrets scrubbed); returns the file's new length in bytes."""
        line = scrub(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)) + "\n"
        with open(self.file(log), "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            return fh.tell()

    def checkpoint(self, state: LeagueState) -> None:
        """Decisions on disk first, then the checkpoint: a checkpoint never points past what is on disk.
        The checkpoint holds every table's rows; the parquet tables are written by :meth:`write_tables`."""
        for log in LOGS:
            if self.file(log).exists():
                with open(self.file(log), "rb+") as fh:
                    os.fsync(fh.fileno())
        text = json.dumps(state.to_dict(), sort_keys=True, default=str, separators=(",", ":"))
        write_text(self.file("checkpoint.json"), scrub(text) + "\n")

    def write_tables(self, state: LeagueState) -> None:
        for name in TABLES:
            write_parquet(self.file(f"{name}.parquet"), table_frame(name, state.tables.get(name, [])))
        if self.file("llm_calls.jsonl").exists():
            from .llm.ledger import summarize

            write_parquet(self.file("llm_summary.parquet"), summarize(self.llm_calls(), self.decisions()))

    # -- reading -----------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.file("run.json").exists()

    def meta(self) -> dict[str, Any]:
        return json.loads(self.file("run.json").read_text())

    def load_state(self) -> LeagueState | None:
        cp = self.file("checkpoint.json")
        if not cp.exists():
            return None
        state = LeagueState.from_dict(json.loads(cp.read_text()))
        for log in LOGS:  # drop what was logged after the checkpoint
            path = self.file(log)
            if path.exists():
                with open(path, "rb+") as fh:
                    fh.truncate(state.log_bytes.get(log, 0))
        return state

    def table(self, name: str) -> pd.DataFrame:
        return pd.read_parquet(self.file(f"{name}.parquet"))

    def decisions(self) -> list[dict[str, Any]]:
        return self.read_log("decisions.jsonl")

    def llm_calls(self) -> list[dict[str, Any]]:
        return self.read_log("llm_calls.jsonl")

    def read_log(self, log: str) -> list[dict[str, Any]]:
        if not self.file(log).exists():
            return []
        with open(self.file(log), encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]


#: Column order (and so schema) of each table, also when it is empty.
COLUMNS: dict[str, list[str]] = {
    "draft_picks": ["pick", "round", "team", "agent", "player_id", "player_name", "position", "proj_points",
                    "prev_points", "adp", "shortlist", "in_shortlist", "decided_by", "reason"],
    "lineups": ["week", "team", "agent", "slot", "player_id", "position", "points", "decided_by"],
    "bench": ["week", "team", "agent", "player_id", "position", "points"],
    "rosters": ["week", "team", "agent", "player_id", "position"],
    "matchups": ["week", "team", "agent", "opponent", "points_for", "points_against", "result"],
    "standings": ["week", "team", "agent", "wins", "losses", "ties", "points_for", "points_against", "rank"],
    "trade_steps": ["week", "negotiation", "step", "actor", "agent", "action", "proposer", "receiver",
                    "proposer_gives", "receiver_gives", "rationale", "decided_by", "reason"],
    "trades": ["week", "negotiation", "proposer", "receiver", "proposer_agent", "receiver_agent",
               "proposer_gives", "receiver_gives", "accepted_step", "made_by"],
}


def table_frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS[name])
