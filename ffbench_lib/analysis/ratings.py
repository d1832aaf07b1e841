"""Ratings across leagues: one Bradley-Terry strength per agent from every weekly head-to-head matchup of every
run, with intervals over runs, a leaderboard and cost-effectiveness from the ledger.

Why Bradley-Terry: a season's win rate depends on which nine opponents a league happened to hold; a pairwise
model rates each agent against whoever it actually met, so leagues of different line-ups add up to one scale.

* Games: each regular-season pairing once per week (``matchups`` holds the regular season only; playoff games
  are in ``playoffs`` and left out: who plays them depends on the regular season, so counting them would count
  the same strength twice and give the best teams more games). Pairings of two teams of one agent are left out.
* Ties: half a win to each side (a tie adds 0.5 to both cells of the win matrix; the likelihood is then
  ``0.5 log p_ab + 0.5 log p_ba``).
* Groups: agents are linked when they played each other; each connected group (:func:`components`, scipy's
  connected_components) is fitted on its own, mean 1500 within it. Groups that never met share no games (only
  the virtual ties would put them on one scale), so the leaderboard ranks the largest group and lists the others
  as not comparable; an agent that only met itself (self-play) has no games and no rating.
* Regularisation: :data:`PRIOR_TIES` virtual tied games between every pair of agents in a fit, so an unbeaten
  (or winless) agent keeps a finite strength; against the hundreds of real games of a few runs it moves nothing.
* Fit: choix's ILSR on the dense win matrix (the exact maximum-likelihood estimate, ~2 ms for 10 agents).
* Scale: Elo-like, ``1500 + 400/ln(10) * theta`` with theta centred to mean 0 over the agents: 400 points
  apart = 10:1 odds of winning a week.
* Intervals over runs (the unit of evidence; weeks of one league are not independent): per agent by its number
  of runs, as :func:`stats.ci_method` decides: 2 to 19 runs the leave-one-run-out jackknife standard error with a
  Student t-interval (df = the agent's runs - 1), from 20 runs a BCa cluster bootstrap resampling whole runs
  within strata of runs with the same set of agents (field mode: one stratum per candidate), so every agent is
  in every resample; fewer than 2 runs: none. Each refit is centred on the same agents' mean as the full fit, so
  an agent missing from a leave-out (its only run) does not shift the others. The jackknife standard error uses
  the leave-outs of all runs, with (n - 1) / n for n = all runs, not only the agent's: for an agent in few of many
  runs this is conservative (wider than a jackknife over its own runs would be).
"""
from __future__ import annotations

import math

import choix
import numpy as np
import pandas as pd
from scipy import stats as sps

from ffbench_lib.analysis import metrics
from ffbench_lib.core.stats import ci_method

#: virtual tied games between every pair of agents in a fit (the regularisation; see the module docstring)
PRIOR_TIES = 1.0
#: Elo-like scale: rating = BASE + SCALE * theta (natural-log odds)
BASE, SCALE = 1500.0, 400.0 / math.log(10)
GAME_COLUMNS = ["run_id", "seed", "week", "team_a", "agent_a", "team_b", "agent_b", "points_a", "points_b",
                "winner", "loser", "tie"]


def matchups(runs: metrics.Runs) -> pd.DataFrame:
    """One row per regular-season pairing per week per run between teams of different agents: ``winner`` and
    ``loser`` agents (a tie: ``tie`` True, winner/loser = the two agents in team order)."""
    m = runs["matchups"]
    if m.empty:
        return pd.DataFrame(columns=GAME_COLUMNS)
    m = m if "seed" in m else m.assign(seed=None)
    a = m[m["team"] < m["opponent"]]  # each pairing once (both sides are recorded)
    b = m[["run_id", "week", "team", "agent"]].rename(columns={"team": "opponent", "agent": "agent_b"})
    g = a.merge(b, on=["run_id", "week", "opponent"], how="inner")
    g = g[g["agent"] != g["agent_b"]]
    g = g.rename(columns={"team": "team_a", "agent": "agent_a", "opponent": "team_b", "points_for": "points_a",
                          "points_against": "points_b"})
    tie = g["result"] == "T"
    a_won = g["result"] == "W"
    g["winner"] = np.where(a_won | tie, g["agent_a"], g["agent_b"])
    g["loser"] = np.where(a_won | tie, g["agent_b"], g["agent_a"])
    g["tie"] = tie
    return g[GAME_COLUMNS].sort_values(["run_id", "week", "team_a"], ignore_index=True)


