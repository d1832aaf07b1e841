"""How players fill starting slots, given how many slots of each kind there are and which positions may fill
each (a league's ``Roster.slot_counts()`` and ``Roster.slot_positions()``): the best lineup for given values and its
value. Pure arithmetic, so the game (repairs, bots) and the analysis (the hindsight-optimal lineup) share it."""
from __future__ import annotations

from typing import Mapping, Sequence


def best_lineup(positions: Mapping[str, str], values: Mapping[str, float], counts: Mapping[str, int],
                slot_positions: Mapping[str, frozenset[str]], exclude: Sequence[str] = (),
                most: Mapping[str, int] | None = None) -> dict[str, list[str | None]]:
    """The value-maximising legal lineup. Greedy is optimal here: each position's own slots take its best
    players, then each flex slot, narrow to wide (FLEX, then SUPERFLEX), the best remaining eligible players.
    By exchange: a better player of the same position benched or in a wider slot can swap with a worse one in
    a narrower slot, and the worse one stays eligible where the better one was, because every narrower slot's
    positions are within every wider one's (FLEX's within SUPERFLEX's, which the config checks). Ties break by
    player id so the result is deterministic.

    ``most`` (a formation: most starters per position) lets a flex slot take a player only while his position
    has room. Still optimal: beyond each position's best least-many, the flex picks are a set of bounded size
    with at most so many of each position (a matroid), for which picking the best that fits is optimal."""
    order = sorted((p for p in positions if p not in exclude), key=lambda p: (-values.get(p, 0.0), p))
    out: dict[str, list[str | None]] = {}
    used: set[str] = set()
    if most:
        room = {pos: most.get(pos, len(positions)) - counts.get(pos, 0) for pos in set(positions.values())}
    for slot, ok in slot_positions.items():  # positions, then the flex slots narrow to wide
        n = counts[slot]
        if most and ok != {slot}:  # a flex slot under a formation
            picks = []
            for p in order:
                if len(picks) == n:
                    break
                if p not in used and positions[p] in ok and room[positions[p]] > 0:
                    picks.append(p)
                    room[positions[p]] -= 1
        else:
            picks = [p for p in order if p not in used and positions[p] in ok][:n]
        used.update(picks)
        out[slot] = picks + [None] * (n - len(picks))
    return out


def lineup_value(lineup: Mapping[str, list[str | None]], values: Mapping[str, float]) -> float:
    return float(sum(values.get(p, 0.0) for ids in lineup.values() for p in ids if p is not None))


def hindsight_points(positions: Mapping[str, str], points: Mapping[str, float], counts: Mapping[str, int],
                     slot_positions: Mapping[str, frozenset[str]], most: Mapping[str, int] | None = None) -> float:
    """The points of the hindsight-optimal legal lineup of a roster (``positions``) given what each player really
    scored: the start/sit oracle of the season metric and of an exam's state alike."""
    return lineup_value(best_lineup(positions, points, counts, slot_positions, most=most), points)


class LineupValuer:
    """``lineup_value(best_lineup(...))`` for many rosters under one set of slots, faster: the slots are read
    once, and a roster is given as ``(-value, id, position)`` entries already in :func:`best_lineup`'s order
    (so a trade search sorts a roster once and swaps players in and out).

    One pass, best first: each player takes the first slot with room among his position's own slot and then
    the flex slots narrow to wide. That is the lineup :func:`best_lineup` fills slot by slot (a position slot
    takes its position's best; a flex slot the best eligible players left, and a player passed on to a wider
    slot found the narrower one full of better players). The values are then added slot by slot, best first,
    as :func:`lineup_value` adds them, hence the same float."""

    def __init__(self, counts: Mapping[str, int], slot_positions: Mapping[str, frozenset[str]],
                 most: Mapping[str, int] | None = None):
        slots = list(slot_positions)
        self._room = [counts[s] for s in slots]
        #: a formation's room per position in the flex slots (None: no limit beyond the slots)
        self._flex_room = None if not most else {
            pos: n - counts.get(pos, 0) for pos, n in most.items()}
        self._flex = frozenset(i for i, s in enumerate(slots) if slot_positions[s] != {s})
        #: position -> the indices of the slots it may fill, in filling order
        self._route: dict[str, tuple[int, ...]] = {}
        for i, s in enumerate(slots):
            for pos in slot_positions[s]:
                self._route[pos] = (*self._route.get(pos, ()), i)

    def value(self, order: Sequence[tuple[float, str, str]]) -> float:
        """The best lineup's value of a roster given as sorted ``(-value, id, position)`` entries."""
        return self.lineup(order)[0]

    def lineup(self, order: Sequence[tuple[float, str, str]]) -> tuple[float, set[str]]:
        """The best lineup's value and its starters (ids). A roster that loses a player who does not start
        keeps the very same lineup, value and float."""
        room = list(self._room)
        picked: list[list[float]] = [[] for _ in room]
        starters: set[str] = set()
        left = sum(room)
        route = self._route
        # a formation: a flex slot takes a player only while his position has room (fixed slots: no flex check)
        flex_room, flex = (dict(self._flex_room), self._flex) if self._flex_room is not None else ({}, frozenset())
        for neg, pid, pos in order:
            if not left:
                break
            for i in route.get(pos, ()):
                if room[i] and i in flex:
                    if flex_room.get(pos, 1) <= 0:
                        continue
                    if pos in flex_room:
                        flex_room[pos] -= 1
                if room[i]:
                    room[i] -= 1
                    picked[i].append(-neg)
                    starters.add(pid)
                    left -= 1
                    break
        total = 0
        for vals in picked:
            for v in vals:
                total += v
        return float(total), starters
