"""Playoffs: the bracket rules (seeds, byes, two-week rounds, ties), a full bot season with a bracket, resume in
the playoffs, an edited bracket refused, and the champion metrics."""
import json
import shutil

import pandas as pd
import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.records.tables import COLUMNS
from ffbench_lib.game.rules import playoffs as po
from ffbench_lib.runs.rundir import CheckpointError, RunDir
from ffbench_lib.game.state import LeagueState, Record

from engine_helpers import demo_league, run_engine, same_run


def playoff_league(seed=2, teams=4, round_weeks=(1, 2), weeks=17):
    lg = demo_league(seed=seed, weeks=weeks)
    d = lg.model_dump()
    d["playoffs"] = {"enabled": True, "teams": teams, "round_weeks": list(round_weeks)}
    regular = weeks - sum(round_weeks)
    d["trades"]["weeks"] = [w for w in d["trades"]["weeks"] if w <= regular]  # the trade deadline
    return type(lg).model_validate(d)


def calendar(weeks, teams, round_weeks):
    """Each playoff round's weeks, as the league config lays them out."""
    return playoff_league(teams=teams, round_weeks=round_weeks, weeks=weeks).playoff_rounds()


# ------------------------------------------------------------------------------------------- bracket rules
def test_seeds_by_record_then_points_four_of_ten():
    teams = [f"T{i}" for i in range(10)]
    state = LeagueState(teams=teams, agent_ids={t: "x" for t in teams}, draft_order=teams, schedule={})
    for i, t in enumerate(teams):
        state.records[t] = Record(wins=i // 2, losses=14 - i // 2, points_for=1000.0 + i)
    # T9/T8 have 4 wins, T7/T6 3: the better record first, then points for
    seeds = state.standings_order()[:4]
    assert seeds == ["T9", "T8", "T7", "T6"]
    assert po.first_round(seeds) == [["T9", "T6"], ["T8", "T7"]]  # 1-4, 2-3


def test_six_of_twelve_gives_the_top_two_seeds_byes():
    assert po.bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    seeds = ["S1", "S2", "S3", "S4", "S5", "S6"]
    rounds = calendar(17, 6, [1, 1, 1])
    assert rounds == [[15], [16], [17]]
    pts = {15: {"S1": 90, "S2": 80, "S3": 70, "S4": 100, "S5": 60, "S6": 75},
           16: {"S1": 95, "S2": 85, "S4": 99, "S6": 120}, 17: {"S4": 100, "S6": 101}}
    b = po.bracket(seeds, rounds, pts, 17)
    assert b["15"] == [["S1", None], ["S4", "S5"], ["S2", None], ["S3", "S6"]]
    assert b["16"] == [["S1", "S4"], ["S2", "S6"]]  # fixed bracket: 1 meets the 4/5 winner, 2 the 3/6 winner
    assert b["17"] == [["S4", "S6"]]
    rows = po.week_rows(seeds, b["15"], 1, [15], 15, pts)
    assert [(r["team"], r["opponent"], r["result"]) for r in rows] == [
        ("S1", None, "bye"), ("S4", "S5", "W"), ("S5", "S4", "L"), ("S2", None, "bye"), ("S3", "S6", "L"),
        ("S6", "S3", "W")]
    final = po.week_rows(seeds, b["17"], 3, [17], 17, pts)
    assert [(r["team"], r["playoff_seed"], r["result"]) for r in final] == [("S4", 4, "L"), ("S6", 6, "W")]
    # only what has been played decides: before week 16 is played, the final is unknown
    assert set(po.bracket(seeds, rounds, {15: pts[15]}, 16)) == {"15", "16"}


def test_two_week_round_is_decided_by_the_sum():
    seeds = ["A", "B", "C", "D"]
    rounds = calendar(17, 4, [1, 2])
    assert rounds == [[15], [16, 17]]
    pts = {15: {"A": 100, "B": 90, "C": 80, "D": 70},
           16: {"A": 120.25, "B": 100.5}, 17: {"A": 60.1, "B": 90.2}}  # A wins week 16, B the round
    b = po.bracket(seeds, rounds, pts, 17)
    assert b["16"] == b["17"] == [["A", "B"]]
    first = po.week_rows(seeds, b["16"], 2, rounds[1], 16, pts)
    assert [r["result"] for r in first] == [None, None]  # the round goes on
    last = po.week_rows(seeds, b["17"], 2, rounds[1], 17, pts)
    assert [(r["team"], r["round_points_for"], r["result"]) for r in last] == [("A", 180.35, "L"),
                                                                                ("B", 190.7, "W")]


def test_a_tie_goes_to_the_higher_seed():
    seeds = ["A", "B", "C", "D"]
    assert po.winner(["A", "D"], seeds, {"A": 100.0, "D": 100.0}) == "A"
    assert po.winner(["C", "B"], seeds, {"C": 88.004, "B": 88.0}) == "B"  # equal to the hundredth
    assert po.winner(["C", "B"], seeds, {"C": 88.01, "B": 88.0}) == "C"
    # over two weeks: the sums tie although the weeks differ
    pts = {16: {"C": 50.0, "B": 70.0}, 17: {"C": 70.0, "B": 50.0}}
    rows = po.week_rows(seeds, [["B", "C"]], 2, [16, 17], 17, pts)
    assert {r["team"]: r["result"] for r in rows} == {"B": "W", "C": "L"}


def test_config_places_the_rounds_at_the_end():
    lg = playoff_league()
    assert lg.regular_weeks == 14 and [lg.playoff_round(w) for w in (14, 15, 16, 17)] == [None, 1, 2, 2]
    assert demo_league().regular_weeks == 17 and demo_league().playoff_rounds() == []
    # without round_weeks: one week per round and a two-week final, whatever the field
    d = demo_league().model_dump()
    for teams, weeks in ((2, [2]), (4, [1, 2]), (6, [1, 1, 2]), (9, [1, 1, 1, 2])):
        d["playoffs"] = {"enabled": True, "teams": teams}
        assert type(lg).model_validate(d).playoffs.round_weeks == weeks
    # config.yaml of a league without playoffs keeps its shape; with them it holds the whole bracket
    assert "playoffs" not in demo_league().model_dump(mode="json") and lg.model_dump()["playoffs"]["teams"] == 4


# ------------------------------------------------------------------------------------------- a full season
@pytest.fixture(scope="module")
def season(prepared_2024, tmp_path_factory):
    out = tmp_path_factory.mktemp("playoffs") / "run"
    state, _ = run_engine(playoff_league(), prepared_2024, out)
    return state, out


def test_a_season_with_playoffs_crowns_one_champion(season):
    state, out = season
    run = RunDir(out)
    assert run.meta().status == "complete" and state.phase == "week:17"
    # regular season only in the records, standings and matchups
    st, m = run.table("standings"), run.table("matchups")
    assert set(st["week"]) == set(m["week"]) == set(range(1, 15)) and set(state.schedule) == {str(w) for w in range(1, 15)}
    assert all(r.games == 14 for r in state.records.values())
    final14 = st[st["week"] == 14].sort_values("rank")["team"].tolist()
    assert state.extras["playoffs"]["seeds"] == final14[:4]
    assert metrics.standings(metrics.load_runs(out))[["wins", "losses", "ties"]].sum(axis=1).eq(14).all()
    # every team sets a lineup every week, playoff weeks included
    lu = run.table("lineups")
    assert lu.groupby("week")["team"].nunique().eq(10).all() and set(lu["week"]) == set(range(1, 18))
    # the bracket: 4 teams in week 15, the 2 winners in weeks 16-17, points are the lineup totals
    p = run.table("playoffs")
    assert list(p.columns) == COLUMNS["playoffs"]
    assert p.groupby("week").size().to_dict() == {15: 4, 16: 2, 17: 2}
    totals = lu.groupby(["week", "team"])["points"].sum().round(2)
    assert all(abs(totals[(r.week, r.team)] - r.points_for) < 1e-9 for r in p.itertuples())
    decided = p[p["result"].notna()]
    winners = decided[decided["result"] == "W"]
    champion = winners[winners["week"] == 17]["team"].tolist()
    assert len(champion) == 1 and len(decided[decided["week"] == 17]) == 2
    mine = decided[decided["team"] == champion[0]]
    assert (mine["result"] == "W").all() and len(mine) == 2  # won every game it played
    assert set(winners[winners["week"] == 15]["team"]) == set(p[p["week"] == 16]["team"])
    r17 = p[p["week"] == 17].set_index("team")
    assert r17.loc[champion[0], "round_points_for"] >= r17.loc[champion[0], "round_points_against"]


def test_lineup_views_show_the_playoff_opponent(season):
    state, out = season
    p = RunDir(out).table("playoffs")
    views = {(d["week"], d["team"]): d["view"] for d in RunDir(out).decisions() if d["decision"] == "set_lineup"}
    for w in (15, 16, 17):
        opp = dict(zip(p[p["week"] == w]["team"], p[p["week"] == w]["opponent"]))
        for t in state.teams:
            assert views[(w, t)]["opponent_team"] == opp.get(t), (w, t)  # None: out of the playoffs
    assert sum(views[(15, t)]["opponent_team"] is None for t in state.teams) == 6
    assert views[(14, state.teams[0])]["opponent_team"] is not None
    assert views[(15, state.teams[0])]["record"]["wins"] == state.records[state.teams[0]].wins  # records frozen


def test_playoff_metrics(season):
    state, out = season
    data = metrics.load_runs(out)
    fs = metrics.final_standings(data)
    assert list(fs.columns) == metrics.FINAL_COLUMNS and len(fs) == 10
    assert fs["champion"].sum() == 1 and fs["final_place"].tolist() == list(range(1, 11))
    champ = fs[fs["champion"]].iloc[0]
    p = data["playoffs"]
    assert champ["team"] == p[(p["week"] == 17) & (p["result"] == "W")]["team"].iloc[0]
    assert champ["final_place"] == 1 and champ["playoff_result"] == "champion"
    assert fs["playoff_result"].value_counts().to_dict() == {"missed playoffs": 6, "lost semifinal": 2,
                                                             "champion": 1, "runner-up": 1}
    assert fs["playoff_seed"].notna().sum() == 4 and set(fs[fs["playoff_seed"].notna()]["regular_rank"]) == {1, 2, 3, 4}
    missed = fs[fs["playoff_seed"].isna()]
    assert missed["final_place"].tolist() == sorted(missed["regular_rank"].tolist()) == list(range(5, 11))
    ch = metrics.champions(data)
    assert len(ch) == 1 and ch["champion"].iloc[0] == champ["team"] and ch["runner_up"].iloc[0] != champ["team"]
    ps = metrics.playoff_summary(data).set_index("agent")
    assert ps["team_seasons"].sum() == 10 and ps["playoff_appearances"].sum() == 4
    assert ps["championships"].sum() == 1 and ps.loc[champ["agent"], "championships"] == 1
    assert ps["runner_ups"].sum() == 1


@pytest.fixture(scope="module")
def plain(prepared_2024, tmp_path_factory):
    """A 3-week demo run without playoffs, played once: checked alone and read beside the playoff season."""
    out = tmp_path_factory.mktemp("plain") / "run"
    run_engine(demo_league(seed=2, weeks=3), prepared_2024, out)
    return out


def test_league_without_playoffs_writes_no_bracket(plain):
    cp = json.loads((plain / "checkpoint.json").read_text())
    assert "extras" not in cp and set(cp["schedule"]) == {"1", "2", "3"} and "playoffs" not in cp["tables"]
    p = RunDir(plain).table("playoffs")
    assert p.empty and list(p.columns) == COLUMNS["playoffs"]
    data = metrics.load_runs(plain)
    assert metrics.final_standings(data).empty and metrics.champions(data).empty
    assert metrics.playoff_summary(data).empty


# ------------------------------------------------------------------------------------------- resume, edits
@pytest.fixture(scope="module")
def byes_runs(prepared_2024, tmp_path_factory):
    """6 of 10 with byes and a two-week final (regular weeks 1-12, rounds 13, 14, 15-16): a whole run and one
    killed after week 15 (inside the final)."""
    tmp = tmp_path_factory.mktemp("byes")
    lg = playoff_league(seed=4, teams=6, round_weeks=(1, 1, 2), weeks=16)
    run_engine(lg, prepared_2024, tmp / "whole")
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp / "crashed", crash_after="week:15")
    return lg, tmp


