"""The playoff bracket as pure functions of the seeds and the teams' weekly points (no state, no I/O).

- **Seeds**: the top ``n`` of the regular-season standings (win percentage, then points for: the league state's
  ``standings_order``), seed 1 first.
- **Bracket**: fixed (no reseeding), in the usual order (8 slots: 1-8, 4-5, 2-7, 3-6), so seed 1 meets the
  lowest remaining seed as late as possible. A field that is not a power of two fills the missing slots with
  byes, which go to the top seeds (6 of 8: seeds 1 and 2 wait in round 1).
- **A game** lasts its round's weeks; the team with more points summed over them wins (points rounded to 0.01,
  as the lineups table holds them). A tie goes to the higher seed (the smaller seed number): a better regular
  season breaks it, as most leagues do.

A pair is ``[team, opponent]``; a bye is ``[team, None]``."""
from __future__ import annotations

from typing import Mapping, Sequence

Pair = list  # [team, opponent or None]


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket slot order for ``size`` slots (a power of two): 4 -> 1,4,2,3."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [s for x in order for s in (x, n + 1 - x)]
    return order


def first_round(seeds: Sequence[str]) -> list[Pair]:
    """Round 1: adjacent slots of the bracket play; a slot beyond the field is a bye for its neighbour."""
    size = 1 << (len(seeds) - 1).bit_length()
    slots = [seeds[s - 1] if s <= len(seeds) else None for s in bracket_order(size)]
    return [[a, b] if a is not None else [b, None] for a, b in zip(slots[::2], slots[1::2])]


def winner(pair: Pair, seeds: Sequence[str], total: Mapping[str, float]) -> str:
    """The team with more points over the round (``total``); a tie to the higher seed; a bye advances."""
    a, b = pair
    if b is None:
        return a
    ta, tb = round(total[a], 2), round(total[b], 2)
    if ta != tb:
        return a if ta > tb else b
    return a if seeds.index(a) < seeds.index(b) else b


def round_totals(teams: Sequence[str], weeks: Sequence[int], points: Mapping[int, Mapping[str, float]]
                 ) -> dict[str, float]:
    """Each team's points summed over a round's weeks, in week order, rounded to 0.01."""
    out = {}
    for t in teams:
        s = 0.0
        for w in weeks:
            s = round(s + points[w][t], 2)
        out[t] = s
    return out


def bracket(seeds: Sequence[str], rounds: Sequence[Sequence[int]], points: Mapping[int, Mapping[str, float]],
            through: int) -> dict[str, list[Pair]]:
    """The pairs of every playoff week up to ``through`` (week as str -> pairs), from the seeds and the points of
    the rounds already played. ``rounds`` lists each round's weeks (first round first); ``points`` must hold
    every team's points of every week of the rounds before the last one shown."""
    out: dict[str, list[Pair]] = {}
    pairs = first_round(seeds)
    for i, weeks in enumerate(rounds):
        if weeks[0] > through:
            break
        for w in weeks:
            if w <= through:
                out[str(w)] = [list(p) for p in pairs]
        if i + 1 < len(rounds) and rounds[i + 1][0] <= through:
            total = round_totals([t for p in pairs for t in p if t is not None], weeks, points)
            won = [winner(p, seeds, total) for p in pairs]
            pairs = [[a, b] for a, b in zip(won[::2], won[1::2])]
    return out


def week_rows(seeds: Sequence[str], pairs: Sequence[Pair], rnd: int, weeks: Sequence[int], week: int,
              points: Mapping[int, Mapping[str, float]]) -> list[dict]:
    """The ``playoffs`` table's rows of one week (one per bracket team still playing): the week's points, the
    round's points so far, and ``result`` on the round's last week (W / L; ``bye`` every week of a bye; None
    before a two-week round ends)."""
    so_far = [w for w in weeks if w <= week]
    teams = [t for p in pairs for t in p if t is not None]
    total = round_totals(teams, so_far, points)
    last = week == weeks[-1]
    rows = []
    for a, b in pairs:
        for team, opp in ((a, b), (b, a)):
            if team is None:
                continue
            if opp is None:
                result = "bye"
            else:
                result = ("W" if winner([team, opp], seeds, total) == team else "L") if last else None
            rows.append({"week": week, "round": rnd, "team": team, "playoff_seed": seeds.index(team) + 1,
                         "opponent": opp, "opponent_seed": seeds.index(opp) + 1 if opp else None,
                         "points_for": points[week][team], "points_against": points[week][opp] if opp else None,
                         "round_points_for": total[team], "round_points_against": total[opp] if opp else None,
                         "result": result})
    return rows

