"""Honest comparisons across seasons (scipy.stats): per-agent means with bootstrap CIs, a Friedman test with
runs as blocks, pairwise Wilcoxon signed-rank tests with Holm correction and effect sizes, and the draft slot
as a covariate. Inputs are per-(run, agent) frames such as :func:`metrics.per_agent` returns."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats


def bootstrap_ci(values, confidence: float = 0.95, n_resamples: int = 5000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (NaNs for fewer than two values)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 2:
        return (np.nan, np.nan)
    if np.all(x == x[0]):
        return (float(x[0]), float(x[0]))
    res = stats.bootstrap((x,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def agent_means(per_run: pd.DataFrame, value: str, confidence: float = 0.95) -> pd.DataFrame:
    """Mean of ``value`` per agent over runs, with a bootstrap CI."""
    rows = []
    for agent, g in per_run.groupby("agent"):
        lo, hi = bootstrap_ci(g[value], confidence)
        rows.append({"agent": agent, "runs": len(g), "mean": float(g[value].mean()), "ci_low": lo, "ci_high": hi,
                     "sd": float(g[value].std(ddof=1)) if len(g) > 1 else np.nan})
    return pd.DataFrame(rows).sort_values("mean", ascending=False, ignore_index=True)


def _blocks(per_run: pd.DataFrame, value: str) -> pd.DataFrame:
    """runs x agents, complete runs only (every agent present)."""
    wide = per_run.pivot_table(index="run_id", columns="agent", values=value)
    return wide.dropna()


def friedman(per_run: pd.DataFrame, value: str) -> dict:
    """Friedman test across agents with runs as blocks; Kendall's W as the effect size."""
    wide = _blocks(per_run, value)
    n, k = wide.shape
    if k < 3 or n < 2:
        return {"test": "friedman", "n_runs": n, "k_agents": k, "statistic": np.nan, "p_value": np.nan,
                "kendall_w": np.nan, "note": "needs at least 3 agents and 2 complete runs"}
    stat, p = stats.friedmanchisquare(*(wide[c].to_numpy() for c in wide.columns))
    return {"test": "friedman", "n_runs": n, "k_agents": k, "statistic": float(stat), "p_value": float(p),
            "kendall_w": float(stat / (n * (k - 1))), "note": ""}


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adj[i] = min(1.0, running)
    return adj


def pairwise_wilcoxon(per_run: pd.DataFrame, value: str, alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every pair of agents over the runs both played, Holm-corrected.
    Effect size: matched-pairs rank-biserial correlation (+1: ``a`` higher in every run)."""
    wide = _blocks(per_run, value)
    rows = []
    for a, b in combinations(sorted(wide.columns), 2):
        d = (wide[a] - wide[b]).to_numpy()
        nz = d[d != 0]
        if len(nz) == 0:
            rows.append({"agent_a": a, "agent_b": b, "n_runs": len(d), "mean_diff": 0.0, "statistic": np.nan,
                         "p_value": 1.0, "rank_biserial": 0.0})
            continue
        res = stats.wilcoxon(d, zero_method="wilcox")
        ranks = stats.rankdata(np.abs(nz))
        r_plus, r_minus = ranks[nz > 0].sum(), ranks[nz < 0].sum()
        rows.append({"agent_a": a, "agent_b": b, "n_runs": len(d), "mean_diff": float(d.mean()),
                     "statistic": float(res.statistic), "p_value": float(res.pvalue),
                     "rank_biserial": float((r_plus - r_minus) / ranks.sum())})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"] = holm(out["p_value"])
    out["significant"] = out["p_holm"] < alpha
    return out


def slot_effect(per_run_team: pd.DataFrame, value: str) -> dict:
    """Draft slot as a covariate: Spearman correlation of slot with ``value`` over all team-seasons, and the
    mean by slot (a rotate design balances slots across agents, so agent comparisons are not confounded)."""
    df = per_run_team.dropna(subset=["draft_slot", value])
    if df["draft_slot"].nunique() < 3:
        return {"spearman_rho": np.nan, "p_value": np.nan, "by_slot": {}}
    rho, p = stats.spearmanr(df["draft_slot"], df[value])
    return {"spearman_rho": float(rho), "p_value": float(p),
            "by_slot": df.groupby("draft_slot")[value].mean().round(2).to_dict()}


def verdict(metric: str, fried: dict, pairs: pd.DataFrame, alpha: float = 0.05) -> str:
    """A plain-language summary that says so when differences are not significant."""
    if np.isnan(fried.get("p_value", np.nan)):
        return f"{metric}: too few complete runs or agents for a test ({fried.get('note', '')})."
    head = (f"{metric}: Friedman chi2 = {fried['statistic']:.2f}, p = {fried['p_value']:.3g} over "
            f"{fried['n_runs']} runs and {fried['k_agents']} agents (Kendall's W = {fried['kendall_w']:.2f}).")
    if fried["p_value"] >= alpha:
        return head + " The agents' differences are NOT statistically significant; more seasons are needed."
    sig = pairs[pairs["significant"]] if not pairs.empty else pairs
    if sig.empty:
        return head + (" The agents differ overall, but no pair survives the Holm correction: "
                       "no specific ranking is supported.")
    lines = [f"{r.agent_a if r.mean_diff > 0 else r.agent_b} > {r.agent_b if r.mean_diff > 0 else r.agent_a} "
             f"(p_holm = {r.p_holm:.3g}, r = {abs(r.rank_biserial):.2f})" for r in sig.itertuples()]
    return head + " Significant pairs after Holm correction: " + "; ".join(lines) + "."