def _win_matrix(games: pd.DataFrame, index: dict[str, int]) -> np.ndarray:
    """``M[i, j]`` = wins of agent i over agent j, a tie half a win to each side."""
    n = len(index)
    w = games["winner"].map(index).to_numpy(dtype=int)  # int even when empty (a float index is refused)
    lo = games["loser"].map(index).to_numpy(dtype=int)
    half = np.where(games["tie"].to_numpy(dtype=bool), 0.5, 1.0)
    mat = np.zeros((n, n))
    np.add.at(mat, (w, lo), half)
    np.add.at(mat, (lo, w), 1.0 - half)
    return mat


def _fit(mat: np.ndarray) -> np.ndarray:
    """Theta (natural-log strengths, mean 0) of the agents of a win matrix, with :data:`PRIOR_TIES`."""
    n = mat.shape[0]
    if n <= 1:
        return np.zeros(n)
    prior = PRIOR_TIES / 2 * (1 - np.eye(n))
    theta = choix.ilsr_pairwise_dense(mat + prior, alpha=0.0, max_iter=10_000, tol=1e-10)
    return theta - theta.mean()


def bradley_terry(games: pd.DataFrame, agents=None) -> pd.Series:
    """Rating per agent (Elo-like scale, mean 1500 over ``agents``) from games with ``winner``, ``loser`` and
    ``tie`` (:func:`matchups`). ``agents`` defaults to every agent in the games; one without games is rated by
    the virtual ties alone (1500 when all others are 1500)."""
    agents = sorted(set(games["winner"]) | set(games["loser"])) if agents is None else list(agents)
    unknown = (set(games["winner"]) | set(games["loser"])) - set(agents)
    if unknown:
        raise ValueError(f"games of agents not in 'agents': {sorted(unknown)}")
    theta = _fit(_win_matrix(games, {a: i for i, a in enumerate(agents)}))
    return pd.Series(BASE + SCALE * theta, index=agents, name="rating")


def _rating_of_runs(mats: dict[str, np.ndarray], present: dict[str, np.ndarray], runs_sel, centre: np.ndarray
                    ) -> np.ndarray:
    """Ratings (NaN for agents absent from the selected runs) from the summed win matrices of ``runs_sel``
    (repeats allowed), centred so that the present agents' mean equals their mean in ``centre`` (the full fit's
    theta)."""
    mat = sum(mats[r] for r in runs_sel)
    seen = np.logical_or.reduce([present[r] for r in runs_sel])
    out = np.full(len(centre), np.nan)
    idx = np.flatnonzero(seen)
    if not len(idx):  # the selected runs hold no game between different agents
        return out
    theta = _fit(mat[np.ix_(idx, idx)])
    out[idx] = theta - theta.mean() + centre[idx].mean()
    return BASE + SCALE * out


def _bca(boot: np.ndarray, jack: np.ndarray, point: float, confidence: float) -> tuple[float, float]:
    """BCa interval (Efron 1987) from bootstrap replicates and jackknife (leave-one-out) values."""
    boot, jack = boot[~np.isnan(boot)], jack[~np.isnan(jack)]
    if boot.std() == 0:
        return point, point
    p0 = (np.sum(boot < point) + 0.5 * np.sum(boot == point)) / len(boot)
    z0 = sps.norm.ppf(min(max(p0, 0.5 / len(boot)), 1 - 0.5 / len(boot)))
    d = jack.mean() - jack
    denom = 6 * (d ** 2).sum() ** 1.5
    acc = (d ** 3).sum() / denom if denom > 0 else 0.0
    z = sps.norm.ppf([(1 - confidence) / 2, (1 + confidence) / 2])
    q = sps.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
    lo, hi = np.quantile(boot, q)
    return float(lo), float(hi)


