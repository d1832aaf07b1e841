"""Built-in projections computed only from the past.

* :func:`preseason` - season projection from earlier seasons only: games-weighted per-game production
  (last season weighted 1.0, the one before 0.5), regressed toward a position baseline, times expected games;
  rookies get an empirical prior by position and NFL draft slot (fitted on earlier rookie classes).
* :func:`weekly` - in-season per-game projection for week *w* from the preseason per-game projection and
  the season's games through week *w-1* only.

Both take plain weekly tables whose ``fantasy_points`` are already under the league scoring.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ffbench_lib.sport import sport

#: the sport whose rookie priors and draft rounds these projections use (the data layer reads the NFL)
_SPORT = sport("nfl")

#: Games of evidence that count as much as the position baseline (shrinkage strength).
PRIOR_GAMES = 4.0
#: Weight of the season before last relative to last season.
OLDER_SEASON_WEIGHT = 0.5
#: Expected games for a healthy regular: blended with last season's games played.
TYPICAL_GAMES = 14.5
#: In-season: games of evidence the preseason per-game projection is worth.
INSEASON_PRIOR_GAMES = 3.0


def _round_bucket(draft_number: pd.Series) -> pd.Series:
    """The rookie bucket of each draft pick (NFL: 0 first round, pick <= 32; 1 rounds 2-3; 2 later or
    undrafted): the first bucket whose last pick (``Sport.rookie_bucket_picks``) is at or after it."""
    n = pd.to_numeric(draft_number, errors="coerce")
    bounds = _SPORT.rookie_bucket_picks
    return pd.Series(np.select([n <= b for b in bounds], range(len(bounds)), len(bounds)), index=draft_number.index)


def season_summary(weekly: pd.DataFrame) -> pd.DataFrame:
    """Per player: games with a stat line, points and per-game points under the league scoring."""
    g = weekly.groupby("player_id", as_index=False).agg(
        games=("week", "nunique"), points=("fantasy_points", "sum"),
        position=("position", "last"), team=("team", "last"), player_name=("player_name", "last"))
    g["ppg"] = g["points"] / g["games"].clip(lower=1)
    return g


def rookie_prior(history: list[tuple[pd.DataFrame, pd.DataFrame]]) -> dict[tuple[str, int], float]:
    """Mean first-season per-game points by (position, round bucket) over earlier rookie classes.

    ``history`` holds (rookies of season s, weekly of season s) pairs for seasons before the projected one;
    rookies who never recorded a stat count as zero-point 8-game seasons (they were drafted, not used).
    """
    prior = {(pos, b): v for pos, vals in _SPORT.rookie_fallback_ppg.items() for b, v in enumerate(vals)}
    rows = []
    for rookies, weekly in history:
        if rookies.empty:
            continue
        s = season_summary(weekly).set_index("player_id")
        r = rookies.assign(bucket=_round_bucket(rookies["draft_number"]).to_numpy())
        r["ppg"] = r["player_id"].map(s["ppg"]).fillna(0.0)
        rows.append(r[["position", "bucket", "ppg"]])
    if rows:
        fitted = pd.concat(rows).groupby(["position", "bucket"])["ppg"].agg(["mean", "size"])
        for (pos, b), row in fitted.iterrows():
            if row["size"] >= 5:
                prior[(pos, int(b))] = float(row["mean"])
    return prior


def preseason(last: pd.DataFrame, before_last: pd.DataFrame | None, rookies: pd.DataFrame,
              prior: dict[tuple[str, int], float], pool: pd.Series | None = None) -> pd.DataFrame:
    """Projected season points per player from seasons before the projected one.

    Returns ``player_id, proj_ppg, proj_games, proj_points`` for every veteran in ``last``/``before_last``
    (or in ``pool``) and every rookie.
    """
    s1 = season_summary(last).set_index("player_id")
    s2 = season_summary(before_last).set_index("player_id") if before_last is not None and len(before_last) else None
    ids = s1.index if s2 is None else s1.index.union(s2.index)
    df = pd.DataFrame(index=ids)
    df["position"] = s1["position"].reindex(ids)
    g1 = s1["games"].reindex(ids).fillna(0)
    p1 = s1["points"].reindex(ids).fillna(0)
    if s2 is not None:
        df["position"] = df["position"].fillna(s2["position"].reindex(ids))
        g2 = s2["games"].reindex(ids).fillna(0) * OLDER_SEASON_WEIGHT
        p2 = s2["points"].reindex(ids).fillna(0) * OLDER_SEASON_WEIGHT
    else:
        g2 = p2 = pd.Series(0.0, index=ids)
    evidence = g1 + g2
    ppg = (p1 + p2) / evidence.clip(lower=1e-9)
    # Position baseline: per-game production of a typical fantasy-relevant player at that position last season.
    base = s1[s1["games"] >= 4].groupby("position")["ppg"].median()
    baseline = pd.to_numeric(df["position"].map(base), errors="coerce").fillna(0.0).astype("float64")
    df["proj_ppg"] = (evidence * ppg + PRIOR_GAMES * baseline) / (evidence + PRIOR_GAMES)
    df["proj_games"] = np.clip(0.5 * g1.clip(upper=17) + 0.5 * TYPICAL_GAMES, 4, 17)
    # Veterans who did not play last season at all (injury, suspension) get a cautious games estimate.
    df.loc[g1 == 0, "proj_games"] = 10.0
    vets = df.reset_index(names="player_id")[["player_id", "position", "proj_ppg", "proj_games"]]

    r = rookies[~rookies["player_id"].isin(vets["player_id"])].copy()
    r["bucket"] = _round_bucket(r["draft_number"]).to_numpy()
    r["proj_ppg"] = [prior.get((p, int(b)), 0.0) for p, b in zip(r["position"], r["bucket"])]
    r["proj_games"] = 12.0
    out = pd.concat([vets, r[["player_id", "position", "proj_ppg", "proj_games"]]], ignore_index=True)
    out["proj_points"] = (out["proj_ppg"] * out["proj_games"]).round(2)
    return out[["player_id", "proj_ppg", "proj_games", "proj_points"]]


def weekly(season_weekly: pd.DataFrame, pre_ppg: pd.Series, weeks: int) -> pd.DataFrame:
    """In-season projection per player-week from data through week *w-1* only.

    ``pre_ppg`` is the preseason per-game projection indexed by player_id (players not in it start at 0).
    Returns ``week, player_id, proj_points_builtin, games_to_date``: for week w, a shrinkage of the
    season-to-date per-game points (weeks < w) toward ``pre_ppg``.
    """
    players = pre_ppg.index.union(pd.Index(season_weekly["player_id"].unique()))
    pts = season_weekly.pivot_table(index="player_id", columns="week", values="fantasy_points", aggfunc="sum")
    pts = pts.reindex(index=players, columns=range(1, weeks + 1))
    played = pts.notna().astype(float)
    # cumulative through week w-1: shift by one week so week w never sees itself
    cum_pts = pts.fillna(0).cumsum(axis=1).shift(1, axis=1).fillna(0)
    cum_g = played.cumsum(axis=1).shift(1, axis=1).fillna(0)
    prior = pre_ppg.reindex(players).fillna(0.0).to_numpy()[:, None]
    proj = (cum_pts.to_numpy() + INSEASON_PRIOR_GAMES * prior) / (cum_g.to_numpy() + INSEASON_PRIOR_GAMES)
    out = pd.DataFrame(proj, index=players, columns=range(1, weeks + 1)).round(2)
    long = out.stack().rename("proj_points_builtin").reset_index()
    long.columns = ["player_id", "week", "proj_points_builtin"]
    long["games_to_date"] = cum_g.stack().to_numpy().astype(int)
    return long[["week", "player_id", "proj_points_builtin", "games_to_date"]]


def accuracy(projected: pd.Series, actual: pd.Series) -> dict[str, float]:
    """Pearson and Spearman correlation and MAE of projected vs actual season points (aligned by index)."""
    from scipy import stats

    both = pd.concat([projected.rename("p"), actual.rename("a")], axis=1).dropna()
    if len(both) < 3:
        return {"n": len(both), "pearson": np.nan, "spearman": np.nan, "mae": np.nan}
    return {"n": len(both), "pearson": float(stats.pearsonr(both["p"], both["a"])[0]),
            "spearman": float(stats.spearmanr(both["p"], both["a"])[0]),
            "mae": float((both["p"] - both["a"]).abs().mean())}
