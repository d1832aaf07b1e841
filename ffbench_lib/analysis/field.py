"""Field mode: duplicate seasons. Every candidate agent plays the same seat of the same league of fixed baseline
bots on the same seeds (same schedule, draft slot and bot seeds), one candidate per league; its score on a seed is
its result minus the reference agent's in that seat on that seed (the duplicate-bridge idea), so schedule, slot and
opponent luck cancel.

A field batch (``design: field``, written by :mod:`ffbench_lib.runs.batch`) keeps its manifest (``field.json``,
:mod:`ffbench_lib.records.field`) beside its runs: which team is the seat, which agent is the reference, and where
each candidate's runs are.
"""
from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ffbench_lib.analysis import metrics
from ffbench_lib.analysis.field_labels import is_field_agent
from ffbench_lib.records.field import MANIFEST, Manifest, find_manifest, folder_of, read_manifest, run_dirs, run_folder
from ffbench_lib.sport import sport

#: a field batch's pairing unit: its candidates' leagues of one season and seed (same schedule, slot and bots)
BLOCK = ["season", "seed"]


def _keys(df: pd.DataFrame) -> list[str]:
    """The block columns a frame has (a frame without ``season`` is of one season: the seed is the block)."""
    return [c for c in BLOCK if c in df]


def _pairs(df: pd.DataFrame) -> list[tuple]:
    """Each row's block as a (season, seed) key (season None in a frame without one)."""
    return list(zip(df["season"] if "season" in df else [None] * len(df), df["seed"]))


class FieldRuns(NamedTuple):
    """A field batch as loaded: its manifest, its folder and :func:`metrics.load_runs` of its runs."""
    manifest: Manifest
    folder: Path
    runs: dict


def load(batch_dir_or_run_dirs) -> FieldRuns:
    """A field batch folder (with ``field.json``), or run folders of one: its manifest and runs (complete runs
    only; unfinished ones are listed in ``runs["excluded"]``). ValueError when these are not a field batch's."""
    items = [batch_dir_or_run_dirs] if isinstance(batch_dir_or_run_dirs, (str, Path)) else list(batch_dir_or_run_dirs)
    if len(items) == 1 and (Path(items[0]) / MANIFEST).is_file():
        folder = Path(items[0])
        manifest = read_manifest(folder)
        dirs = run_dirs(manifest, folder)
        if not dirs:
            raise ValueError(f"{folder}: the field batch has no runs yet (run `ffbench batch` on its spec)")
    else:
        dirs = metrics.expand_paths(items)
        found = find_manifest(dirs)
        if found is None:
            raise ValueError(f"{', '.join(map(str, items[:3]))}: not runs of a field batch (no {MANIFEST} two or "
                             "three folders above them)")
        manifest, folder = found
        stray = [d for d in dirs if folder.resolve() not in Path(d).resolve().parents]
        if stray:
            raise ValueError(f"{stray[0]} is not a run of the field batch {folder} (found from {dirs[0]}): analyse one "
                             "field batch at a time")
    return FieldRuns(manifest, folder, metrics.load_runs(dirs))


def _which(manifest: Manifest, folder: Path, run_path: str) -> str | None:
    """The agent whose runs' folder holds this run (the reference for ``reference_dir``)."""
    parent = folder_of(manifest, run_path)
    for agent, d in manifest.candidates.items():
        if (folder / d).resolve() == parent:
            return agent
    if (folder / manifest.reference_dir).resolve() == parent:
        return manifest.reference
    return None


