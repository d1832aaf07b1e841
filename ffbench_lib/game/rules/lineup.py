"""Lineup rules: which assignments of a roster to starting slots are legal, the best lineup for given player
values (used to repair illegal answers with projections, and by metrics with actual points - the hindsight
oracle), and the repair of a partly illegal answer."""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations, product
from typing import Iterator, Mapping, Sequence

import numpy as np

from ffbench_lib.config.league import Roster
from ffbench_lib.game.protect import midpoint
from ffbench_lib.sport.formation import auto_subs
from ffbench_lib.sport.lineup import best_lineup as fill_best

#: a player on bye or ruled out this week: below any real projection (0 would tie a healthy player projected 0),
#: so he starts only when nobody else can fill the slot
OUT_VALUE = -1.0


def start_value(card: Mapping) -> float:
    """The lineup policy's value of one player card (a lineup view's ``players`` entry): this week's projection
    (``proj_week``; none counts 0), or :data:`OUT_VALUE` (-1) when ``zero_flags`` says bye or out. The engine's
    repair, the bots and the fake LLM server all start players by it."""
    if card["zero_flags"]:
        return OUT_VALUE
    v = card.get("proj_week")
    return float((midpoint(v) if isinstance(v, str) else v) or 0.0)  # a protected view's range: its midpoint


def slot_counts(roster: Roster) -> dict[str, int]:
    """Starting slots in display order, then the flex slots narrow to wide (:meth:`Roster.slot_counts`)."""
    return roster.slot_counts()


def eligible(slot: str, position: str, roster: Roster) -> bool:
    """Whether a ``position`` player may fill ``slot`` (:meth:`Roster.eligible`)."""
    return roster.eligible(slot, position)


def slot_positions(roster: Roster) -> dict[str, frozenset[str]]:
    """Each starting slot in :func:`slot_counts` order and the positions that may fill it (computed once per
    call: the lineup functions run inside the bots' trade searches)."""
    return roster.slot_positions()


@dataclass(frozen=True)
class LineupResult:
    """A legal lineup: ``slots`` maps slot -> list of player ids (None for a slot nobody can fill)."""

    slots: dict[str, list[str | None]]
    decided_by: dict[str, list[str]]  # per slot entry: 'agent' or 'fallback'
    problems: list[str]
    #: an ordered bench (``roster.auto_subs``): (player, 'agent' or 'fallback') in the order substitutes come on
    bench: tuple[tuple[str, str], ...] = ()

    def starters(self) -> list[tuple[str, str | None, str]]:
        return [(slot, pid, self.decided_by[slot][i]) for slot, ids in self.slots.items() for i, pid in enumerate(ids)]


#: the slot name an ordered bench's entries carry in a decided lineup (after the starters, in bench order)
BENCH = "BENCH"


def order_bench(answer: object, bench: Sequence[str], values: Mapping[str, float]) -> tuple[list[tuple[str, str]],
                                                                                              list[str]]:
    """The bench in the order an answer gives (a list of the non-starters' ids): its legal entries in its order,
    then the players it left out, best ``values`` first, each tagged 'fallback'; and the problems."""
    problems: list[str] = []
    if answer is None:
        answer = []
    if not isinstance(answer, (list, tuple)):
        problems.append(f"bench is not a list of player ids (got {type(answer).__name__})")
        answer = []
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for pid in answer:
        pid = str(pid)
        if pid not in bench:
            problems.append(f"bench: {pid} is not a bench player (the roster's players who do not start)")
        elif pid in seen:
            problems.append(f"bench: {pid} is listed twice")
        else:
            out.append((pid, "agent"))
            seen.add(pid)
    rest = sorted((p for p in bench if p not in seen), key=lambda p: (-values.get(p, 0.0), p))
    if rest:
        problems.append(f"bench: {len(rest)} player(s) not placed in the order; put last, best projection first")
    return out + [(p, "fallback") for p in rest], problems


