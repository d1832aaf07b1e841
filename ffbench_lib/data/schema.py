"""The canonical tables every data source returns.

Column names follow nflverse's current ``stats_player`` release so a user who knows nflverse knows ffbench.
One row per player-week. Stat columns are floats (NaN where a source does not break a stat down), ids are
strings: gsis ``00-00xxxxx`` where known, ``sdio:<PlayerID>`` for SportsData.io players the crosswalk cannot map,
``DST:<team>`` for a team defense (one team-level player per NFL team, nflverse team codes).
"""
from __future__ import annotations

import pandas as pd

from ffbench_lib.sport import sport
from ffbench_lib.sport.scoring import DEFENSE_STATS as _DEFENSE_SCORED, GROUPS, KICKING_STATS

#: the sport whose sources these tables hold (positions, team codes and aliases are its facts)
NFL = sport("nfl")
#: the source rows that are fantasy players: every position a league may use
FANTASY_POSITIONS = NFL.positions
#: the positions of a league that does not name others (what every prepared season had before K and DST)
DEFAULT_POSITIONS = tuple(NFL.default_slots)

#: Identity and context columns of the weekly table.
WEEKLY_KEYS = ("player_id", "player_name", "position", "team", "opponent_team", "season", "week", "season_type")

#: Counting stats of the weekly table (current nflverse names). ``fumbles_lost`` is ffbench's one derived stat:
#: rushing + receiving + sack fumbles lost (nflverse), or SportsData.io's ``FumblesLost``.
WEEKLY_STATS = (
    "completions", "attempts", "passing_yards", "passing_tds", "passing_interceptions", "sacks_suffered",
    "sack_fumbles_lost", "passing_2pt_conversions",
    "carries", "rushing_yards", "rushing_tds", "rushing_fumbles_lost", "rushing_2pt_conversions",
    "receptions", "targets", "receiving_yards", "receiving_tds", "receiving_fumbles_lost",
    "receiving_2pt_conversions", "special_teams_tds", "fumbles_lost",
)

#: Kicking stats (``scoring.KICKING_STATS``): nflverse ``stats_player`` (2023+) columns, made and missed field
#: goals by distance band and extra points; a blocked kick is neither made nor missed there.
#: Team-defense (DST) stats, one row per team-week (``player_id`` ``DST:<team>``); ``special_teams_tds`` (the
#: team's kick and punt return TDs) is the players' column. Definitions (nflverse ``stats_team_week`` + games):
#: ``def_sacks``, ``def_interceptions`` and ``def_safeties`` are the team row's; ``def_tds`` its ``def_tds``
#: (interception-return TDs) plus its ``fumble_recovery_tds`` up to its ``fumble_recovery_opp`` (fumble-return
#: TDs, not the offense's TDs on its own fumbles); ``def_fumbles_recovered`` its ``fumble_recovery_opp``
#: (opponents' fumbles it recovered); ``def_blocked_kicks`` the field goals and extra points the opponent's row says were blocked
#: (blocked punts are not in the team stats); ``points_allowed`` the opponent's final score (every point,
#: including those its defense or return teams scored). SportsData.io: ``FantasyDefenseByGame`` columns.
DEFENSE_STATS = tuple(s for s in _DEFENSE_SCORED if s not in WEEKLY_STATS)

#: The stat columns a position adds to the weekly table (only in leagues that have the position): its stat
#: groups' columns beyond the offensive ones (kickers: KICKING_STATS, team defenses: DEFENSE_STATS).
POSITION_STATS = {p: tuple(dict.fromkeys(c for g in NFL.position_stat_groups[p] for c in GROUPS[g]
                                         if c not in WEEKLY_STATS)) for p in NFL.positions}
