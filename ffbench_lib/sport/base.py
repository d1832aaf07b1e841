"""The ``Sport`` spec: every fact of a sport the rest of ffbench reads, and the registry of sports.

A league names its sport (``sport: nfl``); code reads the facts through :func:`sport` (``league.sport_spec``
where a league is at hand), never from literals, so a second sport is one new module beside ``nfl.py`` that
builds a :class:`Sport` and :func:`register` s it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

from ffbench_lib.sport import scoring


def frozen(mapping: Mapping) -> Mapping:
    """A read-only view of ``mapping``: a spec's facts cannot be changed by the code that reads them."""
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)
class Sport:
    """The facts of one sport. Mappings are read-only; orders (positions, flex slots) are display orders."""

    #: registry key, as a league's ``sport:`` names it
    name: str
    #: how people name the competition ("NFL season played")
    title: str
    #: the unit a season is played in (a league's ``weeks``); one lineup and one game per unit
    calendar_unit: str
    #: most regular-season units a league may play
    max_weeks: int
    #: seasons ffbench has data for, by the calendar year a season starts in
    seasons: tuple[int, ...]
    #: how a season is named from its start year (``{year}``: 2024; a soccer season might be ``{year}-{next:02d}``)
    season_format: str
    #: positions a league may use, in display order
    positions: tuple[str, ...]
    #: position codes some sources use for a known position
    position_aliases: Mapping[str, str]
    #: the stat groups (``scoring.GROUPS``) each position scores
    position_stat_groups: Mapping[str, tuple[str, ...]]
    #: positions with a fixed number of players in any season (one team defense per team)
    position_supply: Mapping[str, int]
    #: starting slots of a roster that does not name the position; these positions are in every league
    default_slots: Mapping[str, int]
    #: most starting slots per position (a sanity bound on hand-written configs)
    max_slots: Mapping[str, int]
    #: most players of a position one team may hold, when the roster gives no caps
    default_caps: Mapping[str, int]
    #: the flex slot kinds, narrow to wide, and the positions each takes when the roster does not say
    flex_slots: Mapping[str, tuple[str, ...]]
    #: team code -> the franchise's current full name (city, then nickname: the last word)
    teams: Mapping[str, str]
    #: other providers' team codes -> the canonical codes above
    team_aliases: Mapping[str, str]
    #: a real player id of the sport's own id system (regex)
    player_id_pattern: str
    #: how to write a player id from a number (made-up ids that match the pattern but no player)
    player_id_format: str
    #: further real-id patterns (source ids, team-level players), alternatives of :attr:`real_id_pattern`
    other_id_patterns: tuple[str, ...]
    #: every status an official injury report gives
    injury_statuses: tuple[str, ...]
    #: the status of a player ruled out of the unit's game (scores 0; may go to IR)
    out_status: str
    #: scheduled games never played (not byes): season -> {(team, unit)}
    cancelled_games: Mapping[int, frozenset[tuple[str, int]]]
    #: scoring presets of :mod:`ffbench_lib.sport.scoring` a league may name
    scoring_presets: tuple[str, ...]
    #: per-game rookie prior when no earlier rookie class is available, by draft-round bucket
    rookie_fallback_ppg: Mapping[str, tuple[float, ...]]
    #: the last draft pick of each rookie bucket but the last (later or undrafted)
    rookie_bucket_picks: tuple[int, ...]
    #: bot default (vorp): the share of FLEX slots each position fills in a typical league
    bot_flex_share: Mapping[str, float]
    #: bot default (vorp): the share of a flex position missing from :attr:`bot_flex_share`
    bot_flex_share_unlisted: float
    #: one colour per position and per flex slot kind, for figures
    colors: Mapping[str, str] = field(default_factory=dict)
    #: the data sources (``data.source``) of the sport, the default first
    sources: tuple[str, ...] = ("nflverse", "sportsdataio")
    #: the roster a league of the sport gets when it names none (empty: the Roster model's own defaults)
    default_roster: Mapping[str, object] = field(default_factory=dict)
    #: a sport scored by position (FPL: a goal is worth more from a defender): the season's start year -> each
    #: position's :class:`~ffbench_lib.sport.scoring.Rules`; None for a sport scored by a league's weights (NFL)
    position_rules: Callable[[int], Mapping[str, scoring.Rules]] | None = None
    #: team names are city then nickname, each of which names the team alone ("Chiefs"); False: only the whole
    #: name does (a club's "Man City": "City" is an ordinary word)
    team_name_parts: bool = True
    #: how a user brings a season's data up to date (``{year}``, ``{season}``: its name, ``{dir}``: the data folder)
    data_update: str = "ffbench data download --seasons {year} --out {dir}"
    #: the time zone of the schedule's game days
    schedule_timezone: str = "US Eastern"
    #: what the prompts call the game a manager plays ("You manage the fantasy-football team ...")
    game: str = "fantasy-football"
    #: the weekly rows give each player's minutes (who played: automatic substitutions need it)
    has_minutes: bool = False
    #: most FLEX slots a roster may have (a sanity bound, as :attr:`max_slots`)
    max_flex: int = 3
    #: inputs no season of the sport has (``injury_report``: FPL publishes none): views and prompts say so
    never_available: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for key in ("position_aliases", "position_stat_groups", "position_supply", "default_slots", "max_slots",
                    "default_caps", "flex_slots", "teams", "team_aliases", "cancelled_games",
                    "rookie_fallback_ppg", "bot_flex_share", "colors", "default_roster"):
            object.__setattr__(self, key, frozen(getattr(self, key)))

    @property
    def team_codes(self) -> frozenset[str]:
        """The canonical team codes."""
        return frozenset(self.teams)

    @property
    def real_id_pattern(self) -> str:
        """Every real player id (the sport's own, source ids, team-level players) as one regex."""
        return "|".join((self.player_id_pattern, *self.other_id_patterns))

    def made_up_id(self, number: int) -> str:
        """A player id of the sport's form that the number makes (``0`` -> ``00-0000000``)."""
        return self.player_id_format.format(number)

    def is_player_id(self, text: str) -> bool:
        return re.fullmatch(self.player_id_pattern, text) is not None

    def season_name(self, year: int) -> str:
        return self.season_format.format(year=year, next=(year + 1) % 100)

    def stratum(self, year: int) -> str:
        """A season with its sport, ``nfl-2024``, ``fpl-2024-25``: a study's stratum and its runs' folder."""
        return f"{self.name}-{self.season_name(year)}"

    def season_year(self, name: object) -> int | None:
        """The start year of the season named ``name`` (``2024-25`` -> 2024; an int or ``"2024"`` as it is), or
        None for a name of no season of the sport's form."""
        if isinstance(name, int) and not isinstance(name, bool):
            return name
        if isinstance(name, str):
            lead = re.match(r"\s*(\d{4})", name)
            if lead and name.strip() == self.season_name(int(lead.group(1))):
                return int(lead.group(1))
        return None

    def stat_groups(self, positions) -> tuple[str, ...]:
        """The stat groups ``positions`` score, in ``scoring.GROUPS`` order: a league's rules keep only these."""
        have = {g for p in positions for g in self.position_stat_groups.get(p, ())}
        return tuple(g for g in scoring.GROUPS if g in have)

    def positions_scoring(self, group: str) -> tuple[str, ...]:
        """The positions that score stat group ``group`` (``defense``: the team defense), in display order."""
        return tuple(p for p in self.positions if group in self.position_stat_groups[p])


#: every registered sport by name
SPORTS: dict[str, Sport] = {}


class UnknownSport(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def register(spec: Sport) -> Sport:
    """Add ``spec`` to :data:`SPORTS` (once per name) and return it."""
    if spec.name in SPORTS:
        raise ValueError(f"sport {spec.name!r} is registered twice")
    SPORTS[spec.name] = spec
    return spec


def sport(name: str) -> Sport:
    """The spec of sport ``name``; an unknown name is an error naming the choices."""
    try:
        return SPORTS[name]
    except (KeyError, TypeError):
        raise UnknownSport(f"unknown sport {name!r}; the sports are {', '.join(SPORTS)}") from None
