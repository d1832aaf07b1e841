"""Starting lineups as formations: a fixed number of starters with at least and at most so many of each position
(soccer's 1 goalkeeper, 3-5 defenders, 2-5 midfielders, 1-3 forwards), and automatic substitutions from an ordered
bench. Pure arithmetic, like :mod:`ffbench_lib.sport.lineup` (fixed slots are the case where least equals most),
for the game (a league's ``roster.auto_subs``, ``Roster.ranges``) and the tests' brute force alike."""
from __future__ import annotations

import math
from typing import Mapping, Sequence

#: position -> (least, most) starters
Ranges = Mapping[str, tuple[int, int]]


def formation_problem(counts: Mapping[str, int], ranges: Ranges, starters: int) -> str | None:
    """Why starters of these position ``counts`` are not a legal formation, else None."""
    if sum(counts.values()) != starters:
        return f"{sum(counts.values())} starters, not {starters}"
    for pos in sorted(set(counts) - set(ranges)):
        if counts[pos]:
            return f"{pos} may not start"
    for pos, (lo, hi) in ranges.items():
        n = counts.get(pos, 0)
        if not lo <= n <= hi:
            return f"{n} {pos} starting, allowed {lo}-{hi}"
    return None


def _check_ranges(ranges: Ranges, starters: int) -> None:
    """Ranges some lineup of ``starters`` can meet, else a ValueError."""
    least, most = sum(lo for lo, _ in ranges.values()), sum(hi for _, hi in ranges.values())
    if any(lo < 0 or hi < lo for lo, hi in ranges.values()) or not least <= starters <= most:
        raise ValueError(f"no formation of {starters} starters fits the ranges "
                         f"{', '.join(f'{p} {lo}-{hi}' for p, (lo, hi) in ranges.items())}")


def _counts(ids: Sequence[str], positions: Mapping[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in ids:
        out[positions[p]] = out.get(positions[p], 0) + 1
    return out


def best_formation(positions: Mapping[str, str], values: Mapping[str, float], ranges: Ranges, starters: int,
                   exclude: Sequence[str] = ()) -> list[str]:
    """The value-maximising legal starters, best first. Each position's least number go first (its best players),
    then the best players left while their position has room, until ``starters`` start. Optimal: a position's
    best ``n`` players are worth a concave function of ``n`` (its players sorted best first), so adding the best
    remaining player where there is room maximises the sum (values may be negative: ``starters`` must start).
    Ties break by player id. A roster that cannot fill the formation is a ValueError naming the position."""
    _check_ranges(ranges, starters)
    bad = [p for p in positions if not math.isfinite(values.get(p, 0.0))]
    if bad:
        raise ValueError(f"player {bad[0]}'s value is {values[bad[0]]!r}, not a finite number")
    skip = set(exclude)
    order = sorted((p for p in positions if p not in skip), key=lambda p: (-values.get(p, 0.0), p))
    chosen: list[str] = []
    n: dict[str, int] = {}
    for pos, (lo, _) in ranges.items():
        best = [p for p in order if positions[p] == pos][:lo]
        if len(best) < lo:
            raise ValueError(f"the formation needs {lo} {pos} starting; the roster has {len(best)}")
        chosen += best
        n[pos] = lo
    taken = set(chosen)
    for p in order:
        if len(chosen) >= starters:
            break
        pos = positions[p]
        if p not in taken and pos in ranges and n[pos] < ranges[pos][1]:
            chosen.append(p)
            taken.add(p)
            n[pos] += 1
    if len(chosen) < starters:
        raise ValueError(f"the roster cannot field {starters} starters within the formation ({len(chosen)} can)")
    return sorted(chosen, key=lambda p: (-values.get(p, 0.0), p))


def auto_subs(starting: Sequence[str], bench: Sequence[str], positions: Mapping[str, str],
              played: Mapping[str, bool], ranges: Ranges, starters: int,
              keeper: str | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The final starters after automatic substitutions, and the ``(out, in)`` pairs in the order made.

    ``starting`` must be a legal formation of ``starters``. Each starter who did not play, in the lineup's order,
    is replaced by the first bench player, in the bench's order, who played, is not already in, and keeps the
    formation legal; a ``keeper`` (goalkeeper) only by a bench
    ``keeper``, and only a keeper replaces one (ranges of exactly one keeper imply it; None: the ranges alone). A starter nobody can replace stays (and scores nothing). The
    final starters keep the lineup's order, each substitute in the place of the player he replaced. A player
    missing from ``played`` did not play (no row: his club had no match). An illegal starting lineup, a player
    twice, or one without a position is a ValueError: substitutions judged on it would be wrong."""
    unknown = [p for p in (*starting, *bench) if p not in positions]
    if unknown:
        raise ValueError(f"player {unknown[0]} has no position")
    if len(set(starting)) != len(starting) or set(starting) & set(bench) or len(set(bench)) != len(bench):
        raise ValueError("a player is twice among the starters and the bench")
    _check_ranges(ranges, starters)
    problem = formation_problem(_counts(starting, positions), ranges, starters)
    if problem:
        raise ValueError(f"the starting lineup is not a legal formation: {problem}")
    final = list(starting)
    subs: list[tuple[str, str]] = []
    used: set[str] = set()
    for out in starting:
        if played.get(out, False):
            continue
        for cand in bench:
            if cand in used or not played.get(cand, False):
                continue
            if keeper is not None and (positions[out] == keeper) != (positions[cand] == keeper):
                continue
            trial = [cand if p == out else p for p in final]
            if formation_problem(_counts(trial, positions), ranges, starters) is None:
                final, used = trial, used | {cand}
                subs.append((out, cand))
                break
    return final, subs
