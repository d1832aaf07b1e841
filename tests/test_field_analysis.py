"""Field analysis on a real small field batch (3-week leagues of bots, 2 seeds, 3 candidates), laid out as
design14's field batch: duplicate scores, variance reduction, pairwise tests and ``ffbench power`` on it."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ffbench_lib import field, metrics
from ffbench_lib.config import parse_config
from ffbench_lib.power import pair_table

from engine_helpers import REPO, demo_league, run_engine

SEAT, REFERENCE = "ADP-1", "bot:adp"
CANDIDATES = {"bot:adp": "adp", "bot:vorp": "vorp", "bot:random": "random"}
SEEDS = [0, 1]


def _league(strategy: str, seed: int):
    d = demo_league().model_dump(mode="json")
    d.update(weeks=3, seed=seed, trades={**d["trades"], "weeks": [2]})
    for t in d["teams"]:
        if t["name"] == SEAT:
            t["agent"] = {"kind": "bot", "strategy": strategy}
    return parse_config(d)


@pytest.fixture(scope="module")
def field_batch(prepared_2024, tmp_path_factory):
    """The field layout of design14 built by hand: out/field.json, out/runs/<slug>/seed-<s>/."""
    out = tmp_path_factory.mktemp("field") / "batch"
    for agent, strategy in CANDIDATES.items():
        for s in SEEDS:
            run_engine(_league(strategy, s), prepared_2024, out / field.candidate_dir(agent) / f"seed-{s}")
    manifest = field.Manifest(name="t", seat=SEAT, reference=REFERENCE, reference_dir=field.candidate_dir(REFERENCE),
                              candidates={a: field.candidate_dir(a) for a in CANDIDATES}, seeds=SEEDS)
    (out / field.MANIFEST).write_text(manifest.model_dump_json())
    return out


def test_duplicate_scores_subtract_the_reference_on_the_same_seed(field_batch):
    loaded = field.load(field_batch)
    assert loaded.manifest.seat == SEAT and loaded.runs["meta"]["run_id"].nunique() == 6
    seat = field.seat_results(loaded.runs, loaded.manifest, loaded.folder)
    assert set(zip(seat["agent"], seat["seed"])) == {(a, s) for a in CANDIDATES for s in SEEDS}
    # the seat team's own final record, read straight from each run's standings table
    for r in seat.itertuples():
        st = pd.read_parquet(field_batch / field.candidate_dir(r.agent) / f"seed-{r.seed}" / "standings.parquet")
        final = st[(st["week"] == st["week"].max()) & (st["team"] == SEAT)].iloc[0]
        assert final["agent"] == r.agent and r.points_for == pytest.approx(final["points_for"])
        assert r.wins == final["wins"]
    scores = field.duplicate_scores(seat, loaded.manifest, "points_for")
    ref = seat[seat["agent"] == REFERENCE].set_index("seed")["points_for"]
    for r in scores.itertuples():
        assert r.reference_value == pytest.approx(ref[r.seed])
        assert r.dup == pytest.approx(r.points_for - ref[r.seed])
    assert (scores.loc[scores["agent"] == REFERENCE, "dup"] == 0).all()
    # a different drafting strategy in the seat scores differently from the reference on some seed
    assert (scores.loc[scores["agent"] != REFERENCE, "dup"].abs() > 0).any()
    # the rest of the league is the same on a seed: the other teams' drafts are identical until the seat's picks
    # diverge, so the first pick of a team drafting before the seat matches across candidates
    vr = field.variance_reduction(scores, "points_for")
    ref_row = vr[vr["is_reference"]].iloc[0]
    assert ref_row["agent"] == REFERENCE and ref_row["sd_dup"] == 0 and np.isnan(ref_row["vrf"])
    other = vr[~vr["is_reference"]].iloc[0]
    g = scores[scores["agent"] == other["agent"]]
    assert other["sd_raw"] == pytest.approx(g["points_for"].std(ddof=1))
    assert other["vrf"] == pytest.approx(g["points_for"].var(ddof=1) / g["dup"].var(ddof=1))


def test_pairwise_is_a_paired_t_test_with_holm(field_batch):
    loaded = field.load(field_batch)
    scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    pw = field.pairwise(scores)
    assert len(pw) == 3 and set(pw["ci_method"]) <= {"t-interval"}
    wide = scores.pivot_table(index="seed", columns="agent", values="dup")
    r = pw.iloc[0]
    d = (wide[r.agent_a] - wide[r.agent_b]).to_numpy()
    assert r.mean_diff == pytest.approx(d.mean()) and r.n == 2
    from scipy import stats

    if np.ptp(d) > 0:
        assert r.p_value == pytest.approx(stats.ttest_rel(wide[r.agent_a], wide[r.agent_b]).pvalue)
    assert (pw["p_holm"] >= pw["p_value"]).all()


def test_missing_reference_run_is_refused_naming_the_seed(field_batch):
    loaded = field.load(field_batch)
    runs = loaded.runs
    keep = runs["meta"].loc[~((runs["meta"]["path"].str.contains("bot-adp")) & (runs["meta"]["seed"] == 1)),
                            "path"].tolist()
    partial = field.load(keep)
    seat = field.seat_results(partial.runs, partial.manifest)
    with pytest.raises(ValueError, match=r"seed 1: the reference bot:adp's run .* missing or not complete"):
        field.duplicate_scores(seat, partial.manifest)


def test_power_table_from_the_field_batch(field_batch):
    loaded = field.load(field_batch)
    t = pair_table(loaded.runs, manifest=loaded.manifest)
    assert t.summary["design"] == "field" and t.summary["m"] == 3 and t.summary["seeds"] == 2
    assert len(t.pairs) == 2 and list(t.agents["rank"]) == [1, 2, 3]
    assert (t.agents["cost_per_seed"] == 0).all()  # bots are free
    scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    wide = scores.pivot_table(index="seed", columns="agent", values="dup")
    raw = scores.pivot_table(index="seed", columns="agent", values="points_for")
    r = t.pairs.iloc[0]
    d = wide[r.agent_a] - wide[r.agent_b]
    assert r.mean_diff == pytest.approx(d.mean()) and r.mean_diff >= 0
    assert r.sd_field == pytest.approx(d.std(ddof=1))
    assert r.sd_full == pytest.approx(np.sqrt(raw[r.agent_a].var(ddof=1) + raw[r.agent_b].var(ddof=1)))


def _full_league(field_batch, tmp_path):
    """The vorp candidate's two leagues copied out of the field batch: ordinary runs of a league of bots."""
    out = tmp_path / "full"
    if not out.exists():
        shutil.copytree(field_batch / "runs" / "bot-vorp", out)
    return out


