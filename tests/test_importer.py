"""The importer of the earlier FantasyFootballBench's runs: who drafted, who played, which trade sides were the
models' own, and projections joined by player id. All of it is about the recorded real runs (reference_runs/), so
it reads the real data (marked realdata)."""
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.data.base import DataError
from ffbench_lib.runs.importers.fantasyfootballbench import drafting_model, engine_made_proposal, import_reference_run
from ffbench_lib.runs.rundir import RunDir

REF = "reference_runs"
LATEST = "simulation_20251020_174956"
INJURY = "simulation_20250919_152504_INJURY"
MODELS = ["anthropic/claude-opus-4.1", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash", "google/gemini-2.5-pro",
          "meta-llama/llama-4-maverick", "moonshotai/kimi-k2-0905", "openai/gpt-5", "openai/gpt-5-mini",
          "openai/gpt-oss-120b", "qwen/qwen3-max"]


@pytest.fixture(scope="module")
def two_runs(imported_runs):
    """The recorded runs imported once per test run (LATEST and INJURY among them). Shared: read them, never write
    into them (copy one first)."""
    return imported_runs


def test_drafting_model_from_the_team_label():
    assert drafting_model("GPT_5_Team_9", MODELS) == "openai/gpt-5"          # exact beats the gpt-5-mini prefix
    assert drafting_model("GPT_5_Mini_Team_10", MODELS) == "openai/gpt-5-mini"
    assert drafting_model("GPT_OSS_Team_3", MODELS) == "openai/gpt-oss-120b"
    assert drafting_model("Kimi_K2_Team_4", MODELS) == "moonshotai/kimi-k2-0905"
    assert drafting_model("Claude_Opus_4.1_Team_8", MODELS) == "anthropic/claude-opus-4.1"
    with pytest.raises(ValueError, match="Mistral_Team_1"):
        drafting_model("Mistral_Team_1", MODELS)


def test_engine_made_proposals_are_recognised():
    teams = ["A_Team_1", "B_Team_2", "C_Team_3"]
    good = '{"target_team": "Team B_Team_2", "give": [{"name": "X"}], "receive": [{"name": "Y"}]}'
    # the old engine sent its replacement to the alphabetically first other team (B for proposer A, A otherwise)
    assert engine_made_proposal("", "A_Team_1", "B_Team_2", teams)
    assert engine_made_proposal('{"target_team": "C_Team_3"}', "A_Team_1", "B_Team_2", teams)
    assert not engine_made_proposal(good, "A_Team_1", "B_Team_2", teams)
    assert engine_made_proposal(good, "A_Team_1", "B_Team_2", teams, terms=(["X"], ["Z"]))  # players replaced
    assert not engine_made_proposal(good, "A_Team_1", "B_Team_2", teams, terms=(["X"], ["Y"]))
    # a proposal to any other team was the model's, even when the log cut the answer short
    assert not engine_made_proposal('```json\n{\n  "target_team": "C_Team_3",\n  "give": [', "A_Team_1", "C_Team_3",
                                    teams)
    assert not engine_made_proposal('```json\n{\n  "target_team": "A_Team_1",\n  "give": [', "C_Team_3", "A_Team_1",
                                    teams)


def test_draft_belongs_to_the_drafting_model_and_the_season_to_the_season_model(two_runs):
    rd = RunDir(two_runs / LATEST)
    picks, lineups = rd.table("draft_picks"), rd.table("lineups")
    team = "Claude_Opus_4.1_Team_8"  # drafted by claude-opus-4.1, played by gpt-5 (the results' Model column)
    assert set(picks.loc[picks["team"] == team, "agent"]) == {"llm:anthropic/claude-opus-4.1"}
    assert set(lineups.loc[lineups["team"] == team, "agent"]) == {"llm:openai/gpt-5"}
    draft_decisions = [d for d in rd.decisions() if d["decision"] in ("draft_pick", "draft_shortlist")
                       and d["team"] == team]
    assert draft_decisions and {d["agent"] for d in draft_decisions} == {"llm:anthropic/claude-opus-4.1"}
    assert rd.meta().checks["draft_agents"][team] == "llm:anthropic/claude-opus-4.1"
    data = metrics.load_runs(two_runs / LATEST)
    dq = metrics.draft_quality(data)
    row = dq[dq["team"] == team].iloc[0]
    assert (row["agent"], row["season_agent"]) == ("llm:anthropic/claude-opus-4.1", "llm:openai/gpt-5")
    st = metrics.standings(data).set_index("team")
    assert (st.loc[team, "agent"], st.loc[team, "draft_agent"]) == ("llm:openai/gpt-5", "llm:anthropic/claude-opus-4.1")
    # every imported team changed hands after the draft
    assert (st["agent"] != st["draft_agent"]).all()
    info = metrics.agent_info(data).set_index("agent")
    assert info.loc["llm:openai/gpt-5", "drafted_by"] == "llm:anthropic/claude-opus-4.1"


