"""The masked vs unmasked ablation (ffbench_lib.analysis.contamination, notebooks/09_contamination.ipynb): real bot seasons
of 2024 and their masked twins paired by seed, the verdict's rules on constructed numbers, the refusals, and the
batch ``overrides`` that makes a masked twin."""
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import papermill as pm
import pytest
import yaml
from scipy import stats as sps

from ffbench_lib import cli
from ffbench_lib.analysis import contamination as con
from ffbench_lib.present import plots
from ffbench_lib.runs.batch import load_batch, run_configs
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import Information, League
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.llm import FatalLLMError
from ffbench_lib.runs.notebooks import KERNEL_ARGS, NotebookError, execute
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from conftest import built_once
from engine_helpers import REPO, demo_league, run_engine
from project_copy import OVERRIDES, copy_project


SEEDS = range(6)
MASKED = Information(masking="players_and_teams")


def short_league(seed: int, weeks: int = 3, information: Information = Information()) -> League:
    """The demo league cut to ``weeks`` weeks, validated (its stored config.yaml must read back: a config that
    does not is refused), trades in week 2."""
    d = demo_league().model_dump(mode="json") | {"seed": seed, "weeks": weeks,
                                                 "information": information.model_dump(mode="json")}
    d["trades"]["weeks"] = [2]
    return League.model_validate(d)


@pytest.fixture(scope="module")
def twins(prepared_2024, tmp_path_factory):
    """Six short seasons of the 10 demo bots and their masked twins (same league and seeds), played once per test
    run (built_once: every xdist worker running a test of this file reads the same folder; read, never written)."""
    def build(root):
        for seed in SEEDS:
            run_engine(short_league(seed), prepared_2024, root / "unmasked" / f"seed-{seed}")
            run_engine(short_league(seed, information=MASKED), prepared_2024, root / "masked" / f"seed-{seed}")

    return built_once(tmp_path_factory, "contamination-twins", build)


def hand_points(run: Path) -> pd.Series:
    """Regular-season points for per agent (mean over its teams), straight from standings.parquet."""
    st = pd.read_parquet(run / "standings.parquet")
    last = st[st["week"] == st["week"].max()]
    return last.groupby("agent")["points_for"].mean()


def test_real_masked_twins_are_paired_and_compared(twins, tmp_path):
    res = con.compare(twins / "unmasked", twins / "masked")
    pairs = res["paired"].pairs
    assert list(pairs["seed"]) == list(SEEDS) and res["paired"].masking == "players_and_teams"
    assert res["paired"].season == 2024 and pairs["same_code"].all()
    assert not any("versions of the ffbench code" in r for r in res["verdict"].reasons)
    seeds = res["seeds"]
    assert len(seeds) == 6 * 4 and set(seeds["agent"]) == {"bot:adp", "bot:vorp", "bot:recent_form", "bot:random"}
    for seed in SEEDS:  # masked - unmasked, computed independently from the parquet files
        diff = hand_points(twins / "masked" / f"seed-{seed}") - hand_points(twins / "unmasked" / f"seed-{seed}")
        mine = seeds[seeds["seed"] == seed].set_index("agent")["points_diff"]
        assert np.allclose(mine.reindex(diff.index), diff)
    ch = res["changes"].set_index("agent")
    assert (ch["n"] == 6).all()
    assert np.allclose(ch["mean_diff"], seeds.groupby("agent")["points_diff"].mean().reindex(ch.index))
    assert ((ch["ci_low"] <= ch["mean_diff"] + 1e-9) & (ch["mean_diff"] <= ch["ci_high"] + 1e-9)).all()
    changed = seeds.groupby("agent")["points_diff"].apply(lambda d: int((d != 0).sum()))
    for agent, k in changed.items():  # which paired test, said per agent
        expected = "Wilcoxon" if k >= 6 else ("none" if k == 0 else "paired t-test")
        assert ch.loc[agent, "test"].startswith(expected), (agent, k, ch.loc[agent, "test"])
    assert (res["win_share"]["n"] == 6).all() and res["win_share"]["mean_diff"].abs().max() <= 1
    ag = res["agreement"]
    assert ag["n_agents"] == 4 and -1 <= ag["tau"] <= 1 and sorted(ag["unmasked_order"]) == sorted(ag["masked_order"])
    # bots decide on real views even in masked mode (Agent.masked_views), so bot-only twins play the same seasons:
    # no change at all, which 6 seeds establish (every t-interval is [0, 0], inside the band)
    assert (seeds["points_diff"] == 0).all() and (res["win_share"]["mean_diff"] == 0).all()
    assert (ch[["ci_low", "ci_high"]] == 0).all().all() and ch["p_holm"].isna().all()  # bots: the control, no Holm
    for agent, g in seeds.groupby("agent"):
        assert ch.loc[agent, ["ci_low", "ci_high"]].tolist() == pytest.approx(hand_t_interval(g["points_diff"]))
    v = res["verdict"]
    assert v.status == "trusted" and v.headline.startswith("Trusted: on 6 paired seeds every agent's 95% CI"), v
    five = con.compare(*([twins / side / f"seed-{s}" for s in range(5)] for side in ("unmasked", "masked")))
    assert five["verdict"].status == "cannot tell" and "but on only 5 paired seeds" in five["verdict"].headline
    plots.save(plots.contamination_figure(seeds, res["changes"]), tmp_path, "contamination")
    assert (tmp_path / "contamination.png").stat().st_size > 10_000 and (tmp_path / "contamination.svg").exists()


