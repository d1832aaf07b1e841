"""Metrics over run directories (never re-simulating), attributed to the agent (model or bot), not the team.

Every function takes the tables of one or many runs as loaded by :func:`load_runs` and returns a tidy frame
keyed by ``run_id`` and ``agent`` (and ``team`` where a run has several teams of one agent).
"""
from __future__ import annotations

import glob
import json
import warnings
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ffbench_lib.analysis.field_labels import FIELD_PREFIX, is_field_agent, relabel
from ffbench_lib.config.league import AUTOPILOT, DEFAULT_SPORT, FLEX_SLOTS, LLMSettings, Roster
from ffbench_lib.sport import sport
from ffbench_lib.core.paths import from_root, outputs_dir
from ffbench_lib.sport.lineup import hindsight_points
from ffbench_lib.records.decision import is_decision
from ffbench_lib.records.field import folder_of, manifest_of, stray
from ffbench_lib.records.load import RunFiles
from ffbench_lib.records.run import RunMeta, RunMetaError
from ffbench_lib.records.tables import TABLES

Runs = dict[str, pd.DataFrame]

#: An agent whose decisions the engine repaired more often than this is marked in every figure and table: its
#: results are mostly the engine's. The same number as the config's ``llm.max_fallback_rate`` default.
MAX_FALLBACK_RATE: float = LLMSettings.model_fields["max_fallback_rate"].default
DRAFT_DECISIONS = ("draft_shortlist", "draft_pick", "draft_queue")
#: the status of a run left out as not one of its field batch's (a seed or folder its field.json does not list)
STRAY = "not in its field.json"


def expand_paths(runs: str | Path | Iterable[str | Path]) -> list[Path]:
    """Run directories from a path, a glob, a folder of runs, a batch folder (its ``runs/``, a field batch's
    ``runs/<candidate>/``, a study's ``runs/<sport>-<season>/``), a folder of such folders (a batch's ``runs/``), or a list of those (sorted, deduplicated). An item that holds no run is an error
    naming it: a mistyped path must not quietly shrink the sample."""
    items = [runs] if isinstance(runs, (str, Path)) else list(runs)
    out: list[Path] = []
    for item in items:
        found: list[Path] = []
        for h in sorted(glob.glob(str(item))) or [str(item)]:
            p = Path(h)
            if (p / "run.json").exists():
                found.append(p)
            elif p.is_dir():
                inner = sorted(q.parent for q in p.glob("*/run.json"))
                batch = sorted(q.parent for pattern in ("runs/*/run.json", "runs/*/*/run.json", "runs/*/*/*/run.json")
                               for q in p.glob(pattern))  # a field study: runs/<candidate>/<season>/seed-N
                # runs in folders of a season (a study's runs/nfl-2023/seed-0) or of a candidate (bot-adp/seed-0)
                grouped = sorted(q.parent for q in p.glob("*/*/run.json"))
                deeper = sorted(q.parent for q in p.glob("*/*/*/run.json")) if not (inner or batch or grouped) else []
                found.extend(inner or batch or grouped or deeper)  # deeper: a field study's runs/
        if not found:
            raise FileNotFoundError(f"no run directories (folders with run.json) in {str(item)!r}")
        out.extend(found)
    seen: dict[str, Path] = {}
    for p in out:
        seen.setdefault(str(p.resolve()), p)
    return list(seen.values())


#: the analysis notebooks' default ``runs``; when it matches nothing, :func:`resolve_runs` takes the newest batch
DEFAULT_RUNS = "outputs/runs/*"


def resolve_runs(runs: str | Path | Iterable[str | Path]) -> list[Path]:
    """:func:`expand_paths`, except that the notebooks' default (:data:`DEFAULT_RUNS`, as given or under the
    project root) matching nothing means the newest batch under ``outputs/batches/`` with a complete run (what
    ``./run.sh demo`` writes), said in a printed line. Any other pattern matching nothing stays an error: never
    analyse other runs than asked."""
    try:
        return expand_paths(runs)
    except FileNotFoundError as exc:
        if not isinstance(runs, (str, Path)) or str(runs) not in (DEFAULT_RUNS, str(from_root(DEFAULT_RUNS))):
            raise
        batches = []
        for folder in sorted(p for p in (outputs_dir() / "batches").glob("*") if p.is_dir()):
            done = [f.stat().st_mtime for f in (*folder.glob("runs/*/run.json"), *folder.glob("runs/*/*/run.json"))
                    if _status(f) == "complete"]
            if done:
                batches.append((max(done), folder))
        if not batches:
            raise FileNotFoundError(f"{exc}, nor in any batch under {outputs_dir() / 'batches'}: run `./run.sh demo` "
                                    "first, or set runs to your run folders") from None
    folder = max(batches)[1]
    paths = expand_paths(folder)
    try:
        shown = (folder / "runs").relative_to(outputs_dir().parent)
    except ValueError:
        shown = folder / "runs"
    print(f"no runs in {DEFAULT_RUNS}; using the {len(paths)} runs of {shown} (the newest of {len(batches)} "
          "batch(es) under outputs/batches with a complete run; set runs to choose others)", flush=True)
    return paths


def _status(run_json: Path) -> str | None:
    try:
        return RunMeta.read(run_json).status
    except RunMetaError:
        return None


def run_labels(paths: list[Path]) -> list[str]:
    """The shortest path tails (``seed-1``, ``m1/seed-1``, ...) that tell these run directories apart: the same
    folder name in two batches must stay two runs in every metric."""
    parts = [Path(p).resolve().parts for p in paths]
    for k in range(1, max((len(x) for x in parts), default=1) + 1):
        tails = ["/".join(x[-k:]) for x in parts]
        if len(set(tails)) == len(tails):
            return tails
    return ["/".join(x) for x in parts]