def test_projections_joined_by_player_id_never_zero(two_runs):
    picks = pd.concat([RunDir(two_runs / n).table("draft_picks") for n in (LATEST, INJURY)])
    proj = picks.drop_duplicates("player_name").set_index("player_name")["proj_points"]
    # the old pool file had Jefferson at 0 and Etienne at Hockenson's 124; SportsData.io's own 2024 numbers
    # (ffbench_v1 scoring: the PPR rule without two-point conversions) are 283.2 and 236.1
    assert proj["Justin Jefferson"] == pytest.approx(283.2, abs=0.1)
    assert proj["Travis Etienne Jr."] == pytest.approx(236.1, abs=0.1)
    assert not (picks["proj_points"] == 0).any()
    injury = RunDir(two_runs / INJURY)
    missing = injury.table("draft_picks")
    missing = sorted(missing.loc[missing["proj_points"].isna(), "player_name"])
    assert missing and injury.meta().checks["drafted_without_projection"] == missing
    ds = metrics.draft_summary(metrics.load_runs(two_runs / INJURY))
    team = ds[ds["unprojected"] > 0].iloc[0]
    assert not math.isnan(team["proj_points"])  # the sum of the projected players, the others counted apart


def test_trade_sides_made_by_the_old_engine_are_not_the_models(two_runs):
    data = metrics.load_runs(two_runs / LATEST)
    tv = metrics.trade_value(data)
    steps = data["trade_steps"]
    engine = steps[(steps["step"] == 1) & (steps["decided_by"] == "fallback")]
    # week 3: GPT_5_Mini_Team_10's proposal was unreadable, so the old engine swapped both sides' first two
    # roster entries (Jefferson and Bijan Robinson for Hill and Barkley) with the alphabetically first team
    neg = engine[(engine["week"] == 3) & (engine["proposer"] == "GPT_5_Mini_Team_10")]["negotiation"]
    assert len(neg) == 1
    sides = tv[tv["negotiation"] == neg.iloc[0]].set_index("team")["made_by"]
    assert sides["GPT_5_Mini_Team_10"] == "fallback" and sides["Claude_Opus_4.1_Team_8"] == "agent"
    # a proposal the model made (week 1: Lamar Jackson for Patrick Mahomes, to Kimi) is the proposer's own
    mine = tv[(tv["week"] == 1) & (tv["team"] == "Gemini_2.5_Pro_Team_5")]
    assert list(mine["made_by"]) == ["agent"]
    # every accepted trade's proposal step is in trade_steps, under the trade's own negotiation id
    assert set(data["trades"]["negotiation"]) <= set(steps.loc[steps["step"] == 1, "negotiation"])
    assert RunDir(two_runs / LATEST).meta().checks["trade_sides_not_the_models"] == int(
        (tv["made_by"] != "agent").sum())


def test_replay_widget_shows_who_drafted_an_imported_team(two_runs):
    from ffbench_lib.present.widgets import StandingsReplay

    w = StandingsReplay(two_runs / LATEST)
    st = w.frames(5)["standings"].set_index("team")
    assert st.loc["Claude_Opus_4.1_Team_8", "drafted_by"] == "llm:anthropic/claude-opus-4.1"
    assert st.loc["Claude_Opus_4.1_Team_8", "agent"] == "llm:openai/gpt-5"


def _copy(real_data_dir, tmp_path, name="simulation_broken"):
    import shutil

    return Path(shutil.copytree(real_data_dir / REF / LATEST, tmp_path / name))