def texts(nb: Path) -> str:
    cells = json.loads(nb.read_text())["cells"]
    return " ".join("".join(t) if isinstance(t, list) else t for c in cells for o in c.get("outputs", [])
                    for t in [o.get("text", "")] + [o.get("data", {}).get(k, "") for k in ("text/plain",
                                                                                          "text/markdown")])


@pytest.mark.slow
def test_notebook_executes_under_papermill(twins, tmp_path, monkeypatch):
    """As a newcomer opens it: a project copy whose demo batch and masked twin are in outputs/batches, the kernel
    started in notebooks/, parameters at their defaults but a relative probe folder."""
    project = copy_project(tmp_path / "ffbench")
    shutil.copytree(twins / "unmasked", project / "outputs" / "batches" / "demo" / "runs")
    shutil.copytree(twins / "masked", project / "outputs" / "batches" / "demo_masked" / "runs")
    probe = project / "outputs" / "probe"
    probe.mkdir()
    (probe / "probe.json").write_text(json.dumps({"season": 2024, "sample_size": 40, "models": [
        {"model": "openai/x", "agent_id": "llm:openai/x", "recall_advantage": 12.5, "ci_low": 4.0, "ci_high": 20.0,
         "n": 40, "coverage": 1.0, "top5_hits_model": 15, "top5_hits_projection": 9, "remembers": True,
         "verdict": "openai/x remembers the 2024 season"}]}))
    for k in OVERRIDES:
        monkeypatch.delenv(k, raising=False)
    nb = tmp_path / "09.ipynb"
    pm.execute_notebook(str(project / "notebooks" / "09_contamination.ipynb"), str(nb), kernel_name="python3",
                        parameters={"probe": "outputs/probe"}, cwd=str(project / "notebooks"), progress_bar=False,
                        execution_timeout=600, extra_arguments=KERNEL_ARGS)
    cells = json.loads(nb.read_text())["cells"]
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not (project / "notebooks" / "outputs").exists()
    shown = texts(nb)
    verdict = con.compare(twins / "unmasked", twins / "masked", probe)["verdict"]
    assert f"**{verdict.headline}**" in shown  # the verdict as markdown, as the library words it
    assert "6 paired seeds of season 2024 (masking: players_and_teams)" in shown
    assert "The probe also covers llm:openai/x, which played none of these runs." in shown
    assert "Kendall's tau" in shown and "PosixPath(" not in shown
    out = project / "outputs" / "analysis"
    points = pd.read_csv(out / "contamination_points.csv")
    assert set(points["agent"]) == {"bot:adp", "bot:vorp", "bot:recent_form", "bot:random"}
    assert {"mean_diff", "ci_low", "ci_high", "test", "p_value", "p_holm", "probe_remembers"} <= set(points.columns)
    assert len(pd.read_csv(out / "contamination_per_seed.csv")) == 24
    assert len(pd.read_csv(out / "contamination_ranks.csv")) == 4
    assert (out / "contamination.png").stat().st_size > 10_000 and (out / "contamination.svg").exists()
    with pytest.raises(NotebookError, match=r"unpaired seeds: only unmasked \[5\]"):  # one line, no traceback
        execute("09_contamination.ipynb", tmp_path / "09-bad.ipynb",
                {"unmasked": str(twins / "unmasked"), "masked": [str(twins / "masked" / f"seed-{s}") for s in range(5)],
                 "out": str(tmp_path / "bad")}, timeout_s=600)


