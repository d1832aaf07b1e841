"""Fantasy scoring: presets and one vectorised points function.

A scoring rule is a mapping from canonical stat column (see ``data.schema``) to points per unit, plus optional
*tiers* (``{stat: [[upto, points], ...]}``: the points of the first tier whose inclusive upper bound holds the
value; the last bound is None). Points are a dot product over the stats table plus the tier points of rows that
have the stat (a tier never scores a row whose stat is missing), so any source in the canonical schema is scored
identically.

Each stat belongs to stat groups (:data:`STAT_GROUPS`: offense, kicking, defense; ``Sport.position_stat_groups``
says which positions score which group): a league's resolved rules keep only the stats of its positions' groups,
so a league without kickers or team defenses scores, shows and caches exactly the offensive rules.

Kicker and defense rules of the ``ppr``, ``half_ppr`` and ``standard`` presets (``ffbench_v1`` has none):
field goals made 0-39 yards 3, 40-49 4, 50+ 5; extra point made 1; missed field goal (any distance) or extra
point -1 (a blocked kick is not a miss in nflverse's columns); defense sack 1, interception 2, fumble recovered
2, defensive or return touchdown 6, safety 2, blocked kick 2; points allowed 0: 10, 1-6: 7, 7-13: 4, 14-20: 1,
21-27: 0, 28-34: -1, 35+: -4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import numpy as np
import pandas as pd

#: The nflverse ``fantasy_points_ppr`` formula (checked against every legacy weekly row 2021-2024).
PPR: dict[str, float] = {
    "passing_yards": 0.04,
    "passing_tds": 4.0,
    "passing_interceptions": -2.0,
    "rushing_yards": 0.1,
    "rushing_tds": 6.0,
    "receiving_yards": 0.1,
    "receiving_tds": 6.0,
    "receptions": 1.0,
    "fumbles_lost": -2.0,
    "passing_2pt_conversions": 2.0,
    "rushing_2pt_conversions": 2.0,
    "receiving_2pt_conversions": 2.0,
    "special_teams_tds": 6.0,
}

#: Field-goal distance bands (nflverse ``stats_player`` names) and extra points.
FG_BANDS = ("0_19", "20_29", "30_39", "40_49", "50_59", "60_")
KICKING_STATS: tuple[str, ...] = (*(f"fg_made_{b}" for b in FG_BANDS), *(f"fg_missed_{b}" for b in FG_BANDS),
                                  "pat_made", "pat_missed")
#: Team-defense stats (see ``data.schema`` for their definitions); ``special_teams_tds`` is shared with players.
DEFENSE_STATS: tuple[str, ...] = ("def_sacks", "def_interceptions", "def_fumbles_recovered", "def_tds",
                                  "def_safeties", "def_blocked_kicks", "special_teams_tds", "points_allowed")

#: Standard kicker rules (see the module docstring).
KICKING: dict[str, float] = {
    "fg_made_0_19": 3.0, "fg_made_20_29": 3.0, "fg_made_30_39": 3.0, "fg_made_40_49": 4.0,
    "fg_made_50_59": 5.0, "fg_made_60_": 5.0, **{f"fg_missed_{b}": -1.0 for b in FG_BANDS},
    "pat_made": 1.0, "pat_missed": -1.0,
}
#: Standard team-defense rules (``special_teams_tds`` already scores 6 in the offensive presets).
DEFENSE: dict[str, float] = {
    "def_sacks": 1.0, "def_interceptions": 2.0, "def_fumbles_recovered": 2.0, "def_tds": 6.0,
    "def_safeties": 2.0, "def_blocked_kicks": 2.0, "special_teams_tds": 6.0,
}
#: Standard points-allowed tiers: [inclusive upper bound (None: no bound), points].
POINTS_ALLOWED_TIERS: list[list] = [[0, 10.0], [6, 7.0], [13, 4.0], [20, 1.0], [27, 0.0], [34, -1.0], [None, -4.0]]

PRESETS: dict[str, dict[str, float]] = {
    "ppr": PPR,
    "half_ppr": {**PPR, "receptions": 0.5},
    "standard": {**PPR, "receptions": 0.0},
    # The earlier FantasyFootballBench config.json: no 2-pt conversions, no special-teams TDs.
    "ffbench_v1": {
        k: v
        for k, v in PPR.items()
        if k not in {"passing_2pt_conversions", "rushing_2pt_conversions",
                     "receiving_2pt_conversions", "special_teams_tds"}
    },
}

#: The offensive weights of each preset above (what every preset scored before K and DST) get these K and DST
#: rules in the presets that have them; ``PRESETS`` itself stays offensive (prompts name a preset by it).
PRESET_EXTRAS: dict[str, tuple[dict[str, float], dict[str, list]]] = {
    name: ({**KICKING, **DEFENSE}, {"points_allowed": POINTS_ALLOWED_TIERS}) for name in ("ppr", "half_ppr", "standard")
}

#: Stats the offensive positions score (the canonical schema's counting stats).
OFFENSE_STATS: tuple[str, ...] = (
    "completions", "attempts", "passing_yards", "passing_tds", "passing_interceptions",
    "sacks_suffered", "passing_2pt_conversions", "carries", "rushing_yards", "rushing_tds",
    "rushing_2pt_conversions", "receptions", "targets", "receiving_yards", "receiving_tds",
    "receiving_2pt_conversions", "fumbles_lost", "special_teams_tds",
)
#: Stat groups; a league keeps a rule only when one of its positions scores a group that has the stat.
GROUPS: dict[str, tuple[str, ...]] = {"offense": OFFENSE_STATS, "kicking": KICKING_STATS, "defense": DEFENSE_STATS}
#: stat -> the groups that have it (``special_teams_tds``: offense and defense)
STAT_GROUPS: dict[str, tuple[str, ...]] = {}
for _group, _stats in GROUPS.items():
    for _stat in _stats:
        STAT_GROUPS[_stat] = (*STAT_GROUPS.get(_stat, ()), _group)
#: Stat columns a scoring rule may weight or tier.
SCORABLE_STATS: tuple[str, ...] = tuple(STAT_GROUPS)


def weight_problem(stat: object, weight: object) -> str | None:
    """Why ``stat: weight`` cannot be a scoring rule (unknown stat, or not a finite number), else None.
    A NaN weight would make every score NaN and every game a tie, silently."""
    if stat not in SCORABLE_STATS:
        return f"unknown stat {stat!r}; allowed: {', '.join(SCORABLE_STATS)}"
    try:
        ok = math.isfinite(float(weight))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        ok = False
    return None if ok else f"{stat} must be a finite number of points per unit (got {weight!r})"


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` as floats, or ValueError naming the first bad entry (``scoring.weights.<stat>: ...``)."""
    for stat, w in weights.items():
        problem = weight_problem(stat, w)
        if problem:
            raise ValueError(f"scoring.weights.{stat}: {problem}")
    return {stat: float(w) for stat, w in weights.items()}


