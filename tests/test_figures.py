"""Figures say what they show: fallback-dominated agents are marked, intervals and run counts are honest, empty
data says so, and each agent keeps its colour."""
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.core import stats
from ffbench_lib.present import plots
from ffbench_lib.config.league import LLMSettings, Roster
from ffbench_lib.runs.rundir import table_frame


def runs_of(tables: dict[str, list[dict]], decisions: list[dict] | None = None, n_runs: int = 1):
    """A hand-written table set in the shape load_runs returns (run ids r0..)."""
    out = {}
    for name in ("lineups", "bench", "rosters", "matchups", "trades", "standings", "draft_picks", "trade_steps"):
        rows = tables.get(name, [])
        out[name] = table_frame(name, rows).assign(run_id=[r.get("run_id", "r0") for r in rows] or None, seed=0)
    out["decisions"] = pd.DataFrame(decisions or [])
    roster = json.dumps(Roster().model_dump(mode="json"))
    out["meta"] = pd.DataFrame([{"run_id": f"r{i}", "season": 2024, "roster": roster} for i in range(n_runs)])
    return out


def standing(team, agent, week=17, rank=1, run_id="r0"):
    return {"run_id": run_id, "week": week, "team": team, "agent": agent, "wins": 9, "losses": 8, "ties": 0,
            "points_for": 1500.0, "points_against": 1400.0, "rank": rank}


def decisions(agent, n, fallbacks, kind="set_lineup"):
    return [{"week": 1, "pick": None, "team": "T", "agent": agent, "decision": kind, "applied": None,
             "decided_by": "fallback" if i < fallbacks else "agent", "run_id": "r0"} for i in range(n)]


def test_threshold_is_the_configs_and_strictly_above_marks():
    assert metrics.MAX_FALLBACK_RATE == LLMSettings().max_fallback_rate == 0.25
    runs = runs_of({"standings": [standing("A", "llm:m", rank=1), standing("B", "bot:b", rank=2),
                                  standing("C", "llm:edge", rank=3)]},
                   decisions("llm:m", 20, 6) + decisions("bot:b", 20, 0) + decisions("llm:edge", 20, 5)
                   + decisions("llm:edge", 10, 10, kind="draft_pick"))
    info = metrics.agent_info(runs).set_index("agent")
    assert info.loc["llm:m", "flagged"] and info.loc["llm:m", "fallback_rate"] == pytest.approx(0.3)
    assert not info.loc["bot:b", "flagged"]
    # exactly 25% of season decisions is not above; draft decisions count apart
    assert not info.loc["llm:edge", "flagged"] and info.loc["llm:edge", "draft_flagged"]


def test_fallback_dominated_agent_is_marked_in_figures_and_tables():
    runs = runs_of({"standings": [standing("A", "llm:x/m", rank=1), standing("B", "bot:b", rank=2)]},
                   decisions("llm:x/m", 10, 9) + decisions("bot:b", 10, 0))
    info = metrics.agent_info(runs)
    palette = plots.agent_palette(["llm:x/m", "bot:b"])
    ci = pd.DataFrame({"agent": ["llm:x/m", "bot:b"], "runs": [3, 3], "mean": [100.0, 50.0], "ci_low": [80.0, 40.0],
                       "ci_high": [120.0, 60.0]})
    fig = plots.start_sit_regret(ci, palette, info)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert "m \u2020" in labels and "b" in labels
    hatches = {lab: bar.get_hatch() for lab, bar in zip(labels, ax.patches)}
    assert hatches["m \u2020"] == plots.HATCH and not hatches["b"]
    legend = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert ">25% engine fallbacks" in legend
    # nothing flagged: no legend note
    clean = plots.start_sit_regret(ci, palette, info.assign(flagged=False))
    assert clean.axes[0].get_legend() is None
    head_cols = set(metrics.agent_info(runs).columns)
    assert {"fallback_rate", "flagged", "drafted_by"} <= head_cols
    plt.close("all")


