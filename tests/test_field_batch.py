"""Field batches (``design: field``, issue #14): every candidate plays the same seat of the same league on the same
seeds. Real short leagues (3 weeks; the fewest leagues a field has: 2 candidates and the reference x 2 seeds) through the real batch; the checks are what field mode relies on: per seed the
same schedule and draft order in every candidate's league, only the seat's agent changed, runs reused on re-run."""
import json
import re
import shutil

import pandas as pd
import pytest
import yaml

from ffbench_lib.records import field as field_record
from ffbench_lib.runs.batch import field_plan, load_batch, run_batch, run_configs
from ffbench_lib.runs.season import run_season
from ffbench_lib.config.league import League
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.runs.rundir import RunDir

from engine_helpers import REPO

BASE = REPO / "params" / "demo.yaml"
SHORT = {"weeks": 3, "trades": {"weeks": [2]}}
BOTS = {s: {"kind": "bot", "strategy": s} for s in ("adp", "vorp", "recent_form", "random")}


def field_spec(tmp_path, name="batch.yaml", out="batch", **fieldkw):
    """A field batch file over the demo league (seat VORP-1, 3 weeks); ``fieldkw`` replaces keys of ``field``."""
    fld = {"seat": "VORP-1", "candidates": [BOTS["adp"], BOTS["random"]], **fieldkw}
    d = {"name": "t", "base": str(BASE), "design": "field", "field": fld, "seeds": [0, 1], "workers": 2,
         "out": str(tmp_path / out), "analysis": False, "overrides": SHORT}
    f = tmp_path / name
    f.write_text(yaml.safe_dump(d))
    return f


def edited(f, **top):
    """The batch file ``f`` with top-level keys changed (None removes one)."""
    d = yaml.safe_load(f.read_text())
    for k, v in top.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    f.write_text(yaml.safe_dump(d))
    return f


#: the one league of the module's batch that its workers play through the season notebook (the others are played
#: in this process first and reused by the batch)
PLAYED = ("reference", 1)


@pytest.fixture(scope="module")
def field_batch(tmp_path_factory, data_dir):
    """2 candidates x 2 seeds, reference = the seat's own agent (bot:vorp, not a candidate: runs/reference). All but
    one league are played first in this process (run_season, what the season notebook calls, on the batch's own
    configs, into the folders field_plan names): the batch reuses those only if its plan puts the same configs in
    the same folders, and its workers play the last one through the notebook. One kernel instead of six."""
    tmp = tmp_path_factory.mktemp("field")
    f = field_spec(tmp)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        spec, base = load_batch(f)
        for entry in field_plan(spec, base)[1]:
            for seed, cfg in run_configs(spec, base, entry.agent).items():
                if (entry.label, seed) != PLAYED:
                    run_season(League.model_validate(cfg), out=tmp / "batch" / entry.folder / f"seed-{seed}",
                               progress=False)
        summary = run_batch(f, progress=False)
    return f, tmp / "batch", summary


@pytest.mark.slow
def test_field_batch_writes_manifest_and_one_league_per_candidate_and_seed(field_batch):
    f, out, summary = field_batch
    assert summary["complete"] == 6 and summary["failed"] == [] and summary["design"] == "field"
    manifest = field_record.Manifest.model_validate_json((out / field_record.MANIFEST).read_text())
    assert manifest == field_record.Manifest(
        name="t", seat="VORP-1", reference="bot:vorp", reference_dir="runs/reference", seeds=[0, 1],
        candidates={"bot:adp": "runs/bot-adp", "bot:random": "runs/bot-random"})
    runs = pd.read_csv(out / "batch_runs.csv")
    assert list(runs.columns[:5]) == ["candidate", "sport", "season", "seed", "status"]
    assert set(runs["sport"]) == {"nfl"} and set(runs["season"]) == {2024}
    played = (runs["candidate"] == PLAYED[0]) & (runs["seed"] == PLAYED[1])
    assert runs.loc[~played, "skipped"].eq(True).all()  # played by the fixture: the batch found them and reused them
    assert runs.loc[played, "skipped"].ne(True).all() and played.sum() == 1  # played by the batch's worker
    assert sorted(zip(runs["candidate"], runs["seed"])) == sorted(
        (c, s) for c in ("bot:adp", "bot:random", "reference") for s in (0, 1))
    dirs = [out / d / f"seed-{s}" for d in [*manifest.candidates.values(), manifest.reference_dir] for s in (0, 1)]
    assert all(RunDir(d).meta().status == "complete" for d in dirs)
    assert (out / "configs" / "reference" / "seed-1.yaml").is_file()  # written for the league it plays
    assert (out / "notebooks" / "reference" / "seed-1.ipynb").is_file()
    assert not list((out / "notebooks").glob("bot-*/*.ipynb"))  # the reused leagues were not played again
    found = field_record.find_manifest([dirs[0]])
    assert found is not None and found[0] == manifest and found[1] == out.resolve()


