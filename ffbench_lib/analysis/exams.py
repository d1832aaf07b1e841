"""Exam results (``exam_results.parquet`` of ``ffbench exam run``): per skill and candidate the mean regret with an
interval clustered two ways (by team-season and by real week: :func:`~ffbench_lib.core.stats.twoway_cluster_mean`),
paired tests between candidates on the same states (Holm within a skill), the share of identical answers, and the
states a pair needs, beside the seeds the same pair needs in full seasons (the suite's own source seasons as the
pilot: start/sit's regret per team-week).

A state's rows are paired across candidates: both answered the same view, so a difference is the candidates',
not their rosters'. A protected exam judges a masked candidate on a cut board where a bot answers the exact one
(the results' ``view``): pairs compare only the states both answered as the same view, and say how many they
left out (``other_view``)."""
from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from ffbench_lib.core import stats

RESULTS = "exam_results.parquet"
META = "exam.json"
#: what each skill's score is, said wherever its results are shown (the rule is game/skills.py's)
SKILL_RULES = {
    "start_sit": "start/sit: the points the lineup's starters scored that week (an FPL bench's automatic "
                 "substitutions applied) against the hindsight-optimal lineup of the same roster",
    "trade_acceptance": "trade acceptance: the rest-of-season value (each week's hindsight-optimal lineup, no other "
                        "move) of the roster the answer leaves, accepting or keeping it (a counter keeps it), "
                        "against the better of the two",
    "waiver_choice": "waiver choice: the rest-of-season value of the roster the top legal claim leaves (the exam "
                     "holds the roster and has no other claimant; a bid is not scored) against the best single move "
                     "the view allows, or none",
    "ir_choice": "IR choice: the rest-of-season value of the active roster the answer leaves, a spot a move to IR "
                 "frees filled with the best free agent shown that week and a player on IR back the first week he "
                 "plays (into an open spot, for that free agent, or for the active player scoring least from then), "
                 "against the best legal answer",
    "draft_pick": "draft pick: the pick's season points above his position's replacement level (the season of the "
                  "player ranked teams x starting slots + 1 there) against the best on the board; caveat: a pick's "
                  "value to one roster also depends on the rest of the roster and on later picks, and points above "
                  "replacement rank the bots as full seasons do where a roster-fit rule did not",
}
#: the columns the analysis reads (``ffbench_lib.runs.exam.COLUMNS`` writes them all)
NEEDED = ("suite", "state_id", "skill", "sport", "season", "week", "team_season", "agent", "agent_id", "applied",
          "decided_by", "score", "best_possible", "regret")


def load_results(path: str | Path) -> pd.DataFrame:
    """An exam's results (a results folder or its parquet file); ValueError naming the file otherwise."""
    p = Path(path)
    f = p / RESULTS if p.is_dir() else p
    if not f.is_file():
        raise ValueError(f"{f}: no exam results; run `ffbench exam run SUITE CANDIDATES --out DIR` first")
    try:
        df = pd.read_parquet(f)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same answer for the user
        raise ValueError(f"{f}: not readable as parquet ({type(exc).__name__}); run the exam again") from None
    missing = [c for c in NEEDED if c not in df.columns]
    if missing:
        raise ValueError(f"{f}: not exam results (no column {', '.join(missing)}); give a folder `ffbench exam run` "
                         "wrote")
    return df


#: skills whose score sums a whole season's outcomes (a trade's rest of season, a pick's season): their states
#: share the real season, not one week, and cluster by it
SEASON_SCORED = frozenset({"trade_acceptance", "waiver_choice", "ir_choice", "draft_pick"})


def _week(df: pd.DataFrame) -> pd.Series:
    """The second cluster of a state: its real week (sport, season, week: states of one week share its surprises),
    or for a skill scored over a season (:data:`SEASON_SCORED`) its real season."""
    whole = df["skill"].isin(SEASON_SCORED) | df["week"].isna()
    week = df["week"].map(lambda w: "" if w is None or pd.isna(w) else f"-w{int(w)}")
    return df["sport"].astype(str) + "-" + df["season"].astype(str) + week.where(~whole, "")