@pytest.mark.parametrize("crash", ["week:12", "week:13", "week:15"])  # season's end, after round 1, in the final
def test_resume_in_the_playoffs_is_identical(byes_runs, prepared_2024, tmp_path, crash):
    lg, tmp = byes_runs
    if crash == "week:15":
        shutil.copytree(tmp / "crashed", tmp_path / "run")
    else:
        with pytest.raises(SimulatedCrash):
            run_engine(lg, prepared_2024, tmp_path / "run", crash_after=crash)
    cp = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    assert set(cp["extras"]["playoffs"]["pairs"]) == {str(w) for w in range(13, int(crash[5:]) + 1)}
    run_engine(lg, prepared_2024, tmp_path / "run", resume=True)
    assert same_run(tmp / "whole", tmp_path / "run") == [
        {"from_status": "running", "from_phase": crash, "changes": {}}]
    p = RunDir(tmp / "whole").table("playoffs")
    byes = p[p["result"] == "bye"]
    assert sorted(byes["playoff_seed"]) == [1, 2] and set(byes["week"]) == {13}
    assert p.groupby("week").size().to_dict() == {13: 6, 14: 4, 15: 2, 16: 2}
    champ = p[(p["week"] == 16) & (p["result"] == "W")]["team"]
    assert len(champ) == 1