#: Stats a tiered rule may score: a tier adds points to every row that has the stat, so only stats that exist on
#: team-defense rows alone (every other row has no value) may be tiered.
TIERABLE_STATS: tuple[str, ...] = ("points_allowed",)
#: Stats that may be negative (a loss of yards); every other stat (counts, points allowed) is 0 or more.
MAY_BE_NEGATIVE = frozenset({"passing_yards", "rushing_yards", "receiving_yards"})


def lowest_value(stat: str) -> float:
    """The lowest value ``stat`` can have (the data checks refuse a negative count, and a tier below it never
    applies)."""
    return -math.inf if stat in MAY_BE_NEGATIVE else 0.0


def tiers_problem(stat: object, tiers: object) -> str | None:
    """Why ``stat: tiers`` cannot be a tiered rule, else None. Tiers are ``[[upto, points], ...]`` with
    ascending upper bounds and a last bound of null, so every value falls in exactly one tier."""
    if stat not in SCORABLE_STATS:
        return f"unknown stat {stat!r}; allowed: {', '.join(SCORABLE_STATS)}"
    if stat not in TIERABLE_STATS:  # a player's row holds 0, not "no value", for stats other positions have
        return (f"tiers are for team-level stats that no player row has ({', '.join(TIERABLE_STATS)}); score "
                f"{stat} with scoring.weights")
    return tier_list_problem(stat, tiers)