def seat_results(runs: dict, manifest: Manifest, folder: str | Path | None = None) -> pd.DataFrame:
    """One row per (agent, season, seed): the seat team's regular-season points_for, wins and win_rate in that
    agent's league (``season``: ``<sport>-<season>``, one value unless the batch is a study over seasons), with
    ``is_reference``, ``candidate`` (False for a reference that is not a candidate), ``ranked``
    (False when the agent's decisions were mostly engine fallbacks, :func:`metrics.agent_info`) and its fallback
    shares. The agent is the seat team's agent in the run; a run
    whose seat is played by an agent that is not a candidate (nor the reference) is refused."""
    check_manifest(manifest)
    if folder is None:  # the batch folder of these runs: the folder/agent agreement is always checked
        found = find_manifest(list(runs["meta"]["path"]))
        folder = found[1] if found is not None else None
    st = metrics.standings(runs)
    seat = st[st["team"] == manifest.seat]
    missing = sorted(set(st["run_id"]) - set(seat["run_id"]))
    if missing:
        raise ValueError(f"field.json: seat {manifest.seat!r} is not a team of run(s) {', '.join(missing[:3])}")
    known = {*manifest.candidates, manifest.reference}
    stray = sorted(set(seat["agent"]) - known)
    if stray:
        raise ValueError(f"field.json: the seat {manifest.seat!r} is played by {', '.join(stray)}, which is neither a "
                         f"candidate nor the reference ({manifest.reference}): the seat does not match the runs "
                         "(set it to the team the candidates replace), or these runs are not this batch's")
    if folder is not None:  # the folder a run is in must agree with the agent in its seat
        where = dict(zip(runs["meta"]["run_id"], runs["meta"]["path"]))
        owners = {r.run_id: _which(manifest, Path(folder), where[r.run_id]) for r in seat.itertuples()}
        wrong = [r for r in seat.itertuples() if owners[r.run_id] is not None and owners[r.run_id] != r.agent]
        if wrong:
            folders = {owners[r.run_id] for r in wrong}
            if len(folders) > 1:  # one agent in the seat of several agents' runs: a baseline team, not the seat
                raise ValueError(f"field.json: seat {manifest.seat!r} is played by {wrong[0].agent} in the runs of "
                                 f"{', '.join(sorted(folders))}: it is a baseline team, not the seat the candidates "
                                 "replace, so the seat does not match the runs; set seat to the team whose agent "
                                 "differs between the candidates' folders (the batch spec's seat)")
            r = wrong[0]
            raise ValueError(f"{where[r.run_id]}: its seat {manifest.seat!r} is played by {r.agent}, but the "
                             f"folder is {owners[r.run_id]}'s in field.json")
    meta = runs["meta"].set_index("run_id")
    seat = seat.assign(season=[sport(sp).stratum(int(y)) for sp, y in
                               zip(seat["run_id"].map(meta["sport"]), seat["run_id"].map(meta["season"]))])
    dupes = seat[seat.duplicated(["agent", *BLOCK], keep=False)]
    if len(dupes):
        r = dupes.iloc[0]
        raise ValueError(f"{r.agent} has {int(((dupes['agent'] == r.agent) & (dupes['season'] == r.season)).sum())} "
                         f"runs of seed {r.seed} of {r.season}: give each (agent, season, seed) once")
    info = metrics.agent_info(runs).set_index("agent")
    out = seat[["agent", "season", "seed", "run_id", "points_for", "wins", "win_rate"]].copy()
    out["seed"] = out["seed"].astype(int)
    out["is_reference"] = out["agent"] == manifest.reference
    out["candidate"] = out["agent"].isin(manifest.candidates)  # False: the reference's own leagues, a yardstick
    out["fallback_rate"] = out["agent"].map(info["fallback_rate"]).fillna(0.0)
    out["draft_fallback_rate"] = out["agent"].map(info["draft_fallback_rate"]).fillna(0.0)
    out["ranked"] = out["agent"].map(info["ranked"]).fillna(True).astype(bool)
    out = out.sort_values(["agent", *BLOCK], ignore_index=True)
    out.attrs["gaps"] = gaps(runs, manifest, folder, out)
    return out


def check_manifest(manifest: Manifest) -> None:
    """A manifest whose reference is a candidate must keep the reference's runs in its candidate folder: else the
    scores would subtract runs other than the ones ``reference_dir`` names (a hand-edited field.json)."""
    own = manifest.candidates.get(manifest.reference)
    if own is not None and Path(own) != Path(manifest.reference_dir):
        raise ValueError(f"field.json: the reference {manifest.reference} is a candidate with its runs in {own}, but "
                         f"reference_dir is {manifest.reference_dir}: make them the same folder (or the reference "
                         "another agent, as the batch spec says)")
    if own is None and Path(manifest.reference_dir) in {Path(d) for d in manifest.candidates.values()}:
        holder = next(a for a, d in manifest.candidates.items() if Path(d) == Path(manifest.reference_dir))
        raise ValueError(f"field.json: reference_dir {manifest.reference_dir} holds the runs of the candidate "
                         f"{holder}, not of the reference {manifest.reference}")