def _intervals(mats: dict, present: dict, run_ids: list, confidence: float, n_resamples: int, seed: int):
    """Point rating, interval and method per agent of one connected group (see the module docstring)."""
    n_runs = np.sum([present[r] for r in run_ids], axis=0).astype(int)
    centre = _fit(sum(mats[r] for r in run_ids))
    point = BASE + SCALE * centre
    methods = [ci_method(int(k)) for k in n_runs]
    methods = ["jackknife t-interval" if m == "t-interval" else m for m in methods]
    lo, hi = np.full(len(centre), np.nan), np.full(len(centre), np.nan)
    if len(run_ids) >= 2:
        jack = np.array([_rating_of_runs(mats, present, [r for r in run_ids if r != left], centre)
                         for left in run_ids])
        boot = None
        if "BCa bootstrap" in methods:
            boot = _cluster_bootstrap(mats, present, run_ids, centre, n_resamples, seed)
        tq = {k: sps.t.ppf((1 + confidence) / 2, k - 1) for k in set(n_runs) if k >= 2}
        for i, m in enumerate(methods):
            col = jack[:, i]
            if m == "jackknife t-interval":
                v = col[~np.isnan(col)]
                se = math.sqrt((len(v) - 1) / len(v) * ((v - v.mean()) ** 2).sum())
                lo[i], hi[i] = point[i] - tq[n_runs[i]] * se, point[i] + tq[n_runs[i]] * se
            elif m == "BCa bootstrap":
                lo[i], hi[i] = _bca(boot[:, i], col, point[i], confidence)
    return point, lo, hi, methods, n_runs


#: the note of an agent rated from one run (rated, no interval)
ONE_RUN = "n=1 run, no interval"
#: why an agent without games against other agents has no rating
SELF_PLAY = "only met itself (every game against its own teams): no rating"


