"""The newest season (2025) runs from the shipped data although its injury report, rosters and ADP are missing
(each marked unavailable, with its fallback, in the manifest, run.json, the views and the prompts; other seasons
unchanged), and a model's ``knowledge_cutoff`` after a season's end is warned about in ``validate`` and ``run``
and recorded in run.json. Everything goes through the real CLI; LLM teams talk to the local fake server."""
from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ffbench_lib import cli
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import data_copy

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "params" / "demo.yaml"
NO_INJURY_LINE = "No official injury report is available for this season"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, data_dir):
    """The synthetic data unless a test asks for the real one; prepared seasons go to this test run's shared cache
    (conftest's FFBENCH_CACHE_DIR: one preparation of each season for every test here, never the repo's)."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))


def prepared_folder(run: RunDir) -> Path:
    """The prepared season a run played: the shared cache's folder whose manifest has the run's data fingerprint."""
    fp = run.meta().dump()["data_fingerprint"]
    (folder,) = [p for p in Path(os.environ["FFBENCH_CACHE_DIR"]).iterdir() if (p / "manifest.json").is_file()
                 and json.loads((p / "manifest.json").read_text()).get("fingerprint") == fp]
    return folder


@pytest.fixture
def real(real_data_dir, monkeypatch):
    """FFBENCH_DATA_DIR is the real data: the real 2025 season's missing inputs and the real games' dates."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(real_data_dir))
    return real_data_dir


