"""Ratings across leagues: one Bradley-Terry strength per agent from every weekly head-to-head matchup of every
run, with intervals over runs, a leaderboard and cost-effectiveness from the ledger.

Why Bradley-Terry: a season's win rate depends on which nine opponents a league happened to hold; a pairwise
model rates each agent against whoever it actually met, so leagues of different line-ups add up to one scale.

* Games: each regular-season pairing once per week (``matchups`` holds the regular season only; playoff games
  are in ``playoffs`` and left out: who plays them depends on the regular season, so counting them would count
  the same strength twice and give the best teams more games). Pairings of two teams of one agent are left out.
* Ties: half a win to each side (a tie adds 0.5 to both cells of the win matrix; the likelihood is then
  ``0.5 log p_ab + 0.5 log p_ba``).
* Regularisation: :data:`PRIOR_TIES` virtual tied games between every pair of agents in a fit, so an unbeaten
  (or winless) agent keeps a finite strength; against the hundreds of real games of a few runs it moves nothing.
* Fit: choix's ILSR on the dense win matrix (the exact maximum-likelihood estimate, ~2 ms for 10 agents).
* Scale: Elo-like, ``1500 + 400/ln(10) * theta`` with theta centred to mean 0 over the agents: 400 points
  apart = 10:1 odds of winning a week.
* Intervals over runs (the unit of evidence; weeks of one league are not independent): per agent by its number
  of runs, as :func:`stats.ci_method` decides: 2 to 19 runs the leave-one-run-out jackknife standard error with a
  Student t-interval (df = the agent's runs - 1), from 20 runs a BCa cluster bootstrap resampling whole runs
  within strata of runs with the same set of agents (field mode: one stratum per candidate), so every agent is
  in every resample; fewer than 2 runs: none. Each refit is centred on the same agents' mean as the full fit, so
  an agent missing from a leave-out (its only run) does not shift the others. The jackknife standard error uses
  the leave-outs of all runs, with (n - 1) / n for n = all runs, not only the agent's: for an agent in few of many
  runs this is conservative (wider than a jackknife over its own runs would be).
"""
from __future__ import annotations

import math

import choix
import numpy as np
import pandas as pd
from scipy import stats as sps

from . import metrics
from .stats import ci_method

#: virtual tied games between every pair of agents in a fit (the regularisation; see the module docstring)
PRIOR_TIES = 1.0
#: Elo-like scale: rating = BASE + SCALE * theta (natural-log odds)
BASE, SCALE = 1500.0, 400.0 / math.log(10)
GAME_COLUMNS = ["run_id", "seed", "week", "team_a", "agent_a", "team_b", "agent_b", "points_a", "points_b",
                "winner", "loser", "tie"]


def matchups(runs: metrics.Runs) -> pd.DataFrame:
    """One row per regular-season pairing per week per run between teams of different agents: ``winner`` and
    ``loser`` agents (a tie: ``tie`` True, winner/loser = the two agents in team order)."""
    m = runs["matchups"]
    if m.empty:
        return pd.DataFrame(columns=GAME_COLUMNS)
    m = m if "seed" in m else m.assign(seed=None)
    a = m[m["team"] < m["opponent"]]  # each pairing once (both sides are recorded)
    b = m[["run_id", "week", "team", "agent"]].rename(columns={"team": "opponent", "agent": "agent_b"})
    g = a.merge(b, on=["run_id", "week", "opponent"], how="inner")
    g = g[g["agent"] != g["agent_b"]]
    g = g.rename(columns={"team": "team_a", "agent": "agent_a", "opponent": "team_b", "points_for": "points_a",
                          "points_against": "points_b"})
    tie = g["result"] == "T"
    a_won = g["result"] == "W"
    g["winner"] = np.where(a_won | tie, g["agent_a"], g["agent_b"])
    g["loser"] = np.where(a_won | tie, g["agent_b"], g["agent_a"])
    g["tie"] = tie
    return g[GAME_COLUMNS].sort_values(["run_id", "week", "team_a"], ignore_index=True)


