"""Power analysis on synthetic data with known effects: the analytic power matches simulated rejection rates,
seeds_needed recovers the true n, and field mode (duplicate scores on one seat) detects a known skill difference
with far fewer seeds than the full-league design."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ffbench_lib.records import field as field_record
from ffbench_lib.analysis import field
from ffbench_lib.analysis.power import cost_per_seed, seeds_range
from ffbench_lib.core.stats import power, seeds_needed

SIMS = 4000


@pytest.mark.parametrize("n, effect, sd, m", [(5, 1.0, 1.0, 1), (10, 0.5, 1.0, 1), (12, 1.0, 1.0, 6),
                                              (20, 0.6, 1.5, 6), (8, 0.0, 1.0, 1)])
def test_power_matches_simulated_paired_t_tests(n, effect, sd, m):
    """Rejection rate of scipy's paired t-test at alpha/m over 4000 seeded experiments, within 0.03."""
    rng = np.random.default_rng(1000 * n + m)
    base = rng.normal(50, 20, size=(SIMS, n))  # each seed's shared part: cancels in the pairing
    a = base + effect + rng.normal(0, sd / np.sqrt(2), size=(SIMS, n))
    b = base + rng.normal(0, sd / np.sqrt(2), size=(SIMS, n))
    p = stats.ttest_rel(a, b, axis=1).pvalue
    simulated = float(np.mean(p < 0.05 / m))
    analytic = power(effect, sd, n, alpha=0.05, m=m)
    assert abs(analytic - simulated) <= 0.03, (analytic, simulated)
    if effect == 0:
        assert analytic == pytest.approx(0.05 / m)


def test_seeds_needed_is_the_smallest_n_reaching_the_target():
    # textbook values of the paired (one-sample) t-test, alpha 0.05 two-sided, 80% power: d=0.5 -> 34, d=0.8 -> 15
    assert seeds_needed(0.5, 1.0) == 34 and seeds_needed(8.0, 10.0) == 15
    n = seeds_needed(0.4, 1.0, m=6, target=0.9)
    assert power(0.4, 1.0, n, m=6) >= 0.9 > power(0.4, 1.0, n - 1, m=6)
    assert seeds_needed(0.0, 1.0) is None and seeds_needed(0.001, 1.0, max_n=500) is None
    assert seeds_needed(100.0, 1.0) == 2 and seeds_needed(10.0, 1.0) == 3 and np.isnan(power(1.0, 1.0, 1))


def test_seeds_needed_from_a_large_pilot_is_close_to_the_truth():
    rng = np.random.default_rng(7)
    pilot = rng.normal(0.5, 1.0, size=5000)
    estimated = seeds_needed(abs(pilot.mean()), pilot.std(ddof=1))
    assert abs(estimated - seeds_needed(0.5, 1.0)) <= 0.1 * 34


# --------------------------------------------------------------------------- field vs full-league, known effect
SKILL = {"bot:ref": 0.0, "cand:strong": 12.0, "cand:weak": 0.0}  # season points over the reference
LUCK, NOISE = 60.0, 8.0  # seat/seed luck (schedule, slot, opponents) vs what the agent's own play adds


def _field_seat(rng, seeds):
    """Field mode: every candidate plays the same seat on the same seed, so the seat's luck is shared."""
    rows = []
    for s in seeds:
        luck = rng.normal(0, LUCK)
        for agent, skill in SKILL.items():
            rows.append({"agent": agent, "seed": s, "run_id": f"{agent}-{s}", "points_for": 1400 + luck + skill
                         + rng.normal(0, NOISE), "is_reference": agent == "bot:ref", "ranked": True})
    return pd.DataFrame(rows)


def _full_league_diffs(rng, n):
    """Full league: the two candidates sit in different seats of one league, each with its own luck."""
    strong = 1400 + rng.normal(0, LUCK, n) + SKILL["cand:strong"] + rng.normal(0, NOISE, n)
    weak = 1400 + rng.normal(0, LUCK, n) + SKILL["cand:weak"] + rng.normal(0, NOISE, n)
    return strong - weak


MANIFEST = field_record.Manifest(name="synthetic", seat="Seat", reference="bot:ref", reference_dir="runs/bot-ref",
                          candidates={a: field_record.candidate_dir(a) for a in SKILL}, seeds=list(range(200)))


