"""The parquet tables of a run directory: their names and columns, in order (the schema also of an empty
table). The recorder (game) writes rows with these columns; analysis reads them."""
from __future__ import annotations

from typing import Any

import pandas as pd

#: Every table a run writes and its columns, in order (the schema also of an empty table).
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
    "waiver_claims": ["week", "phase", "team", "agent", "rank", "add", "drop", "bid", "result", "reason",
                      "decided_by"],
    "dropped_points": ["week", "player_id", "position", "points"],
    "transactions": ["week", "team", "agent", "kind", "add", "add_name", "add_position", "drop", "drop_name",
                     "drop_position", "bid"],
    "ir_moves": ["week", "team", "agent", "move", "player_id", "player_name", "position", "status", "drop",
                 "decided_by"],
    "ir_players": ["week", "team", "agent", "player_id", "position", "points"],
    "playoffs": ["week", "round", "team", "agent", "playoff_seed", "opponent", "opponent_seed", "points_for",
                 "points_against", "round_points_for", "round_points_against", "result"],
}
TABLES = tuple(COLUMNS)


def table_frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows of table ``name`` as a frame with its columns in order (an empty table keeps them)."""
    return pd.DataFrame(rows, columns=COLUMNS[name])