def _win_matrix(games: pd.DataFrame, index: dict[str, int]) -> np.ndarray:
    """``M[i, j]`` = wins of agent i over agent j, a tie half a win to each side."""
    n = len(index)
    w = games["winner"].map(index).to_numpy()
    lo = games["loser"].map(index).to_numpy()
    half = np.where(games["tie"].to_numpy(dtype=bool), 0.5, 1.0)
    mat = np.zeros((n, n))
    np.add.at(mat, (w, lo), half)
    np.add.at(mat, (lo, w), 1.0 - half)
    return mat


def _fit(mat: np.ndarray) -> np.ndarray:
    """Theta (natural-log strengths, mean 0) of the agents of a win matrix, with :data:`PRIOR_TIES`."""
    n = mat.shape[0]
    if n == 1:
        return np.zeros(1)
    prior = PRIOR_TIES / 2 * (1 - np.eye(n))
    theta = choix.ilsr_pairwise_dense(mat + prior, alpha=0.0, max_iter=10_000, tol=1e-10)
    return theta - theta.mean()


def bradley_terry(games: pd.DataFrame, agents=None) -> pd.Series:
    """Rating per agent (Elo-like scale, mean 1500 over ``agents``) from games with ``winner``, ``loser`` and
    ``tie`` (:func:`matchups`). ``agents`` defaults to every agent in the games; one without games is rated by
    the virtual ties alone (1500 when all others are 1500)."""
    agents = sorted(set(games["winner"]) | set(games["loser"])) if agents is None else list(agents)
    unknown = (set(games["winner"]) | set(games["loser"])) - set(agents)
    if unknown:
        raise ValueError(f"games of agents not in 'agents': {sorted(unknown)}")
    theta = _fit(_win_matrix(games, {a: i for i, a in enumerate(agents)}))
    return pd.Series(BASE + SCALE * theta, index=agents, name="rating")


def _rating_of_runs(mats: dict[str, np.ndarray], present: dict[str, np.ndarray], runs_sel, centre: np.ndarray
                    ) -> np.ndarray:
    """Ratings (NaN for agents absent from the selected runs) from the summed win matrices of ``runs_sel``
    (repeats allowed), centred so that the present agents' mean equals their mean in ``centre`` (the full fit's
    theta)."""
    mat = sum(mats[r] for r in runs_sel)
    seen = np.logical_or.reduce([present[r] for r in runs_sel])
    out = np.full(len(centre), np.nan)
    idx = np.flatnonzero(seen)
    if not len(idx):  # the selected runs hold no game between different agents
        return out
    theta = _fit(mat[np.ix_(idx, idx)])
    out[idx] = theta - theta.mean() + centre[idx].mean()
    return BASE + SCALE * out


def _bca(boot: np.ndarray, jack: np.ndarray, point: float, confidence: float) -> tuple[float, float]:
    """BCa interval (Efron 1987) from bootstrap replicates and jackknife (leave-one-out) values."""
    boot, jack = boot[~np.isnan(boot)], jack[~np.isnan(jack)]
    if boot.std() == 0:
        return point, point
    p0 = (np.sum(boot < point) + 0.5 * np.sum(boot == point)) / len(boot)
    z0 = sps.norm.ppf(min(max(p0, 0.5 / len(boot)), 1 - 0.5 / len(boot)))
    d = jack.mean() - jack
    denom = 6 * (d ** 2).sum() ** 1.5
    acc = (d ** 3).sum() / denom if denom > 0 else 0.0
    z = sps.norm.ppf([(1 - confidence) / 2, (1 + confidence) / 2])
    q = sps.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
    lo, hi = np.quantile(boot, q)
    return float(lo), float(hi)