def components(games: pd.DataFrame, agents: list[str]) -> pd.Series:
    """Per agent, its group of the comparison graph (agents linked when they played each other, directly or
    through others): 1 = the largest group (most agents, then most games, then first name), 2, ...; <NA> for an
    agent without games against other agents. Ratings of different groups are on no common scale."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    index = {a: i for i, a in enumerate(agents)}
    mat = _win_matrix(games, index)
    linked = (mat + mat.T) > 0
    _, label = connected_components(csr_matrix(linked), directed=False)
    played = linked.any(axis=1)
    groups = {}
    for i, a in enumerate(agents):
        if played[i]:
            groups.setdefault(label[i], []).append(i)
    order = sorted(groups.values(), key=lambda g: (-len(g), -mat[np.ix_(g, g)].sum(), agents[g[0]]))
    out = pd.Series(pd.NA, index=agents, dtype="Int64", name="component")
    for k, g in enumerate(order, start=1):
        out.iloc[g] = k
    return out


def ratings(runs: metrics.Runs, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per agent: Bradley-Terry ``rating`` with its interval over runs (``ci_low``, ``ci_high``, ``ci_method``;
    see the module docstring), ``n_runs`` it played, its cross-agent ``games``, ``wins``, ``losses``, ``ties``,
    its ``component`` (:func:`components`) and a ``note``.

    Each group of agents that met (directly or through others) is fitted on its own, mean 1500 within it: two
    groups that never met share no games, and the virtual ties alone would put them on one scale they do not
    have. An agent that only met itself (self-play) has no games, no rating (NaN) and :data:`SELF_PLAY` as note;
    one rated from a single run has no interval (:data:`ONE_RUN`)."""
    cols = ["agent", "rating", "ci_low", "ci_high", "ci_method", "n_runs", "games", "wins", "losses", "ties",
            "component", "note"]
    games = matchups(runs)
    agents = sorted(set(runs["matchups"]["agent"])) if not runs["matchups"].empty else []
    if not agents:
        return pd.DataFrame(columns=cols)
    index = {a: i for i, a in enumerate(agents)}
    run_ids = sorted(runs["matchups"]["run_id"].unique())
    by_run = dict(tuple(games.groupby("run_id"))) if len(games) else {}
    empty = games.iloc[:0]
    mats = {r: _win_matrix(by_run.get(r, empty), index) for r in run_ids}
    present = {r: (mats[r].sum(axis=0) + mats[r].sum(axis=1)) > 0 for r in run_ids}
    comp = components(games, agents)
    point, lo, hi = (np.full(len(agents), np.nan) for _ in range(3))
    methods, n_runs = ["none"] * len(agents), np.zeros(len(agents), dtype=int)
    for k in comp.dropna().unique():
        idx = np.flatnonzero((comp == k).to_numpy(dtype=bool, na_value=False))
        sub = {r: mats[r][np.ix_(idx, idx)] for r in run_ids}
        sub_present = {r: present[r][idx] for r in run_ids}
        held = [r for r in run_ids if sub_present[r].any()]
        p, lo_k, hi_k, m_k, n_k = _intervals(sub, sub_present, held, confidence, n_resamples, seed)
        point[idx], lo[idx], hi[idx], n_runs[idx] = p, lo_k, hi_k, n_k
        for j, i in enumerate(idx):
            methods[i] = m_k[j]
    wins = games.assign(w=~games["tie"]).groupby("winner")["w"].sum()
    losses = games.assign(w=~games["tie"]).groupby("loser")["w"].sum()
    ties = pd.concat([games.loc[games["tie"], "winner"], games.loc[games["tie"], "loser"]]).value_counts()
    out = pd.DataFrame({"agent": agents, "rating": point, "ci_low": lo, "ci_high": hi, "ci_method": methods,
                        "n_runs": n_runs, "component": comp.to_numpy()})
    out["component"] = out["component"].astype("Int64")
    for name, s in (("wins", wins), ("losses", losses), ("ties", ties)):
        out[name] = out["agent"].map(s).fillna(0).astype(int)
    out["games"] = out["wins"] + out["losses"] + out["ties"]
    out["note"] = np.where(out["rating"].isna(), SELF_PLAY, np.where(out["n_runs"] == 1, ONE_RUN, ""))
    out = out.sort_values(["component", "rating"], ascending=[True, False], na_position="last", ignore_index=True)
    return out[cols]


def _cluster_bootstrap(mats, present, run_ids, centre, n_resamples: int, seed: int) -> np.ndarray:
    """Replicates of the ratings resampling whole runs with replacement within strata of runs that hold the same
    agents (a field batch: one stratum per candidate), so every agent is in every resample."""
    rng = np.random.default_rng(seed)
    strata: dict[bytes, list[str]] = {}
    for r in run_ids:
        strata.setdefault(present[r].tobytes(), []).append(r)
    groups = list(strata.values())
    out = np.empty((n_resamples, len(centre)))
    for b in range(n_resamples):
        sel = [g[k] for g in groups for k in rng.integers(0, len(g), len(g))]
        out[b] = _rating_of_runs(mats, present, sel, centre)
    return out


# ------------------------------------------------------------------------------------------------ cost
COST_COLUMNS = ["agent", "team_seasons", "cost_usd", "cost_per_team_season", "points_per_team_season",
                "points_per_week", "points_per_dollar", "unpriced_calls", "cost_known", "free"]


