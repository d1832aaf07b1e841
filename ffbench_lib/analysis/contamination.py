"""Is the model remembering? Masked vs unmasked runs of the same league on the same seeds, paired by seed (and
season: runs of several seasons pair season by season, and a season before a model's knowledge cutoff is compared
with one after it, :func:`cutoff_split`).

A model that plays 2024 well because it remembers 2024 loses that edge when players and teams are pseudonyms
(``information.masking``). Per agent: the paired change (masked - unmasked) of season points and win share, its
95% CI by the project's one rule (:func:`stats.mean_ci`: a t-interval below 20 seeds, BCa from there on; named
in ``ci_method``) and a paired test; the agreement of the two rankings (Kendall's tau); the knowledge probe's
result beside each model; and a :func:`verdict` that trusts the unmasked ranking only on enough seeds.

Runs are refused, never quietly dropped or mixed: unpaired seeds, configs that differ in more than the masking,
incomplete runs, and runs whose agents were mostly engine repairs would all make the comparison say something
it does not measure.
"""
from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import ValidationError
from pydantic_core import to_jsonable_python
from scipy import stats as sps

from ffbench_lib.analysis import metrics
from ffbench_lib.core import stats
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import parse_config
from ffbench_lib.config.diff import config_differences
from ffbench_lib.analysis.metrics import Runs
from ffbench_lib.analysis.field_labels import short
from ffbench_lib.records.load import RunFiles
from ffbench_lib.records.probe import ProbeFile
from ffbench_lib.records.run import RunMeta, RunMetaError

#: config keys a masked twin may differ in besides the masking itself (a batch names its league after itself)
IGNORED_KEYS = ("information.masking", "name")
#: fewest paired seeds to trust the unmasked ranking (an equivalence claim needs more than a handful of seeds)
MIN_SEEDS = 6
#: fewest changed seeds for a Wilcoxon test (with 5 pairs its smallest two-sided p is 0.0625: it could never reject)
WILCOXON_MIN = 6
#: a change smaller than this share of the agent's unmasked season points does not matter for a ranking
TOLERANCE = 0.05

Status = Literal["trusted", "not trusted", "cannot tell"]


class ContaminationError(ValueError):
    """The runs cannot be compared: one line naming the runs, what is wrong and the fix."""


# ------------------------------------------------------------------------------------------------ loading
@dataclass
class Paired:
    """Both sides loaded by :func:`metrics.load_runs`, and one row per seed naming its two runs."""
    unmasked: Runs
    masked: Runs
    pairs: pd.DataFrame  # season, seed, unmasked_run_id, masked_run_id, unmasked_path, masked_path, same_code
    masking: str
    season: int | None  # the season of every pair; None when they span several (``seasons``)
    seasons: list[str] = field(default_factory=list)  # the pairs' strata, ``<sport>-<season>`` (nfl-2024)


def _side(runs, label: str) -> list[tuple[Path, RunMeta, dict]]:
    try:
        paths = metrics.expand_paths(runs)
    except FileNotFoundError as exc:
        hint = ("; make the masked twin of a batch with the same seeds and `overrides: {information: {masking: "
                "players_and_teams}}` (e.g. ffbench batch params/batch_demo_masked.yaml)") if label == "masked" else ""
        raise ContaminationError(f"{label}: {exc}{hint}") from None
    out = []
    for p in paths:
        try:
            meta = RunFiles(p).meta()
        except RunMetaError as exc:
            raise ContaminationError(f"{label}: {exc}") from None
        cfg_file = p / "config.yaml"
        cfg = yaml.safe_load(cfg_file.read_text(encoding="utf-8")) if cfg_file.exists() else None
        if not isinstance(cfg, dict):
            raise ContaminationError(f"{label}: run {p} has no readable config.yaml; it is not a run directory")
        out.append((p, meta, cfg))
    return out


def _league(cfg: dict, path: Path, label: str) -> League:
    """A stored config read through the League model, as both sides must be before they are compared (config.yaml
    leaves defaults out); one this version cannot read is refused rather than compared half-read."""
    try:
        return parse_config(cfg)
    except ConfigError as exc:
        raise ContaminationError(f"{label}: {path / 'config.yaml'} is not a league config this ffbench reads "
                                 f"({exc.problems[0].strip()}); its run cannot be compared: re-run it with this "
                                 "version") from None


def _value(league: League, key: str):
    """The value at a flattened config key (``playoffs.enabled``, ``teams[3].agent.model``) of a parsed league,
    defaults included (a dump leaves default sections out); None where the league has no such key."""
    obj = league
    for part in re.findall(r"\[\d+\]|[^.\[\]]+", key):
        if part.startswith("["):
            obj = obj[int(part[1:-1])] if isinstance(obj, (list, tuple)) and int(part[1:-1]) < len(obj) else None
        else:
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            return None
    return to_jsonable_python(obj)