def substituted(decided: Sequence[Sequence], positions: Mapping[str, str], played: Mapping[str, bool],
                roster: Roster) -> list[tuple[str, str | None, str]]:
    """A decided lineup (starters, then its ordered bench as :data:`BENCH` entries) after the automatic
    substitutions (:func:`ffbench_lib.sport.formation.auto_subs`, the starters in position order): the final
    starters as (slot, player,
    decided_by), a substitute ``auto_sub``, slotted again in the roster's slots. A lineup with an empty slot
    stays as it is (it cannot be a legal formation to substitute in)."""
    starting = [tuple(e) for e in decided if e[0] != BENCH]
    bench = [e[1] for e in decided if e[0] == BENCH]
    if any(pid is None for _, pid, _ in starting):
        return starting
    # a team sheet's order: by position (FPL's goalkeeper, defenders, midfielders, forwards), as slotted within
    # one (which of two starters of a position makes way for a substitute does not change the final XI)
    rank = {pos: i for i, pos in enumerate(roster.positions)}
    sheet = sorted((pid for _, pid, _ in starting), key=lambda p: rank[positions[p]])
    final, subs = auto_subs(sheet, bench, positions, played, roster.ranges(), roster.starters)
    if not subs:
        return starting
    came_on = {new for _, new in subs}
    by = {pid: b for _, pid, b in starting}
    slots = fill_best({p: positions[p] for p in final}, {}, slot_counts(roster), slot_positions(roster), (),
                      roster.most)
    return [(slot, pid, "auto_sub" if pid in came_on else by[pid]) for slot, ids in slots.items() for pid in ids]


def best_lineup(positions: Mapping[str, str], values: Mapping[str, float], roster: Roster,
                exclude: Sequence[str] = ()) -> dict[str, list[str | None]]:
    """The value-maximising legal lineup under ``roster`` (:func:`ffbench_lib.sport.lineup.best_lineup`)."""
    return fill_best(positions, values, slot_counts(roster), slot_positions(roster), exclude, roster.most)


def legal_lineups(positions: Mapping[str, str], roster: Roster) -> Iterator[dict[str, list[str]]]:
    """Every legal lineup (the action set of ``set_lineup``; each slot's players in id order): each position
    slot takes players of its position, then each flex slot in turn takes eligible players left over."""
    counts, allowed = slot_counts(roster), slot_positions(roster)
    flex = [s for s in counts if s in roster.flex_slots()]
    fixed = [s for s in counts if s not in flex]
    pools = [combinations(sorted(p for p, pos in positions.items() if pos == s), counts[s]) for s in fixed]

    def fill(lineup: dict[str, list[str]], used: set[str], rest: list[str]) -> Iterator[dict[str, list[str]]]:
        if not rest:
            yield lineup
            return
        slot = rest[0]
        left = sorted(p for p, pos in positions.items() if p not in used and pos in allowed[slot])
        for pick in combinations(left, counts[slot]):
            yield from fill({**lineup, slot: list(pick)}, used | set(pick), rest[1:])

    for choice in product(*pools):
        for lineup in fill({s: list(c) for s, c in zip(fixed, choice)}, {p for c in choice for p in c}, flex):
            if not roster.most or not over_most(lineup, positions, roster):
                yield lineup


def over_most(lineup: Mapping[str, Sequence[str | None]], positions: Mapping[str, str], roster: Roster) -> list[str]:
    """The positions a lineup starts more of than the roster's ``most`` allows (a formation), e.g. ['DEF']."""
    n: dict[str, int] = {}
    for ids in lineup.values():
        for p in ids:
            if p is not None:
                n[positions[p]] = n.get(positions[p], 0) + 1
    return [pos for pos, k in n.items() if k > roster.most.get(pos, k)]