def ffbench(*args) -> tuple[int, str, str]:
    """``ffbench ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def league_file(folder: Path, name: str = "league.yaml", roster: dict | None = None, **changes) -> Path:
    d = yaml.safe_load(DEMO.read_text())
    d.update(changes)
    d["roster"].update(roster or {})
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / name
    f.write_text(yaml.safe_dump(d, sort_keys=False))
    return f


def llm_team(api_base: str, cache: Path, **agent) -> dict:
    return {"name": "LLM", "agent": {"kind": "llm", "model": "openai/fake-model", "api_base": api_base,
                                     "timeout_s": 10.0, "max_tokens": 2000, "input_cost_per_token": 0.0,
                                     "output_cost_per_token": 0.0, **agent}}


@pytest.fixture(scope="module")
def demo_2025(real_data_dir, tmp_path_factory):
    """The demo league (10 bots) on the whole 2025 season, through ``ffbench run``."""
    tmp = tmp_path_factory.mktemp("demo2025")
    f = league_file(tmp, season=2025, data={"source": "nflverse", "projections": "builtin"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(real_data_dir))
        code, out, err = ffbench("run", f, "--out", tmp / "run", "--quiet")
    assert code == 0, err
    run = RunDir(tmp / "run")
    return {"run": run, "stdout": out, "stderr": err, "prepared": prepared_folder(run)}


def test_demo_league_plays_the_2025_season_through_the_cli(demo_2025):
    run = demo_2025["run"]
    meta = run.meta().dump()
    assert meta["status"] == "complete" and meta["season"] == 2025
    st = run.table("standings")
    assert sorted(st["week"].unique()) == list(range(1, 18))
    final = st[st["week"] == 17]
    assert len(final) == 10 and final["points_for"].min() > 0  # every team scored real 2025 points
    assert "knowledge_cutoffs" not in meta  # no team has a cutoff
    # run.json and the prepared manifest say what the season lacks, and how it is run without it
    assert meta["unavailable"] == ["adp", "injury_report", "rosters"]
    assert "injuries_2025.csv missing" in meta["unavailable_notes"]["injury_report"]
    assert "db_playerids" in meta["unavailable_notes"]["rosters"]
    manifest = json.loads((demo_2025["prepared"] / "manifest.json").read_text())
    assert manifest["unavailable"] == meta["unavailable"] and manifest["injury_source"] is None
    assert manifest["rows"]["injuries"] == 0
    # run prints one note per missing input on stderr
    notes = [line for line in demo_2025["stderr"].splitlines() if line.startswith("note: season 2025")]
    assert len(notes) == 2 and "injury report" in notes[0] and "rosters" in notes[1]


def test_2025_views_carry_the_unavailable_injury_report(demo_2025):
    decisions = demo_2025["run"].decisions()
    kinds = {d["decision"] for d in decisions}
    assert {"draft_pick", "set_lineup", "propose_trade"} <= kinds
    assert all(d["view"]["rules"]["unavailable"] == ["adp", "injury_report"] for d in decisions)
    lineups = [d["view"] for d in decisions if d["decision"] == "set_lineup"]
    assert len(lineups) == 170
    assert all(p["injury"] is None and "out" not in p["zero_flags"] for v in lineups for p in v["players"])


def test_other_seasons_have_no_marker(prepared_2024, tmp_path):
    """The 2024 prepared season and its views know nothing of the 2025 fallbacks."""
    from ffbench_lib.config.load import load_config
    from ffbench_lib.game.views import Firewall

    assert not {"unavailable", "unavailable_notes"} & set(prepared_2024.manifest)
    assert prepared_2024.manifest["injury_source"] == "nflverse"
    rules = Firewall(prepared_2024, load_config(DEMO)).rules()
    assert "unavailable" not in rules


def test_validate_passes_for_2025_and_names_what_is_missing(tmp_path, real):
    f = league_file(tmp_path, season=2025)
    code, out, err = ffbench("validate", f)
    assert code == 0, err
    assert out.startswith("ok: ") and "season 2025" in out
    lines = err.splitlines()
    assert len(lines) == 2 and all(line.startswith("note: season 2025 is run without its ") for line in lines)
    assert "no player is marked Out" in lines[0] and "else his last team of 2024" in lines[1]
    code, out, err = ffbench("validate", league_file(tmp_path, "l24.yaml", season=2024))
    assert code == 0 and err == ""  # a season with every input: nothing to say


def test_prepared_2025_draft_pool_projections_and_rookies(demo_2025):
    p = pd.read_parquet(demo_2025["prepared"] / "players.parquet")
    pool = p[p["in_draft_pool"]]
    assert len(pool) == 742
    assert pool["position"].value_counts().to_dict() == {"WR": 298, "RB": 194, "TE": 154, "QB": 96}
    # the built-in projection (2024 and 2023 stats, a rookie prior) covers the whole pool; nobody has an ADP
    assert (pool["proj_points_builtin"] > 0).all() and (pool["proj_source"] == "builtin").all()
    assert p["adp"].isna().all()
    # rookies come from the id crosswalk's draft_year: the 2025 draft with its picks
    rookies = pool[pool["rookie"]].set_index("player_name")
    assert len(rookies) == 146 and rookies["draft_number"].notna().sum() == 84
    assert rookies.loc["Cam Ward", "draft_number"] == 1 and rookies.loc["Cam Ward", "team"] == "TEN"
    assert rookies.loc["Ashton Jeanty", "team"] == "LV"  # DynastyProcess's LVR, in nflverse spelling
    # a veteran's preseason team is his last 2024 team (the stated fallback)
    assert pool.set_index("player_name").loc["Davante Adams", "team"] == "NYJ"


def test_rookie_fallback_reproduces_the_drafted_rookies_of_a_roster_file(data_dir, tmp_path):
    """Without roster_2024.csv the crosswalk gives every drafted 2024 rookie, with his pick (was: no rookies)."""
    root = data_copy(tmp_path, data_dir, drop=("roster_2024.csv",))
    full = NflverseDir(data_dir).rookies(2024).set_index("player_id")
    fallback = NflverseDir(root).rookies(2024).set_index("player_id")
    drafted = full[full["draft_number"].notna()]
    assert len(drafted) > 30  # a draft's worth of fantasy-position rookies (81 in the real 2024 roster file)
    assert set(drafted.index) <= set(fallback.index)
    pd.testing.assert_series_equal(fallback.loc[drafted.index, "draft_number"].astype(float),
                                   drafted["draft_number"].astype(float))
    assert NflverseDir(root).unavailable(2024).keys() == {"rosters"}
    assert NflverseDir(data_dir).unavailable(2024) == {}


def test_kickers_play_2025_and_defenses_are_refused_clearly(tmp_path, real):
    caps = {"QB": 3, "RB": 6, "WR": 6, "TE": 3}
    k = league_file(tmp_path, "k.yaml", season=2025, weeks=3, trades={"weeks": [2]},
                    roster={"K": 1, "caps": {**caps, "K": 2}})
    code, out, err = ffbench("run", k, "--out", tmp_path / "k", "--quiet")
    assert code == 0, err
    lineups = RunDir(tmp_path / "k").table("lineups")
    kickers = lineups[lineups["slot"] == "K"]
    assert len(kickers) == 30 and kickers["points"].sum() > 100  # real 2025 field goals and extra points
    dst = league_file(tmp_path, "dst.yaml", season=2025, roster={"DST": 1, "caps": {**caps, "DST": 2}})
    msg = "stats_team_week_2025.csv missing"
    errors = []
    for args in (("validate", dst), ("run", dst, "--out", tmp_path / "dst", "--quiet")):
        code, out, err = ffbench(*args)
        assert code == 2 and msg in err and "remove DST from the roster" in err and "Traceback" not in err
        errors.append(err)
    assert errors[0] == errors[1]  # the same refusal, and no notes before it
    assert not (tmp_path / "dst").exists()


def test_an_ir_league_on_2025_is_warned_that_ir_stays_empty(tmp_path, real):
    f = league_file(tmp_path, season=2025, roster={"IR": 1}, waivers={"enabled": True})
    code, out, err = ffbench("validate", f)
    assert code == 0, err
    assert "warning: roster.IR: with no 2025 injury report no player is ever ruled Out" in err


# ------------------------------------------------------------------------------------ LLM prompts, cutoffs

@pytest.fixture(scope="module")
def llm_runs(real_data_dir, tmp_path_factory):
    """A short league with one LLM team (on the fake server) in 2025 (2 weeks) and in 2024 (1 week), each with a
    cutoff; the prepared seasons come from the shared cache (2025: demo_2025's)."""
    tmp = tmp_path_factory.mktemp("llm")
    runs = {}
    with FakeOpenAIServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(real_data_dir))
        for season, cutoff in ((2025, "2026-02"), (2024, "2024-06")):
            d = yaml.safe_load(DEMO.read_text())
            # 2025: the draft, two lineups, a trade window; 2024 (its prompts compared): the draft, one lineup
            d.update(season=season, weeks=2 if season == 2025 else 1,
                     trades={"weeks": [2] if season == 2025 else [], "max_players_per_side": 1},
                     llm={"backoff_s": 0.01, "cache_dir": str(tmp / "cache")})
            d["teams"][0] = llm_team(srv.api_base, tmp / "cache", knowledge_cutoff=cutoff)
            f = tmp / f"l{season}.yaml"
            f.write_text(yaml.safe_dump(d, sort_keys=False))
            code, out, err = ffbench("run", f, "--out", tmp / str(season), "--quiet")
            assert code == 0, err
            runs[season] = {"run": RunDir(tmp / str(season)), "stderr": err, "config": f}
    return runs


