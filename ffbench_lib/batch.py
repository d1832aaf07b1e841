"""Batches: many seasons across seeds, each executed as ``notebooks/02_simulate_season.ipynb`` by papermill in
a pool of worker processes, then the analysis notebooks over all finished runs and a batch summary.

* one failed run never stops the others; it is reported with its error;
* re-running the same command skips finished runs and resumes partial ones (the engine's checkpoints), only if
  they are runs of the same resolved config (otherwise that seed fails: use another ``out``);
* workers end with the batch process, even when it is killed;
* a provider's ``max_concurrency`` holds for the whole batch: each worker gets ``1/workers`` of it;
* ``design: rotate`` gives every agent every draft slot equally often across ``n_teams`` consecutive seeds.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from tqdm.auto import tqdm

from .atomic import write_csv, write_json, write_text
from .config import ConfigError, League, format_validation_error, load_config, load_yaml, parse_config
from .engine import config_differences
from .rundir import RunDir

ANALYSIS = ("03_standings", "04_positions", "05_draft", "06_start_sit", "07_trades", "08_model_comparison",
            "09_waivers")


class BatchSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "batch"
    base: Path = Field(description="league YAML the runs start from (path relative to the batch file)")
    agents: list[dict[str, Any]] | None = Field(None, description="replace the base teams: [{name, agent}, ...]")
    seeds: list[int] = Field(min_length=1)
    design: Literal["rotate", "random"] = "rotate"
    workers: int = Field(1, ge=1, le=32)
    out: Path = Path("outputs/batches/batch")
    kernel: str = "python3"
    cell_timeout_s: int = Field(3600, gt=0)
    analysis: bool = True
    overrides: dict[str, Any] = Field(default_factory=dict,
                                      description="config changes for every seed, merged into the base: mappings "
                                                  "merge key by key at every depth (`llm: {budget_usd: 5}` keeps "
                                                  "the base's other llm settings), lists and values replace "
                                                  "(e.g. a masked twin: {information: {masking: players_and_teams}})")
    seed_overrides: dict[int, dict[str, Any]] = Field(default_factory=dict,
                                                      description="per-seed config changes, merged like overrides "
                                                                  "(after them)")

    @model_validator(mode="after")
    def _unique_seeds(self) -> "BatchSpec":
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds: a seed is listed twice")
        stray = sorted(set(self.seed_overrides) - set(self.seeds))
        if stray:
            raise ValueError(f"seed_overrides: seed(s) {', '.join(map(str, stray))} not in seeds {self.seeds}; "
                             "add them to seeds or remove their overrides")
        for key, where in (("seed", "seeds"), ("name", "name")):
            if key in self.overrides:
                raise ValueError(f"overrides: sets `{key}`, which the batch sets from its `{where}`; set it there")
        unknown = sorted(set(self.overrides) - set(League.model_fields))
        if unknown:
            raise ValueError(f"overrides: unknown config key(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(k for k in League.model_fields if k not in ('seed', 'name'))}")
        seeded = sorted(s for s, o in self.seed_overrides.items() if "seed" in o)
        if seeded:  # each run's seed is its key in seeds; an override would only mislabel configs/seed-N.yaml
            raise ValueError(f"seed_overrides: seed(s) {', '.join(map(str, seeded))} set `seed`, which the batch "
                             "sets from seeds; list the seed you want in seeds instead")
        return self


def load_batch(path: str | Path) -> tuple[BatchSpec, Path]:
    """The validated spec and its base league file; :class:`ConfigError` for anything unusable."""
    p = Path(path)
    data = load_yaml(p, "batch file")
    if isinstance(data, dict) and "teams" in data and "base" not in data:
        raise ConfigError([f"this is a league file (it has teams, no base); run it with `ffbench run {p} --out "
                           "DIR`, or give a batch file such as params/batch_demo.yaml"], str(p), "batch file")
    if not isinstance(data, dict):
        raise ConfigError([f"(top level): expected a mapping of keys to values, got {type(data).__name__}"],
                          str(p), "batch file")
    try:
        spec = BatchSpec.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), str(p), "batch file") from None
    taken = next((q for q in (spec.out, *spec.out.parents) if q.exists()), None)
    if taken is not None and not taken.is_dir():
        raise ConfigError([f"out: {spec.out} cannot be a folder: {taken} is a file; choose another out"],
                          str(p), "batch file")
    base = spec.base if spec.base.is_absolute() else (p.parent / spec.base)
    if not base.exists() and (Path.cwd() / spec.base).exists():
        base = Path.cwd() / spec.base
    if not base.is_file():
        raise ConfigError([f"base: league file {base} not found (relative paths start at the batch file's folder)"],
                          str(p), "batch file")
    if spec.overrides:  # a bad override fails every seed: refuse it here, naming the batch file
        try:
            first = run_configs(spec.model_copy(update={"seeds": spec.seeds[:1], "seed_overrides": {}}), base)
        except ConfigError:
            first = {}  # the base's own errors are the base file's, reported when the batch runs
        problem = first.get(spec.seeds[0])
        if isinstance(problem, str):
            raise ConfigError([f"overrides: {line.strip()}" for line in problem.splitlines()[1:]], str(p),
                              "batch file")
    return spec, base


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` merged in: a mapping into a mapping key by key (recursively), anything else (a
    list, a value) replaces. A partial section must not silently reset the base's other settings to defaults."""
    out = dict(base)
    for key, value in changes.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out


