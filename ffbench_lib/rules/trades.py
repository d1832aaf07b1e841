"""Trade rules: an offer moves equal numbers of players (1..max per side) between two teams; every player
must be owned by its side at that moment and not already moved this week; both rosters must stay within
caps and still be able to field a legal lineup."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..config import Roster
from ..state import LeagueState
from .roster import can_field_lineup, within_caps


@dataclass(frozen=True)
class Offer:
    """``a`` sends ``a_gives`` to ``b`` and receives ``b_gives``."""

    a: str
    b: str
    a_gives: tuple[str, ...]
    b_gives: tuple[str, ...]

    def from_side(self, team: str) -> dict[str, list[str]]:
        """The offer as ``team`` sees it."""
        if team == self.a:
            return {"you_give": list(self.a_gives), "you_get": list(self.b_gives)}
        return {"you_give": list(self.b_gives), "you_get": list(self.a_gives)}


def _ids(x: Any) -> list[str] | None:
    if isinstance(x, str):
        return [x]
    if isinstance(x, (list, tuple)) and all(isinstance(i, (str, int)) for i in x):
        return [str(i) for i in x]
    return None


def parse_offer(answer: Mapping[str, Any], me: str, other: str) -> tuple[Offer | None, str | None]:
    give, get = _ids(answer.get("give")), _ids(answer.get("get"))
    if give is None or get is None:
        return None, "'give' and 'get' must be lists of player ids"
    return Offer(me, other, tuple(give), tuple(get)), None


def offer_problem(state: LeagueState, offer: Offer, positions: Mapping[str, str], roster: Roster,
                  max_per_side: int, locked: set[str], size: int | None = None) -> str | None:
    """Why ``offer`` is illegal right now, or None."""
    if offer.b not in state.rosters or offer.b == offer.a:
        return f"unknown trade partner {offer.b!r}; choose another team of the league"
    na, nb = len(offer.a_gives), len(offer.b_gives)
    if na != nb:
        return f"unequal player counts ({na} for {nb}); both sides must move the same number"
    if not 1 <= na <= max_per_side:
        return f"{na} players per side; allowed 1..{max_per_side}"
    if size is not None and na != size:
        return f"a counter must keep the size of the offer ({size} per side)"
    if len(set(offer.a_gives)) != na or len(set(offer.b_gives)) != nb:
        return "a player is listed twice"
    for team, ids in ((offer.a, offer.a_gives), (offer.b, offer.b_gives)):
        for pid in ids:
            if pid not in state.rosters[team]:
                return f"{pid} is not on {team}'s roster"
            if pid in locked:
                return f"{pid} was already traded this week"
    new_a = [p for p in state.rosters[offer.a] if p not in offer.a_gives] + list(offer.b_gives)
    new_b = [p for p in state.rosters[offer.b] if p not in offer.b_gives] + list(offer.a_gives)
    for team, ids in ((offer.a, new_a), (offer.b, new_b)):
        pos = [positions[p] for p in ids]
        capped = within_caps(pos, roster)
        if capped:
            return f"{team} would hold {capped}"
        if not can_field_lineup(pos, roster):
            return f"{team} could not field a legal lineup afterwards"
    return None


def apply_offer(state: LeagueState, offer: Offer) -> None:
    state.rosters[offer.a] = [p for p in state.rosters[offer.a] if p not in offer.a_gives] + list(offer.b_gives)
    state.rosters[offer.b] = [p for p in state.rosters[offer.b] if p not in offer.b_gives] + list(offer.a_gives)
