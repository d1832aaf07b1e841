"""Honest comparisons across runs (scipy.stats): per-agent means with confidence intervals by one rule
(:func:`mean_ci`), a Friedman test with runs as blocks, pairwise Wilcoxon signed-rank tests with Holm correction
and effect sizes, the smallest p-value each test can reach at a given n, and the draft slot as a covariate.
Inputs are per-(run, agent) frames such as :func:`metrics.per_agent` returns. Agents whose results were mostly
engine fallbacks can be left out of the tests (``exclude``) and named in the :func:`verdict` as not ranked."""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

#: fewest values for a bootstrap interval; below it a Student t-interval (see :func:`mean_ci`)
BOOTSTRAP_MIN_N = 20
#: every interval method a table or figure names: :func:`mean_ci`'s, and the rating intervals' jackknife
CI_METHODS = ("t-interval", "jackknife t-interval", "BCa bootstrap", "none")


def ci_method(n: int) -> str:
    """The interval method :func:`mean_ci` uses for ``n`` values (the rule, in one place)."""
    return "none" if n < 2 else "t-interval" if n < BOOTSTRAP_MIN_N else "BCa bootstrap"


def _t_interval(x: np.ndarray, confidence: float) -> tuple[float, float]:
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence)
    return float(ci.low), float(ci.high)