def config_changes(ucfg: dict, mcfg: dict, upath: Path, mpath: Path) -> dict[str, tuple]:
    """Config keys (besides :data:`IGNORED_KEYS`) whose value differs between two stored configs, both read through
    the League model: key -> (unmasked value, masked value)."""
    lu, lm = _league(ucfg, upath, "unmasked"), _league(mcfg, mpath, "masked")
    out = {}
    for k, (a, b) in config_differences(lu.model_dump(mode="json"), lm, include_resumable=False).items():
        a, b = (_value(lu, k) if a is None else a), (_value(lm, k) if b is None else b)  # a default left out
        if k not in IGNORED_KEYS and a != b:
            out[k] = (a, b)
    return out


def _masking(cfg: dict) -> str:
    return str((cfg.get("information") or {}).get("masking") or "off")


def _check_complete(side: list[tuple[Path, RunMeta, dict]], label: str) -> None:
    bad = []
    for p, meta, _ in side:
        status = meta.status
        if status == "complete":
            continue
        reason = str(meta.reason or "no reason recorded")
        why = ("stopped by the fallback guard: its LLM team's decisions were mostly engine repairs"
               if "max_fallback_rate" in reason else f"{status}: {reason[:160]}")
        bad.append(f"{p} ({why})")
    if bad:
        raise ContaminationError(
            f"{label}: {len(bad)} run(s) not complete: {'; '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}; "
            "finish them (ffbench run --resume, or re-run the batch) or leave their seed out of both sides")


def stratum(cfg: dict) -> str:
    """A stored config's season with its sport, ``<sport>-<season>`` (``nfl-2024``, ``fpl-2024-25``): the unit
    runs pair within."""
    from ffbench_lib.config.league import DEFAULT_SPORT
    from ffbench_lib.sport import sport

    spec = sport(cfg.get("sport", DEFAULT_SPORT))
    year = spec.season_year(cfg.get("season"))
    return spec.stratum(year) if year is not None else f"{spec.name}-{cfg.get('season')}"


def _by_seed(side: list[tuple[Path, RunMeta, dict]], label: str) -> dict[tuple[str, int], tuple[Path, RunMeta, dict]]:
    """Each run keyed by (season, seed): one run per seed of each season on each side."""
    out: dict[tuple[str, int], tuple[Path, RunMeta, dict]] = {}
    for item in side:
        key = (stratum(item[2]), item[1].seed)
        if key in out:
            raise ContaminationError(f"{label}: seed {key[1]} appears twice in {key[0]} ({out[key][0]} and "
                                     f"{item[0]}); give one run per seed and season on each side")
        out[key] = item
    return out


def _keys(keys) -> str:
    """(season, seed) keys in words: ``nfl-2023 seeds 0, 1; nfl-2024 seed 3``."""
    by: dict[str, list[int]] = {}
    for season, seed in sorted(keys):
        by.setdefault(season, []).append(seed)
    return "; ".join(f"{s} seed{'s' if len(v) > 1 else ''} {', '.join(map(str, v))}" for s, v in by.items()) or "none"


