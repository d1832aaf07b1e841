"""Waiver and free-agent rules: a claim adds a free agent and drops a rostered player (rosters stay full); the
roster afterwards must respect the caps and still field a legal lineup. Under FAAB a bid is a whole number of
dollars within the team's budget left. :func:`legal_swaps` lists every legal (add, drop) pair, so a policy
chooses among legal actions (the rules own them, as in OpenSpiel)."""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from ..config import Roster
from .roster import can_field_lineup, within_caps


def swap_problem(roster_ids: Sequence[str], positions: Mapping[str, str], free: Sequence[str] | set[str], add: Any,
                 drop: Any, roster: Roster) -> str | None:
    """Why adding ``add`` and dropping ``drop`` is illegal for a team holding ``roster_ids``, or None."""
    if not isinstance(add, str) or add not in free:
        return f"{add!r} is not an available free agent"
    if not isinstance(drop, str) or drop not in roster_ids:
        return f"{drop!r} is not on your roster"
    after = [positions[p] for p in roster_ids if p != drop] + [positions[add]]
    capped = within_caps(after, roster)
    if capped:
        return f"adding {add} for {drop}: {capped}"
    if not can_field_lineup(after, roster):
        return f"adding {add} for {drop} leaves a roster that cannot field a legal lineup"
    return None


def bid_problem(bid: Any, budget_left: int) -> str | None:
    """Why ``bid`` is not a legal FAAB bid, or None."""
    if isinstance(bid, bool) or not isinstance(bid, (int, float)) or bid != int(bid):
        return f"bid {bid!r} must be a whole number of dollars"
    if not 0 <= bid <= budget_left:
        return f"bid {int(bid)} is outside 0..{budget_left} (the budget left)"
    return None


def legal_swaps(roster_ids: Sequence[str], positions: Mapping[str, str], free: Sequence[str],
                roster: Roster) -> Iterator[tuple[str, str]]:
    """Every legal (add, drop) pair, free agents in the order given, drops in roster order. Legality depends
    only on the two players' positions, so :func:`swap_problem` is asked once per pair of positions."""
    verdict: dict[tuple[str, str], bool] = {}
    for add in free:
        for drop in roster_ids:
            key = (positions[add], positions[drop])
            if key not in verdict:
                verdict[key] = swap_problem(roster_ids, positions, free, add, drop, roster) is None
            if verdict[key]:
                yield add, drop


def apply_swap(rosters: dict[str, list[str]], team: str, add: str, drop: str) -> None:
    rosters[team] = [p for p in rosters[team] if p != drop] + [add]