def _prompts(run: RunDir) -> list[str]:
    return ["\n".join(m["content"] for m in c["messages"]) for c in run.llm_calls()]


def test_llm_prompts_say_there_is_no_injury_report_in_2025_only(llm_runs):
    prompts = _prompts(llm_runs[2025]["run"])
    assert len(prompts) > 20  # the draft, two lineups, the trade window
    assert all(p.count(NO_INJURY_LINE) == 1 for p in prompts)
    line = next(x for x in prompts[0].splitlines() if NO_INJURY_LINE in x)
    assert line == ("- No official injury report is available for this season: no player is marked Out, Doubtful "
                    "or Questionable, but a player who misses a game still scores 0.")
    no_adp = "- No preseason ADP (average draft position) is available for this season"
    assert all(p.count(no_adp) == 1 for p in prompts)
    old = _prompts(llm_runs[2024]["run"])
    assert old and not any(NO_INJURY_LINE in p or no_adp in p for p in old)
    assert not any("unavailable" in d["view"]["rules"] for d in llm_runs[2024]["run"].decisions())
    assert {d["decided_by"] for d in llm_runs[2025]["run"].decisions() if d["team"] == "LLM"} == {"agent"}


def test_knowledge_cutoff_after_the_season_warns_in_run_and_run_json(llm_runs):
    r = llm_runs[2025]
    warnings = [line for line in r["stderr"].splitlines() if line.startswith("warning: model")]
    assert len(warnings) == 1
    w = warnings[0]
    for text in ("openai/fake-model", "knowledge_cutoff 2026-02", "2025 season ended 2026-01-04",
                 "lists no 2025 playoff games", "information.masking", "ffbench probe"):
        assert text in w, w
    [entry] = r["run"].meta().dump()["knowledge_cutoffs"]
    assert entry["may_know_results"] is True and entry["warning"].startswith("warning: model openai/fake-model")
    assert (entry["knowledge_cutoff"], entry["season_end"], entry["teams"]) == ("2026-02", "2026-01-04", ["LLM"])
    # an earlier cutoff: nothing printed, but run.json records the comparison
    old = llm_runs[2024]
    assert "warning" not in old["stderr"]
    [entry] = old["run"].meta().dump()["knowledge_cutoffs"]
    assert entry["may_know_results"] is False and entry["warning"] is None
    assert (entry["knowledge_cutoff"], entry["season_end"]) == ("2024-06", "2025-02-09")