def mean_ci(values, confidence: float = 0.95, seed: int = 0) -> tuple[float, float, str]:
    """CI of the mean as ``(low, high, method)``, NaNs ignored: none below 2 values (NaN, NaN, "none"); a
    Student t-interval below :data:`BOOTSTRAP_MIN_N`; a BCa bootstrap (fixed ``seed``) from there on.

    Why: a percentile bootstrap undercovers at small n (it resamples a handful of values, so its spread is the
    plug-in sd without the t quantile): at n = 4 it is about half as wide as the t-interval and covers ~80%, not
    95% (tests/test_intervals.py). The t-interval is exact for normal data and robust enough at these n; BCa
    corrects the bootstrap's bias and skew once there are enough values to resample. All values equal: the value
    itself (zero width). A BCa that cannot be computed (degenerate resamples) falls back to the t-interval, and
    says so in ``method``."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    method = ci_method(len(x))
    if method == "none":
        return (math.nan, math.nan, method)
    if np.all(x == x[0]):
        return (float(x[0]), float(x[0]), method)
    if method == "BCa bootstrap":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a degenerate BCa gives NaN: the t-interval below, named
            res = stats.bootstrap((x,), np.mean, confidence_level=confidence, method="BCa",
                                  random_state=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isnan(lo) or math.isnan(hi)):
            return (lo, hi, method)
        method = "t-interval"
    return (*_t_interval(x, confidence), method)


def ci_label(method: str | Iterable[str], confidence: float = 0.95, over: str = "") -> str:
    """How a figure or table names its interval: "95% t-interval", "95% BCa bootstrap CI", "95% jackknife
    t-interval over runs" (``over``: what the interval is over); for several methods (agents with different n)
    "95% CI: t-interval or BCa bootstrap (by n)"."""
    methods = [method] if isinstance(method, str) else list(method)
    unknown = set(methods) - set(CI_METHODS)
    if unknown:
        raise ValueError(f"unknown interval method(s) {sorted(unknown)}: expected one of {list(CI_METHODS)}")
    suffix = f" over {over}" if over else ""
    shown = [m for m in CI_METHODS if m != "none" and m in methods]
    if not shown:
        return f"no interval (fewer than 2 {over or 'values'})"
    if len(shown) > 1:
        return f"{confidence:.0%} CI{suffix}: {' or '.join(shown)} (by n)"
    return f"{confidence:.0%} {shown[0]}{' CI' if shown[0] == 'BCa bootstrap' else ''}{suffix}"


def power(effect: float, sd: float, n: int, alpha: float = 0.05, m: int = 1) -> float:
    """Power of the two-sided paired t-test at level ``alpha/m`` on ``n`` paired differences of mean ``effect``
    and standard deviation ``sd`` (noncentral t with n-1 degrees of freedom); NaN for n < 2 or unknown inputs.
    With ``m`` = the pairs of a Holm family this is a lower bound: Holm rejects every p at or below alpha/m."""
    if n is None or n < 2 or not np.isfinite(effect) or not np.isfinite(sd) or sd < 0:
        return float("nan")
    level = alpha / max(int(m), 1)
    if sd == 0:
        return 1.0 if effect != 0 else level
    df = n - 1
    crit = stats.t.ppf(1 - level / 2, df)
    nc = np.sqrt(n) * abs(effect) / sd
    # P(T > crit) + P(T < -crit), the lower tail as the upper tail at -nc: scipy's nct.cdf far in the tail can
    # return NaN (e.g. df 3, nc 11), its sf at +-nc stays finite
    return float(min(1.0, stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc)))


def seeds_needed(effect: float, sd: float, alpha: float = 0.05, m: int = 1, target: float = 0.8,
                 max_n: int = 10_000) -> int | None:
    """The smallest n >= 2 with ``power(effect, sd, n, alpha, m) >= target``; None when more than ``max_n`` are
    needed (or the effect is 0 or unknown). Power grows with n, so a doubling then bisection search finds it."""
    if not np.isfinite(effect) or not np.isfinite(sd) or effect == 0:
        return None
    if power(effect, sd, 2, alpha, m) >= target:
        return 2
    lo, hi = 2, 4  # power(lo) < target
    while power(effect, sd, hi, alpha, m) < target:
        if hi >= max_n:
            return None
        lo, hi = hi, min(2 * hi, max_n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(effect, sd, mid, alpha, m) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def agent_means(per_run: pd.DataFrame, value: str, confidence: float = 0.95) -> pd.DataFrame:
    """Mean of ``value`` per agent over runs, with its CI by :func:`mean_ci` and the method in ``ci_method``;
    ``runs`` counts the non-NaN values the mean and interval use (the n a figure shows)."""
    rows = []
    for agent, g in per_run.groupby("agent"):
        lo, hi, method = mean_ci(g[value], confidence)
        n = int(g[value].notna().sum())  # the values the mean and its interval use (NaNs ignored), not the rows
        rows.append({"agent": agent, "runs": n, "mean": float(g[value].mean()), "ci_low": lo, "ci_high": hi,
                     "ci_method": method, "sd": float(g[value].std(ddof=1)) if n > 1 else np.nan})
    cols = ["agent", "runs", "mean", "ci_low", "ci_high", "ci_method", "sd"]
    return pd.DataFrame(rows, columns=cols).sort_values("mean", ascending=False, ignore_index=True)


def _blocks(per_run: pd.DataFrame, value: str, exclude: Iterable[str] = ()) -> pd.DataFrame:
    """runs x agents, complete runs only (every agent present), without the ``exclude``d agents."""
    keep = per_run[~per_run["agent"].isin(set(exclude))]
    wide = keep.pivot_table(index="run_id", columns="agent", values=value)
    return wide.dropna()


#: the two test families of ffbench, named side by side wherever either gives advice (one place): the verdicts
#: (report, notebook 08) test pairs with PAIR_TEST; ``ffbench power`` plans seeds with POWER_TEST
PAIR_TEST = "two-sided Wilcoxon signed-rank test (no normality assumption; smallest p on n runs = 2/2^n)"
POWER_TEST = "two-sided paired t-test (assumes roughly normal per-run differences)"


def tests_note(n_pairs: int, alpha: float = 0.05, n: int | None = None) -> str:
    """What the power table says about the verdicts' test, so the two never seem to disagree: the Wilcoxon
    test (:data:`PAIR_TEST`) cannot reject below :func:`runs_needed_wilcoxon` runs however large the difference,
    while the t-test's power (:data:`POWER_TEST`) can reach 1 with fewer. ``n``: the runs at hand."""
    need = runs_needed_wilcoxon(n_pairs, alpha)
    now = "" if n is None else f" (its power at these {n} runs: 0)" if n < need else ""
    return (f"verdicts (ffbench report, notebook 08): the {PAIR_TEST}, Holm over {n_pairs} pair(s), can reject no "
            f"pair below {need} runs, whatever the difference{now}; the t-test here can need fewer. For a "
            f"Wilcoxon verdict plan at least max({need}, the seeds below)")