def load_runs(runs: str | Path | Iterable[str | Path], complete_only: bool = True) -> Runs:
    """Every table of every run, concatenated, with ``run_id`` (``<league>-s<seed>@<path tail>``, unique per
    directory) and ``seed`` columns; ``meta`` holds one row per run and ``roster`` each run's roster config.
    With ``complete_only``, unfinished runs are left out, listed in ``excluded`` (path, status, reason) and warned
    about: a result that quietly drops runs would look like all of them."""
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in (*TABLES, "llm_summary", "decisions")}
    metas, excluded = [], []
    batches: dict[str | None, Path] = {}
    paths = resolve_runs(runs)
    for path, label in zip(paths, run_labels(paths)):
        rd = RunFiles(path)
        meta = rd.meta()
        if complete_only and meta.status != "complete":
            excluded.append({"path": str(path), "status": meta.status, "reason": meta.reason or "not complete"})
            continue
        in_field = manifest_of(path)  # a field batch's run: its baseline teams play as field:<agent>
        why = stray(*in_field, path, meta.seed) if in_field else None
        if why:
            excluded.append({"path": str(path), "status": STRAY, "reason": why})
            continue
        batches.setdefault(str(in_field[1]) if in_field else None, path)
        if len(batches) > 1:  # field scores pair a batch's own runs by seed: another batch's runs would mix in
            (a, pa), (b, pb) = list(batches.items())[:2]
            raise ValueError(f"{pa} and {pb} are runs of {'the field batch ' + a if a else 'no field batch'} and "
                             f"{'the field batch ' + b if b else 'no field batch'}: analyse one field batch at a "
                             "time, apart from other runs")
        run_id = f"{meta.run_id}@{label}"
        cfg = rd.config()
        metas.append({"run_id": run_id, "path": str(path), "seed": meta.seed, "season": meta.season,
                      "sport": cfg.get("sport", DEFAULT_SPORT),
                      "weeks": cfg.get("weeks"), "imported_from": meta.imported_from,
                      # with the league's sport (another than the NFL), whose positions the roster names
                      "roster": json.dumps({**cfg.get("roster", {}), **({"sport": cfg["sport"]} if cfg.get("sport")
                                                                        else {})}),
                      # the bracket's rounds (None: no playoffs), so a run stopped mid-bracket crowns nobody
                      "playoff_rounds": len((cfg.get("playoffs") or {}).get("round_weeks") or []) or None
                      if (cfg.get("playoffs") or {}).get("enabled") else None,
                      "waivers": (cfg.get("waivers") or {}).get("mode") if (cfg.get("waivers") or {}).get("enabled") else None,
                      "field_seat": in_field[0].seat if in_field else None,
                      # a field batch's own reference leagues (runs/reference): a yardstick, not a candidate
                      "field_reference": bool(in_field and in_field[0].reference not in in_field[0].candidates
                                              and folder_of(in_field[0], path)
                                              == (in_field[1] / in_field[0].reference_dir).resolve())})
        one = {name: rd.table_or_empty(name).assign(run_id=run_id, seed=meta.seed) for name in TABLES}
        if rd.file("llm_summary.parquet").exists():
            one["llm_summary"] = pd.read_parquet(rd.file("llm_summary.parquet")).assign(run_id=run_id)
        dec = [{**{k: r.get(k) for k in ("week", "pick", "team", "agent", "decision", "decided_by", "applied")},
                "on_deck": bool(r.get("on_deck")), "queue_dry": bool(r.get("queue_dry"))} for r in rd.decisions()]
        one["decisions"] = pd.DataFrame(dec).assign(run_id=run_id) if dec else pd.DataFrame()
        for name, df in (relabel(one, in_field[0].seat) if in_field else one).items():
            tables[name].append(df)
    excluded_df = pd.DataFrame(excluded, columns=["path", "status", "reason"])
    if not metas:
        raise FileNotFoundError(f"no complete runs in {runs!r}{_excluded_note(excluded_df)}")
    if len(excluded_df):
        warnings.warn(f"{_excluded_note(excluded_df).lstrip('; ')}; see data['excluded']", UserWarning, stacklevel=2)
    out = {k: pd.concat(v, ignore_index=True) if v else pd.DataFrame() for k, v in tables.items()}
    out["meta"] = pd.DataFrame(metas)
    out["excluded"] = excluded_df
    return out


def _excluded_note(excluded: pd.DataFrame) -> str:
    if excluded.empty:
        return ""
    counts = ", ".join(f"{n} {s}" for s, n in excluded["status"].value_counts().sort_index().items())
    names = ", ".join("/".join(Path(p).parts[-2:]) for p in excluded["path"].head(3)) + (
        ", ..." if len(excluded) > 3 else "")
    why = "excluded" if (excluded["status"] == STRAY).any() else "excluded as not complete"
    return f"; {len(excluded)} run(s) {why} ({counts}): {names}"


def describe_runs(runs: Runs) -> str:
    """One line for the notebooks: how many runs are analysed and which were left out (and why)."""
    excluded = runs.get("excluded", pd.DataFrame(columns=["path", "status", "reason"]))
    return f"{describe_sample(runs)}{_excluded_note(excluded)}"


def is_bot(agent) -> bool:
    """A bot (``bot:adp``, or a field batch's baseline ``field:bot:adp``): free, and cannot remember a season."""
    return str(agent).removeprefix(FIELD_PREFIX).startswith("bot:")


def is_human(agent) -> bool:
    """A person's team (``human:<name>``, from notebooks/10_play): free like a bot, but a person may remember the
    season being replayed."""
    return str(agent).removeprefix(FIELD_PREFIX).startswith("human:")


def autopilot_bot(agent) -> str | None:
    """The bot that answered for a person's seat played on autopilot (``human:<name>-autopilot-<bot>``, named so by
    :func:`ffbench_lib.play.session.on_autopilot`), else None."""
    name, mark, bot = str(agent).rpartition(AUTOPILOT)
    return bot if mark and is_human(name) else None


def makes_calls(agent) -> bool:
    """Whether the agent's decisions are LLM calls (with tokens, a cost, a ledger): not a bot's, not a person's."""
    return not (is_bot(agent) or is_human(agent))


def describe_sample(runs: Runs | Iterable) -> str:
    """The unit of evidence in words, for axis labels, titles and verdicts: "10 runs (seeds of the 2024 season)",
    "1 run (a seed of the 2024 season)", "12 runs over seasons 2023, 2024" (a run is one league on one seed of one
    season: seeds of one season are never "seasons"). ``runs``: :func:`load_runs`'s tables, or each run's season."""
    seasons = pd.Series(runs["meta"]["season"] if isinstance(runs, dict) else list(runs), dtype=float)
    n, known = len(seasons), sorted({int(s) for s in seasons.dropna()})
    sports = set(runs["meta"]["sport"]) if isinstance(runs, dict) and "sport" in runs["meta"] else {DEFAULT_SPORT}
    if len(sports) == 1:  # seasons as their sport names them (2024; 2024-25)
        known = [sport(next(iter(sports))).season_name(y) for y in known]
    else:  # two sports: each season with its sport (nfl 2024, fpl 2024-25)
        pairs = runs["meta"][["sport", "season"]].dropna().drop_duplicates().sort_values(["sport", "season"])
        known = [f"{sp} {sport(sp).season_name(int(y))}" for sp, y in zip(pairs["sport"], pairs["season"])]
    what = f"{n} run{'s' if n != 1 else ''}"
    if isinstance(runs, dict) and runs["meta"].get("field_seat", pd.Series(dtype=object)).notna().any():
        meta = runs["meta"]
        ref = meta["field_reference"].fillna(False).astype(bool) if "field_reference" in meta else False
        cand = set(runs["standings"].loc[runs["standings"]["run_id"].isin(meta.loc[~ref, "run_id"]), "agent"])
        k = sum(not is_field_agent(a) for a in cand)
        seeds = meta["seed"].nunique()
        where = f"the {known[0]} season" if len(known) == 1 else f"seasons {', '.join(map(str, known))}"
        plus = " and the reference" if bool(getattr(ref, "any", lambda: False)()) else ""
        return (f"{what}: {k} candidate{'s' if k != 1 else ''}{plus} × {seeds} seed{'s' if seeds != 1 else ''} "
                f"of {where}")
    if len(known) > 1:
        return f"{what} over seasons {', '.join(map(str, known))}"
    if len(known) == 1 and seasons.notna().all():
        return f"{what} ({'a seed' if n == 1 else 'seeds'} of the {known[0]} season)"
    return what