def test_imported_team_labels_name_the_drafting_model():
    runs = runs_of({"standings": [standing("T1", "llm:p/season", rank=1), standing("T2", "bot:b", rank=2)],
                    "draft_picks": [{"run_id": "r0", "pick": 1, "round": 1, "team": "T1", "agent": "llm:p/drafter",
                                     "player_id": "p1", "player_name": "P One", "position": "QB", "proj_points": 1.0},
                                    {"run_id": "r0", "pick": 2, "round": 1, "team": "T2", "agent": "bot:b",
                                     "player_id": "p2", "player_name": "P Two", "position": "QB", "proj_points": 1.0}]})
    labels = plots.agent_labels(metrics.agent_info(runs))
    assert labels == {"llm:p/season": "season (drafted by drafter)", "bot:b": "b"}


def test_trade_value_figure_by_agent_with_intervals_and_no_trades_text(tmp_path):
    palette = plots.agent_palette(["bot:a", "bot:b"])
    ci = pd.DataFrame({"agent": ["bot:a", "bot:b"], "runs": [3, 3], "mean": [20.0, -10.0], "ci_low": [5.0, -30.0],
                       "ci_high": [40.0, 2.0], "trades": [4, 2]})
    fig = plots.trade_value_bars(ci, palette)
    ax = fig.axes[0]
    colours = [tuple(np.round(b.get_facecolor()[:3], 3)) for b in ax.patches]
    expected = [tuple(np.round(plt.matplotlib.colors.to_rgb(palette[a]), 3)) for a in ("bot:a", "bot:b")]
    assert colours == expected  # by agent, not green/red by sign
    assert any(c.__class__.__name__ == "ErrorbarContainer" or getattr(c, "errorbar", None) for c in ax.containers)
    assert "mean over 3 runs" in ax.get_ylabel() and "rest of season" not in ax.get_ylabel()
    empty = plots.trade_value_bars(ci.assign(trades=0, mean=0.0, ci_low=0.0, ci_high=0.0), palette)
    texts = [t.get_text() for t in empty.axes[0].texts]
    assert any(t.startswith("no trades") for t in texts) and not empty.axes[0].axison
    own = plots.trade_value_bars(ci.assign(own_team_trades=ci["trades"], mean=0.0, ci_low=0.0, ci_high=0.0), palette)
    assert any("all 6 were between two teams of one agent" in t.get_text() for t in own.axes[0].texts)
    assert plots.save(empty, tmp_path, "trade_value") is None  # a notebook cell ending in save prints nothing
    assert (tmp_path / "trade_value.png").stat().st_size > 1000 and (tmp_path / "trade_value.svg").exists()
    plt.close("all")


def test_a_trade_between_two_teams_of_one_agent_counts_once():
    pts = []
    for w in (1, 2):
        for team, pid, p in (("A", "a1", 10.0), ("B", "b1", 4.0)):
            owner = team if w < 2 else {"A": "B", "B": "A"}[team]
            pts.append({"run_id": "r0", "week": w, "team": owner, "agent": "bot:x", "slot": "WR", "player_id": pid,
                        "position": "WR", "points": p, "decided_by": "agent"})
    trade = {"run_id": "r0", "week": 2, "negotiation": "n1", "proposer": "A", "receiver": "B",
             "proposer_agent": "bot:x", "receiver_agent": "bot:x", "proposer_gives": ["a1"], "receiver_gives": ["b1"], "accepted_step": 2,
             "made_by": "agent"}
    runs = runs_of({"lineups": pts, "trades": [trade],
                    "standings": [standing("A", "bot:x"), standing("B", "bot:x", rank=2)]})
    summary = metrics.trade_summary(runs).set_index("agent")
    assert summary.loc["bot:x", "trades"] == 1 and summary.loc["bot:x", "value_all_weeks"] == 0
    per_run = metrics.trade_value_per_run(runs).set_index("agent")
    assert per_run.loc["bot:x", "trades"] == 1 and per_run.loc["bot:x", "own_team_trades"] == 1


