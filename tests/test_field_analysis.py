"""Field analysis on a real small field batch (3-week leagues of bots, 2 seeds, 3 candidates), laid out as
design14's field batch: duplicate scores, variance reduction, pairwise tests and ``ffbench power`` on it."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ffbench_lib.records import field as field_record
from ffbench_lib.analysis import field, field_labels, metrics, power, ratings
from ffbench_lib.config.load import parse_config
from ffbench_lib.analysis.power import format_report, load_pilot, pair_table

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
            run_engine(_league(strategy, s), prepared_2024, out / field_record.candidate_dir(agent) / f"seed-{s}")
    manifest = field_record.Manifest(name="t", seat=SEAT, reference=REFERENCE, reference_dir=field_record.candidate_dir(REFERENCE),
                              candidates={a: field_record.candidate_dir(a) for a in CANDIDATES}, seeds=SEEDS)
    (out / field_record.MANIFEST).write_text(manifest.model_dump_json())
    return out


@pytest.fixture(scope="module")
def loaded(field_batch):
    """The field batch loaded once (loading is most of these tests' time) for the tests that only read it."""
    return field.load(field_batch)


def test_duplicate_scores_subtract_the_reference_on_the_same_seed(field_batch, loaded):
    assert loaded.manifest.seat == SEAT and loaded.runs["meta"]["run_id"].nunique() == 6
    seat = field.seat_results(loaded.runs, loaded.manifest, loaded.folder)
    assert set(zip(seat["agent"], seat["seed"])) == {(a, s) for a in CANDIDATES for s in SEEDS}
    # the seat team's own final record, read straight from each run's standings table
    for r in seat.itertuples():
        st = pd.read_parquet(field_batch / field_record.candidate_dir(r.agent) / f"seed-{r.seed}" / "standings.parquet")
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
    assert ref_row["agent"] == REFERENCE and ref_row["sd_dup"] == 0
    assert np.isnan(ref_row["vrf_raw"]) and np.isnan(ref_row["vrf_pairing"])
    other = vr[~vr["is_reference"]].iloc[0]
    g = scores[scores["agent"] == other["agent"]]
    assert other["sd_raw"] == pytest.approx(g["points_for"].std(ddof=1))
    assert other["vrf_raw"] == pytest.approx(g["points_for"].var(ddof=1) / g["dup"].var(ddof=1))
    # pairing: the comparison with the reference on the same seat and seed vs two independent leagues
    assert other["vrf_pairing"] == pytest.approx((g["points_for"].var(ddof=1) + ref.loc[g["seed"]].var(ddof=1))
                                                 / g["dup"].var(ddof=1))


def test_pairwise_is_a_paired_t_test_with_holm(loaded):
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


def test_missing_reference_run_is_refused_naming_the_seed(loaded):
    runs = loaded.runs
    keep = runs["meta"].loc[~((runs["meta"]["path"].str.contains("bot-adp")) & (runs["meta"]["seed"] == 1)),
                            "path"].tolist()
    partial = field.load(keep)
    seat = field.seat_results(partial.runs, partial.manifest)
    with pytest.raises(ValueError, match=r"seed 1: the reference bot:adp's run .* missing or not complete"):
        field.duplicate_scores(seat, partial.manifest)


def test_power_table_from_the_field_batch(loaded):
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
    """``ffbench power ARGS`` through the CLI's main() in this process (a process start is seconds; the exit codes
    and messages through a real process: test_a_broken_manifest_is_named). A Python warning that escaped the
    command goes to stderr as the interpreter would print it, so "no UserWarning there" can still fail."""
    import contextlib
    import io
    import warnings

    from ffbench_lib.cli import main

    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as leaked, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            code = main(["power", *map(str, args)])
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    hidden = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)  # Python's default
    shown = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in leaked
                    if not issubclass(w.category, hidden))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue() + shown)