def _roster(runs: Runs, run_id: str) -> Roster:
    raw = runs["meta"].set_index("run_id").loc[run_id, "roster"]
    return Roster.model_validate(json.loads(raw)) if raw and raw != "{}" else Roster()


def draft_slots(runs: Runs) -> pd.DataFrame:
    """Each team's draft slot (1 = first pick of round 1)."""
    dp = runs["draft_picks"]
    r1 = dp[dp["round"] == 1]
    return r1.assign(draft_slot=r1.groupby("run_id")["pick"].rank().astype(int))[["run_id", "team", "agent", "draft_slot"]]


def team_agents(runs: Runs) -> pd.DataFrame:
    """Who played each team: ``agent`` (its season: lineups, trades, results) and ``draft_agent`` (who drafted
    it). They differ only in imported runs of the earlier benchmark, whose teams changed hands after the draft."""
    st = runs["standings"].drop_duplicates(["run_id", "team"])[["run_id", "team", "agent"]]
    return st.merge(draft_agents(runs), on=["run_id", "team"], how="left")


def draft_agents(runs: Runs) -> pd.DataFrame:
    dp = runs["draft_picks"]
    return dp.drop_duplicates(["run_id", "team"])[["run_id", "team", "agent"]].rename(columns={"agent": "draft_agent"})


def fallback_rates(runs: Runs, draft: bool = False) -> pd.DataFrame:
    """Per agent: the share of its season decisions (lineups, trade steps; ``draft=True``: draft decisions) that
    the engine made, and ``flagged`` when that share is above :data:`MAX_FALLBACK_RATE`."""
    d = runs["decisions"]
    cols = ["agent", "decisions", "fallbacks", "fallback_rate", "flagged"]
    if d.empty:
        return pd.DataFrame(columns=cols)
    d = d[[is_decision(r) for r in d.to_dict("records")]]
    d = d[d["decision"].isin(DRAFT_DECISIONS) == draft].assign(fb=lambda x: (x["decided_by"] == "fallback").astype(int))
    g = d.groupby("agent").agg(decisions=("fb", "size"), fallbacks=("fb", "sum"))
    g["fallback_rate"] = g["fallbacks"] / g["decisions"].clip(lower=1)
    g["flagged"] = g["fallback_rate"] > MAX_FALLBACK_RATE
    return g.reset_index()[cols]


def agent_info(runs: Runs) -> pd.DataFrame:
    """One row per (season) agent for labelling figures and tables: its season and draft fallback rates, whether
    either is above :data:`MAX_FALLBACK_RATE`, ``ranked`` (neither is: an agent whose decisions were mostly the
    engine's is never ranked as if the model had played) and ``drafted_by`` (the other models that drafted its
    teams)."""
    agents = sorted(set(runs["standings"]["agent"]))
    season = fallback_rates(runs).set_index("agent")
    draft = fallback_rates(runs, draft=True).set_index("agent")
    ta = team_agents(runs)
    by = {a: sorted(set(g["draft_agent"].dropna()) - {a}) for a, g in ta.groupby("agent")}
    out = pd.DataFrame({"agent": agents})
    out["fallback_rate"] = out["agent"].map(season["fallback_rate"]).fillna(0.0)
    out["draft_fallback_rate"] = out["agent"].map(draft["fallback_rate"]).fillna(0.0)
    out["flagged"] = out["fallback_rate"] > MAX_FALLBACK_RATE
    out["draft_flagged"] = out["draft_fallback_rate"] > MAX_FALLBACK_RATE
    out["ranked"] = ~(out["flagged"] | out["draft_flagged"])  # the one rule: mostly the engine's play is never ranked
    out["drafted_by"] = out["agent"].map(lambda a: ", ".join(by.get(a, [])))
    return out


# -------------------------------------------------------------------------------------------- standings
def standings(runs: Runs) -> pd.DataFrame:
    """Final record per team: W-L-T, win rate (the team's record, all its games, ties count half), points for and
    against, rank, draft slot. An agent's win rate is :func:`agent_win_rate` (games against other agents only)."""
    st = runs["standings"]
    last = st[st["week"] == st.groupby("run_id")["week"].transform("max")].copy()
    games = last["wins"] + last["losses"] + last["ties"]
    last["win_rate"] = (last["wins"] + 0.5 * last["ties"]) / games
    last = last.merge(draft_slots(runs).drop(columns="agent"), on=["run_id", "team"], how="left")
    last = last.merge(draft_agents(runs), on=["run_id", "team"], how="left")
    return last[["run_id", "seed", "team", "agent", "draft_agent", "wins", "losses", "ties", "win_rate",
                 "points_for", "points_against", "rank", "draft_slot"]].reset_index(drop=True)


#: the one agent-level win rate (:func:`agent_win_rate`), named so wherever it is shown
WIN_RATE_RULE = "win rate against other agents' teams (ties half; games between two teams of one agent left out)"
WIN_RATE_LABEL = "win rate vs other agents"


def agent_win_rate(runs: Runs) -> pd.DataFrame:
    """Per (run, agent): its teams' regular-season games against other agents' teams (``games``, ``wins``,
    ``losses``, ``ties``) and ``win_rate`` = (wins + ties / 2) / games (NaN without such games).

    The one win rate of an agent (:data:`WIN_RATE_RULE`), used by the leaderboard, the figures, the tests and the
    power table. Why not the teams' records (:func:`standings`): a game between two teams of one agent is always a
    win and a loss for it, which pulls an agent with several teams toward 0.5 (in the demo adp's 0.799 would read
    0.725). The teams' own records stay in :func:`standings`."""
    cols = ["run_id", "agent", "games", "wins", "losses", "ties", "win_rate"]
    m = runs["matchups"]
    if m.empty:
        return pd.DataFrame(columns=cols)
    opp = m[["run_id", "week", "team", "agent"]].rename(columns={"team": "opponent", "agent": "opponent_agent"})
    g = m.merge(opp, on=["run_id", "week", "opponent"], how="inner")
    g = g[g["agent"] != g["opponent_agent"]]
    g = g.assign(w=g["result"].eq("W").astype(int), l=g["result"].eq("L").astype(int),
                 t=g["result"].eq("T").astype(int))
    out = g.groupby(["run_id", "agent"], as_index=False).agg(games=("w", "size"), wins=("w", "sum"),
                                                             losses=("l", "sum"), ties=("t", "sum"))
    base = m.drop_duplicates(["run_id", "agent"])[["run_id", "agent"]]  # an agent that only met itself: NaN
    out = base.merge(out, on=["run_id", "agent"], how="left").fillna({"games": 0, "wins": 0, "losses": 0, "ties": 0})
    out = out.astype({"games": int, "wins": int, "losses": int, "ties": int})
    out["win_rate"] = (out["wins"] + 0.5 * out["ties"]) / out["games"].where(out["games"] > 0)
    return out[cols].sort_values(["run_id", "agent"], ignore_index=True)