def ratings(runs: metrics.Runs, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per agent: Bradley-Terry ``rating`` over all runs with its interval over runs (``ci_low``, ``ci_high``,
    ``ci_method``; see the module docstring), ``n_runs`` it played, and its cross-agent ``games``, ``wins``,
    ``losses``, ``ties``. Agents that only ever met themselves have no games and no rating (NaN)."""
    cols = ["agent", "rating", "ci_low", "ci_high", "ci_method", "n_runs", "games", "wins", "losses", "ties"]
    games = matchups(runs)
    agents = sorted(set(runs["matchups"]["agent"])) if not runs["matchups"].empty else []
    if not agents:
        return pd.DataFrame(columns=cols)
    index = {a: i for i, a in enumerate(agents)}
    run_ids = sorted(runs["matchups"]["run_id"].unique())
    by_run = dict(tuple(games.groupby("run_id"))) if len(games) else {}
    empty = games.iloc[:0]
    mats = {r: _win_matrix(by_run.get(r, empty), index) for r in run_ids}
    present = {r: (mats[r].sum(axis=0) + mats[r].sum(axis=1)) > 0 for r in run_ids}
    n_runs = np.sum([present[r] for r in run_ids], axis=0).astype(int)
    ok = n_runs > 0
    centre = np.full(len(agents), np.nan)
    centre[ok] = _fit(sum(mats.values())[np.ix_(ok, ok)])
    point = BASE + SCALE * centre
    methods = [ci_method(int(k)) for k in n_runs]
    methods = ["jackknife t-interval" if m == "t-interval" else m for m in methods]
    lo, hi = np.full(len(agents), np.nan), np.full(len(agents), np.nan)
    if len(run_ids) >= 2:
        jack = np.array([_rating_of_runs(mats, present, [r for r in run_ids if r != left], centre)
                         for left in run_ids])
        boot = None
        if "BCa bootstrap" in methods:
            boot = _cluster_bootstrap(mats, present, run_ids, centre, n_resamples, seed)
        tq = {k: sps.t.ppf((1 + confidence) / 2, k - 1) for k in set(n_runs) if k >= 2}
        for i, m in enumerate(methods):
            col = jack[:, i]
            if m == "jackknife t-interval":
                v = col[~np.isnan(col)]
                se = math.sqrt((len(v) - 1) / len(v) * ((v - v.mean()) ** 2).sum())
                lo[i], hi[i] = point[i] - tq[n_runs[i]] * se, point[i] + tq[n_runs[i]] * se
            elif m == "BCa bootstrap":
                lo[i], hi[i] = _bca(boot[:, i], col, point[i], confidence)
    wins = games.assign(w=~games["tie"]).groupby("winner")["w"].sum()
    losses = games.assign(w=~games["tie"]).groupby("loser")["w"].sum()
    ties = pd.concat([games.loc[games["tie"], "winner"], games.loc[games["tie"], "loser"]]).value_counts()
    out = pd.DataFrame({"agent": agents, "rating": point, "ci_low": lo, "ci_high": hi, "ci_method": methods,
                        "n_runs": n_runs})
    for name, s in (("wins", wins), ("losses", losses), ("ties", ties)):
        out[name] = out["agent"].map(s).fillna(0).astype(int)
    out["games"] = out["wins"] + out["losses"] + out["ties"]
    return out[cols].sort_values("rating", ascending=False, ignore_index=True)


def _cluster_bootstrap(mats, present, run_ids, centre, n_resamples: int, seed: int) -> np.ndarray:
    """Replicates of the ratings resampling whole runs with replacement within strata of runs that hold the same
    agents (a field batch: one stratum per candidate), so every agent is in every resample."""
    rng = np.random.default_rng(seed)
    strata: dict[bytes, list[str]] = {}
    for r in run_ids:
        strata.setdefault(present[r].tobytes(), []).append(r)
    groups = list(strata.values())
    out = np.empty((n_resamples, len(centre)))
    for b in range(n_resamples):
        sel = [g[k] for g in groups for k in rng.integers(0, len(g), len(g))]
        out[b] = _rating_of_runs(mats, present, sel, centre)
    return out


# ------------------------------------------------------------------------------------------------ cost
COST_COLUMNS = ["agent", "team_seasons", "cost_usd", "cost_per_team_season", "points_per_team_season",
                "points_per_dollar", "unpriced_calls", "cost_known", "free"]


def costs(runs: metrics.Runs) -> pd.DataFrame:
    """Per agent: team-seasons played, ledger cost (total and per team-season), mean regular-season points per
    team-season and points per dollar. ``cost_known`` is False (cost NaN, never $0) when any of the agent's
    answered calls had no price (``unpriced_calls``), or an LLM agent has a run without ledger rows (imported
    runs have no token or cost data), or a ledger from before ``unpriced_calls`` shows calls costing $0 in all
    (a model litellm cannot price costs 0 throughout). ``free``: known cost of $0 (bots): points per dollar NaN."""
    st = metrics.standings(runs)
    ledger = runs.get("llm_summary", pd.DataFrame())
    rows = []
    for agent, g in st.groupby("agent"):
        row = {"agent": agent, "team_seasons": len(g), "points_per_team_season": float(g["points_for"].mean())}
        led = ledger[(ledger["agent"] == agent) & ledger["run_id"].isin(g["run_id"])] if len(ledger) else ledger
        if metrics.is_bot(agent):
            known, total, unpriced = True, 0.0, 0
        else:
            unpriced = int(led["unpriced_calls"].fillna(0).sum()) if "unpriced_calls" in led else 0
            total = float(led["cost_usd"].fillna(0).sum()) if len(led) else 0.0
            all_runs = set(g["run_id"]) <= set(led["run_id"]) if len(led) else False
            # per run: a ledger from before unpriced_calls whose calls cost $0 in all could not price them
            old = led.assign(u=led["unpriced_calls"] if "unpriced_calls" in led else np.nan).groupby("run_id").agg(
                u=("u", lambda s: s.isna().any()), cost=("cost_usd", "sum"), calls=("calls", "sum")) if len(led) \
                else pd.DataFrame(columns=["u", "cost", "calls"])
            old_zero = bool((old["u"] & (old["cost"] == 0) & (old["calls"] > 0)).any())
            known = bool(all_runs and unpriced == 0 and not old_zero)
        row.update(cost_usd=total if known else np.nan, unpriced_calls=unpriced, cost_known=known)
        row["cost_per_team_season"] = row["cost_usd"] / len(g)
        row["free"] = known and total == 0
        row["points_per_dollar"] = (row["points_per_team_season"] / row["cost_per_team_season"]
                                    if known and total > 0 else np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=COST_COLUMNS)


# ------------------------------------------------------------------------------------------------ leaderboard
def leaderboard(runs: metrics.Runs, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
                ) -> pd.DataFrame:
    """One row per agent: its rating with the interval over runs, head-to-head record, points, fallback shares,
    cost. An agent whose season or draft decisions were mostly engine fallbacks (``metrics.agent_info``) keeps
    its row with ``ranked`` False and no ``rank``: it is listed after the ranked agents, never ranked as if the
    model had played. Its games stay in the fit: its opponents really played them (against the engine's
    decisions). ``win_rate``: weekly head-to-head against other agents, a tie half a win."""
    r = ratings(runs, confidence, n_resamples, seed)
    info = metrics.agent_info(runs)[["agent", "fallback_rate", "draft_fallback_rate", "flagged", "draft_flagged",
                                     "ranked"]]
    board = info.merge(r, on="agent", how="left").merge(costs(runs), on="agent", how="left")
    board["win_rate"] = (board["wins"] + 0.5 * board["ties"]) / board["games"].where(board["games"] > 0)
    board["ranked"] = board["ranked"] & board["rating"].notna()
    board = board.sort_values(["ranked", "rating"], ascending=[False, False], ignore_index=True)
    board["rank"] = pd.array([i + 1 if ok else pd.NA for i, ok in enumerate(board["ranked"])], dtype="Int64")
    first = ["rank", "agent", "rating", "ci_low", "ci_high", "ci_method", "n_runs", "games", "wins", "losses", "ties",
             "win_rate", "points_per_team_season", "fallback_rate", "draft_fallback_rate", "flagged", "draft_flagged",
             "ranked"]
    return board[first + [c for c in COST_COLUMNS if c not in first]]


__all__ = ["matchups", "bradley_terry", "ratings", "costs", "leaderboard", "PRIOR_TIES", "BASE", "SCALE",
           ]