# --------------------------------------------------------------------------- the verdict on constructed numbers
AGENTS = {"llm:openai/x": 1500.0, "bot:vorp": 1450.0, "bot:adp": 1400.0}


def constructed(n: int, change: dict[str, list[float]]) -> pd.DataFrame:
    """Per-seed frame as per_seed returns it: unmasked points with a little seed-to-seed spread, masked = unmasked
    times (1 + the agent's relative change in that seed)."""
    rows = []
    for seed in range(n):
        for agent, base in AGENTS.items():
            u = base + 10 * ((seed * 7 + len(agent)) % 5 - 2)
            m = u * (1 + change.get(agent, [0.0] * n)[seed])
            rows.append({"seed": seed, "agent": agent, "points_unmasked": u, "points_masked": m,
                         "points_diff": m - u, "win_rate_unmasked": 0.5, "win_rate_masked": 0.5, "win_rate_diff": 0.0})
    return pd.DataFrame(rows)


def judge(seeds: pd.DataFrame, probe: pd.DataFrame | None = None) -> con.Verdict:
    return con.verdict(con.with_probe(con.paired_changes(seeds), probe), con.rank_agreement(seeds))


PROBE = pd.DataFrame([{"agent": "llm:openai/x", "probe_recall_advantage": 15.0, "probe_ci_low": 8.0,
                       "probe_ci_high": 22.0, "probe_n": 40, "probe_remembers": True, "probe_verdict": "remembers"}])


def hand_t_interval(d) -> tuple[float, float]:
    """mean +- t(0.975, n-1) * sd / sqrt(n), by hand."""
    d = np.asarray(d, dtype=float)
    half = sps.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def test_six_seeds_of_a_clear_drop_are_not_trusted():
    """The minimum of 6 seeds must be able to say "not trusted": Wilcoxon's smallest p there is 0.031, too big after
    Holm over several agents, so the verdict rests on each agent's t-interval against the band instead."""
    drop = [-0.12, -0.121, -0.119, -0.122, -0.118, -0.12]
    seeds = constructed(6, {"llm:openai/x": drop})
    ch = con.paired_changes(seeds).set_index("agent")
    d = seeds[seeds["agent"] == "llm:openai/x"]["points_diff"]
    assert ch.loc["llm:openai/x", ["ci_low", "ci_high"]].tolist() == pytest.approx(hand_t_interval(d))
    assert -184 < ch.loc["llm:openai/x", "ci_low"] < ch.loc["llm:openai/x", "ci_high"] < -173
    # bots are the control, outside the Holm family: the one model's p is its own
    assert ch.loc["llm:openai/x", "p_holm"] == pytest.approx(ch.loc["llm:openai/x", "p_value"]) == 0.03125
    assert ch.loc[["bot:vorp", "bot:adp"], "p_holm"].isna().all()
    v = judge(seeds, PROBE)
    assert v.status == "not trusted", v
    assert v.headline.startswith("Not trusted: x scored less when players and teams were masked, by more than 5% of "
                                 "its unmasked season points (the whole 95% CI lies beyond that band, on 6 paired")
    [reason] = [r for r in v.reasons if r.startswith("llm:openai/x")]
    assert "lower in 6 and higher in 0 of 6 seeds" in reason and "Wilcoxon signed-rank p = 0.0312" in reason
    assert "Holm-corrected over the models 0.0312" in reason
    assert "The probe says it remembers the season (recall advantage +15.0 points" in reason
    assert any("probe (ffbench probe) tells the two apart" in r for r in v.reasons)
    assert v.markdown().startswith("**Not trusted")
    few = judge(constructed(4, {"llm:openai/x": [-0.15, -0.16, -0.14, -0.15]}))  # too few to trust, not to distrust
    assert few.status == "not trusted" and "on 4 paired seeds" in few.headline