@pytest.mark.slow
def test_field_leagues_of_a_seed_share_schedule_draft_order_and_opponents(field_batch):
    """Only the seat's agent differs between the leagues of a seed: same week-1 pairings, same round-1 draft
    order, every other team plays the base's agent; the seat's draft slot moves with the seed (rotate)."""
    _, out, _ = field_batch
    base_agents = {t["name"]: f"bot:{t['agent']['strategy']}" for t in yaml.safe_load(BASE.read_text())["teams"]}
    seat_slot = {}
    for seed in (0, 1):
        pairings, orders = set(), set()
        for folder, agent in (("bot-adp", "bot:adp"), ("bot-random", "bot:random"), ("reference", "bot:vorp")):
            run = RunDir(out / "runs" / folder / f"seed-{seed}")
            m = run.table("matchups")
            pairings.add(frozenset(frozenset(p) for p in m.loc[m["week"] == 1, ["team", "opponent"]].values))
            picks = run.table("draft_picks")
            order = tuple(picks.loc[picks["round"] == 1].sort_values("pick")["team"])
            orders.add(order)
            seat_slot[seed] = order.index("VORP-1")
            agents = dict(zip(m["team"], m["agent"]))
            assert agents == {**base_agents, "VORP-1": agent}
        assert len(pairings) == 1 and len(orders) == 1, f"seed {seed}: leagues differ beyond the seat's agent"
    assert seat_slot[0] != seat_slot[1]


@pytest.mark.slow
def test_field_rerun_skips_complete_runs(field_batch, data_dir, monkeypatch):
    f, out, _ = field_batch
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    manifest = (out / field_record.MANIFEST).read_text()
    before = (out / "runs" / "bot-adp" / "seed-0" / "run.json").stat().st_mtime_ns
    summary = run_batch(f, progress=False)
    assert summary["complete"] == 6
    runs = pd.read_csv(out / "batch_runs.csv")
    assert runs["skipped"].all() and (runs["seconds"] == 0).all()
    assert (out / "runs" / "bot-adp" / "seed-0" / "run.json").stat().st_mtime_ns == before
    assert (out / field_record.MANIFEST).read_text() == manifest


@pytest.mark.slow
def test_field_batch_out_of_another_seat_reference_or_design_is_refused(field_batch, tmp_path):
    """An out holding a field batch accepts added candidates, never another seat or reference or a dropped
    candidate (the analysis would score runs against the wrong reference), nor a rotate batch."""
    f, out, _ = field_batch
    spec = yaml.safe_load(f.read_text())
    g = tmp_path / "again.yaml"

    def variant(**fieldkw):
        g.write_text(yaml.safe_dump({**spec, "field": {**spec["field"], **fieldkw}}))
        return g

    with pytest.raises(ConfigError, match=r"field: .* another seat or reference \(seat: 'VORP-1' there, 'ADP-1' "
                                          r"now\); use another out"):
        load_batch(variant(seat="ADP-1", reference=BOTS["vorp"]))
    with pytest.raises(ConfigError, match=r"reference: 'bot:vorp' there, 'bot:adp' now"):
        load_batch(variant(reference=BOTS["adp"]))
    with pytest.raises(ConfigError, match=r"field.candidates: .* holds runs of bot:random, which this spec "
                                          r"drops; add them back or use another out"):
        load_batch(variant(candidates=[BOTS["adp"], BOTS["recent_form"]]))
    load_batch(variant(candidates=[*spec["field"]["candidates"], BOTS["vorp"]]))  # a new candidate: fine
    rotate = {k: v for k, v in spec.items() if k != "field"} | {"design": "rotate"}
    g.write_text(yaml.safe_dump(rotate))
    with pytest.raises(ConfigError, match=r"out: .* holds a field batch \(field.json\); use another out"):
        load_batch(g)


RECORDS = ("field.json", "batch_runs.csv", "batch_summary.json")