def gaps(runs: dict, manifest: Manifest, folder, seat: pd.DataFrame) -> pd.DataFrame:
    """Every (agent, season, seed) of the manifest without a complete run: ``agent``, ``season`` (None outside a
    study), ``seed``, ``status`` ("missing": no run folder; else the run's status from run.json, e.g. "failed") and
    ``reason``."""
    have = set(zip(seat["agent"], seat["season"], seat["seed"].astype(int))) if manifest.seasons else set(
        zip(seat["agent"], [None] * len(seat), seat["seed"].astype(int)))
    excluded = runs.get("excluded")
    by_path = ({str(Path(p).resolve()): (st, why) for p, st, why in excluded[["path", "status", "reason"]]
                .itertuples(index=False)} if excluded is not None and len(excluded) else {})
    dirs = dict(manifest.candidates)
    dirs.setdefault(manifest.reference, manifest.reference_dir)
    rows = []
    for agent, d in dirs.items():
        for season in manifest.seasons or [None]:
            for s in manifest.seeds:
                if (agent, season, s) in have:
                    continue
                path = run_folder(folder, d, s, season) if folder is not None else None
                status, why = by_path.get(str(path.resolve()), (None, None)) if path is not None else (None, None)
                name = run_folder("", d, s, season).as_posix()
                if status is None:
                    status, why = ("missing", f"no run folder {name}") if path is None or not path.is_dir() \
                        else ("not loaded", f"{name} was not among the runs given")
                rows.append({"agent": agent, "season": season, "seed": s, "status": status, "reason": why})
    return pd.DataFrame(rows, columns=["agent", "season", "seed", "status", "reason"])


def _block(season, seed) -> str:
    """A block in words: ``seed 2``, in a study ``seed 2 of nfl-2023``."""
    return f"seed {seed}" + (f" of {season}" if isinstance(season, str) and season else "")


def describe_gaps(g: pd.DataFrame) -> list[str]:
    """One line per agent of :func:`gaps`: ``bot:vorp: seed 2 missing (no run folder runs/bot-vorp/seed-2)``."""
    return [f"{agent}: " + "; ".join(f"{_block(getattr(r, 'season', None), r.seed)} {r.status} ({r.reason})"
                                     for r in rows.itertuples())
            for agent, rows in g.groupby("agent", sort=False)]


def duplicate_scores(seat: pd.DataFrame, manifest: Manifest, value: str = "points_for") -> pd.DataFrame:
    """``seat`` (:func:`seat_results`) with ``reference_value`` (the reference's seat result on the same seed) and
    ``dup = value - reference_value``. A seed whose reference run is missing or not complete is refused: without
    it that seed's scores cannot be computed, and dropping it silently would change the sample."""
    if value not in seat.columns:
        raise ValueError(f"value: {value!r} is not a seat result ({', '.join(VALUE_COLUMNS)})")
    ref = dict(zip(_pairs(seat[seat["agent"] == manifest.reference]),
                   seat.loc[seat["agent"] == manifest.reference, value]))
    lacking = seat[[k not in ref for k in _pairs(seat)]]
    if len(lacking):
        r = lacking.iloc[0]
        season = getattr(r, "season", None) if manifest.seasons else None
        where = run_folder("", manifest.reference_dir, r.seed, season).as_posix()
        raise ValueError(f"{_block(season, r.seed)}: the reference "
                         f"{manifest.reference}'s run ({where}) is missing or not complete, so {r.agent} cannot be "
                         "scored on that seed; finish the batch (run it again) or leave that seed's runs out")
    out = seat.copy()
    out["reference_value"] = [float(ref[k]) for k in _pairs(seat)]
    out["dup"] = out[value].astype(float) - out["reference_value"]
    return common_seeds(out, manifest)