def all_play(runs: Runs) -> pd.DataFrame:
    """All-play record (each week against every other team's score) and expected wins; ``luck`` is actual
    wins minus expected wins (the schedule's share of a record)."""
    # in (run, week) order, as the weekly rows are summed; ranks within a week count the teams scored below
    # (method="min" - 1) and the others scored the same (max - min)
    m = runs["matchups"].sort_values(["run_id", "week"], kind="stable")
    by_week = m.groupby(["run_id", "week"])["points_for"]
    low, high = by_week.rank(method="min"), by_week.rank(method="max")
    n = by_week.transform("size") - 1
    w, t = (low - 1).astype(int), (high - low).astype(int)
    rows = pd.DataFrame({"run_id": m["run_id"], "team": m["team"], "ap_wins": w, "ap_ties": t,
                         "ap_losses": n - w - t, "exp_win": (w + 0.5 * t) / n})
    ap = rows.groupby(["run_id", "team"], as_index=False).agg(
        ap_wins=("ap_wins", "sum"), ap_losses=("ap_losses", "sum"), ap_ties=("ap_ties", "sum"),
        expected_wins=("exp_win", "sum"))
    st = standings(runs)[["run_id", "team", "agent", "wins", "ties"]]
    ap = st.merge(ap, on=["run_id", "team"])
    ap["ap_win_rate"] = (ap["ap_wins"] + 0.5 * ap["ap_ties"]) / (ap["ap_wins"] + ap["ap_losses"] + ap["ap_ties"])
    ap["luck"] = ap["wins"] + 0.5 * ap["ties"] - ap["expected_wins"]
    return ap


# ------------------------------------------------------------------------------------------------ points
def points_by_slot(runs: Runs) -> pd.DataFrame:
    """Season points from each starting slot (the league's positions, FLEX, SUPERFLEX) per team, over every week
    it set a lineup (playoff weeks included). A slot its league does not have is missing (NaN), never 0, so
    pooling leagues with other rosters does not drag a slot's mean down."""
    lu = runs["lineups"]
    out = lu.groupby(["run_id", "team", "agent", "slot"], as_index=False)["points"].sum()
    out["points"] = out["points"].round(2)
    wide = out.pivot_table(index=["run_id", "team", "agent"], columns="slot", values="points").reset_index(
    ).rename_axis(columns=None)
    sports = sorted(set(runs["meta"]["sport"])) if "sport" in runs["meta"] else [DEFAULT_SPORT]
    positions = dict.fromkeys(p for name in sports for p in sport(name).positions)
    order = [s for s in (*positions, *FLEX_SLOTS) if s in wide]  # display order, as the figure stacks them
    return wide[["run_id", "team", "agent", *order, *(c for c in wide.columns[3:] if c not in order)]]


def player_week_points(runs: Runs) -> pd.DataFrame:
    """Actual points of every rostered player-week (starters, bench and injured reserve of every team)."""
    cols = ["run_id", "week", "team", "player_id", "points"]
    ir = runs.get("ir_players")
    parts = [runs["lineups"].dropna(subset=["player_id"])[cols], runs["bench"][cols]]
    if ir is not None and not ir.empty:  # runs before IR slots existed have no such table
        parts.append(ir[cols])
    return pd.concat(parts, ignore_index=True)


def season_points(runs: Runs) -> pd.DataFrame:
    """Actual points of every player-week of each run's once-rostered players, wherever the player was: on a
    roster (lineups, bench) or dropped (``dropped_points``; runs recorded before it, and imported runs, have
    the rostered weeks only, which before waivers were all of them)."""
    cols = ["run_id", "week", "player_id", "points"]
    rostered = player_week_points(runs)[cols].drop_duplicates(["run_id", "week", "player_id"])
    dropped = runs.get("dropped_points")
    if dropped is None or dropped.empty:
        return rostered
    return pd.concat([rostered, dropped[cols]], ignore_index=True).drop_duplicates(["run_id", "week", "player_id"])


def draft_quality(runs: Runs) -> pd.DataFrame:
    """Per drafted player (draft-time rosters, before any trade): previous-season points, preseason projection
    and actual points over the run's weeks, wherever he played them."""
    dp = runs["draft_picks"]
    pts = season_points(runs).groupby(["run_id", "player_id"])["points"].sum()
    out = dp[["run_id", "seed", "pick", "round", "team", "agent", "player_id", "player_name", "position",
              "prev_points", "proj_points", "adp", "decided_by"]].copy()
    season = team_agents(runs).set_index(["run_id", "team"])["agent"]
    out.insert(6, "season_agent", [season.get((r, t)) for r, t in zip(out["run_id"], out["team"])])
    out["actual_points"] = [float(pts.get((r, p), 0.0)) for r, p in zip(out["run_id"], out["player_id"])]
    return out


def draft_summary(runs: Runs) -> pd.DataFrame:
    """Per team-draft (``agent`` = the drafting agent): sums over the drafted players. ``proj_points`` sums the
    projected players only and ``unprojected`` counts the others (a missing projection is not 0)."""
    dq = draft_quality(runs)
    g = dq.groupby(["run_id", "team", "agent", "season_agent"], as_index=False)
    out = g[["prev_points", "actual_points"]].sum()
    proj = g["proj_points"].sum(min_count=1)["proj_points"]
    out.insert(5, "proj_points", proj.to_numpy())
    out["unprojected"] = g["proj_points"].agg(lambda x: int(x.isna().sum()))["proj_points"].to_numpy()
    return out


def unprojected_picks(runs: Runs) -> pd.DataFrame:
    """Every drafted player without a preseason projection (shown, never counted as 0)."""
    dq = draft_quality(runs)
    return dq[dq["proj_points"].isna()][["run_id", "pick", "team", "agent", "player_id", "player_name", "position"]]


