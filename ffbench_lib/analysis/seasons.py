"""Studies over seasons (a batch with ``seasons``; any runs of several seasons or sports): results per season and
pooled, pair tests blocked by season, the season-by-agent interaction test and ratings per season.

Why blocks: every seed of one season replays the same real weeks, so its outcomes cluster by week; seeds of one
season are repeated measures of that season, not independent evidence about an agent. A season is therefore a
stratum: each season's own spread and scale count once (:func:`ffbench_lib.core.stats.stratified_pairs`), and the
interaction test (:func:`ffbench_lib.core.stats.interaction`) asks whether the ranking is the same in every season.
A stratum is a sport and a season (``nfl-2023``, ``fpl-2024-25``): points of two sports are on different scales,
so pooled points are per sport, and what is pooled over sports is scale-free (within-run ranks, win rates, tests
on ranks).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ffbench_lib.analysis import metrics
from ffbench_lib.core import stats
from ffbench_lib.sport import sport

#: the per-run values a study compares (as the power table and notebook 08 name them)
VALUES = ("points_for", "win_rate")


def stratum_of(runs: metrics.Runs) -> pd.Series:
    """run_id -> its stratum, ``<sport>-<season>`` as the sport names the season (``nfl-2023``,
    ``fpl-2024-25``)."""
    meta = runs["meta"]
    return pd.Series([sport(sp).stratum(int(s)) for sp, s in zip(meta["sport"], meta["season"])],
                     index=meta["run_id"].to_numpy(), name="stratum")


def strata(runs: metrics.Runs) -> list[str]:
    """The strata of these runs, in season order within each sport."""
    meta = runs["meta"].drop_duplicates(["sport", "season"]).sort_values(["sport", "season"])
    return [sport(sp).stratum(int(s)) for sp, s in zip(meta["sport"], meta["season"])]


def is_study(runs: metrics.Runs) -> bool:
    """Runs of more than one season (or sport): a study, analysed by season."""
    return len(strata(runs)) > 1


def per_run(runs: metrics.Runs, value: str = "points_for") -> pd.DataFrame:
    """One row per (run, agent): ``value`` (the agent's mean over its teams; ``win_rate`` the one agent-level
    win rate, :func:`metrics.agent_win_rate`), with the run's ``stratum`` and ``sport``. A field batch's runs are
    blocked (:func:`field.by_seed`): the candidates' leagues of one season's seed are one block (``run_id``
    ``nfl-2023/seed-0``), the baseline teams left out."""
    from ffbench_lib.analysis import field

    if value not in VALUES:
        raise ValueError(f"value: {value!r} is not one of {', '.join(VALUES)}")
    df = (metrics.agent_win_rate(runs)[["run_id", "agent", "win_rate"]] if value == "win_rate"
          else metrics.per_agent(metrics.standings(runs), value))
    where = stratum_of(runs)
    sports = runs["meta"].set_index("run_id")["sport"]
    df = df.assign(stratum=df["run_id"].map(where), sport=df["run_id"].map(sports))
    return field.by_seed(df, runs)


def season_table(runs: metrics.Runs, value: str = "points_for", confidence: float = 0.95) -> pd.DataFrame:
    """Per agent and stratum, then pooled: mean ``value`` over runs with its interval (:func:`stats.agent_means`,
    n = that stratum's runs), and ``mean_rank`` (the agent's mean within-run rank, 1 = best: scale-free, so it
    pools over sports). Pooled rows (``stratum`` "pooled"; for points, per sport "pooled nfl" when the runs hold
    two sports, a win rate pools over both) average every run of the sport; ``season_mean`` is the mean of the strata's means (every season once)."""
    df = per_run(runs, value)
    df["rank"] = df.groupby("run_id")[value].rank(ascending=False, method="average")
    rows = []
    groups = [(s, g) for s, g in df.groupby("stratum", sort=False)]
    groups.sort(key=lambda sg: strata(runs).index(sg[0]))
    sports = list(dict.fromkeys(df["sport"]))
    for label, g in groups:
        rows.append(stats.agent_means(g, value, confidence).assign(stratum=label, mean_rank=lambda t, g=g: t[
            "agent"].map(g.groupby("agent")["rank"].mean())))
    pools = [(sp, df[df["sport"] == sp]) for sp in sports] if value != "win_rate" else [(None, df)]
    for sp, g in pools:  # a win rate pools over sports; points per sport (no common scale)
        name = "pooled" if sp is None or len(sports) == 1 else f"pooled {sp}"
        pooled = stats.agent_means(g, value, confidence).assign(stratum=name)
        pooled["mean_rank"] = pooled["agent"].map(g.groupby("agent")["rank"].mean())
        pooled["season_mean"] = pooled["agent"].map(g.groupby(["agent", "stratum"])[value].mean().groupby("agent")
                                                    .mean())
        rows.append(pooled)
    if len(sports) > 1:  # ranks pool over sports
        ranks = df.groupby("agent")["rank"].agg(["mean", "size"]).reset_index()
        rows.append(pd.DataFrame({"agent": ranks["agent"], "runs": ranks["size"], "stratum": "pooled (ranks)",
                                  "mean_rank": ranks["mean"]}).sort_values("mean_rank", ignore_index=True))
    out = pd.concat(rows, ignore_index=True)
    cols = ["stratum", "agent", "runs", "mean", "ci_low", "ci_high", "ci_method", "sd", "mean_rank", "season_mean"]
    return out.reindex(columns=cols)


