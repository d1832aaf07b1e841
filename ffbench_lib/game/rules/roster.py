"""Roster legality shared by the draft and trades: caps per position, and whether a set of positions can still
field (or, with picks to come, complete) a legal starting lineup."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from ffbench_lib.config.league import Roster


def unmet_starters(positions: Iterable[str], roster: Roster) -> int:
    """How many more players are needed before every starting slot can be filled: the open position slots,
    plus the flex slots (narrow to wide) that the players beyond their own position's slots cannot fill.
    Filling narrow to wide leaves the most for the wider slot (FLEX's positions are within SUPERFLEX's), so
    this is the fewest players still needed."""
    c = Counter(positions)
    slots = roster.slots  # the positions' own starting slots (``roster.starting``)
    missing = sum(max(0, n - c.get(p, 0)) for p, n in slots.items())
    spare = {p: max(0, c.get(p, 0) - n) for p, n in slots.items()}
    for slot, eligible in roster.flex_slots().items():
        need = getattr(roster, slot)  # the flex slot's count (``roster.slot_counts()[slot]``)
        for p in eligible:
            used = min(need, spare.get(p, 0))
            spare[p] = spare.get(p, 0) - used
            need -= used
        missing += need
    return missing


def within_caps(positions: Iterable[str], roster: Roster) -> str | None:
    """None if every position is within its cap, else the problem."""
    c = Counter(positions)
    for pos, n in c.items():
        cap = roster.caps.get(pos)
        if cap is not None and n > cap:
            return f"{n} {pos} exceeds the cap of {cap}"
    return None


def can_field_lineup(positions: Iterable[str], roster: Roster) -> bool:
    return unmet_starters(positions, roster) == 0


def draft_pick_problem(current: list[str], position: str, roster: Roster) -> str | None:
    """Why adding a ``position`` player to a drafting roster is illegal, or None: the cap must hold and the
    picks left after this one must still be able to fill every starting slot."""
    after = [*current, position]
    capped = within_caps(after, roster)
    if capped:
        return capped
    picks_left = roster.size - len(after)
    if unmet_starters(after, roster) > picks_left:
        return f"drafting a {position} now leaves too few picks to fill the starting slots"
    return None
