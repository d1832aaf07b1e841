"""Honest intervals (issue 14, item 5): one interval rule (t below 20 values, BCa from there on), named with n on
every figure; the smallest p each test can reach at n; runs (seeds) never called seasons; fallback-dominated
agents never ranked."""
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ffbench_lib.analysis import contamination, metrics
from ffbench_lib.core import stats
from ffbench_lib.present import plots


def test_the_method_switches_from_t_to_bca_at_twenty_values():
    rng = np.random.default_rng(1)
    assert stats.BOOTSTRAP_MIN_N == 20
    assert stats.mean_ci(rng.normal(size=19))[2] == "t-interval"
    assert stats.mean_ci(rng.normal(size=20))[2] == "BCa bootstrap"
    assert stats.mean_ci([1.0])[2] == "none" and stats.mean_ci([1.0, np.nan])[2] == "none"  # NaNs do not count
    assert [stats.ci_method(n) for n in (0, 1, 2, 19, 20)] == ["none", "none", "t-interval", "t-interval",
                                                               "BCa bootstrap"]
    assert stats.ci_label("t-interval") == "95% t-interval"
    assert stats.ci_label("BCa bootstrap", 0.9) == "90% BCa bootstrap CI"
    assert "t-interval or BCa bootstrap" in stats.ci_label(["t-interval", "BCa bootstrap", "t-interval"])
    with pytest.raises(ValueError, match="unknown interval method"):
        stats.ci_label("percentile")


def test_t_interval_is_scipys_and_bca_is_seeded():
    x = np.array([3.0, 7.5, 1.0, 4.2, 9.9, 2.2])
    lo, hi, method = stats.mean_ci(x, confidence=0.9)
    ref = sps.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert method == "t-interval" and (lo, hi) == pytest.approx(ref)
    y = np.random.default_rng(2).exponential(size=40)
    assert stats.mean_ci(y) == stats.mean_ci(y)  # a fixed seed: the same interval every time
    lo, hi, _ = stats.mean_ci(y)
    assert lo < y.mean() < hi


def test_t_interval_covers_at_n_4_where_a_percentile_bootstrap_does_not():
    """400 seeded draws of 4 normal values: the t-interval covers ~95%; the percentile bootstrap (the old rule)
    covers far less and is about half as wide."""
    rng = np.random.default_rng(14)
    draws = rng.normal(10.0, 3.0, size=(400, 4))
    t_cover = pct_cover = 0
    t_width, pct_width = [], []
    for x in draws:
        lo, hi, method = stats.mean_ci(x)
        assert method == "t-interval"
        t_cover += lo <= 10.0 <= hi
        t_width.append(hi - lo)
        b = sps.bootstrap((x,), np.mean, method="percentile", n_resamples=999,
                          random_state=np.random.default_rng(0)).confidence_interval
        pct_cover += b.low <= 10.0 <= b.high
        pct_width.append(b.high - b.low)
    assert 0.92 <= t_cover / 400 <= 0.98
    assert pct_cover / 400 < 0.85
    assert np.mean(pct_width) / np.mean(t_width) < 0.65


def test_agent_means_names_each_agents_method():
    per_run = pd.DataFrame({"run_id": [f"r{i}" for i in range(24)] + [f"r{i}" for i in range(4)],
                            "agent": ["a"] * 24 + ["b"] * 4, "v": np.arange(28, dtype=float)})
    m = stats.agent_means(per_run, "v").set_index("agent")
    assert m.loc["a", "ci_method"] == "BCa bootstrap" and m.loc["b", "ci_method"] == "t-interval"
    assert {"runs", "mean", "ci_low", "ci_high", "sd", "ci_method"} <= set(m.columns)


def test_agent_means_counts_the_values_the_interval_uses():
    """A run without a value (NaN) is not evidence: ``runs`` is the n of the mean and of its t-interval."""
    per_run = pd.DataFrame({"run_id": ["r0", "r1", "r2", "r3", "r4"], "agent": "a",
                            "v": [1.0, 2.0, np.nan, 4.0, np.nan]})
    m = stats.agent_means(per_run, "v").iloc[0]
    assert m["runs"] == 3 and m["mean"] == pytest.approx(7 / 3)
    assert (m["ci_low"], m["ci_high"]) == pytest.approx(stats.mean_ci([1.0, 2.0, 4.0])[:2])
    one = stats.agent_means(per_run.assign(v=[1.0, np.nan, np.nan, np.nan, np.nan]), "v").iloc[0]
    assert one["runs"] == 1 and one["ci_method"] == "none" and np.isnan(one["sd"])


def test_holm_leaves_untested_pairs_out_of_m():
    """A NaN p (a pair that could not be tested) stays NaN and does not make the others' correction stricter."""
    adj = stats.holm([0.01, np.nan, 0.04, np.nan])
    assert np.isnan(adj[1]) and np.isnan(adj[3])
    assert adj[0] == pytest.approx(0.02) and adj[2] == pytest.approx(0.04)  # m = 2, not 4
    assert list(stats.holm([0.01, 0.04])) == pytest.approx([0.02, 0.04])
    assert np.isnan(stats.holm([np.nan])).all() and len(stats.holm([])) == 0