def tier_list_problem(stat: str, tiers: object) -> str | None:
    """Why ``tiers`` cannot be the tiers of ``stat`` (whichever stats a sport tiers), else None: their shape,
    ascending bounds, the last null, none below the lowest value ``stat`` can have, finite points."""
    if not isinstance(tiers, (list, tuple)) or not tiers:
        return "give a list of [upto, points] pairs, e.g. [[0, 10], [6, 7], [null, -4]]"
    prev = None
    for i, tier in enumerate(tiers):
        if not isinstance(tier, (list, tuple)) or len(tier) != 2:
            return f"tier {i} must be a pair [upto, points] (got {tier!r})"
        upto, pts = tier
        last = i == len(tiers) - 1
        if upto is None and not last:
            return f"tier {i}: only the last tier may have no upper bound (null)"
        if last and upto is not None:
            return f"the last tier's upto must be null (no bound), so every value has a tier (got {upto!r})"
        if upto is not None:
            if isinstance(upto, bool) or not isinstance(upto, (int, float)) or not math.isfinite(upto):
                return f"tier {i}: upto must be a number or null (got {upto!r})"
            if prev is not None and upto <= prev:
                return f"tier {i}: upper bounds must ascend ({upto!r} after {prev!r})"
            if upto < lowest_value(stat):
                return (f"tier {i}: upto {upto!r} is below {lowest_value(stat):g}, the lowest {stat} can "
                        f"be, so the tier can never apply; give it an upto of {lowest_value(stat):g} or more, "
                        "e.g. [[0, 10], [6, 7], [null, -4]]")
            prev = upto
        if isinstance(pts, bool) or not isinstance(pts, (int, float)) or not math.isfinite(pts):
            return f"tier {i}: points must be a finite number (got {pts!r})"
    return None


def check_tiers(tiers: Mapping[str, object] | None) -> dict[str, list[list]]:
    """``tiers`` with float points, or ValueError naming the first bad entry (``scoring.tiers.<stat>: ...``)."""
    out = {}
    for stat, t in (tiers or {}).items():
        problem = tiers_problem(stat, t)
        if problem:
            raise ValueError(f"scoring.tiers.{stat}: {problem}")
        out[stat] = [[None if u is None else float(u), float(p)] for u, p in t]  # type: ignore[union-attr]
    return out


def _for_groups(rules: Mapping[str, object], groups) -> dict:
    """The rules of stats of ``groups`` (in the rules' own order)."""
    return {s: v for s, v in rules.items() if set(groups) & set(STAT_GROUPS.get(s, ()))}


def resolve_weights(preset: str | None = "ppr", weights: Mapping[str, float] | None = None,
                    groups=None) -> dict[str, float]:
    """Preset weights, overridden or extended by explicit ``weights``; with stat ``groups`` (a league's), the
    preset's kicking and defense rules are added and only the stats of those groups kept (None: every explicit
    weight over the preset's offensive rules, as always)."""
    if preset is None and not weights:
        raise ValueError("scoring: give a preset (ppr, half_ppr, standard, ffbench_v1) or explicit weights")
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"scoring.preset: unknown preset {preset!r}; allowed: {', '.join(PRESETS)}")
    base = dict(PRESETS[preset]) if preset else {}
    if groups is not None:
        base.update(PRESET_EXTRAS.get(preset, ({}, {}))[0] if preset else {})
    out = {**base, **check_weights(weights or {})}
    return out if groups is None else _for_groups(out, groups)


def resolve_tiers(preset: str | None = "ppr", tiers: Mapping[str, object] | None = None,
                  groups=None) -> dict[str, list[list]]:
    """The preset's tiers (for stat ``groups``), overridden or extended by explicit ``tiers``."""
    base = dict(PRESET_EXTRAS.get(preset, ({}, {}))[1]) if preset and groups is not None else {}
    out = {**check_tiers(base), **check_tiers(tiers)}
    return out if groups is None else _for_groups(out, groups)


def preset_name(weights: Mapping[str, float], tiers: Mapping[str, object] | None = None) -> str | None:
    """The preset these rules are (for whatever stat groups they cover), else None."""
    nonzero = {k: v for k, v in weights.items() if v}
    # the groups these rules are for: those of stats only one group has (special_teams_tds is shared)
    groups = {g for s in [*nonzero, *(tiers or {})] for g in STAT_GROUPS.get(s, ()) if len(STAT_GROUPS[s]) == 1}
    groups = groups or {"offense"}
    for name in PRESETS:
        want = {k: v for k, v in resolve_weights(name, groups=groups).items() if v}
        want_tiers = resolve_tiers(name, groups=groups)
        if want == nonzero and check_tiers(tiers) == want_tiers:
            return name
    return None