def test_a_side_is_the_agents_only_if_its_own_steps_were():
    trade = {"run_id": "r0", "week": 2, "negotiation": "n1", "proposer": "A", "receiver": "B",
             "proposer_agent": "llm:a", "receiver_agent": "llm:b", "proposer_gives": ["a1"], "receiver_gives": ["b1"], "accepted_step": 2,
             "made_by": "agent"}
    steps = [{"run_id": "r0", "week": 2, "negotiation": "n1", "step": 1, "actor": "A", "agent": "llm:a",
              "action": "propose", "decided_by": "fallback"},
             {"run_id": "r0", "week": 2, "negotiation": "n1", "step": 2, "actor": "B", "agent": "llm:b",
              "action": "accept", "decided_by": "agent"}]
    runs = runs_of({"trades": [trade], "trade_steps": steps,
                    "standings": [standing("A", "llm:a"), standing("B", "llm:b", rank=2)]})
    tv = metrics.trade_value(runs).set_index("team")
    assert tv.loc["A", "made_by"] == "fallback" and tv.loc["B", "made_by"] == "agent"


def test_win_rate_axis_counts_runs_of_the_season():
    ci = pd.DataFrame({"agent": ["bot:a", "bot:b"], "runs": [4, 4], "mean": [0.6, 0.4], "ci_low": [0.5, 0.3],
                       "ci_high": [0.7, 0.5]})
    fig = plots.win_rate_ci(ci, plots.agent_palette(ci["agent"]), seasons=[2024, 2024, 2024, 2024])
    label = fig.axes[0].get_xlabel()
    assert "over 4 runs (seeds of the 2024 season)" in label and "seasons" not in label
    assert "95% t-interval" in label and "bootstrap" not in label  # n = 4: a t-interval, named
    two = plots.win_rate_ci(ci, plots.agent_palette(ci["agent"]), seasons=[2023, 2024, 2024, 2024])
    assert "over 4 runs over seasons 2023, 2024" in two.axes[0].get_xlabel()
    plt.close("all")


def test_standings_by_week_names_its_run_ranks_and_separates_an_agents_teams():
    rows = []
    for w in (1, 2, 3):
        for i, (team, agent) in enumerate((("A1", "bot:a"), ("A2", "bot:a"), ("B1", "bot:b"))):
            rows.append({"run_id": "r0", "week": w, "team": team, "agent": agent, "rank": (i + w) % 3 + 1})
    fig = plots.standings_by_week(pd.DataFrame(rows), plots.agent_palette(["bot:a", "bot:b"]), run_label="seed-0",
                                  n_runs=3)
    ax = fig.axes[0]
    assert "seed-0" in ax.get_title() and "1 of 3 runs" in ax.get_title()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1 (top)", "2", "3"]
    lines = {line.get_label(): line for line in ax.get_lines()}
    a1, a2 = lines["A1: a"], lines["A2: a"]
    assert a1.get_color() == a2.get_color()
    assert (a1.get_linestyle(), a1.get_marker()) != (a2.get_linestyle(), a2.get_marker())
    plt.close("all")


def test_draft_projection_missing_is_not_zero():
    picks = [{"run_id": "r0", "pick": i + 1, "round": 1, "team": "T", "agent": "bot:a", "player_id": f"p{i}",
              "player_name": f"P{i}", "position": "WR", "proj_points": v, "prev_points": 0.0}
             for i, v in enumerate((100.0, float("nan"), 50.0))]
    runs = runs_of({"draft_picks": picks, "standings": [standing("T", "bot:a")]})
    ds = metrics.draft_summary(runs).iloc[0]
    assert ds["proj_points"] == 150.0 and ds["unprojected"] == 1
    assert list(metrics.unprojected_picks(runs)["player_name"]) == ["P1"]
    fig = plots.draft_performance(metrics.draft_summary(runs))
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "without a" in legend and "projection" in legend
    plt.close("all")


