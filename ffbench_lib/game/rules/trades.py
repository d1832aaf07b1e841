"""Trade rules: an offer moves equal numbers of players (1..max per side) between two teams; every player
must be owned by its side at that moment and not already moved this week; both rosters must stay within
caps and still be able to field a legal lineup. :class:`OfferSpace` lists the candidate offers a team can
make, so a policy chooses among legal ones (OpenSpiel style: the rules own the legal actions)."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any, Iterator, Mapping, Sequence

from ffbench_lib.config.league import Roster
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps


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


@dataclass(frozen=True)
class Market:
    """Everything trade legality depends on. The engine judges with the league state; a bot rebuilds this
    from its view (``rosters`` then holds only the teams it sees) and judges with the same :func:`offer_problem`."""

    rosters: Mapping[str, Sequence[str]]
    positions: Mapping[str, str]
    roster: Roster
    max_per_side: int
    locked: frozenset[str] = frozenset()

    def problem(self, offer: Offer, size: int | None = None) -> str | None:
        return offer_problem(self, offer, self.positions, self.roster, self.max_per_side, self.locked, size)


def offer_problem(state: LeagueState | Market, offer: Offer, positions: Mapping[str, str], roster: Roster,
                  max_per_side: int, locked: set[str] | frozenset[str], size: int | None = None) -> str | None:
    """Why ``offer`` is illegal right now, or None (``state`` is read for its rosters only)."""
    if offer.b not in state.rosters or offer.b == offer.a:
        return (f"unknown trade partner {offer.b!r}; choose one of "
                f"{sorted(t for t in state.rosters if t != offer.a)}")
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


def _unrank(items: Sequence[str], k: int, r: int) -> tuple[str, ...]:
    """The ``r``-th ``k``-combination of ``items`` in :func:`itertools.combinations` order."""
    out: list[str] = []
    start = 0
    for left in range(k, 0, -1):
        for i in range(start, len(items)):
            c = comb(len(items) - i - 1, left - 1)  # combinations that start with items[i]
            if r < c:
                out.append(items[i])
                start = i + 1
                break
            r -= c
    return tuple(out)


@dataclass(frozen=True)
class _Block:
    """Offers ``a`` -> ``b`` with ``k`` players each way: every give-set times every get-set."""

    b: str
    k: int
    mine: tuple[str, ...]
    theirs: tuple[str, ...]

    def __len__(self) -> int:
        return comb(len(self.mine), self.k) * comb(len(self.theirs), self.k)

    def get(self, a: str, i: int) -> Offer:
        g, t = divmod(i, comb(len(self.theirs), self.k))
        return Offer(a, self.b, _unrank(self.mine, self.k, g), _unrank(self.theirs, self.k, t))


class OfferSpace:
    """Every candidate offer team ``a`` can make to ``partners`` as one indexed sequence: equal-size sets of
    unlocked players each side, 1..max per side (a proposal) or exactly ``size`` (a counter keeps the offer's
    size). Indexing lets a policy draw uniformly without listing ~10^5 offers; :meth:`legal` keeps those
    :func:`offer_problem` accepts, so the legal set is defined by the one check the engine uses."""

    def __init__(self, market: Market, a: str, partners: Sequence[str], size: int | None = None):
        self.market, self.a, self.size = market, a, size
        sizes = [size] if size is not None else range(1, market.max_per_side + 1)
        free = {t: tuple(sorted(p for p in market.rosters[t] if p not in market.locked)) for t in (a, *partners)}
        self._blocks = [_Block(b, k, free[a], free[b]) for b in partners for k in sizes
                        if 1 <= k <= min(len(free[a]), len(free[b]))]
        self._len = sum(len(blk) for blk in self._blocks)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> Offer:
        if not 0 <= i < self._len:
            raise IndexError(i)
        for blk in self._blocks:
            if i < len(blk):
                return blk.get(self.a, i)
            i -= len(blk)
        raise AssertionError("unreachable")

    def __iter__(self) -> Iterator[Offer]:
        for blk in self._blocks:
            for give in combinations(blk.mine, blk.k):
                for get in combinations(blk.theirs, blk.k):
                    yield Offer(self.a, blk.b, give, get)

    def is_legal(self, offer: Offer) -> bool:
        return self.market.problem(offer, self.size) is None

    def legal(self) -> Iterator[Offer]:
        return (o for o in self if self.is_legal(o))