def smallest_p_wilcoxon(n: int) -> float:
    """The smallest two-sided p the exact Wilcoxon signed-rank test can give on ``n`` non-zero paired
    differences: all of one sign, 2 / 2**n (1.0 for n = 0)."""
    return min(1.0, 2.0 / 2 ** n) if n > 0 else 1.0


def smallest_p_friedman(n: int, k: int) -> float:
    """The smallest p of the Friedman test (chi-square approximation, as scipy's) on ``n`` runs and ``k`` agents:
    every run ranks the agents alike, chi2 = n (k - 1) with k - 1 degrees of freedom."""
    if n < 1 or k < 2:
        return 1.0
    return float(stats.chi2.sf(n * (k - 1), k - 1))


def runs_needed_wilcoxon(pairs: int, alpha: float = 0.05) -> int:
    """Fewest runs at which one pair can pass Holm's first step (p <= alpha / pairs): the smallest n with
    2 / 2**n <= alpha / pairs."""
    n = 1
    while smallest_p_wilcoxon(n) > alpha / max(pairs, 1):
        n += 1
    return n


def friedman(per_run: pd.DataFrame, value: str, exclude: Iterable[str] = ()) -> dict:
    """Friedman test across agents with runs as blocks; Kendall's W as the effect size. ``exclude``: agents left
    out of the test (e.g. mostly engine fallbacks), listed under ``excluded``."""
    excluded = sorted(set(exclude) & set(per_run["agent"]))
    wide = _blocks(per_run, value, excluded)
    n, k = wide.shape
    base = {"test": "friedman", "n_runs": n, "k_agents": k, "agents": list(wide.columns), "excluded": excluded,
            "smallest_p": smallest_p_friedman(n, k)}
    if k < 3 or n < 2:
        return base | {"statistic": np.nan, "p_value": np.nan, "kendall_w": np.nan,
                       "note": "needs at least 3 agents and 2 complete runs"}
    stat, p = stats.friedmanchisquare(*(wide[c].to_numpy() for c in wide.columns))
    return base | {"statistic": float(stat), "p_value": float(p), "kendall_w": float(stat / (n * (k - 1))),
                   "note": ""}


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1). A NaN p (a pair that could not be tested) stays
    NaN and is not counted in m: counting it would make every other pair's correction stricter for nothing, and
    sorting it (NaN sorts last) would hide it as a p of 1."""
    p = np.asarray(pvalues, dtype=float)
    adj = np.full(len(p), np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    m = len(tested)
    running = 0.0
    for rank, i in enumerate(tested[np.argsort(p[tested], kind="stable")]):
        running = max(running, (m - rank) * p[i])
        adj[i] = min(1.0, running)
    return adj


def pairwise_wilcoxon(per_run: pd.DataFrame, value: str, alpha: float = 0.05,
                      exclude: Iterable[str] = ()) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every pair of agents over the runs both played, Holm-corrected over the pairs
    of the agents not in ``exclude`` (agents left out of the family, e.g. mostly engine fallbacks). Effect size:
    matched-pairs rank-biserial correlation (+1: ``a`` higher in every run)."""
    wide = _blocks(per_run, value, exclude)
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


def not_ranked(info: pd.DataFrame | None) -> dict[str, str]:
    """Agents never to rank, from :func:`metrics.agent_info`: those above the fallback threshold in season or
    draft decisions, with the share that flagged them ("fallback share 63%", "draft fallback share 80%")."""
    if info is None or info.empty:
        return {}
    out = {}
    for r in info.itertuples(index=False):
        shares = ([f"fallback share {r.fallback_rate:.0%}"] if r.flagged else []) + (
            [f"draft fallback share {r.draft_fallback_rate:.0%}"] if r.draft_flagged else [])
        if shares:
            out[r.agent] = ", ".join(shares)
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


