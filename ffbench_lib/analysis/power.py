"""How many seeds (runs) separate two agents: a table for each adjacent pair of a ranking in both designs (field:
duplicate scores on one seat; full league: all candidates in one league), with the dollar cost from the ledger.

Power is :func:`stats.power` (analytic, the two-sided paired t-test) at level ``alpha / m`` (``m`` = pairs of
candidates in the Holm family): Holm rejects every p at or below alpha/m, so this is a lower bound ("at least") on
Holm's power for each pair; the chance that all pairs separate in one experiment is lower. The pilot's difference
and sd are taken as the truth; ``seeds_<design>_range`` shows how much the seeds needed moves with the sd's
chi-square interval. The full-league columns are measured on a full-league pilot when one is given, else
estimated from the field pilot (:data:`ESTIMATED`).
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ffbench_lib.analysis import field_labels, metrics
from ffbench_lib.core.stats import POWER_TEST, not_ranked, power, runs_needed_wilcoxon, seeds_needed, tests_note

VALUES = ("points_for", "win_rate", "wins")
#: how every table and report labels a full-league sd estimated from a field pilot
ESTIMATED = ("estimated as two independent seats (one team per agent): an upper bound when seats share the "
             "seed's luck")
ESTIMATED_NOTE = f"full-league sd {ESTIMATED}"
MEASURED_NOTE = "full-league sd measured on the full-league pilot (paired per-run agent means)"
NEEDS_FIELD_NOTE = "field: needs a field pilot"
YARDSTICK_NOTE = "reference, not a candidate: a yardstick outside the Holm family (power at alpha alone)"


# ------------------------------------------------------------------------------------------------ cost
def cost_per_seed(runs: metrics.Runs, field: bool = False) -> pd.DataFrame:
    """Per agent: what one seed of the pilot's design costs it, from :func:`ratings.costs` (the one cost rule):
    cost per team-season times its teams per run (``field``: 1, the seat). NaN, with ``cost_known`` False, when the
    ledger cannot price it (unpriced calls, runs without ledger rows); 0 for bots."""
    from ffbench_lib.analysis.ratings import costs

    c = costs(runs)
    out = pd.DataFrame({"agent": c["agent"], "cost_known": c["cost_known"].astype(bool)})
    per_run = 1.0 if field else c["agent"].map(teams_per_run(runs))
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
    if a not in wide or b not in wide:
        return np.array([])
    both = wide[[a, b]].dropna()
    return (both[a] - both[b]).to_numpy(dtype=float)


def _sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else np.nan


def seeds_range(effect: float, sd: float, df: float, alpha: float, m: int, target: float, max_n: int,
                confidence: float = 0.95) -> str:
    """The seeds needed when the pilot's ``sd`` (on ``df`` degrees of freedom) is at the low and high end of its
    chi-square ``confidence`` interval, as ``"7-19"`` (``"7-more than 10000"`` past ``max_n``; "" when unknown).
    Why: the pilot's sd is itself an estimate; at a few seeds its interval is wide, and so is the seeds needed
    (the effect's own uncertainty adds to this)."""
    from scipy.stats import chi2

    if not (np.isfinite(effect) and np.isfinite(sd) and np.isfinite(df)) or df < 1 or effect == 0:
        return ""
    lo_sd = sd * np.sqrt(df / chi2.ppf((1 + confidence) / 2, df))
    hi_sd = sd * np.sqrt(df / chi2.ppf((1 - confidence) / 2, df))
    lo, hi = (seeds_needed(abs(effect), x, alpha, m, target, max_n) for x in (lo_sd, hi_sd))
    if lo is None:
        return ""
    return f"{lo}-{hi if hi is not None else f'more than {max_n}'}"


def _per_run_means(runs: metrics.Runs, value: str) -> pd.DataFrame:
    """runs x agents: each agent's mean ``value`` over its teams in a run (a full-league pilot's pairing unit);
    ``win_rate`` is the one agent-level win rate (:func:`metrics.agent_win_rate`: games against other agents)."""
    per_run = (metrics.agent_win_rate(runs) if value == "win_rate"
               else metrics.per_agent(metrics.standings(runs), value))
    return per_run.pivot_table(index="run_id", columns="agent", values=value)


#: pilot sds from fewer seeds than this are labelled rough in the report
ROUGH_BELOW = 5


def teams_per_run(runs: metrics.Runs) -> dict[str, float]:
    """Per agent: its teams per run (a full-league pilot scores an agent per run by the mean of these teams)."""
    st = metrics.standings(runs)
    return st.groupby("agent")["run_id"].agg(lambda r: len(r) / r.nunique()).to_dict()


def check_leagues(runs: metrics.Runs, what: str = "the pilot") -> None:
    """A pilot whose runs differ in league (regular-season weeks, scoring, roster, team names) is refused
    (ValueError naming the difference and two runs): its sds would mix leagues of different spreads."""
    import yaml

    from ffbench_lib.analysis.ratings import regular_weeks

    meta = runs["meta"].set_index("run_id")
    sports = sorted(meta["sport"].unique()) if "sport" in meta else []
    if len(sports) > 1:  # a study over two sports: its leagues differ in everything
        raise ValueError(f"{what} holds runs of {len(sports)} sports ({', '.join(sports)}): a power analysis needs "
                         "one league design; give one sport's runs (a study's runs/<sport>-*/ folders)")
    st = metrics.standings(runs)
    teams = st.groupby("run_id")["team"].agg(lambda t: ", ".join(sorted(t)))
    weeks = regular_weeks(runs)

    def scoring(path):
        cfg = yaml.safe_load((Path(path) / "config.yaml").read_text(encoding="utf-8")) or {}
        return repr(cfg.get("scoring"))

    for name, per_run in (("regular-season weeks", weeks), ("scoring", meta["path"].map(scoring)),
                          ("roster", meta["roster"]), ("teams", teams)):
        per_run = per_run.dropna()
        if per_run.nunique() > 1:
            first = per_run.drop_duplicates()
            a, b = first.index[:2]
            raise ValueError(f"{what} mixes leagues of different {name} ({meta.loc[a, 'path']}: {first[a]}; "
                             f"{meta.loc[b, 'path']}: {first[b]}): a power analysis needs one league design; give "
                             "the runs of one league configuration")


def pair_table(runs: metrics.Runs, value: str = "points_for", alpha: float = 0.05, target: float = 0.8,
               manifest=None, max_n: int = 10_000, full_runs: metrics.Runs | None = None,
               confidence: float = 0.95) -> PowerTable:
    """Seeds (and dollars) needed to separate each adjacent pair of the ranking at ``target`` power with Holm over
    all pairs of ranked candidates, in both designs, with ``seeds_<design>_range``: the seeds needed at the ends of
    the pilot sd's chi-square ``confidence`` interval.

    * With a field ``manifest`` the pilot is a field batch, ranked by duplicate score. The full-league sd is
      then, without ``full_runs``, estimated as sqrt(var_raw_a + var_raw_b): two independent seats with one team
      per agent, an upper bound when seats of one league share the seed's luck (:data:`ESTIMATED_NOTE`); with
      ``full_runs`` (a full-league pilot of the same agents) it is measured there: the paired per-run agent means,
      matched by agent.
    * Else a full-league pilot (ranked by per-run agent mean); the field design needs a field pilot.

    A reference that is not a candidate (its own leagues, ``runs/reference``) is a yardstick: its pairs with its
    neighbours in the ranking are rows with ``in_family`` False, power at alpha alone, and not in m (the
    candidates' pairs)."""
    from ffbench_lib.analysis import field

    if value not in VALUES:
        raise ValueError(f"value: {value!r} is not one of {', '.join(VALUES)}")
    if full_runs is not None and manifest is None:
        raise ValueError("full_runs: a full-league pilot is measured beside a field pilot; give the field manifest")
    check_leagues(runs)
    if full_runs is not None:
        check_leagues(full_runs, "the full-league pilot")
    info = metrics.agent_info(runs).set_index("agent")
    yardstick: set[str] = set()
    no_runs: dict[str, str] = {}
    if manifest is not None:
        scores = field.duplicate_scores(field.seat_results(runs, manifest), manifest, value)
        no_runs = scores.attrs.get("no_runs", {})
        block = [c for c in field.BLOCK if c in scores]  # a block: a season's seed
        dup = scores.pivot_table(index=block, columns="agent", values="dup")
        raw = scores.pivot_table(index=block, columns="agent", values=value)
        design = "field"
        means = dup.mean()
        yardstick = {manifest.reference} - set(manifest.candidates)
    else:
        raw = _per_run_means(runs, value)
        dup = None
        design = "full-league"
        means = raw.mean()
    full_raw = _per_run_means(full_runs, value) if full_runs is not None else None
    flagged = {a for a in means.index if a in info.index and not bool(info.loc[a, "ranked"])}
    costs = cost_per_seed(runs, field=design == "field").set_index("agent")
    costs_full = cost_per_seed(full_runs).set_index("agent") if full_runs is not None else costs
    agents = pd.DataFrame({"agent": means.index, "mean": means.to_numpy(),
                           "seeds": [int(raw[a].notna().sum()) for a in means.index]})
    agents["ranked"] = ~agents["agent"].isin(flagged)
    agents["role"] = np.where(agents["agent"].isin(yardstick), "reference", "candidate")
    agents["fallback_rate"] = agents["agent"].map(info["fallback_rate"]).fillna(0.0)
    agents["draft_fallback_rate"] = agents["agent"].map(info["draft_fallback_rate"]).fillna(0.0)
    why = not_ranked(info.reset_index())
    agents["why_not_ranked"] = [why.get(a, "") for a in agents["agent"]]
    agents = agents.sort_values(["ranked", "mean"], ascending=[False, False], ignore_index=True)
    in_rank = agents["ranked"] & (agents["role"] == "candidate")
    agents["rank"] = pd.array(list(np.where(in_rank, in_rank.cumsum(), 0)), dtype="Int64")
    agents.loc[~in_rank, "rank"] = pd.NA
    agents["cost_per_seed"] = agents["agent"].map(costs["cost_per_seed"])
    agents["cost_note"] = agents["agent"].map(costs["cost_note"]).fillna("")
    order = list(agents.loc[agents["ranked"], "agent"])
    ranked = [a for a in order if a not in yardstick]
    m = max(len(list(combinations(ranked, 2))), 1)
    pair_list = [(a, b, True) for a, b in zip(ranked, ranked[1:])]
    for ref in yardstick & set(order):  # the yardstick against its neighbours in the ranking
        i = order.index(ref)
        pair_list += [(order[i - 1], ref, False)] if i > 0 else []
        pair_list += [(ref, order[i + 1], False)] if i + 1 < len(order) else []
    rows = []
    for a, b, fam in pair_list:
        level_m = m if fam else 1
        d = _paired(dup if dup is not None else raw, a, b)
        n = len(d)
        diff = float(d.mean()) if n else np.nan
        sd_field, df_field = (_sd(d), n - 1.0) if design == "field" else (np.nan, np.nan)
        if full_raw is not None:
            d_full = _paired(full_raw, a, b)
            n_full, sd_full, df_full = len(d_full), _sd(d_full), len(d_full) - 1.0
            diff_full = float(d_full.mean()) if n_full else np.nan
            note = MEASURED_NOTE if n_full > 1 else (
                f"full-league: {' and '.join(x for x in (a, b) if x not in full_raw) or 'the pair'} not in the "
                "full-league pilot" if n_full == 0 else "full-league: only 1 run with both agents: no estimate")
            if n_full > 1 and np.sign(diff_full) != np.sign(diff) and diff_full != 0:
                note += f"; the full-league pilot ranks {b} above {a}"
        elif design == "field":
            both = raw[[a, b]].dropna()
            va, vb = both[a].var(ddof=1), both[b].var(ddof=1)
            n_full, diff_full = n, diff
            sd_full = float(np.sqrt(va + vb)) if n > 1 else np.nan
            # Welch-Satterthwaite degrees of freedom of a sum of two variances, each on n - 1
            df_full = (n - 1) * (va + vb) ** 2 / (va ** 2 + vb ** 2) if n > 1 and va + vb > 0 else n - 1.0
            note = ESTIMATED_NOTE
        else:
            n_full, diff_full, sd_full, df_full = n, diff, _sd(d), n - 1.0
            note = NEEDS_FIELD_NOTE
        if n < 2:
            note = f"only {n} seed(s) with both agents: no estimate"
        if not fam:
            note = f"{YARDSTICK_NOTE}; {note}"
        row = {"rank": len([r for r in rows if r["in_family"]]) + 1 if fam else pd.NA, "agent_a": a, "agent_b": b,
               "in_family": fam, "n": n, "mean_diff": diff, "m": level_m, "sd_field": sd_field, "n_full": n_full,
               "mean_diff_full": diff_full, "sd_full": sd_full}
        for key, effect, sd, k, dfree, cst in (("field", diff, sd_field, n, df_field, costs),
                                               ("full", diff_full, sd_full, n_full, df_full, costs_full)):
            row[f"power_{key}"] = power(abs(effect), sd, k, alpha, level_m)
            need = seeds_needed(abs(effect), sd, alpha, level_m, target, max_n) if np.isfinite(sd) else None
            row[f"seeds_{key}"] = float(need) if need is not None else np.nan
            row[f"seeds_{key}_range"] = seeds_range(effect, sd, dfree, alpha, level_m, target, max_n, confidence)
            row[f"cost_{key}"] = (row[f"seeds_{key}"] * (cst["cost_per_seed"].get(a, np.nan)
                                                         + cst["cost_per_seed"].get(b, np.nan)))
        if np.isfinite(sd_full) and not np.isfinite(row["seeds_full"]) and n_full >= 2:
            note += f"; full-league: more than {max_n} seeds (or no difference)"
        if np.isfinite(sd_field) and not np.isfinite(row["seeds_field"]) and n >= 2:
            note += f"; field: more than {max_n} seeds (or no difference)"
        row["note"] = note
        rows.append(row)
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    pairs["rank"] = pairs["rank"].astype("Int64")
    pairs["in_family"] = pairs["in_family"].astype(bool)
    summary = {"design": design, "value": value, "alpha": alpha, "target": target, "m": m,
               # the verdicts' Wilcoxon test cannot reject any of the m pairs below this many seeds
               "wilcoxon_min_seeds": runs_needed_wilcoxon(m, alpha),
               "seeds": int(len(raw.index)), "ranked": ranked, "not_ranked": sorted(flagged),
               "outside_family": sorted(yardstick & set(order)), "sample": metrics.describe_sample(runs),
               "full_measured": full_runs is not None, "confidence": confidence,
               "full_sample": metrics.describe_sample(full_runs) if full_runs is not None else None,
               "full_seeds": int(len(full_raw.index)) if full_raw is not None else None,
               "no_runs": no_runs,
               "teams_per_run": {a: k for a, k in teams_per_run(full_runs if full_runs is not None else runs).items()
                                 if not field_labels.is_field_agent(a)}
               if full_runs is not None or design == "full-league" else {}}
    fam = pairs[pairs["in_family"]]
    for key, cst in (("field", costs), ("full", costs_full)):
        col = fam[f"seeds_{key}"]
        worst = float(col.max()) if len(col) and col.notna().all() else np.nan
        per_seed = cst["cost_per_seed"].reindex(ranked)
        per_seed_total = float(per_seed.sum()) if ranked and per_seed.notna().all() else np.nan
        summary[f"seeds_{key}"] = worst
        summary[f"cost_{key}"] = worst * per_seed_total if np.isfinite(worst) else np.nan
        ends = [r.split("-", 1) for r in fam[f"seeds_{key}_range"]]
        summary[f"seeds_{key}_range"] = (f"{max(int(lo) for lo, _ in ends)}-"
                                         f"{max(ends, key=lambda e: _upper(e[1]))[1]}"
                                         if ends and all(e[0] for e in ends) and np.isfinite(worst) else "")
    return PowerTable(pairs, agents, summary)


def _upper(hi: str) -> float:
    return float("inf") if hi.startswith("more") else float(hi)


PAIR_COLUMNS = ["rank", "agent_a", "agent_b", "in_family", "n", "mean_diff", "m", "sd_field", "n_full",
                "mean_diff_full", "sd_full", "power_field", "power_full", "seeds_field", "seeds_full",
                "seeds_field_range", "seeds_full_range", "cost_field", "cost_full", "note"]


# ------------------------------------------------------------------------------------------------ the command
class Pilot(NamedTuple):
    """What ``ffbench power`` measures on: the pilot's runs, its field manifest (None: a full-league pilot) and,
    beside a field pilot, a full-league pilot's runs (None when not given)."""
    runs: metrics.Runs
    manifest: object
    full_runs: metrics.Runs | None = None


def load_pilot(paths) -> Pilot:
    """The pilot from field batch folders, batch folders (their ``runs/``), run folders or globs: the runs of at
    most one field batch (a folder holding ``field.json``, or its runs) and/or ordinary (full-league) runs. Given
    both, the field batch is the pilot and the ordinary runs are its measured full-league pilot. ValueError /
    FileNotFoundError name what is wrong: a path that yields no (complete) runs, two field batches."""
    from ffbench_lib.analysis import field
    from ffbench_lib.records import field as field_record

    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        raise ValueError("no pilot runs given: name a batch folder, run folders or globs")
    field_dirs: dict[Path, list[Path]] = {}  # batch folder -> its runs given
    full_dirs: list[Path] = []
    per_item: list[tuple[object, list[Path]]] = []
    for item in items:
        p = Path(item)
        if p.is_dir() and (p / field_record.MANIFEST).is_file():
            dirs = field_record.run_dirs(field_record.read_manifest(p), p)
            if not dirs:
                raise ValueError(f"{p}: the field batch has no runs yet (run `ffbench batch` on its spec)")
            groups = {p.resolve(): dirs}
        else:
            if p.is_dir() and not (p / "run.json").exists() and (p / "runs").is_dir():
                item = p / "runs"
            dirs = metrics.expand_paths([item])  # FileNotFoundError naming the item when it holds no run
            groups = {}
            for d in dirs:
                found = field_record.manifest_of(d)
                groups.setdefault(found[1].resolve() if found else None, []).append(d)
        per_item.append((item, dirs))
        for key, ds in groups.items():
            if key is None:
                full_dirs += ds
            else:
                field_dirs.setdefault(key, []).extend(ds)
    if len(field_dirs) > 1:
        a, b = list(field_dirs)[:2]
        raise ValueError(f"{a} and {b} are two field batches: give one field batch (and, to measure the "
                         "full-league design, a full-league batch), not two")
    fr = full = None
    try:  # a group without one complete run: the per-path check below names the path
        fr = field.load(next(iter(field_dirs.values()))) if field_dirs else None
    except FileNotFoundError:
        pass
    try:
        full = metrics.load_runs(full_dirs) if full_dirs else None
    except FileNotFoundError:
        pass
    loaded = {str(Path(x).resolve()) for r in (fr.runs if fr else None, full) if r is not None
              for x in r["meta"]["path"]}
    for item, dirs in per_item:
        if not any(str(Path(d).resolve()) in loaded for d in dirs):
            raise FileNotFoundError(f"{item}: no complete runs there (its {len(dirs)} run(s) are unfinished or not "
                                    "in their field.json); finish or re-run them, or leave the path out")
    return Pilot(fr.runs, fr.manifest, full) if fr is not None else Pilot(full, None, None)


def check_pilot(table: PowerTable) -> None:
    """A pilot that cannot give an estimate is refused (ValueError): fewer than 2 ranked agents or 2 seeds."""
    s = table.summary
    ranked = len(s["ranked"]) + len(s.get("outside_family", []))
    if ranked < 2:
        extra = f" ({', '.join(s['not_ranked'])} not ranked: mostly engine fallbacks)" if s["not_ranked"] else ""
        extra += "".join(f"; {a} has no complete run ({why})" for a, why in s.get("no_runs", {}).items())
        raise ValueError(f"the runs have {ranked} ranked agent(s){extra}: a power analysis compares at "
                         "least 2; give runs of two or more agents")
    if s["seeds"] < 2:
        raise ValueError(f"the runs have {s['seeds']} seed(s): a paired comparison needs at least 2 seeds per agent; "
                         "run more seeds")


def _money(x: float) -> str:
    return "unknown" if not np.isfinite(x) else ("$0 (free)" if x == 0 else f"${x:,.2f}")


def _seeds(x: float) -> str:
    return "-" if not np.isfinite(x) else str(int(x))


def _agent_line(r) -> str:
    """``bot:adp #1 mean 0.00, $0 (free) per seed``; an unranked agent with its fallback share; a reference
    that is not a candidate as the yardstick."""
    place = (f"#{r.rank}" if r.role == "candidate" else "REFERENCE (yardstick, outside the Holm family)") \
        if r.ranked else f"NOT RANKED ({r.why_not_ranked})"
    why = f" ({r.cost_note})" if r.cost_note and r.cost_note != "free" else ""
    return f"{r.agent} {place} mean {r.mean:.2f} over {r.seeds} seed(s), {_money(r.cost_per_seed)} per seed{why}"


def aligned(df: pd.DataFrame, gap: int = 3) -> str:
    """A table as text whose columns are ``gap`` spaces apart under a rule of dashes per column (pandas'
    to_string puts one space between headers of several words: "sd field sd full" reads as one), the first
    column (names) left-aligned, the others right-aligned."""
    cells = [[str(c) for c in df.columns]] + [[str(v) for v in row] for row in df.itertuples(index=False)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(df.columns))]

    def line(row):
        return (" " * gap).join(v.ljust(w) if i == 0 else v.rjust(w)
                                for i, (v, w) in enumerate(zip(row, widths))).rstrip()
    return "\n".join([line(cells[0]), line(["-" * w for w in widths]), *map(line, cells[1:])])