@pytest.mark.slow
@pytest.mark.parametrize("top, keys", [
    ({"name": "renamed"}, r"name: 't' in the runs, 'renamed' now"),
    ({"overrides": {**SHORT, "scoring": "half_ppr"}}, r"scoring.preset: 'ppr' in the runs, 'half_ppr' now"),
])
def test_spec_change_that_makes_the_runs_another_config_is_refused_before_writing(field_batch, tmp_path, top, keys):
    """Every run would fail as "of another config" and the finished batch's records be overwritten by failures:
    refused at load time, one line naming out, the keys and the fix; nothing in out changes."""
    f, out, _ = field_batch
    g = tmp_path / "again.yaml"
    g.write_text(f.read_text())
    edited(g, **top)
    before = {name: (out / name).read_bytes() for name in RECORDS}
    one_problem(g, rf"^out: {re.escape(str(out))} holds 6 run\(s\) of another config \({keys}\): the batch spec "
                   r"changed since they ran; use another out, or restore the spec to reuse them$")
    with pytest.raises(ConfigError, match="holds 6 run"):
        run_batch(g, progress=False)
    assert {name: (out / name).read_bytes() for name in RECORDS} == before


@pytest.mark.slow
@pytest.mark.parametrize("text, where", [("{not json", r"\(top level\): Invalid JSON"),
                                         ('{"design": "field", "name": "t"}', r"seat: Field required")])
def test_corrupt_manifest_is_named_and_rewritten_once_deleted(field_batch, data_dir, monkeypatch, text, where):
    """The batch names the file and the wrong field and says how to recover; once the file is deleted the batch
    rewrites it from the spec and reuses the runs (their configs match)."""
    f, out, _ = field_batch
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    manifest = out / field_record.MANIFEST
    good = manifest.read_text()
    try:
        manifest.write_text(text)
        one_problem(f, rf"^out: {re.escape(str(manifest))} is not a field manifest \({where}.*\); delete "
                       rf"{re.escape(str(manifest))} to let the batch rewrite it from the spec \(its runs are kept and "
                       r"reused when their configs match\), or use another out$")
        manifest.unlink()
        assert run_batch(f, progress=False)["complete"] == 6
        assert pd.read_csv(out / "batch_runs.csv")["skipped"].all()
        rewritten = manifest.read_text()
    finally:
        manifest.write_text(good)  # the module's batch, as the other tests expect it
    assert rewritten == good


@pytest.mark.slow
def test_reference_among_candidates_reuses_their_runs(field_batch, tmp_path, data_dir, monkeypatch):
    """The reference is a candidate: its leagues are that candidate's, no runs/reference is played. The leagues
    (same seat, seeds and configs as the module's batch) come from the module's batch, so they are reused here
    (played and checked there); a league planned for runs/reference would still be played, and caught."""
    _, played, _ = field_batch
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    f = field_spec(tmp_path, reference=BOTS["adp"], candidates=[BOTS["random"], BOTS["adp"]])
    for folder in ("bot-adp", "bot-random"):
        shutil.copytree(played / "runs" / folder, tmp_path / "batch" / "runs" / folder)
    summary = run_batch(f, progress=False)
    assert summary["complete"] == 4 and summary["runs"] == 4
    assert pd.read_csv(tmp_path / "batch" / "batch_runs.csv")["skipped"].all()  # the same leagues: reused
    manifest = json.loads((tmp_path / "batch" / field_record.MANIFEST).read_text())
    assert manifest["reference"] == "bot:adp" and manifest["reference_dir"] == "runs/bot-adp"
    assert list(manifest["candidates"]) == ["bot:random", "bot:adp"]  # the spec's order (Manifest), not sorted
    assert not (tmp_path / "batch" / "runs" / "reference").exists()
    assert set(pd.read_csv(tmp_path / "batch" / "batch_runs.csv")["candidate"]) == {"bot:adp", "bot:random"}


def test_field_plan_defaults_seat_and_reference_to_the_base(tmp_path):
    spec, base = load_batch(field_spec(tmp_path, seat=None, candidates=[BOTS["random"], BOTS["vorp"]]))
    manifest, entries = field_plan(spec, base)
    assert manifest.seat == "VORP-1" and manifest.reference == "bot:vorp" and manifest.reference_dir == "runs/bot-vorp"
    assert [e.label for e in entries] == ["bot:random", "bot:vorp"]


def one_problem(f, pattern):
    with pytest.raises(ConfigError) as info:
        load_batch(f)
    assert len(info.value.problems) == 1, info.value.problems
    assert str(info.value.source) == str(f)
    assert re.search(pattern, info.value.problems[0]), info.value.problems[0]


