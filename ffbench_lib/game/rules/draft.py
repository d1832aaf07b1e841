"""Draft rules: order (random, fixed, rotate), snake pick sequence, legal positions, and validation/repair of
the draft answers (shortlist, then pick; or a queue)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ffbench_lib.config.league import Roster
from ffbench_lib.game.rules.roster import draft_pick_problem


def draft_order(teams: Sequence[str], policy: str, seed: int) -> list[str]:
    """Round-1 order. ``rotate`` shifts the config order by the seed, so seeds 0..n-1 give every team every
    slot exactly once; ``random`` is a seeded permutation; ``fixed`` is the config order."""
    teams = list(teams)
    n = len(teams)
    if policy == "fixed":
        return teams
    if policy == "rotate":
        k = seed % n
        return teams[n - k:] + teams[: n - k]  # team i drafts from slot (i + seed) mod n
    if policy == "random":
        rng = np.random.default_rng([seed, 0xD7AF])
        return [teams[i] for i in rng.permutation(n)]
    raise ValueError(f"draft.order: unknown policy {policy!r}")


def snake(order: Sequence[str], rounds: int) -> list[tuple[int, int, str]]:
    """(overall pick, round, team) for every pick; even rounds run in reverse."""
    out = []
    for r in range(1, rounds + 1):
        seq = order if r % 2 else list(reversed(order))
        out.extend((len(out) + 1, r, t) for t in seq)
    return out


def legal_positions(current: Sequence[str], roster: Roster, supply: Mapping[str, int] | None = None,
                    others_need: Mapping[str, int] | None = None) -> list[str]:
    """The positions a team holding ``current`` may draft now: its own roster rules (:func:`draft_pick_problem`),
    and, given the players of each position still available (``supply``) and what the other teams' starting
    slots of it still lack (``others_need``), a pick the team does not need for its own starting slots must leave
    enough for theirs (32 team defenses cannot fill 24 teams' slots if some take two)."""
    out = []
    for pos in roster.positions:
        if draft_pick_problem(list(current), pos, roster) is not None:
            continue
        if supply is not None:
            left = supply.get(pos, 0) - 1
            own_need = list(current).count(pos) < roster.starting(pos)
            if left < 0 or (not own_need and left < (others_need or {}).get(pos, 0)):
                continue
        out.append(pos)
    return out


def others_need(team: str, rosters: Mapping[str, Sequence[str]], position: Mapping[str, str],
                roster: Roster) -> dict[str, int]:
    """How many players of each position the starting slots of the teams other than ``team`` still lack."""
    starting = {pos: roster.starting(pos) for pos in roster.positions}
    need = dict.fromkeys(starting, 0)
    for t, ids in rosters.items():
        if t != team:
            held = Counter(map(position.__getitem__, ids))
            for pos, n in starting.items():
                need[pos] += max(0, n - held[pos])
    return need


def legal_players(cards: Iterable[dict[str, Any]], legal: Sequence[str]) -> list[dict[str, Any]]:
    """The players (view cards) a team may shortlist or pick now: those at a legal position. Bots choose only
    among these, so their draft answers pass :func:`validate_shortlist` and :func:`validate_pick`."""
    return [c for c in cards if c["pos"] in legal]


#: the problem of an id not in ``available`` (the shortlist's wording, kept: re-asks and cached answers hold it)
NOT_AVAILABLE = "is not an available player"


def validate_shortlist(answer: Any, available: Sequence[str], positions: Mapping[str, str], legal: Sequence[str],
                       size: int, key: str = "shortlist",
                       not_shown: str = NOT_AVAILABLE) -> tuple[list[str], list[str], bool]:
    """Keep the valid ids (available, legal position, distinct, at most ``size``). If none is usable, the
    repair is the ``size`` best legal players by preseason projection (``available`` is in that order).
    ``key``: the answer's list (a shortlist, or a draft queue: the same rule); ``not_shown``: the problem of an id
    not in ``available`` (a queue's board is not every available player). Returns (ids, problems, repaired)."""
    problems: list[str] = []
    ids = answer.get(key) if isinstance(answer, Mapping) else None
    if not isinstance(ids, (list, tuple)):
        problems.append(f"no '{key}' list of player ids in the answer")
        ids = []
    avail = set(available)
    kept: list[str] = []
    for pid in ids:
        pid = str(pid)
        if pid in kept:
            problems.append(f"{pid} listed twice")
        elif pid not in avail:
            problems.append(f"{pid} {not_shown}")
        elif positions[pid] not in legal:
            problems.append(f"{pid} is a {positions[pid]}; legal positions now: {list(legal)}")
        else:
            kept.append(pid)
    if len(kept) > size:
        problems.append(f"{len(kept)} players for a {key} of {size}; the first {size} kept")
        kept = kept[:size]
    if kept:
        return kept, problems, False
    fallback = [p for p in available if positions[p] in legal][:size]
    return fallback, problems or [f"empty {key}"], True


def validate_pick(answer: Any, shortlist: Sequence[str], positions: Mapping[str, str], legal: Sequence[str],
                  projection: Mapping[str, float]) -> tuple[str, list[str], bool]:
    """The pick must be one of the shortlisted players at a legal position; the repair is the shortlisted
    player with the best preseason projection. Returns (player_id, problems, repaired)."""
    pid = answer.get("player_id") if isinstance(answer, Mapping) else None
    if pid is not None and str(pid) in shortlist and positions[str(pid)] in legal:
        return str(pid), [], False
    problem = ("no 'player_id' in the answer" if pid is None else
               f"{pid} is not on the shortlist {list(shortlist)}" if str(pid) not in shortlist else
               f"{pid} is at an illegal position")
    best = sorted((p for p in shortlist if positions[p] in legal), key=lambda p: (-projection.get(p, 0.0), p))
    return (best[0] if best else ""), [problem], True


def first_pickable(queue: Sequence[str], available: Iterable[str], positions: Mapping[str, str],
                   legal: Sequence[str]) -> tuple[int, str] | None:
    """A queue's pick: (1-based position in the queue, player) of the first queued player still ``available`` and
    at a ``legal`` position now; None when the queue ran dry."""
    avail = set(available)
    for k, pid in enumerate(queue, start=1):
        if pid in avail and positions[pid] in legal:
            return k, pid
    return None