# ------------------------------------------------------------------------------------------------ start/sit
def start_sit(runs: Runs) -> pd.DataFrame:
    """Per team-week: the hindsight-optimal legal lineup's points (:func:`~ffbench_lib.sport.lineup.hindsight_points`
    under the run's roster, flex slots included) minus the points actually started. This is the oracle: it needs actual points, so it
    exists here and never as an agent."""
    pw = player_week_points(runs).drop_duplicates(["run_id", "week", "team", "player_id"])
    # plain dicts: a MultiIndex lookup per player-week and a roster parse per team-week were most of the time
    pts = dict(zip(zip(pw["run_id"], pw["week"], pw["team"], pw["player_id"]), pw["points"].tolist()))
    started = runs["lineups"].groupby(["run_id", "week", "team"])["points"].sum()
    started = dict(zip(started.index, started.tolist()))
    rosters: dict[str, Roster] = {}
    # each team-week's players in one pass over the rows (a groupby's frame per team-week was most of the rest),
    # then in the groupby's order: sorted by run, week, team, and the rows of each in table order
    team_weeks: dict[tuple, list] = {}
    for run_id, week, team, pid, pos, agent in runs["rosters"][
            ["run_id", "week", "team", "player_id", "position", "agent"]].itertuples(index=False, name=None):
        team_weeks.setdefault((run_id, week, team), []).append((pid, pos, agent))
    rows = []
    for (run_id, week, team) in sorted(team_weeks):
        players = team_weeks[run_id, week, team]
        if run_id not in rosters:
            rosters[run_id] = _roster(runs, run_id)
        roster = rosters[run_id]
        positions = {pid: pos for pid, pos, _ in players}
        values = {p: float(pts.get((run_id, week, team, p), 0.0)) for p in positions}
        best = hindsight_points(positions, values, roster.slot_counts(), roster.slot_positions(), roster.most)
        actual = float(started.get((run_id, week, team), 0.0))
        rows.append({"run_id": run_id, "week": week, "team": team, "agent": players[0][2],
                     "optimal_points": round(best, 2), "started_points": round(actual, 2),
                     "left_on_table": round(best - actual, 2)})
    out = pd.DataFrame(rows)
    out["pct_of_optimal"] = np.where(out["optimal_points"] > 0, out["started_points"] / out["optimal_points"], 1.0)
    return out


def start_sit_season(runs: Runs) -> pd.DataFrame:
    ss = start_sit(runs)
    g = ss.groupby(["run_id", "team", "agent"], as_index=False)[["optimal_points", "started_points",
                                                                 "left_on_table"]].sum()
    g["pct_of_optimal"] = g["started_points"] / g["optimal_points"]
    return g


# --------------------------------------------------------------------------------------------------- trades
def trade_value(runs: Runs) -> pd.DataFrame:
    """One row per side of every accepted trade: incoming minus outgoing players' points over the remaining
    weeks (from the trade week, since trades happen before that week's lineups). ``value_all_weeks`` counts
    every point those players scored; ``value_started`` counts the incoming players' points in weeks this team
    started them minus the outgoing players' points in weeks their new team started them. ``made_by`` is per
    side: ``agent`` only if every step that side took in the negotiation up to the acceptance was its own
    (``trade_steps.decided_by``); a trade the engine proposed is not the proposer's."""
    tr = runs["trades"]
    if tr.empty:
        return pd.DataFrame(columns=["run_id", "week", "negotiation", "team", "agent", "counterparty",
                                     "counterparty_agent", "made_by", "n_players", "value_all_weeks", "value_started"])
    pw = season_points(runs)
    started = runs["lineups"].dropna(subset=["player_id"])
    steps = runs.get("trade_steps", pd.DataFrame())
    side_by: dict[tuple, str] = {}
    if not steps.empty:  # in row order (as a groupby keeps it): one pass, not one frame per negotiation side
        for run_id, neg, actor, step, by in steps[["run_id", "negotiation", "actor", "step", "decided_by"]].itertuples(
                index=False, name=None):
            side_by.setdefault((run_id, neg, actor), []).append((step, by))
    # each run's rows apart, and each (run, week)'s remaining points once: filtering all runs per trade was the cost
    pw_of = dict(tuple(pw.groupby("run_id", sort=False)))
    started_of = dict(tuple(started.groupby("run_id", sort=False)))
    empty_pw, empty_st = pw.iloc[:0], started.iloc[:0]
    remaining: dict[tuple, tuple] = {}
    rows = []
    for t in tr.itertuples(index=False):
        if (t.run_id, t.week) not in remaining:
            run_pw, run_st = pw_of.get(t.run_id, empty_pw), started_of.get(t.run_id, empty_st)
            later = run_pw[run_pw["week"] >= t.week]
            remaining[(t.run_id, t.week)] = (
                later.drop_duplicates(["week", "player_id"]).groupby("player_id")["points"].sum(),
                dict(tuple(run_st[run_st["week"] >= t.week].groupby("team", sort=False))))
        total, st_of = remaining[(t.run_id, t.week)]
        for team, agent, other, other_agent, gets, gives in (
                (t.proposer, t.proposer_agent, t.receiver, t.receiver_agent, list(t.receiver_gives),
                 list(t.proposer_gives)),
                (t.receiver, t.receiver_agent, t.proposer, t.proposer_agent, list(t.proposer_gives),
                 list(t.receiver_gives))):
            own = side_by.get((t.run_id, t.negotiation, team))
            made_by = t.made_by if own is None else (
                "agent" if all(by == "agent" for step, by in own if step <= t.accepted_step) else "fallback")
            incoming_all = float(total.reindex(gets).fillna(0).sum())
            outgoing_all = float(total.reindex(gives).fillna(0).sum())
            mine, theirs = st_of.get(team, empty_st), st_of.get(other, empty_st)
            incoming_started = float(mine.loc[mine["player_id"].isin(gets), "points"].sum())
            outgoing_started = float(theirs.loc[theirs["player_id"].isin(gives), "points"].sum())
            rows.append({"run_id": t.run_id, "week": t.week, "negotiation": t.negotiation, "team": team,
                         "agent": agent, "counterparty": other, "counterparty_agent": other_agent,
                         "made_by": made_by, "n_players": len(gets),
                         "value_all_weeks": round(incoming_all - outgoing_all, 2),
                         "value_started": round(incoming_started - outgoing_started, 2)})
    return pd.DataFrame(rows)


def trade_summary(runs: Runs) -> pd.DataFrame:
    """Per agent, over all runs: trades, agent-made vs fallback-made, and value totals (agent-made sides only).
    A trade between two teams of one agent counts once (its value is the sum of both sides)."""
    tv = trade_value(runs)
    agents = sorted(set(runs["standings"]["agent"]))
    if tv.empty:
        return pd.DataFrame({"agent": agents, "trades": 0, "fallback_trades": 0, "value_all_weeks": 0.0,
                             "value_started": 0.0, "value_per_trade": 0.0})
    own = tv[tv["made_by"] == "agent"]
    g = own.groupby("agent").agg(value_all_weeks=("value_all_weeks", "sum"),
                                 value_started=("value_started", "sum")).round(2)
    g["trades"] = own.drop_duplicates(["agent", "run_id", "negotiation"]).groupby("agent").size()
    fb = tv[tv["made_by"] != "agent"].drop_duplicates(["agent", "run_id", "negotiation"])
    g["fallback_trades"] = fb.groupby("agent").size()
    g = g.reindex(agents).fillna(0)
    g["value_per_trade"] = np.where(g["trades"] > 0, g["value_all_weeks"] / g["trades"].clip(lower=1), 0.0)
    return g.reset_index()[["agent", "trades", "fallback_trades", "value_all_weeks", "value_started",
                            "value_per_trade"]].astype({"trades": int, "fallback_trades": int})