@pytest.mark.parametrize("fieldkw, pattern", [
    ({"seat": "Nobody"}, r"^field.seat: no team 'Nobody' in base demo.yaml; use one of: VORP-1, ADP-1, .*ADP-3$"),
    ({"candidates": [BOTS["adp"]]}, r"^field.candidates: a field compares 2 or more agents \(got 1\); add candidates"),
    ({"candidates": [BOTS["adp"], BOTS["vorp"], BOTS["adp"]]},
     r"^field.candidates\[2\]: bot:adp is also candidates\[0\]; agents are named by model id in every table: two "
     r"candidates of one model would merge; keep one, or compare two settings of one model in two field batches "
     r"\(two out folders\)$"),
    ({"candidates": [{"kind": "llm", "model": "m"}, {"kind": "llm", "model": "m", "temperature": 0.5}]},
     r"^field.candidates\[1\]: llm:m is also candidates\[0\]; .*compare two settings of one model in two field "
     r"batches"),
    ({"candidates": ["bot:adp", "bot:vorp"]}, r"^field.candidates\[0\]: expected an agent mapping such as \{kind: "
                                              r"bot, strategy: adp\} or \{kind: llm, model: .*\}, got 'bot:adp'$"),
    ({"reference": "bot:adp"}, r"^field.reference: expected an agent mapping such as \{kind: bot, strategy: adp\}"),
    ({"candidates": [{"kind": "llm", "model": "a/b"}, {"kind": "llm", "model": "a-b"}]},
     r"^field.candidates\[1\]: llm:a-b and candidates\[0\] share the folder runs/llm-a-b \(field.slug\); keep one$"),
    ({"candidates": [BOTS["adp"], {"kind": "bot", "strategy": "best"}]},
     r"^field.candidates\[1\].strategy: Input should be 'random', 'adp', 'vorp' or 'recent_form' \(got 'best'\)$"),
    ({"candidates": [BOTS["adp"], {"kind": "human"}]},
     r"^field.candidates\[1\].kind: got 'human'; allowed: 'bot', 'llm' or 'python'"),
    ({"reference": {"kind": "bot"}}, r"^field.reference.strategy: field required$"),
    ({"reference": {"kind": "llm", "model": "m", "temperature": 0.5},
      "candidates": [BOTS["adp"], {"kind": "llm", "model": "m"}]},
     r"^field.reference: llm:m is also candidates\[1\] but with other settings; .* give both the same settings$"),
    ({"cand": []}, r"^field.cand: unknown key"),
])
def test_bad_field_spec_is_one_line_naming_the_field(tmp_path, fieldkw, pattern):
    one_problem(field_spec(tmp_path, **fieldkw), pattern)


def test_candidate_that_makes_the_league_invalid_is_named(tmp_path):
    """A v1-prompt league with waivers is fine with bots only, not with an LLM in the seat."""
    f = field_spec(tmp_path, candidates=[BOTS["adp"], {"kind": "llm", "model": "openai/x"}])
    edited(f, overrides={**SHORT, "llm": {"prompt_version": "v1"}, "waivers": {"enabled": True}})
    one_problem(f, r"^field.candidates\[1\]: waivers.enabled: prompt_version v1 has no waiver prompts .*use "
                   r"prompt_version v2 or turn waivers off \(with this agent in seat VORP-1\)$")


@pytest.mark.parametrize("top, pattern", [
    ({"design": "rotate"}, r"field: only a design: field batch uses it \(design is rotate\); set design: field or "
                           r"remove field"),
    ({"field": None}, r"field: design: field needs a field section .*; add it, or use design: rotate"),
    ({"agents": [{"name": "A", "agent": BOTS["adp"]}]}, r"agents: a field batch keeps the base league's teams .*"
                                                        r"remove agents and put the league in base"),
    ({"seed_overrides": {1: {"teams": []}}}, r"seed_overrides: sets `teams`, which a field batch keeps from base"),
    ({"field": [1, 2]}, r"^field: expected a mapping with seat, reference, candidates$"),
    ({"seeds": [0]}, r"^seeds: a field batch needs at least 2 seeds to compare candidates \(paired by seed\)$"),
    ({"overrides": {**SHORT, "draft": {"order": "fixed"}}},
     r"^overrides: sets `draft.order`, which a field batch sets to rotate \(the seat's draft slot must move with the "
     r"seed, .*\); remove it$"),
    ({"seed_overrides": {0: {"draft": {"order": "random"}}}}, r"^seed_overrides: sets `draft.order`, which a field "),
])
def test_field_design_and_field_section_go_together(tmp_path, top, pattern):
    one_problem(edited(field_spec(tmp_path), **top), pattern)