def format_report(table: PowerTable) -> str:
    """The power table and a plain-language summary, as printed by ``ffbench power``."""
    s, p = table.summary, table.pairs
    field = s["design"] == "field"
    estimated = field and not s.get("full_measured")
    star = "*" if estimated else ""
    unit = (f"the mean duplicate score of {s['value']} (the seat's result minus the reference's on the same seed)"
            if field else f"the mean of {s['value']} per run (over each agent's teams in the run)")
    lines = [f"pilot: {'field batch' if field else 'full league'} of {s['seeds']} seeds, {s['sample']}; ranked by "
             f"{unit}"]
    if s.get("full_measured"):
        lines.append(f"full-league pilot: {s['full_sample']}; its columns measured there (paired per-run means of "
                     "each agent's teams, matched by agent)")
    lines += [f"test: {POWER_TEST}, alpha {s['alpha']} with Holm over {s['m']} pair(s) of candidates "
              f"(power computed at alpha/{s['m']}: at least this under Holm); target power {s['target']:.0%}",
              tests_note(s["m"], s["alpha"], s["seeds"]), ""]
    show = pd.DataFrame({
        "pair": [f"{a} > {b}" + ("" if fam else " (yardstick)")
                 for a, b, fam in zip(p["agent_a"], p["agent_b"], p["in_family"])], "n": p["n"],
        "diff": p["mean_diff"].round(2), "sd field": p["sd_field"].round(2), f"sd full{star}": p["sd_full"].round(2),
        "power now field": p["power_field"].round(2), f"power now full{star}": p["power_full"].round(2),
        "seeds field": p["seeds_field"].map(_seeds), "range field": p["seeds_field_range"].replace("", "-"),
        f"seeds full{star}": p["seeds_full"].map(_seeds), f"range full{star}": p["seeds_full_range"].replace("", "-"),
        "cost field": [_money(c) if np.isfinite(n) else "-" for c, n in zip(p["cost_field"], p["seeds_field"])],
        f"cost full{star}": [_money(c) if np.isfinite(n) else "-" for c, n in zip(p["cost_full"], p["seeds_full"])]})
    if s.get("full_measured"):
        show.insert(5, "n full", p["n_full"])
        show.insert(6, "diff full", p["mean_diff_full"].round(2))
    lines.append(aligned(show.astype(object).where(show.notna(), "-")))
    if estimated:
        lines.append(f"* full league: {ESTIMATED} (from the field pilot; give a full-league batch too to measure it)")
    standard = {ESTIMATED_NOTE, NEEDS_FIELD_NOTE, MEASURED_NOTE}  # said once above or below
    lines += [f"  {r.agent_a} > {r.agent_b}: {r.note}" for r in p.itertuples() if r.note and r.note not in standard]
    lines += ["", "agents: " + "; ".join(_agent_line(r) for r in table.agents.itertuples())]
    lines += [f"NO COMPLETE RUN, not in the table: {a} ({why})" for a, why in s.get("no_runs", {}).items()]
    if s.get("teams_per_run"):
        k = s["teams_per_run"]
        lines.append("full-league pilot: an agent's result per run is the mean of its K teams in that run, so one "
                     "seed costs K team-seasons of that agent (K: " + ", ".join(f"{a} {v:g}" for a, v in k.items())
                     + ")")
    lines.append("")
    n_fam = int(p["in_family"].sum())
    for key, name in (("field", "field design"), ("full", f"full-league design{star}")):
        if key == "field" and not field:
            lines.append(f"{name}: needs a field pilot (a field batch, `design: field`) to estimate")
            continue
        if np.isfinite(s[f"seeds_{key}"]):
            rng = f" ({s[f'seeds_{key}_range']} with the pilot sd at the ends of its interval)" \
                if s[f"seeds_{key}_range"] else ""
            floor = s.get("wilcoxon_min_seeds", 0)
            lines.append(f"{name}: each adjacent pair reaches {s['target']:.0%} power on its own by "
                         f"{int(s[f'seeds_{key}'])} seeds{rng} (t-test; the Wilcoxon verdicts: at least "
                         f"{max(floor, int(s[f'seeds_{key}']))})"
                         + (f"; the chance that all {n_fam} separate in one experiment is lower" if n_fam > 1 else "")
                         + f" (cost of the whole ranking: {_money(s[f'cost_{key}'])})")
        else:
            lines.append(f"{name}: at least one adjacent pair cannot be separated within the seed limit (its "
                         "difference is 0 or too small for its spread), or has too few seeds to estimate")
    seeds = f"{s['seeds']} seeds" + (f" (full league: {s['full_seeds']} runs)" if s.get("full_measured") else "")
    few = min(x for x in (s["seeds"], s.get("full_seeds") or s["seeds"]))
    if few < ROUGH_BELOW:
        lines.append(f"ROUGH: the pilot sds come from {few} seed(s) (fewer than {ROUGH_BELOW}): take the seeds "
                     "needed as an order of magnitude and read the range columns")
    lines.append(f"pilot uncertainty: each difference and sd is the pilot's estimate from {seeds}, so the "
                 "seeds needed is itself uncertain (very much so at a few seeds); the range columns "
                 "(seeds_<design>_range) give it with the pilot sd at the ends of its "
                 f"{s.get('confidence', 0.95):.0%} chi-square interval, and the difference's own uncertainty "
                 "adds to that")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ seasons x seeds
