"""Fantasy scoring: presets and one vectorised points function.

A scoring rule is a mapping from canonical stat column (see ``data.schema``) to points per unit.
Points are computed as a dot product over the stats table, so any source in the canonical
schema is scored identically.
"""
from __future__ import annotations

import math
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

#: Stat columns a scoring rule may weight (the canonical schema's counting stats).
SCORABLE_STATS: tuple[str, ...] = (
    "completions", "attempts", "passing_yards", "passing_tds", "passing_interceptions",
    "sacks_suffered", "passing_2pt_conversions", "carries", "rushing_yards", "rushing_tds",
    "rushing_2pt_conversions", "receptions", "targets", "receiving_yards", "receiving_tds",
    "receiving_2pt_conversions", "fumbles_lost", "special_teams_tds",
)


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


def resolve_weights(preset: str | None = "ppr", weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Preset weights, overridden or extended by explicit ``weights``."""
    if preset is None and not weights:
        raise ValueError("scoring: give a preset (ppr, half_ppr, standard, ffbench_v1) or explicit weights")
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"scoring.preset: unknown preset {preset!r}; allowed: {', '.join(PRESETS)}")
    return {**(dict(PRESETS[preset]) if preset else {}), **check_weights(weights or {})}


def fantasy_points(stats: pd.DataFrame, weights: Mapping[str, float]) -> pd.Series:
    """Points per row, rounded to 1/100 like nflverse. Missing stat columns or NaNs count as zero."""
    total = np.zeros(len(stats), dtype="float64")
    for stat, w in weights.items():
        if w == 0 or stat not in stats.columns:
            continue
        total += w * pd.to_numeric(stats[stat], errors="coerce").fillna(0.0).to_numpy(dtype="float64")
    return pd.Series(np.round(total, 2), index=stats.index, name="fantasy_points")