def _short(text, limit: int = 100) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def common_seeds(scores: pd.DataFrame, manifest: Manifest) -> pd.DataFrame:
    """``scores`` on the seeds every ranked agent with runs has, so that every mean and pair is over one set of
    seeds (a candidate missing seed 2 would otherwise be scored on other seeds than the rest). Warns (UserWarning,
    one per agent) naming the candidate and the seeds that are missing or incomplete (:func:`gaps`, from
    ``seat.attrs``) and the rows left out; ``attrs``: ``gaps``, ``dropped`` (agent, seed) left out, ``seeds`` kept,
    ``n`` per agent and ``no_runs`` (candidates without a complete run, with why)."""
    import warnings

    g = scores.attrs.get("gaps", pd.DataFrame(columns=["agent", "season", "seed", "status", "reason"]))
    ranked = scores[scores["ranked"]] if "ranked" in scores else scores
    study = scores["season"].nunique() > 1 if "season" in scores else False
    blocks = (sorted(set.intersection(*[set(_pairs(x)) for _, x in ranked.groupby("agent")]), key=lambda b: (str(b[0]), b[1]))
              if len(ranked) else [])
    keep = ~scores["agent"].isin(ranked["agent"]) | pd.Series(_pairs(scores), index=scores.index).isin(blocks)
    dropped = scores.loc[~keep, ["agent", *BLOCK] if study else ["agent", "seed"]]
    out = scores[keep].reset_index(drop=True)
    no_runs = {a: "; ".join(f"{_block(getattr(r, 'season', None), r.seed)} {r.status} ({_short(r.reason)})"
                            for r in rows.itertuples())
               for a, rows in g.groupby("agent") if a not in set(scores["agent"])}
    for line in describe_gaps(g):
        warnings.warn(f"field batch: {line}", UserWarning, stacklevel=3)
    said = (lambda keys: ", ".join(_block(x, k) for x, k in keys)) if study else (
        lambda keys: ", ".join(str(k) for _, k in keys))
    if len(dropped):
        left = "; ".join(f"{a} {'' if study else 'seed(s) '}{said(sorted(_pairs(x), key=lambda b: (str(b[0]), b[1])))}"
                         for a, x in dropped.groupby("agent"))
        what = "block(s) of a season and seed" if study else "seed(s)"
        warnings.warn(f"field batch: ranked on the {len(blocks)} {what} every ranked candidate has "
                      f"({said(blocks)}); left out: {left}", UserWarning, stacklevel=3)
    out.attrs.update(gaps=g, dropped=dropped, seeds=blocks if study else sorted(k for _, k in blocks),
                     no_runs=no_runs, n=out.drop_duplicates(["agent", *_keys(out)]).groupby("agent").size().to_dict())
    return out


VALUE_COLUMNS = ("points_for", "wins", "win_rate")


def by_seed(per_run: pd.DataFrame, runs: dict) -> pd.DataFrame:
    """A per-(run, agent) frame blocked for paired tests: for a field batch's runs, the candidates' rows with
    ``run_id`` replaced by ``seed-N`` (the candidates' leagues of one seed are the block: same schedule, slot and
    bots; 4 candidates x 10 seeds are 10 blocks, not 40 runs) and the baseline teams left out; other runs as
    they are."""
    meta = runs["meta"]
    if "field_seat" not in meta or meta["field_seat"].isna().all():
        return per_run
    seed = dict(zip(meta["run_id"], meta["seed"]))
    out = per_run[~per_run["agent"].map(is_field_agent)].copy()
    label = "seed-" + out["run_id"].map(seed).astype(str)
    if meta[["sport", "season"]].drop_duplicates().shape[0] > 1:  # a field study: a season's seed is the block
        season = {r: sport(sp).stratum(int(y)) for r, sp, y in
                  zip(meta["run_id"], meta["sport"], meta["season"])}
        label = out["run_id"].map(season) + "/" + label
    out["run_id"] = label
    return out


def describe_blocks(runs: dict) -> str:
    """The blocks of :func:`by_seed` in words: "10 seeds of the 2024 season (one league per candidate each)"."""
    meta = runs["meta"]
    n, seasons = meta["seed"].nunique(), sorted({int(s) for s in meta["season"].dropna()})
    if len(seasons) > 1:  # a field study: every season's seeds
        return (f"{n} seed{'s' if n != 1 else ''} x {len(seasons)} seasons ({', '.join(map(str, seasons))}): "
                f"{n * len(seasons)} blocks (one league per candidate each)")
    where = f"the {seasons[0]} season" if len(seasons) == 1 else f"seasons {', '.join(map(str, seasons))}"
    return f"{n} seed{'s' if n != 1 else ''} of {where} (one league per candidate each)"


def variance_reduction(scores: pd.DataFrame, value: str = "points_for") -> pd.DataFrame:
    """Per agent: n seeds, the mean and sd of the raw seat result and of the duplicate score, and two factors:

    * ``vrf_raw`` = var_raw / var_dup: the sd of the duplicate score against the raw season result (what issue #14
      asks for). It compares one result's spread with a difference's, so it understates the gain: a difference of
      two independent results has twice the variance of one.
    * ``vrf_pairing`` = (var_raw + var_raw_reference) / var_dup: how much playing the same seat on the same seed
      as the reference reduces the variance of the comparison with it, against comparing results of two
      independent leagues (var_raw_reference: the reference's seat result on the same seeds). Above 1: pairing
      helps; the seeds a comparison needs shrink by about this factor.

    The reference's duplicate score is 0 by construction: its row is kept, ``is_reference`` True and its factors
    NaN."""
    rows = []
    for agent, g in scores.groupby("agent", sort=False):
        raw, dup, ref = g[value].astype(float), g["dup"].astype(float), g["reference_value"].astype(float)
        is_ref = bool(g["is_reference"].iloc[0])
        many = len(g) > 1
        var_raw, var_ref, var_dup = (float(x.var(ddof=1)) if many else np.nan for x in (raw, ref, dup))
        ok = not is_ref and np.isfinite(var_dup) and var_dup > 0
        rows.append({"agent": agent, "n": len(g), "mean_raw": float(raw.mean()), "sd_raw": np.sqrt(var_raw),
                     "sd_raw_reference": np.sqrt(var_ref), "mean_dup": float(dup.mean()), "sd_dup": np.sqrt(var_dup),
                     "vrf_raw": var_raw / var_dup if ok else np.nan,
                     "vrf_pairing": (var_raw + var_ref) / var_dup if ok else np.nan, "is_reference": is_ref,
                     "note": "reference: its duplicate score is 0 by construction" if is_ref else ""})
    return pd.DataFrame(rows).sort_values("mean_dup", ascending=False, ignore_index=True)