def trade_value_per_run(runs: Runs) -> pd.DataFrame:
    """Per (run, agent): the summed value of its agent-made trade sides in that run (0 for a run without any), for
    means and intervals over runs; ``trades`` counts distinct trades, ``own_team_trades`` those between two teams
    of the agent (they net to 0 for it)."""
    tv = trade_value(runs)
    own = tv[tv["made_by"] == "agent"] if not tv.empty else tv
    base = runs["standings"].drop_duplicates(["run_id", "agent"])[["run_id", "agent"]]
    if own.empty:
        return base.assign(value_all_weeks=0.0, value_started=0.0, trades=0, own_team_trades=0).reset_index(drop=True)
    own = own.assign(internal=own["negotiation"].where(own["agent"] == own["counterparty_agent"]))
    g = own.groupby(["run_id", "agent"]).agg(value_all_weeks=("value_all_weeks", "sum"),
                                             value_started=("value_started", "sum"),
                                             trades=("negotiation", "nunique"),
                                             own_team_trades=("internal", "nunique")).reset_index()
    out = base.merge(g, on=["run_id", "agent"], how="left").round({"value_all_weeks": 2, "value_started": 2})
    return out.fillna({"value_all_weeks": 0.0, "value_started": 0.0, "trades": 0, "own_team_trades": 0}).astype(
        {"trades": int, "own_team_trades": int})


# ------------------------------------------------------------------------------------------------ reliability
def reliability(runs: Runs) -> pd.DataFrame:
    """Per agent and decision type: decisions and the share the engine had to repair."""
    d = runs["decisions"]
    if d.empty:
        return pd.DataFrame(columns=["agent", "decision", "decisions", "fallbacks", "fallback_rate"])
    d = d[d["applied"].astype(str) != "superseded"]
    g = d.groupby(["agent", "decision"]).agg(decisions=("decided_by", "size"),
                                             fallbacks=("decided_by", lambda s: int((s == "fallback").sum())))
    g["fallback_rate"] = g["fallbacks"] / g["decisions"]
    return g.reset_index()


def llm_usage(runs: Runs) -> pd.DataFrame:
    s = runs.get("llm_summary", pd.DataFrame())
    if s.empty:
        return pd.DataFrame(columns=["agent", "calls", "invalid_rate", "fallback_rate", "prompt_tokens",
                                     "completion_tokens", "cost_usd"])
    g = s.groupby("agent").agg(calls=("calls", "sum"), invalid=("invalid_answers", "sum"),
                               decisions=("decisions", "sum"), fallbacks=("fallbacks", "sum"),
                               prompt_tokens=("prompt_tokens", "sum"), completion_tokens=("completion_tokens", "sum"),
                               reasoning_tokens=("reasoning_tokens", "sum"), cost_usd=("cost_usd", "sum"))
    g["invalid_rate"] = g["invalid"] / g["calls"]
    g["fallback_rate"] = g["fallbacks"] / g["decisions"]
    return g.reset_index()


# --------------------------------------------------------------------------------------------------- waivers
WAIVER_COLUMNS = ["run_id", "team", "agent", "claims", "claims_won", "free_agent_adds", "faab_spent",
                  "pickup_started_points", "waiver_started_points", "faab_per_point"]


def waiver_summary(runs: Runs) -> pd.DataFrame:
    """Per team of runs with waivers: claims made and won, free-agent adds, FAAB spent, the points its
    pickups (waiver claims and free-agent adds) scored in its starting lineups from the week it got them, the
    same for won waiver claims alone, and FAAB dollars spent per point of those (free-agent adds cost nothing;
    NaN when the claims scored nothing). Empty when no run used waivers."""
    with_waivers = _with_waivers(runs)
    if not with_waivers:
        return pd.DataFrame(columns=WAIVER_COLUMNS)
    tx, claims = runs["transactions"], runs["waiver_claims"]
    tx = tx.assign(bid=pd.to_numeric(tx["bid"]))
    keys = ["run_id", "team", "agent"]
    teams = team_agents(runs)
    teams = teams[teams["run_id"].isin(with_waivers)][keys]
    waiver = claims[claims["phase"] == "waivers"]
    out = teams.merge(waiver.groupby(keys).size().rename("claims").reset_index(), on=keys, how="left")
    won = tx[tx["kind"] == "waiver"].groupby(keys).size().rename("claims_won").reset_index()
    fa = tx[tx["kind"] == "free_agent"].groupby(keys).size().rename("free_agent_adds").reset_index()
    spent = tx.groupby(keys)["bid"].sum(min_count=1).rename("faab_spent").reset_index()
    for part in (won, fa, spent):
        out = out.merge(part, on=keys, how="left")
    pk = waiver_pickups(runs)  # one rule for a pickup's points: its window in the team's starting lineups
    for part in (pk.groupby(["run_id", "team"])["points_started"].sum().rename("pickup_started_points"),
                 pk[pk["kind"] == "waiver"].groupby(["run_id", "team"])["points_started"].sum().rename(
                     "waiver_started_points")):
        out = out.merge(part.reset_index(), on=["run_id", "team"], how="left")
    out[["claims", "claims_won", "free_agent_adds"]] = out[["claims", "claims_won", "free_agent_adds"]].fillna(0).astype(int)
    for col in ("pickup_started_points", "waiver_started_points"):
        out[col] = out[col].fillna(0.0).round(2)
    out["faab_per_point"] = out["faab_spent"] / out["waiver_started_points"].where(out["waiver_started_points"] > 0)
    return out[WAIVER_COLUMNS].sort_values(keys, ignore_index=True)


def _with_waivers(runs: Runs) -> set[str]:
    meta = runs["meta"]
    return set(meta.loc[meta["waivers"].notna(), "run_id"]) if "waivers" in meta else set()


def waiver_summary_by_agent(runs: Runs) -> pd.DataFrame:
    """:func:`waiver_summary` summed over each agent's teams and runs; ``faab_per_point`` from those sums."""
    ws = waiver_summary(runs)
    cols = ["agent", "teams", "claims", "claims_won", "free_agent_adds", "faab_spent", "pickup_started_points",
            "waiver_started_points", "faab_per_point"]
    if ws.empty:
        return pd.DataFrame(columns=cols)
    # FAAB per point over FAAB teams only (rolling runs spend nothing: their points would dilute it)
    ws = ws.assign(faab_points=ws["waiver_started_points"].where(ws["faab_spent"].notna(), 0.0))
    g = ws.groupby("agent").agg(teams=("team", "size"), claims=("claims", "sum"), claims_won=("claims_won", "sum"),
                                free_agent_adds=("free_agent_adds", "sum"),
                                faab_spent=("faab_spent", lambda x: x.sum(min_count=1)),
                                pickup_started_points=("pickup_started_points", "sum"),
                                waiver_started_points=("waiver_started_points", "sum"),
                                faab_points=("faab_points", "sum"))
    g = g.round({"pickup_started_points": 2, "waiver_started_points": 2})
    g["faab_per_point"] = g["faab_spent"] / g["faab_points"].where(g["faab_points"] > 0)
    return g.reset_index()[cols]