def random_lineup(positions: Mapping[str, str], roster: Roster, rng: np.random.Generator) -> dict[str, list[str]]:
    """A lineup drawn uniformly from :func:`legal_lineups` without listing them: each slot in
    :func:`slot_counts` order (positions, then the flex slots narrow to wide) draws its players uniformly from
    the eligible players left. Uniform because every draw leaves the same number of candidates for each later
    slot: a position draw leaves a fixed count of each position, and a flex draw takes players every wider
    flex slot could also take (FLEX's positions are within SUPERFLEX's), so a wider slot's pool shrinks by the
    same number whichever players were drawn. Each legal lineup thus has the same probability."""
    if roster.most:  # a formation: the draw below is not uniform under most
        drawn = _random_formation(positions, roster, rng)
        if drawn is not None:
            return drawn
    out: dict[str, list[str]] = {}
    used: set[str] = set()
    counts = slot_counts(roster)
    for slot, ok in slot_positions(roster).items():
        n = counts[slot]
        pool = sorted(p for p, pos in positions.items() if p not in used and pos in ok)
        out[slot] = sorted(pool[i] for i in rng.choice(len(pool), size=min(n, len(pool)), replace=False))
        used.update(out[slot])
    return out


def _random_formation(positions: Mapping[str, str], roster: Roster,
                      rng: np.random.Generator) -> dict[str, list[str]] | None:
    """:func:`random_lineup` under a formation with one flex slot (soccer's FLEX of outfield players), uniform over
    :func:`legal_lineups` without listing them: the flex slot's make-up (how many of each position, within
    ``most``) is drawn with probability in proportion to its number of lineups, the product over positions of
    C(players left after the position's slots, those in FLEX), every other factor being the same for each
    make-up; then each position's slot players and FLEX players are a uniform draw of its players, split in
    order. None (list them instead) for other rosters, or one that cannot fill its slots."""
    flex = roster.flex_slots()
    counts = slot_counts(roster)
    if len(flex) != 1 or any(p not in roster.slots for ps in flex.values() for p in ps):
        return None
    (slot, takes), = flex.items()
    pools = {pos: sorted(p for p, q in positions.items() if q == pos) for pos in roster.slots}
    spare = {pos: len(pools[pos]) - roster.starting(pos) for pos in pools}
    if any(n < 0 for n in spare.values()):
        return None
    room = {pos: min(spare[pos], roster.most.get(pos, spare[pos]) - roster.starting(pos)) for pos in takes}
    makeups, weights = [], []

    def spread(i: int, left: int, chosen: tuple[int, ...]) -> None:
        if i == len(takes):
            if left == 0:
                makeups.append(chosen)
                weights.append(math.prod(math.comb(spare[p], k) for p, k in zip(takes, chosen)))
            return
        for k in range(min(left, room[takes[i]]) + 1):
            spread(i + 1, left - k, (*chosen, k))

    spread(0, counts.get(slot, 0), ())
    total = sum(weights)
    if not total:
        return None
    pick = makeups[int(np.searchsorted(np.cumsum(weights), rng.integers(total), side="right"))]
    in_flex = dict(zip(takes, pick))
    out: dict[str, list[str]] = {}
    flex_ids: list[str] = []
    for pos in roster.slots:
        n, k = roster.starting(pos), in_flex.get(pos, 0)
        drawn = [pools[pos][i] for i in rng.permutation(len(pools[pos]))[:n + k]]
        if n:
            out[pos] = sorted(drawn[:n])
        flex_ids += drawn[n:]
    if counts.get(slot):
        out[slot] = sorted(flex_ids)
    return {s: out[s] for s in counts}


