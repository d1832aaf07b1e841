"""Formations (least and most starters per position) and automatic substitutions from an ordered bench (issue #28),
against brute force on random squads."""
import random
from itertools import combinations

import pytest

from ffbench_lib.sport.formation import auto_subs, best_formation, formation_problem
from ffbench_lib.sport.lineup import best_lineup

FPL = {"GK": (1, 1), "DEF": (3, 5), "MID": (2, 5), "FWD": (1, 3)}
SQUAD = {"GK": 2, "DEF": 5, "MID": 5, "FWD": 3}


def squad(rng):
    positions = {f"{pos}{i}": pos for pos, n in SQUAD.items() for i in range(n)}
    values = {p: float(rng.choice([-2, -1, 0, 1, 2, 2, 3, 5, 6, 8, 12])) for p in positions}  # ties, negatives
    return positions, values


def counts(ids, positions):
    out = {}
    for p in ids:
        out[positions[p]] = out.get(positions[p], 0) + 1
    return out


def test_the_best_formation_is_the_best_legal_eleven_by_brute_force():
    rng = random.Random(7)
    for _ in range(60):
        positions, values = squad(rng)
        best = max(sum(values[p] for p in xi) for xi in combinations(sorted(positions), 11)
                   if formation_problem(counts(xi, positions), FPL, 11) is None)
        got = best_formation(positions, values, FPL, 11)
        assert formation_problem(counts(got, positions), FPL, 11) is None
        assert sum(values[p] for p in got) == best


def test_fixed_slots_are_the_formation_whose_least_is_its_most():
    rng = random.Random(3)
    fixed = {"QB": (1, 1), "RB": (2, 2), "WR": (2, 2), "TE": (1, 1)}
    for _ in range(30):
        positions = {f"{pos}{i}": pos for pos, n in {"QB": 2, "RB": 4, "WR": 4, "TE": 2}.items() for i in range(n)}
        values = {p: float(rng.randint(0, 20)) for p in positions}
        slots = best_lineup(positions, values, {k: lo for k, (lo, _) in fixed.items()},
                            {k: frozenset([k]) for k in fixed})
        assert set(best_formation(positions, values, fixed, 6)) == {p for ids in slots.values() for p in ids}


def test_a_roster_that_cannot_fill_the_formation_is_an_error():
    positions = {"g": "GK", "d1": "DEF", "d2": "DEF", "m1": "MID", "m2": "MID", "f": "FWD"}
    with pytest.raises(ValueError, match="the formation needs 3 DEF starting; the roster has 2"):
        best_formation(positions, {}, FPL, 11)
    assert formation_problem({"GK": 1, "DEF": 6, "MID": 3, "FWD": 1}, FPL, 11) == "6 DEF starting, allowed 3-5"
    assert formation_problem({"GK": 1, "DEF": 5, "MID": 5}, FPL, 11) == "0 FWD starting, allowed 1-3"
    assert formation_problem({"GK": 1, "DEF": 4, "MID": 4, "FWD": 1}, FPL, 11) == "10 starters, not 11"


def test_substitutions_by_the_rules_on_examples():
    pos = {"g1": "GK", "g2": "GK", **{f"d{i}": "DEF" for i in range(5)}, **{f"m{i}": "MID" for i in range(5)},
           **{f"f{i}": "FWD" for i in range(3)}}
    xi = ["g1", "d0", "d1", "d2", "m0", "m1", "m2", "m3", "f0", "f1", "f2"]  # 3-4-3
    bench = ["g2", "m4", "d3", "d4"]
    played = {p: True for p in pos}
    # a defender out: the midfielder first on the bench would leave 2 defenders, so the next bench defender comes in
    final, subs = auto_subs(xi, bench, pos, {**played, "d1": False}, FPL, 11, "GK")
    assert subs == [("d1", "d3")] and final[2] == "d3"
    # a forward out: the first bench outfielder who played, the midfielder (3-5-2 is legal)
    assert auto_subs(xi, bench, pos, {**played, "f0": False}, FPL, 11, "GK")[1] == [("f0", "m4")]
    # a bench player who did not play is passed over; the goalkeeper only by the bench goalkeeper
    assert auto_subs(xi, bench, pos, {**played, "f0": False, "m4": False}, FPL, 11, "GK")[1] == [("f0", "d3")]
    assert auto_subs(xi, bench, pos, {**played, "g1": False}, FPL, 11, "GK")[1] == [("g1", "g2")]
    assert auto_subs(xi, bench, pos, {**played, "g1": False, "g2": False}, FPL, 11, "GK") == (xi, [])
    # two out, in the lineup's order, each taking the first bench player left who fits
    assert auto_subs(xi, bench, pos, {**played, "m0": False, "f1": False}, FPL, 11, "GK")[1] == [("m0", "m4"),
                                                                                          ("f1", "d3")]
    # nobody on the bench played: the starter stays
    nobody = {**played, "f2": False, "m4": False, "d3": False, "d4": False}
    assert auto_subs(xi, bench, pos, nobody, FPL, 11, "GK") == (xi, [])


