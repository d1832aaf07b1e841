"""Our team-defense (DST) points against SportsData.io's own ``FantasyDefenseByGame.FantasyPoints``.

SportsData.io's number is (checked on every 2022-2024 row of its own columns): sack 1, interception 2, fumble
recovered 2, defensive or special-teams TD 6, safety 2, two-point return 2, blocked kick 0, and the standard
points-allowed tiers applied to ``PointsAllowedByDefenseSpecialTeams`` (the opponent's score less the TDs its
defense and return teams scored). :data:`SDIO_RULES` is the matching rule set over our stats; every row where
the points differ is explained by the stats that differ (:data:`REASONS`). Measured (weeks 1-17): 2022
88.2% of 510 team-weeks, 2023 86.9% of 512, 2024 89.7% of 512; most mismatches are the points-allowed definition.
"""
from __future__ import annotations

import pandas as pd

from ffbench_lib.sport import scoring
from ffbench_lib.data import schema
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.sportsdataio import SportsDataIODir

#: Our DST rules that match SportsData.io's (the standard ones, with blocked kicks worth 0).
SDIO_WEIGHTS = {**scoring.DEFENSE, "def_blocked_kicks": 0.0}
SDIO_TIERS = {"points_allowed": scoring.POINTS_ALLOWED_TIERS}

#: mismatch reason -> what it means
REASONS = {
    "points_allowed_return_tds": "our points allowed is the final score; SportsData.io's tier leaves out the "
                                 "TDs (6 points each) the opponent's defense and return teams scored",
    "points_allowed_score": "our points allowed (the schedule's final score) differs from SportsData.io's",
    "two_point_return": "a defensive two-point return (2 points at SportsData.io; nflverse team stats have none)",
    "touchdowns": "defensive or return TDs counted differently (e.g. a fumble-return TD nflverse's team row "
                  "does not tell from the offense's own-fumble TD)",
    "sacks": "SportsData.io counts a sack more than nflverse's team def_sacks (a sack credited to no defender)",
    "interceptions": "interception counts differ",
    "fumbles_recovered": "SportsData.io counts a fumble recovery more than nflverse's fumble_recovery_opp",
    "safeties": "safety counts differ",
}


def _tier(values: pd.Series) -> pd.Series:
    return scoring.fantasy_points(pd.DataFrame({"points_allowed": values}), {}, SDIO_TIERS)


def dst_parity(data_dir, season: int, weeks: int = 17) -> pd.DataFrame:
    """One row per team-week (weeks 1..``weeks``): our points under :data:`SDIO_WEIGHTS`/:data:`SDIO_TIERS`,
    SportsData.io's ``FantasyPoints``, ``match`` and, where they differ, ``reasons`` (every stat whose points
    differ) and ``unexplained`` (the difference those stats do not account for: 0 when fully classified)."""
    ours = NflverseDir(data_dir).defense(season)
    ours = ours[ours["week"] <= weeks].copy()
    ours["points"] = scoring.fantasy_points(ours, SDIO_WEIGHTS, SDIO_TIERS)
    sd = SportsDataIODir(data_dir)._weeks(season, "FantasyDefenseByGame.csv")
    sd = sd[(sd["SeasonType"] == 1) & (sd["Week"] <= weeks)].assign(team=lambda d: schema.normalize_team(d["Team"]))
    m = ours.merge(sd, left_on=["week", "team"], right_on=["Week", "team"], how="outer", indicator=True)
    if (m["_merge"] != "both").any():
        bad = m.loc[m["_merge"] != "both", ["week", "team"]].head(3).to_dict("records")
        raise ValueError(f"{season}: team-weeks in only one source, e.g. {bad}")
    m["diff"] = (m["points"] - m["FantasyPoints"]).round(2)
    m["match"] = m["diff"].abs() < 0.005
    parts = {
        "sacks": m["def_sacks"] - m["Sacks"],
        "interceptions": 2 * (m["def_interceptions"] - m["Interceptions"]),
        "fumbles_recovered": 2 * (m["def_fumbles_recovered"] - m["FumblesRecovered"]),
        "touchdowns": 6 * (m["def_tds"] + m["special_teams_tds"] - m["DefensiveTouchdowns"] - m["SpecialTeamsTouchdowns"]),
        "safeties": 2 * (m["def_safeties"] - m["Safeties"]),
        "two_point_return": -2 * m["TwoPointConversionReturns"],
    }
    pa = _tier(m["points_allowed"]) - _tier(m["PointsAllowedByDefenseSpecialTeams"])
    same_score = m["points_allowed"] == m["PointsAllowed"]
    parts["points_allowed_return_tds"] = pa.where(same_score, 0.0)
    parts["points_allowed_score"] = pa.where(~same_score, 0.0)
    p = pd.DataFrame(parts).fillna(0.0)
    m["reasons"] = [";".join(k for k, v in row.items() if abs(v) > 1e-9) for _, row in p.iterrows()]
    m.loc[m["match"], "reasons"] = ""
    m["unexplained"] = (m["diff"] - p.sum(axis=1)).round(2)
    # worth 0 at SportsData.io, so never a points mismatch; blocked punts are missing from nflverse team stats
    m["blocked_kicks_differ"] = m["def_blocked_kicks"] != m["BlockedKicks"]
    return m[["season", "week", "team", "points", "FantasyPoints", "diff", "match", "reasons", "unexplained",
              "blocked_kicks_differ"]]


def parity_summary(data_dir, seasons=(2022, 2023, 2024)) -> pd.DataFrame:
    """Per season: team-weeks, match rate, mismatches, and mismatches per reason (a row may have several)."""
    rows = []
    for season in seasons:
        m = dst_parity(data_dir, season)
        bad = m[~m["match"]]
        counts = bad["reasons"].str.split(";").explode().value_counts()
        rows.append({"season": season, "rows": len(m), "match_rate": round(float(m["match"].mean()), 4),
                     "mismatches": len(bad), "unclassified": int(((bad["reasons"] == "") |
                                                                  (bad["unexplained"] != 0)).sum()),
                     **{k: int(counts.get(k, 0)) for k in REASONS},
                     "blocked_kicks_differ": int(m["blocked_kicks_differ"].sum())})
    return pd.DataFrame(rows)
