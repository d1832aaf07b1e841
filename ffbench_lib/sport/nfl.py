"""The NFL: every fact of American football ffbench uses, as one :class:`~ffbench_lib.sport.base.Sport`.

Positions: QB, RB, WR, TE; K (kickers) and DST (team defenses and special teams, one team-level player per
NFL team, id ``DST:<team>``). Team codes are nflverse's (the Rams are ``LA``). Player ids are gsis
(``00-0033873``); SportsData.io players the crosswalk cannot map are ``sdio:<PlayerID>``.
"""
from __future__ import annotations

from ffbench_lib.sport import scoring
from ffbench_lib.sport.base import Sport, register

NFL = register(Sport(
    name="nfl",
    title="NFL",
    calendar_unit="week",
    max_weeks=18,  # 18 regular-season weeks since 2021
    seasons=(2021, 2022, 2023, 2024, 2025),
    season_format="{year}",
    positions=("QB", "RB", "WR", "TE", "K", "DST"),
    position_aliases={"FB": "RB", "HB": "RB"},  # fullbacks and halfbacks score as running backs
    position_stat_groups={"QB": ("offense",), "RB": ("offense",), "WR": ("offense",), "TE": ("offense",),
                          "K": ("kicking",), "DST": ("defense",)},
    position_supply={"DST": 32},
    default_slots={"QB": 1, "RB": 2, "WR": 2, "TE": 1},
    max_slots={"QB": 3, "RB": 4, "WR": 5, "TE": 3, "K": 2, "DST": 2},
    default_caps={"QB": 3, "RB": 6, "WR": 6, "TE": 3, "K": 2, "DST": 2},
    # SUPERFLEX: a wider flex slot, FLEX's positions and the quarterback
    flex_slots={"FLEX": ("RB", "WR", "TE"), "SUPERFLEX": ("QB", "RB", "WR", "TE")},
    teams={
        "ARI": "Arizona Cardinals", "ATL": "Atlanta Falcons", "BAL": "Baltimore Ravens", "BUF": "Buffalo Bills",
        "CAR": "Carolina Panthers", "CHI": "Chicago Bears", "CIN": "Cincinnati Bengals", "CLE": "Cleveland Browns",
        "DAL": "Dallas Cowboys", "DEN": "Denver Broncos", "DET": "Detroit Lions", "GB": "Green Bay Packers",
        "HOU": "Houston Texans", "IND": "Indianapolis Colts", "JAX": "Jacksonville Jaguars", "KC": "Kansas City Chiefs",
        "LA": "Los Angeles Rams", "LAC": "Los Angeles Chargers", "LV": "Las Vegas Raiders", "MIA": "Miami Dolphins",
        "MIN": "Minnesota Vikings", "NE": "New England Patriots", "NO": "New Orleans Saints", "NYG": "New York Giants",
        "NYJ": "New York Jets", "PHI": "Philadelphia Eagles", "PIT": "Pittsburgh Steelers", "SEA": "Seattle Seahawks",
        "SF": "San Francisco 49ers", "TB": "Tampa Bay Buccaneers", "TEN": "Tennessee Titans",
        "WAS": "Washington Commanders",
    },
    team_aliases={"JAC": "JAX", "LAR": "LA", "WSH": "WAS", "OAK": "LV", "SD": "LAC", "STL": "LA"},
    player_id_pattern=r"00-\d{7}",  # gsis
    player_id_format="00-{:07d}",
    other_id_patterns=(r"sdio:\d+", r"DST:[A-Z]{2,3}"),
    injury_statuses=("Out", "Doubtful", "Questionable", "Note"),
    out_status="Out",
    cancelled_games={2022: frozenset({("BUF", 17), ("CIN", 17)})},  # Damar Hamlin's cardiac arrest, 2 Jan 2023
    scoring_presets=tuple(scoring.PRESETS),
    # first round, rounds 2-3, later or undrafted; see ffbench_lib.data.projections.rookie_prior
    rookie_fallback_ppg={"QB": (12.0, 6.0, 2.0), "RB": (10.0, 5.5, 2.5), "WR": (8.5, 5.0, 2.0),
                         "TE": (5.0, 3.0, 1.0), "K": (6.0, 6.0, 5.0)},
    rookie_bucket_picks=(32, 100),
    bot_flex_share={"RB": 0.45, "WR": 0.45, "TE": 0.1},
    bot_flex_share_unlisted=0.45,
    # seaborn "deep" without its orange, which marks FLEX; its last colour, khaki, marks SUPERFLEX
    colors={"QB": "#4C72B0", "RB": "#55A868", "WR": "#C44E52", "TE": "#8172B3", "K": "#937860", "DST": "#DA8BC3",
            "FLEX": "#DD8452", "SUPERFLEX": "#CCB974"},
))