def test_committed_field_and_full_league_specs_are_valid():
    """params/batch_field_bots.yaml: 4 bot candidates x 10 seeds in seat VORP-1, reference adp (a candidate, so
    40 leagues); params/batch_full_bots.yaml: the same bots in one demo league on the same seeds."""
    spec, base = load_batch(REPO / "params" / "batch_field_bots.yaml")
    manifest, entries = field_plan(spec, base)
    assert base.resolve() == BASE.resolve() and spec.seeds == list(range(10)) and spec.workers == 2
    assert list(manifest.candidates) == ["bot:adp", "bot:vorp", "bot:recent_form", "bot:random"]
    assert (manifest.seat, manifest.reference, manifest.reference_dir, len(entries)) == (
        "VORP-1", "bot:adp", "runs/bot-adp", 4)
    full, full_base = load_batch(REPO / "params" / "batch_full_bots.yaml")
    assert full.design == "rotate" and full.seeds == spec.seeds and full_base.resolve() == BASE.resolve()


def test_failed_field_league_is_reported_with_its_candidate(tmp_path):
    """A seed whose config is unusable fails for every candidate; the CLI names candidate and seed, no traceback."""
    import subprocess
    import sys

    f = edited(field_spec(tmp_path, candidates=[BOTS["adp"], BOTS["random"]]),
               seed_overrides={0: {"weeks": 99}, 1: {"weeks": 99}})
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "batch", str(f), "--quiet"], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
    assert "  bot:adp seed 1 failed: invalid league config" in r.stdout
    assert "  reference seed 1 failed: invalid league config" in r.stdout  # bot:vorp, the seat's own agent


@pytest.mark.slow
def test_notebook_08_reads_a_field_batch_as_one(field_batch, tmp_path):
    """Given the batch folder, notebook 08 scores the seat alone: baseline teams as field:<agent>, candidates with
    their seeds as n, tests blocked by seed, the reference a yardstick outside the Holm family."""
    from ffbench_lib.runs.notebooks import execute

    _, out, _ = field_batch
    nb = execute("08_model_comparison.ipynb", tmp_path / "08.ipynb", {"runs": str(out), "out": str(tmp_path)},
                 timeout_s=600)
    cells = json.loads(nb.read_text())["cells"]
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = " ".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                    for c in cells for o in c.get("outputs", []))
    assert "6 runs: 2 candidates and the reference × 2 seeds of the 2024 season" in text
    assert "over 2 seeds of the 2024 season (one league per candidate each)" in text
    board = pd.read_csv(tmp_path / "leaderboard.csv").set_index("agent")
    assert board.loc[["bot:adp", "bot:random", "bot:vorp"], "n_runs"].tolist() == [2, 2, 2]
    assert {"field:bot:adp", "field:bot:vorp"} <= set(board.index)  # the baseline teams, apart from the seat
    scores = pd.read_csv(tmp_path / "field_scores.csv")
    assert len(scores) == 6 and (scores.loc[scores["agent"] == "bot:vorp", "dup"] == 0).all()
    pairs = pd.read_csv(tmp_path / "field_pairwise.csv")
    outside = pairs[(pairs["agent_a"] == "bot:vorp") | (pairs["agent_b"] == "bot:vorp")]
    assert len(outside) == 2 and outside["p_holm"].isna().all()  # the reference: a yardstick, not a hypothesis
    assert pd.read_csv(tmp_path / "friedman.csv")["n_runs"].eq(2).all()  # blocks are the 2 seeds, not 6 runs


def test_candidates_sharing_an_endpoint_share_one_limit(tmp_path):
    """Two candidates on one endpoint with two max_concurrency values: each league is valid alone, but the batch
    holds one limit per endpoint (a Dask scheduler would refuse the second mid-batch), so it is refused up front."""
    llm = {"kind": "llm", "api_base": "http://127.0.0.1:9/v1"}
    f = field_spec(tmp_path, candidates=[{**llm, "model": "openai/a", "max_concurrency": 2},
                                         {**llm, "model": "openai/b", "max_concurrency": 3}])
    one_problem(f, r"^max_concurrency: 3 for team 'VORP-1' \(seed 0 of llm:openai/b\), but 2 for team 'VORP-1' "
                   r"\(seed 0 of llm:openai/a\) on the same endpoint \(openai@http://127.0.0.1:9/v1\), whose calls "
                   r"share one limit; give them the same max_concurrency$")
    assert not (tmp_path / "batch").exists()
    load_batch(field_spec(tmp_path, name="ok.yaml", candidates=[{**llm, "model": "openai/a", "max_concurrency": 2},
                                                               {**llm, "model": "openai/b", "max_concurrency": 2}]))