def pairs(runs: metrics.Runs, value: str = "points_for", alpha: float = 0.05, exclude=(), seed: int = 0
          ) -> pd.DataFrame:
    """Every pair of agents tested blocked by season (:func:`stats.stratified_pairs`), Holm over the pairs."""
    df = per_run(runs, value)
    return stats.stratified_pairs(df, value, dict(zip(df["run_id"], df["stratum"])), alpha, exclude, seed)


def interaction(runs: metrics.Runs, value: str = "points_for", exclude=(), seed: int = 0) -> dict:
    """The season-by-agent interaction test on within-run ranks (:func:`stats.interaction`)."""
    df = per_run(runs, value)
    return stats.interaction(df, value, dict(zip(df["run_id"], df["stratum"])), exclude, seed=seed)


def ratings_by_season(runs: metrics.Runs, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The Bradley-Terry leaderboard of each stratum on its own runs (``stratum`` column), then the pooled one
    (``stratum`` "pooled": all runs, :func:`ratings.ratings`). The pooled fit weights every game alike, so a season
    of more weeks (an FPL season's 38 against an NFL season's 17) weighs more, and its interval is over runs as
    units (seeds of one season are not independent seasons): read it as about these seasons."""
    from ffbench_lib.analysis import ratings

    where = stratum_of(runs)
    parts = []
    for label in strata(runs):
        keep = set(where[where == label].index)
        parts.append(ratings.leaderboard(subset(runs, keep), n_resamples=n_resamples, seed=seed).assign(
            stratum=label))
    parts.append(ratings.leaderboard(runs, n_resamples=n_resamples, seed=seed).assign(stratum="pooled"))
    out = pd.concat(parts, ignore_index=True)
    return out[["stratum", *[c for c in out.columns if c != "stratum"]]]


def subset(runs: metrics.Runs, run_ids) -> metrics.Runs:
    """The tables of the runs ``run_ids`` only (every table keyed by run_id; ``excluded`` kept)."""
    keep = set(run_ids)
    return {k: (v[v["run_id"].isin(keep)].reset_index(drop=True) if isinstance(v, pd.DataFrame) and "run_id" in v
                else v) for k, v in runs.items()}


def verdict(runs: metrics.Runs, value: str = "points_for", alpha: float = 0.05, exclude=(), seed: int = 0,
            tested: pd.DataFrame | None = None, inter: dict | None = None) -> str:
    """In words, in two scopes: the pairs that differ in these seasons (the stratified test, Holm), whether each is
    ahead in every season; the pairs that differ beyond them (the t-test on season means, Holm), and whether the
    agents' rank profiles depend on the season (the interaction test, with the strata's agreement)."""
    tested = pairs(runs, value, alpha, exclude, seed) if tested is None else tested
    inter = interaction(runs, value, exclude, seed) if inter is None else inter
    levels = strata(runs)
    field = runs["meta"]["field_seat"].notna().any() if "field_seat" in runs["meta"] else False
    n = int(tested["n_runs"].max()) if len(tested) else runs["meta"]["run_id"].nunique()
    unit = "blocks (a season's seed: one league per candidate)" if field else "runs"
    head = (f"{value}, blocked by season ({len(levels)} strata: {', '.join(levels)}; up to {n} {unit} per pair): "
            f"in these seasons, the {stats.STRATIFIED_TEST}, Holm over {len(tested)} pair(s).")
    if tested.empty:
        return head + " No pair of agents to test."
    partial = tested[tested["n_strata"] < len(levels)]
    if len(partial):  # an agent missing from a season: that pair is tested on the seasons both played
        head += (" Tested on fewer seasons (an agent absent from some): " + "; ".join(
            f"{r.agent_a} vs {r.agent_b} on {', '.join(r.strata_tested)}" for r in partial.itertuples()) + ".")
    floor = stats.stratified_floor(n)
    if floor > alpha / max(len(tested), 1):
        head += f" With {n} {unit.split(' ')[0]} no pair can pass Holm (smallest possible p = {floor:.3g})."
    sig = tested[tested["significant"]]
    if sig.empty:
        body = " In these seasons no pair differs significantly after Holm correction."
    else:
        parts = []
        for r in sig.itertuples():
            hi, lo = (r.agent_a, r.agent_b) if r.direction > 0 else (r.agent_b, r.agent_a)
            held = "in every season" if r.same_sign else "NOT in every season"
            odd = "" if r.agrees else "; its mean difference points the other way (one season's blowout)"
            parts.append(f"{hi} > {lo} (p_holm = {r.p_holm:.3g}; ahead {held}{odd})")
        body = " In these seasons: " + "; ".join(parts) + "."
    k = int(tested["n_strata"].max())
    if k < 2:
        body += " Beyond these seasons: not testable with one season."
    else:
        beyond = tested[tested["significant_seasons"].fillna(False).astype(bool)]
        if beyond.empty:
            body += (f" Beyond these seasons ({stats.SEASON_TEST}, Holm): no pair is significant with {k} seasons; "
                     "a ranking that should hold in other seasons needs more seasons (ffbench power plans them).")
        else:
            body += (f" Beyond these seasons ({stats.SEASON_TEST}, Holm): " + "; ".join(
                f"{r.agent_a if r.mean_diff > 0 else r.agent_b} > {r.agent_b if r.mean_diff > 0 else r.agent_a} "
                f"(p_holm = {r.p_seasons_holm:.3g})" for r in beyond.itertuples()) + ".")
    if np.isnan(inter.get("p_value", np.nan)):
        tail = f" Season x agent interaction: not tested ({inter.get('note', '')})."
    else:
        agree = (f"the seasons' orders agree with Kendall's W = {inter['kendall_w']:.2f}; least-agreeing pair of "
                 f"seasons: Spearman {inter['min_spearman']:.2f}")
        reorders = inter["kendall_w"] < 1 or inter["min_spearman"] < 1
        if inter["p_value"] < alpha:
            what = ("the ranking DIFFERS between seasons" if reorders else
                    "the agents' rank profiles differ between seasons (the same order, further apart in some)")
            tail = (f" Season x agent interaction: p = {inter['p_value']:.3g} < {alpha:g}: {what} ({agree}); "
                    "report it per season, not pooled.")
        else:
            tail = (f" Season x agent interaction: p = {inter['p_value']:.3g}: no evidence that the ranking differs "
                    f"between seasons ({agree}); with {len(levels)} seasons this test has little power, so this is "
                    "not proof that it holds in others.")
    return head + body + tail


__all__ = ["VALUES", "stratum_of", "strata", "is_study", "per_run", "season_table", "pairs", "interaction",
           "ratings_by_season", "subset", "verdict"]
