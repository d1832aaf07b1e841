"""How many seeds (runs) separate two agents: a table for each adjacent pair of a ranking in both designs (field:
duplicate scores on one seat; full league: all candidates in one league), with the dollar cost from the ledger.

Power is :func:`stats.power` (analytic, the two-sided paired t-test) at level ``alpha / m`` (``m`` = pairs in the
Holm family): Holm rejects every p at or below alpha/m, so this is a lower bound ("at least") on Holm's power.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from itertools import combinations

import numpy as np
import pandas as pd

from . import metrics
from .stats import not_ranked, power, seeds_needed

VALUES = ("points_for", "win_rate", "wins")
ESTIMATED_NOTE = "full-league sd estimated from the field pilot (two seats taken as independent)"
NEEDS_FIELD_NOTE = "field: needs a field pilot"


# ------------------------------------------------------------------------------------------------ cost
def cost_per_seed(runs: metrics.Runs, field: bool = False) -> pd.DataFrame:
    """Per agent: what one seed of the pilot's design costs it, from :func:`ratings.costs` (the one cost rule):
    cost per team-season times its teams per run (``field``: 1, the seat). NaN, with ``cost_known`` False, when the
    ledger cannot price it (unpriced calls, runs without ledger rows); 0 for bots."""
    from .ratings import costs

    c = costs(runs)
    st = metrics.standings(runs)
    teams_per_run = st.groupby("agent")["run_id"].agg(lambda r: len(r) / r.nunique())
    out = pd.DataFrame({"agent": c["agent"], "cost_known": c["cost_known"].astype(bool)})
    per_run = 1.0 if field else c["agent"].map(teams_per_run)
    out["cost_per_seed"] = (c["cost_per_team_season"] * per_run).to_numpy(dtype=float)
    out["cost_note"] = np.where(c["free"], "free", np.where(
        c["cost_known"], "", np.where(c["unpriced_calls"] > 0, c["unpriced_calls"].map(
            lambda k: f"unknown: {k} call(s) without a price"), "unknown: runs without ledger rows")))
    return out[["agent", "cost_per_seed", "cost_known", "cost_note"]]


# ------------------------------------------------------------------------------------------------ pair table
@dataclass
class PowerTable:
    """``pairs``: one row per adjacent pair of the ranking; ``agents``: every agent with its mean, rank (empty
    when not ranked) and cost per seed; ``summary``: the pilot and the totals for separating the whole ranking."""
    pairs: pd.DataFrame
    agents: pd.DataFrame
    summary: dict = dc_field(default_factory=dict)


def _paired(wide: pd.DataFrame, a: str, b: str) -> np.ndarray:
    both = wide[[a, b]].dropna()
    return (both[a] - both[b]).to_numpy(dtype=float)


def pair_table(runs: metrics.Runs, value: str = "points_for", alpha: float = 0.05, target: float = 0.8,
               manifest=None, max_n: int = 10_000) -> PowerTable:
    """Seeds (and dollars) needed to separate each adjacent pair of the ranking at ``target`` power with Holm over
    all pairs of ranked agents, in both designs. With a field ``manifest`` the pilot is a field batch (ranked by
    duplicate score; the full-league sd is estimated as sqrt(var_raw_a + var_raw_b), two seats taken as
    independent); else a full-league pilot (ranked by per-run agent mean; the field design needs a field pilot)."""
    from . import field

    if value not in VALUES:
        raise ValueError(f"value: {value!r} is not one of {', '.join(VALUES)}")
    info = metrics.agent_info(runs).set_index("agent")
    if manifest is not None:
        scores = field.duplicate_scores(field.seat_results(runs, manifest), manifest, value)
        dup = scores.pivot_table(index="seed", columns="agent", values="dup")
        raw = scores.pivot_table(index="seed", columns="agent", values=value)
        design = "field"
        means = dup.mean()
    else:
        per_run = metrics.per_agent(metrics.standings(runs), value)
        raw = per_run.pivot_table(index="run_id", columns="agent", values=value)
        dup = None
        design = "full-league"
        means = raw.mean()
    flagged = {a for a in means.index if a in info.index and not bool(info.loc[a, "ranked"])}
    costs = cost_per_seed(runs, field=design == "field").set_index("agent")
    agents = pd.DataFrame({"agent": means.index, "mean": means.to_numpy(),
                           "seeds": [int(raw[a].notna().sum()) for a in means.index]})
    agents["ranked"] = ~agents["agent"].isin(flagged)
    agents["fallback_rate"] = agents["agent"].map(info["fallback_rate"]).fillna(0.0)
    agents["draft_fallback_rate"] = agents["agent"].map(info["draft_fallback_rate"]).fillna(0.0)
    agents["why_not_ranked"] = agents["agent"].map(not_ranked(info.reset_index())).fillna("")
    agents = agents.sort_values(["ranked", "mean"], ascending=[False, False], ignore_index=True)
    agents["rank"] = pd.array([i + 1 if r else pd.NA for i, r in enumerate(agents["ranked"])], dtype="Int64")
    agents["cost_per_seed"] = agents["agent"].map(costs["cost_per_seed"])
    agents["cost_note"] = agents["agent"].map(costs["cost_note"]).fillna("")
    ranked = list(agents.loc[agents["ranked"], "agent"])
    m = max(len(list(combinations(ranked, 2))), 1)
    rows = []
    for a, b in zip(ranked, ranked[1:]):
        d = _paired(dup if dup is not None else raw, a, b)
        n = len(d)
        diff = float(d.mean()) if n else np.nan
        if design == "field":
            sd_field = float(d.std(ddof=1)) if n > 1 else np.nan
            both = raw[[a, b]].dropna()
            sd_full = float(np.sqrt(both[a].var(ddof=1) + both[b].var(ddof=1))) if n > 1 else np.nan
            note = ESTIMATED_NOTE
        else:
            sd_field = np.nan
            sd_full = float(d.std(ddof=1)) if n > 1 else np.nan
            note = NEEDS_FIELD_NOTE
        if n < 2:
            note = f"only {n} seed(s) with both agents: no estimate"
        row = {"rank": len(rows) + 1, "agent_a": a, "agent_b": b, "n": n, "mean_diff": diff, "m": m,
               "sd_field": sd_field, "sd_full": sd_full}
        for key, sd in (("field", sd_field), ("full", sd_full)):
            row[f"power_{key}"] = power(abs(diff), sd, n, alpha, m)
            need = seeds_needed(abs(diff), sd, alpha, m, target, max_n) if np.isfinite(sd) else None
            row[f"seeds_{key}"] = float(need) if need is not None else np.nan
            row[f"cost_{key}"] = (row[f"seeds_{key}"] * (costs["cost_per_seed"].get(a, np.nan)
                                                         + costs["cost_per_seed"].get(b, np.nan)))
        if np.isfinite(sd_full) and not np.isfinite(row["seeds_full"]) and n >= 2:
            note += f"; full-league: more than {max_n} seeds (or no difference)"
        if np.isfinite(sd_field) and not np.isfinite(row["seeds_field"]) and n >= 2:
            note += f"; field: more than {max_n} seeds (or no difference)"
        row["note"] = note
        rows.append(row)
    pairs = pd.DataFrame(rows, columns=["rank", "agent_a", "agent_b", "n", "mean_diff", "m", "sd_field", "sd_full",
                                        "power_field", "power_full", "seeds_field", "seeds_full", "cost_field",
                                        "cost_full", "note"])
    per_seed_total = float(agents.loc[agents["ranked"], "cost_per_seed"].sum(min_count=1)) if ranked else np.nan
    if agents.loc[agents["ranked"], "cost_per_seed"].isna().any():
        per_seed_total = np.nan
    summary = {"design": design, "value": value, "alpha": alpha, "target": target, "m": m,
               "seeds": int(len(raw.index)), "ranked": ranked, "not_ranked": sorted(flagged),
               "sample": metrics.describe_sample(runs)}
    for key in ("field", "full"):
        col = pairs[f"seeds_{key}"]
        worst = float(col.max()) if len(col) and col.notna().all() else np.nan
        summary[f"seeds_{key}"] = worst
        summary[f"cost_{key}"] = worst * per_seed_total if np.isfinite(worst) else np.nan
    return PowerTable(pairs, agents, summary)


# ------------------------------------------------------------------------------------------------ the command
def load_pilot(paths) -> tuple[metrics.Runs, object]:
    """The pilot's runs and its field manifest (None for a full-league pilot) from a field batch folder, a batch
    folder (its ``runs/``), run folders or globs. ValueError / FileNotFoundError name what is wrong."""
    from . import field
    from pathlib import Path

    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if len(items) == 1 and (Path(items[0]) / field.MANIFEST).is_file():
        loaded = field.load(items[0])
        return loaded.runs, loaded.manifest
    items = [Path(p) / "runs" if (Path(p).is_dir() and not (Path(p) / "run.json").exists()
                                  and (Path(p) / "runs").is_dir()) else p for p in items]
    dirs = metrics.expand_paths(items)
    if field.find_manifest(dirs) is not None:
        loaded = field.load(dirs)
        return loaded.runs, loaded.manifest
    return metrics.load_runs(dirs), None


def check_pilot(table: PowerTable) -> None:
    """A pilot that cannot give an estimate is refused (ValueError): fewer than 2 ranked agents or 2 seeds."""
    s = table.summary
    if len(s["ranked"]) < 2:
        extra = f" ({', '.join(s['not_ranked'])} not ranked: mostly engine fallbacks)" if s["not_ranked"] else ""
        raise ValueError(f"the runs have {len(s['ranked'])} ranked agent(s){extra}: a power analysis compares at "
                         "least 2; give runs of two or more agents")
    if s["seeds"] < 2:
        raise ValueError(f"the runs have {s['seeds']} seed(s): a paired comparison needs at least 2 seeds per agent; "
                         "run more seeds")


def _money(x: float) -> str:
    return "unknown" if not np.isfinite(x) else ("$0 (free)" if x == 0 else f"${x:,.2f}")


def _seeds(x: float) -> str:
    return "-" if not np.isfinite(x) else str(int(x))


def _agent_line(r) -> str:
    """``bot:adp #1 mean 0.00, $0 (free) per seed``; an unranked agent with its fallback share."""
    place = f"#{r.rank}" if r.ranked else f"NOT RANKED ({r.why_not_ranked})"
    why = f" ({r.cost_note})" if r.cost_note and r.cost_note != "free" else ""
    return f"{r.agent} {place} mean {r.mean:.2f}, {_money(r.cost_per_seed)} per seed{why}"


