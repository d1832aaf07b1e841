"""Weekly matchups from the seed: fresh ``random`` pairings every week (as the earlier benchmark), or a
``round_robin`` (circle method over a seeded team order, repeated as needed)."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def make_schedule(teams: Sequence[str], weeks: int, kind: str, seed: int) -> dict[str, list[list[str]]]:
    teams = list(teams)
    n = len(teams)
    rng = np.random.default_rng([seed, 0x5C4E])
    out: dict[str, list[list[str]]] = {}
    if kind == "random":
        for w in range(1, weeks + 1):
            perm = [teams[i] for i in rng.permutation(n)]
            out[str(w)] = [[perm[i], perm[i + 1]] for i in range(0, n, 2)]
        return out
    if kind == "round_robin":
        order = [teams[i] for i in rng.permutation(n)]
        fixed, rot = order[0], order[1:]
        rounds = []
        for _ in range(n - 1):
            line = [fixed, *rot]
            rounds.append([[line[i], line[n - 1 - i]] for i in range(n // 2)])
            rot = rot[-1:] + rot[:-1]
        for w in range(1, weeks + 1):
            out[str(w)] = rounds[(w - 1) % len(rounds)]
        return out
    raise ValueError(f"schedule: unknown kind {kind!r}; allowed: random, round_robin")