def load_pairs(unmasked, masked) -> Paired:
    """Pair the runs of ``unmasked`` and ``masked`` (paths, globs or folders of runs, as :func:`metrics.load_runs`
    takes; a study's batch folders) by season and seed; :class:`ContaminationError` if they are not the same
    league on the same seeds of the same seasons with and without masking, or if a run is incomplete or its
    agents were mostly engine repairs."""
    u_side, m_side = _side(unmasked, "unmasked"), _side(masked, "masked")
    _check_complete(u_side, "unmasked")
    _check_complete(m_side, "masked")
    wrong = [str(p) for p, _, c in u_side if _masking(c) != "off"]
    if wrong:
        raise ContaminationError(f"unmasked: {len(wrong)} run(s) were played masked (information.masking set), e.g. "
                                 f"{wrong[0]}; give them as masked")
    wrong = [str(p) for p, _, c in m_side if _masking(c) == "off"]
    if wrong:
        raise ContaminationError(f"masked: {len(wrong)} run(s) were played unmasked (no information.masking), e.g. "
                                 f"{wrong[0]}; give masked runs (a batch with overrides: {{information: {{masking: "
                                 "players_and_teams}})")
    modes = sorted({_masking(c) for _, _, c in m_side})
    if len(modes) > 1:
        raise ContaminationError(f"masked: runs of several masking modes ({', '.join(modes)}); compare one mode "
                                 "at a time")
    absent = [str(p) for p, _, _ in m_side if not (p / "masking.json").exists()]
    if absent:
        raise ContaminationError(f"masked: {len(absent)} run(s) have masking set but no masking.json, e.g. "
                                 f"{absent[0]}: they were played by an ffbench without masking (their prompts "
                                 "showed real names); run them again")
    u, m = _by_seed(u_side, "unmasked"), _by_seed(m_side, "masked")
    only_u, only_m = sorted(set(u) - set(m)), sorted(set(m) - set(u))
    if only_u or only_m:
        several = len({k[0] for k in (*u, *m)}) > 1
        show = _keys if several else (lambda ks: str(sorted(k[1] for k in ks)) if ks else "none")
        raise ContaminationError(
            f"unpaired seeds: only unmasked {show(only_u)}, only masked {show(only_m)}; every seed needs "
            f"one unmasked and one masked run{' of its season' if several else ''} (run the missing ones, or leave "
            "those seeds out of both sides)")
    for key in sorted(u):
        seed = key[1] if len({k[0] for k in u}) == 1 else f"{key[1]} of {key[0]}"
        (up, umeta, ucfg), (mp, mmeta, mcfg) = u[key], m[key]
        diff = config_changes(ucfg, mcfg, up, mp)
        if diff:
            what = "; ".join(f"{k}: {a!r} unmasked, {b!r} masked" for k, (a, b) in list(diff.items())[:3])
            raise ContaminationError(
                f"seed {seed}: the configs of {up} and {mp} differ in more than the masking ({what}"
                f"{' ...' if len(diff) > 3 else ''}); pair runs of one league (a batch and its twin with overrides)")
        if umeta.data_fingerprint != mmeta.data_fingerprint:
            raise ContaminationError(
                f"seed {seed}: {up} and {mp} were played on different prepared data (data_fingerprint "
                f"{umeta.data_fingerprint} vs {mmeta.data_fingerprint}); re-run one of them on the "
                "other's data")
    seeds = sorted(u)
    with warnings.catch_warnings():  # nothing is excluded: every run was checked complete above
        warnings.simplefilter("ignore", UserWarning)
        data_u = metrics.load_runs([u[s][0] for s in seeds])
        data_m = metrics.load_runs([m[s][0] for s in seeds])
    for data, label in ((data_u, "unmasked"), (data_m, "masked")):
        info = metrics.agent_info(data)
        bad = info[info["flagged"] | info["draft_flagged"]]
        if len(bad):
            rates = ", ".join(f"{r.agent} ({max(r.fallback_rate, r.draft_fallback_rate):.0%})"
                              for r in bad.itertuples())
            raise ContaminationError(
                f"{label}: the engine repaired more than {metrics.MAX_FALLBACK_RATE:.0%} of the decisions of "
                f"{rates}: those results measure the engine, not the model; fix the cause (llm_calls.jsonl) and "
                "re-run, or leave those runs out of both sides")
    ids = {side: dict(zip(d["meta"]["path"], d["meta"]["run_id"])) for side, d in (("u", data_u), ("m", data_m))}
    pairs = pd.DataFrame([{"season": k[0], "seed": k[1], "unmasked_run_id": ids["u"][str(u[k][0])],
                           "masked_run_id": ids["m"][str(m[k][0])], "unmasked_path": str(u[k][0]),
                           "masked_path": str(m[k][0]), "same_code": u[k][1].code_fingerprint ==
                           m[k][1].code_fingerprint} for k in seeds])
    strata = list(dict.fromkeys(pairs["season"]))
    years = {u[k][1].season for k in seeds}
    return Paired(data_u, data_m, pairs, modes[0], years.pop() if len(strata) == 1 else None, strata)


# ------------------------------------------------------------------------------------------------ comparison
def per_seed(paired: Paired) -> pd.DataFrame:
    """One row per (season, seed, agent) that played both runs of the seed: regular-season points for
    (``points``) and win share (``win_rate``, ties half) from :func:`metrics.standings`, averaged over the
    agent's teams, unmasked, masked, and ``*_diff`` = masked - unmasked; ``season`` is the pair's stratum
    (``nfl-2024``)."""
    sides = []
    for data, label in ((paired.unmasked, "unmasked"), (paired.masked, "masked")):
        st = metrics.standings(data).rename(columns={"points_for": "points"})
        v = metrics.per_agent(st, "points").merge(metrics.per_agent(st, "win_rate"), on=["run_id", "agent"])
        key = paired.pairs.set_index(f"{label}_run_id")
        v["season"], v["seed"] = v["run_id"].map(key["season"]), v["run_id"].map(key["seed"])
        sides.append(v.drop(columns="run_id").rename(columns={"points": f"points_{label}",
                                                               "win_rate": f"win_rate_{label}"}))
    out = sides[0].merge(sides[1], on=["season", "seed", "agent"], how="inner")
    out["points_diff"] = out["points_masked"] - out["points_unmasked"]
    out["win_rate_diff"] = out["win_rate_masked"] - out["win_rate_unmasked"]
    cols = ["season", "seed", "agent", "points_unmasked", "points_masked", "points_diff", "win_rate_unmasked",
            "win_rate_masked", "win_rate_diff"]
    out = out.sort_values(["agent", "season", "seed"], ignore_index=True)[cols]
    return out if paired.season is None else out.drop(columns="season")  # one season: the columns it always had


def paired_test(diffs) -> tuple[str, float, float]:
    """(test name, statistic, two-sided p) for paired differences: Wilcoxon signed-rank when at least
    :data:`WILCOXON_MIN` of them are non-zero, else a one-sample t-test of the differences (a Wilcoxon test
    on fewer could not reach p < 0.05), none below two pairs or when nothing changed."""
    d = np.asarray(diffs, dtype=float)
    nonzero = int(np.count_nonzero(d))
    if len(d) < 2:
        return "none (fewer than 2 seeds)", np.nan, np.nan
    if nonzero == 0:
        return "none (no change in any seed)", np.nan, 1.0
    if nonzero >= WILCOXON_MIN:
        res = sps.wilcoxon(d, zero_method="wilcox")
        return "Wilcoxon signed-rank", float(res.statistic), float(res.pvalue)
    with warnings.catch_warnings():  # identical differences: the t statistic is infinite, as it should be
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sps.ttest_1samp(d, 0.0)
    return f"paired t-test ({nonzero} changed seeds < {WILCOXON_MIN})", float(res.statistic), float(res.pvalue)