def _cli_import(sim, out, capsys):
    from ffbench_lib.cli import main

    rc = main(["import-ffb", str(sim), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    return rc, err


def test_a_missing_week_is_refused_with_nothing_written(real_data_dir, tmp_path, capsys):
    sim = _copy(real_data_dir, tmp_path)
    (sim / "season_results" / "week_9_results.csv").unlink()
    rc, err = _cli_import(sim, tmp_path / "out", capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(sim) in err and "missing week(s) 9 " in err
    assert not (tmp_path / "out").exists()  # no partial run that metrics would count as a season
    # the last week too: the final standings say how many games there were
    (sim / "season_results" / "week_17_results.csv").unlink()
    with pytest.raises(DataError, match=r"missing week\(s\) 9, 17 "):
        import_reference_run(sim, tmp_path / "out", real_data_dir)


def test_a_week_recorded_twice_or_a_team_missing_from_a_week_is_refused(real_data_dir, tmp_path):
    import shutil

    sim = _copy(real_data_dir, tmp_path)
    res = sim / "season_results"
    shutil.copy(res / "week_3_results.csv", res / "week_03_results.csv")
    with pytest.raises(DataError, match=r"week 3 recorded twice \(week_03_results.csv, week_3_results.csv\)"):
        import_reference_run(sim, tmp_path / "out", real_data_dir)
    (res / "week_03_results.csv").unlink()
    wk = pd.read_csv(res / "week_5_results.csv")
    wk[wk["Team"] != "GPT_5_Team_9"].to_csv(res / "week_5_results.csv", index=False)
    with pytest.raises(DataError, match="week 5: no lineup rows for GPT_5_Team_9"):
        import_reference_run(sim, tmp_path / "out", real_data_dir)
    pd.concat([wk, wk[wk["Team"] == "GPT_5_Team_9"]]).to_csv(res / "week_5_results.csv", index=False)
    with pytest.raises(DataError, match="week 5: rows repeated for GPT_5_Team_9"):
        import_reference_run(sim, tmp_path / "out", real_data_dir)
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_not_a_recorded_run_is_refused(real_data_dir, tmp_path, capsys, two_runs):
    empty = tmp_path / "simulation_x"
    empty.mkdir()
    for folder in (empty, two_runs / LATEST):  # an empty folder; an ffbench run directory
        rc, err = _cli_import(folder, tmp_path / "out", capsys)
        assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
        assert f"{folder}: not a FantasyFootballBench simulation folder" in err
    # the right folders but a log missing
    sim = _copy(real_data_dir, tmp_path)
    next((sim / "season_results").glob("accepted_trades_*.jsonl")).unlink()
    rc, err = _cli_import(sim, tmp_path / "out", capsys)
    assert rc == 2 and "no season_results/accepted_trades_*.jsonl" in err
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def refused_import(real_data_dir, tmp_path_factory, two_runs):
    """One copy of LATEST broken twice where only the full checks see it (one import's work, read by two tests):
    GPT_5_Team_9's recorded points raised by 150 in the final standings, and the draft log's last two calls (the
    last team's last shortlist and pick) cut. Imported over an earlier import of the same run; returns the error
    and the earlier import's files before and after."""
    import shutil

    tmp_path = tmp_path_factory.mktemp("refused")
    sim = _copy(real_data_dir, tmp_path)
    path = sim / "season_results" / "final_standings_2024.csv"
    final = pd.read_csv(path)
    final.loc[final["Team"] == "GPT_5_Team_9", "PointsFor"] += 150
    final.to_csv(path, index=False)
    log = next((sim / "draft_results").glob("llm_calls_*.jsonl"))
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:-2]), encoding="utf-8")
    out = tmp_path / "out"
    shutil.copytree(two_runs / LATEST, out)  # an earlier import of the same run (imported once per test run)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(DataError) as exc:
        import_reference_run(sim, out, real_data_dir)
    return str(exc.value), before, {p.name: p.read_bytes() for p in out.iterdir()}


def test_standings_the_weekly_results_do_not_reproduce_are_refused(refused_import, two_runs):
    # all five reference runs reproduce their final standings (checks.final_standings_match), so a mismatch
    # means the recorded run is not whole; a refused import leaves an earlier import in --out as it was
    assert RunDir(two_runs / LATEST).meta().checks["final_standings_match"] is True
    err, before, after = refused_import
    assert re.search(r"final_standings_2024.csv is not reproduced by the weekly results for 1 team\(s\), "
                     r"e.g. GPT_5_Team_9", err), err
    assert after == before


