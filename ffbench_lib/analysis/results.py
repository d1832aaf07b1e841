"""Building ``results.json`` (:mod:`ffbench_lib.records.results`, the schema) from runs or an exam's results."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from ffbench_lib.records.results import FORMAT, VERSION, AgentEntry, Fingerprints, Metric, Results, Test


def _num(x: Any) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)) or pd.isna(x):
        return None
    return round(float(x), 6)


def _kind(agent_id: str) -> str:
    head = str(agent_id).split(":", 1)[0]
    return head if head in ("bot", "llm", "python", "human") else "other"


def from_runs(runs, name: str, source: Literal["batch", "report"], n_resamples: int = 2000) -> Results:
    """The record of a set of runs (:func:`ffbench_lib.analysis.metrics.load_runs`): each agent's Bradley-Terry
    rating with its interval over runs, win rate, points per team-season and fallback share, and every pair's test
    of points for (paired by run, blocked by season: :func:`ffbench_lib.analysis.seasons.pairs`)."""
    from ffbench_lib.analysis import ratings, seasons
    from ffbench_lib.records.run import RunMeta

    board = ratings.leaderboard(runs, n_resamples=n_resamples)
    agents = [AgentEntry(agent_id=r.agent, kind=_kind(r.agent), n=int(r.team_seasons) if not pd.isna(
        r.team_seasons) else 0, cost_usd=_num(r.cost_usd) if bool(r.cost_known) else None)
        for r in board.itertuples(index=False)]
    metrics = []
    for r in board.itertuples(index=False):
        n = int(r.n_runs) if not pd.isna(r.n_runs) else 0
        note = r.note or None
        metrics.append(Metric(name="rating", agent=r.agent, value=_num(r.rating), low=_num(r.ci_low),
                              high=_num(r.ci_high), interval=r.ci_method if _num(r.ci_low) is not None else None,
                              n=n, note=note))
        for col in ("win_rate", "points_per_team_season", "fallback_rate"):
            metrics.append(Metric(name=col, agent=r.agent, value=_num(getattr(r, col)), n=n))
    tests = []
    for r in seasons.pairs(runs).itertuples(index=False):
        tests.append(Test(name="points_for", a=r.agent_a, b=r.agent_b, estimate=_num(r.mean_diff), p=_num(r.p_value),
                          p_adjusted=_num(r.p_holm), significant=bool(r.significant), n=int(r.n_runs),
                          method=str(r.method)))
    meta = runs["meta"]
    data, code = set(), set()
    for path in meta["path"]:
        f = Path(path) / "run.json"
        if f.is_file():
            m = RunMeta.model_validate_json(f.read_text(encoding="utf-8"))
            data |= {m.data_fingerprint} if m.data_fingerprint else set()
            code |= {m.code_fingerprint} if m.code_fingerprint else set()
    sample = {"runs": int(meta["run_id"].nunique()), "seeds": sorted({int(s) for s in meta["seed"].dropna()}),
              "seasons": sorted({f"{sp}-{se}" for sp, se in zip(meta["sport"], meta["season"])})}
    notes = [n for n in (board.attrs.get("note") or "").split("\n") if n]
    return Results(format=FORMAT, version=VERSION, source=source, name=name, sample=sample, agents=agents,
                   metrics=metrics, tests=tests,
                   fingerprints=Fingerprints(data=sorted(data), code=sorted(code)), notes=notes)


def from_exam(df: pd.DataFrame, suite: dict[str, Any], costs: dict[str, float] | None = None,
              code: str | None = None) -> Results:
    """The record of an exam's results (:data:`ffbench_lib.runs.exam.COLUMNS`) and its suite's ``suite.json``: each
    candidate's mean regret per skill and sport with its two-way clustered interval, every pair's test on the same
    states (Holm within a skill and sport), each named by the candidate's name (two candidates may share an agent
    id); ``costs``: agent id -> what its calls cost (the ledger's), ``code``: the
    code fingerprint that scored it."""
    from ffbench_lib.analysis import exams

    table = exams.skill_table(df)
    pairs = exams.pair_tests(df)
    ids = dict(zip(df["agent"], df["agent_id"]))
    costs = costs or {}
    agents = [AgentEntry(agent_id=ids[a], name=a, kind=_kind(ids[a]), n=int((df["agent"] == a).sum()),
                         cost_usd=0.0 if _kind(ids[a]) == "bot" else _num(costs.get(ids[a])))
              for a in sorted(df["agent"].unique())]
    metrics = [Metric(name="mean_regret", agent=r.agent, value=_num(r.regret), low=_num(r.low), high=_num(r.high),
                      interval="95% t, clustered by team-season and real week (or season)" if _num(r.low) is not None
                      else None, n=int(r.states), skill=r.skill, sport=r.sport,
                      note=r.note if isinstance(r.note, str) else None) for r in table.itertuples(index=False)]
    tests = [Test(name="regret", a=r.a, b=r.b, estimate=_num(r.diff), low=_num(r.low), high=_num(r.high),
                  p=_num(r.p), p_adjusted=_num(r.p_holm), significant=bool(r.significant), n=int(r.states),
                  method="paired on the same states, two-way clustered t", skill=r.skill, sport=r.sport)
             for r in pairs.itertuples(index=False)]
    sources = suite.get("sources", {}).values()
    notes = [exams.SKILL_RULES[s] for s in sorted(df["skill"].unique()) if s in exams.SKILL_RULES]
    if "view" in df and (df["view"] == "protected").any():
        notes.append(f"protected numbers: {', '.join(sorted(df.loc[df['view'] == 'protected', 'agent'].unique()))} "
                     "answered cut boards and waiver lists, judged against the best of what they were shown; the "
                     "tests compare only states both answered as the same view")
    return Results(format=FORMAT, version=VERSION, source="exam", name=str(suite.get("name", df["suite"].iloc[0])),
                   sample={"states": int(df["state_id"].nunique()), "team_seasons": int(df["team_season"].nunique()),
                           "suite_sha256": suite.get("states_sha256")},
                   agents=agents, metrics=metrics, tests=tests,
                   fingerprints=Fingerprints(data=sorted({s["data_fingerprint"] for s in sources
                                                          if s.get("data_fingerprint")}),
                                             code=[code] if code else []),
                   notes=notes)


def write_for_runs(paths, out: str | Path, name: str, source: Literal["batch", "report"],
                   left_out: list[str] | None = None) -> Path:
    """``results.json`` of the complete runs under ``paths`` (run folders or a batch folder), to ``out``;
    ``left_out``: the batch's runs that failed (said in ``notes`` and ``sample``), with the runs the loader left
    out."""
    from ffbench_lib.analysis import metrics
    from ffbench_lib.records.results import write

    runs = metrics.load_runs(paths)
    rec = from_runs(runs, name, source)
    excluded = runs.get("excluded")
    dropped = list(left_out or []) + ([f"{r.path} ({r.reason})" for r in excluded.itertuples()]
                                      if excluded is not None and len(excluded) else [])
    if dropped:
        rec = rec.model_copy(update={"sample": {**rec.sample, "left_out": len(dropped)}, "notes": [
            *rec.notes, f"{len(dropped)} run(s) not complete, left out: {', '.join(dropped)}"]})
    return write(out, rec)


def write_for_exam(results_dir: str | Path) -> Path:
    """``results.json`` beside an exam's ``exam_results.parquet``: its suite (``exam.json``'s ``suite_dir``), the
    candidates' costs from the ledger (``llm_calls.jsonl``: live calls and replays alike carry the live cost)."""
    import json

    from ffbench_lib.analysis import exams
    from ffbench_lib.records.results import write

    folder = Path(results_dir)
    df = exams.load_results(folder)
    meta = json.loads((folder / exams.META).read_text(encoding="utf-8"))
    suite_f = Path(meta.get("suite_dir", "")) / "suite.json"
    suite = json.loads(suite_f.read_text(encoding="utf-8")) if suite_f.is_file() else {"name": meta.get("suite")}
    costs: dict[str, float | None] = {}
    seen: set[tuple] = set()
    ledger = folder / "llm_calls.jsonl"
    if ledger.is_file():  # each answer once (an attempt stopped at the budget is replayed by the next: one cost)
        for line in ledger.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or not rec.get("agent") or rec.get("error"):
                continue
            key = (rec["agent"], rec.get("state_id"), rec.get("decision"), rec.get("reask"),
                   json.dumps(rec.get("messages"), sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            agent, cost = rec["agent"], rec.get("cost_usd")
            costs[agent] = None if cost is None or costs.get(agent, 0.0) is None else costs.get(agent, 0.0) + cost
    return write(folder / "results.json", from_exam(df, suite, costs, meta.get("code_fingerprint")))