def test_equal_seasons_are_trusted_only_on_enough_seeds():
    v = judge(constructed(8, {}), PROBE)  # masking changed nothing at all
    assert v.status == "trusted" and v.headline.startswith(
        "Trusted: on 8 paired seeds every agent's 95% CI of its change in season points when players and teams were "
        "masked lies within ±5% of its unmasked season points (an equivalence test, TOST-like)")
    assert any("remembers the season (probe) but masking does not change its results" in r for r in v.reasons)
    v = judge(constructed(8, {}), PROBE.assign(probe_remembers=False, probe_ci_low=-3.0))
    assert v.status == "trusted" and not any("(probe) but" in r for r in v.reasons)
    assert any("The probe finds no evidence that it remembers the season" in r for r in v.reasons)
    small = [0.01, -0.01, 0.005, -0.005, 0.0, 0.01, -0.01, 0.0]
    assert judge(constructed(8, {a: small for a in AGENTS})).status == "trusted"
    v = judge(constructed(5, {}))  # nothing changed, but 5 seeds cannot establish it
    assert v.status == "cannot tell" and v.headline == (
        "Cannot tell: every agent's 95% CI lies within ±5% of its unmasked season points, but on only 5 paired "
        "seeds, fewer than the 6 needed to trust the unmasked ranking; run more seeds.")
    assert judge(constructed(1, {})).headline == ("Cannot tell: 1 paired seed, fewer than the 6 needed to trust the "
                                                  "unmasked ranking; one seed gives no confidence interval.")


def test_a_significant_change_inside_the_band_is_trusted_and_said():
    steady = [-0.02, -0.025, -0.03, -0.02, -0.01, -0.03, -0.02, -0.025]
    v = judge(constructed(8, {"llm:openai/x": steady}))
    assert v.status == "trusted"
    [reason] = [r for r in v.reasons if r.startswith("llm:openai/x")]
    assert "95% t-interval -42.0 to -25.6" in reason and reason.endswith("a significant change, but smaller than 5%.")


def test_cannot_tell_says_the_true_reason():
    wide = [0.2, -0.2, 0.15, -0.25, 0.2, -0.1, 0.1, -0.2]
    v = judge(constructed(8, {"bot:adp": wide}))  # one agent is enough
    assert v.status == "cannot tell" and v.headline == (
        "Cannot tell: the 95% CI of adp is too wide to rule a change of more than 5% in or out; run more seeds.")
    assert any(r.startswith("bot:adp") and "A bot cannot remember" in r and "a control: outside the Holm family" in r
               for r in v.reasons)
    edge = [-0.02, -0.06, -0.03, -0.08, -0.01, -0.07, -0.04, -0.05]  # CI -98.7 to -36.8 across the -75 edge
    v = judge(constructed(8, {"llm:openai/x": edge}))
    assert v.status == "cannot tell" and v.headline == (
        "Cannot tell: x changed significantly (95% CI excludes 0), but the CI reaches across the edge of the ±5% "
        "band: the change may or may not matter; run more seeds.")
    v = judge(constructed(5, {"llm:openai/x": edge[:5], "bot:adp": wide[:5]}))
    assert v.status == "cannot tell" and "x changed significantly" in v.headline and (
        "the 95% CI of adp is too wide" in v.headline) and v.headline.endswith(
        "run more seeds (5 paired seeds, fewer than the 6 needed to trust the unmasked ranking).")


def test_a_bot_moved_by_masking_is_not_trusted_and_words_follow_the_mode():
    seeds = constructed(6, {"bot:vorp": [0.09, 0.1, 0.11, 0.1, 0.09, 0.1]})
    v = con.verdict(con.paired_changes(seeds), con.rank_agreement(seeds), masking="players")
    assert v.status == "not trusted" and v.headline.startswith(
        "Not trusted: the season points of vorp changed by more than 5% of its unmasked season points when players "
        "were masked") and "a bot cannot remember" in v.headline


def test_paired_test_choice_and_rank_agreement():
    assert con.paired_test([-5.0, -4, -6, -7, -8, -9])[0] == "Wilcoxon signed-rank"
    name, _, p = con.paired_test([-5.0, -4, -6, -7, -8, 0])  # five changed seeds: Wilcoxon could not reject
    assert name.startswith("paired t-test (5 changed seeds") and p < 0.05
    assert con.paired_test([0.0] * 8)[::2] == ("none (no change in any seed)", 1.0)
    assert np.isnan(con.paired_test([3.0])[2])
    seeds = constructed(3, {})
    flipped = seeds.assign(points_masked=seeds["agent"].map({"llm:openai/x": 1, "bot:vorp": 2, "bot:adp": 3}))
    ag = con.rank_agreement(flipped)
    assert ag["tau"] == pytest.approx(-1.0) and ag["masked_order"] == ag["unmasked_order"][::-1]