def test_smallest_achievable_p_values():
    assert [stats.smallest_p_wilcoxon(n) for n in (0, 1, 4, 5, 6)] == [1.0, 1.0, 0.125, 0.0625, 0.03125]
    assert stats.smallest_p_wilcoxon(4) == pytest.approx(sps.wilcoxon([1.0, 2.0, 3.0, 4.0]).pvalue)
    perfect = [np.arange(4.0) + i for i in range(4)]  # 4 runs rank 4 agents alike
    p = sps.friedmanchisquare(*np.array(perfect).T).pvalue
    assert stats.smallest_p_friedman(4, 4) == pytest.approx(p) == pytest.approx(sps.chi2.sf(12, 3))
    assert stats.runs_needed_wilcoxon(6) == 8  # 2/2**8 <= 0.05/6 < 2/2**7
    assert stats.runs_needed_wilcoxon(1) == 6


def per_run_frame(n_runs: int, effects: dict[str, float], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"run_id": f"r{r}", "agent": a, "v": e + rng.normal(0, 0.2)}
                         for r in range(n_runs) for a, e in effects.items()])


def test_verdict_at_4_runs_says_no_pair_can_be_significant_and_how_many_runs_would_do():
    df = per_run_frame(4, {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0})
    fried, pairs = stats.friedman(df, "v"), stats.pairwise_wilcoxon(df, "v")
    text = stats.verdict("win rate", fried, pairs, sample="4 runs (seeds of the 2024 season)")
    assert "over 4 runs (seeds of the 2024 season) and 4 agents" in text
    assert "Smallest possible p with 4 runs: 0.00738 (Friedman), 0.125 (Wilcoxon pair)." in text
    assert ("With 4 runs no pair can be significant after Holm correction over 6 pairs (smallest possible p = "
            "0.125 > 0.05/6): at least 8 runs are needed.") in text
    assert "seasons" not in text
    enough = stats.verdict("v", stats.friedman(per_run_frame(8, {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}), "v"),
                           stats.pairwise_wilcoxon(per_run_frame(8, {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}), "v"))
    assert "no pair can be significant" not in enough and "0.00781 (Wilcoxon pair)" in enough
    null = stats.verdict("v", *(f(per_run_frame(4, dict.fromkeys("abc", 0.0)), "v")
                                for f in (stats.friedman, stats.pairwise_wilcoxon)))
    assert "more runs (seeds) are needed" in null and "more seasons" not in null


def test_a_flagged_agent_is_left_out_of_the_tests_and_named_as_not_ranked():
    df = per_run_frame(10, {"a": 3.0, "b": 2.0, "c": 1.0, "llm:x": 9.0})
    info = pd.DataFrame({"agent": ["a", "b", "c", "llm:x"], "fallback_rate": [0.0, 0.0, 0.0, 0.63],
                         "draft_fallback_rate": [0.0] * 4, "flagged": [False, False, False, True],
                         "draft_flagged": [False] * 4})
    flagged = stats.not_ranked(info)
    assert flagged == {"llm:x": "fallback share 63%"}
    fried = stats.friedman(df, "v", exclude=flagged)
    pairs = stats.pairwise_wilcoxon(df, "v", exclude=flagged)
    assert fried["k_agents"] == 3 and fried["excluded"] == ["llm:x"] and "llm:x" not in fried["agents"]
    assert len(pairs) == 3 and "llm:x" not in set(pairs["agent_a"]) | set(pairs["agent_b"])
    text = stats.verdict("v", fried, pairs, flagged=flagged)
    assert "Not ranked (mostly engine fallbacks, not the model's play): llm:x (fallback share 63%)." in text
    assert "llm:x >" not in text and "> llm:x" not in text
    assert "over 3 pairs" not in text  # 10 runs: 2/2**10 passes 0.05/3
    # a flagged agent that was tested anyway is an error, never a ranking
    with pytest.raises(ValueError, match="llm:x flagged .* but tested"):
        stats.verdict("v", stats.friedman(df, "v"), stats.pairwise_wilcoxon(df, "v"), flagged=flagged)
    assert stats.verdict("v", fried, pairs, flagged={"llm:x": 0.5}).endswith("llm:x (fallback share 50%).")


def test_describe_sample_says_runs_and_seeds_never_seasons():
    def runs(seasons):
        return {"meta": pd.DataFrame({"run_id": [f"r{i}" for i in range(len(seasons))], "season": seasons})}

    assert metrics.describe_sample(runs([2024] * 10)) == "10 runs (seeds of the 2024 season)"
    assert metrics.describe_sample(runs([2024])) == "1 run (a seed of the 2024 season)"
    assert metrics.describe_sample(runs([2024] * 8 + [2023] * 4)) == "12 runs over seasons 2023, 2024"
    assert metrics.describe_sample([2024, 2024]) == "2 runs (seeds of the 2024 season)"
    assert metrics.describe_sample(runs([None, None])) == "2 runs"  # no season recorded: no claim about one


