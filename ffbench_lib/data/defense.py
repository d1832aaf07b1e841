"""Team defenses (DST) as team-level players: one row per team-week, id ``DST:<team>``.

nflverse has no DST player: the rows are built from ``stats_team_week_{season}.csv`` (the team's defensive and
return numbers, and the kicks its opponent had blocked) and the schedule's final scores (points allowed). The
stat definitions are in :mod:`.schema` (``DEFENSE_STATS``). SportsData.io's ``FantasyDefenseByGame`` has them
as columns.
"""
from __future__ import annotations

import pandas as pd

from ffbench_lib.data import schema
from ffbench_lib.data.base import REFETCH, DataError

#: Columns of ``stats_team_week_{season}.csv`` the DST rows are built from.
TEAM_REQUIRED = ("season", "week", "team", "season_type", "opponent_team", "def_sacks", "def_interceptions",
                 "fumble_recovery_opp", "fumble_recovery_tds", "def_tds", "special_teams_tds", "def_safeties", "fg_blocked", "pat_blocked")
#: SportsData.io ``FantasyDefenseByGame`` column -> canonical DST stat.
SDIO_DEFENSE = {"Sacks": "def_sacks", "Interceptions": "def_interceptions", "FumblesRecovered": "def_fumbles_recovered",
                "DefensiveTouchdowns": "def_tds", "SpecialTeamsTouchdowns": "special_teams_tds",
                "Safeties": "def_safeties", "BlockedKicks": "def_blocked_kicks", "PointsAllowed": "points_allowed"}
SDIO_REQUIRED = ("SeasonType", "Season", "Week", "Team", "Opponent", *SDIO_DEFENSE)

#: Team nicknames (the last word of "Kansas City Chiefs") -> nflverse code, for files that name defenses.
NICKNAMES = {
    "Cardinals": "ARI", "Falcons": "ATL", "Ravens": "BAL", "Bills": "BUF", "Panthers": "CAR", "Bears": "CHI",
    "Bengals": "CIN", "Browns": "CLE", "Cowboys": "DAL", "Broncos": "DEN", "Lions": "DET", "Packers": "GB",
    "Texans": "HOU", "Colts": "IND", "Jaguars": "JAX", "Chiefs": "KC", "Rams": "LA", "Chargers": "LAC",
    "Raiders": "LV", "Dolphins": "MIA", "Vikings": "MIN", "Patriots": "NE", "Saints": "NO", "Giants": "NYG",
    "Jets": "NYJ", "Eagles": "PHI", "Steelers": "PIT", "Seahawks": "SEA", "49ers": "SF", "Buccaneers": "TB",
    "Titans": "TEN", "Commanders": "WAS", "Team": "WAS", "Redskins": "WAS",
}


def dst_id(team: pd.Series) -> pd.Series:
    return ("DST:" + team.astype("string")).astype("string")


def team_code(names: pd.Series) -> pd.Series:
    """nflverse team code of a defense named by team ("Los Angeles Rams", "Rams D/ST", "KC"), else <NA>."""
    s = names.astype("string").str.replace(r"\s*(D/ST|DST|Defense)\s*$", "", regex=True).str.strip()
    code = schema.normalize_team(s)
    return code.fillna(s.str.split().str[-1].map(NICKNAMES)).astype("string")


def _frame(df: pd.DataFrame, season: int) -> pd.DataFrame:
    """Keys and the DST stats only: a team row's offensive and kicking numbers are not the defense's."""
    team = schema.normalize_team(df["team"])
    stats = ["special_teams_tds", *schema.DEFENSE_STATS]
    out = df[["week", "opponent_team", *stats]].assign(
        player_id=dst_id(team), source_player_id=dst_id(team), player_name=team + " D/ST",
        position=schema.DEFENSE_POSITION,
        team=team, season=season, season_type="REG", fantasy_points_ppr=float("nan"))
    return out


def nflverse_dst_rows(stats: pd.DataFrame, games: pd.DataFrame, path: str) -> pd.DataFrame:
    """DST rows of one season from nflverse team-week stats (REG rows) and that season's games."""
    season = int(games["season"].iloc[0])
    t = stats[stats["season_type"] == "REG"].copy()
    t["team"] = schema.normalize_team(t["team"])
    t["opponent_team"] = schema.normalize_team(t["opponent_team"])
    blocked = (t["fg_blocked"].fillna(0) + t["pat_blocked"].fillna(0)).set_axis(pd.MultiIndex.from_frame(t[["week", "team"]]))
    opp_key = pd.MultiIndex.from_frame(t[["week", "opponent_team"]])
    t["def_blocked_kicks"] = blocked.reindex(opp_key).to_numpy()
    sides = pd.concat([games[["week", "home_team", "away_score"]].set_axis(["week", "team", "points_allowed"], axis=1),
                       games[["week", "away_team", "home_score"]].set_axis(["week", "team", "points_allowed"], axis=1)])
    sides["team"] = schema.normalize_team(sides["team"])
    t = t.merge(sides, on=["week", "team"], how="left")
    played = sides.dropna(subset=["points_allowed"])
    missing = played.merge(t[["week", "team"]], on=["week", "team"], how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"]
    if len(missing):
        ex = ", ".join(f"{r.team} week {r.week}" for r in missing.head(3).itertuples())
        raise DataError(f"nflverse team stats {season}: {path} has no row for {len(missing)} team-game(s) the "
                        f"schedule has scores for (e.g. {ex}); {REFETCH}")
    # nflverse's team def_tds are interception-return TDs only; fumble-return TDs are in fumble_recovery_tds,
    # which also holds the offense's TDs on its own recovered fumbles: count at most one per opponent fumble
    # the team recovered
    t["def_tds"] = t["def_tds"].fillna(0) + t["fumble_recovery_tds"].fillna(0).clip(upper=t["fumble_recovery_opp"].fillna(0))
    t = t.rename(columns={"fumble_recovery_opp": "def_fumbles_recovered"})
    return _frame(t, season).reset_index(drop=True)


def sdio_dst_rows(raw: pd.DataFrame) -> pd.DataFrame:
    """DST rows from SportsData.io ``FantasyDefenseByGame`` rows (regular season)."""
    missing = [c for c in SDIO_REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(f"sportsdataio FantasyDefenseByGame.csv lacks column(s) {', '.join(missing)}, which team "
                        "defenses (DST) are built from; replace it with a complete export or remove DST")
    r = raw[raw["SeasonType"] == 1]
    df = r.rename(columns={**SDIO_DEFENSE, "Week": "week", "Team": "team", "Opponent": "opponent_team"})
    df["opponent_team"] = schema.normalize_team(df["opponent_team"])
    out = _frame(df, int(r["Season"].iloc[0]) if len(r) else 0)
    out["fantasy_points_ppr"] = pd.to_numeric(r["FantasyPoints"], errors="coerce") if "FantasyPoints" in r else float("nan")
    return out.reset_index(drop=True)