def test_field_mode_needs_fewer_seeds_than_a_full_league():
    rng = np.random.default_rng(14)
    scores = field.duplicate_scores(_field_seat(rng, range(200)), MANIFEST)
    vr = field.variance_reduction(scores).set_index("agent")
    # raw var = luck + noise; the duplicate score keeps only the two noises: vrf_raw ~ (60^2 + 8^2) / (2 * 8^2) =
    # 28.6; against two independent leagues the comparison's variance is twice the raw one: vrf_pairing ~ 57
    assert 18 < vr.loc["cand:strong", "vrf_raw"] < 42 and vr.loc["bot:ref", "is_reference"]
    assert 40 < vr.loc["cand:strong", "vrf_pairing"] < 80
    g = scores[scores["agent"] == "cand:strong"]
    ref = scores[scores["agent"] == "bot:ref"].set_index("seed")["points_for"]
    assert vr.loc["cand:strong", "vrf_pairing"] == pytest.approx(
        (g["points_for"].var() + ref.var()) / g["dup"].var())
    assert vr.loc["cand:strong", "sd_raw_reference"] == pytest.approx(ref.std())
    pw = field.pairwise(scores).set_index(["agent_a", "agent_b"])
    sd_field = pw.loc[("cand:strong", "cand:weak"), "sd_diff"]
    sd_full = _full_league_diffs(rng, 200).std(ddof=1)
    assert sd_field == pytest.approx(NOISE * np.sqrt(2), rel=0.2) and sd_full > 5 * sd_field
    n_field = seeds_needed(SKILL["cand:strong"], sd_field, m=3)
    n_full = seeds_needed(SKILL["cand:strong"], sd_full, m=3)
    assert n_field < 20 < 200 < n_full
    # empirically, at the field design's n: the field's paired test finds the effect, the full league's does not.
    # The field design goes through duplicate_scores and pairwise (pandas, the slow part) 100 times: its power is
    # about 0.87, so 0.75 is 3 standard errors below (a broken pairing or Holm step lands far under it); the
    # full league's test is scipy alone, so 2000 experiments at once (power about 0.03, bound 0.15)
    sims_field, sims_full = 100, 2000
    hits_field = 0
    for _ in range(sims_field):
        sc = field.duplicate_scores(_field_seat(rng, range(n_field)), MANIFEST)
        row = field.pairwise(sc).set_index(["agent_a", "agent_b"]).loc[("cand:strong", "cand:weak")]
        hits_field += row["p_holm"] < 0.05
    full = np.stack([_full_league_diffs(rng, n_field) for _ in range(sims_full)])
    hits_full = int((stats.ttest_1samp(full, 0, axis=1).pvalue < 0.05 / 3).sum())
    assert hits_field / sims_field >= 0.75 and hits_full / sims_full <= 0.15
    # and the analytic power says the same about both designs
    assert power(12.0, sd_field, n_field, m=3) >= 0.8 > 0.2 > power(12.0, sd_full, n_field, m=3)


def test_missing_reference_seed_is_refused():
    seat = _field_seat(np.random.default_rng(0), range(3))
    seat = seat[~((seat["agent"] == "bot:ref") & (seat["seed"] == 2))]
    with pytest.raises(ValueError, match="seed 2: the reference bot:ref's run .* so cand:strong cannot be scored"):
        field.duplicate_scores(seat, MANIFEST)


def test_pairwise_leaves_unranked_agents_out_of_the_family():
    seat = _field_seat(np.random.default_rng(3), range(6))
    seat.loc[seat["agent"] == "cand:weak", "ranked"] = False
    pw = field.pairwise(field.duplicate_scores(seat, MANIFEST))
    assert len(pw) == 1 and pw.attrs["not_ranked"] == ["cand:weak"]
    assert pw.loc[0, "p_holm"] == pytest.approx(pw.loc[0, "p_value"])  # a family of one


def test_a_reference_that_is_not_a_candidate_is_a_yardstick_outside_the_family():
    """The reference's own leagues (``runs/reference``): its pairs keep their p and t-interval, outside Holm."""
    seat = _field_seat(np.random.default_rng(5), range(8)).assign(candidate=lambda d: d["agent"] != "bot:ref")
    pw = field.pairwise(field.duplicate_scores(seat, MANIFEST))
    assert len(pw) == 3 and pw.attrs["outside_family"] == ["bot:ref"]
    fam = pw[pw["in_family"]].iloc[0]
    assert {fam["agent_a"], fam["agent_b"]} == {"cand:strong", "cand:weak"}
    assert fam["p_holm"] == pytest.approx(fam["p_value"])  # m = 1: the candidates' only pair
    yard = pw[~pw["in_family"]]
    assert len(yard) == 2 and yard["p_value"].notna().all() and yard["p_holm"].isna().all()
    assert yard["significant"].isna().all() and (yard["ci_method"] == "t-interval").all()
    # every agent a candidate (the default without the column): the reference's pairs are hypotheses, m = 3
    pw3 = field.pairwise(field.duplicate_scores(seat.drop(columns="candidate"), MANIFEST))
    assert pw3["in_family"].all() and pw3["p_holm"].notna().all()


