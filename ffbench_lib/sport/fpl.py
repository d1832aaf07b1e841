"""The Premier League under Fantasy Premier League rules, as one :class:`~ffbench_lib.sport.base.Sport` (``fpl``).

A squad of 15 (2 goalkeepers, 5 defenders, 5 midfielders, 3 forwards); a starting XI of 1 goalkeeper, 3-5
defenders, 2-5 midfielders and 1-3 forwards, expressed as the general roster rule of least starters per position
(the slots) plus a FLEX of outfield players and most starters per position; a bench of 4 in the manager's order
with FPL's automatic substitutions. 38 gameweeks; clubs by ``teams.csv``'s short names; players ``fpl:<code>``
(``players_raw.csv``'s ``code``, the same in every season); seasons named as the data names them (``2024-25``).

FPL's published rules, which reproduce its own ``total_points`` on every player-fixture row of 2021-22 to 2025-26
(``tests/test_fpl.py``): minutes 1-59 score 1 and 60 or more 2; a goal 6 from a goalkeeper or defender, 5 from a
midfielder, 4 from a forward; an assist 3; a clean sheet 4 (goalkeeper, defender) or 1 (midfielder), which the data
gives only for 60 or more minutes; a point per 3 saves by a goalkeeper; a penalty saved 5, missed -2; -1 per 2
goals conceded (goalkeeper, defender); yellow card -1, red -3, own goal -2; the bonus points as given. From 2025-26 a defender
with 10 or more defensive contributions, or a midfielder or forward with 12 or more, scores 2 more.
"""
from __future__ import annotations

from ffbench_lib.sport.base import Sport, register
from ffbench_lib.sport.scoring import Rules

POSITIONS = ("GK", "DEF", "MID", "FWD")
#: the data's position codes that name a known position (2021-22 writes goalkeepers ``GKP`` in some rows)
POSITION_ALIASES = {"GKP": "GK"}
#: position codes of rows that are not players: 2024-25's "assistant manager" chip's managers
NOT_PLAYERS = ("AM",)
#: the first season (by its start year) whose rules score defensive contributions
DEFENSIVE_CONTRIBUTIONS_FROM = 2025

_ALL = {"assists": 3.0, "penalties_saved": 5.0, "penalties_missed": -2.0, "yellow_cards": -1.0,
        "red_cards": -3.0, "own_goals": -2.0, "bonus": 1.0}
_MINUTES = {"minutes": [[0.0, 0.0], [59.0, 1.0], [None, 2.0]]}
_GOAL = {"GK": 6.0, "DEF": 6.0, "MID": 5.0, "FWD": 4.0}
_CLEAN_SHEET = {"GK": 4.0, "DEF": 4.0, "MID": 1.0, "FWD": 0.0}
#: defensive contributions a position needs for the 2 points (none for goalkeepers)
_DEFCON = {"DEF": 10, "MID": 12, "FWD": 12}


def rules(season_start: int) -> dict[str, Rules]:
    """Each position's rules in the season starting in ``season_start`` (2024 for 2024-25)."""
    out = {}
    for pos in POSITIONS:
        tiers = {k: [list(t) for t in v] for k, v in _MINUTES.items()}
        if season_start >= DEFENSIVE_CONTRIBUTIONS_FROM and pos in _DEFCON:
            tiers["defensive_contribution"] = [[_DEFCON[pos] - 1.0, 0.0], [None, 2.0]]
        every = {"saves": (3.0, 1.0)} if pos == "GK" else {}  # saves by a goalkeeper
        if pos in ("GK", "DEF"):
            every["goals_conceded"] = (2.0, -1.0)
        out[pos] = Rules(weights={**_ALL, "goals_scored": _GOAL[pos], "clean_sheets": _CLEAN_SHEET[pos]},
                         tiers=tiers, every=every)
    return out


#: every club of the seasons ffbench has (short name -> name, ``teams.csv``)
CLUBS = {
    "ARS": "Arsenal", "AVL": "Aston Villa", "BOU": "Bournemouth", "BRE": "Brentford", "BHA": "Brighton",
    "BUR": "Burnley", "CHE": "Chelsea", "CRY": "Crystal Palace", "EVE": "Everton", "FUL": "Fulham",
    "IPS": "Ipswich", "LEE": "Leeds", "LEI": "Leicester", "LIV": "Liverpool", "LUT": "Luton", "MCI": "Man City",
    "MUN": "Man Utd", "NEW": "Newcastle", "NFO": "Nott'm Forest", "NOR": "Norwich", "SHU": "Sheffield Utd",
    "SOU": "Southampton", "SUN": "Sunderland", "TOT": "Spurs", "WAT": "Watford", "WHU": "West Ham",
    "WOL": "Wolves",
}

FPL = register(Sport(
    name="fpl",
    title="Premier League",
    calendar_unit="gameweek",
    max_weeks=38,
    seasons=(2021, 2022, 2023, 2024, 2025),
    season_format="{year}-{next:02d}",
    positions=POSITIONS,
    position_aliases=POSITION_ALIASES,
    position_stat_groups={p: () for p in POSITIONS},  # scored by position_rules, not by stat groups
    position_supply={},
    default_slots={"GK": 1, "DEF": 3, "MID": 2, "FWD": 1},
    max_slots={"GK": 1, "DEF": 5, "MID": 5, "FWD": 3},
    default_caps={"GK": 2, "DEF": 5, "MID": 5, "FWD": 3},
    flex_slots={"FLEX": ("DEF", "MID", "FWD")},
    teams=CLUBS,
    team_aliases={},
    player_id_pattern=r"fpl:\d+",
    player_id_format="fpl:9{:08d}",  # nine digits: FPL's codes have at most six
    other_id_patterns=(),
    injury_statuses=(),
    out_status="Out",
    cancelled_games={},
    scoring_presets=("fpl",),
    rookie_fallback_ppg={},
    rookie_bucket_picks=(),
    # a typical XI's outfield beyond the least (3 DEF, 2 MID, 1 FWD): the 4 FLEX places
    bot_flex_share={"DEF": 0.25, "MID": 0.5, "FWD": 0.25},
    bot_flex_share_unlisted=0.25,
    colors={"GK": "#937860", "DEF": "#4C72B0", "MID": "#55A868", "FWD": "#C44E52", "FLEX": "#DD8452"},
    sources=("fpl",),
    default_roster={"GK": 1, "DEF": 3, "MID": 2, "FWD": 1, "FLEX": 4, "BENCH": 4,
                    "most": {"GK": 1, "DEF": 5, "MID": 5, "FWD": 3}, "auto_subs": True,
                    "caps": {"GK": 2, "DEF": 5, "MID": 5, "FWD": 3}},
    position_rules=rules,
    never_available=("injury_report",),
    max_flex=7,
    has_minutes=True,
    schedule_timezone="UTC",
    team_name_parts=False,
    data_update="copy the season's folder again into {dir}/fpl/{season}, in the source repository's layout",
    game="fantasy soccer (Fantasy Premier League rules)",
))
