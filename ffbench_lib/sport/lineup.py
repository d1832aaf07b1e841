"""How players fill starting slots, given how many slots of each kind there are and which positions may fill
each (a league's ``Roster.slot_counts()`` and ``Roster.slot_positions()``): the best lineup for given values and its
value. Pure arithmetic, so the game (repairs, bots) and the analysis (the hindsight-optimal lineup) share it."""
from __future__ import annotations

from typing import Mapping, Sequence


def best_lineup(positions: Mapping[str, str], values: Mapping[str, float], counts: Mapping[str, int],
                slot_positions: Mapping[str, frozenset[str]], exclude: Sequence[str] = ()) -> dict[str, list[str | None]]:
    """The value-maximising legal lineup. Greedy is optimal here: each position's own slots take its best
    players, then each flex slot, narrow to wide (FLEX, then SUPERFLEX), the best remaining eligible players.
    By exchange: a better player of the same position benched or in a wider slot can swap with a worse one in
    a narrower slot, and the worse one stays eligible where the better one was, because every narrower slot's
    positions are within every wider one's (FLEX's within SUPERFLEX's, which the config checks). Ties break by
    player id so the result is deterministic."""
    order = sorted((p for p in positions if p not in exclude), key=lambda p: (-values.get(p, 0.0), p))
    out: dict[str, list[str | None]] = {}
    used: set[str] = set()
    for slot, ok in slot_positions.items():  # positions, then the flex slots narrow to wide
        n = counts[slot]
        picks = [p for p in order if p not in used and positions[p] in ok][:n]
        used.update(picks)
        out[slot] = picks + [None] * (n - len(picks))
    return out


def lineup_value(lineup: Mapping[str, list[str | None]], values: Mapping[str, float]) -> float:
    return float(sum(values.get(p, 0.0) for ids in lineup.values() for p in ids if p is not None))