def format_report(table: PowerTable) -> str:
    """The power table and a plain-language summary, as printed by ``ffbench power``."""
    s, p = table.summary, table.pairs
    field = s["design"] == "field"
    unit = (f"the mean duplicate score of {s['value']} (the seat's result minus the reference's on the same seed)"
            if field else f"the mean of {s['value']} per run (over each agent's teams in the run)")
    lines = [f"pilot: {'field batch' if field else 'full league'} of {s['seeds']} seeds, {s['sample']}; ranked by "
             f"{unit}",
             f"test: two-sided paired t-test, alpha {s['alpha']} with Holm over {s['m']} pair(s) (power computed at "
             f"alpha/{s['m']}: at least this under Holm); target power {s['target']:.0%}", ""]
    show = pd.DataFrame({
        "pair": [f"{a} > {b}" for a, b in zip(p["agent_a"], p["agent_b"])], "n": p["n"],
        "diff": p["mean_diff"].round(2), "sd field": p["sd_field"].round(2), "sd full": p["sd_full"].round(2),
        "power now field": p["power_field"].round(2), "power now full": p["power_full"].round(2),
        "seeds field": p["seeds_field"].map(_seeds), "seeds full": p["seeds_full"].map(_seeds),
        "cost field": [_money(c) if np.isfinite(n) else "-" for c, n in zip(p["cost_field"], p["seeds_field"])],
        "cost full": [_money(c) if np.isfinite(n) else "-" for c, n in zip(p["cost_full"], p["seeds_full"])]})
    lines.append(show.astype(object).where(show.notna(), "-").to_string(index=False))
    standard = {ESTIMATED_NOTE, NEEDS_FIELD_NOTE}  # said once below
    lines += [f"  {r.agent_a} > {r.agent_b}: {r.note}" for r in p.itertuples() if r.note and r.note not in standard]
    lines += ["", "agents: " + "; ".join(_agent_line(r) for r in table.agents.itertuples())]
    lines.append("")
    for key, name in (("field", "field design"), ("full", "full-league design")):
        if key == "field" and not field:
            lines.append(f"{name}: needs a field pilot (a field batch, `design: field`) to estimate")
            continue
        if np.isfinite(s[f"seeds_{key}"]):
            lines.append(f"{name}: {int(s[f'seeds_{key}'])} seeds separate every adjacent pair at "
                         f"{s['target']:.0%} power (cost of the whole ranking: {_money(s[f'cost_{key}'])})")
        else:
            lines.append(f"{name}: at least one adjacent pair cannot be separated within the seed limit (its "
                         "difference is 0 or too small for its spread), or has too few seeds to estimate")
    if field:
        lines.append("the full-league figures are estimated from the field pilot, taking two seats of one league as "
                     "independent; run a full-league pilot to measure them")
    return "\n".join(lines)