def _process(*args):
    """``ffbench power ARGS`` as a user runs it: its own process."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "ffbench_lib", "power", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=300)


def test_power_command_prints_the_table(field_batch, tmp_path):
    r = _cli(field_batch, "--out", tmp_path / "p.csv")
    assert r.returncode == 0, r.stderr
    assert "pilot: field batch" in r.stdout and "seeds field" in r.stdout and "Holm over 3 pair(s)" in r.stdout
    assert "full-league design" in r.stdout and "$0 (free)" in r.stdout
    # the estimated full-league column is labelled as such; the summary claims each pair, not all at once
    assert f"* full league: {power.ESTIMATED}" in r.stdout and "sd full*" in r.stdout
    assert "separate every adjacent pair" not in r.stdout and "on its own by" in r.stdout
    assert "pilot uncertainty" in r.stdout and "chi-square interval" in r.stdout
    table = pd.read_csv(tmp_path / "p.csv")
    assert len(table) == 2 and set(table["design"]) == {"field"}
    assert (table["note"] == power.ESTIMATED_NOTE).all() and "upper bound" in power.ESTIMATED_NOTE
    assert {"seeds_field_range", "seeds_full_range"} <= set(table.columns)
    wins = _cli(field_batch, "--value", "wins", "--out", tmp_path / "w.csv")  # every power.VALUES is offered
    assert wins.returncode == 0, wins.stderr
    assert set(pd.read_csv(tmp_path / "w.csv")["value"]) == {"wins"} and "mean duplicate score of wins" in wins.stdout
    bad = _cli(field_batch, "--value", "points")
    assert bad.returncode == 2 and "points_for, win_rate, wins" in bad.stderr
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


def test_agents_mostly_played_by_fallbacks_are_not_ranked(loaded):
    """bot:random's decisions relabelled as engine fallbacks: it keeps its row, unranked, out of every family."""
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
    (tmp_path / field_record.MANIFEST).write_text('{"name": "x"}')
    r = _process(tmp_path)  # the one real process of this file
    assert r.returncode == 2 and "Traceback" not in r.stderr and "field.json: not a field manifest" in r.stderr
    # the batch refuses a corrupt manifest until it is deleted: the fix says so
    assert "delete" in r.stderr and "re-run the batch (it rewrites it from the spec; the runs are kept)" in r.stderr


def _copy_batch(field_batch, to, **manifest):
    """A copy of the field batch with its manifest changed (a second batch, an earlier spec, another reference)."""
    shutil.copytree(field_batch, to)
    m = field_record.read_manifest(to).model_copy(update=manifest)
    (to / field_record.MANIFEST).write_text(m.model_dump_json())
    return to


def test_load_runs_plays_the_baseline_teams_as_field_agents(field_batch, tmp_path):
    """Every table of a field batch's runs names the baseline teams' agents field:<agent>; the seat keeps its
    candidate. Runs of two batches are refused, a seed field.json no longer lists is left out, and the ratings count
    a candidate's runs as its seeds (its namesake baseline teams are another agent)."""
    runs = metrics.load_runs(field_batch)
    assert runs["meta"]["field_seat"].eq(SEAT).all() and len(runs["meta"]) == 6

    def check(df, team, agent):
        assert len(df), "no rows to check"
        seat = df[team] == SEAT
        assert df.loc[seat, agent].isin(list(CANDIDATES)).all()
        assert df.loc[~seat, agent].str.startswith(field_labels.FIELD_PREFIX).all()

    check(runs["standings"], "team", "agent")
    check(runs["matchups"], "team", "agent")
    check(runs["decisions"], "team", "agent")
    check(runs["trade_steps"], "actor", "agent")
    # a trade between the seat and a baseline team (3-week leagues rarely trade: one written into a copy's run)
    traded = _copy_batch(field_batch, tmp_path / "traded")
    run = traded / "runs" / "bot-vorp" / "seed-0"
    pd.DataFrame([{"week": 2, "negotiation": "w2-n1", "proposer": SEAT, "receiver": "VORP-2", "proposer_agent":
                   "bot:vorp", "receiver_agent": "bot:vorp", "proposer_gives": ["00-0030279"],
                   "receiver_gives": ["00-0033288"], "accepted_step": 2, "made_by": "agent"}]
                 ).to_parquet(run / "trades.parquet")
    trades = metrics.load_runs(traded)["trades"]
    trade = trades[trades["negotiation"] == "w2-n1"].iloc[0]
    assert (trade["proposer_agent"], trade["receiver_agent"]) == ("bot:vorp", "field:bot:vorp")
    check(trades, "proposer", "proposer_agent")
    check(trades, "receiver", "receiver_agent")
    st = metrics.standings(runs)
    assert set(st.loc[st["team"] == SEAT, "agent"]) == set(CANDIDATES)
    assert "field:bot:adp" in set(st["agent"]) and metrics.is_bot("field:bot:adp")
    assert metrics.describe_sample(runs) == "6 runs: 3 candidates × 2 seeds of the 2024 season"
    # ratings: a candidate played in its own leagues only, one per seed
    board = ratings.leaderboard(runs, n_resamples=50).set_index("agent")
    for agent in CANDIDATES:
        assert board.loc[agent, "n_runs"] == len(SEEDS)
    assert board.loc["field:bot:adp", "n_runs"] == 6

    other = _copy_batch(field_batch, tmp_path / "other")
    with pytest.raises(ValueError) as two:
        metrics.load_runs([field_batch / "runs" / "bot-adp", other / "runs" / "bot-adp"])
    assert "analyse one field batch at a time" in str(two.value) and "\n" not in str(two.value)
    with pytest.raises(ValueError) as mixed:
        metrics.load_runs([field_batch / "runs" / "bot-adp", _full_league(field_batch, tmp_path)])
    assert "no field batch" in str(mixed.value) and "\n" not in str(mixed.value)

    earlier = _copy_batch(field_batch, tmp_path / "earlier", seeds=[0])
    with pytest.warns(UserWarning, match="excluded"):
        kept = metrics.load_runs(earlier)
    assert set(kept["meta"]["seed"]) == {0} and len(kept["meta"]) == 3
    assert (kept["excluded"]["status"] == metrics.STRAY).all() and len(kept["excluded"]) == 3
    assert kept["excluded"]["reason"].str.contains("seed 1 is not in").all()


