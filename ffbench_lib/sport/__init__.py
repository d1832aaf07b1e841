"""The sport a league is played in: the :class:`Sport` spec, its registry and the sports (``nfl``, ``fpl``), and scoring
presets. Reads only ``core``."""
from ffbench_lib.sport.base import SPORTS, Sport, UnknownSport, register, sport
from ffbench_lib.sport import nfl  # noqa: F401,E402  (registers the NFL)
from ffbench_lib.sport import fpl  # noqa: F401,E402  (registers the Premier League, FPL rules)

__all__ = ["SPORTS", "Sport", "UnknownSport", "register", "sport"]
