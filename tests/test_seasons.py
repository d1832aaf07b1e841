"""Studies over seasons (issue #29): a batch with ``seasons`` plays one league per season x seed in
runs/<sport>-<season>/, the analysis blocks by season (stratified pair tests, the season-by-agent interaction test,
per-season and pooled tables), ``ffbench power`` plans seasons x seeds, and the masked-vs-unmasked comparison pairs
runs season by season and compares a season before a model's knowledge cutoff with one after it. The statistics
are checked against independent computations (brute-force sign flips, scipy's exact Wilcoxon, hand ANOVA)."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats as sps

from ffbench_lib import cli
from ffbench_lib.analysis import contamination as con
from ffbench_lib.analysis import metrics, power, seasons
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.core import stats
from ffbench_lib.records.run import RunMeta
from ffbench_lib.runs.batch import load_batch, run_batch
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from conftest import built_once
from engine_helpers import REPO

DEMO = REPO / "params" / "demo.yaml"
SHORT = {"weeks": 3, "trades": {"weeks": [2]}}  # every season: three weeks, one trade window


def spec_file(tmp_path, name="study.yaml", **changes) -> str:
    spec = {"name": "study", "base": str(DEMO), "seasons": [2022, 2023, 2024], "seeds": [0, 1],
            "runner": "direct", "workers": 2, "analysis": False, "overrides": SHORT, "out": str(tmp_path / "out")}
    spec.update(changes)
    f = tmp_path / name
    f.write_text(yaml.safe_dump({k: v for k, v in spec.items() if v is not None}, sort_keys=False))
    return str(f)


# --------------------------------------------------------------------------- the spec
@pytest.mark.parametrize("changes, words", [
    ({"seasons": [2022, 2019]}, "seasons[1]: 2019 is no NFL season ffbench has data for; allowed: 2021, 2022"),
    ({"seasons": [2023, 2023]}, "seasons: season 2023 is listed twice"),
    ({"seasons": {"fpl": [2024, "2024-25"]}, "base": {"fpl": str(REPO / "params" / "fpl_draft.yaml")}},
     "seasons.fpl[1]: '2024-25' is seasons.fpl[0] again (2024-25); list each season once"),
    ({"seasons": [True]}, "seasons[0]: True is no season; give a year (2024)"),
    ({"seasons": []}, "seasons: lists no season"),
    ({"seasons": {"nfl": [2023], "fpl": ["2024-25"]}}, "base: seasons lists 2 sports (nfl, fpl) but base is one "
                                                       "league file; give one per sport"),
    ({"base": {"nfl": str(DEMO)}, "seasons": [2023]}, "base: one league file per sport needs seasons per sport"),
    ({"base": {"nfl": str(DEMO)}, "seasons": {"nfl": [2023], "fpl": ["2024-25"]}}, "base: no league file for fpl"),
    ({"base": {"fpl": str(DEMO)}, "seasons": {"fpl": ["2024-25"]}}, "base.fpl: demo.yaml is a nfl league, but its "
                                                                     "seasons are listed under fpl"),
    ({"seasons": {"fpl": ["2024-25"]}}, "base: demo.yaml is a nfl league, but its seasons are listed under fpl"),
    ({"seasons": {"fpl": ["2019-20"]}, "base": {"fpl": str(REPO / "params" / "fpl_draft.yaml")}},
     "seasons.fpl[0]: '2019-20' is no Premier League season ffbench has data for; allowed: 2021-22"),
    ({"seasons": {"fpl": ["2024-2025"]}, "base": {"fpl": str(REPO / "params" / "fpl_draft.yaml")}},
     "seasons.fpl[0]: '2024-2025' is no Premier League season"),
    ({"overrides": {**SHORT, "season": 2023}}, "overrides: sets `season`, which the batch sets from its `seasons`"),
    ({"seed_overrides": {1: {"season": 2023}}}, "seed_overrides: seed(s) 1 set `season`"),
    ({"design": "field", "field": {"candidates": [{"kind": "bot", "strategy": "adp"},
                                                  {"kind": "bot", "strategy": "vorp"}]},
      "base": {"nfl": str(DEMO), "fpl": str(REPO / "params" / "fpl_draft.yaml")},
      "seasons": {"nfl": [2024], "fpl": ["2024-25"]}}, "seasons: a field batch plays one base league, so one sport"),
    ({"overrides": {"weeks": 3, "trades": {"weeks": [7]}}}, "seasons (nfl-2022, with the overrides): trades.weeks"),
])
def test_bad_study_specs_name_the_field_and_the_fix(tmp_path, capsys, changes, words):
    f = spec_file(tmp_path, **changes)
    with pytest.raises(ConfigError) as err:
        load_batch(f)
    assert words in str(err.value)
    capsys.readouterr()
    code = cli.main(["batch", f])
    out = capsys.readouterr()
    assert code == 2 and words in out.err and "Traceback" not in out.err + out.out


def test_a_study_out_refuses_a_batch_without_seasons_and_back(tmp_path):
    out = tmp_path / "out"
    (out / "runs" / "nfl-2023" / "seed-0").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"holds runs of a study over seasons"):
        load_batch(spec_file(tmp_path, seasons=None))
    (out / "runs" / "seed-0").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"holds runs of a batch without seasons"):
        load_batch(spec_file(tmp_path))


# --------------------------------------------------------------------------- the study, end to end
@pytest.fixture(scope="module")
def study(data_dir, tmp_path_factory):
    """3 synthetic seasons x 2 seeds of the 10 demo bots (3 weeks each), one batch with notebook 08; played once."""
    def build(root):
        f = spec_file(root, analysis=["08_model_comparison"])
        summary = run_batch(f, progress=False)
        assert summary["complete"] == 6 and summary["analysis"] == {"08_model_comparison": "ok"}, summary
        (root / "spec").write_text(f)

    return built_once(tmp_path_factory, "season-study", build)


def test_a_study_plays_every_season_and_seed_in_its_own_folder(study):
    out = study / "out"
    table = pd.read_csv(out / "batch_runs.csv", dtype={"season": str})
    assert list(table.columns[:4]) == ["sport", "season", "seed", "status"]
    assert list(zip(table["season"], table["seed"])) == [(s, k) for k in (0, 1) for s in ("2022", "2023", "2024")]
    assert (table["sport"] == "nfl").all() and (table["status"] == "complete").all()
    prints = {}
    for r in table.itertuples():
        run = out / "runs" / f"nfl-{r.season}" / f"seed-{r.seed}"
        meta = RunMeta.read(run / "run.json")
        cfg = yaml.safe_load((run / "config.yaml").read_text())
        assert meta.season == cfg["season"] == int(r.season) and meta.seed == cfg["seed"] == r.seed
        assert (out / "configs" / f"nfl-{r.season}" / f"seed-{r.seed}.yaml").is_file()
        assert (out / "notebooks" / f"nfl-{r.season}" / f"seed-{r.seed}.log").is_file()
        prints.setdefault(r.season, set()).add(meta.data_fingerprint)
    assert all(len(v) == 1 for v in prints.values()) and len(set.union(*prints.values())) == 3  # 3 seasons' data
    summary = json.loads((out / "batch_summary.json").read_text())
    assert summary["seasons"] == ["nfl-2022", "nfl-2023", "nfl-2024"]
    again = run_batch((study / "spec").read_text(), progress=False)  # the same spec again: every run reused
    assert again["complete"] == 6 and pd.read_csv(out / "batch_runs.csv")["skipped"].all()


def test_per_season_tables_are_the_runs_own_numbers(study):
    data = metrics.load_runs(study / "out")
    assert seasons.strata(data) == ["nfl-2022", "nfl-2023", "nfl-2024"] and seasons.is_study(data)
    assert metrics.describe_sample(data) == "6 runs over seasons 2022, 2023, 2024"
    table = seasons.season_table(data, "points_for")
    hand = []  # straight from each run's standings.parquet: the last week's points_for, mean over an agent's teams
    for run in sorted((study / "out" / "runs").glob("nfl-*/seed-*")):
        st = pd.read_parquet(run / "standings.parquet")
        last = st[st["week"] == st["week"].max()]
        hand.append(last.groupby("agent")["points_for"].mean().rename(run.parent.name))
    hand = pd.concat(hand, axis=1)
    for stratum in ("nfl-2022", "nfl-2023", "nfl-2024"):
        mine = table[table["stratum"] == stratum].set_index("agent")["mean"]
        expect = hand[[c for c in hand.columns if c == stratum]].mean(axis=1)
        assert np.allclose(mine.sort_index(), expect.sort_index())
        assert (table.loc[table["stratum"] == stratum, "runs"] == 2).all()
    pooled = table[table["stratum"] == "pooled"].set_index("agent")
    assert np.allclose(pooled["mean"].sort_index(), hand.mean(axis=1).sort_index())
    assert (pooled["runs"] == 6).all()
    text = seasons.verdict(data, "win_rate")
    assert "blocked by season (3 strata: nfl-2022, nfl-2023, nfl-2024; up to 6 runs per pair)" in text
    assert "Beyond these seasons" in text
    assert "Season x agent interaction" in text


def test_notebook_and_power_plan_the_study(study, capsys, tmp_path):
    analysis = study / "out" / "analysis"
    by = pd.read_csv(analysis / "by_season_win_rate.csv")
    assert {"nfl-2022", "nfl-2023", "nfl-2024", "pooled"} <= set(by["stratum"])
    assert (analysis / "by_season_win_rate.png").is_file() and (analysis / "power_seasons.csv").is_file()
    nb = json.loads((analysis / "08_model_comparison.ipynb").read_text())
    said = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "blocked by season" in said and "seasons x seeds (pilot: 3 seasons" in said
    capsys.readouterr()
    code = cli.main(["power", str(study / "out"), "--out", str(tmp_path / "p.csv")])
    out = capsys.readouterr().out
    assert code == 0 and "plan the study with seasons" in out and "sd between" in out
    plan = pd.read_csv(tmp_path / "p_seasons.csv")
    assert {"sd_between", "sd_within", "naive_understates", "seeds_at_5_seasons"} <= set(plan.columns)
    single = metrics.load_runs([study / "out" / "runs" / f"nfl-{y}" / "seed-0" for y in (2022, 2023, 2024)])
    plan1 = power.season_plan(single)  # one seed per season: no within-season variance, so no plan
    assert plan1["seeds_at_5_seasons"].isna().all() and plan1["note"].str.startswith("one seed per season").all()
    assert "   -   " in power.format_season_plan(plan1)
    one = metrics.load_runs(sorted((study / "out" / "runs" / "nfl-2024").glob("seed-*")))
    with pytest.raises(ValueError, match=r"one season \(nfl-2024\): a seasons x seeds plan needs a pilot over 2"):
        power.season_plan(one)


# --------------------------------------------------------------------------- the statistics
def _brute_stratified_p(d, strata) -> float:
    """Every sign pattern of the stratified statistic, enumerated (the definition, written again: ranks within a
    season, each season's weight 1 / (n (n + 1)))."""
    d, strata = np.asarray(d, float), list(strata)
    score = np.zeros(len(d))
    for s in set(strata):
        idx = [i for i, x in enumerate(strata) if x == s]
        ranks = sps.rankdata(np.abs(d[idx]))
        for j, i in enumerate(idx):
            score[i] = ranks[j] / (len(idx) * (len(idx) + 1))
    observed = abs(np.sum(np.sign(d) * score))
    hits = sum(abs(np.dot(signs, score)) >= observed - 1e-12 for signs in itertools.product((-1, 1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_the_stratified_test_is_exact_and_one_stratum_is_wilcoxon():
    rng = np.random.default_rng(3)
    for _ in range(5):
        d = np.round(rng.normal(0.6, 1.0, 9), 3)
        strata = ["a"] * 3 + ["b"] * 4 + ["c"] * 2
        res = stats.stratified_signed_rank(d, strata)
        assert res["p_value"] == pytest.approx(_brute_stratified_p(d, strata))
        one = stats.stratified_signed_rank(d, ["x"] * 9)
        assert one["p_value"] == pytest.approx(sps.wilcoxon(d, method="exact").pvalue)
    assert stats.stratified_signed_rank([1, 2, 3, 4], list("aabb"))["p_value"] == pytest.approx(2 / 2 ** 4)
    # every season counts once: 12 seeds ahead in one season against three seasons of 2 seeds behind
    once = stats.stratified_signed_rank([5] * 12 + [-5] * 6, ["A"] * 12 + ["B"] * 2 + ["C"] * 2 + ["D"] * 2)
    assert once["statistic"] == pytest.approx(0.5 - 3 * 0.5)
    assert stats.stratified_signed_rank([0, 0, 3], list("aab"))["p_value"] == 1.0  # one non-zero difference
    scale = stats.stratified_signed_rank([1, 2, -3, 1000, 2000, -3000], list("aaabbb"))
    assert scale["p_value"] == pytest.approx(stats.stratified_signed_rank([1, 2, -3, 1, 2, -3], list("aaabbb"))
                                             ["p_value"])  # ranks within a season: its scale does not count


def _profiles(rng, flip: bool, seasons_=("s1", "s2", "s3"), runs=4) -> tuple[pd.DataFrame, dict]:
    rows, where = [], {}
    for s in seasons_:
        for r in range(runs):
            rid = f"{s}-{r}"
            where[rid] = s
            means = [3, 2, 1] if not (flip and s == "s3") else [1, 2, 3]
            for agent, mu in zip("ABC", means):
                rows.append({"run_id": rid, "agent": agent, "v": mu + rng.normal(0, 0.6)})
    return pd.DataFrame(rows), where


def test_pairs_use_the_runs_both_agents_played_and_the_tests_own_direction():
    rows, where = [], {}
    for season in ("s1", "s2", "s3"):
        for r in range(4):
            rid = f"{season}-{r}"
            where[rid] = season
            rows += [{"run_id": rid, "agent": "A", "v": 10.0 + r}, {"run_id": rid, "agent": "B", "v": 5.0 + r}]
            if season != "s3":  # C never played s3
                rows.append({"run_id": rid, "agent": "C", "v": 1.0})
    out = stats.stratified_pairs(pd.DataFrame(rows), "v", where).set_index(["agent_a", "agent_b"])
    assert out.loc[("A", "B"), "n_runs"] == 12 and out.loc[("A", "B"), "n_strata"] == 3  # not cut to C's seasons
    assert out.loc[("A", "C"), "strata_tested"] == ["s1", "s2"]
    assert out.loc[("A", "B"), "p_seasons"] == 0.0  # every season +5: a sure sign, beyond these seasons too
    # one blowout season ahead, four seasons behind: the test says behind, and so does the verdict's direction
    blow = pd.DataFrame([{"run_id": f"{k}-{r}", "agent": a, "v": v} for k, gap in zip("pqrst", (300, -10, -10, -10, -10))
                         for r in range(2) for a, v in (("X", gap), ("Y", 0.0))])
    res = stats.stratified_pairs(blow, "v", {f"{k}-{r}": k for k in "pqrst" for r in range(2)}).iloc[0]
    assert res["mean_diff"] > 0 and res["direction"] == -1 and not res["agrees"]
    assert stats.season_level([1.0]) == (pytest.approx(np.nan, nan_ok=True), 1)


def test_the_interaction_test_finds_a_reversed_season_and_holds_its_level():
    rng = np.random.default_rng(0)
    df, where = _profiles(rng, flip=True)
    flipped = stats.interaction(df, "v", where)
    assert flipped["p_value"] < 0.01 and flipped["min_spearman"] < 0
    rejected = 0
    for k in range(60):  # no interaction: the permutation test rejects about 5% (seeded: deterministic)
        df, where = _profiles(np.random.default_rng(100 + k), flip=False)
        rejected += stats.interaction(df, "v", where, n_resamples=499, seed=k)["p_value"] < 0.05
    assert rejected <= 8  # binomial(60, 0.05): P(X > 8) < 0.01
    few = stats.interaction(df[df["run_id"].isin(["s1-0", "s2-0", "s3-0"])], "v", where)
    assert np.isnan(few["p_value"]) and "2 or more complete runs each" in few["note"]


def test_variance_components_and_the_study_power():
    vc = stats.variance_components([1, 2, 1, 2, 5, 6, 5, 6], list("aaaabbbb"))
    # hand one-way ANOVA: MSW = 4 * 0.25 * 2 / 6 = 1/3; MSB = 4 * 2^2 * 2 / 1 = 32; between = (32 - 1/3) / 4
    assert vc["within"] == pytest.approx(1 / 3) and vc["between"] == pytest.approx((32 - 1 / 3) / 4)
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(400), 5)
    season = rng.normal(0, 2, 400)
    x = season[labels] + rng.normal(0, 1, len(labels))
    big = stats.variance_components(x, labels)
    means = pd.Series(x).groupby(labels).mean()
    # balanced: between = var(season means) - within / seeds, and near the spread the seasons were drawn with
    assert big["between"] == pytest.approx(means.var(ddof=1) - big["within"] / 5)
    assert big["between"] == pytest.approx(np.var(season, ddof=1), rel=0.1) and big["within"] == pytest.approx(1, rel=0.1)
    assert stats.study_power(1.0, 0.0, 4.0, 5, 4) == pytest.approx(stats.power(1.0, 1.0, 5))
    need = stats.study_seeds_needed(1.0, 0.05, 4.0, 6)
    assert need is not None and stats.study_power(1.0, 0.05, 4.0, 6, need) >= 0.8 > stats.study_power(
        1.0, 0.05, 4.0, 6, need - 1)
    assert stats.study_seeds_needed(1.0, 2.0, 4.0, 3) is None  # the seasons alone differ too much for 3 seasons


# --------------------------------------------------------------------------- two sports in one study
def test_a_study_over_two_sports_runs_as_one_batch(real_data_dir, fpl_data_dir, tmp_path):
    f = spec_file(tmp_path, base={"nfl": str(DEMO), "fpl": str(REPO / "params" / "fpl_draft.yaml")},
                  seasons={"nfl": [2024], "fpl": ["2024-25"]},
                  agents=yaml.safe_load((REPO / "params" / "batch_mixed.yaml").read_text())["agents"])
    summary = run_batch(f, progress=False)
    assert summary["complete"] == 4 and summary["seasons"] == ["nfl-2024", "fpl-2024-25"], summary
    table = pd.read_csv(tmp_path / "out" / "batch_runs.csv", dtype={"season": str})
    assert list(zip(table["sport"], table["season"])) == [("nfl", "2024"), ("fpl", "2024-25")] * 2
    data = metrics.load_runs(tmp_path / "out")
    assert metrics.describe_sample(data) == "4 runs over seasons fpl 2024-25, nfl 2024"
    t = seasons.season_table(data, "points_for")
    assert {"pooled fpl", "pooled nfl", "pooled (ranks)"} <= set(t["stratum"])  # points pool per sport only
    assert t.loc[t["stratum"] == "pooled (ranks)", "mean"].isna().all()
    assert "blocked by season (2 strata" in seasons.verdict(data, "win_rate")


# --------------------------------------------------------------------------- contamination across seasons
def _llm_league(api_base, cache, season, seed, masking):
    d = yaml.safe_load(DEMO.read_text())
    d["teams"] = d["teams"][:4]
    d["teams"][0] = {"name": "M0", "agent": {"kind": "llm", "model": "openai/fake-model-0", "api_base": api_base,
                                             "timeout_s": 5.0, "max_tokens": 2000, "knowledge_cutoff": "2024-06"}}
    d.update(season=season, seed=seed, weeks=2, trades={"weeks": []}, information={"masking": masking},
             llm={"backoff_s": 0.01, "retries": 0, "max_reasks": 0, "cache_dir": str(cache)})
    return d


@pytest.mark.slow
def test_masked_twins_pair_by_season_and_split_at_the_cutoff(data_dir, tmp_path, monkeypatch):
    from ffbench_lib.runs.season import run_season
    from ffbench_lib.config.load import parse_config

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer() as srv:
        for season in (2023, 2024):  # 2023 ended before the cutoff (2024-06), 2024 after it
            for seed in (0, 1):
                for masking in ("off", "players_and_teams"):
                    league = parse_config(_llm_league(srv.api_base, tmp_path / "cache", season, seed, masking))
                    run_season(league, out=tmp_path / masking / f"nfl-{season}" / f"seed-{seed}", progress=False)
    res = con.compare(tmp_path / "off", tmp_path / "players_and_teams")
    paired = res["paired"]
    assert paired.season is None and paired.seasons == ["nfl-2023", "nfl-2024"] and len(paired.pairs) == 4
    seeds = res["seeds"]
    assert set(seeds["season"]) == {"nfl-2023", "nfl-2024"}
    when = con.cutoff_seasons(paired).set_index("season")["when"]
    assert when.to_dict() == {"nfl-2023": con.BEFORE, "nfl-2024": con.AFTER}
    [row] = res["cutoff"].itertuples()
    mine = seeds[seeds["agent"] == "llm:openai/fake-model-0"]
    before = mine.loc[mine["season"] == "nfl-2023", "points_diff"].mean()
    after = mine.loc[mine["season"] == "nfl-2024", "points_diff"].mean()
    assert row.memory_effect == pytest.approx(before - after) and (row.n_before, row.n_after) == (1, 1)
    assert np.isnan(row.p_value) and "not testable with fewer than 2 seasons on a side" in row.test
    assert any("knowledge cutoff 2024-06" in r for r in res["verdict"].reasons)
    assert set(res["by_season"]["season"]) == {"nfl-2023", "nfl-2024"}
    with pytest.raises(con.ContaminationError, match=r"unpaired seeds: only unmasked nfl-2024 seed 1, only masked "
                                                     r"none; every seed needs one unmasked and one masked run of "
                                                     r"its season"):
        con.load_pairs(tmp_path / "off", [p for p in (tmp_path / "players_and_teams").glob("nfl-*/seed-*")
                                          if p.parts[-2:] != ("nfl-2024", "seed-1")])


# --------------------------------------------------------------------------- a field study
def test_a_field_study_pairs_candidates_within_each_season_and_seed(data_dir, tmp_path):
    from ffbench_lib.analysis import field
    from ffbench_lib.records.field import read_manifest

    bots = [{"kind": "bot", "strategy": s} for s in ("adp", "vorp", "random")]
    f = spec_file(tmp_path, seasons=[2023, 2024], design="field", field={"candidates": bots},
                  analysis=["08_model_comparison"])
    summary = run_batch(f, progress=False)
    assert summary["complete"] == 12 and summary["analysis"] == {"08_model_comparison": "ok"}, summary
    out = tmp_path / "out"
    manifest = read_manifest(out)
    assert manifest.seasons == ["nfl-2023", "nfl-2024"] and manifest.reference == "bot:vorp"  # VORP-1's own agent
    table = pd.read_csv(out / "batch_runs.csv", dtype={"season": str})
    assert list(table.columns[:4]) == ["candidate", "sport", "season", "seed"] and len(table) == 12
    assert (out / "runs" / "bot-adp" / "nfl-2023" / "seed-1" / "run.json").is_file()
    fr = field.load(out)
    seat = field.seat_results(fr.runs, fr.manifest, fr.folder)
    assert set(zip(seat["season"], seat["seed"])) == {(s, k) for s in ("nfl-2023", "nfl-2024") for k in (0, 1)}
    scores = field.duplicate_scores(seat, fr.manifest)
    for r in scores.itertuples():  # the reference's seat in the same season and seed, from its standings.parquet
        st = pd.read_parquet(out / "runs" / "bot-vorp" / r.season / f"seed-{r.seed}" / "standings.parquet")
        last = st[(st["week"] == st["week"].max()) & (st["team"] == fr.manifest.seat)]
        assert r.reference_value == pytest.approx(float(last["points_for"].iloc[0]))
    pw = field.pairwise(scores)
    assert (pw["n"] == 4).all()  # 2 seasons x 2 seeds: four blocks, never a seed of one season against another's
    assert "2 seeds x 2 seasons (2023, 2024): 4 blocks" in field.describe_blocks(fr.runs)
    text = seasons.verdict(fr.runs, "points_for")
    assert "blocked by season (2 strata: nfl-2023, nfl-2024; up to 4 blocks" in text
    nb = json.loads((out / "analysis" / "08_model_comparison.ipynb").read_text())
    said = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "duplicate score (dup) = the seat's points_for minus the reference's" in said
    assert "blocked by season (2 strata: nfl-2023, nfl-2024; up to 4 blocks" in said