def ci_frame(per_run: pd.DataFrame, **extra) -> pd.DataFrame:
    return stats.agent_means(per_run, "v").assign(**extra)


def texts(fig) -> str:
    ax = fig.axes[0]
    return " ".join([ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
                    + [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()])


def test_every_interval_figure_names_its_method_and_n():
    sample = "4 runs (seeds of the 2024 season)"
    df = per_run_frame(4, {"bot:a": 30.0, "bot:b": 20.0})
    ci = ci_frame(df)
    palette = plots.agent_palette(ci["agent"])
    figs = [plots.start_sit_regret(ci, palette, sample=sample),
            plots.trade_value_bars(ci.assign(trades=3), palette, sample=sample),
            plots.pickup_points_bars(ci.assign(pickups=2), palette, sample=sample),
            plots.win_rate_ci(ci, palette, sample=sample)]
    for fig in figs:
        t = texts(fig)
        assert sample in t and "95% t-interval" in t and "bootstrap" not in t, t
    # agents with different n: each bar's n, and both methods named
    mixed = pd.concat([per_run_frame(24, {"bot:a": 30.0}), per_run_frame(4, {"bot:b": 20.0})])
    t = texts(plots.start_sit_regret(ci_frame(mixed), palette, sample="24 runs (seeds of the 2024 season)"))
    assert "a (n=24)" in t and "b (n=4)" in t and "t-interval or BCa bootstrap" in t
    # no sample given: still n runs, and the method from the rule when the frame has no ci_method
    t = texts(plots.start_sit_regret(ci.drop(columns="ci_method"), palette))
    assert "mean over 4 runs, 95% t-interval" in t
    plt.close("all")


def test_draft_figure_draws_no_seaborn_bootstrap_errorbars():
    ds = pd.DataFrame([{"run_id": f"r{r}", "team": "T", "agent": "bot:a", "season_agent": "bot:a",
                        "prev_points": 100.0 + r, "proj_points": 120.0, "actual_points": 110.0 + 5 * r,
                        "unprojected": 0} for r in range(5)])
    fig = plots.draft_performance(ds, sample="5 runs (seeds of the 2024 season)")
    ax = fig.axes[0]
    assert not ax.lines  # seaborn's default would add percentile-bootstrap errorbar lines
    assert "5 runs (seeds of the 2024 season)" in ax.get_ylabel() and "no interval" in ax.get_ylabel()
    plt.close("all")


def test_contamination_uses_the_one_rule_and_names_it():
    rng = np.random.default_rng(3)
    rows = []
    for seed in range(6):
        for agent, base in (("llm:m", 1500.0), ("bot:b", 1400.0)):
            u = base + rng.normal(0, 30)
            rows.append({"seed": seed, "agent": agent, "points_unmasked": u,
                         "points_masked": u - 40 + rng.normal(0, 5)})
    seeds = pd.DataFrame(rows).assign(points_diff=lambda d: d["points_masked"] - d["points_unmasked"])
    changes = contamination.paired_changes(seeds)
    assert set(changes["ci_method"]) == {"t-interval"}
    d = seeds.loc[seeds["agent"] == "llm:m", "points_diff"]
    row = changes.set_index("agent").loc["llm:m"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(sps.ttest_1samp(d, 0).confidence_interval())
    fig = plots.contamination_figure(seeds, changes)
    ax1, ax2 = fig.axes[:2]
    assert "mean over 6 seeds, 95% t-interval" in ax1.get_xlabel()
    legend = " ".join(t.get_text() for t in ax2.get_legend().get_texts())
    assert "over 6 paired seeds, 95% t-interval" in legend
    assert not hasattr(contamination, "mean_ci")  # one rule, in stats
    plt.close("all")


def test_probe_names_its_interval_method():
    from ffbench_lib.runs.probe import score, summary

    sample = pd.DataFrame({"probe_id": [f"P{i:02d}" for i in range(30)], "stratum": ["star"] * 30,
                           "player_name": [f"N{i}" for i in range(30)], "projection": [100.0] * 30,
                           "actual": np.linspace(50, 150, 30)})
    s = summary("m", 2024, score(sample, dict(zip(sample["probe_id"], sample["actual"] + 1))), {},
                {"actual": {}, "projection": {}})
    assert s["ci_method"] == "BCa bootstrap" and "95% BCa bootstrap CI" in s["verdict"]
    json.dumps(s)  # probe.json stays serialisable
    few = summary("m", 2024, score(sample.head(6), {}), {}, {"actual": {}, "projection": {}})
    assert few["ci_method"] == "none"  # nothing answered: no interval, and no method claimed