def _cut(cp):
    cp["tables"]["playoffs"][0]["points_for"] += 1.0


@pytest.mark.parametrize("edit,message", [
    (lambda cp: cp["extras"]["playoffs"]["seeds"].reverse(), "the saved bracket (seeds and pairs) is not what"),
    (lambda cp: cp["extras"]["playoffs"]["pairs"]["15"][0].reverse(), "the saved bracket (seeds and pairs)"),
    (lambda cp: cp["extras"]["playoffs"]["pairs"].pop("14"), "the saved bracket (seeds and pairs)"),
    (lambda cp: cp["tables"]["playoffs"][-1].update({"result": "W"}), "the playoffs table is not what"),
    (_cut, "the playoffs table is not what"),
    (lambda cp: cp.pop("extras"), "the saved bracket"),
])
def test_an_edited_bracket_is_refused(byes_runs, prepared_2024, tmp_path, edit, message):
    lg, tmp = byes_runs
    run = tmp_path / "run"
    shutil.copytree(tmp / "crashed", run)
    cp = json.loads((run / "checkpoint.json").read_text())
    edit(cp)
    (run / "checkpoint.json").write_text(json.dumps(cp))
    with pytest.raises(CheckpointError) as err:
        run_engine(lg, prepared_2024, run, resume=True)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_regular_season_schedule_does_not_change_with_playoffs():
    from ffbench_lib.game.rules.schedule import make_schedule

    teams = [f"T{i}" for i in range(10)]
    for kind in ("random", "round_robin"):
        full, short = make_schedule(teams, 17, kind, 3), make_schedule(teams, 14, kind, 3)
        assert short == {w: full[w] for w in short} and len(short) == 14