def _cli(*args):
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "ffbench_lib", "power", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=300)


def test_power_command_prints_the_table(field_batch, tmp_path):
    r = _cli(field_batch, "--out", tmp_path / "p.csv")
    assert r.returncode == 0, r.stderr
    assert "pilot: field batch" in r.stdout and "seeds field" in r.stdout and "Holm over 3 pair(s)" in r.stdout
    assert "full-league design" in r.stdout and "$0 (free)" in r.stdout
    table = pd.read_csv(tmp_path / "p.csv")
    assert len(table) == 2 and set(table["design"]) == {"field"}
    # the candidate's run folders give the same (a field batch found from its runs)
    r2 = _cli(field_batch / "runs" / "*" / "seed-*")
    assert r2.returncode == 0 and "pilot: field batch" in r2.stdout
    # a candidate's runs alone are refused: its seeds cannot be scored without the reference's runs
    alone = _cli(field_batch / "runs" / "bot-vorp")
    assert alone.returncode == 2 and "the reference bot:adp's run (runs/bot-adp/seed-0) is missing" in alone.stderr
    # the same leagues outside a field batch are a full-league pilot (several bots, each in its own seats)
    r3 = _cli(_full_league(field_batch, tmp_path))
    assert r3.returncode == 0, r3.stderr
    assert "pilot: full league" in r3.stdout and "needs a field pilot" in r3.stdout


def test_power_command_bad_input_exits_2(field_batch, tmp_path):
    r = _cli(tmp_path / "nothing-here")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "no run directories" in r.stderr
    one_seed = _cli(_full_league(field_batch, tmp_path) / "seed-0")
    assert one_seed.returncode == 2 and "Traceback" not in one_seed.stderr
    assert "at least 2 seeds" in one_seed.stderr
    bad = _cli(field_batch, "--alpha", "5")
    assert bad.returncode == 2 and "between 0 and 1" in bad.stderr


def test_agents_mostly_played_by_fallbacks_are_not_ranked(field_batch):
    """bot:random's decisions relabelled as engine fallbacks: it keeps its row, unranked, out of every family."""
    loaded = field.load(field_batch)
    runs = dict(loaded.runs)
    dec = runs["decisions"].copy()
    dec.loc[dec["agent"] == "bot:random", "decided_by"] = "fallback"
    runs["decisions"] = dec
    assert metrics.agent_info(runs).set_index("agent").loc["bot:random", "flagged"]
    seat = field.seat_results(runs, loaded.manifest)
    assert not seat.loc[seat["agent"] == "bot:random", "ranked"].any() and seat["ranked"].sum() == 4
    pw = field.pairwise(field.duplicate_scores(seat, loaded.manifest))
    assert len(pw) == 1 and pw.attrs["not_ranked"] == ["bot:random"]
    t = pair_table(runs, manifest=loaded.manifest)
    assert t.summary["not_ranked"] == ["bot:random"] and t.summary["m"] == 1 and len(t.pairs) == 1
    row = t.agents.set_index("agent").loc["bot:random"]
    assert not row["ranked"] and pd.isna(row["rank"]) and row["fallback_rate"] > metrics.MAX_FALLBACK_RATE
    assert "bot:random" not in set(t.pairs["agent_a"]) | set(t.pairs["agent_b"])


def test_runs_of_another_batch_are_refused(field_batch, tmp_path):
    other = _full_league(field_batch, tmp_path) / "seed-0"
    with pytest.raises(ValueError, match="is not a run of the field batch"):
        field.load([field_batch / "runs" / "bot-adp" / "seed-0", other])


def test_a_broken_manifest_is_named(tmp_path):
    (tmp_path / field.MANIFEST).write_text('{"name": "x"}')
    r = _cli(tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "field.json: not a field manifest" in r.stderr