def waiver_pickups(runs: Runs) -> pd.DataFrame:
    """One row per pickup (waiver or free-agent add) with the players' names and ``points_started``: what the
    added player scored in this team's starting lineups from the pickup week until the team picked him up again
    (so the rows of a team add up to its ``waiver_summary`` pickup points)."""
    cols = ["run_id", "week", "team", "agent", "kind", "add", "add_name", "add_position", "drop", "drop_name",
            "bid", "points_started"]
    tx = runs.get("transactions", pd.DataFrame())
    if tx is not None and not tx.empty:  # a drop to bring a player back from IR adds nobody: not a pickup
        tx = tx[tx["kind"].isin(["waiver", "free_agent"])]
    if tx is None or tx.empty:
        return pd.DataFrame(columns=cols)
    names = player_names(runs)
    tx = tx.assign(add_name=tx["add"].map(names), drop_name=tx["drop"].map(names), bid=pd.to_numeric(tx["bid"]))
    tx = tx.sort_values(["run_id", "team", "add", "week"], kind="stable", ignore_index=True)
    until = tx.groupby(["run_id", "team", "add"])["week"].shift(-1)
    lu = runs["lineups"].dropna(subset=["player_id"])
    pts = []
    for t, end in zip(tx.itertuples(index=False), until):
        mine = lu[(lu["run_id"] == t.run_id) & (lu["team"] == t.team) & (lu["player_id"] == t.add)
                  & (lu["week"] >= t.week)]
        pts.append(float(mine[mine["week"] < end]["points"].sum() if pd.notna(end) else mine["points"].sum()))
    out = tx.assign(points_started=np.round(pts, 2))
    return out[cols].sort_values(["run_id", "week", "team"], kind="stable", ignore_index=True)


def waiver_value_per_run(runs: Runs) -> pd.DataFrame:
    """Per (run with waivers, agent): ``pickup_started_points`` per team (the mean over the agent's teams in
    that run, so an agent with three teams is not three times as good), its ``pickups`` (claims won plus
    free-agent adds, all teams) and ``faab_spent``; for means and intervals over runs."""
    ws = waiver_summary(runs)
    cols = ["run_id", "agent", "teams", "pickups", "faab_spent", "pickup_started_points"]
    if ws.empty:
        return pd.DataFrame(columns=cols)
    ws = ws.assign(pickups=ws["claims_won"] + ws["free_agent_adds"])
    g = ws.groupby(["run_id", "agent"], as_index=False).agg(
        teams=("team", "size"), pickups=("pickups", "sum"), faab_spent=("faab_spent", lambda s: s.sum(min_count=1)),
        pickup_started_points=("pickup_started_points", "mean"))
    return g.round({"pickup_started_points": 2})[cols]


def waiver_claim_results(runs: Runs) -> pd.DataFrame:
    """Per agent and phase (waivers / free_agents): claims won, lost (another team got the player) and skipped
    (illegal or no longer possible; why is in ``waiver_claims.reason``)."""
    c = runs.get("waiver_claims", pd.DataFrame())
    cols = ["agent", "phase", "won", "lost", "skipped", "claims"]
    if c is None or c.empty:
        return pd.DataFrame(columns=cols)
    g = c.groupby(["agent", "phase", "result"]).size().unstack("result", fill_value=0)
    g = g.reindex(columns=["won", "lost", "skipped"], fill_value=0)
    g["claims"] = g.sum(axis=1)
    return g.reset_index()[cols]


def player_names(runs: Runs) -> dict[str, str]:
    """player_id -> name from the draft picks and the waiver transactions: with waivers a rostered or traded
    player may never have been drafted. Runs recorded before transactions carried names give drafted names only."""
    pairs = [runs["draft_picks"][["player_id", "player_name"]].to_numpy().tolist()]
    tx = runs.get("transactions", pd.DataFrame())
    for pid, name in (("add", "add_name"), ("drop", "drop_name")):
        if tx is not None and name in tx:
            pairs.append(tx[[pid, name]].to_numpy().tolist())
    return {p: n for part in pairs for p, n in part if isinstance(p, str) and isinstance(n, str) and n}


# ------------------------------------------------------------------------------------------------ playoffs
FINAL_COLUMNS = ["run_id", "seed", "team", "agent", "regular_rank", "wins", "losses", "ties", "points_for",
                 "playoff_seed", "playoff_result", "eliminated_round", "champion", "final_place"]


def _round_name(rnd: int, rounds: int) -> str:
    return {0: "final", 1: "semifinal", 2: "quarterfinal"}.get(rounds - rnd, f"round {rnd}")