@pytest.mark.parametrize("cutoff, expect", [
    ("2025-06", "the 2024 season ended 2025-02-09 (the last game in games_1999_2025.csv, playoffs included)"),
    ("2025-01", "the league's weeks 1-17 of 2024 ended 2024-12-30 (the season ends 2025-02-09"),
    ("2025-02-09", "the 2024 season ended 2025-02-09"),
    ("2025-02-08", "the league's weeks 1-17 of 2024 ended"),
    ("2024-12-29", "may have read the results of weeks 1-16 of 2024, which ended on or before its cutoff"),
    ("2024-10-15", "may have read the results of weeks 1-6 of 2024"),  # a cutoff inside the season
    ("2024-09-10", "may have read the results of week 1 of 2024"),
    ("2024-06", None),
])
def test_validate_warns_once_per_model_whose_cutoff_follows_the_games(tmp_path, real, cutoff, expect):
    """Through ``ffbench validate`` for one cutoff that warns and one that does not (the CLI's whole stderr); the
    other cutoffs through the notices validate prints (``data.notices.notices``), without validate's offline LLM
    checks (a bots-only copy of the league played to week 4, the same for every cutoff)."""
    from ffbench_lib.config.load import load_config
    from ffbench_lib.data.notices import notices

    d = yaml.safe_load(DEMO.read_text())
    d["llm"] = {"cache_dir": str(tmp_path / "cache")}
    d["teams"][0] = llm_team("http://127.0.0.1:9/v1", tmp_path, knowledge_cutoff=cutoff)
    d["teams"][1] = {**llm_team("http://127.0.0.1:9/v1", tmp_path, knowledge_cutoff=cutoff), "name": "LLM-2"}
    d["teams"][2] = {**llm_team("http://127.0.0.1:9/v1", tmp_path), "name": "LLM-3"}  # same model, no cutoff
    d["teams"][2]["agent"]["model"] = "openai/no-cutoff"
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(d, sort_keys=False))
    if cutoff in ("2025-06", "2024-06"):
        code, out, err = ffbench("validate", f)
        assert code == 0, err
        lines = err.splitlines()
    else:
        lines = notices(load_config(f), str(f))
    if expect is None:
        assert lines == []
        return
    assert len(lines) == 1 and expect in lines[0] and f"knowledge_cutoff {cutoff}" in lines[0]
    assert f"ffbench probe {f} --season 2024 --out DIR" in lines[0] and "openai/no-cutoff" not in lines[0]


def test_a_masked_league_is_told_to_probe(tmp_path):
    d = yaml.safe_load(DEMO.read_text())
    d["llm"] = {"cache_dir": str(tmp_path / "cache")}
    d["information"] = {"masking": "players"}
    d["teams"][0] = llm_team("http://127.0.0.1:9/v1", tmp_path, knowledge_cutoff="2025-06")
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(d, sort_keys=False))
    code, out, err = ffbench("validate", f)
    assert code == 0, err
    assert "information.masking is players, so names are hidden" in err and "ffbench probe" in err


def test_cutoff_without_a_schedules_file_says_it_cannot_tell(data_dir, tmp_path):
    from ffbench_lib.config.load import load_config
    from ffbench_lib.data.notices import knowledge_cutoffs

    root = tmp_path / "data"
    (root / "nflverse").mkdir(parents=True)  # no schedules file
    d = yaml.safe_load(DEMO.read_text())
    d["data"]["dir"] = str(root)
    d["teams"][0] = llm_team("http://127.0.0.1:9/v1", tmp_path, knowledge_cutoff="2025-06")
    f = tmp_path / "l.yaml"
    f.write_text(yaml.safe_dump(d, sort_keys=False))
    [entry] = knowledge_cutoffs(load_config(f))
    assert entry["may_know_results"] is None
    assert "cannot tell whether it may know the 2024 results" in entry["warning"] and "games" in entry["warning"]