def test_power_measures_both_designs_from_a_field_and_a_full_league_batch(field_batch, tmp_path):
    full = _full_league(field_batch, tmp_path)
    pilot = load_pilot([field_batch, full])
    assert pilot.manifest is not None and pilot.full_runs is not None  # the field batch is not dropped
    assert set(pilot.full_runs["meta"]["path"].map(lambda p: str(Path(p).resolve().parent))) == {str(full.resolve())}
    t = pair_table(pilot.runs, manifest=pilot.manifest, full_runs=pilot.full_runs)
    assert t.summary["design"] == "field" and t.summary["full_measured"]
    # the full-league columns: paired per-run means of each agent's teams in the full-league runs, by agent
    st = metrics.standings(pilot.full_runs)
    means = metrics.per_agent(st, "points_for").pivot_table(index="run_id", columns="agent", values="points_for")
    for r in t.pairs.itertuples():
        d = (means[r.agent_a] - means[r.agent_b]).dropna()
        assert r.n_full == len(d) == 2 and r.sd_full == pytest.approx(d.std(ddof=1))
        assert r.mean_diff_full == pytest.approx(d.mean()) and r.note.startswith(power.MEASURED_NOTE)
    report = format_report(t)
    assert "full-league pilot: 2 runs" in report and power.ESTIMATED not in report and "sd full*" not in report
    r = _cli(field_batch, full)
    assert r.returncode == 0, r.stderr
    assert "pilot: field batch" in r.stdout and "full-league pilot: 2 runs" in r.stdout


def test_power_refuses_two_field_batches_and_names_a_path_without_runs(field_batch, tmp_path):
    other = _copy_batch(field_batch, tmp_path / "other")
    two = _cli(field_batch, other)
    assert two.returncode == 2 and "Traceback" not in two.stderr
    assert f"{field_batch.resolve()} and {other.resolve()} are two field batches" in two.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _cli(field_batch, empty)
    assert r.returncode == 2 and "Traceback" not in r.stderr and str(empty) in r.stderr
    unfinished = tmp_path / "unfinished"
    shutil.copytree(field_batch / "runs" / "bot-vorp" / "seed-0", unfinished / "seed-0")
    meta = json.loads((unfinished / "seed-0" / "run.json").read_text())
    (unfinished / "seed-0" / "run.json").write_text(json.dumps({**meta, "status": "running"}))
    with pytest.raises(FileNotFoundError, match=f"{unfinished}: no complete runs there"):
        load_pilot([field_batch, unfinished])


