"""The masked vs unmasked ablation (ffbench_lib.contamination, notebooks/09_contamination.ipynb): real bot seasons
of 2024 and their masked twins paired by seed, the verdict's rules on constructed numbers, the refusals, and the
batch ``overrides`` that makes a masked twin."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import papermill as pm
import pytest
import yaml

from ffbench_lib import contamination as con
from ffbench_lib import plots
from ffbench_lib.batch import load_batch, run_configs
from ffbench_lib.config import ConfigError, Information, League
from ffbench_lib.engine import SimulatedCrash
from ffbench_lib.llm import FatalLLMError
from ffbench_lib.notebooks import KERNEL_ARGS, NotebookError, execute
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, demo_league, run_engine
from project_copy import OVERRIDES, copy_project


SEEDS = range(6)
MASKED = Information(masking="players_and_teams")


@pytest.fixture(scope="module")
def twins(prepared_2024, tmp_path_factory):
    """Six short seasons of the 10 demo bots and their masked twins (same league and seeds)."""
    root = tmp_path_factory.mktemp("twins")
    for seed in SEEDS:
        run_engine(demo_league(seed=seed, weeks=3), prepared_2024, root / "unmasked" / f"seed-{seed}")
        run_engine(demo_league(seed=seed, weeks=3, information=MASKED), prepared_2024, root / "masked" / f"seed-{seed}")
    return root


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
    assert res["verdict"].status in ("trusted", "not trusted", "cannot tell") and res["verdict"].reasons
    plots.save(con.figure(seeds, res["changes"]), tmp_path, "contamination")
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


def test_too_few_seeds_cannot_tell_even_with_a_large_drop():
    v = judge(constructed(4, {"llm:openai/x": [-0.15, -0.16, -0.14, -0.15]}), PROBE)
    assert v.status == "cannot tell" and "4 paired seeds, at least 6" in v.headline
    assert any(r.startswith("llm:openai/x: -") and "suggestive only" in r and "remembers the season" in r
               for r in v.reasons)
    assert judge(constructed(5, {})).status == "cannot tell"  # nothing changed, but 5 seeds prove nothing


def test_a_large_consistent_drop_is_not_trusted():
    drop = [-0.10, -0.12, -0.09, -0.11, -0.10, -0.13, -0.08, -0.11]
    noise = [0.004, -0.003, 0.002, -0.004, 0.001, 0.003, -0.002, 0.0]
    v = judge(constructed(8, {"llm:openai/x": drop, "bot:vorp": noise}), PROBE)
    assert v.status == "not trusted" and v.headline.startswith("Not trusted: x scored significantly less")
    [reason] = [r for r in v.reasons if r.startswith("llm:openai/x")]
    assert "lower in 8 and higher in 0 of 8 seeds" in reason and "Wilcoxon signed-rank" in reason
    assert "The probe says it remembers the season (recall advantage +15.0 points" in reason
    assert "Not trusted" in v.markdown() and v.markdown().startswith("**")


def test_equal_seasons_are_trusted():
    v = judge(constructed(8, {}), PROBE)  # masking changed nothing at all
    assert v.status == "trusted" and v.headline.startswith("Trusted: on 8 paired seeds")
    assert any("remembers the season (probe) but masking does not change its results" in r for r in v.reasons)
    v = judge(constructed(8, {}), PROBE.assign(probe_remembers=False, probe_ci_low=-3.0))
    assert v.status == "trusted" and not any("(probe) but" in r for r in v.reasons)
    assert any("The probe finds no evidence that it remembers the season" in r for r in v.reasons)
    small = [0.01, -0.01, 0.005, -0.005, 0.0, 0.01, -0.01, 0.0]
    assert judge(constructed(8, {a: small for a in AGENTS})).status == "trusted"


def test_wide_changes_cannot_tell_and_one_agent_is_enough():
    wide = [0.2, -0.2, 0.15, -0.25, 0.2, -0.1, 0.1, -0.2]
    v = judge(constructed(8, {"bot:adp": wide}))
    assert v.status == "cannot tell" and "too wide" in v.headline
    assert any(r.startswith("bot:adp") and "A bot cannot remember" in r for r in v.reasons)


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
    with pytest.raises(con.ContaminationError, match=r"masked: 6 run\(s\) were played unmasked"):
        con.load_pairs(u, u)
    with pytest.raises(con.ContaminationError, match=r"unmasked: no run directories"):
        con.load_pairs(tmp_path / "nothing", m)
    other = tmp_path / "weeks2" / "seed-0"  # the same seed, another league
    run_engine(demo_league(seed=0, weeks=2, information=MASKED), prepared_2024, other)
    with pytest.raises(con.ContaminationError, match=r"seed 0: the configs of .* differ in more than the masking "
                                                     r"\(weeks: 3 unmasked, 2 masked\)"):
        con.load_pairs(u, [other, *m[1:]])
    y2023 = tmp_path / "y2023" / "seed-0"
    shutil.copytree(m[0], y2023)  # the same run, said to be of 2023: never paired with 2024
    (y2023 / "config.yaml").write_text((m[0] / "config.yaml").read_text().replace("season: 2024", "season: 2023"))
    with pytest.raises(con.ContaminationError, match=r"runs of several seasons \(2023, 2024\)"):
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
        run_engine(demo_league(seed=0, weeks=3, information=MASKED), prepared_2024, tmp_path / "partial",
                   crash_after="week:1")
    with pytest.raises(con.ContaminationError, match=r"masked: 1 run\(s\) not complete: .*partial \(running"):
        con.load_pairs(u, [tmp_path / "partial", *m[1:]])


def test_probe_files_are_checked(twins, tmp_path):
    f = tmp_path / "probe.json"
    f.write_text(json.dumps({"season": 2023, "models": []}))
    with pytest.raises(con.ContaminationError, match=r"probed season 2023, the runs played 2024"):
        con.compare(twins / "unmasked", twins / "masked", f)
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
def test_batch_overrides_make_a_masked_twin(tmp_path):
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
                       ({"wekks": 3}, "overrides: unknown config key(s) wekks; allowed: season, weeks")):
        f.write_text(yaml.safe_dump(spec | {"overrides": bad}))
        with pytest.raises(ConfigError) as err:
            load_batch(f)
        assert words in str(err.value)
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "batch", str(f)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and "unknown config key(s) wekks" in r.stderr and "Traceback" not in r.stderr