def _share(v) -> str:
    return f"fallback share {v:.0%}" if isinstance(v, (int, float)) else str(v)


def verdict(metric: str, fried: dict, pairs: pd.DataFrame, alpha: float = 0.05, sample: str | None = None,
            flagged: Mapping[str, str | float] | None = None) -> str:
    """A plain-language summary that says so when differences are not significant, states the smallest p each
    test can reach with this many runs, and says plainly when no pair could pass Holm's correction at all.
    ``sample``: how the runs are described (:func:`metrics.describe_sample`); ``flagged``: agent -> fallback share
    (a fraction or a phrase, :func:`not_ranked`) of agents left out of the tests (``exclude`` of :func:`friedman`
    and :func:`pairwise_wilcoxon`), named as not ranked; a flagged agent that was tested is an error."""
    flagged = dict(flagged or {})
    tested = set(fried.get("agents", [])) | (set(pairs["agent_a"]) | set(pairs["agent_b"]) if len(pairs) else set())
    wrongly = sorted(tested & set(flagged))
    if wrongly:
        raise ValueError(f"verdict: {', '.join(wrongly)} flagged (mostly engine fallbacks) but tested: pass "
                         "exclude=flagged to stats.friedman and stats.pairwise_wilcoxon")
    tail = (" Not ranked (mostly engine fallbacks, not the model's play): "
            + "; ".join(f"{a} ({_share(v)})" for a, v in sorted(flagged.items())) + ".") if flagged else ""
    n, k = fried.get("n_runs", 0), fried.get("k_agents", 0)
    if np.isnan(fried.get("p_value", np.nan)):
        return f"{metric}: too few complete runs or agents for a test ({fried.get('note', '')}).{tail}"
    runs = sample if sample and sample.startswith(f"{n} ") else (
        f"{n} complete runs" + (f" (of {sample})" if sample else ""))
    head = (f"{metric}: Friedman chi2 = {fried['statistic']:.2f}, p = {fried['p_value']:.3g} over "
            f"{runs} and {k} agents (Kendall's W = {fried['kendall_w']:.2f}).")
    n_pairs = len(pairs) if len(pairs) else k * (k - 1) // 2
    p_min = smallest_p_wilcoxon(n)
    power = (f" Smallest possible p with {n} runs: {smallest_p_friedman(n, k):.3g} (Friedman), {p_min:.3g} "
             "(Wilcoxon pair).")
    if p_min > alpha / max(n_pairs, 1):
        power += (f" With {n} runs no pair can be significant after Holm correction over {n_pairs} pairs "
                  f"(smallest possible p = {p_min:.3g} > {alpha:g}/{n_pairs}): at least "
                  f"{runs_needed_wilcoxon(n_pairs, alpha)} runs are needed.")
    power += (f" Pairs: the {PAIR_TEST}; `ffbench power` plans seeds with the {POWER_TEST}, which can need fewer "
              f"runs, and names this test's floor too.")
    head += power
    if fried["p_value"] >= alpha:
        return head + " The agents' differences are NOT statistically significant; more runs (seeds) are needed." + tail
    sig = pairs[pairs["significant"]] if not pairs.empty else pairs
    if sig.empty:
        return head + (" The agents differ overall, but no pair survives the Holm correction: "
                       "no specific ranking is supported.") + tail
    lines = [f"{r.agent_a if r.mean_diff > 0 else r.agent_b} > {r.agent_b if r.mean_diff > 0 else r.agent_a} "
             f"(p_holm = {r.p_holm:.3g}, r = {abs(r.rank_biserial):.2f})" for r in sig.itertuples()]
    return head + " Significant pairs after Holm correction: " + "; ".join(lines) + "." + tail


# ------------------------------------------------------------------------------------------------ strata (seasons)
#: the stratified pair test of a study over seasons, named wherever its verdict is
STRATIFIED_TEST = ("two-sided stratified signed-rank test (ranks within each season, each season weighted "
                   "1/(n(n+1)) so that it counts once whatever its seeds; exact sign-flip null up to 16 runs, else "
                   "9,999 seeded sign flips; smallest p on n runs = 2/2^n, and about 1/10,000 above 16 runs); its "
                   "null is 'no difference in these seasons'")