def final_standings(runs: Runs) -> pd.DataFrame:
    """Per team of runs with playoffs: regular-season rank and record (:func:`standings`), ``playoff_seed`` (NaN:
    missed the playoffs), ``playoff_result`` (champion, runner-up, lost semifinal / quarterfinal / round k,
    missed playoffs), ``eliminated_round``, ``champion`` and ``final_place``: the champion, the runner-up, then
    the other playoff teams by the round they reached (later first; one round's losers by seed), then the rest
    by regular-season rank. Empty when no run had playoffs; a run whose bracket is not finished (stopped early,
    loaded with ``complete_only=False``) is left out: it has no champion yet."""
    po = runs.get("playoffs")
    if po is None or po.empty:
        return pd.DataFrame(columns=FINAL_COLUMNS)
    st = standings(runs)
    st = st[st["run_id"].isin(set(po["run_id"]))].rename(columns={"rank": "regular_rank"})
    parts = []
    meta = runs["meta"].set_index("run_id")
    for run_id, g in po.groupby("run_id", sort=True):
        rounds = meta.loc[run_id, "playoff_rounds"] if "playoff_rounds" in meta else None
        rounds = int(rounds) if pd.notna(rounds) else int(g["round"].max())
        last = g[g["week"] == g.groupby("round")["week"].transform("max")]  # each round's deciding week
        if not (last["round"].eq(rounds) & last["result"].isin(["W", "L"])).any():
            continue  # the final has not been decided
        seeds = g.drop_duplicates("team").set_index("team")["playoff_seed"].astype(int)
        reached = g.groupby("team")["round"].max()
        decided = last.set_index(["team", "round"])["result"]
        teams = st[st["run_id"] == run_id].copy()
        teams["playoff_seed"] = teams["team"].map(seeds)
        teams["champion"] = [decided.get((t, rounds)) == "W" for t in teams["team"]]
        teams["eliminated_round"] = [reached[t] if t in reached and not c else np.nan
                                     for t, c in zip(teams["team"], teams["champion"])]
        teams["playoff_result"] = [
            "champion" if c else "missed playoffs" if pd.isna(e) else "runner-up" if e == rounds
            else f"lost {_round_name(int(e), rounds)}" for c, e in zip(teams["champion"], teams["eliminated_round"])]
        key = [(0, -rounds - 1, s) if c else (0, -e, s) if pd.notna(s) else (1, 0, r)
               for c, e, s, r in zip(teams["champion"], teams["eliminated_round"], teams["playoff_seed"],
                                     teams["regular_rank"])]
        order = sorted(range(len(teams)), key=lambda i: key[i])
        teams["final_place"] = 0
        teams.iloc[order, teams.columns.get_loc("final_place")] = range(1, len(teams) + 1)
        parts.append(teams)
    if not parts:
        return pd.DataFrame(columns=FINAL_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    return out[FINAL_COLUMNS].sort_values(["run_id", "final_place"], ignore_index=True)


def champions(runs: Runs) -> pd.DataFrame:
    """One row per run with playoffs: the champion and the runner-up (team, agent, seed) and their points over
    the final round."""
    fs = final_standings(runs)
    cols = ["run_id", "champion", "champion_agent", "champion_seed", "runner_up", "runner_up_agent",
            "runner_up_seed", "final_points", "runner_up_final_points"]
    if fs.empty:
        return pd.DataFrame(columns=cols)
    po = runs["playoffs"]
    final = po[po["week"] == po.groupby("run_id")["week"].transform("max")].set_index(["run_id", "team"])
    rows = []
    for run_id, g in fs.groupby("run_id", sort=True):
        ch, ru = g[g["final_place"] == 1].iloc[0], g[g["final_place"] == 2].iloc[0]
        rows.append({"run_id": run_id, "champion": ch["team"], "champion_agent": ch["agent"],
                     "champion_seed": int(ch["playoff_seed"]), "runner_up": ru["team"], "runner_up_agent": ru["agent"],
                     "runner_up_seed": int(ru["playoff_seed"]),
                     "final_points": final.loc[(run_id, ch["team"]), "round_points_for"],
                     "runner_up_final_points": final.loc[(run_id, ru["team"]), "round_points_for"]})
    return pd.DataFrame(rows, columns=cols)


def playoff_summary(runs: Runs) -> pd.DataFrame:
    """Per agent over the runs with playoffs (an agent's teams each count): team-seasons, playoff appearances,
    championships, runner-up finishes, their rates per team-season, and the mean final place and regular-season
    rank. Separate from the regular season on purpose: a title is a few weeks' points."""
    fs = final_standings(runs)
    cols = ["agent", "team_seasons", "playoff_appearances", "appearance_rate", "championships",
            "championship_rate", "runner_ups", "mean_final_place", "mean_regular_rank"]
    if fs.empty:
        return pd.DataFrame(columns=cols)
    g = fs.assign(made=fs["playoff_seed"].notna(), ru=fs["playoff_result"] == "runner-up").groupby("agent").agg(
        team_seasons=("team", "size"), playoff_appearances=("made", "sum"), championships=("champion", "sum"),
        runner_ups=("ru", "sum"), mean_final_place=("final_place", "mean"),
        mean_regular_rank=("regular_rank", "mean"))
    g["appearance_rate"] = g["playoff_appearances"] / g["team_seasons"]
    g["championship_rate"] = g["championships"] / g["team_seasons"]
    g = g.astype({"playoff_appearances": int, "championships": int, "runner_ups": int})
    return g.reset_index()[cols].sort_values(["championships", "mean_final_place"], ascending=[False, True],
                                             ignore_index=True)


# ------------------------------------------------------------------------------------------------ per agent
def per_agent(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """Average a team-level metric over the teams of each agent within a run: one value per (run, agent)."""
    return df.groupby(["run_id", "agent"], as_index=False)[value].mean()


def headline(runs: Runs) -> pd.DataFrame:
    """Per agent, averaged over runs: wins, win rate (:func:`agent_win_rate`), points for, expected wins,
    start/sit regret per season, draft actual points, trade value (agent-made, all weeks) and trade count."""
    st = standings(runs)
    ap = all_play(runs)
    ss = start_sit_season(runs)
    ds = draft_summary(runs)
    parts = [per_agent(st, v) for v in ("wins", "points_for")]
    parts.insert(1, agent_win_rate(runs)[["run_id", "agent", "win_rate"]])  # the one agent-level win rate
    parts += [per_agent(ap, "expected_wins"), per_agent(ss, "left_on_table"), per_agent(ss, "pct_of_optimal"),
              per_agent(ds, "actual_points").rename(columns={"actual_points": "drafted_actual_points"})]
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p, on=["run_id", "agent"])
    table = out.groupby("agent").mean(numeric_only=True)
    table["runs"] = out.groupby("agent")["run_id"].nunique()
    ts = trade_summary(runs).set_index("agent")
    played = runs["standings"].drop_duplicates(["run_id", "agent"]).groupby("agent")["run_id"].size()
    n_runs = played.reindex(table.index).clip(lower=1)  # the runs this agent had a team in, not all runs
    table["trades_per_run"] = ts["trades"].reindex(table.index).fillna(0) / n_runs
    table["trade_value_per_run"] = ts["value_all_weeks"].reindex(table.index).fillna(0) / n_runs
    info = agent_info(runs).set_index("agent")
    for c in ("fallback_rate", "draft_fallback_rate", "flagged", "drafted_by"):
        table[c] = info[c].reindex(table.index)
    return table.sort_values("win_rate", ascending=False).reset_index()


def weekly_standings(runs: Runs, run_id: str | None = None) -> pd.DataFrame:
    """The standings after every week of one run (default: the first), with ``draft_agent``."""
    st = runs["standings"]
    one = st[st["run_id"] == (run_id or st["run_id"].iloc[0])]
    return one.merge(draft_agents(runs), on=["run_id", "team"], how="left")


__all__ = ["load_runs", "expand_paths", "resolve_runs", "run_labels", "describe_runs", "describe_sample",
           "standings", "agent_win_rate", "WIN_RATE_RULE", "WIN_RATE_LABEL", "all_play", "points_by_slot",
           "draft_quality", "draft_summary",
           "start_sit", "start_sit_season", "trade_value", "trade_summary", "reliability", "llm_usage", "per_agent",
           "headline", "draft_slots", "player_week_points", "season_points", "weekly_standings", "team_agents", "draft_agents",
           "fallback_rates", "agent_info", "unprojected_picks", "trade_value_per_run", "waiver_summary",
           "waiver_summary_by_agent", "waiver_pickups", "waiver_value_per_run", "waiver_claim_results", "player_names",
           "final_standings", "champions", "playoff_summary", "FINAL_COLUMNS",
           "MAX_FALLBACK_RATE"]
