"""Ratings across leagues (Bradley-Terry over weekly matchups), their intervals over runs, the leaderboard, cost
per team-season from the ledger, and the two figures: on synthetic matchups with known strengths and on short real
runs (bots, and LLM teams against the local fake server, priced, unpriced and answering garbage)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ffbench_lib.analysis import metrics, ratings
from ffbench_lib.present import plots
from ffbench_lib.config.league import League
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import demo_league, run_engine

TRUE = {"bot:a": 1.0, "bot:b": 0.5, "bot:c": 0.0, "bot:d": -0.5, "bot:e": -1.0}


def synthetic_runs(n_runs: int, weeks: int = 14, seed: int = 0, strengths=TRUE, tie_all: bool = False) -> dict:
    """``matchups`` tables of ``n_runs`` leagues of two teams per agent, weekly random pairings, each game won
    with the Bradley-Terry probability of the true strengths (both sides recorded, as the engine does)."""
    rng = np.random.default_rng(seed)
    teams = [(f"{a.split(':')[1]}{k}", a) for a in strengths for k in (1, 2)]
    rows = []
    for r in range(n_runs):
        for w in range(1, weeks + 1):
            order = rng.permutation(len(teams))
            for i in range(0, len(order), 2):
                (t1, a1), (t2, a2) = teams[order[i]], teams[order[i + 1]]
                p = 1 / (1 + np.exp(strengths[a2] - strengths[a1]))
                res = "T" if tie_all else ("W" if rng.random() < p else "L")
                other = {"W": "L", "L": "W", "T": "T"}[res]
                rows += [{"run_id": f"r{r}", "seed": r, "week": w, "team": t1, "agent": a1, "opponent": t2,
                          "points_for": 100.0, "points_against": 100.0, "result": res},
                         {"run_id": f"r{r}", "seed": r, "week": w, "team": t2, "agent": a2, "opponent": t1,
                          "points_for": 100.0, "points_against": 100.0, "result": other}]
    return {"matchups": pd.DataFrame(rows)}


def test_rating_recovers_a_known_strength_order():
    runs = synthetic_runs(40)
    fitted = ratings.bradley_terry(ratings.matchups(runs))
    truth = pd.Series(TRUE)
    assert list(fitted.sort_values(ascending=False).index) == list(truth.sort_values(ascending=False).index)
    assert np.corrcoef(fitted[truth.index], truth)[0, 1] > 0.99
    assert fitted.mean() == pytest.approx(1500)
    # the Elo-like scale: theta apart by 2 (a vs e) = 2 * 400/ln(10) rating points, within sampling error
    assert fitted["bot:a"] - fitted["bot:e"] == pytest.approx(2 * ratings.SCALE, rel=0.15)


def test_same_agent_pairings_are_left_out_and_each_pairing_counted_once():
    runs = synthetic_runs(2)
    m = runs["matchups"]
    opp_agent = m.merge(m[["run_id", "week", "team", "agent"]].rename(columns={"team": "opponent", "agent": "oa"}),
                        on=["run_id", "week", "opponent"])
    cross = int((opp_agent["agent"] != opp_agent["oa"]).sum()) // 2
    games = ratings.matchups(runs)
    assert len(games) == cross < len(m) // 2 and (games["agent_a"] != games["agent_b"]).all()


def test_all_ties_give_equal_ratings():
    games = ratings.matchups(synthetic_runs(3, tie_all=True))
    assert games["tie"].all()
    r = ratings.bradley_terry(games)
    assert np.allclose(r, 1500)
    out = ratings.ratings(synthetic_runs(3, tie_all=True))
    assert (out["ties"] == out["games"]).all() and np.allclose(out["rating"], 1500)


def test_an_unbeaten_agent_stays_finite():
    games = pd.DataFrame({"winner": ["x"] * 30 + ["y"] * 5, "loser": ["y"] * 30 + ["z"] * 5, "tie": False})
    r = ratings.bradley_terry(games)
    assert np.isfinite(r).all() and r["x"] > r["y"] > r["z"]
    assert r["x"] - r["y"] < 1500  # the virtual ties (PRIOR_TIES) hold it: 30-0 is about 60:1 odds, not infinite


@pytest.mark.parametrize("n_runs, method", [(4, "jackknife t-interval"), (12, "jackknife t-interval"),
                                            (24, "BCa bootstrap")])
def test_intervals_are_named_by_runs_and_contain_the_estimate(n_runs, method):
    out = ratings.ratings(synthetic_runs(n_runs, seed=3), n_resamples=400)
    assert (out["ci_method"] == method).all() and (out["n_runs"] == n_runs).all()
    assert ((out["ci_low"] < out["rating"]) & (out["rating"] < out["ci_high"])).all()


def test_jackknife_t_interval_by_hand_and_fewer_runs_are_wider():
    runs = synthetic_runs(5, seed=4)
    out = ratings.ratings(runs).set_index("agent")
    # by hand: leave each run out, refit, jackknife standard error, t with 4 df
    ids = sorted(runs["matchups"]["run_id"].unique())
    loo = pd.DataFrame([ratings.bradley_terry(ratings.matchups({"matchups": runs["matchups"][
        runs["matchups"]["run_id"] != r]})) for r in ids])
    se = np.sqrt((len(ids) - 1) / len(ids) * ((loo - loo.mean()) ** 2).sum())
    half = sps.t.ppf(0.975, len(ids) - 1) * se
    assert np.allclose(out["ci_high"] - out["rating"], half[out.index], rtol=1e-6)
    many = ratings.ratings(synthetic_runs(15, seed=4)).set_index("agent")
    assert ((many["ci_high"] - many["ci_low"]) < (out["ci_high"] - out["ci_low"])[many.index]).all()


def test_agent_in_one_run_only_gets_no_interval_and_does_not_break_the_others():
    runs = synthetic_runs(4, seed=5)
    extra = synthetic_runs(1, seed=6, strengths={"bot:a": 1.0, "bot:new": 0.0})["matchups"].assign(run_id="r9")
    runs = {"matchups": pd.concat([runs["matchups"], extra], ignore_index=True)}
    out = ratings.ratings(runs).set_index("agent")
    assert out.loc["bot:new", "ci_method"] == "none" and np.isnan(out.loc["bot:new", "ci_low"])
    assert np.isfinite(out.loc["bot:new", "rating"]) and out.loc["bot:b", "ci_method"] == "jackknife t-interval"
    assert out.drop("bot:new")["ci_low"].notna().all()


# ----------------------------------------------------------------------------------------------- real runs
def short_league(seed: int, weeks: int = 3, teams=None, playoff_weeks: int = 0) -> League:
    d = demo_league().model_dump(mode="json")
    d.update(seed=seed, weeks=weeks)
    d["trades"]["weeks"] = [w for w in d["trades"]["weeks"] if w <= weeks - playoff_weeks]
    if teams is not None:
        d["teams"] = teams
    if playoff_weeks:
        d["playoffs"] = {"enabled": True, "teams": 2, "round_weeks": [1] * playoff_weeks}
    return League.model_validate(d)


@pytest.fixture(scope="module")
def bot_runs(prepared_2024, tmp_path_factory):
    """Two short bot leagues; the second has a final in week 4 (its regular season: weeks 1-3)."""
    out = tmp_path_factory.mktemp("bots")
    run_engine(short_league(1), prepared_2024, out / "seed-1")
    run_engine(short_league(2, weeks=4, playoff_weeks=1), prepared_2024, out / "seed-2")
    return metrics.load_runs(out)


PRICE_IN, PRICE_OUT = 2e-6, 8e-6


def llm_team(name, model, api_base, **extra):
    return {"name": name, "agent": {"kind": "llm", "model": model, "api_base": api_base, "timeout_s": 5.0,
                                    "max_tokens": 2000, "max_concurrency": 4, **extra}}


@pytest.fixture(scope="module")
def llm_runs(prepared_2024, tmp_path_factory):
    """One real 4-team run: a priced model, an unpriced one (litellm's table has no fake models), a priced one
    whose every answer is empty (the engine plays it: flagged), and a bot."""
    out = tmp_path_factory.mktemp("llm")
    with FakeOpenAIServer() as good, FakeOpenAIServer(fault_rate=1.0, faults=("empty",)) as bad:
        price = {"input_cost_per_token": PRICE_IN, "output_cost_per_token": PRICE_OUT}
        teams = [llm_team("Priced", "openai/fake-priced", good.api_base, **price),
                 llm_team("Unpriced", "openai/fake-unpriced", good.api_base),
                 llm_team("Garbage", "openai/fake-garbage", bad.api_base, **price),
                 {"name": "ADP-1", "agent": {"kind": "bot", "strategy": "adp"}}]
        league = short_league(1, weeks=2, teams=teams).model_copy(deep=True)
        d = league.model_dump(mode="json")
        d["llm"] = {**d.get("llm", {}), "backoff_s": 0.01, "retries": 1, "max_reasks": 0,
                    "max_fallback_rate": None, "cache_dir": str(out / "cache")}
        run_engine(League.model_validate(d), prepared_2024, out / "runs" / "seed-1")
    return metrics.load_runs(out / "runs")


def test_leaderboard_on_real_bot_runs(bot_runs):
    board = ratings.leaderboard(bot_runs, n_resamples=200)
    assert list(board.columns[:8]) == ["rank", "agent", "rating", "ci_low", "ci_high", "ci_method", "n_runs", "games"]
    assert set(board["agent"]) == set(bot_runs["standings"]["agent"]) and board["ranked"].all()
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    assert board["rating"].is_monotonic_decreasing and (board["ci_method"] == "jackknife t-interval").all()
    assert (board["n_runs"] == 2).all() and board["rating"].mean() == pytest.approx(1500)
    # games: every weekly pairing of two different agents in the matchups table, counted once for each side
    m = bot_runs["matchups"]
    agent_of = m.set_index(["run_id", "week", "team"])["agent"]
    opp = [agent_of[(r, w, o)] for r, w, o in zip(m["run_id"], m["week"], m["opponent"])]
    cross_pairings = int((m["agent"].to_numpy() != np.array(opp)).sum()) // 2
    assert board["games"].sum() == 2 * cross_pairings == 2 * len(ratings.matchups(bot_runs))
    # the final (week 4 of the second run) is in the playoffs table, not among the games
    assert set(bot_runs["playoffs"]["week"]) == {4} and set(ratings.matchups(bot_runs)["week"]) == {1, 2, 3}
    wins_by_table = (m["agent"].to_numpy() != np.array(opp)) & (m["result"] == "W").to_numpy()
    assert board["wins"].sum() == int(wins_by_table.sum())
    st = metrics.standings(bot_runs).groupby("agent")["points_for"].mean()
    assert np.allclose(board.set_index("agent")["points_per_team_season"], st[board["agent"]])
    assert board["free"].all() and board["cost_known"].all() and board["points_per_dollar"].isna().all()


def test_llm_run_costs_flags_and_leaderboard(llm_runs):
    c = ratings.costs(llm_runs).set_index("agent")
    priced, unpriced = c.loc["llm:openai/fake-priced"], c.loc["llm:openai/fake-unpriced"]
    assert priced["cost_known"] and priced["unpriced_calls"] == 0 and priced["cost_usd"] > 0
    assert np.isfinite(priced["points_per_dollar"]) and priced["points_per_dollar"] == pytest.approx(
        priced["points_per_team_season"] / priced["cost_per_team_season"])
    ledger = llm_runs["llm_summary"].set_index("agent")
    assert priced["cost_usd"] == pytest.approx(ledger.loc["llm:openai/fake-priced", "cost_usd"])
    assert not unpriced["cost_known"] and unpriced["unpriced_calls"] > 0
    assert np.isnan(unpriced["cost_usd"]) and np.isnan(unpriced["points_per_dollar"])  # unknown, never $0
    assert ledger.loc["llm:openai/fake-unpriced", "unpriced_calls"] == ledger.loc["llm:openai/fake-unpriced", "calls"]
    assert c.loc["bot:adp", "free"] and c.loc["bot:adp", "cost_usd"] == 0
    board = ratings.leaderboard(llm_runs).set_index("agent")
    bad = board.loc["llm:openai/fake-garbage"]
    assert bad["flagged"] and bad["fallback_rate"] == 1.0 and not bad["ranked"] and pd.isna(bad["rank"])
    assert board["ranked"].drop("llm:openai/fake-garbage").all()
    assert list(ratings.leaderboard(llm_runs)["agent"])[-1] == "llm:openai/fake-garbage"  # after the ranked


def test_imported_style_run_without_ledger_has_unknown_cost(llm_runs):
    runs = {**llm_runs, "llm_summary": llm_runs["llm_summary"].iloc[:0]}
    c = ratings.costs(runs).set_index("agent")
    assert not c.loc["llm:openai/fake-priced", "cost_known"] and c.loc["bot:adp", "cost_known"]


# ------------------------------------------------------------------------------------------------- figures
def _texts(fig) -> str:
    ax = fig.axes[0]
    parts = [ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), *(t.get_text() for t in ax.texts),
             *(t.get_text() for t in ax.get_yticklabels()), *(t.get_text() for t in ax.get_xticklabels())]
    if ax.get_legend():
        parts += [t.get_text() for t in ax.get_legend().get_texts()]
    return "\n".join(parts)


def test_figures_name_the_method_and_mark_flagged_and_unknown_cost(llm_runs, bot_runs, tmp_path):
    board = ratings.leaderboard(llm_runs)
    info = metrics.agent_info(llm_runs)
    pal = plots.agent_palette(board["agent"])
    fig = plots.leaderboard_figure(board, pal, info, sample=metrics.describe_sample(llm_runs))
    text = _texts(fig)
    assert "no interval (fewer than 2 runs)" in text and "1 run (a seed of the 2024 season)" in text
    assert f"fake-garbage {plots.DAGGER} (fallback share 100%" in text and "not ranked" in text
    assert "mostly the engine's results" in text
    plots.save(fig, tmp_path, "leaderboard")
    fig = plots.cost_vs_rating(board, pal, info)
    text = _texts(fig)
    assert "free" in [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "cost unknown" in text and "fake-unpriced" in text and "log scale" in text
    assert "95% CI" not in text and "no interval" in text  # one run: the label says so
    plots.save(fig, tmp_path, "cost")
    bots = ratings.leaderboard(bot_runs, n_resamples=100)
    fig = plots.leaderboard_figure(bots, plots.agent_palette(bots["agent"]), sample=metrics.describe_sample(bot_runs))
    assert "95% jackknife t-interval over runs" in _texts(fig) and "2 runs (seeds of the 2024 season)" in _texts(fig)
    fig = plots.cost_vs_rating(bots, plots.agent_palette(bots["agent"]))
    assert "no LLM cost data" in _texts(fig) and not fig.axes[0].axison


# ------------------------------------------------------------------------- self-play, groups that never met, n=1
def _teams(strategies):
    """The demo league's team names, their agents cycling through ``strategies`` (the same names: same seeds)."""
    return [{"name": t.name, "agent": {"kind": "bot", "strategy": strategies[i % len(strategies)]}}
            for i, t in enumerate(demo_league().teams)]


@pytest.fixture(scope="module")
def split_runs(prepared_2024, tmp_path_factory):
    """Real 2-week leagues: every team bot:adp (self-play); adp vs vorp (two seeds); random vs recent_form
    (agents that never meet adp or vorp); adp vs vorp over 3 weeks (a longer season)."""
    out = tmp_path_factory.mktemp("split")
    for name, strategies, seed, weeks in (("solo", ["adp"], 1, 2), ("ab1", ["adp", "vorp"], 1, 2),
                                          ("ab2", ["adp", "vorp"], 2, 2), ("cd", ["random", "recent_form"], 1, 2),
                                          ("ab3w", ["adp", "vorp"], 3, 3)):
        run_engine(short_league(seed, weeks=weeks, teams=_teams(strategies)), prepared_2024, out / name)
    return out


def test_an_agent_that_only_met_itself_gets_no_rating_and_no_rank(split_runs):
    solo = metrics.load_runs([split_runs / "solo"])
    board = ratings.leaderboard(solo)  # was an IndexError in choix (a fit of an empty matrix)
    row = board.iloc[0]
    assert len(board) == 1 and row["agent"] == "bot:adp" and np.isnan(row["rating"]) and not row["ranked"]
    assert pd.isna(row["rank"]) and pd.isna(row["component"]) and ratings.SELF_PLAY in row["note"]
    assert "no rating" in board.attrs["note"] and "bot:adp" in board.attrs["note"]
    # beside a league where adp met vorp: the self-play run adds no game and changes nothing (was an IndexError)
    both = ratings.ratings(metrics.load_runs([split_runs / "solo", split_runs / "ab1", split_runs / "ab2"]))
    alone = ratings.ratings(metrics.load_runs([split_runs / "ab1", split_runs / "ab2"]))
    pd.testing.assert_frame_equal(both, alone)
    assert both["rating"].notna().all() and (both["n_runs"] == 2).all()


def test_agents_that_never_met_are_not_ranked_on_one_scale(split_runs, tmp_path):
    runs = metrics.load_runs([split_runs / "ab1", split_runs / "ab2", split_runs / "cd"])
    r = ratings.ratings(runs).set_index("agent")
    assert r.loc[["bot:adp", "bot:vorp"], "component"].tolist() == [1, 1]  # 2 runs: the larger group
    assert r.loc[["bot:random", "bot:recent_form"], "component"].tolist() == [2, 2]
    for group in (["bot:adp", "bot:vorp"], ["bot:random", "bot:recent_form"]):  # each rated within its group
        assert r.loc[group, "rating"].mean() == pytest.approx(1500)
    board = ratings.leaderboard(runs, n_resamples=100)
    ranked = board[board["ranked"]]
    assert set(ranked["agent"]) == {"bot:adp", "bot:vorp"} and list(ranked["rank"]) == [1, 2]
    other = board[board["agent"].isin(["bot:random", "bot:recent_form"])]
    assert other["rank"].isna().all() and other["note"].str.contains(ratings.NOT_COMPARABLE, regex=False).all()
    assert "not comparable" in board.attrs["note"] and "bot:random" in board.attrs["note"]
    # the figure draws the ranked group on its scale and lists the others without a point
    fig = plots.leaderboard_figure(board, plots.agent_palette(board["agent"]))
    text = _texts(fig)
    assert text.count("not comparable: never met the ranked agents") == 2
    from matplotlib.collections import PathCollection

    points = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    assert len(points) == 2  # two points: adp and vorp
    assert "not comparable (never met the ranked agents), not drawn" in _texts(
        plots.cost_vs_rating(board, plots.agent_palette(board["agent"])))


def test_an_agent_from_one_run_is_ranked_and_marked_without_interval(split_runs):
    runs = metrics.load_runs([split_runs / "ab1"])
    board = ratings.leaderboard(runs)
    assert board["ranked"].all() and list(board["rank"]) == [1, 2]
    assert (board["ci_method"] == "none").all() and (board["note"] == ratings.ONE_RUN).all()
    fig = plots.leaderboard_figure(board, plots.agent_palette(board["agent"]))
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert all("n=1, no interval" in t for t in ticks) and any(t.startswith("1. ") for t in ticks)


def test_per_team_season_is_refused_across_seasons_of_different_lengths(split_runs):
    runs = metrics.load_runs([split_runs / "ab1", split_runs / "ab3w"])
    assert sorted(ratings.regular_weeks(runs)) == [2, 3]
    c = ratings.costs(runs).set_index("agent")
    assert c["points_per_team_season"].isna().all() and (c["cost_per_team_season"] == 0).all()  # bots: free
    st = metrics.standings(runs).assign(w=lambda d: d["run_id"].map(ratings.regular_weeks(runs)))
    ppw = (st["points_for"] / st["w"]).groupby(st["agent"]).mean()
    assert np.allclose(c["points_per_week"], ppw[c.index])
    note = ratings.costs_note(runs)
    assert "1 run(s) of 2 weeks" in note and "1 run(s) of 3 weeks" in note
    assert note in ratings.leaderboard(runs).attrs["note"]
    same = ratings.costs(metrics.load_runs([split_runs / "ab1", split_runs / "ab2"]))
    assert same["points_per_team_season"].notna().all() and ratings.costs_note(
        metrics.load_runs([split_runs / "ab1", split_runs / "ab2"])) == ""