is_bot = metrics.is_bot


def paired_changes(seeds: pd.DataFrame, value: str = "points", confidence: float = 0.95) -> pd.DataFrame:
    """Per agent over seeds (``seeds`` as :func:`per_seed` returns): unmasked and masked means, the mean paired
    change with its 95% CI (:func:`stats.mean_ci`, method in ``ci_method``), the change relative to the unmasked
    mean, the paired test and its
    p-value, and ``p_holm``: Holm-corrected over the models only. Bots are the control (they cannot remember), not
    hypotheses about memory, so they stay out of the family and their ``p_holm`` is empty."""
    rows = []
    for agent, g in seeds.groupby("agent"):
        d = g[f"{value}_diff"].to_numpy(dtype=float)
        lo, hi, method = stats.mean_ci(d, confidence)
        test, stat, p = paired_test(d)
        base = float(g[f"{value}_unmasked"].mean())
        rows.append({"agent": agent, "n": len(d), f"{value}_unmasked": base,
                     f"{value}_masked": float(g[f"{value}_masked"].mean()), "mean_diff": float(d.mean()),
                     "ci_low": lo, "ci_high": hi, "ci_method": method,
                     "rel_diff": float(d.mean()) / abs(base) if base else np.nan,
                     "seeds_lower": int((d < 0).sum()), "seeds_higher": int((d > 0).sum()),
                     "test": test, "statistic": stat, "p_value": p})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"] = np.nan
    ok = out["p_value"].notna() & ~out["agent"].map(is_bot)
    if ok.any():
        out.loc[ok, "p_holm"] = stats.holm(out.loc[ok, "p_value"])
    return out.sort_values(f"{value}_unmasked", ascending=False, ignore_index=True)


def rank_agreement(seeds: pd.DataFrame, value: str = "points") -> dict:
    """Kendall's tau (scipy.stats.kendalltau, tau-b) between the agents' unmasked and masked rankings by mean
    ``value`` over seeds (1: same order), with the two orders."""
    means = seeds.groupby("agent")[[f"{value}_unmasked", f"{value}_masked"]].mean()
    u = list(means[f"{value}_unmasked"].sort_values(ascending=False).index)
    m = list(means[f"{value}_masked"].sort_values(ascending=False).index)
    if len(means) < 2:
        return {"tau": np.nan, "p_value": np.nan, "n_agents": len(means), "unmasked_order": u, "masked_order": m}
    res = sps.kendalltau(means[f"{value}_unmasked"], means[f"{value}_masked"])
    return {"tau": float(res.statistic), "p_value": float(res.pvalue), "n_agents": len(means),
            "unmasked_order": u, "masked_order": m}


# ------------------------------------------------------------------------------------------------ probe
PROBE_COLUMNS = ["agent", "probe_recall_advantage", "probe_ci_low", "probe_ci_high", "probe_n", "probe_remembers",
                 "probe_verdict"]