def fantasy_points(stats: pd.DataFrame, weights: Mapping[str, float],
                   tiers: Mapping[str, list] | None = None,
                   every: Mapping[str, tuple[float, float]] | None = None) -> pd.Series:
    """Points per row, rounded to 1/100 like nflverse. Missing stat columns or NaNs count as zero for weights;
    a tier scores only rows that have the stat (so offensive rows never get points-allowed points). ``every``
    (``{stat: (n, points)}``) scores ``points`` for each whole ``n`` of the stat (FPL: a point per 3 saves)."""
    total = np.zeros(len(stats), dtype="float64")
    for stat, (n, pts) in (every or {}).items():
        if stat in stats.columns:
            total += pts * np.floor(pd.to_numeric(stats[stat], errors="coerce").fillna(0.0).to_numpy("float64") / n)
    for stat, w in weights.items():
        if w == 0 or stat not in stats.columns:
            continue
        total += w * pd.to_numeric(stats[stat], errors="coerce").fillna(0.0).to_numpy(dtype="float64")
    for stat, rule in (tiers or {}).items():
        if stat not in stats.columns:
            continue
        v = pd.to_numeric(stats[stat], errors="coerce").to_numpy(dtype="float64")
        bounds = np.array([np.inf if u is None else float(u) for u, _ in rule])
        pts = np.array([float(p) for _, p in rule])
        idx = np.searchsorted(bounds, v, side="left")  # first tier with v <= upto
        has = ~np.isnan(v)
        total[has] += pts[np.minimum(idx[has], len(pts) - 1)]
    return pd.Series(np.round(total, 2), index=stats.index, name="fantasy_points")


@dataclass(frozen=True)
class Rules:
    """One position's scoring rules: per-unit ``weights``, ``tiers`` and ``every`` (see :func:`fantasy_points`),
    checked and frozen when made (a rule shared by several positions cannot be changed through one of them)."""

    weights: Mapping[str, float]
    tiers: Mapping[str, list] = field(default_factory=dict)
    every: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for stat, w in self.weights.items():
            if not _finite(w):
                raise ValueError(f"weights.{stat} must be a finite number of points per unit (got {w!r})")
        for stat, (n, pts) in self.every.items():
            if not (_finite(n) and float(n).is_integer() and n > 0 and _finite(pts)):
                raise ValueError(f"every.{stat} must be [n, points] with n a whole number above 0 and finite points "
                                 f"(got [{n!r}, {pts!r}])")
        for stat, t in self.tiers.items():
            problem = tier_list_problem(stat, t)
            if problem:
                raise ValueError(f"tiers.{stat} must be [[upto, points], ...] with ascending finite bounds, the last "
                                 f"null, and finite points: {problem}")
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "tiers", MappingProxyType({k: tuple(tuple(x) for x in v) for k, v in self.tiers.items()}))
        object.__setattr__(self, "every", MappingProxyType({k: tuple(v) for k, v in self.every.items()}))


    def as_dict(self) -> dict[str, dict]:
        """The rules as plain JSON data (a view's): weights, tiers ``[[upto, points], ...]``, every ``[n, points]``."""
        return {"weights": dict(self.weights), "tiers": {k: [list(t) for t in v] for k, v in self.tiers.items()},
                "every": {k: list(v) for k, v in self.every.items()}}


def _finite(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def position_points(stats: pd.DataFrame, rules: Mapping[str, Rules], position: str = "position") -> pd.Series:
    """Points per row where each position scores by its own rules (a soccer goal is worth more from a defender);
    a row of a position without rules is an error, never 0 points."""
    unruled = sorted(set(stats[position].dropna()) - set(rules)) + (["(none)"] if stats[position].isna().any() else [])
    if unruled:
        raise ValueError(f"no scoring rules for position(s) {', '.join(map(str, unruled))}; "
                         f"the rules cover {', '.join(rules)}")
    out = pd.Series(0.0, index=stats.index, name="fantasy_points")
    for pos, r in rules.items():
        rows = (stats[position] == pos).to_numpy()
        if rows.any():
            out[rows] = fantasy_points(stats[rows], r.weights, r.tiers, r.every).to_numpy()
    return out