def test_slot_effect_and_agent_means_shapes_for_notebook_tables():
    per = pd.DataFrame({"run_id": [f"r{i}" for i in range(6)], "agent": "a", "draft_slot": [1, 2, 3, 1, 2, 3],
                        "v": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]})
    eff = stats.slot_effect(per, "v")
    assert eff["by_slot"] == {1: 1.0, 2: 2.0, 3: 3.0} and eff["spearman_rho"] == pytest.approx(1.0)


def test_saved_figures_are_byte_identical(tmp_path):
    # the same figure saved twice gives the same PNG and SVG bytes (no date, no random ids)
    import matplotlib.pyplot as plt

    from ffbench_lib.present import plots

    def draw():
        fig, ax = plt.subplots()
        ax.bar(["a", "b"], [1, 2], hatch="//")
        ax.plot([0, 1], [1, 0])
        return fig

    for folder in ("one", "two"):
        fig = draw()
        plots.save(fig, tmp_path / folder, "f")
        plt.close(fig)
    for ext in ("png", "svg"):
        assert (tmp_path / "one" / f"f.{ext}").read_bytes() == (tmp_path / "two" / f"f.{ext}").read_bytes()


def test_season_points_by_position_takes_the_top_players_from_the_roster():
    """The default 'players a league would roster' is twice the starters of a 12-team league at each position,
    from the roster (no position literal in plots.py); positions the data lacks get no empty box."""
    rows = [{"player_id": f"{pos}{i}", "position": pos, "week": 1, "fantasy_points": float(i)}
            for pos in ("QB", "RB", "WR") for i in range(80)]
    weekly = pd.DataFrame(rows)

    def shown(fig):
        ax = fig.axes[0]
        counts = [len(c.get_offsets()) for c in ax.collections if len(c.get_offsets())]
        labels = [t.get_text() for t in ax.get_xticklabels()]
        plt.close(fig)
        return dict(zip(labels, counts[-len(labels):]))

    assert shown(plots.season_points_by_position(weekly)) == {"QB": 24, "RB": 48, "WR": 48}
    two_qb = Roster(QB=2, RB=2, WR=3, TE=1, FLEX=0, BENCH=5)
    assert shown(plots.season_points_by_position(weekly, roster=two_qb, teams=10)) == {"QB": 40, "RB": 40,
                                                                                          "WR": 60}


