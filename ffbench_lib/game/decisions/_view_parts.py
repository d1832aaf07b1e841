"""The pieces decision views share, as typed dicts: each kind's ``view_schema`` (in its module) is built from them.

Views stay plain dicts built by the firewall (:mod:`ffbench_lib.game.views`) and the kinds' ``view`` methods; these
types describe them key for key, so a key added, renamed or lost anywhere fails validation
(:func:`ffbench_lib.testing.conformance.view_problems`) instead of reaching a prompt, a bot or a form unnoticed.
Every typed dict here is decorated with :data:`VIEW`: no unknown key, no silent type coercion. A key only some
leagues show (IR, playoffs, superflex, tiers) is ``NotRequired``.
"""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict  # pydantic needs typing_extensions' TypedDict on Python < 3.12

#: the config of every view schema: an unknown key fails, and so does a value of the wrong JSON type
VIEW = ConfigDict(extra="forbid", strict=True)


# ------------------------------------------------------------------------------------------------- league
@with_config(VIEW)
class PlayoffRules(TypedDict):
    teams: int
    regular_weeks: int
    round_weeks: list[int]


@with_config(VIEW)
class PositionRules(TypedDict):
    """One position's scoring in a sport scored by position (``scoring.Rules.as_dict``)."""

    weights: dict[str, float]
    tiers: dict[str, list[tuple[float | None, float]]]
    every: dict[str, tuple[float, float]]


@with_config(VIEW)
class Rules(TypedDict):
    """``Firewall.rules()``: the league's rules as every view shows them."""

    roster_slots: dict[str, int]
    bench: int
    flex_positions: list[str]
    superflex_positions: NotRequired[list[str]]
    caps: dict[str, int]
    scoring: dict[str, float]
    scoring_tiers: NotRequired[dict[str, list[tuple[float | None, float]]]]  # [[upto, points], ...]
    teams: int
    weeks: int
    season: int
    ir_slots: NotRequired[int]
    unavailable: NotRequired[list[Literal["injury_report", "adp"]]]
    playoffs: NotRequired[PlayoffRules]
    most_starters: NotRequired[dict[str, int]]  # a formation: the slots are the least, these the most
    auto_subs: NotRequired[bool]  # an ordered bench and automatic substitutions
    sport: NotRequired[str]  # a league of another sport than the NFL, and its calendar unit
    unit: NotRequired[str]
    position_scoring: NotRequired[dict[str, PositionRules]]  # a sport scored by position (FPL)


@with_config(VIEW)
class Record(TypedDict):
    wins: int
    losses: int
    ties: int
    points_for: float


# ------------------------------------------------------------------------------------------------ players
@with_config(VIEW)
class Card(TypedDict):
    """``PlayerCatalog.card``: a player's preseason card."""

    id: str
    name: str
    pos: str
    team: str | None
    bye: int | None
    adp: float | None
    proj: float | None
    prev_pts: float | None
    prev_g: int


@with_config(VIEW)
class DetailCard(Card):
    """``Firewall.shortlist_detail``: a shortlisted player's card with his earlier seasons and projections."""

    prev_ppg: float | None
    prev2_pts: float | None
    prev2_g: int
    prev2_ppg: float | None
    proj_builtin: float | None
    proj_sportsdataio: float | None
    proj_fantasypros: float | None
    proj_source: str
    rookie: bool
    nfl_draft_pick: int | None
    injury_note: None


@with_config(VIEW)
class WeekCard(Card):
    """``Firewall.player_week``: a player as seen before a week kicks off."""

    opp: str | None
    std_g: int
    std_pts: float | None
    std_ppg: float | None
    recent: list[tuple[int, float]]  # [week, points]
    last3_avg: float | None
    proj_week: float | None
    injury: str | None
    zero_flags: list[Literal["bye", "out"]]
    price: NotRequired[float | None]  # a sport with a weekly market (FPL): the week's price in millions
    owned: NotRequired[int | None]  # and how many managers own him (None: not in the week's market)


# -------------------------------------------------------------------------------------------------- draft
@with_config(VIEW)
class RosterSummary(TypedDict):
    counts: dict[str, int]
    unfilled_starters: int


@with_config(VIEW)
class DraftBoard(TypedDict):
    """``Firewall.draft_view`` plus the legal positions: what every draft view shows (its ``decision`` and sizes
    are the kind's)."""

    season: int
    pick: int
    round: int
    rounds: int
    team: str
    rules: Rules
    drafted_by_position: dict[str, int]
    roster: list[Card]
    roster_summary: RosterSummary
    thin_positions: list[str]
    available: dict[str, list[Card]]
    legal_positions: list[str]


@with_config(VIEW)
class PickMade(TypedDict):
    """``Firewall.picks_so_far``: one pick of the draft so far."""

    pick: int
    round: int
    team: str
    id: str
    name: str
    pos: str


# -------------------------------------------------------------------------------------------------- weeks
@with_config(VIEW)
class Week(TypedDict):
    """What every in-season view shows (its ``decision`` is the kind's)."""

    season: int
    week: int
    team: str
    rules: Rules


@with_config(VIEW)
class RoundPoints(TypedDict):
    you: float
    opponent: float


@with_config(VIEW)
class PlayoffContext(TypedDict):
    """``Firewall.playoff_context``: where a team stands in a playoff week."""

    round: int
    rounds: int
    week_of_round: int
    weeks_in_round: int
    status: Literal["playing", "bye", "eliminated or not qualified"]
    round_points_so_far: NotRequired[RoundPoints]


@with_config(VIEW)
class Claims(Week):
    """``waiver_claims.claims_view``: waiver claims and free-agent adds (``decision`` and ``mode`` are the kind's)."""

    budget: int
    budget_left: int | None
    priority: int | None
    max_claims: int
    weeks_left: int
    record: Record
    my_roster: list[WeekCard]
    free_agents: dict[str, list[WeekCard]]


# ------------------------------------------------------------------------------------------------- trades
@with_config(VIEW)
class OtherTeam(TypedDict):
    team: str
    record: Record
    strength: dict[str, float]
    roster: list[WeekCard]


@with_config(VIEW)
class Trade(Week):
    """``Firewall.trade_view`` without an offer: what every trade view shows (its ``decision`` is the kind's)."""

    max_players_per_side: int
    weeks_left: int
    locked_players: list[str]
    my_roster: list[WeekCard]
    my_record: Record
    my_strength: dict[str, float]
    league_avg_strength: dict[str, float]
    other_teams: list[OtherTeam]


@with_config(VIEW)
class OfferShown(TypedDict):
    """The offer on the table, from the asked team's side."""

    from_team: str
    you_give: list[WeekCard]
    you_get: list[WeekCard]


@with_config(VIEW)
class NegotiationStep(TypedDict):
    """An earlier step of the negotiation, from the asked team's side (the other side's rationale untrusted)."""

    step: int
    by: str
    action: str
    you_give: list[str]
    you_get: list[str]
    their_rationale_untrusted: NotRequired[str]


@with_config(VIEW)
class OfferView(Trade):
    """A reply to the offer on the table (the three reply kinds' views; ``negotiation`` once there is one)."""

    offer: OfferShown
    negotiation: NotRequired[list[NegotiationStep]]
