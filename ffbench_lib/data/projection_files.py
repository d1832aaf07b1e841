"""Third-party preseason files under ``<data dir>/projections/``: FantasyPros season projections, preseason
ADP (FantasyPros and SportsData.io), NFL.com weekly projected points. Known only by player name, so they are
joined to gsis ids through :func:`base.resolve_names`; rows that do not resolve are kept with ``<NA>`` ids
and counted in the prepared season's manifest.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ffbench_lib.data import schema
from ffbench_lib.data.base import DataError, read_csv, resolve_names
from ffbench_lib.data.defense import dst_id, team_code

#: Crosswalk position codes -> ours (DynastyProcess writes kickers as PK).
CROSSWALK_POSITIONS = {"PK": schema.KICKING_POSITIONS[0]}


def _resolve(df: pd.DataFrame, crosswalk: pd.DataFrame) -> pd.Series:
    """gsis ids by name (see :func:`base.resolve_names`); team defenses (position DST, named by team) get
    ``DST:<team>``."""
    cw = crosswalk.assign(position=crosswalk["position"].replace(CROSSWALK_POSITIONS))
    ids = resolve_names(df, cw)
    dst = df["position"] == schema.DEFENSE_POSITION
    if dst.any():
        ids = ids.where(~dst, dst_id(team_code(df["player_name"])))
    return ids

#: FantasyPros column spellings (they vary by year) -> canonical stat.
FANTASYPROS_STATS = {
    "PASS_ATT": "attempts", "PASS_CMP": "completions", "PASS_YDS": "passing_yards", "PASS_YD": "passing_yards",
    "PASS_TDS": "passing_tds", "PASS_TD": "passing_tds", "INTS": "passing_interceptions",
    "RUSH_ATT": "carries", "RUSH_YDS": "rushing_yards", "RUSH_YD": "rushing_yards", "RUSH_TDS": "rushing_tds",
    "RUSH_TD": "rushing_tds", "REC": "receptions", "REC_YDS": "receiving_yards", "REC_YD": "receiving_yards",
    "REC_TDS": "receiving_tds", "REC_TD": "receiving_tds", "FL": "fumbles_lost",
}


def _folder(root: Path) -> Path:
    sub = Path(root) / "projections"
    return sub if sub.is_dir() else Path(root)


def fantasypros_season_projections(root: Path, season: int, crosswalk: pd.DataFrame) -> pd.DataFrame | None:
    """Projected stat lines (canonical names) for FantasyPros' top players; points are recomputed by the
    caller under the league scoring (FantasyPros' own FPTS use other rules)."""
    path = _folder(root) / f"fantasypros_season_projections_{season}_raw.csv"
    if not path.exists():
        return None
    raw = read_csv(path, "FantasyPros season projections", ("Player", "POS", "Team"), thousands=",")
    df = raw.rename(columns={"Player": "player_name", "POS": "position", "Team": "team", **FANTASYPROS_STATS})
    df["player_name"] = df["player_name"].str.replace(r"\s+(II|III|IV)$", "", regex=True)
    stats = [c for c in schema.WEEKLY_STATS if c in df.columns]
    df[stats] = df[stats].apply(pd.to_numeric, errors="coerce")
    df["team"] = schema.normalize_team(df["team"])
    df["player_id"] = _resolve(df, crosswalk)
    return df[["player_id", "player_name", "position", "team", *stats]]


def preseason_adp(root: Path, season: int, crosswalk: pd.DataFrame, source: str = "fantasypros_adp") -> pd.DataFrame | None:
    """Preseason ADP: ``player_id, player_name, position, team, bye, adp`` (lower = drafted earlier)."""
    path = _folder(root) / "preseason_adp_2021_2024.csv"
    if not path.exists():
        return None
    adp = read_csv(path, "preseason ADP",
                   ("season", "source", "player_name", "team", "position", "bye", "adp", "adp_ppr"))
    adp = adp[(adp["season"] == season) & (adp["source"] == source) & adp["position"].isin(schema.FANTASY_POSITIONS)]
    if adp.empty:
        return None
    adp = adp.assign(adp=adp["adp_ppr"].fillna(adp["adp"]))
    adp = adp.reset_index(drop=True)
    dst = adp["position"] == schema.DEFENSE_POSITION  # named by team ("Los Angeles Rams"), team column "DST"
    adp["team"] = schema.normalize_team(adp["team"].where(~dst, team_code(adp["player_name"])))
    adp["player_id"] = _resolve(adp, crosswalk)
    adp["player_name"] = adp["player_name"].where(~dst, adp["team"] + " D/ST")  # our DST name
    return adp[["player_id", "player_name", "position", "team", "bye", "adp"]]


def nflcom_weekly(root: Path, season: int, crosswalk: pd.DataFrame) -> pd.DataFrame | None:
    """NFL.com weekly projected points (half-PPR as published), one row per player-week."""
    path = _folder(root) / f"nflcom_weekly_projections_{season}.csv"
    if not path.exists():
        return None
    df = read_csv(path, "NFL.com weekly projections", ("season", "week", "player_name", "position", "team",
                                                        "projected_pts_half_ppr"))
    df = df[df["position"].isin(schema.FANTASY_POSITIONS) & df["projected_pts_half_ppr"].notna()]
    df = df.drop_duplicates(["week", "player_name", "position", "team"]).reset_index(drop=True)
    df["team"] = schema.normalize_team(df["team"])
    if df.empty:
        raise DataError(f"{path}: no usable rows")
    df["player_id"] = _resolve(df, crosswalk)
    return df[["season", "week", "player_id", "player_name", "position", "team", "projected_pts_half_ppr"]]