# ----------------------------------------------------------------------------------------------------- waivers
def waiver_runs():
    """Runs r0 and r1 used waivers, r2 did not. bot:a has teams A1 and A2, bot:b team B. In r0, A1 claims the
    undrafted f1 (week 2), swaps him for the undrafted f3 (week 3) and adds him back (week 4); B adds f2."""
    def st(team, agent, run_id):
        return standing(team, agent, week=4, run_id=run_id)

    def start(week, team, agent, pid, pts, run_id="r0"):
        return {"run_id": run_id, "week": week, "team": team, "agent": agent, "slot": "WR", "player_id": pid,
                "position": "WR", "points": pts, "decided_by": "agent"}

    teams = [("A1", "bot:a"), ("A2", "bot:a"), ("B", "bot:b")]
    lineups = [start(1, "A1", "bot:a", "d1", 9.0), start(2, "A1", "bot:a", "f1", 5.0),
               start(3, "A1", "bot:a", "f3", 3.0), start(4, "A1", "bot:a", "f1", 7.0),
               start(2, "B", "bot:b", "f2", 100.0), start(3, "B", "bot:b", "f2", 4.0),
               start(4, "A1", "bot:a", "f1", 50.0, run_id="r2")]  # r2 had no waivers: never counted
    runs = runs_of({"standings": [st(t, a, r) for r in ("r0", "r1", "r2") for t, a in teams],
                    "draft_picks": [{"run_id": "r0", "pick": 1, "round": 1, "team": "A1", "agent": "bot:a",
                                     "player_id": "d1", "player_name": "Drafted One", "position": "WR"}],
                    "lineups": lineups}, n_runs=3)
    runs["meta"] = runs["meta"].assign(waivers=["faab", "faab", None])

    def tx(week, team, agent, kind, add, drop, bid=None):
        names = {"d1": "Drafted One", "f1": "Free One", "f2": "Free Two", "f3": "Free Three", "u9": "Undrafted Nine"}
        return {"run_id": "r0", "seed": 0, "week": week, "team": team, "agent": agent, "kind": kind, "add": add,
                "add_name": names[add], "add_position": "WR", "drop": drop, "drop_name": names[drop],
                "drop_position": "WR", "bid": bid}

    runs["transactions"] = pd.DataFrame([tx(2, "A1", "bot:a", "waiver", "f1", "d1", 10), tx(3, "A1", "bot:a",
                                         "free_agent", "f3", "f1"), tx(4, "A1", "bot:a", "free_agent", "f1", "f3"),
                                         tx(3, "B", "bot:b", "free_agent", "f2", "u9")])
    claim = {"run_id": "r0", "week": 2, "rank": 1, "add": "f1", "drop": "d1", "bid": 10, "reason": None,
             "decided_by": "agent"}
    runs["waiver_claims"] = pd.DataFrame([
        {**claim, "phase": "waivers", "team": "A1", "agent": "bot:a", "result": "won"},
        {**claim, "phase": "waivers", "team": "B", "agent": "bot:b", "result": "lost"},
        {**claim, "phase": "waivers", "team": "B", "agent": "bot:b", "result": "skipped", "reason": "over the cap"},
        {**claim, "phase": "free_agents", "team": "B", "agent": "bot:b", "result": "won"}])
    return runs


def test_player_names_come_from_the_draft_and_the_waiver_transactions():
    runs = waiver_runs()
    names = metrics.player_names(runs)
    # f1..f3 and u9 were never drafted: only the transactions know their names
    assert names == {"d1": "Drafted One", "f1": "Free One", "f2": "Free Two", "f3": "Free Three",
                     "u9": "Undrafted Nine"}
    # a run recorded before transactions carried names: the drafted names, no error
    old = {**runs, "transactions": runs["transactions"].drop(columns=["add_name", "drop_name"])}
    assert metrics.player_names(old) == {"d1": "Drafted One"}
    pickups = metrics.waiver_pickups(old)
    assert pickups["add_name"].isna().sum() == 4 and pickups["drop_name"].tolist().count("Drafted One") == 1