def test_pairwise_interval_is_the_tests_t_interval_at_any_n():
    """By design not mean_ci's rule (BCa from 20): the interval that matches the test excludes 0 iff p < 0.05."""
    seat = _field_seat(np.random.default_rng(9), range(30))
    pw = field.pairwise(field.duplicate_scores(seat, MANIFEST))
    assert (pw["n"] == 30).all() and (pw["ci_method"] == "t-interval").all()
    for r in pw.itertuples():
        assert (r.ci_low > 0 or r.ci_high < 0) == (r.p_value < 0.05)


def test_seeds_range_spans_the_chi_square_interval_of_the_pilot_sd():
    """At n = 5 the pilot sd's 95% interval is wide: the seeds needed at its ends, as "lo-hi"."""
    effect, sd, n = 10.0, 15.0, 5
    lo_sd = sd * np.sqrt((n - 1) / stats.chi2.ppf(0.975, n - 1))
    hi_sd = sd * np.sqrt((n - 1) / stats.chi2.ppf(0.025, n - 1))
    want = f"{seeds_needed(effect, lo_sd, m=3)}-{seeds_needed(effect, hi_sd, m=3)}"
    got = seeds_range(effect, sd, n - 1, 0.05, 3, 0.8, 10_000)
    assert got == want
    lo, hi = map(int, got.split("-"))
    assert lo < seeds_needed(effect, sd, m=3) < hi and hi > 3 * lo  # very uncertain at 5 seeds
    lo40, hi40 = map(int, seeds_range(effect, sd, 39, 0.05, 3, 0.8, 10_000).split("-"))
    assert hi40 - lo40 < hi - lo  # a larger pilot narrows it
    assert seeds_range(0.0, sd, 4, 0.05, 1, 0.8, 10_000) == "" and seeds_range(effect, np.nan, 4, 0.05, 1, 0.8, 10) == ""
    assert seeds_range(5.0, 15.0, 4, 0.05, 1, 0.8, 100).endswith("-more than 100")


def test_cost_per_seed_from_the_ledger():
    standings = pd.DataFrame({"run_id": ["r1", "r1", "r1", "r2", "r2", "r2", "r1", "r2"],
                              "team": ["A", "B", "C", "A", "B", "C", "D", "D"], "week": 1,
                              "agent": ["llm:x", "bot:adp", "llm:y", "llm:x", "bot:adp", "llm:y", "llm:x", "llm:x"],
                              "points_for": 100.0, "wins": 1, "losses": 0, "ties": 0, "points_against": 90.0,
                              "rank": 1, "seed": 1})
    ledger = pd.DataFrame({"run_id": ["r1", "r1", "r2", "r2", "r1", "r2"], "team": ["A", "D", "A", "D", "C", "C"],
                           "agent": ["llm:x", "llm:x", "llm:x", "llm:x", "llm:y", "llm:y"], "calls": 10,
                           "cost_usd": [1.0, 1.0, 2.0, 2.0, 0.5, 0.5], "unpriced_calls": [0, 0, 0, 0, 0, 3]})
    runs = {"standings": standings, "llm_summary": ledger, "draft_picks": pd.DataFrame(
        {"run_id": standings["run_id"], "team": standings["team"], "agent": standings["agent"], "pick": 1,
         "round": 1})}
    try:
        c = cost_per_seed(runs).set_index("agent")
    except KeyError as exc:  # the synthetic tables lack a column a standings helper needs
        pytest.fail(f"synthetic runs incomplete: {exc}")
    assert c.loc["bot:adp", "cost_per_seed"] == 0
    assert c.loc["llm:x", "cost_per_seed"] == pytest.approx(3.0)  # $6 over 2 runs, two teams per run
    assert np.isnan(c.loc["llm:y", "cost_per_seed"]) and "3 call(s) without a price" in c.loc["llm:y", "cost_note"]
    assert cost_per_seed(runs, field=True).set_index("agent").loc["llm:x", "cost_per_seed"] == pytest.approx(1.5)


def test_power_is_finite_far_in_the_tail():
    """scipy's nct.cdf returns NaN for df 3, nc 11.2 at alpha/6: the power must still be a number (about 0.97)."""
    p = power(203.1, 36.27, 4, m=6)
    assert np.isfinite(p) and 0.95 < p <= 1.0
    assert power(-203.1, 36.27, 4, m=6) == p  # two-sided: the sign of the effect does not matter