def load_probe(path: str | Path, season: int | list[int] | None = None) -> pd.DataFrame:
    """The knowledge probe's result per model (``probe.json``, or a folder holding it), keyed by ``agent``; a
    probe of another season than ``season`` is refused (it would say nothing about these runs)."""
    p = Path(path)
    f = p / "probe.json" if p.is_dir() else p
    if not f.is_file():
        raise ContaminationError(f"probe: {f} not found; give the probe.json that `ffbench probe` wrote (or its "
                                 "folder), or no probe")
    try:
        probe = ProbeFile.model_validate(json.loads(f.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ContaminationError(f"probe: {f} is not JSON ({exc}); run `ffbench probe` again") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise ContaminationError(f"probe: {f}: {where}: {first['msg']}; it is not a probe.json of `ffbench probe`") \
            from None
    seasons = [season] if isinstance(season, int) else list(season) if season is not None else None
    if seasons is not None and probe.season not in seasons:
        played = ", ".join(map(str, seasons))
        raise ContaminationError(f"probe: {f} probed season {probe.season}, the runs played {played}; probe "
                                 f"{seasons[0] if len(seasons) == 1 else 'one of them'} (ffbench probe CONFIG "
                                 f"--season {seasons[0]})")
    rows = [{"agent": m.agent_id, "probe_recall_advantage": m.recall_advantage, "probe_ci_low": m.ci_low,
             "probe_ci_high": m.ci_high, "probe_n": m.n, "probe_remembers": m.remembers,
             "probe_verdict": m.verdict} for m in probe.models]
    return pd.DataFrame(rows, columns=PROBE_COLUMNS)


def with_probe(changes: pd.DataFrame, probe: pd.DataFrame | None) -> pd.DataFrame:
    """``changes`` with the probe's columns beside each model (empty for bots and unprobed models)."""
    probe = probe if probe is not None else pd.DataFrame(columns=PROBE_COLUMNS)
    return changes.merge(probe, on="agent", how="left")


# ------------------------------------------------------------------------------------------------ verdict
@dataclass
class Verdict:
    status: Status
    headline: str
    reasons: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        return f"**{self.headline}**\n\n" + "\n".join(f"- {r}" for r in self.reasons)

    def __str__(self) -> str:
        return "\n".join([self.headline, *(f"  - {r}" for r in self.reasons)])


def _fmt(r, value: str) -> str:
    unit = "points" if value == "points" else "win share"
    num = (lambda x: f"{x:+.1f}") if value == "points" else (lambda x: f"{x:+.3f}")
    if r.test.startswith("none"):
        p = f", {r.test}"
    elif is_bot(r.agent):
        p = f", {r.test} p = {r.p_value:.3g} (a control: outside the Holm family)"
    else:
        p = f", {r.test} p = {r.p_value:.3g} (Holm-corrected over the models {r.p_holm:.3g})"
    ci = "" if np.isnan(r.ci_low) else f", {stats.ci_label(r.ci_method)} {num(r.ci_low)} to {num(r.ci_high)}"
    rel = "" if np.isnan(r.rel_diff) else f" ({r.rel_diff:+.1%})"
    return (f"{r.agent}: {num(r.mean_diff)} {unit} masked vs unmasked{rel}{ci}, lower in {r.seeds_lower} and "
            f"higher in {r.seeds_higher} of {r.n} seeds{p}")


def _bot_note(r) -> str:
    return (" A bot cannot remember and sees real names even in masked runs (Agent.masked_views): its change comes "
            "from the other teams' changed play, a measure of the comparison's noise.") if is_bot(r.agent) else ""


def _probe_note(r) -> str:
    if not hasattr(r, "probe_remembers") or (pd.isna(r.probe_remembers) and pd.isna(r.probe_recall_advantage)):
        return "" if is_bot(r.agent) else " No probe result for this model."
    adv = "" if pd.isna(r.probe_recall_advantage) else (
        f" (recall advantage {r.probe_recall_advantage:+.1f} points, 95% CI {r.probe_ci_low:+.1f} to "
        f"{r.probe_ci_high:+.1f})")
    said = {True: "The probe says it remembers the season", False: "The probe finds no evidence that it remembers "
            "the season"}.get(_remembers(r), "The probe could not score it (no answers)")
    return f" {said}{adv}."


def _remembers(r) -> bool | None:
    flag = getattr(r, "probe_remembers", None)
    return bool(flag) if isinstance(flag, (bool, np.bool_)) else None


def _line(r, value: str) -> str:
    return _fmt(r, value) + "." + _bot_note(r) + _probe_note(r)


def _names(rows) -> str:
    names = [short(r.agent) for r in rows]
    return ", ".join(names) if len(names) <= 3 else f"{', '.join(names[:3])} and {len(names) - 3} more"


def verdict(changes: pd.DataFrame, agreement: dict | None = None, value: str = "points",
            min_seeds: int = MIN_SEEDS, tolerance: float = TOLERANCE, masking: str = "players_and_teams") -> Verdict:
    """See :func:`_verdict`; every probed model is named in the reasons, with the probe's result."""
    v = _verdict(changes, agreement, value, min_seeds, tolerance, masking)
    named = " ".join(v.reasons)
    for r in changes.itertuples(index=False):
        if "probe_remembers" in changes and pd.notna(r.probe_recall_advantage) and f"{r.agent}:" not in named:
            v.reasons.append(_line(r, value))
    return v


def _verdict(changes: pd.DataFrame, agreement: dict | None, value: str, min_seeds: int, tolerance: float,
             masking: str) -> Verdict:
    """Whether the unmasked ranking can be trusted, from the 95% CI (:func:`stats.mean_ci`) of each agent's mean change
    (:func:`paired_changes`, optionally :func:`with_probe`) against the band of +-``tolerance`` of its unmasked
    mean (a change inside the band does not matter for a ranking):

    * ``not trusted`` when some agent's CI lies entirely beyond the band: a material change, significant;
    * ``trusted`` with at least ``min_seeds`` paired seeds and every agent's CI inside the band: an equivalence
      claim (TOST-like: each CI inside the band rejects, at 2.5% per side, a change as large as the band; since
      every agent must pass, no multiplicity correction is needed);
    * ``cannot tell`` otherwise, saying why: too few seeds, a CI reaching across a band edge (too wide), or a
      significant change that may be smaller than the band.

    The paired tests' p-values are reported, not used: at 6 seeds Wilcoxon's smallest p is 0.031, which no
    correction over several agents lets reach 0.05.
    """
    if changes.empty:
        return Verdict("cannot tell", "Cannot tell: no agent played both a masked and an unmasked run.", [])
    n = int(changes["n"].min())
    what = {"players": "players were", "players_and_teams": "players and teams were"}.get(masking, "names were")
    unit = "season points" if value == "points" else "win share"
    reasons = []
    if agreement is not None and not np.isnan(agreement.get("tau", np.nan)):
        same = agreement["unmasked_order"] == agreement["masked_order"]
        reasons.append(f"Rank agreement of the {agreement['n_agents']} agents (mean {value} over seeds): Kendall's "
                       f"tau = {agreement['tau']:.2f}" + (" (the same order)." if same else
                                                         f", p = {agreement['p_value']:.3g}."))
    rows = list(changes.itertuples(index=False))
    margin = {r.agent: tolerance * abs(getattr(r, f"{value}_unmasked")) for r in rows}
    band = f"\u00b1{tolerance:.0%} of {{}} unmasked {unit}"  # within the band
    by = f"{tolerance:.0%} of {{}} unmasked {unit}"  # a change by more than that

    def where(r) -> str:
        lo, hi, m = r.ci_low, r.ci_high, margin[r.agent]
        if np.isnan(lo) or np.isnan(hi):
            return "none"
        if hi < -m or lo > m:
            return "beyond"
        return "inside" if -m <= lo and hi <= m else "across"

    def significant(r) -> bool:
        return bool(r.ci_low > 0 or r.ci_high < 0)

    beyond = [r for r in rows if where(r) == "beyond"]
    if beyond:
        models = sorted((r for r in beyond if not is_bot(r.agent)), key=lambda r: r.mean_diff)
        if models:
            lower = all(r.mean_diff < 0 for r in models)
            higher = all(r.mean_diff > 0 for r in models)
            how = "scored less" if lower else "scored more" if higher else "scored differently"
            its = "its" if len(models) == 1 else "their"
            head = (f"Not trusted: {_names(models)} {how} when {what} masked, by more than "
                    f"{by.format(its)} (the whole 95% CI lies beyond that band, on {n} paired seeds): "
                    f"{its} unmasked results depend on seeing the real names.")
            if lower:
                reasons_tail = ["Remembering the season gives such a drop; so could pseudonyms the model handles "
                                "worse than names. The knowledge probe (ffbench probe) tells the two apart."]
            else:
                reasons_tail = []
        else:
            its = "its" if len(beyond) == 1 else "their"
            head = (f"Not trusted: the {unit} of {_names(beyond)} changed by more than {by.format(its)} when "
                    f"{what} masked (the whole 95% CI lies beyond that band, on {n} paired seeds); a bot "
                    "cannot remember and sees real names either way, so the other teams' play changed with the "
                    "names: the unmasked results depend on them.")
            reasons_tail = []
        for r in sorted(beyond, key=lambda r: (is_bot(r.agent), r.mean_diff)):
            reasons.append(_line(r, value))
        return Verdict("not trusted", head, reasons + reasons_tail + [
            "Compare models on masked runs instead, or on a season after their knowledge cutoff."])
    unclear = [r for r in rows if where(r) in ("across", "none")]
    if not unclear and n >= min_seeds:
        head = (f"Trusted: on {n} paired seeds every agent's 95% CI of its change in {unit} when {what} masked "
                f"lies within {band.format('its')} (an equivalence test, TOST-like): the unmasked ranking does not "
                "rest on seeing the real names.")
        for r in rows:
            if significant(r):
                reasons.append(_fmt(r, value) + f": a significant change, but smaller than {tolerance:.0%}."
                               + _bot_note(r))
        for r in rows:
            if _remembers(r):
                reasons.append(f"{r.agent} remembers the season (probe) but masking does not change its results "
                               "materially: its memory does not drive them here.")
        if agreement is not None and agreement.get("unmasked_order") != agreement.get("masked_order"):
            reasons.append("The two orders differ only among agents within the band of each other; whether those "
                           "agents differ at all is what 08_model_comparison tests.")
        return Verdict("trusted", head, reasons)
    few = (f"{n} paired seed{'s' if n != 1 else ''}, fewer than the {min_seeds} needed to trust the unmasked "
           "ranking")
    if n < 2:
        return Verdict("cannot tell", f"Cannot tell: {few}; one seed gives no confidence interval.", reasons)
    if not unclear:
        head = (f"Cannot tell: every agent's 95% CI lies within {band.format('its')}, but on only {few}; run more "
                "seeds.")
        return Verdict("cannot tell", head, reasons + [
            f"No agent changed by more than {tolerance:.0%} on these seeds, but so few seeds cannot establish it."])
    sig = [r for r in unclear if significant(r)]
    flat = [r for r in unclear if not significant(r)]
    parts = []
    if sig:
        parts.append(f"{_names(sig)} changed significantly (95% CI excludes 0), but the CI reaches across the "
                     f"edge of the \u00b1{tolerance:.0%} band: the change may or may not matter")
    if flat:
        parts.append(f"the 95% CI{'s' if len(flat) > 1 else ''} of {_names(flat)} "
                     f"{'are' if len(flat) > 1 else 'is'} too wide to rule a change of more than {tolerance:.0%} "
                     "in or out")
    head = f"Cannot tell: {'; '.join(parts)}; run more seeds" + (f" ({few})." if n < min_seeds else ".")
    for r in sorted(unclear, key=lambda r: (is_bot(r.agent), r.mean_diff)):
        reasons.append(_line(r, value))
    return Verdict("cannot tell", head, reasons)


def changes_by_season(seeds: pd.DataFrame, value: str = "points", confidence: float = 0.95) -> pd.DataFrame:
    """:func:`paired_changes` within each season of a study (``season`` column first); empty for one season."""
    if "season" not in seeds:
        return pd.DataFrame()
    parts = [paired_changes(g, value, confidence).assign(season=season) for season, g in seeds.groupby("season")]
    out = pd.concat(parts, ignore_index=True)
    return out[["season", *[c for c in out.columns if c != "season"]]]


#: how the cutoff comparison names the two kinds of season
BEFORE, AFTER = "before cutoff", "after cutoff"


def cutoff_seasons(paired: Paired) -> pd.DataFrame:
    """Per (agent, season) of the unmasked runs: the model's ``knowledge_cutoff`` and whether it may know that
    season's results (run.json's ``knowledge_cutoffs``: the season ended on or before the cutoff), as ``when``:
    :data:`BEFORE` (the season lies before the cutoff: it may remember it), :data:`AFTER` (it cannot), or None
    (no cutoff given, or the dates could not be compared)."""
    rows = []
    season_of = paired.pairs.set_index("unmasked_path")["season"]
    for path, season in season_of.items():
        meta = RunFiles(path).meta()
        for c in meta.knowledge_cutoffs or []:
            for team in c.teams:
                agent = meta.agents.get(team)
                if agent is None:
                    continue
                when = None if c.may_know_results is None else BEFORE if c.may_know_results else AFTER
                rows.append({"agent": agent, "season": season, "knowledge_cutoff": c.knowledge_cutoff, "when": when})
    return pd.DataFrame(rows, columns=["agent", "season", "knowledge_cutoff", "when"]).drop_duplicates(
        ["agent", "season"], ignore_index=True)


def cutoff_split(paired: Paired, seeds: pd.DataFrame, value: str = "points", confidence: float = 0.95
                 ) -> pd.DataFrame:
    """Per model whose runs span a season before its knowledge cutoff and one after it: the masking change
    (masked - unmasked) in the seasons it may remember against the seasons it cannot, and their difference
    (``memory_effect`` = mean over the seasons before of each season's mean change - the same after). Why:
    masking also costs a model what it knows of players in general (last season, a star's reputation), in every
    season; only the part of the change that appears where it may have read the results is memory of them.

    The season is the unit: each season's seeds replay its real weeks, so they are repeated measures of that
    season, and a season's own masking change (how its pseudonyms happened to fall, its data) would read as memory
    if seeds were counted. The interval and p (a Welch t-test of the season means, scipy.stats.ttest_ind) need 2
    or more seasons on each side; with one on a side the effect is given without either (``test`` says so): one
    season before and one after cannot tell memory from the two seasons' difference. A bot, or a model without a
    cutoff on both sides, gets no row (its ``note`` in ``attrs["notes"]`` says why)."""
    cols = ["agent", "knowledge_cutoff", "seasons_before", "seasons_after", "n_before", "n_after", "change_before",
            "change_after", "memory_effect", "ci_low", "ci_high", "p_value", "test"]
    notes: dict[str, str] = {}
    out = pd.DataFrame(columns=cols)
    out.attrs["notes"] = notes
    if "season" not in seeds:
        return out
    when = cutoff_seasons(paired)
    rows = []
    for agent, g in seeds.groupby("agent"):
        if is_bot(agent) or metrics.is_human(agent):
            continue
        w = when[when["agent"] == agent].set_index("season")["when"]
        if w.empty:
            notes[agent] = ("no knowledge_cutoff in its runs: give the model's knowledge_cutoff in the league "
                            "(teams[].agent.knowledge_cutoff) to compare seasons before and after it")
            continue
        g = g.assign(when=g["season"].map(w))
        before, after = g[g["when"] == BEFORE], g[g["when"] == AFTER]
        if before.empty or after.empty:
            have = BEFORE if len(before) else AFTER if len(after) else "unknown"
            notes[agent] = (f"every season here is {have} (its cutoff {when.loc[when['agent'] == agent, 'knowledge_cutoff'].iloc[0]}): "
                            "add a season on the other side of it (NFL 2025 and FPL 2025-26 are the newest)")
            continue
        a = before.groupby("season")[f"{value}_diff"].mean().to_numpy(float)  # one value per season
        b = after.groupby("season")[f"{value}_diff"].mean().to_numpy(float)
        effect = float(a.mean() - b.mean())
        lo = hi = p = np.nan
        if len(a) >= 2 and len(b) >= 2 and (a.std() > 0 or b.std() > 0):
            res = sps.ttest_ind(a, b, equal_var=False)
            ci = res.confidence_interval(confidence)
            lo, hi, p = float(ci.low), float(ci.high), float(res.pvalue)
        rows.append({"agent": agent, "knowledge_cutoff": when.loc[when["agent"] == agent, "knowledge_cutoff"].iloc[0],
                     "seasons_before": ", ".join(sorted(before["season"].unique())),
                     "seasons_after": ", ".join(sorted(after["season"].unique())), "n_before": len(a),
                     "n_after": len(b), "change_before": float(a.mean()), "change_after": float(b.mean()),
                     "memory_effect": effect, "ci_low": lo, "ci_high": hi, "p_value": p,
                     "test": "Welch two-sample t-test of the seasons' mean changes" if np.isfinite(p) else
                     "none: not testable with fewer than 2 seasons on a side (a season's seeds are not seasons)"
                     if min(len(a), len(b)) < 2 else "none (no spread between seasons)"})
    out = pd.DataFrame(rows, columns=cols)
    out.attrs["notes"] = notes
    return out


def cutoff_lines(split: pd.DataFrame, value: str = "points") -> list[str]:
    """The cutoff comparison in words, one line per model (and per note)."""
    unit = "season points" if value == "points" else "win share"
    lines = []
    for r in split.itertuples(index=False):
        ci = (f" (95% CI {r.ci_low:+.1f} to {r.ci_high:+.1f}, p = {r.p_value:.3g})" if np.isfinite(r.ci_low)
              else f" ({r.test})")
        says = ("" if not np.isfinite(r.ci_low) else
                ": masking costs it more where it may have read the results, which is memory of them"
                if r.ci_high < 0 else ": masking costs it less where it may have read the results"
                if r.ci_low > 0 else ": no evidence that the change differs between the two")
        lines.append(f"{r.agent} (knowledge cutoff {r.knowledge_cutoff}): masking changed its {unit} by "
                     f"{r.change_before:+.1f} in seasons before its cutoff ({r.seasons_before}) and "
                     f"{r.change_after:+.1f} after it ({r.seasons_after}), season means: memory effect "
                     f"{r.memory_effect:+.1f}{ci}{says}.")
    lines += [f"{a}: {why}." for a, why in split.attrs.get("notes", {}).items()]
    return lines


def stats_by_condition(seeds: pd.DataFrame, value: str = "points") -> pd.DataFrame:
    """Mean and CI (:func:`stats.mean_ci`) of ``value`` per agent in each condition (the left panel of
    :func:`figure`)."""
    rows = []
    for cond in ("unmasked", "masked"):
        m = stats.agent_means(seeds.rename(columns={f"{value}_{cond}": "v"}).assign(run_id=seeds["seed"]), "v")
        rows.append(m.assign(condition=cond))
    return pd.concat(rows, ignore_index=True)[["agent", "condition", "runs", "mean", "ci_low", "ci_high", "ci_method"]]


def compare(unmasked, masked, probe: str | Path | None = None, value: str = "points") -> dict:
    """Everything the notebook shows: the pairs, per-seed values, per-agent changes of points and win share
    (with the probe beside them), the rank agreement and the verdict (on season points)."""
    paired = load_pairs(unmasked, masked)
    seeds = per_seed(paired)
    years = sorted({int(y) for y in paired.unmasked["meta"]["season"]})
    pr = load_probe(probe, years) if probe else None
    changes = with_probe(paired_changes(seeds, value), pr)
    wins = paired_changes(seeds, "win_rate")
    agreement = rank_agreement(seeds, value)
    v = verdict(changes, agreement, value, masking=paired.masking)
    by_season = changes_by_season(seeds, value)
    split = cutoff_split(paired, seeds, value)
    if not by_season.empty:  # a study: the pooled verdict, then each season's changes and the cutoff comparison
        v.reasons.append(f"Seasons: {', '.join(paired.seasons)}, paired season by season; the verdict pools "
                         "their seeds as if independent, which seeds of one season are not: read it with the "
                         "per-season changes below (a change in one season only is that season's). Per season:")
        for r in by_season[~by_season["agent"].map(is_bot)].itertuples(index=False):
            v.reasons.append(f"{r.season}: {_fmt(r, value)}.")
        v.reasons += cutoff_lines(split, value)
    unmatched = sorted(set(pr["agent"]) - set(changes["agent"])) if pr is not None else []
    if unmatched:
        v.reasons.append(f"The probe also covers {', '.join(unmatched)}, which played none of these runs.")
    other_code = list(paired.pairs.loc[~paired.pairs["same_code"], "seed"])
    if other_code:  # not refused (unmasked play is unchanged by masking's arrival), but said
        v.reasons.append(f"Seed(s) {', '.join(map(str, other_code))}: the two runs were played by different "
                         "versions of the ffbench code (run.json code_fingerprint), so part of their change may be "
                         "the code's.")
    return {"paired": paired, "seeds": seeds, "changes": changes, "win_share": wins, "agreement": agreement,
            "probe": pr, "verdict": v, "by_season": by_season, "cutoff": split}


__all__ = ["ContaminationError", "Paired", "Verdict", "load_pairs", "per_seed", "paired_test", "paired_changes",
           "is_bot", "rank_agreement", "load_probe", "with_probe", "verdict", "stats_by_condition", "compare",
           "stratum", "changes_by_season", "cutoff_seasons", "cutoff_split", "cutoff_lines", "BEFORE", "AFTER",
           "MIN_SEEDS", "TOLERANCE"]