def run_configs(spec: BatchSpec, base: Path) -> dict[int, dict[str, Any] | str]:
    """The resolved league config for every seed, or the error that makes it unusable. Changes merge into the
    base file as written (not its resolved dump), so defaults that follow from it (a new position's cap) follow."""
    load_config(base)  # the base's own errors name the base file
    league = merged(load_yaml(base), {"draft": {"order": spec.design}})
    if spec.agents is not None:
        league["teams"] = spec.agents
    out: dict[int, dict[str, Any] | str] = {}
    for seed in spec.seeds:
        cfg = merged(merged({**league, "seed": seed, "name": spec.name}, spec.overrides),
                     spec.seed_overrides.get(seed, {}))
        try:
            out[seed] = parse_config(cfg, f"(batch {spec.name}, seed {seed})").model_dump(mode="json")
        except ConfigError as exc:
            out[seed] = str(exc)
    return out


def _changed_config(run_dir: Path, cfg: dict[str, Any]) -> str | None:
    """Why the run already in ``run_dir`` cannot be reused (skipped or resumed) for ``cfg``, or None: a spec
    edited since that run would otherwise keep the old league's results under the new spec."""
    stored = run_dir / "config.yaml"
    if not stored.exists():
        return None
    diff = config_differences(stored.read_text(encoding="utf-8"), cfg, include_resumable=False)
    if not diff:
        return None
    what = "; ".join(f"{k}: {a!r} in the run, {b!r} now" for k, (a, b) in list(diff.items())[:4])
    more = f" (and {len(diff) - 4} more)" if len(diff) > 4 else ""
    return (f"{run_dir} holds a run of another config ({what}{more}): the batch spec changed since that run; "
            "use another out for the new spec (or restore the old spec to reuse these runs)")


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: a worker ends when the batch process dies (even by kill -9), instead of living on
    orphaned. Linux: the kernel signals it (prctl PR_SET_PDEATHSIG); elsewhere a thread polls the parent pid."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="ffbench-parent-watch", daemon=True).start()


def _run_one(seed: int, config_path: str, run_dir: str, log_dir: str, kernel: str, timeout: int,
             share: int) -> dict[str, Any]:
    """Worker: execute the simulation notebook for one seed (its own process, its own kernel)."""
    from .notebooks import execute
    from .settings import export

    export(concurrency_share=share)

    t0 = time.perf_counter()
    try:
        execute("02_simulate_season.ipynb", Path(log_dir) / f"seed-{seed}.ipynb",
                {"config": config_path, "seed": seed, "out": run_dir, "resume": True, "progress": False},
                timeout_s=timeout, kernel=kernel)
        meta = RunDir(run_dir).meta()
        status = meta.get("status")  # a budget stop or an interruption says why (and is resumable)
        error = None if status == "complete" else f"{status}: {meta.get('reason') or 'no reason recorded'}"
        return {"seed": seed, "status": status, "error": error, "seconds": round(time.perf_counter() - t0, 1)}
    except Exception as exc:  # noqa: BLE001 - reported, the batch goes on
        msg = str(exc).strip().splitlines()
        return {"seed": seed, "status": "failed", "error": (msg[-1] if msg else type(exc).__name__)[:500],
                "seconds": round(time.perf_counter() - t0, 1), "trace": traceback.format_exc()[-2000:]}