def _reference(starting, bench, pos, played):
    """The rule, written again another way: recursively, one absent starter at a time."""
    absent = [p for p in starting if not played[p]]

    def go(final, absent, left):
        if not absent:
            return final
        out, rest = absent[0], absent[1:]
        for i, cand in enumerate(left):
            same_kind = (pos[out] == "GK") == (pos[cand] == "GK")
            trial = [cand if p == out else p for p in final]
            c = counts(trial, pos)
            legal = all(lo <= c.get(k, 0) <= hi for k, (lo, hi) in FPL.items())
            if played[cand] and same_kind and legal:
                return go(trial, rest, left[:i] + left[i + 1:])
        return go(final, rest, left)

    return go(list(starting), absent, list(bench))


def test_substitutions_against_the_rule_written_again_on_random_squads():
    rng = random.Random(11)
    subbed = 0
    for _ in range(500):
        positions, values = squad(rng)
        xi = best_formation(positions, values, FPL, 11)
        rest = [p for p in positions if p not in xi]
        bench = sorted(p for p in rest if positions[p] == "GK") + rng.sample(
            [p for p in rest if positions[p] != "GK"], k=len(rest) - 1)
        if rng.random() < 0.3:  # the goalkeeper anywhere on the bench: only the keeper rule places him
            rng.shuffle(bench)
        played = {p: rng.random() < 0.8 for p in positions}
        final, subs = auto_subs(xi, bench, positions, played, FPL, 11, "GK")
        assert final == _reference(xi, bench, positions, played)
        assert formation_problem(counts(final, positions), FPL, 11) is None
        assert all(played[b] and b in bench for _, b in subs) and len({b for _, b in subs}) == len(subs)
        subbed += len(subs)
    assert subbed > 200


def test_bad_lineups_and_values_are_errors_never_wrong_substitutions():
    pos = {"g1": "GK", "g2": "GK", **{f"d{i}": "DEF" for i in range(5)}, **{f"m{i}": "MID" for i in range(5)},
           **{f"f{i}": "FWD" for i in range(3)}}
    xi = ["g1", "d0", "d1", "d2", "m0", "m1", "m2", "m3", "f0", "f1", "f2"]
    played = {p: True for p in pos}
    with pytest.raises(ValueError, match="a player is twice among the starters and the bench"):
        auto_subs(xi, ["m0", "g2", "m4"], pos, {**played, "m1": False}, FPL, 11, "GK")
    with pytest.raises(ValueError, match="not a legal formation: 10 starters, not 11"):
        auto_subs(xi[:-1], ["g2", "m4"], pos, played, FPL, 11, "GK")
    with pytest.raises(ValueError, match="not a legal formation: 2 GK starting, allowed 1-1"):
        auto_subs(["g2", *xi[:-1]], ["m4", "d3"], pos, played, FPL, 11, "GK")
    with pytest.raises(ValueError, match="player zz has no position"):
        auto_subs(xi, ["zz"], pos, played, FPL, 11, "GK")
    with pytest.raises(ValueError, match="no formation of 5 starters fits"):
        best_formation(pos, {}, FPL, 5)
    with pytest.raises(ValueError, match="player g1's value is nan, not a finite number"):
        best_formation(pos, {"g1": float("nan"), "g2": 5.0}, FPL, 11)
    values = {p: float(i) for i, p in enumerate(sorted(pos))}
    got = best_formation(pos, values, FPL, 11)
    assert got == sorted(got, key=lambda p: -values[p])  # best first


def test_a_random_formation_lineup_is_uniform_over_the_legal_ones():
    """The random bot's lineup under a formation (FPL's FLEX with most starters per position) is drawn without
    listing the lineups, yet uniformly over every legal one: each appears, and a chi-square test of the counts
    does not reject uniformity (seeded: the same counts every run)."""
    from collections import Counter

    import numpy as np
    from scipy.stats import chisquare

    from ffbench_lib.config.load import parse_config
    from ffbench_lib.game.rules.lineup import legal_lineups, random_lineup

    teams = [{"name": n, "agent": {"kind": "bot", "strategy": "random"}} for n in "ab"]
    roster = parse_config({"sport": "fpl", "teams": teams}).roster
    squad = {**{f"g{i}": "GK" for i in range(2)}, **{f"d{i}": "DEF" for i in range(4)},
             **{f"m{i}": "MID" for i in range(5)}, **{f"f{i}": "FWD" for i in range(2)}}
    key = lambda lineup: tuple((slot, tuple(ids)) for slot, ids in lineup.items())  # noqa: E731
    every = [key(x) for x in legal_lineups(squad, roster)]
    assert len(every) == len(set(every)) == 800
    rng = np.random.default_rng(7)
    counts = Counter(key(random_lineup(squad, roster, rng)) for _ in range(20 * len(every)))
    assert set(counts) == set(every)
    assert chisquare([counts[x] for x in every]).pvalue > 0.01
