"""Metrics on small hand-computed cases, statistics on synthetic data with known answers, the importer on the
recorded reference runs, and every analysis notebook under papermill."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.core import stats
from ffbench_lib.config.league import League, Roster
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.runs.rundir import RunDir, table_frame

from analysis_helpers import newcomer_notebook, newcomer_project
from engine_helpers import demo_league, run_engine


def tiny_runs(lineups, bench, rosters, matchups=None, trades=None, standings=None):
    """A hand-written one-run table set in the shape load_runs returns."""
    def frame(name, rows):
        return table_frame(name, rows).assign(run_id="r", seed=0)
    return {"lineups": frame("lineups", lineups), "bench": frame("bench", bench), "rosters": frame("rosters", rosters),
            "matchups": frame("matchups", matchups or []), "trades": frame("trades", trades or []),
            "standings": frame("standings", standings or []), "draft_picks": frame("draft_picks", []),
            "meta": pd.DataFrame([{"run_id": "r", "roster": json.dumps(Roster().model_dump(mode="json"))}])}


def test_start_sit_optimal_lineup_with_flex_hand_computed():
    # started: QB q1 20, RB r1 10 r2 9, WR w1 8 w2 7, TE t1 5, FLEX w3 1  -> 60
    # bench: r3 12 (should start at RB, pushing r2 9 to FLEX over w3), t2 6 (TE over t1), w4 0, q2 30 (QB)
    started = {"q1": ("QB", "QB", 20), "r1": ("RB", "RB", 10), "r2": ("RB", "RB", 9), "w1": ("WR", "WR", 8),
               "w2": ("WR", "WR", 7), "t1": ("TE", "TE", 5), "w3": ("FLEX", "WR", 1)}
    bench = {"r3": ("RB", 12), "t2": ("TE", 6), "w4": ("WR", 0), "q2": ("QB", 30)}
    lineups = [{"week": 1, "team": "A", "agent": "x", "slot": s, "player_id": p, "position": pos, "points": v,
                "decided_by": "agent"} for p, (s, pos, v) in started.items()]
    bench_rows = [{"week": 1, "team": "A", "agent": "x", "player_id": p, "position": pos, "points": v}
                  for p, (pos, v) in bench.items()]
    rosters = [{"week": 1, "team": "A", "agent": "x", "player_id": p, "position": pos}
               for p, (_, pos, _) in started.items()] + [{"week": 1, "team": "A", "agent": "x", "player_id": p,
                                                           "position": pos} for p, (pos, _) in bench.items()]
    ss = metrics.start_sit(tiny_runs(lineups, bench_rows, rosters)).iloc[0]
    # optimal: QB q2 30, RB r3 12 + r1 10, WR w1 8 + w2 7, TE t2 6, FLEX r2 9 = 82
    assert ss["optimal_points"] == 82 and ss["started_points"] == 60 and ss["left_on_table"] == 22
    assert ss["pct_of_optimal"] == pytest.approx(60 / 82)


def test_trade_value_across_weeks_hand_computed():
    # week 3 trade: A gives a1 to B for b1. Points: a1 = 10/wk, b1 = 4/wk over weeks 1..4.
    rows, bench = [], []
    for w in range(1, 5):
        owner_a1, owner_b1 = ("A", "B") if w < 3 else ("B", "A")
        rows.append({"week": w, "team": owner_a1, "agent": f"ag{owner_a1}", "slot": "WR", "player_id": "a1",
                     "position": "WR", "points": 10.0, "decided_by": "agent"})
        if w == 4:  # b1 sits on A's bench in week 4
            bench.append({"week": w, "team": owner_b1, "agent": f"ag{owner_b1}", "player_id": "b1", "position": "WR",
                          "points": 4.0})
        else:
            rows.append({"week": w, "team": owner_b1, "agent": f"ag{owner_b1}", "slot": "WR", "player_id": "b1",
                         "position": "WR", "points": 4.0, "decided_by": "agent"})
    trades = [{"week": 3, "negotiation": "n1", "proposer": "A", "receiver": "B", "proposer_agent": "agA",
               "receiver_agent": "agB", "proposer_gives": ["a1"], "receiver_gives": ["b1"], "accepted_step": 2,
               "made_by": "agent"}]
    tv = metrics.trade_value(tiny_runs(rows, bench, [], trades=trades)).set_index("team")
    # remaining weeks 3-4: A gets b1 (8) and gives a1 (20) -> -12; started: b1 started by A in week 3 only (4),
    # a1 started by B in weeks 3-4 (20) -> -16
    assert tv.loc["A", "value_all_weeks"] == -12 and tv.loc["B", "value_all_weeks"] == 12
    assert tv.loc["A", "value_started"] == -16 and tv.loc["B", "value_started"] == 20 - 4


def test_all_play_record_hand_computed():
    m = []
    scores = {1: {"A": 100, "B": 90, "C": 80, "D": 80}, 2: {"A": 50, "B": 60, "C": 70, "D": 80}}
    pairs = {1: [("A", "B"), ("C", "D")], 2: [("A", "D"), ("B", "C")]}
    for w, ps in pairs.items():
        for a, b in ps:
            for t, o in ((a, b), (b, a)):
                pf, pa = scores[w][t], scores[w][o]
                m.append({"week": w, "team": t, "agent": t, "opponent": o, "points_for": pf, "points_against": pa,
                          "result": "W" if pf > pa else "L" if pf < pa else "T"})
    st = [{"week": 2, "team": t, "agent": t, "wins": {"A": 1, "B": 1, "C": 0, "D": 1}[t],
           "losses": {"A": 1, "B": 1, "C": 1, "D": 0}[t], "ties": {"A": 0, "B": 0, "C": 1, "D": 1}[t],
           "points_for": 0, "points_against": 0, "rank": 1} for t in "ABCD"]
    ap = metrics.all_play(tiny_runs([], [], [], matchups=m, standings=st)).set_index("team")
    # A: week 1 beats 3 -> 3-0; week 2 beats 0 -> 0-3. C: week 1 beats 0, ties D; week 2 beats A, B.
    assert (ap.loc["A", "ap_wins"], ap.loc["A", "ap_losses"]) == (3, 3)
    assert (ap.loc["C", "ap_wins"], ap.loc["C", "ap_ties"], ap.loc["C", "ap_losses"]) == (2, 1, 3)
    assert ap.loc["A", "expected_wins"] == pytest.approx(1.0)
    assert ap.loc["C", "expected_wins"] == pytest.approx(0.5 / 3 + 2 / 3)
    assert ap.loc["D", "luck"] == pytest.approx(1.5 - (0.5 / 3 + 1.0))


def test_statistics_on_synthetic_data_with_known_answers():
    rng = np.random.default_rng(0)
    runs = [f"r{i}" for i in range(12)]
    rows = []
    for r in runs:
        base = rng.normal(0, 1)
        for agent, effect in (("strong", 3.0), ("middle", 0.0), ("weak", -3.0), ("twin", 0.0)):
            rows.append({"run_id": r, "agent": agent, "v": base + effect + rng.normal(0, 0.3)})
    df = pd.DataFrame(rows)
    fr = stats.friedman(df, "v")
    assert fr["p_value"] < 0.001 and fr["kendall_w"] > 0.7
    pw = stats.pairwise_wilcoxon(df, "v").set_index(["agent_a", "agent_b"])
    assert pw.loc[("strong", "weak"), "significant"] and pw.loc[("strong", "weak"), "rank_biserial"] == 1.0
    assert not pw.loc[("middle", "twin"), "significant"]
    means = stats.agent_means(df, "v").set_index("agent")
    assert means.loc["strong", "ci_low"] < means.loc["strong", "mean"] < means.loc["strong", "ci_high"]
    assert means.loc["strong", "ci_low"] > means.loc["middle", "ci_high"]
    # no real difference: the verdict says so
    null = df.assign(v=rng.normal(0, 1, len(df)))
    text = stats.verdict("noise", stats.friedman(null, "v"), stats.pairwise_wilcoxon(null, "v"))
    assert "NOT statistically significant" in text
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    # a CI needs two values: fewer (NaNs not counted) give NaN for both ends, never a zero-width interval
    for few in ([5.0], [], [5.0, np.nan]):
        lo, hi, method = stats.mean_ci(few)
        assert np.isnan(lo) and np.isnan(hi) and method == "none", few
    assert stats.mean_ci([4.0, 4.0, 4.0]) == (4.0, 4.0, "t-interval")  # no spread: the value itself
    lo, hi, method = stats.mean_ci([1.0, 2.0, 3.0, 4.0])
    assert lo < 1.0 and hi > 4.0 and method == "t-interval"  # t_{3}: wider than the data's range at n = 4
    assert set(means["ci_method"]) == {"t-interval"}  # 12 runs


@pytest.fixture(scope="module")
def newcomer(data_dir, prepared_2024, tmp_path_factory):
    """The newcomer's project (analysis_helpers, shared with test_notebooks): outputs/runs holds five full demo
    seasons (seeds 0-4; seed 1 played by notebook 02 with its defaults) and one partial run (crashed after week 1):
    the metrics, the replay widget and the notebooks all read them."""
    return newcomer_project(tmp_path_factory, data_dir, prepared_2024)


@pytest.fixture(scope="module")
def demo_runs(newcomer):
    return newcomer / "outputs" / "runs"


def test_metrics_on_a_real_run(demo_runs):
    data = metrics.load_runs([demo_runs / "demo-s2", demo_runs / "demo-s3"])
    assert data["meta"]["run_id"].nunique() == 2
    st = metrics.standings(data)
    assert len(st) == 20 and st["draft_slot"].between(1, 10).all()
    slots = metrics.points_by_slot(data)
    pf = st.set_index(["run_id", "team"])["points_for"]
    assert (slots.set_index(["run_id", "team"])[["QB", "RB", "WR", "TE", "FLEX"]].sum(axis=1) - pf).abs().max() < 0.01
    ss = metrics.start_sit_season(data)
    assert (ss["left_on_table"] >= -1e-6).all() and (ss["pct_of_optimal"] <= 1 + 1e-9).all()
    dq = metrics.draft_quality(data)
    assert len(dq) == 240 and (dq["actual_points"] >= -20).all() and dq["prev_points"].sum() > 0
    head = metrics.headline(data)
    assert set(head["agent"]) == {"bot:adp", "bot:vorp", "bot:recent_form", "bot:random"}


REF = "reference_runs"


def test_importer_reproduces_the_recorded_seasons(imported_runs, real_data_dir):
    runs = sorted(imported_runs.iterdir())
    assert len(runs) == 5
    for run in runs:
        meta = RunDir(run).meta().dump()
        assert meta["checks"]["final_standings_match"], run
        assert meta["checks"]["starter_points_match_nflverse_rate"] > 0.99
        assert len(meta["checks"]["unresolved_names"]) <= 2
        rd = RunDir(run)
        picks = rd.table("draft_picks")
        assert len(picks) == 120
        assert sorted(picks.loc[picks["player_id"].duplicated(), "player_name"]) == meta["checks"]["duplicate_draft_picks"]
        lu = rd.table("lineups")
        sizes = lu.groupby(["week", "team"]).size()
        # the earlier engine sometimes fielded fewer than 7 starters; those weeks are kept as they were played
        assert set(lu["slot"]) == {"QB", "RB", "WR", "TE", "FLEX"} and sizes.between(1, 7).all()
        assert meta["checks"]["team_weeks_short_of_starters"] == int((sizes < 7).sum())
    data = metrics.load_runs(imported_runs)
    st = metrics.standings(data)
    # agents are the logged models, not the team labels
    assert st["agent"].str.startswith("llm:").all() and "llm:anthropic/claude-sonnet-4" in set(st["agent"])
    gpt5_label = st[(st["team"] == "GPT_5_Team_9")]["agent"].unique()
    assert "llm:openai/gpt-5" not in gpt5_label
    final = pd.read_csv(real_data_dir / REF / "simulation_20251020_174956" / "season_results" / "final_standings_2024.csv")
    mine = st[st["run_id"].str.contains("20251020_174956")].set_index("team")
    assert (mine.loc[final["Team"], "wins"].to_numpy() == final["Wins"].to_numpy()).all()
    tv = metrics.trade_value(data)
    assert set(tv["made_by"]) <= {"agent", "fallback"} and (tv["made_by"] == "fallback").any()
    # 22 of the 74 accepted trades were proposed by the old engine (an invalid proposal replaced by a swap sent to
    # the alphabetically first team): their proposing side is not the model's; 30 of 148 sides in all
    steps = data["trade_steps"]
    proposals = data["trades"].merge(steps[steps["step"] == 1], on=["run_id", "negotiation"])
    assert len(data["trades"]) == 74 and len(proposals) == 74
    assert int((proposals["decided_by"] == "fallback").sum()) == 22
    assert int((tv["made_by"] == "fallback").sum()) == 30
    for r in proposals[proposals["decided_by"] == "fallback"].itertuples():
        side = tv[(tv["run_id"] == r.run_id) & (tv["negotiation"] == r.negotiation) & (tv["team"] == r.proposer_x)]
        assert list(side["made_by"]) == ["fallback"]
    # the engine played gemini-2.5-pro's and gpt-oss-120b's seasons: flagged wherever they appear
    info = metrics.agent_info(data).set_index("agent")
    assert set(info.index[info["flagged"]]) >= {"llm:google/gemini-2.5-pro", "llm:openai/gpt-oss-120b"}
    head = metrics.headline(data).set_index("agent")
    assert head.loc["llm:google/gemini-2.5-pro", "flagged"] and not head.loc["llm:openai/gpt-5", "flagged"]
    # the draft is the drafting model's (every team changed hands after it)
    assert (st["agent"] != st["draft_agent"]).all() and len(st) == 50


NOTEBOOKS = ["03_standings", "04_positions", "05_draft", "06_start_sit", "07_trades", "08_model_comparison"]


@pytest.mark.slow
@pytest.mark.parametrize("source", ["demo", pytest.param("imported", marks=pytest.mark.realdata)])
def test_analysis_notebooks_execute(source, request, tmp_path, tmp_path_factory, data_dir):
    """demo: what the newcomer's executions of the notebooks (one per test run, test_notebooks checks their
    defaults) show; imported: the notebooks executed here on the imported runs (read only: they write to ``out``)."""
    from ffbench_lib.runs.notebooks import execute

    names = NOTEBOOKS
    if source == "demo":
        project = request.getfixturevalue("newcomer")
        executed = {name: newcomer_notebook(tmp_path_factory, project, data_dir, name) for name in names}
        out = project / "outputs" / "analysis"
    else:
        runs, out = str(request.getfixturevalue("imported_runs")), tmp_path / "analysis"
        executed = {name: execute(f"{name}.ipynb", out / f"{name}.ipynb", {"runs": runs, "out": str(out)},
                                  timeout_s=600) for name in names}
    for name, nb in executed.items():
        cells = json.loads(Path(nb).read_text())["cells"]
        assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"], name
    for fig in ("points_by_position", "draft_performance", "start_sit", "trade_value", "win_rate_ci",
                "standings_by_week"):
        assert (out / f"{fig}.png").stat().st_size > 10_000 and (out / f"{fig}.svg").exists()
    head = pd.read_csv(out / "headline.csv")
    assert len(head) == (4 if source == "demo" else 10)
    # notebook 08's leaderboard: ratings with named intervals; agents mostly played by the engine never ranked
    board = pd.read_csv(out / "leaderboard.csv").set_index("agent")
    assert set(board.index) == set(head["agent"]) and (board["ci_method"] == "jackknife t-interval").all()
    flagged = set(head.loc[head["flagged"], "agent"])
    assert board.loc[list(flagged), "rank"].isna().all() and board.loc[~board.index.isin(flagged), "rank"].notna().all()
    assert (source == "imported") == bool(flagged)
    assert (out / "leaderboard.png").stat().st_size > 10_000 and (out / "cost_vs_rating.png").exists()
    power = pd.read_csv(out / "power.csv")  # one row per adjacent pair of the ranked agents
    assert len(power) == len(board) - len(flagged) - 1 and (power["seeds_full"].dropna() >= 2).all()
    assert power["sd_field"].isna().all()  # not a field batch: the field design needs a field pilot
    assert {"fallback_rate", "flagged", "drafted_by"} <= set(head.columns)

    def texts(name):
        cells = json.loads(Path(executed[name]).read_text())["cells"]
        return [t if isinstance(t, str) else "".join(t) for c in cells for o in c.get("outputs", [])
                for t in ([o.get("text", "")] + [o.get("data", {}).get(k, "") for k in ("text/plain", "text/markdown")])]
    every = [t for name in names for t in texts(name)]
    noted = [name for name in names if any("1 run(s) excluded as not complete (1 running)" in t for t in texts(name))]
    assert noted == (names if source == "demo" else [])
    assert not [t for t in every if "PosixPath(" in t]  # save helpers return nothing
    caveat = [t for t in every if "Imported runs" in t]
    assert bool(caveat) == (source == "imported")  # the imported-runs caveat only where imported runs are
    usage = " ".join(texts("08_model_comparison"))
    assert "5 runs (seeds of the 2024 season)" in usage and "two-sided paired t-test" in usage
    assert "With 5 runs no pair can be significant after Holm correction" in usage  # 2/2**5 > 0.05/6
    assert ("no LLM teams in these runs" in usage) == (source == "demo")
    assert "draft slot" in usage and "by_slot" not in usage  # a table, not a raw dict
    if source == "imported":  # the trades table names players, never ids
        trades = [t for t in texts("07_trades") if "proposer_gives" in t]
        assert trades and not [t for t in trades if "00-00" in t]
    replay = json.loads(Path(executed["03_standings"]).read_text())
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
               for c in replay["cells"] for o in c.get("outputs", []))


def test_replay_widget_moves_through_weeks(demo_runs):
    from ffbench_lib.present.widgets import StandingsReplay

    w = StandingsReplay(demo_runs / "demo-s1")
    first = w.table.value
    w.slider.value = 10
    assert w.table.value != first and "ADP" in w.table.value
    assert w.frames(10)["standings"]["wins"].sum() + w.frames(10)["standings"]["ties"].sum() / 2 == 50
    w.team.value = w.team.options[3]
    assert w.team.options[3] in w.lineup.value or len(w.frames(10)["lineup"]) == 7


def test_same_folder_name_in_two_batches_stays_two_runs(prepared_2024, tmp_path):
    """Runs .../m1/seed-1 and .../m2/seed-1 of one league name and seed are two runs, not one merged run."""
    run_engine(demo_league(seed=1, weeks=3), prepared_2024, tmp_path / "m1" / "seed-1")
    run_engine(demo_league(seed=1, weeks=3, schedule="round_robin"), prepared_2024, tmp_path / "m2" / "seed-1")
    data = metrics.load_runs([tmp_path / "m1" / "seed-1", tmp_path / "m2" / "seed-1"])
    ids = list(data["meta"]["run_id"])
    assert len(set(ids)) == 2 and ids[0].endswith("m1/seed-1") and ids[1].endswith("m2/seed-1")
    st = metrics.standings(data)
    assert len(st) == 20 and st["draft_slot"].between(1, 10).all()
    head = metrics.headline(data)
    assert (head["runs"] == 2).all()


def test_excluded_runs_are_reported_and_trades_divide_by_the_agents_runs(prepared_2024, tmp_path):
    """A partial run is excluded with a warning and a row in data['excluded']; an agent that played one of two
    runs has its trades per run divided by 1, not 2."""
    cfg = demo_league().model_dump(mode="json") | {"seed": 0, "weeks": 5}  # a seed whose VORP bots trade
    cfg["trades"]["weeks"] = [2, 3, 4]
    run_engine(League.model_validate(cfg), prepared_2024, tmp_path / "a")
    for t in cfg["teams"]:  # run b: no vorp team
        t["agent"] = {"kind": "bot", "strategy": "adp"} if t["agent"].get("strategy") == "vorp" else t["agent"]
    other = League.model_validate(cfg)
    run_engine(other, prepared_2024, tmp_path / "b")
    with pytest.raises(SimulatedCrash):
        run_engine(demo_league(seed=5, weeks=3), prepared_2024, tmp_path / "c", crash_after="week:1")
    with pytest.warns(UserWarning, match=r"1 run\(s\) excluded .*running"):
        data = metrics.load_runs(tmp_path)
    assert data["meta"]["run_id"].nunique() == 2
    ex = data["excluded"]
    assert list(ex["status"]) == ["running"] and Path(ex["path"].iloc[0]).name == "c"
    assert "1 run(s) excluded" in metrics.describe_runs(data) and "2 runs" in metrics.describe_runs(data)
    ts = metrics.trade_value_per_run(data)
    vorp = ts[ts["agent"] == "bot:vorp"]
    assert len(vorp) == 1 and vorp["trades"].iloc[0] > 0
    head = metrics.headline(data).set_index("agent")
    assert head.loc["bot:vorp", "trades_per_run"] == pytest.approx(vorp["trades"].iloc[0])
    assert head.loc["bot:vorp", "trade_value_per_run"] == pytest.approx(vorp["value_all_weeks"].iloc[0])