#: the season-level test: what a claim beyond the study's seasons rests on
SEASON_TEST = ("two-sided one-sample t-test on the seasons' mean differences (df = seasons - 1): a claim beyond "
               "these seasons; with 3 seasons it needs a large, consistent difference")
#: runs up to which a sign-flip null is enumerated exactly (2^16 sign patterns)
EXACT_FLIPS = 16
#: sign flips drawn above EXACT_FLIPS runs
FLIPS = 9999


def stratified_floor(n: int) -> float:
    """The smallest p :func:`stratified_signed_rank` can give on ``n`` non-zero differences: 2/2^n when the null
    is enumerated, else that of a Monte Carlo null of :data:`FLIPS` flips (scipy counts the observed one: 1/(FLIPS+1)
    per tail)."""
    return smallest_p_wilcoxon(n) if n <= EXACT_FLIPS else max(smallest_p_wilcoxon(n), 2.0 / (FLIPS + 1))


def stratified_signed_rank(diffs, strata, seed: int = 0) -> dict:
    """Paired differences blocked by stratum (a season): the statistic sum_s w_s * (signed ranks of |d| within
    stratum s), w_s = 1 / (n_s (n_s + 1)), against the null that every difference is symmetric about 0 (its sign
    flips; a sign-flip permutation test with scipy.stats.permutation_test). Why: seeds of one season share the
    season's real weeks, so each season counts once (a season's signed-rank sum lies within +-n_s(n_s+1)/2: with
    these weights every season's lies within +-1/2, whatever its seeds), and a season's scale counts for nothing
    (ranks are taken within it). ``statistic`` > 0: the first agent tends to be ahead. Zero differences are left out
    (Wilcoxon's rule). The null is "no difference in any of these seasons": a small p says the agents differ in
    these seasons, not beyond them (:data:`SEASON_TEST`). Returns ``n`` (non-zero differences), ``statistic``,
    ``p_value`` and ``method``."""
    d = np.asarray(diffs, dtype=float)
    s = np.asarray(list(strata), dtype=object)
    keep = ~np.isnan(d) & (d != 0)
    d, s = d[keep], s[keep]
    n = len(d)
    if n == 0:
        return {"n": 0, "statistic": np.nan, "p_value": 1.0, "method": "no non-zero differences"}
    weights = np.empty(n)
    ranks = np.empty(n)
    for label in dict.fromkeys(s):
        idx = np.flatnonzero(s == label)
        ranks[idx] = stats.rankdata(np.abs(d[idx]))
        weights[idx] = 1.0 / (len(idx) * (len(idx) + 1))
    score = weights * ranks  # the magnitude each difference brings; its sign is what the null flips
    observed = float(np.sum(np.sign(d) * score))
    if n == 1:  # two sign patterns, both as extreme: p = 1 (scipy refuses a sample of one)
        return {"n": 1, "statistic": observed, "p_value": 1.0, "method": "exact (2 sign patterns)"}

    def statistic(x, axis=-1):
        return np.sum(np.sign(x) * score, axis=axis)

    exact = n <= EXACT_FLIPS
    res = stats.permutation_test((d,), statistic, permutation_type="samples", vectorized=True,
                                 n_resamples=np.inf if exact else FLIPS, alternative="two-sided",
                                 random_state=np.random.default_rng(seed))
    return {"n": n, "statistic": observed, "p_value": float(min(1.0, res.pvalue)),
            "method": f"exact ({2 ** n} sign patterns)" if exact else f"{FLIPS:,} seeded sign flips"}