def run_batch(spec_path: str | Path, workers: int | None = None, progress: bool = True) -> dict[str, Any]:
    spec, base = load_batch(spec_path)
    from .rundir import exclusive

    with exclusive(spec.out, "batch directory"):  # one batch process per out folder (RunLocked otherwise)
        return _run_batch(spec, base, workers, progress)


def _run_batch(spec: BatchSpec, base: Path, workers: int | None, progress: bool) -> dict[str, Any]:
    workers = workers or spec.workers
    out = Path(spec.out)
    runs_dir, cfg_dir, log_dir = out / "runs", out / "configs", out / "notebooks"
    for d in (runs_dir, cfg_dir, log_dir):
        d.mkdir(parents=True, exist_ok=True)
    configs = run_configs(spec, base)
    results: dict[int, dict[str, Any]] = {}
    todo = []
    for seed, cfg in configs.items():
        run_dir = runs_dir / f"seed-{seed}"
        if isinstance(cfg, str):
            results[seed] = {"seed": seed, "status": "failed", "error": cfg, "seconds": 0.0}
            continue
        stale = _changed_config(run_dir, cfg)
        if stale:
            results[seed] = {"seed": seed, "status": "failed", "error": stale, "seconds": 0.0}
            continue
        if RunDir(run_dir).exists() and RunDir(run_dir).meta().get("status") == "complete":
            results[seed] = {"seed": seed, "status": "complete", "error": None, "seconds": 0.0, "skipped": True}
            continue
        cfg_path = cfg_dir / f"seed-{seed}.yaml"
        write_text(cfg_path, yaml.safe_dump(cfg, sort_keys=False))
        todo.append((seed, str(cfg_path.resolve()), str(run_dir.resolve())))

    bar = tqdm(total=len(configs), desc=f"batch {spec.name}", unit="run", disable=not progress)
    bar.update(len(results))
    failed = sum(r["status"] == "failed" for r in results.values())
    pool_args = {"initializer": _exit_with_parent, "initargs": (os.getpid(),)}
    with ProcessPoolExecutor(max_workers=workers, **pool_args) as pool:
        pending = {pool.submit(_run_one, seed, cfg, rd, str(log_dir.resolve()), spec.kernel, spec.cell_timeout_s,
                               workers): seed for seed, cfg, rd in todo}
        while pending:
            bar.set_postfix(running=min(workers, len(pending)), failed=failed)
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                seed = pending.pop(fut)
                res = fut.result()
                results[seed] = res
                failed += res["status"] != "complete"
                bar.update(1)
        bar.set_postfix(running=0, failed=failed)
    bar.close()

    table = pd.DataFrame([results[s] for s in spec.seeds]).drop(columns=["trace"], errors="ignore")
    write_csv(out / "batch_runs.csv", table)
    summary: dict[str, Any] = {"name": spec.name, "runs": len(table), "complete": int((table["status"] == "complete").sum()),
                               "failed": table.loc[table["status"] != "complete", ["seed", "error"]].to_dict("records")}
    complete = [str((runs_dir / f"seed-{s}").resolve()) for s in spec.seeds if results[s]["status"] == "complete"]
    if spec.analysis and complete:
        summary["analysis"] = analyse(complete, out / "analysis", spec.kernel, spec.cell_timeout_s, progress)
    write_json(out / "batch_summary.json", summary)
    return summary


def analyse(runs: list[str], out: Path, kernel: str = "python3", timeout: int = 3600,
            progress: bool = False) -> dict[str, str]:
    """Execute every analysis notebook over ``runs``; returns notebook -> 'ok' or the error."""
    from .notebooks import execute

    status = {}
    for name in tqdm(ANALYSIS, desc="analysis notebooks", unit="notebook", disable=not progress):
        try:
            execute(f"{name}.ipynb", out / f"{name}.ipynb", {"runs": runs, "out": str(out.resolve())},
                    timeout_s=timeout, kernel=kernel)
            status[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - one notebook's failure is reported, the others still run
            status[name] = f"failed: {str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else exc}"
    return status