def test_a_reference_that_is_not_a_candidate_stays_outside_the_family(field_batch, tmp_path):
    """bot:adp as the yardstick only: its pairs stay in the tables, marked, and m counts the candidates' pairs."""
    batch = _copy_batch(field_batch, tmp_path / "yardstick",
                        candidates={a: d for a, d in field_record.read_manifest(field_batch).candidates.items()
                                    if a != REFERENCE})
    loaded = field.load(batch)
    scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    assert not scores.loc[scores["agent"] == REFERENCE, "candidate"].any() and scores["candidate"].sum() == 4
    pw = field.pairwise(scores)
    assert len(pw) == 3 and pw.attrs["outside_family"] == [REFERENCE]
    fam = pw[pw["in_family"]]
    assert len(fam) == 1 and REFERENCE not in {fam.iloc[0]["agent_a"], fam.iloc[0]["agent_b"]}
    if np.isfinite(fam.iloc[0]["p_value"]):
        assert fam.iloc[0]["p_holm"] == pytest.approx(fam.iloc[0]["p_value"])  # a family of one
    yard = pw[~pw["in_family"]]
    assert yard["p_holm"].isna().all() and yard["significant"].isna().all()
    t = pair_table(loaded.runs, manifest=loaded.manifest)
    assert t.summary["m"] == 1 and len(t.summary["ranked"]) == 2 and REFERENCE not in t.summary["ranked"]
    assert t.summary["outside_family"] == [REFERENCE]
    assert t.pairs["in_family"].sum() == 1 and (t.pairs.loc[~t.pairs["in_family"], "m"] == 1).all()
    assert (~t.pairs["in_family"]).sum() >= 1
    assert t.pairs.loc[~t.pairs["in_family"], "note"].str.startswith(power.YARDSTICK_NOTE).all()
    ref = t.agents.set_index("agent").loc[REFERENCE]
    assert ref["role"] == "reference" and pd.isna(ref["rank"])
    report = format_report(t)
    assert "(yardstick)" in report and "REFERENCE (yardstick, outside the Holm family)" in report
    assert "Holm over 1 pair(s) of candidates" in report


# ------------------------------------------------------------------ gaps, failed candidates, hand-edited manifests
def _set_status(run: Path, status: str, reason: str):
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "status": status, "reason": reason}))


def test_a_missing_or_incomplete_candidate_run_ranks_on_the_common_seeds_and_is_named(field_batch, tmp_path):
    b = _copy_batch(field_batch, tmp_path / "gap")
    shutil.rmtree(b / "runs" / "bot-vorp" / "seed-1")  # a seed of field.json without a run
    _set_status(b / "runs" / "bot-random" / "seed-0", "failed", "boom in week 2")  # an incomplete run
    with pytest.warns(UserWarning):
        loaded = field.load(b)
    with pytest.warns(UserWarning) as caught:
        scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    said = [str(w.message) for w in caught]
    assert any("bot:vorp: seed 1 missing (no run folder runs/bot-vorp/seed-1)" in m for m in said)
    assert any("bot:random: seed 0 failed (boom in week 2)" in m for m in said)
    # vorp has seed 0 only, random seed 1 only: no seed is common to every ranked candidate
    assert scores.attrs["seeds"] == [] and scores.empty and any("left out" in m for m in said)
    # one failed run only: the others are ranked on the seeds all have, n per agent stated
    b2 = _copy_batch(field_batch, tmp_path / "gap2")
    shutil.rmtree(b2 / "runs" / "bot-vorp" / "seed-1")
    loaded = field.load(b2)
    with pytest.warns(UserWarning) as caught:
        scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    assert [str(w.message) for w in caught] == [
        "field batch: bot:vorp: seed 1 missing (no run folder runs/bot-vorp/seed-1)",
        "field batch: ranked on the 1 seed(s) every ranked candidate has (0); left out: bot:adp seed(s) 1; "
        "bot:random seed(s) 1"]
    assert set(scores["seed"]) == {0} and scores.attrs["n"] == {a: 1 for a in CANDIDATES}
    assert set(map(tuple, scores.attrs["dropped"].to_numpy())) == {("bot:adp", 1), ("bot:random", 1)}
    pw = field.pairwise(scores)
    assert (pw["n"] == 1).all()  # every pair on the same seed, not vorp on 1 and the others on 2
    r = _cli(b2, "--out", tmp_path / "p.csv")
    assert r.returncode == 2 and "warning: field batch: bot:vorp: seed 1 missing" in r.stderr
    assert "UserWarning" not in r.stderr and ".py:" not in r.stderr and "at least 2 seeds" in r.stderr
    assert not (tmp_path / "p.csv").exists()