def _note(r: dict) -> str | None:
    if np.isfinite(r["low"]):
        return None
    return (f"no interval: {r['clusters_b']} real-season (or week) cluster(s) and {r['clusters_a']} team-season(s); "
            "an interval needs 2 or more of each")


def skill_table(df: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per skill, sport and candidate (regrets of two sports share no scale): states, mean score, mean regret with
    its two-way clustered interval (``note`` says why there is none), the share the rules repaired, the share it
    answered as a protected team (cut boards: its best possible is the best of what it was shown); best (lowest
    mean regret) first."""
    rows = []
    for (skill, sport, agent), g in df.groupby(["skill", "sport", "agent"], sort=True):
        r = stats.twoway_cluster_mean(g["regret"], g["team_season"], _week(g), confidence)
        rows.append({"skill": skill, "sport": sport, "agent": agent, "states": len(g),
                     "score": round(float(g["score"].mean()), 2), "regret": round(r["mean"], 2),
                     "low": round(r["low"], 2), "high": round(r["high"], 2),
                     "repaired": round(float((g["decided_by"] != "agent").mean()), 3),
                     "team_seasons": r["clusters_a"], "clusters": r["clusters_b"],
                     "protected": round(float((g["view"] == "protected").mean()), 3) if "view" in g else 0.0,
                     "note": _note(r)})
    out = pd.DataFrame(rows)
    return out.sort_values(["skill", "sport", "regret", "agent"], kind="stable").reset_index(drop=True) if len(out) \
        else out


def stratum_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean regret per skill, sport, position-scarcity stratum (``short``/``full`` weeks, ``scarce``/``open``
    boards) and candidate, with its states: where a candidate's regret comes from (no interval: a stratum holds a
    few states of each team-season)."""
    if "stratum" not in df.columns:
        raise ValueError("these results have no stratum column (a suite of format version 1): rebuild the suite")
    g = df.groupby(["skill", "sport", "stratum", "agent"], as_index=False).agg(
        states=("state_id", "size"), regret=("regret", "mean"))
    return g.round({"regret": 2})


def _paired(df: pd.DataFrame, skill: str, sport: str, a: str, b: str) -> pd.DataFrame:
    g = df[(df["skill"] == skill) & (df["sport"] == sport)]
    x = g[g["agent"] == a].set_index("state_id")
    y = g[g["agent"] == b].set_index("state_id")
    common = x.index.intersection(y.index)
    if "view" in g.columns:  # a cut board against an exact one is no pair (its best possible differs)
        alike = common[(x.loc[common, "view"] == y.loc[common, "view"]).to_numpy()]
        other, common = len(common) - len(alike), alike
    else:
        other = 0
    if common.empty:
        out = pd.DataFrame(columns=["d", "same", "team_season", "week"])
        out.attrs["other_view"] = other
        return out
    out = pd.DataFrame({"d": x.loc[common, "regret"] - y.loc[common, "regret"],
                         "same": x.loc[common, "applied"] == y.loc[common, "applied"],
                         "team_season": x.loc[common, "team_season"], "week": _week(x.loc[common].reset_index())
                         .set_axis(common)})
    out.attrs["other_view"] = other
    return out


def pair_tests(df: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of candidates within a skill and sport on the states both answered: the mean regret difference
    (a - b: below 0, a regrets less), its two-way clustered interval and p, Holm-adjusted within the skill and sport,
    and the share of states where both applied the very same answer; ``other_view``: the states left out because
    one was judged on a protected (cut) view and the other on the exact one."""
    rows = []
    for (skill, sport), part in df.groupby(["skill", "sport"], sort=True):
        agents = sorted(part["agent"].unique())
        mine = []
        for a, b in combinations(agents, 2):
            p = _paired(df, skill, sport, a, b)
            if p.empty:  # no state both answered as the same view (a protected candidate against a bot on cut boards)
                mine.append({"skill": skill, "sport": sport, "a": a, "b": b, "states": 0, "diff": np.nan,
                             "low": np.nan, "high": np.nan, "p": np.nan, "identical": np.nan,
                             "other_view": p.attrs["other_view"]})
                continue
            t = stats.twoway_cluster_test(p["d"], p["team_season"], p["week"])
            mine.append({"skill": skill, "sport": sport, "a": a, "b": b, "states": len(p), "diff": round(t["mean"], 2),
                         "low": round(t["low"], 2) if np.isfinite(t["low"]) else np.nan,
                         "high": round(t["high"], 2) if np.isfinite(t["high"]) else np.nan, "p": t["p"],
                         "identical": round(float(p["same"].mean()), 3) if len(p) else np.nan,
                         "other_view": p.attrs["other_view"]})
        adj = stats.holm([r["p"] for r in mine])
        for r, q in zip(mine, adj):
            r["p_holm"] = q
            r["significant"] = bool(q <= alpha) if np.isfinite(q) else False
        rows += mine
    return pd.DataFrame(rows)


def states_needed(df: pd.DataFrame, alpha: float = 0.05, target: float = 0.8) -> pd.DataFrame:
    """Per skill and sport, each adjacent pair of the regret ranking: the states an exam needs to separate them at
    ``target`` power (a paired t-test at alpha over the adjacent pairs, on the pilot's effect and its effective
    per-state standard deviation: the two-way clustered standard error times the square root of the states, so the
    clustering's design effect counts), and its calls (both candidates answer every state). None where the pair
    answered every state alike (``identical`` 1), where the pilot cannot estimate the spread (``estimable`` False:
    its states fall in one cluster), or where more than 10,000 states would be needed."""
    table = skill_table(df)
    rows = []
    for (skill, sport), g in table.groupby(["skill", "sport"], sort=True):
        ranked = list(g["agent"])
        m = max(len(ranked) - 1, 1)
        for a, b in zip(ranked, ranked[1:]):
            p = _paired(df, skill, sport, a, b)
            if p.empty:  # nothing comparable (protected against exact views on every state)
                continue
            t = stats.twoway_cluster_mean(p["d"], p["team_season"], p["week"])
            sd = t["se"] * math.sqrt(len(p)) if np.isfinite(t["se"]) else float("nan")
            same = bool(len(p)) and bool(np.all(p["d"] == 0))
            estimable = same or (t["df"] >= 1 and np.isfinite(sd))
            n = stats.seeds_needed(abs(t["mean"]), sd, alpha, m, target) if len(p) and not same and estimable else None
            rows.append({"skill": skill, "sport": sport, "better": a, "worse": b, "effect": round(-t["mean"], 3) + 0.0,
                         "sd_per_state": round(sd, 3) if np.isfinite(sd) else np.nan, "pilot_states": len(p),
                         "estimable": estimable, "states_needed": n, "exam_calls": 2 * n if n else None,
                         "identical": round(float(p["same"].mean()), 3) if len(p) else np.nan})
    return pd.DataFrame(rows)


def season_seeds_needed(runs, pairs: pd.DataFrame, ids: dict[str, str], alpha: float = 0.05,
                        target: float = 0.8) -> pd.DataFrame:
    """The same start/sit pairs in full seasons, from the suite's source seasons of one sport (``runs``, loaded by
    :func:`~ffbench_lib.analysis.metrics.load_runs`) as the pilot: each candidate's (its ``ids``: name -> agent id)
    mean regret per team-week in each season, paired by season; the seeds needed at ``target`` power and their
    calls (:func:`calls_per_seed`: a season asks every decision to measure one skill). A pair whose agents do not
    both play the source seasons has none."""
    from ffbench_lib.analysis import metrics

    ss = metrics.start_sit(runs)
    per_run = ss.groupby(["run_id", "agent"])["left_on_table"].mean().unstack()
    calls = calls_per_seed(runs)
    out = []
    m = max(len(pairs), 1)
    for r in pairs.itertuples(index=False):
        a, b = ids.get(r.better), ids.get(r.worse)
        if a not in per_run or b not in per_run:
            out.append({"sport": r.sport, "better": r.better, "worse": r.worse, "season_seeds_needed": None,
                        "season_calls": None, "season_pilot_seeds": 0})
            continue
        d = (per_run[a] - per_run[b]).dropna().to_numpy()
        sd = float(np.std(d, ddof=1)) if len(d) > 1 else float("nan")
        n = stats.seeds_needed(abs(float(d.mean())), sd, alpha, m, target) if len(d) > 1 and np.any(d != 0) else None
        out.append({"sport": r.sport, "better": r.better, "worse": r.worse, "season_seeds_needed": n,
                    "season_calls": int(round(n * (calls[a] + calls[b]))) if n and a in calls and b in calls else None,
                    "season_pilot_seeds": len(d)})
    return pd.DataFrame(out)


def calls_per_seed(runs) -> pd.Series:
    """agent -> the decisions (calls, for a model) one season asks its teams, every kind: what a full season spends
    to measure any one skill of it."""
    dec = runs.get("decisions", pd.DataFrame())
    if dec is None or dec.empty:
        return pd.Series(dtype=float)
    return dec.groupby(["run_id", "agent"]).size().groupby("agent").mean()


def own_state_seeds(df: pd.DataFrame, pairs: pd.DataFrame, runs, ids: dict[str, str], alpha: float = 0.05,
                    target: float = 0.8) -> pd.DataFrame:
    """The same pairs in full seasons for a skill without a season metric of its own (trades, waivers, picks): a
    season measures a policy only on the states its own teams meet, so the pilot is each policy's regret on its
    own teams' states of each source season (its exam answers there: for a deterministic bot, the season's own),
    paired by source season; the seeds needed and their calls (:func:`calls_per_seed`)."""
    calls = calls_per_seed(runs)
    out = []
    for (skill, sport), mine in pairs.groupby(["skill", "sport"], sort=False):
        own = df[(df["skill"] == skill) & (df["sport"] == sport) & (df["agent_id"] == df["source_agent"])]
        per_source = own.groupby(["source", "agent_id"])["regret"].mean().unstack()
        m = max(len(mine), 1)
        for r in mine.itertuples(index=False):
            a, b = ids.get(r.better), ids.get(r.worse)
            row = {"skill": skill, "sport": sport, "better": r.better, "worse": r.worse, "season_seeds_needed": None,
                   "season_calls": None, "season_pilot_seeds": 0}
            if a in per_source and b in per_source:
                d = (per_source[a] - per_source[b]).dropna().to_numpy()
                row["season_pilot_seeds"] = len(d)
                sd = float(np.std(d, ddof=1)) if len(d) > 1 else float("nan")
                n = stats.seeds_needed(abs(float(d.mean())), sd, alpha, m, target) if len(d) > 1 and np.any(d != 0) \
                    else None
                row["season_seeds_needed"] = n
                if n and a in calls and b in calls:
                    row["season_calls"] = int(round(n * (calls[a] + calls[b])))
            out.append(row)
    return pd.DataFrame(out)


def power_plan(results_dir: str | Path, alpha: float = 0.05, target: float = 0.8) -> pd.DataFrame:
    """:func:`states_needed` of an exam's results, with the full-season seeds of the same pairs beside it (per
    sport, from that sport's source seasons: start/sit by the season metric, the other skills by
    :func:`own_state_seeds`) when the suite is where ``exam.json`` says (``ratio``: season calls per exam call)."""
    from ffbench_lib.analysis import metrics

    df = load_results(results_dir)
    plan = states_needed(df, alpha, target)
    meta_f = Path(results_dir) / META
    suite_dir = None
    if meta_f.is_file():
        try:
            suite_dir = Path(json.loads(meta_f.read_text(encoding="utf-8")).get("suite_dir", ""))
        except (OSError, ValueError, AttributeError):
            suite_dir = None
    none = plan.assign(season_seeds_needed=None, season_calls=None, ratio=None)
    if suite_dir is None or not (suite_dir / "suite.json").is_file() or plan.empty:
        return none
    suite = json.loads((suite_dir / "suite.json").read_text(encoding="utf-8"))
    ids = dict(zip(df["agent"], df["agent_id"]))
    found = []
    for sport in sorted(plan["sport"].unique()):
        paths = [suite_dir / s["run"] for s in suite.get("sources", {}).values()
                 if s.get("config", {}).get("sport", "nfl") == sport and (suite_dir / s["run"]).is_dir()]
        if not paths:
            continue
        seasons = {s.get("config", {}).get("season") for s in suite.get("sources", {}).values()
                   if s.get("config", {}).get("sport", "nfl") == sport}
        if len(seasons) < 2:  # seeds of one real season share it: as the exam's side, no estimate
            found.append(plan[plan["sport"] == sport][["skill", "sport", "better", "worse"]].assign(
                season_seeds_needed=None, season_calls=None, season_pilot_seeds=0, season_note="one real season"))
            continue
        runs = metrics.load_runs(paths)
        lineup = plan[(plan["skill"] == "start_sit") & (plan["sport"] == sport)]
        other = plan[(plan["skill"] != "start_sit") & (plan["sport"] == sport)]
        if len(lineup):
            found.append(season_seeds_needed(runs, lineup, ids, alpha, target).assign(skill="start_sit"))
        if len(other):
            found.append(own_state_seeds(df, other, runs, ids, alpha, target))
    if not found:
        return none
    out = plan.merge(pd.concat(found), on=["skill", "sport", "better", "worse"], how="left")
    out["ratio"] = [round(s / e, 1) if s and e and not pd.isna(s) and not pd.isna(e) else None
                    for s, e in zip(out["season_calls"], out["exam_calls"])]
    return out


def _times(r: float) -> str:
    """A ratio as people read one: ``2.8x``, ``46x``, ``190x`` (not ``1.9e+02x``)."""
    return f"{r:.2g}x" if r < 10 else f"{r:,.0f}x"


def _n(x) -> int | None:
    return None if x is None or pd.isna(x) else int(x)


def format_plan(plan: pd.DataFrame) -> str:
    """The exam's power plan as ``ffbench power`` prints it."""
    lines = ["exam: states needed to separate each adjacent pair of a skill's ranking, per sport (80% power, alpha "
             "0.05 over the adjacent pairs, from the pilot's effect and its spread clustered by team-season and by "
             "real week, or real season for a skill scored over one); full seasons: the seeds the same pair needs, "
             "from the suite's source seasons, and their calls (every decision of the two policies' teams: a season "
             "asks them all to measure one skill)"]
    if plan.empty:
        return "\n".join(lines + ["  one candidate: no pair to separate"])
    for r in plan.itertuples(index=False):
        states, seeds = _n(r.states_needed), _n(getattr(r, "season_seeds_needed", None))
        if states:
            need = f"{states} states ({2 * states} calls)"
        elif r.identical == 1.0:
            need = "the same answer on every state: nothing to separate"
        elif r.effect == 0:
            need = "the same regret on every state: nothing to separate"
        elif not r.estimable:
            need = "cannot be estimated (the pilot's states fall in one real week or season: add seasons)"
        else:
            need = "more than 10,000 states"
        line = f"  {r.skill} ({r.sport}): {r.better} over {r.worse} by {r.effect:+.2f} regret per state: {need}"
        same = r.identical == 1.0 or (r.effect == 0 and not states)
        if seeds:
            calls = _n(r.season_calls)
            line += f"; full seasons: {seeds} seeds ({calls} calls"
            line += f", {_times(calls / (2 * states))} the exam's)" if states and calls else (
                ": a season separates them by the rosters and states their own teams meet)" if same else ")")
        elif isinstance(getattr(r, "season_note", None), str):
            line += f"; full seasons: not estimated ({r.season_note}: seeds of it share its outcomes)"
        elif getattr(r, "season_pilot_seeds", 0) == 1:
            line += "; full seasons: not estimated (only one source run has both policies' own teams measured)"
        elif getattr(r, "season_pilot_seeds", 0):
            line += "; full seasons: more than 10,000 seeds, or no difference in the pilot's seasons"
        lines.append(line)
    return "\n".join(lines)