def costs(runs: metrics.Runs) -> pd.DataFrame:
    """Per agent: team-seasons played, ledger cost (total and per team-season), mean regular-season points per
    team-season and points per dollar. ``cost_known`` is False (cost NaN, never $0) when any of the agent's
    answered calls had no price (``unpriced_calls``), or an LLM agent has a run without ledger rows (imported
    runs have no token or cost data), or a ledger from before ``unpriced_calls`` shows calls costing $0 in all
    (a model litellm cannot price costs 0 throughout). ``free``: known cost of $0 (bots, people): points per dollar NaN.

    Per team-season needs seasons of one length: when the runs' regular seasons differ in weeks a team-season
    is no unit (3 weeks and 14 weeks would be averaged), so ``points_per_team_season``, ``cost_per_team_season``
    (0 for free agents) and ``points_per_dollar`` are NaN; totals and ``points_per_week`` (each team-season's
    points over its weeks) stay, and :func:`costs_note` says so."""
    st = metrics.standings(runs)
    weeks = regular_weeks(runs)
    mixed = weeks.nunique() > 1
    ledger = runs.get("llm_summary", pd.DataFrame())
    rows = []
    for agent, g in st.groupby("agent"):
        row = {"agent": agent, "team_seasons": len(g),
               "points_per_team_season": np.nan if mixed else float(g["points_for"].mean()),
               "points_per_week": float((g["points_for"] / g["run_id"].map(weeks).astype(float)).mean())}
        led = ledger[(ledger["agent"] == agent) & ledger["run_id"].isin(g["run_id"])] if len(ledger) else ledger
        if not metrics.makes_calls(agent):  # bots and people: no LLM calls, no ledger
            known, total, unpriced = True, 0.0, 0
        else:
            unpriced = int(led["unpriced_calls"].fillna(0).sum()) if "unpriced_calls" in led else 0
            total = float(led["cost_usd"].fillna(0).sum()) if len(led) else 0.0
            all_runs = set(g["run_id"]) <= set(led["run_id"]) if len(led) else False
            # per run: a ledger from before unpriced_calls whose calls cost $0 in all could not price them
            old = led.assign(u=led["unpriced_calls"] if "unpriced_calls" in led else np.nan).groupby("run_id").agg(
                u=("u", lambda s: s.isna().any()), cost=("cost_usd", "sum"), calls=("calls", "sum")) if len(led) \
                else pd.DataFrame(columns=["u", "cost", "calls"])
            old_zero = bool((old["u"] & (old["cost"] == 0) & (old["calls"] > 0)).any())
            known = bool(all_runs and unpriced == 0 and not old_zero)
        row.update(cost_usd=total if known else np.nan, unpriced_calls=unpriced, cost_known=known)
        row["free"] = known and total == 0
        row["cost_per_team_season"] = np.nan if mixed and not row["free"] else row["cost_usd"] / len(g)
        row["points_per_dollar"] = (row["points_per_team_season"] / row["cost_per_team_season"]
                                    if known and total > 0 and not mixed else np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=COST_COLUMNS)


def regular_weeks(runs: metrics.Runs) -> pd.Series:
    """Per run: the weeks of its regular season (the weeks of its ``matchups`` table; playoffs are apart)."""
    m = runs.get("matchups")
    return m.groupby("run_id")["week"].nunique() if m is not None and len(m) else pd.Series(dtype=int)


def costs_note(runs: metrics.Runs) -> str:
    """"" or why :func:`costs` gives nothing per team-season: runs whose regular seasons differ in length."""
    weeks = regular_weeks(runs)
    if weeks.nunique() <= 1:
        return ""
    counts = weeks.value_counts().sort_index()
    return ("points and cost per team-season not given: the runs' regular seasons differ in length ("
            + ", ".join(f"{k} run(s) of {w} weeks" for w, k in counts.items())
            + "); points_per_week compares them")


# ------------------------------------------------------------------------------------------------ leaderboard
#: why an agent outside the largest group is not ranked
NOT_COMPARABLE = "not comparable: never met the ranked agents (directly or through others)"