def test_a_candidate_without_complete_runs_is_named_with_why(field_batch, tmp_path):
    b = _copy_batch(field_batch, tmp_path / "failed")
    for s in SEEDS:
        _set_status(b / "runs" / "bot-vorp" / f"seed-{s}", "failed", "the model's API key was refused")
    r = _cli(b)
    assert r.returncode == 0, r.stderr
    assert "NO COMPLETE RUN, not in the table: bot:vorp (seed 0 failed (the model's API key was refused)" in r.stdout
    for s in SEEDS:
        _set_status(b / "runs" / "bot-random" / f"seed-{s}", "failed", "timeout")
    r = _cli(b)
    assert r.returncode == 2 and "the runs have 1 ranked agent(s)" in r.stderr
    assert "bot:vorp has no complete run (seed 0 failed" in r.stderr and "bot:random has no complete run" in r.stderr


def test_a_hand_edited_seat_or_reference_is_refused(field_batch, tmp_path):
    moved = _copy_batch(field_batch, tmp_path / "seat", seat="VORP-1")  # a baseline team, played by bot:vorp
    loaded = field.load(moved)
    with pytest.raises(ValueError) as exc:
        field.seat_results(loaded.runs, loaded.manifest)  # no folder given: found from the runs
    assert "seat 'VORP-1' is played by bot:vorp in the runs of bot:adp, bot:random" in str(exc.value)
    assert "the seat does not match the runs" in str(exc.value) and "9 runs" not in str(exc.value)
    # the reference changed while reference_dir still holds another agent's runs: power.pair_table refuses it
    ref = _copy_batch(field_batch, tmp_path / "ref", reference="bot:vorp")
    loaded = field.load(ref)
    with pytest.raises(ValueError, match="reference bot:vorp is a candidate with its runs in runs/bot-vorp, but "
                                         "reference_dir is runs/bot-adp"):
        pair_table(loaded.runs, manifest=loaded.manifest)
    # changed consistently, it is a valid manifest: vorp is the yardstick each score subtracts
    ok = _copy_batch(field_batch, tmp_path / "ref_ok", reference="bot:vorp", reference_dir="runs/bot-vorp")
    loaded = field.load(ok)
    scores = field.duplicate_scores(field.seat_results(loaded.runs, loaded.manifest), loaded.manifest)
    assert (scores.loc[scores["agent"] == "bot:vorp", "dup"] == 0).all()


def test_power_out_is_checked_before_the_work(field_batch, tmp_path):
    for out, said in ((tmp_path, "is a folder"), (field_batch / field_record.MANIFEST / "p.csv", "is a file, not a folder")):
        r = _cli(field_batch, "--out", out)
        assert r.returncode == 2 and said in r.stderr and r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1 and ".tmp" not in r.stderr


def test_power_report_caveats_and_mixed_leagues(field_batch, tmp_path, prepared_2024):
    r = _cli(field_batch)
    assert "ROUGH: the pilot sds come from 2 seed(s) (fewer than 5)" in r.stdout
    full = _cli(_full_league(field_batch, tmp_path))
    assert full.returncode == 0, full.stderr
    assert "the mean of its K teams in that run, so one seed costs K team-seasons" in full.stdout
    assert "bot:vorp 4" in full.stdout and "bot:adp 2" in full.stdout  # vorp's leagues: its 3 teams and the seat
    # a pilot mixing a 3-week and a 2-week league is refused, naming the difference
    mixed = tmp_path / "mixed"
    shutil.copytree(_full_league(field_batch, tmp_path), mixed)
    d = _league("vorp", 7).model_dump(mode="json")
    d.update(weeks=2)
    run_engine(parse_config(d), prepared_2024, mixed / "seed-7")
    r = _cli(mixed)
    assert r.returncode == 2 and "mixes leagues of different regular-season weeks" in r.stderr