def test_an_incomplete_draft_is_refused(refused_import):
    err, before, after = refused_import
    assert re.search(r"draft incomplete: .*\(11 of 12\)", err), err
    assert after == before  # nothing written


def test_several_folders_are_imported_all_or_none(real_data_dir, tmp_path, capsys):
    # the good folder comes first (imported into the staging folder); the bad one passes the checks the CLI makes
    # before importing (its weeks are all there) and fails inside the import: a team label naming no model of the
    # run (refused right after the cached preparation, not at the end of a second full import)
    good = _copy(real_data_dir, tmp_path / "src", "simulation_a_good")
    bad = _copy(real_data_dir, tmp_path / "src", "simulation_b_bad")
    for f in (bad / "season_results").glob("*.csv"):
        f.write_text(f.read_text(encoding="utf-8").replace("GPT_5_Team_9", "Mistral_Team_9"), encoding="utf-8")
    out = tmp_path / "out"
    from ffbench_lib.cli import main

    rc = main(["import-ffb", str(tmp_path / "src" / "simulation_*"), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "simulation_b_bad" in err and "Mistral_Team_9" in err and "Traceback" not in err
    assert not (out / good.name).exists() and not (out / bad.name).exists()
    assert [p.name for p in out.iterdir()] == []  # no staging folder left behind
    # a folder that is not an earlier import is never replaced
    (out / good.name).mkdir()
    (out / good.name / "notes.txt").write_text("mine")
    assert main(["import-ffb", str(good), "--out", str(out)]) == 2
    assert "not an earlier import" in capsys.readouterr().err
    assert (out / good.name / "notes.txt").read_text() == "mine"


def _rename_season(sim: Path, old: str, new: str, only: str = "*/*") -> None:
    for f in sim.glob(f"{only}_{old}*.csv"):
        f.rename(f.with_name(f.name.replace(f"_{old}", f"_{new}")))


def test_the_season_is_the_recorded_runs_own(real_data_dir, tmp_path, capsys):
    # the same 2024 run with its files named for 2023: read as 2023, its starters' points do not match 2023's
    # stats, so it is refused rather than imported with another season's points
    sim = _copy(real_data_dir, tmp_path)
    _rename_season(sim, "2024", "2023")
    rc, err = _cli_import(sim, tmp_path / "out", capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "match nflverse's 2023 stats for only 3% of them" in err and "did not play it" in err
    assert not list((tmp_path / "out").glob("*"))  # nothing imported, no staging left


def test_files_of_two_seasons_are_refused(real_data_dir, tmp_path, capsys):
    sim = _copy(real_data_dir, tmp_path)
    _rename_season(sim, "2024", "2023", only="season_results/final_standings")
    rc, err = _cli_import(sim, tmp_path / "out", capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert ("files of several seasons (2023 in season_results/final_standings_2023.csv; 2024 in "
            "draft_results/TopPlayers_2024_Projections_PPR.csv") in err
    assert not (tmp_path / "out").exists()


def test_a_season_the_data_lacks_is_refused_before_anything_is_written(real_data_dir, tmp_path, capsys):
    sim = _copy(real_data_dir, tmp_path)
    _rename_season(sim, "2024", "2019")
    rc, err = _cli_import(sim, tmp_path / "out", capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{sim}: the run played the 2019 season, but " in err and "has no nflverse stats for it" in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(DataError, match="the run played the 2019 season"):
        import_reference_run(sim, tmp_path / "out", real_data_dir)


def test_an_unresolved_player_keeps_the_logged_position_in_every_table(two_runs):
    # "T.Jones" matches no 2024 player; the weekly results call him an RB, and so do the rosters and bench
    rd = RunDir(two_runs / INJURY)
    assert "T.Jones" in rd.meta().checks["unresolved_names"]
    for table in ("lineups", "bench", "rosters"):
        df = rd.table(table)
        assert set(df.loc[df["player_id"] == "ffb:T.Jones", "position"]) == {"RB"}, table