def leaderboard(runs: metrics.Runs, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
                ) -> pd.DataFrame:
    """One row per agent: its rating with the interval over runs, head-to-head record, points, fallback shares,
    cost, and ``note`` (why it is not ranked, or that its rating has no interval).

    Ranked (``rank`` 1, 2, ...): the agents of the largest group that met each other (``component`` 1,
    :func:`components`), so every rank is on one scale. Not ranked, listed after them with the reason in
    ``note``: agents of other groups (:data:`NOT_COMPARABLE`; rated within their own group), agents that only met
    themselves (no rating), and agents whose season or draft decisions were mostly engine fallbacks
    (``metrics.agent_info``: never ranked as if the model had played; their games stay in the fit, their
    opponents really played them). An agent rated from one run is ranked with ``note`` :data:`ONE_RUN`: its
    rating is the estimate its games give, but nothing says how far another run would move it; the mark goes
    wherever the rank goes. ``attrs["note"]`` says in words what was ranked and what was left out.
    ``win_rate``: :func:`metrics.agent_win_rate` (games against other agents, a tie half a win) averaged over
    the agent's runs, the number the win-rate figure shows."""
    from ffbench_lib.core.stats import not_ranked

    r = ratings(runs, confidence, n_resamples, seed)
    info = metrics.agent_info(runs)
    why_flag = not_ranked(info)
    info = info[["agent", "fallback_rate", "draft_fallback_rate", "flagged", "draft_flagged", "ranked"]]
    board = info.merge(r, on="agent", how="left").merge(costs(runs), on="agent", how="left")
    # the one agent-level win rate (metrics.agent_win_rate), as the win-rate figure shows it: its mean over runs
    board["win_rate"] = board["agent"].map(metrics.agent_win_rate(runs).groupby("agent")["win_rate"].mean())
    other_group = board["component"].notna() & (board["component"] != 1)
    notes = []
    for row, other in zip(board.itertuples(index=False), other_group):
        why = [f"mostly engine fallbacks ({why_flag[row.agent]})"] if row.agent in why_flag else []
        if pd.isna(row.rating):
            why.append(SELF_PLAY)
        elif other:
            why.append(f"{NOT_COMPARABLE}; group {int(row.component)}")
        if row.note == ONE_RUN:
            why.append(ONE_RUN)
        notes.append("; ".join(why))
    board["note"] = notes
    board["ranked"] = board["ranked"] & board["rating"].notna() & ~other_group
    board = board.sort_values(["ranked", "component", "rating"], ascending=[False, True, False],
                              na_position="last", ignore_index=True)
    board["rank"] = pd.array([i + 1 if ok else pd.NA for i, ok in enumerate(board["ranked"])], dtype="Int64")
    first = ["rank", "agent", "rating", "ci_low", "ci_high", "ci_method", "n_runs", "games", "wins", "losses", "ties",
             "win_rate", "points_per_team_season", "fallback_rate", "draft_fallback_rate", "flagged", "draft_flagged",
             "ranked", "component", "note"]
    board = board[first + [c for c in COST_COLUMNS if c not in first]]
    said = []
    if other_group.any():
        said.append(f"ranked: the largest group of agents that met each other; not comparable with them (never met "
                    f"the ranked agents, directly or through others; rated within their own group): "
                    f"{', '.join(board.loc[board['component'].notna() & (board['component'] != 1), 'agent'])}")
    if board["rating"].isna().any():
        said.append(f"no rating ({SELF_PLAY.split(':')[0]}): {', '.join(board.loc[board['rating'].isna(), 'agent'])}")
    mixed = costs_note(runs)
    if mixed:
        said.append(mixed)
    board.attrs["note"] = "\n".join(said)
    return board


def agent_order(runs: metrics.Runs) -> list[str]:
    """Every agent in the leaderboard's order (ranked agents by rating, then the others as listed there): the one
    agent order of every figure (:func:`plots.runs_palette`). The order needs the point ratings only, so the
    bootstrap (used from 20 runs) is cut to a few resamples: the intervals are not used."""
    return list(leaderboard(runs, n_resamples=20)["agent"])


__all__ = ["matchups", "bradley_terry", "ratings", "components", "costs", "costs_note", "regular_weeks", "leaderboard",
           "agent_order",
           "ONE_RUN", "SELF_PLAY", "NOT_COMPARABLE", "PRIOR_TIES", "BASE", "SCALE",
           ]