#: the season counts a study plan shows (seeds per season needed at each)
PLAN_SEASONS = (2, 3, 4, 5, 6, 8, 10)
SEASON_PLAN_COLUMNS = ["rank", "agent_a", "agent_b", "n", "strata", "mean_diff", "sd_between", "sd_within",
                       "icc", "naive_understates", "power_now", *[f"seeds_at_{k}_seasons" for k in PLAN_SEASONS],
                       "note"]


def season_plan(runs: metrics.Runs, value: str = "points_for", alpha: float = 0.05, target: float = 0.8,
                max_seeds: int = 1000) -> pd.DataFrame:
    """Seasons x seeds for a study that should hold beyond its seasons, from a pilot over 2 or more seasons of
    one league design (seeds nested in seasons): for each adjacent pair of the pooled ranking (per-run agent
    means), the per-run differences split into the between-season and within-season (seed) variances
    (:func:`stats.variance_components`), the power of the pilot's own design (its seasons x its seeds per season),
    and the seeds per season needed at :data:`PLAN_SEASONS` seasons (:func:`stats.study_seeds_needed`: the t-test
    on season means, Holm's alpha/m; NaN: no number of seeds reaches the target with that many seasons, because
    the between-season variance alone keeps the power below it). ``naive_understates``: how many times counting
    every seed as independent understates the variance of the pilot's mean, (R between + within) / (between +
    within) at R seeds per season. ``attrs``: the pilot's ``strata`` and ``seeds_per_stratum``.
    ValueError for runs of one season, or of different league designs (:func:`check_leagues`)."""
    from ffbench_lib.analysis import seasons
    from ffbench_lib.core import stats

    if value not in VALUES:
        raise ValueError(f"value: {value!r} is not one of {', '.join(VALUES)}")
    levels = seasons.strata(runs)
    if len(levels) < 2:
        raise ValueError(f"the runs are of one season ({levels[0] if levels else 'none'}): a seasons x seeds plan "
                         "needs a pilot over 2 or more seasons (a batch with seasons: [...])")
    check_leagues(runs)
    raw = _per_run_means(runs, value)
    where = seasons.stratum_of(runs)
    info = metrics.agent_info(runs).set_index("agent")
    ranked = [a for a in raw.mean().sort_values(ascending=False).index
              if a not in info.index or bool(info.loc[a, "ranked"])]
    m = max(len(ranked) * (len(ranked) - 1) // 2, 1)
    per = raw.index.map(where).value_counts()
    seeds_now = int(per.min())
    rows = []
    for i, (a, b) in enumerate(zip(ranked, ranked[1:]), start=1):
        both = raw[[a, b]].dropna()
        d = (both[a] - both[b])
        labels = both.index.map(where)
        vc = stats.variance_components(d.to_numpy(), labels)
        effect = float(d.groupby(labels).mean().mean())
        between, within = vc["between"], vc["within"]
        total = between + within
        row = {"rank": i, "agent_a": a, "agent_b": b, "n": len(d), "strata": vc["strata"], "mean_diff": effect,
               "sd_between": float(np.sqrt(between)), "sd_within": float(np.sqrt(within)),
               "icc": between / total if total > 0 else np.nan,
               "naive_understates": (seeds_now * between + within) / total if total > 0 else np.nan,
               "power_now": stats.study_power(abs(effect), between, within, vc["strata"], seeds_now, alpha, m)}
        for k in PLAN_SEASONS:
            need = stats.study_seeds_needed(abs(effect), between, within, k, alpha, m, target, max_seeds)
            row[f"seeds_at_{k}_seasons"] = float(need) if need is not None else np.nan
        row["note"] = ("one seed per season: the within-season variance is unknown, so no plan; run 2 or more "
                       "seeds per season" if not np.isfinite(within) else
                       "between-season variance estimated 0 (truncated): seasons looked alike in the pilot, which "
                       f"{vc['strata']} seasons cannot show well" if between == 0 else "")
        rows.append(row)
    out = pd.DataFrame(rows, columns=SEASON_PLAN_COLUMNS)
    out.attrs.update(strata=levels, seeds_per_stratum=seeds_now, m=m, alpha=alpha, target=target, value=value,
                     max_seeds=max_seeds)
    return out


def format_season_plan(plan: pd.DataFrame) -> str:
    """The seasons x seeds plan as ``ffbench power`` prints it, with what it assumes."""
    from ffbench_lib.core.stats import POWER_TEST

    a = plan.attrs
    lines = [f"seasons x seeds (pilot: {len(a['strata'])} seasons, {', '.join(a['strata'])}; {a['seeds_per_stratum']} "
             f"seed(s) per season): to hold beyond the pilot's seasons, a ranking is tested on the seasons' mean "
             f"differences ({POWER_TEST.replace('per-run', 'per-season')}, df = seasons - 1), Holm over {a['m']} "
             f"pair(s); the sd of a season's mean is sqrt(between + within / seeds): more seeds shrink only the "
             f"within part", ""]
    show = pd.DataFrame({
        "pair": [f"{x} > {y}" for x, y in zip(plan["agent_a"], plan["agent_b"])],
        "diff": plan["mean_diff"].round(2), "sd between": plan["sd_between"].round(2),
        "sd within": plan["sd_within"].round(2), "icc": plan["icc"].round(2),
        "naive x": plan["naive_understates"].round(1), "power now": plan["power_now"].round(2),
        **{f"{k} seasons": [("-" if not np.isfinite(w) else "none") if not np.isfinite(x) else str(int(x))
                            for x, w in zip(plan[f"seeds_at_{k}_seasons"], plan["sd_within"])]
           for k in PLAN_SEASONS}})
    lines.append(aligned(show.astype(object).where(show.notna(), "-")))
    lines += [f"  {r.agent_a} > {r.agent_b}: {r.note}" for r in plan.itertuples() if r.note]
    lines += ["", f"'<k> seasons': seeds per season for {a['target']:.0%} power with k seasons; none: no number of "
              f"seeds (up to {a['max_seeds']}) reaches it, the seasons differ too much: add seasons. 'naive x': how "
              "many times treating every seed as independent understates the variance of the pilot's mean. icc: "
              "the between-season share of a run's variance.",
              f"ROUGH: the between-season variance comes from {len(a['strata'])} seasons ({len(a['strata']) - 1} "
              "degree(s) of freedom): an order of magnitude, not a measurement"]
    return "\n".join(lines)