def test_replay_widget_shows_the_playoff_games(season):
    from ffbench_lib.present.widgets import StandingsReplay

    state, out = season
    w = StandingsReplay(out)
    assert w.slider.max == 17
    w.slider.value = 16
    f = w.frames(16)
    assert f["playoff_round"] == 2 and len(f["matchups"]) == 1 and "Playoffs, round 2" in w.games_title.value
    assert f["standings"]["wins"].sum() + f["standings"]["ties"].sum() / 2 == 14 * 5  # the regular season's final
    assert w.frames(14)["playoff_round"] is None and len(w.frames(14)["matchups"]) == 5


@pytest.mark.slow
def test_standings_notebook_shows_the_champion(season, plain, tmp_path):
    from ffbench_lib.runs.notebooks import execute

    state, out = season  # and a run without playoffs alongside
    nb = execute("03_standings.ipynb", tmp_path / "03.ipynb", {"runs": [str(out), str(plain)],
                                                               "out": str(tmp_path / "analysis")}, timeout_s=600)
    cells = json.loads(nb.read_text())["cells"]
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    shown = " ".join("".join(o.get("data", {}).get("text/markdown", "")) for c in cells for o in c.get("outputs", []))
    assert "**Champions**" in shown and "**Bracket results**" in shown
    champs = pd.read_csv(tmp_path / "analysis" / "champions.csv")
    p = RunDir(out).table("playoffs")
    assert champs["champion"].tolist() == p[(p["week"] == 17) & (p["result"] == "W")]["team"].tolist()
    final = pd.read_csv(tmp_path / "analysis" / "final_standings.csv")
    assert len(final) == 10 and final["champion"].sum() == 1  # the run without playoffs has no final places


def test_cli_run_names_the_champion(data_dir, tmp_path):
    import os
    import subprocess
    import sys

    import yaml

    cfg = playoff_league(seed=1, teams=6, round_weeks=(1, 1, 1), weeks=6).model_dump(mode="json")
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "FFBENCH_DATA_DIR": str(data_dir), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "FFBENCH_CACHE_DIR": str(tmp_path / "prepared")}
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "run", str(tmp_path / "l.yaml"), "--out",
                        str(tmp_path / "run"), "--quiet"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    p = RunDir(tmp_path / "run").table("playoffs")
    won = p[(p["week"] == 6) & (p["result"] == "W")].iloc[0]
    assert f"champion: {won['team']} ({won['agent']}, seed {won['playoff_seed']}), beating {won['opponent']}" in r.stdout


def test_playoff_views_hold_no_future(season, prepared_2024, tmp_path):
    """Perturb the stats from week 16 on: every view through week 16 (its final pairs come from week 15) is
    byte-identical, and the bracket's later points do change."""
    from ffbench_lib.game.views import canonical_json
    from test_firewall import perturb

    state, out = season
    run_engine(playoff_league(), perturb(prepared_2024, 16), tmp_path / "perturbed")
    real, fake = RunDir(out).decisions(), RunDir(tmp_path / "perturbed").decisions()
    a = [r for r in real if r["week"] is None or r["week"] <= 16]
    b = [r for r in fake if r["week"] is None or r["week"] <= 16]
    assert len(a) == len(b) and any(r["week"] == 16 and r["view"]["opponent_team"] for r in a)
    assert all(canonical_json(x["view"]) == canonical_json(y["view"]) for x, y in zip(a, b))
    pr, pf = RunDir(out).table("playoffs"), RunDir(tmp_path / "perturbed").table("playoffs")
    assert pr[pr["week"] <= 15].equals(pf[pf["week"] <= 15]) and not pr.equals(pf)