def test_waiver_pickup_points_per_pickup_per_run_and_per_agent():
    runs = waiver_runs()
    pk = metrics.waiver_pickups(runs)
    # a player picked up again starts a new window: f1 scored 5 for the week-2 claim and 7 for the week-4 add;
    # B's f2 counts from week 3 (the 100 points of week 2 came before the pickup)
    assert pk[["week", "team", "add_name", "points_started"]].values.tolist() == [
        [2, "A1", "Free One", 5.0], [3, "A1", "Free Three", 3.0], [3, "B", "Free Two", 4.0],
        [4, "A1", "Free One", 7.0]]
    ws = metrics.waiver_summary(runs).set_index(["run_id", "team"])
    assert ws.loc[("r0", "A1"), "pickup_started_points"] == pk[pk["team"] == "A1"]["points_started"].sum() == 15.0
    assert "r2" not in ws.index.get_level_values(0)
    per_run = metrics.waiver_value_per_run(runs).set_index(["run_id", "agent"])
    # per team: bot:a's 15 points over its two teams; a run without pickups gives 0, a run without waivers no row
    assert per_run.loc[("r0", "bot:a"), ["teams", "pickups", "faab_spent", "pickup_started_points"]].tolist() == [
        2, 3, 10.0, 7.5]
    assert per_run.loc[("r0", "bot:b"), "pickup_started_points"] == 4.0 and np.isnan(per_run.loc[("r0", "bot:b"),
                                                                                                  "faab_spent"])
    assert per_run.loc[("r1", "bot:a"), "pickup_started_points"] == 0.0 and len(per_run) == 4
    ci = stats.agent_means(per_run.reset_index(), "pickup_started_points").set_index("agent")
    assert ci.loc["bot:a", "runs"] == 2 and ci.loc["bot:a", "mean"] == 3.75
    by_agent = metrics.waiver_summary_by_agent(runs).set_index("agent")
    assert by_agent.loc["bot:a", ["claims", "claims_won", "free_agent_adds", "faab_spent"]].tolist() == [1, 1, 2, 10]
    # FAAB buys waiver claims only: f1's week-2 claim scored 5 (his week-4 return was a free-agent add)
    assert by_agent.loc["bot:a", ["pickup_started_points", "waiver_started_points"]].tolist() == [15.0, 5.0]
    assert by_agent.loc["bot:a", "faab_per_point"] == pytest.approx(10 / 5)
    assert np.isnan(by_agent.loc["bot:b", "faab_per_point"])  # spent nothing: no dollars per point
    res = metrics.waiver_claim_results(runs).set_index(["agent", "phase"])
    assert res.loc[("bot:b", "waivers"), ["won", "lost", "skipped", "claims"]].tolist() == [0, 1, 1, 2]
    assert res.loc[("bot:b", "free_agents"), "won"] == 1


def test_waiver_tables_are_empty_without_waivers():
    runs = waiver_runs()
    runs["meta"] = runs["meta"].assign(waivers=None)
    for f in (metrics.waiver_summary, metrics.waiver_summary_by_agent, metrics.waiver_value_per_run):
        assert f(runs).empty, f.__name__


def test_pickup_points_figure_by_agent_with_intervals_hatching_and_no_pickups_text(tmp_path):
    palette = plots.agent_palette(["bot:a", "llm:x/m"])
    runs = runs_of({"standings": [standing("A", "bot:a", rank=1), standing("B", "llm:x/m", rank=2)]},
                   decisions("llm:x/m", 10, 9) + decisions("bot:a", 10, 0))
    info = metrics.agent_info(runs)
    ci = pd.DataFrame({"agent": ["bot:a", "llm:x/m"], "runs": [3, 3], "mean": [20.0, 40.0], "ci_low": [5.0, 30.0],
                       "ci_high": [40.0, 50.0], "pickups": [1, 6]})
    fig = plots.pickup_points_bars(ci, palette, info)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["m \u2020", "a"]  # best first, the fallback-dominated agent marked
    colours = [tuple(np.round(b.get_facecolor()[:3], 3)) for b in ax.patches]
    assert colours == [tuple(np.round(plt.matplotlib.colors.to_rgb(palette[a]), 3)) for a in ("llm:x/m", "bot:a")]
    assert [str(b.get_hatch() or "") for b in ax.patches] == [plots.HATCH, ""]
    assert any(getattr(c, "has_yerr", False) for c in ax.containers)
    assert "mean over 3 runs" in ax.get_ylabel()
    assert [t.get_text() for t in ax.texts] == ["6 pickups", "1 pickup"]
    assert ">25% engine fallbacks" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    empty = plots.pickup_points_bars(ci.assign(pickups=0, mean=0.0, ci_low=0.0, ci_high=0.0), palette, info)
    assert [t.get_text() for t in empty.axes[0].texts] == ["no waiver or free-agent pickups in 3 runs"]
    assert not empty.axes[0].axison
    plots.save(fig, tmp_path, "waiver_pickup_points")
    assert (tmp_path / "waiver_pickup_points.png").stat().st_size > 1000
    plt.close("all")