# --------------------------------------------------------------------------- refusals
def test_refusals_name_the_runs_and_the_fix(twins, prepared_2024, tmp_path):
    u = [twins / "unmasked" / f"seed-{s}" for s in SEEDS]
    m = [twins / "masked" / f"seed-{s}" for s in SEEDS]
    with pytest.raises(con.ContaminationError, match=r"unpaired seeds: only unmasked \[5\], only masked none"):
        con.load_pairs(u, m[:5])
    with pytest.raises(con.ContaminationError, match=r"unmasked: 6 run\(s\) were played masked"):
        con.load_pairs(m, u)
    with pytest.raises(con.ContaminationError, match=r"masked: 6 run\(s\) were played unmasked") as err:
        con.load_pairs(u, u)
    assert str(err.value).endswith("(a batch with overrides: {information: {masking: players_and_teams}})")
    with pytest.raises(con.ContaminationError, match=r"unmasked: no run directories"):
        con.load_pairs(tmp_path / "nothing", m)
    other = tmp_path / "weeks2" / "seed-0"  # the same seed, another league
    run_engine(short_league(0, weeks=2, information=MASKED), prepared_2024, other)
    with pytest.raises(con.ContaminationError, match=r"seed 0: the configs of .* differ in more than the masking "
                                                     r"\(weeks: 3 unmasked, 2 masked\)"):
        con.load_pairs(u, [other, *m[1:]])
    playoffs = tmp_path / "playoffs" / "seed-0"  # both configs read through the League model: defaults compare
    shutil.copytree(u[0], playoffs)
    cfg = yaml.safe_load((playoffs / "config.yaml").read_text())
    (playoffs / "config.yaml").write_text(yaml.safe_dump(cfg | {"playoffs": {"enabled": True, "teams": 2,
                                                                             "round_weeks": [1]}}))
    with pytest.raises(con.ContaminationError, match=r"\(playoffs.enabled: True unmasked, False masked; "
                                                     r"playoffs.teams: 2 unmasked, 4 masked; playoffs.round_weeks: "
                                                     r"\[1\] unmasked, \[1, 2\] masked\)"):
        con.load_pairs([playoffs, *u[1:]], m)
    qb2 = tmp_path / "qb2" / "seed-1"
    shutil.copytree(m[1], qb2)
    cfg = yaml.safe_load((qb2 / "config.yaml").read_text())
    (qb2 / "config.yaml").write_text(yaml.safe_dump(cfg | {"roster": cfg["roster"] | {"QB": 2}}))
    with pytest.raises(con.ContaminationError, match=r"seed 1: .* \(roster.QB: 1 unmasked, 2 masked\)"):
        con.load_pairs(u, [m[0], qb2, *m[2:]])
    future = tmp_path / "future" / "seed-0"  # a config this version cannot read is refused, never half-compared
    shutil.copytree(m[0], future)
    cfg = yaml.safe_load((future / "config.yaml").read_text())
    cfg["information"]["hide_scores"] = True
    (future / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(con.ContaminationError) as err:
        con.load_pairs([playoffs, *u[1:]], [future, *m[1:]])
    assert str(err.value) == (f"masked: {future / 'config.yaml'} is not a league config this ffbench reads "
                              "(information.hide_scores: unknown key (check the spelling against the config reference "
                              "in docs/configuration.md)); its run cannot be compared: re-run it with this version")
    y2023 = tmp_path / "y2023" / "seed-0"
    shutil.copytree(m[0], y2023)  # the same run, said to be of 2023: never paired with 2024
    (y2023 / "config.yaml").write_text((m[0] / "config.yaml").read_text().replace("season: 2024", "season: 2023"))
    # pairs are made within a season (a study pairs season by season): a 2023 run pairs with no 2024 run
    with pytest.raises(con.ContaminationError, match=r"unpaired seeds: only unmasked nfl-2024 seed 0, only masked "
                                                     r"nfl-2023 seed 0; every seed needs one unmasked and one masked "
                                                     r"run of its season"):
        con.load_pairs(u, [y2023, *m[1:]])
    with pytest.raises(con.ContaminationError, match=r"masked: seed 0 appears twice"):
        con.load_pairs(u, [other, *m])
    old = tmp_path / "old" / "seed-0"  # a masked config played by an ffbench without masking
    shutil.copytree(m[0], old)
    (old / "masking.json").unlink()
    with pytest.raises(con.ContaminationError, match=r"masked: 1 run\(s\) have masking set but no masking.json"):
        con.load_pairs(u, [old, *m[1:]])
    newer = tmp_path / "newer" / "seed-0"  # played by another version of the code: compared, and said
    shutil.copytree(m[0], newer)
    meta = json.loads((newer / "run.json").read_text())
    (newer / "run.json").write_text(json.dumps(meta | {"code_fingerprint": "0123456789abcdef"}))
    reasons = con.compare(u, [newer, *m[1:]])["verdict"].reasons
    assert [r for r in reasons if r.startswith("Seed(s) 0: the two runs were played by different versions")]
    with pytest.raises(SimulatedCrash):
        run_engine(short_league(0, information=MASKED), prepared_2024, tmp_path / "partial",
                   crash_after="week:1")
    with pytest.raises(con.ContaminationError, match=r"masked: 1 run\(s\) not complete: .*partial \(running"):
        con.load_pairs(u, [tmp_path / "partial", *m[1:]])


def test_probe_files_are_checked(twins, tmp_path):
    f = tmp_path / "probe.json"
    f.write_text(json.dumps({"season": 2023, "models": []}))
    with pytest.raises(con.ContaminationError, match=r"probed season 2023, the runs played 2024"):
        con.compare([twins / "unmasked" / "seed-0"], [twins / "masked" / "seed-0"], f)  # one pair is enough
    f.write_text(json.dumps({"season": 2024, "models": [{"model": "openai/x"}]}))
    with pytest.raises(con.ContaminationError, match=r"models.0.agent_id: Field required"):
        con.load_probe(f)
    f.write_text("{not json")
    with pytest.raises(con.ContaminationError, match=r"is not JSON"):
        con.load_probe(f)
    with pytest.raises(con.ContaminationError, match=r"probe: .*nope.json not found"):
        con.load_probe(tmp_path / "nope.json")


def llm_league(api_base, cache, seed, masking="off", **llm):
    """Four demo teams for two weeks, the first played by a fake model."""
    d = demo_league().model_dump(mode="json")
    d["teams"] = d["teams"][:4]
    d["teams"][0] = {"name": "M0", "agent": {"kind": "llm", "model": "openai/fake-model-0", "api_base": api_base,
                                             "timeout_s": 5.0, "max_tokens": 2000}}
    d |= {"seed": seed, "weeks": 2, "information": {"masking": masking}}
    d["trades"]["weeks"] = []
    d["llm"] = {"backoff_s": 0.01, "retries": 0, "max_reasks": 0, "cache_dir": str(cache), **llm}
    return League.model_validate(d)


@pytest.mark.slow
def test_runs_the_engine_mostly_played_are_refused(prepared_2024, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(fault_rate=1.0, faults=("empty",)) as srv:
        for masking in ("off", "players_and_teams"):  # no guard: complete, but every LLM decision was repaired
            run_engine(llm_league(srv.api_base, tmp_path / "cache", 0, masking, max_fallback_rate=None),
                       prepared_2024, tmp_path / masking / "seed-0")
        with pytest.raises(FatalLLMError, match="max_fallback_rate"):  # the guard stops this one
            run_engine(llm_league(srv.api_base, tmp_path / "cache", 0, "players_and_teams"), prepared_2024,
                       tmp_path / "guarded" / "seed-0")
    with pytest.raises(con.ContaminationError, match=r"unmasked: the engine repaired more than 25% of the decisions "
                                                     r"of llm:openai/fake-model-0 \(100%\)"):
        con.load_pairs(tmp_path / "off", tmp_path / "players_and_teams")
    with pytest.raises(con.ContaminationError, match=r"masked: 1 run\(s\) not complete: .*stopped by the fallback "
                                                     r"guard"):
        con.load_pairs(tmp_path / "off", tmp_path / "guarded")


# --------------------------------------------------------------------------- the batch twin
def test_batch_overrides_make_a_masked_twin(tmp_path, capsys):
    spec = {"name": "demo_masked", "base": str(REPO / "params" / "demo.yaml"), "seeds": [0, 1, 2],
            "overrides": {"information": {"masking": "players_and_teams"}, "weeks": 3,
                          "trades": {"weeks": [2], "max_players_per_side": 2}},
            "seed_overrides": {2: {"weeks": 4}}, "out": str(tmp_path / "out")}
    f = tmp_path / "twin.yaml"
    f.write_text(yaml.safe_dump(spec))
    cfgs = run_configs(*load_batch(f))
    assert {s: (c["information"]["masking"], c["weeks"]) for s, c in cfgs.items()} == {
        0: ("players_and_teams", 3), 1: ("players_and_teams", 3), 2: ("players_and_teams", 4)}
    plain = run_configs(*load_batch(REPO / "params" / "batch_demo.yaml"))
    assert "information" not in plain[0]  # an unmasked batch: its configs as before masking existed
    twin = run_configs(*load_batch(REPO / "params" / "batch_demo_masked.yaml"))  # the demo's masked twin pairs
    assert sorted(twin) == sorted(plain)
    for seed, cfg in twin.items():
        assert cfg.pop("information") == {"masking": "players_and_teams"}
        assert {k: v for k, v in cfg.items() if k != "name"} == {k: v for k, v in plain[seed].items() if k != "name"}
    for bad, words in (({"seed": 3}, "overrides: sets `seed`"), ({"name": "x"}, "overrides: sets `name`"),
                       ({"wekks": 3}, "overrides: unknown config key(s) wekks; allowed: sport, season, weeks"),
                       # a bad value every seed would fail with: refused before any seed runs (it failed each seed)
                       ({"information": {"masking": "bogus"}}, "overrides: information.masking: Input should be")):
        f.write_text(yaml.safe_dump(spec | {"overrides": bad}))
        with pytest.raises(ConfigError) as err:
            load_batch(f)
        assert words in str(err.value)
    capsys.readouterr()
    code = cli.main(["batch", str(f)])  # in-process (the real CLI subprocess refusing: test_bad_input)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err  # the last bad spec, as the CLI says it


def test_batch_overrides_merge_into_the_base(tmp_path):
    """A partial section changes only the keys it names: the base's other settings stay (they were silently reset to
    defaults), lists replace, seed_overrides merge on top, and defaults that follow from the merged league follow."""
    base = demo_league().model_dump(mode="json") | {
        "roster": {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1, "SUPERFLEX": 1, "IR": 1, "BENCH": 6},
        "waivers": {"enabled": True}, "llm": {"max_reasks": 1, "retries": 2, "cache_dir": str(tmp_path / "cache")}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    spec = {"name": "merged", "base": "base.yaml", "seeds": [0, 1], "design": "random",
            "overrides": {"llm": {"budget_usd": 5}, "roster": {"K": 1, "DST": 1}, "draft": {"shortlist_size": 3},
                          "trades": {"weeks": [2]}},
            "seed_overrides": {1: {"llm": {"retries": 0}}}, "out": str(tmp_path / "out")}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(spec))
    cfgs = run_configs(*load_batch(tmp_path / "b.yaml"))
    for seed, retries in ((0, 2), (1, 0)):
        cfg = cfgs[seed]
        assert {k: cfg["llm"][k] for k in ("budget_usd", "max_reasks", "retries", "cache_dir")} == {
            "budget_usd": 5.0, "max_reasks": 1, "retries": retries, "cache_dir": str(tmp_path / "cache")}
        assert {k: cfg["roster"].get(k) for k in ("K", "DST", "SUPERFLEX", "IR", "BENCH", "QB")} == {
            "K": 1, "DST": 1, "SUPERFLEX": 1, "IR": 1, "BENCH": 6, "QB": 1}
        assert cfg["roster"]["caps"] == {"QB": 3, "RB": 6, "WR": 6, "TE": 3, "K": 2, "DST": 2}  # as if written there
        assert cfg["draft"]["order"] == "random" and cfg["draft"]["shortlist_size"] == 3  # design kept
        assert cfg["trades"] == {"weeks": [2], "max_players_per_side": 2}  # a list replaces, the rest stays
        assert cfg["waivers"]["enabled"] is True and (cfg["seed"], cfg["name"]) == (seed, "merged")