#: positions scored on kicking stats (their rows need a file with kicking columns), and the team-defense one
KICKING_POSITIONS = tuple(p for p in NFL.positions if "kicking" in NFL.position_stat_groups[p])
DEFENSE_POSITION = next(p for p in NFL.positions if "defense" in NFL.position_stat_groups[p])
#: positions whose weekly rows carry stats beyond the offensive columns
EXTRA_STAT_POSITIONS = tuple(p for p, cols in POSITION_STATS.items() if cols)

#: The source's own PPR points, kept for parity checks (never used for scoring).
WEEKLY_EXTRA = ("source_player_id", "fantasy_points_ppr")

WEEKLY_COLUMNS = WEEKLY_KEYS + WEEKLY_STATS + WEEKLY_EXTRA


def weekly_columns(positions=DEFAULT_POSITIONS) -> tuple[str, ...]:
    """The weekly table's columns for a league of ``positions``: the offensive ones, plus the K and DST stats
    when the league has them (a league without them has exactly :data:`WEEKLY_COLUMNS`)."""
    extra = tuple(dict.fromkeys(c for p in NFL.positions if p in positions for c in POSITION_STATS[p]))
    return WEEKLY_KEYS + WEEKLY_STATS + extra + WEEKLY_EXTRA


#: Every stat column a source's weekly table carries (K and DST stats NaN where the source has none).
ALL_STATS = WEEKLY_STATS + KICKING_STATS + DEFENSE_STATS

#: Legacy ``player_stats`` (nfl_data_py.import_weekly_data) names that differ from the current release.
LEGACY_RENAMES = {
    "recent_team": "team",
    "interceptions": "passing_interceptions",
    "sacks": "sacks_suffered",
}


def fumbles_lost(df: pd.DataFrame) -> pd.Series:
    """The ``fumbles_lost`` column: the source's own, else the sum of its three parts (nflverse)."""
    if "fumbles_lost" in df.columns:
        return df["fumbles_lost"]
    parts = [c for c in ("rushing_fumbles_lost", "receiving_fumbles_lost", "sack_fumbles_lost") if c in df]
    return df[parts].fillna(0).sum(axis=1) if parts else pd.Series(float("nan"), index=df.index)


def conform_weekly(df: pd.DataFrame) -> pd.DataFrame:
    """Select and order the canonical weekly columns of every position (``weekly_columns(NFL.positions)``),
    adding missing ones as NaN, with stable dtypes; a league keeps ``weekly_columns(its positions)``."""
    out = df.copy()
    if "fumbles_lost" not in out.columns:
        out["fumbles_lost"] = fumbles_lost(out)
    columns = weekly_columns(NFL.positions)
    for col in columns:
        if col not in out.columns:
            out[col] = pd.NA if col in WEEKLY_KEYS or col == "source_player_id" else float("nan")
    out = out[list(columns)]
    for col in ALL_STATS + ("fantasy_points_ppr",):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
    out["season"] = out["season"].astype("int64")
    out["week"] = out["week"].astype("int64")
    for col in ("player_id", "player_name", "position", "season_type", "source_player_id"):
        out[col] = out[col].astype("string")
    out["team"] = normalize_team(out["team"])
    out["opponent_team"] = normalize_team(out["opponent_team"])
    return out.sort_values(["season", "week", "player_id"], kind="stable").reset_index(drop=True)


#: Injury report table: one row per player-week that appeared on the official report.
INJURY_COLUMNS = ("season", "week", "player_id", "player_name", "team", "position", "report_status",
                  "practice_status", "report_primary_injury")

#: Schedule table (regular season only): one row per game.
SCHEDULE_COLUMNS = ("season", "week", "game_id", "home_team", "away_team", "home_score", "away_score", "gameday")


def normalize_team(teams: pd.Series) -> pd.Series:
    """Team codes in nflverse spelling (:attr:`Sport.team_aliases` mapped to :attr:`Sport.teams`); free agents and
    unreadable codes become <NA>."""
    t = teams.astype("string").str.strip().replace(dict(NFL.team_aliases)).astype("string")
    return t.where(t.isin(NFL.team_codes)).astype("string")