def season_level(per_stratum) -> tuple[float, int]:
    """(two-sided p, seasons) of :data:`SEASON_TEST` on the strata's mean differences; NaN below 2 seasons, 1 when
    every season's difference is 0, 0 when all are one non-zero value (no spread, a sure sign)."""
    x = np.asarray(list(per_stratum), dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 2:
        return float("nan"), len(x)
    if np.ptp(x) == 0:
        return (1.0 if x[0] == 0 else 0.0), len(x)
    return float(stats.ttest_1samp(x, 0.0).pvalue), len(x)


def stratified_pairs(per_run: pd.DataFrame, value: str, strata: Mapping[str, str], alpha: float = 0.05,
                     exclude: Iterable[str] = (), seed: int = 0) -> pd.DataFrame:
    """Every pair of agents over the runs both played (each pair its own runs: an agent missing from a season
    leaves that season out of its pairs only; ``strata_tested`` says which were tested), ``strata`` mapping each
    run_id to its stratum (season). Two families, each Holm-corrected over the pairs of agents not in ``exclude``:

    * ``p_value``/``p_holm``/``significant``: :func:`stratified_signed_rank`, conditional on these seasons;
      ``direction`` is the sign of its statistic (+1: ``agent_a`` ahead), ``agrees`` whether the mean difference
      has that sign too (a blowout season can pull the mean the other way);
    * ``p_seasons``/``p_seasons_holm``/``significant_seasons``: :func:`season_level` on the strata's means, what a
      claim beyond these seasons rests on.

    ``mean_diff`` is the mean over strata of each stratum's mean difference (every season counts once),
    ``by_stratum`` each stratum's mean difference, ``same_sign`` whether every stratum's difference has the sign of
    the test's direction."""
    keep = per_run[~per_run["agent"].isin(set(exclude))]
    wide = keep.pivot_table(index="run_id", columns="agent", values=value)
    rows = []
    for a, b in combinations(sorted(wide.columns), 2):
        both = wide[[a, b]].dropna()
        if both.empty:
            continue
        d = both[a] - both[b]
        labels = both.index.map(lambda r: strata[r])
        per = d.groupby(labels).mean()
        res = stratified_signed_rank(d.to_numpy(), labels, seed)
        pooled = float(per.mean())
        direction = int(np.sign(res["statistic"])) if np.isfinite(res["statistic"]) else 0
        p_s, n_s = season_level(per)
        rows.append({"agent_a": a, "agent_b": b, "n_runs": len(d), "n_strata": len(per),
                     "strata_tested": list(per.index), "mean_diff": pooled, "direction": direction,
                     "agrees": bool(direction == 0 or np.sign(pooled) == direction),
                     "statistic": res["statistic"], "p_value": res["p_value"], "method": res["method"],
                     "p_seasons": p_s, "by_stratum": {k: round(float(v), 3) for k, v in per.items()},
                     "same_sign": bool(direction != 0 and (np.sign(per) == direction).all())})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"] = holm(out["p_value"])
    out["significant"] = out["p_holm"] < alpha
    out["p_seasons_holm"] = holm(out["p_seasons"])
    out["significant_seasons"] = out["p_seasons_holm"] < alpha
    return out


def interaction(per_run: pd.DataFrame, value: str, strata: Mapping[str, str], exclude: Iterable[str] = (),
                n_resamples: int = 9999, seed: int = 0) -> dict:
    """Does the ranking of agents depend on the stratum (season x agent interaction)? Each complete run ranks its
    agents (average ranks, 1 = lowest ``value``; ranks, so leagues of different scale, even of two sports, compare);
    the statistic is the spread of the strata's mean rank profiles around the overall one, sum_s n_s
    ||mean_s - mean||^2, and its null permutes whole runs among the strata (scipy.stats.permutation_test, seeded
    Monte Carlo, or every split when there are fewer). A small p says the agents' rank profiles differ between
    seasons (the order, or only how far apart they are: ``kendall_w`` and ``min_spearman`` below 1 say the order
    itself changes); a large p does not show that it holds (with few seasons the test has little power): ``kendall_w`` (the strata's agreement on the agents' order, 1 = the
    same order in every stratum) and ``min_spearman`` (the least-agreeing pair of strata) say how far it holds."""
    wide = _blocks(per_run, value, exclude)
    labels = np.array([strata[r] for r in wide.index], dtype=object)
    levels = list(dict.fromkeys(labels))
    base = {"test": "permutation (runs among strata), within-run ranks", "n_runs": len(wide),
            "k_agents": wide.shape[1], "strata": levels, "agents": list(wide.columns)}
    if len(levels) < 2 or wide.shape[1] < 2 or min(int((labels == lv).sum()) for lv in levels) < 2:
        return base | {"statistic": np.nan, "p_value": np.nan, "kendall_w": np.nan, "min_spearman": np.nan,
                       "note": "needs 2 or more strata with 2 or more complete runs each, and 2 or more agents"}
    ranks = np.apply_along_axis(stats.rankdata, 1, wide.to_numpy(dtype=float))
    groups = [np.flatnonzero(labels == lv).astype(float) for lv in levels]

    def spread(*idx):
        means = [ranks[np.asarray(i, dtype=int)].mean(axis=0) for i in idx]
        overall = ranks[np.concatenate([np.asarray(i, dtype=int) for i in idx])].mean(axis=0)
        return float(sum(len(i) * np.sum((m - overall) ** 2) for i, m in zip(idx, means)))

    res = stats.permutation_test(groups, spread, permutation_type="independent", vectorized=False,
                                 n_resamples=n_resamples, alternative="greater",
                                 random_state=np.random.default_rng(seed))
    drawn = len(res.null_distribution)  # scipy enumerates every split exactly when there are fewer
    profile = np.array([ranks[labels == lv].mean(axis=0) for lv in levels])  # strata x agents
    k, m = profile.shape[1], profile.shape[0]
    order = np.apply_along_axis(stats.rankdata, 1, profile)
    w = float(12 * np.sum((order.sum(axis=0) - m * (k + 1) / 2) ** 2) / (m ** 2 * (k ** 3 - k))) if k > 1 else np.nan
    rhos = [stats.spearmanr(profile[i], profile[j]).statistic for i, j in combinations(range(m), 2)]
    return base | {"statistic": float(res.statistic), "p_value": float(res.pvalue), "kendall_w": w,
                   "min_spearman": float(np.nanmin(rhos)) if rhos else np.nan,
                   "note": (f"all {drawn:,} splits of the runs among the strata (exact)" if drawn < n_resamples
                            else f"{n_resamples:,} seeded permutations of runs among strata")}


def variance_components(diffs, strata) -> dict:
    """One-way random-effects ANOVA (method of moments) of per-run values nested in strata: ``within`` (seeds of
    one season) and ``between`` (seasons, truncated at 0) variances, ``df_within``/``df_between``, the strata and
    runs. Why: the variance of a study's mean over S seasons of R seeds is between/S + within/(S R); counting
    seeds as independent uses (between + within)/(S R) and understates it whenever seasons differ."""
    d = pd.Series(np.asarray(diffs, dtype=float)).reset_index(drop=True)
    s = pd.Series(list(strata)).reset_index(drop=True)
    ok = d.notna()
    d, s = d[ok], s[ok]
    groups = d.groupby(s)
    n_s = groups.size()
    n, k = int(n_s.sum()), int(len(n_s))
    if k < 1 or n - k < 1:
        return {"within": np.nan, "between": np.nan, "df_within": n - k, "df_between": k - 1, "strata": k, "runs": n}
    msw = float(((d - groups.transform("mean")) ** 2).sum() / (n - k))
    if k < 2:
        return {"within": msw, "between": np.nan, "df_within": n - k, "df_between": 0, "strata": k, "runs": n}
    msb = float((n_s * (groups.mean() - d.mean()) ** 2).sum() / (k - 1))
    r0 = (n - float((n_s ** 2).sum()) / n) / (k - 1)  # the mean stratum size, for unequal sizes
    return {"within": msw, "between": max(0.0, (msb - msw) / r0), "df_within": n - k, "df_between": k - 1,
            "strata": k, "runs": n}


def study_power(effect: float, between: float, within: float, strata: int, per_stratum: int, alpha: float = 0.05,
                m: int = 1) -> float:
    """Power to find ``effect`` with ``strata`` seasons of ``per_stratum`` seeds, generalising over seasons: the
    two-sided t-test on the seasons' mean differences (df = strata - 1), whose sd is sqrt(between + within /
    per_stratum) (:func:`variance_components`). More seeds shrink only the within part: past a point only seasons
    help."""
    if not all(np.isfinite(x) for x in (effect, between, within)) or per_stratum < 1:
        return float("nan")
    return power(effect, math.sqrt(between + within / per_stratum), strata, alpha, m)


def study_seeds_needed(effect: float, between: float, within: float, strata: int, alpha: float = 0.05, m: int = 1,
                       target: float = 0.8, max_n: int = 1000) -> int | None:
    """The fewest seeds per season reaching ``target`` power with ``strata`` seasons (:func:`study_power`); None
    when none does (the between-season variance alone keeps the power below target, or more than ``max_n``)."""
    top = study_power(effect, between, within, strata, max_n, alpha, m)
    if not np.isfinite(top) or top < target:  # unknown (a pilot of one seed per season has no within part), or none
        return None
    lo, hi = 0, max_n  # study_power(hi) >= target; power grows with seeds
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if study_power(effect, between, within, strata, mid, alpha, m) >= target:
            hi = mid
        else:
            lo = mid
    return hi


# ------------------------------------------------------------------------------------------------ exams
def twoway_cluster_mean(values, a, b, confidence: float = 0.95) -> dict:
    """The mean of ``values`` with a confidence interval robust to clustering in two crossed ways (an exam's states
    share a team-season ``a`` and a week ``b``: Cameron, Gelbach and Miller 2011): the variance of the mean is
    V_a + V_b - V_ab, each a cluster-robust variance (sum over clusters of the squared summed residuals over n^2,
    times G/(G-1)), floored at the larger one-way variance (never narrower than clustering one way). A t interval
    on min(G_a, G_b) - 1 degrees of freedom. ``se`` times sqrt(n) is the effective per-state standard deviation
    (the design effect included) that power calculations take."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return {"n": 0, "mean": float("nan"), "se": float("nan"), "low": float("nan"), "high": float("nan"),
                "df": 0, "clusters_a": 0, "clusters_b": 0}
    mean = float(x.mean())
    e = x - mean

    def one_way(keys) -> tuple[float, int]:
        sums = pd.Series(e).groupby(pd.Series(list(keys)), sort=False).sum().to_numpy()
        g = len(sums)
        return (float((sums ** 2).sum()) / n ** 2 * (g / (g - 1) if g > 1 else float("nan"))), g

    va, ga = one_way(a)
    vb, gb = one_way(b)
    vab, _ = one_way(zip(a, b))
    var = max(va + vb - vab, va, vb)
    se = float(np.sqrt(var)) if np.isfinite(var) else float("nan")
    df = min(ga, gb) - 1
    if df < 1 or not np.isfinite(se):
        return {"n": n, "mean": mean, "se": se, "low": float("nan"), "high": float("nan"), "df": df,
                "clusters_a": ga, "clusters_b": gb}
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    return {"n": n, "mean": mean, "se": se, "low": mean - half, "high": mean + half, "df": df, "clusters_a": ga,
            "clusters_b": gb}


def twoway_cluster_test(diffs, a, b) -> dict:
    """A paired test of mean ``diffs`` = 0 with the two-way clustered standard error of
    :func:`twoway_cluster_mean` (t on min(G_a, G_b) - 1 degrees of freedom); ``p`` NaN when it cannot be tested,
    1 when every difference is 0."""
    r = twoway_cluster_mean(diffs, a, b)
    d = np.asarray(diffs, dtype=float)
    if len(d) and np.all(d == 0):
        return {**r, "t": 0.0, "p": 1.0}
    if not (r["df"] >= 1 and np.isfinite(r["se"]) and r["se"] > 0):
        return {**r, "t": float("nan"), "p": float("nan")}
    t = r["mean"] / r["se"]
    return {**r, "t": float(t), "p": float(2 * stats.t.sf(abs(t), r["df"]))}
