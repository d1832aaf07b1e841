"""The Premier League under Fantasy Premier League rules: the scoring, so far (the sport's spec, its readers and
its leagues follow, issue #28; it is not a registered sport yet).

FPL's published rules, which reproduce its own ``total_points`` on every player-fixture row of 2021-22 to 2025-26
(``tests/test_fpl.py``): minutes 1-59 score 1 and 60 or more 2; a goal 6 from a goalkeeper or defender, 5 from a
midfielder, 4 from a forward; an assist 3; a clean sheet 4 (goalkeeper, defender) or 1 (midfielder), which the data
gives only for 60 or more minutes; a point per 3 saves by a goalkeeper; a penalty saved 5, missed -2; -1 per 2
goals conceded (goalkeeper, defender); yellow card -1, red -3, own goal -2; the bonus points as given. From 2025-26 a defender
with 10 or more defensive contributions, or a midfielder or forward with 12 or more, scores 2 more.
"""
from __future__ import annotations

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