def validate_and_repair(answer: object, positions: Mapping[str, str], values: Mapping[str, float],
                        roster: Roster) -> LineupResult:
    """Keep every legal slot assignment of ``answer`` (``{slot: [ids]}``) and fill the rest with the best
    remaining players by ``values`` (projections). Each repaired entry is tagged 'fallback' with a reason."""
    counts = slot_counts(roster)
    problems: list[str] = []
    if not isinstance(answer, Mapping):
        problems.append(f"lineup is not a mapping of slot -> player ids (got {type(answer).__name__})")
        answer = {}
    unknown = [s for s in answer if s not in counts]
    if unknown:
        problems.append(f"unknown slot(s) {unknown}; slots are {list(counts)}")
    if roster.most:
        answer = _formation_answer(answer, counts, roster)
    room = {pos: n - counts.get(pos, 0) for pos, n in roster.most.items()}  # a formation's room in the flex slots
    flex = roster.flex_slots()
    kept: dict[str, list[str]] = {s: [] for s in counts}
    used: set[str] = set()
    for slot in counts:
        ids = answer.get(slot, [])
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, (list, tuple)):
            problems.append(f"{slot}: expected a list of player ids")
            continue
        if len(ids) > counts[slot]:
            problems.append(f"{slot}: {len(ids)} players for {counts[slot]} slot(s); extra ignored")
        for pid in list(ids)[: counts[slot]]:
            pid = str(pid)
            if pid not in positions:
                problems.append(f"{slot}: {pid} is not on the roster")
            elif pid in used:
                problems.append(f"{slot}: {pid} is already in the lineup")
            elif not eligible(slot, positions[pid], roster):
                problems.append(f"{slot}: {pid} is a {positions[pid]}, not eligible")
            elif slot in flex and room.get(positions[pid], 1) <= 0:
                problems.append(f"{slot}: {pid} would start more {positions[pid]} than the "
                                f"{roster.most[positions[pid]]} allowed")
            else:
                kept[slot].append(pid)
                used.add(pid)
                if slot in flex and positions[pid] in room:
                    room[positions[pid]] -= 1
        if len(ids) < counts[slot]:
            problems.append(f"{slot}: {counts[slot] - len(ids)} slot(s) left empty")
    slots: dict[str, list[str | None]] = {}
    decided: dict[str, list[str]] = {}
    # fill what is missing: position slots first, then the flex slots narrow to wide, each with the best
    # remaining eligible players (optimal for the open slots, as in best_lineup)
    for slot in counts:
        slots[slot] = list(kept[slot])
        decided[slot] = ["agent"] * len(kept[slot])
    for slot in counts:
        need = counts[slot] - len(slots[slot])
        if need <= 0:
            continue
        pool = sorted((p for p, pos in positions.items() if p not in used and eligible(slot, pos, roster)),
                      key=lambda p: (-values.get(p, 0.0), p))
        if slot in flex and room:
            fill = []
            for p in pool:
                if len(fill) < need and room.get(positions[p], 1) > 0:
                    fill.append(p)
                    if positions[p] in room:
                        room[positions[p]] -= 1
        else:
            fill = pool[:need]
        used.update(fill)
        slots[slot] += fill + [None] * (need - len(fill))
        decided[slot] += ["fallback"] * need
    return LineupResult(slots=slots, decided_by=decided, problems=problems)


def _formation_answer(answer: Mapping, counts: Mapping[str, int], roster: Roster) -> dict:
    """A formation's answer may list every starter under his position (``{"DEF": [5 ids], ...}``): the players
    beyond a position's own slots go to the flex slots that take the position, narrow to wide, while they have
    room (what the answer lists there first keeps its place)."""
    out = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in answer.items()}
    flex = roster.flex_slots()
    for pos, ids in list(out.items()):
        if pos in flex or pos not in counts or not isinstance(ids, list) or len(ids) <= counts[pos]:
            continue
        extra = ids[counts[pos]:]
        out[pos] = ids[:counts[pos]]
        for slot, takes in flex.items():
            if pos not in takes:
                continue
            have = out.get(slot, [])
            have = have if isinstance(have, list) else [have]
            n = max(0, counts[slot] - len(have))
            out[slot], extra = have + extra[:n], extra[n:]
        if extra:
            out[pos] += extra  # no flex room: reported as extra players of the slot
    return out