def pairwise(scores: pd.DataFrame, value: str = "dup", alpha: float = 0.05, confidence: float = 0.95) -> pd.DataFrame:
    """Every pair of ranked agents on the seeds both have: mean paired difference of ``value`` (``a`` minus
    ``b``), its interval, the paired t-test's p and Holm's p over the family.

    The interval is the paired t-test's own t-interval at every n, by design and not :func:`stats.mean_ci`'s rule
    (BCa from 20 values): it is the interval that matches the test and the power analysis (:func:`stats.power`),
    so it excludes 0 exactly when p < 1 - ``confidence``.

    The family is the candidates' pairs: agents not ranked (mostly engine fallbacks) are left out of the table
    (``attrs["not_ranked"]`` lists them); a reference that is not a candidate (``candidate`` False in
    :func:`seat_results`: its own leagues under ``runs/reference``) is a yardstick, not a hypothesis, so its pairs
    stay in the table with their p and interval but ``in_family`` False, ``p_holm`` NaN, ``significant`` empty,
    and do not count in Holm's m (``attrs["outside_family"]`` lists it)."""
    from scipy import stats as sps

    from ffbench_lib.core.stats import holm

    ranked = scores[scores["ranked"]] if "ranked" in scores else scores
    yardstick = set(ranked.loc[~ranked["candidate"].astype(bool), "agent"]) if "candidate" in ranked else set()
    wide = ranked.pivot_table(index=[c for c in BLOCK if c in ranked], columns="agent", values=value)
    order = list(ranked.groupby("agent")[value].mean().sort_values(ascending=False).index)
    rows = []
    for a, b in combinations(order, 2):
        both = wide[[a, b]].dropna()
        d = (both[a] - both[b]).to_numpy(dtype=float)
        n = len(d)
        row = {"agent_a": a, "agent_b": b, "n": n, "mean_diff": float(d.mean()) if n else np.nan,
               "sd_diff": float(d.std(ddof=1)) if n > 1 else np.nan, "ci_low": np.nan, "ci_high": np.nan,
               "ci_method": "none", "p_value": np.nan}
        if n >= 2 and np.ptp(d) > 0:
            res = sps.ttest_1samp(d, 0.0)
            ci = res.confidence_interval(confidence)
            row.update(ci_low=float(ci.low), ci_high=float(ci.high), ci_method="t-interval",
                       p_value=float(res.pvalue))
        elif n >= 2:  # every seed the same difference: no spread, the test is undefined
            row.update(ci_low=float(d[0]), ci_high=float(d[0]), ci_method="t-interval",
                       p_value=1.0 if d[0] == 0 else 0.0)
        rows.append(row)
    out = pd.DataFrame(rows, columns=["agent_a", "agent_b", "n", "mean_diff", "sd_diff", "ci_low", "ci_high",
                                      "ci_method", "p_value"])
    out["in_family"] = ~(out["agent_a"].isin(yardstick) | out["agent_b"].isin(yardstick))
    out["p_holm"] = np.nan
    if out["in_family"].any():  # holm leaves an untested pair (NaN p) NaN and out of m
        out.loc[out["in_family"], "p_holm"] = holm(out.loc[out["in_family"], "p_value"])
    out["significant"] = pd.array([bool(p < alpha) if fam and np.isfinite(p) else (False if fam else pd.NA)
                                   for p, fam in zip(out["p_holm"], out["in_family"])], dtype="boolean")
    out.attrs["not_ranked"] = sorted(set(scores["agent"]) - set(ranked["agent"]))
    out.attrs["outside_family"] = sorted(yardstick)
    return out
