"""Batches: many seasons across seeds, each executed as ``notebooks/02_simulate_season.ipynb`` by papermill (or,
``runner: direct``, played in its worker without a kernel) on an executor (:mod:`ffbench_lib.runs.executor`: a
local process pool, or one task per league on Dask), then the analysis notebooks over all finished runs and a
batch summary.

* one failed run never stops the others; it is reported with its error;
* re-running the same command skips finished runs and resumes partial ones (the engine's checkpoints), only if
  they are runs of the same resolved config (otherwise the batch is refused before it writes anything: use
  another ``out``);
* local workers end with the batch process, even when it is killed; a Dask worker that dies has its league
  retried on another worker, resuming from the checkpoint (out must be on storage every worker sees: checked
  before any run);
* a provider's ``max_concurrency`` holds for the whole batch (:mod:`ffbench_lib.llm.limits`): lock files in
  ``out/.limits`` under the local executor, a ``distributed.Semaphore`` per provider endpoint under Dask;
* ``design: rotate`` gives every agent every draft slot equally often across ``n_teams`` consecutive seeds;
* ``design: field`` (:mod:`ffbench_lib.analysis.field`; its manifest: :mod:`ffbench_lib.records.field`) plays every
  candidate agent in one seat of the base league on every seed, one league per candidate and seed (all in one
  worker pool), beside the reference agent in that seat.
"""
from __future__ import annotations

import re
import sys
import time
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Iterator, NamedTuple, Union

import pandas as pd
import yaml
from pydantic import BaseModel, Field, ValidationError
from tqdm.auto import tqdm

from ffbench_lib.core.atomic import write_csv, write_json, write_text
from ffbench_lib.records import field as fieldmod
from ffbench_lib.config.league import BotAgent, LLMAgent, PythonAgent, limit_clash
from ffbench_lib.config.errors import ConfigError, format_validation_error
from ffbench_lib.config.load import load_config, load_yaml, parse_config
from ffbench_lib.config.batch import ANALYSIS_NOTEBOOKS, BatchSpec
from ffbench_lib.config.diff import config_differences
from ffbench_lib.runs.executor import check_address, open_executor
from ffbench_lib.runs.rundir import LOCK, RunDir
from ffbench_lib.core.settings import settings

# settings a Dask worker gets from the submitter (as absolute paths): the runs must read the same data
PATH_SETTINGS = ("data_dir", "project_root", "cache_dir", "llm_cache")

ANALYSIS = ANALYSIS_NOTEBOOKS  # every analysis notebook; a spec's ``analysis`` may pick some


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
    bases = {}
    for key, given in (spec.base.items() if isinstance(spec.base, dict) else [(None, spec.base)]):
        found = given if given.is_absolute() else (p.parent / given)
        if not found.exists() and (Path.cwd() / given).exists():
            found = Path.cwd() / given
        if not found.is_file():
            raise ConfigError([f"base{'.' + key if key else ''}: league file {found} not found (relative paths start "
                               "at the batch file's folder)"], str(p), "batch file")
        bases[key] = found
    base = bases[None] if None in bases else bases
    try:
        layers = strata(spec, base)
    except ConfigError as exc:
        if exc.source is not None:
            raise
        raise ConfigError(exc.problems, str(p), "batch file") from None
    if spec.overrides or spec.seasons is not None:  # a bad override (or season) fails every seed: refuse it here
        one = spec.model_copy(update={"seeds": spec.seeds[:1], "seed_overrides": {}})
        for layer in layers:
            try:
                problem = run_configs(one, layer.base, season=layer.season).get(spec.seeds[0])
            except ConfigError:
                continue  # the base's own errors are the base file's, reported when the batch runs
            if isinstance(problem, str):
                where = "overrides" if spec.seasons is None else f"seasons ({layer.label}, with the overrides)"
                raise ConfigError([f"{where}: {line.strip()}" for line in problem.splitlines()[1:]], str(p),
                                  "batch file")
    try:
        manifest = field_plan(spec, base)[0] if spec.design == "field" else None
        _check_out(spec, manifest)
        jobs = _jobs(spec, base)[0]
        human = next((t["name"] for j in jobs if isinstance(j.cfg, dict) for t in j.cfg["teams"]
                      if t["agent"]["kind"] == "human"), None)
        if human is not None:
            raise ConfigError([f"team {human} is played by a human: a batch cannot ask a person; give it a bot or "
                               "llm agent, or play the league from a notebook (ffbench_lib.play.session.start_play)"])
        _check_limits(jobs)
        _check_plugins(jobs)
        if spec.out.is_dir():
            _check_reuse(spec.out, jobs)
    except ConfigError as exc:
        from ffbench_lib.agents.plugin import PluginError

        if exc.source is not None or isinstance(exc, PluginError):  # the base file's error, or a plug-in's line
            raise
        raise ConfigError(exc.problems, str(p), "batch file") from None
    return spec, base


class Stratum(NamedTuple):
    """One season of a study (a batch with ``seasons``): its leagues start from ``base`` with ``season`` and go to
    ``runs/<label>/`` (``<sport>-<season>``, e.g. ``nfl-2023``, ``fpl-2024-25``). A batch without seasons has one
    stratum, ``season`` and ``label`` None: the base's own season, in ``runs/``."""

    sport: str
    season: int | None
    base: Path
    label: str | None


def _is_stratum(folder: str) -> bool:
    """Whether a folder under runs/ is named like a study's season (``nfl-2023``), not a field candidate's."""
    from ffbench_lib.sport import SPORTS

    return any(re.fullmatch(rf"{re.escape(k)}-\d{{4}}(-\d{{2}})?", folder) for k in SPORTS)


def strata(spec: BatchSpec, base: Path | dict[str, Path]) -> list[Stratum]:
    """The seasons the batch plays, in the order written; ConfigError (no source) for a season its sport has no
    data for, or a base of another sport than the one its seasons are listed under."""
    from ffbench_lib.sport import sport as sport_of

    bases = base if isinstance(base, dict) else None
    if spec.seasons is None:
        assert isinstance(base, Path)
        return [Stratum(load_config(base).sport, None, base, None)]
    listed = spec.seasons if isinstance(spec.seasons, dict) else {None: spec.seasons}
    out, problems = [], []
    for key, seasons in listed.items():
        path = bases[key] if bases is not None else base
        league = load_config(path)  # the base's own errors name the base file
        name = key or league.sport
        if key is not None and league.sport != key:
            problems.append(f"base{'.' + key if bases is not None else ''}: {path.name} is a {league.sport} league, "
                            f"but its seasons are listed under {key}; list them under {league.sport}")
            continue
        spec_sport = sport_of(name)
        years: dict[int, int] = {}
        for i, given in enumerate(seasons):
            at = f"seasons{'.' + key if key else ''}[{i}]"
            year = spec_sport.season_year(given) if not isinstance(given, bool) else None
            if year is not None and year in years:  # 2024 and 2024-25 are one season
                problems.append(f"{at}: {given!r} is seasons{'.' + key if key else ''}[{years[year]}] again "
                                f"({spec_sport.season_name(year)}); list each season once")
                continue
            if year is not None:
                years[year] = i
            if year is None or year not in spec_sport.seasons:
                problems.append(f"{at}: {given!r} is no {spec_sport.title} season ffbench has data for; allowed: "
                                f"{', '.join(spec_sport.season_name(y) for y in spec_sport.seasons)}")
                continue
            out.append(Stratum(name, year, path, spec_sport.stratum(year)))
    if problems:
        raise ConfigError(problems)
    return out


class FieldEntry(NamedTuple):
    """One agent of a field batch and where its leagues go."""

    label: str  # the candidate's agent id, or "reference" (batch_runs.csv's candidate column)
    agent: dict[str, Any]  # as written in the spec
    folder: str  # its runs, relative to the batch folder: runs/<slug>


class _Seat(BaseModel):
    """A team's ``agent`` alone, so a candidate's errors read as the league config's (``agent.strategy: ...``).
    A batch plays bots and models only: nobody would answer a person's seat."""

    agent: Annotated[Union[BotAgent, LLMAgent, PythonAgent], Field(discriminator="kind")]


def _agent(spec: Any, where: str) -> Any:
    """The parsed agent, or :class:`ConfigError` with the league config's own message, at ``where``."""
    if not isinstance(spec, dict):  # e.g. 'bot:adp', an agent id where its spec belongs
        raise ConfigError([f"{where}: expected an agent mapping such as {{kind: bot, strategy: adp}} or {{kind: llm, "
                           f"model: openai/gpt-4o}}, got {spec!r}"])
    try:
        return _Seat.model_validate({"agent": spec}).agent
    except ValidationError as exc:
        raise ConfigError([where + line.removeprefix("agent") for line in format_validation_error(exc)]) from None


def _one_base(base: Path | dict[str, Path]) -> Path:
    """A field batch's one base league (``base: {nfl: x.yaml}`` names one: a field batch plays one sport)."""
    return next(iter(base.values())) if isinstance(base, dict) else base


def field_plan(spec: BatchSpec, base: Path) -> tuple[fieldmod.Manifest, list[FieldEntry]]:
    """The manifest and the leagues of a field batch, checked against the base league up front: a mistake found
    after some leagues ran would leave candidates compared on different seeds. ConfigError (no source) otherwise."""
    assert spec.field is not None
    base = _one_base(base)
    fs, league = spec.field, load_config(base)
    names = [t.name for t in league.teams]
    seat = fs.seat if fs.seat is not None else names[0]
    if seat not in names:
        raise ConfigError([f"field.seat: no team {seat!r} in base {base.name}; use one of: {', '.join(names)}"])
    if len(fs.candidates) < 2:
        raise ConfigError([f"field.candidates: a field compares 2 or more agents (got {len(fs.candidates)}); add "
                           "candidates"])
    agents = [_agent(c, f"field.candidates[{i}]") for i, c in enumerate(fs.candidates)]
    problems, first_id, first_slug = [], {}, {}
    for i, a in enumerate(agents):
        aid, folder = a.agent_id, fieldmod.slug(a.agent_id)
        if aid in first_id:
            problems.append(f"field.candidates[{i}]: {aid} is also candidates[{first_id[aid]}]; agents are named by "
                            "model id in every table: two candidates of one model would merge; keep one, or compare "
                            "two settings of one model in two field batches (two out folders)")
        elif folder in first_slug:
            problems.append(f"field.candidates[{i}]: {aid} and candidates[{first_slug[folder]}] share the folder "
                            f"runs/{folder} (field.slug); keep one")
        first_id.setdefault(aid, i)
        first_slug.setdefault(folder, i)
    if problems:
        raise ConfigError(problems)
    seat_agent = league.teams[names.index(seat)].agent
    ref_spec = fs.reference if fs.reference is not None else seat_agent.model_dump(mode="json")
    ref = _agent(ref_spec, "field.reference")
    entries = [FieldEntry(a.agent_id, c, fieldmod.candidate_dir(a.agent_id)) for a, c in zip(agents, fs.candidates)]
    same = first_id.get(ref.agent_id)
    if same is None:
        entries.append(FieldEntry(fieldmod.REFERENCE_DIR, ref_spec, f"runs/{fieldmod.REFERENCE_DIR}"))
    elif agents[same] != ref:  # its runs would be the candidate's, played with other settings
        raise ConfigError([f"field.reference: {ref.agent_id} is also candidates[{same}] but with other settings; "
                           "the reference reuses that candidate's runs, so give both the same settings"])
    first = spec.model_copy(update={"seeds": spec.seeds[:1], "seed_overrides": {}})
    layers = strata(spec, base)
    for i, e in enumerate(entries):
        for layer in layers:  # every season of a study: a candidate may be refused in one only
            cfg = run_configs(first, base, e.agent, layer.season)[spec.seeds[0]]
            if isinstance(cfg, str):
                where = f"field.candidates[{i}]" if i < len(agents) else "field.reference"
                when = f", {layer.label}" if layer.label else ""
                problems += [f"{where}: {line.strip()} (with this agent in seat {seat}{when})"
                             for line in cfg.splitlines()[1:]]
                break
    if problems:
        raise ConfigError(problems)
    manifest = fieldmod.Manifest(name=spec.name, seat=seat, reference=ref.agent_id,
                                 reference_dir=entries[same].folder if same is not None else entries[-1].folder,
                                 candidates={e.label: e.folder for e in entries[:len(agents)]}, seeds=list(spec.seeds),
                                 seasons=[layer.label for layer in layers] if spec.seasons is not None else None)
    return manifest, entries


def _check_out(spec: BatchSpec, manifest: fieldmod.Manifest | None) -> None:
    """Refuse an ``out`` that holds another design's runs or a field batch of another seat or reference: the
    analysis reads the manifest beside the runs, so mixing would score runs against the wrong reference.
    Candidates and seeds may grow (the finished runs are reused; paid runs are not redone)."""
    out = Path(spec.out)
    stored = out / fieldmod.MANIFEST
    if manifest is None:
        if stored.is_file():
            raise ConfigError([f"out: {out} holds a field batch ({fieldmod.MANIFEST}); use another out"])
        flat, nested = any((out / "runs").glob("seed-*")), any((out / "runs").glob("*/seed-*"))
        if spec.seasons is not None and flat:  # the analysis reads every run under runs/: one layout per out
            raise ConfigError([f"out: {out} holds runs of a batch without seasons (runs/seed-N); a study writes "
                               "runs/<sport>-<season>/seed-N: use another out"])
        if spec.seasons is None and nested:
            raise ConfigError([f"out: {out} holds runs of a study over seasons (runs/<sport>-<season>/seed-N); use "
                               "another out, or give this batch seasons"])
        return
    if any((out / "runs").glob("seed-*")) or any(_is_stratum(d.parent.name) for d in (out / "runs").glob("*/seed-*")):
        raise ConfigError([f"out: {out} holds runs of a design: rotate/random batch; use another out"])
    if not stored.is_file():
        return
    try:
        old = fieldmod.Manifest.model_validate_json(stored.read_text(encoding="utf-8"))
    except (ValidationError, UnicodeDecodeError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": "not UTF-8 text"}
        where = ".".join(map(str, first["loc"])) or "(top level)"
        raise ConfigError([f"out: {stored} is not a field manifest ({where}: {first['msg']}); delete {stored} to let "
                           "the batch rewrite it from the spec (its runs are kept and reused when their configs "
                           "match), or use another out"]) from None
    changed = [f"{k}: {getattr(old, k)!r} there, {getattr(manifest, k)!r} now" for k in ("seat", "reference")
               if getattr(old, k) != getattr(manifest, k)]
    if (old.seasons is None) != (manifest.seasons is None):  # runs/<cand>/seed-N against runs/<cand>/<season>/...
        changed.append("seasons: " + ("none there (a field batch of one season), a study now" if old.seasons is None
                                      else "a study there, none now"))
    dropped = [c for c in old.candidates if c not in manifest.candidates]
    if changed:
        raise ConfigError([f"field: {out} holds a field batch of another seat or reference ({'; '.join(changed)}); "
                           "use another out (or restore the spec to reuse its runs)"])
    if dropped:
        raise ConfigError([f"field.candidates: {out} holds runs of {', '.join(dropped)}, which this spec drops; add "
                           "them back or use another out"])


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` merged in: a mapping into a mapping key by key (recursively), anything else (a
    list, a value) replaces. A partial section must not silently reset the base's other settings to defaults."""
    out = dict(base)
    for key, value in changes.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out


def run_configs(spec: BatchSpec, base: Path, agent: dict[str, Any] | None = None,
                season: int | None = None) -> dict[int, dict[str, Any] | str]:
    """The resolved league config for every seed, or the error that makes it unusable. Changes merge into the
    base file as written (not its resolved dump), so defaults that follow from it (a new position's cap) follow.
    ``season``: a study's season (a :class:`Stratum`'s) in place of the base's.
    A field batch's league puts ``agent`` in the seat (the team keeps its name: schedule, slots and bot seeds
    follow from names and seed) and rotates the draft order (the seat's slot moves with the seed)."""
    parsed = load_config(base)  # the base's own errors name the base file
    league = merged(load_yaml(base), {"draft": {"order": "rotate" if spec.design == "field" else spec.design}})
    if season is not None:
        league["season"] = season
    if spec.agents is not None:
        league["teams"] = spec.agents
    if agent is not None and spec.field is not None:
        names = [t.name for t in parsed.teams]
        i = names.index(spec.field.seat if spec.field.seat is not None else names[0])
        league["teams"] = [{**t, "agent": agent} if j == i else t for j, t in enumerate(league["teams"])]
    out: dict[int, dict[str, Any] | str] = {}
    for seed in spec.seeds:
        cfg = merged(merged({**league, "seed": seed, "name": spec.name}, spec.overrides),
                     spec.seed_overrides.get(seed, {}))
        try:
            out[seed] = parse_config(cfg, f"(batch {spec.name}, seed {seed})").model_dump(mode="json")
        except ConfigError as exc:
            out[seed] = str(exc)
    return out


def _config_diff(run_dir: Path, cfg: dict[str, Any]) -> dict[str, list[Any]]:
    """The config keys (no resumable ones) in which the run already in ``run_dir`` differs from ``cfg``; empty
    when there is no run or it can be reused (skipped or resumed)."""
    stored = run_dir / "config.yaml"
    if not stored.exists():
        return {}
    return config_differences(stored.read_text(encoding="utf-8"), cfg, include_resumable=False)


def _what(diff: dict[str, list[Any]], there: str = "in the run") -> str:
    what = "; ".join(f"{k}: {a!r} {there}, {b!r} now" for k, (a, b) in list(diff.items())[:4])
    return what + (f" (and {len(diff) - 4} more)" if len(diff) > 4 else "")


def _changed_config(run_dir: Path, cfg: dict[str, Any]) -> str | None:
    """Why the run already in ``run_dir`` cannot be reused for ``cfg``, or None: a spec edited since that run would
    otherwise keep the old league's results under the new spec. (:func:`_check_reuse` refuses this up front; here
    for an out changed between the check and the run.)"""
    diff = _config_diff(run_dir, cfg)
    if not diff:
        return None
    return (f"{run_dir} holds a run of another config ({_what(diff)}): the batch spec changed since that run; "
            "use another out for the new spec (or restore the old spec to reuse these runs)")


def _check_limits(jobs: list["_Job"]) -> None:
    """One ``max_concurrency`` per provider endpoint across all the batch's leagues (a candidate, an override or a
    seed's override may set another): the batch holds one limit per endpoint, which a Dask scheduler would refuse
    mid-batch and the local executor would silently keep at one of them."""
    def agents():
        for job in jobs:
            if isinstance(job.cfg, dict):
                league = f"seed {job.seed}" + (f" of {job.candidate}" if job.candidate is not None else "")
                for t in job.cfg["teams"]:
                    yield f"team {t['name']!r} ({league})", _Seat.model_validate({"agent": t["agent"]}).agent

    clash = limit_clash(agents())
    if clash:
        raise ConfigError([f"max_concurrency: {clash[1]}"])


def _check_reuse(out: Path, jobs: list["_Job"]) -> None:
    """Refuse a spec whose leagues differ from runs already in ``out`` (a new name, scoring, a candidate's
    settings...), before anything is written: each such run would fail, and the finished batch's records
    (batch_runs.csv, batch_summary.json, field.json) would be overwritten by failures. Runs of the same config are
    skipped or resumed."""
    diff: dict[str, list[Any]] = {}
    stale = 0
    for job in jobs:
        d = _config_diff(job.run_dir, job.cfg) if isinstance(job.cfg, dict) else {}
        stale += bool(d)
        for k, v in d.items():
            diff.setdefault(k, v)
    if stale:
        what = _what(diff, "in the runs")
        raise ConfigError([f"out: {out} holds {stale} run(s) of another config ({what}): the batch spec changed since "
                           "they ran; use another out, or restore the spec to reuse them"])


def _run_one(seed: int, config_path: str, run_dir: str, log_dir: str, kernel: str, timeout: int,
             env: dict[str, str], runner: str = "notebook") -> dict[str, Any]:
    """Worker: play one seed's season, by executing the simulation notebook (its own kernel) or, ``runner``
    direct, in this process (:func:`_play_direct`). ``env``: settings by field name
    (:mod:`ffbench_lib.core.settings`) the season reads, e.g. ``provider_limits``; never a secret."""
    from filelock import FileLock

    from ffbench_lib.runs.notebooks import execute
    from ffbench_lib.core.settings import export

    export(**env)

    t0 = time.perf_counter()
    try:
        if (Path(run_dir) / LOCK).exists():  # a retry after its worker died: that worker's kernel exits within
            with FileLock(Path(run_dir) / LOCK, timeout=120):  # ~1 s (ipykernel polls its parent); wait for it
                pass
        if runner == "direct":
            _play_direct(config_path, seed, run_dir, Path(log_dir) / f"seed-{seed}.log")
        else:
            execute("02_simulate_season.ipynb", Path(log_dir) / f"seed-{seed}.ipynb",
                    {"config": config_path, "seed": seed, "out": run_dir, "resume": True, "progress": False},
                    timeout_s=timeout, kernel=kernel)
        meta = RunDir(run_dir).meta()
        status = meta.status  # a budget stop or an interruption says why (and is resumable)
        error = None if status == "complete" else f"{status}: {meta.reason or 'no reason recorded'}"
        return {"seed": seed, "status": status, "error": error, "seconds": round(time.perf_counter() - t0, 1)}
    except Exception as exc:  # noqa: BLE001 - reported, the batch goes on
        msg = str(exc).strip().splitlines()
        error = msg[-1] if msg else type(exc).__name__
        if runner == "direct":  # the exception itself (a notebook's error already names cell and exception)
            from ffbench_lib.core.secrets import scrub

            error = scrub(f"{type(exc).__name__}: {error}")
        return {"seed": seed, "status": "failed", "error": error[:500],
                "seconds": round(time.perf_counter() - t0, 1), "trace": traceback.format_exc()[-2000:]}


class _ScrubbedLog:
    """A text file that masks credentials in everything written to it, before it reaches the disk; anything else
    a library asks of ``sys.stdout`` (``isatty``, ``encoding``, ``fileno``) is the file's own."""

    def __init__(self, fh: Any):
        self._fh = fh

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def write(self, text: str) -> int:
        from ffbench_lib.core.secrets import scrub

        return self._fh.write(scrub(text))

    def flush(self) -> None:
        self._fh.flush()


def _play_direct(config_path: str, seed: int, run_dir: str, log: Path) -> None:
    """The season the simulation notebook plays (``run_season`` resuming what the folder holds), in this worker
    process; what it prints (notices, warnings) goes to ``log``, as the notebook's copy would hold it, instead of
    to the batch's terminal once per seed. Credentials are masked as it is written, and the whole file once more
    at the end (a key split across two writes)."""
    from contextlib import redirect_stderr, redirect_stdout

    from ffbench_lib.core.atomic import scrub_file
    from ffbench_lib.runs.season import run_season

    try:
        with open(log, "w", encoding="utf-8") as fh, redirect_stdout(_ScrubbedLog(fh)), \
                redirect_stderr(_ScrubbedLog(fh)):
            run_season(config_path, seed=seed, out=run_dir, resume=True, progress=False)
    finally:
        scrub_file(log)


def run_batch(spec_path: str | Path, workers: int | None = None, progress: bool = True,
              executor: str | None = None, scheduler: str | None = None, runner: str | None = None) -> dict[str, Any]:
    """Run the batch; ``workers``, ``executor``, ``scheduler`` and ``runner`` override the spec's (the CLI flags)."""
    spec, base = load_batch(spec_path)
    updates = {k: v for k, v in (("executor", executor), ("scheduler", scheduler), ("runner", runner))
               if v is not None}
    if updates:  # validated as if written in the spec (before the lock and any file)
        try:
            spec = BatchSpec.model_validate({**spec.model_dump(), **updates})
        except ValidationError as exc:
            raise ConfigError(format_validation_error(exc), str(spec_path), "batch file") from None
    if spec.executor == "dask" and spec.scheduler is not None:  # a malformed address, before anything is written
        check_address(spec.scheduler)
    from ffbench_lib.runs.rundir import exclusive

    with exclusive(spec.out, "batch directory"):  # one batch process per out folder (RunLocked otherwise)
        return _run_batch(spec, base, workers, progress)


def _task_name(spec: BatchSpec, job: "_Job") -> str:
    """A Dask task key prefix that says which league it is (the dashboard shows it)."""
    who = f"{fieldmod.slug(job.candidate)}-" if job.candidate is not None else ""
    return f"ffbench-{spec.name}-{who}seed{job.seed}"


@contextmanager
def _executor(spec: BatchSpec, workers: int, out: Path) -> Iterator[tuple[Any, dict[str, str]]]:
    """The executor and the settings its tasks export (never a secret: API keys are the workers' own
    environment). Dask: the scheduler holds the provider limits; the submitter's path settings go along as
    absolute paths (a worker elsewhere has another working folder)."""
    ex = open_executor(spec.executor, workers, spec.scheduler, spec.runner)
    try:
        if spec.executor == "local":
            env = {"provider_limits": str((out / ".limits").resolve())}
        else:
            ex.check_shared(out)
            tqdm.write(f"Dask dashboard: {ex.dashboard} (scheduler {ex.scheduler})", file=sys.stderr)
            now = settings()
            env = {"provider_limits": ex.scheduler,
                   **{f: str(Path(getattr(now, f)).resolve()) for f in PATH_SETTINGS if getattr(now, f) is not None}}
        yield ex, env
    finally:
        ex.close()


def _check_plugins(jobs: list["_Job"]) -> None:
    """Every plug-in's entry imports and names a callable, before anything is written (each league's agents are
    built where it runs, which would fail run by run)."""
    from ffbench_lib.agents.plugin import load_factory

    checked: set[str] = set()
    for job in jobs:
        for i, t in enumerate(job.cfg["teams"] if isinstance(job.cfg, dict) else []):
            entry = t["agent"].get("entry") if t["agent"].get("kind") == "python" else None
            if entry and entry not in checked:
                load_factory(entry, f"teams[{i}].agent (team {t['name']})")
                checked.add(entry)


class _Job(NamedTuple):
    """One league of a batch: a seed (and, in a field batch, a candidate; in a study, a season) and where its
    files go."""

    candidate: str | None  # field batches: the agent id, or "reference"; None in other designs
    seed: int
    cfg: dict[str, Any] | str  # the resolved config, or why it is unusable
    run_dir: Path
    cfg_path: Path
    log_dir: Path  # the executed notebook goes to log_dir/seed-N.ipynb
    stratum: Stratum | None = None  # a study's season; None: the base's own season


def _jobs(spec: BatchSpec, base: Path | dict[str, Path]) -> tuple[list[_Job], fieldmod.Manifest | None]:
    """Every league of the batch, seed by seed (a field batch: every candidate of a seed before the next seed; a
    study: every season of a seed before the next seed; so an interrupted batch has whole seeds to compare), and
    a field batch's manifest."""
    out = Path(spec.out)
    if spec.design != "field":
        layers = strata(spec, base)
        configs = {layer: run_configs(spec, layer.base, season=layer.season) for layer in layers}
        jobs = []
        for seed in spec.seeds:
            for layer in layers:
                sub = (layer.label,) if layer.label else ()
                jobs.append(_Job(None, seed, configs[layer][seed], out.joinpath("runs", *sub, f"seed-{seed}"),
                                 out.joinpath("configs", *sub, f"seed-{seed}.yaml"), out.joinpath("notebooks", *sub),
                                 layer))
        return jobs, None
    base = _one_base(base)
    manifest, entries = field_plan(spec, base)
    layers = strata(spec, base)
    configs = {(e.label, layer): run_configs(spec, base, e.agent, layer.season) for e in entries for layer in layers}
    jobs = []
    for seed in spec.seeds:  # a seed's every season and candidate before the next seed: whole blocks to compare
        for layer in layers:
            sub = (layer.label,) if layer.label else ()
            for e in entries:
                folder = Path(e.folder).name
                jobs.append(_Job(e.label, seed, configs[e.label, layer][seed], out.joinpath(e.folder, *sub, f"seed-{seed}"),
                                 out.joinpath("configs", folder, *sub, f"seed-{seed}.yaml"),
                                 out.joinpath("notebooks", folder, *sub), layer))
    return jobs, manifest


def _execute(spec: BatchSpec, workers: int, jobs: list[_Job], todo: list[int], results: dict[int, dict[str, Any]],
             bar: Any) -> None:
    """Run the leagues ``todo`` on the spec's executor; their rows go into ``results`` as they finish."""
    failed = sum(r["status"] == "failed" for r in results.values())
    with _executor(spec, workers, Path(spec.out)) as (ex, env):
        pending = {ex.submit(_task_name(spec, jobs[k]), _run_one, jobs[k].seed, str(jobs[k].cfg_path.resolve()),
                             str(jobs[k].run_dir.resolve()), str(jobs[k].log_dir.resolve()), spec.kernel,
                             spec.cell_timeout_s, env, spec.runner): k for k in todo}
        bar.set_postfix(running=min(ex.workers, len(pending)), failed=failed)
        try:
            for fut, res, exc in ex.as_completed(list(pending)):
                k = pending.pop(fut)
                if exc is not None:
                    res = _task_failure(jobs[k], exc)
                results[k] = _row(jobs[k], **res)
                failed += res["status"] != "complete"
                bar.update(1)
                bar.set_postfix(running=min(ex.workers, len(pending)), failed=failed)
        except BaseException:  # Ctrl-C (or a bug): no league may play on, and pay, after the batch exits
            if pending:
                tqdm.write(f"stopping the {len(pending)} league(s) still running ...", file=sys.stderr)
                ended = ex.abort(list(pending), [str(jobs[k].run_dir.resolve()) for k in pending.values()])
                if ended:
                    tqdm.write(f"ended {ended} league(s) on the cluster; re-run the batch to resume them from their "
                               "checkpoints", file=sys.stderr)
            raise


def _task_failure(job: _Job, exc: BaseException) -> dict[str, Any]:
    """The row of a task that did not return: a Dask worker died too often (KilledWorker), or the scheduler was
    lost, when the league may still finish on its worker (interrupted: a re-run resumes or skips it)."""
    from concurrent.futures import CancelledError

    msg = str(exc).strip().splitlines()
    error = f"{type(exc).__name__}: {msg[-1] if msg else ''}"[:500]
    if isinstance(exc, CancelledError):  # distributed's FutureCancelledError
        what = "the Dask scheduler was lost" if "lost the connection" in str(exc) else "cancelled on the cluster"
        return {"seed": job.seed, "status": "interrupted", "seconds": 0.0,
                "error": f"{what} ({error}); the league may still finish on its worker: re-run the batch to resume "
                         "or skip it"}
    return {"seed": job.seed, "status": "failed", "seconds": 0.0, "error": error}


def _row(job: _Job, **fields: Any) -> dict[str, Any]:
    """A batch_runs.csv row: its league's sport and season (as the sport names it), then the seed; field batches
    lead with the candidate."""
    from ffbench_lib.config.league import DEFAULT_SPORT
    from ffbench_lib.sport import sport as sport_of

    if isinstance(job.cfg, dict):
        name = job.cfg.get("sport", DEFAULT_SPORT)
        season = sport_of(name).season_name(sport_of(name).season_year(job.cfg["season"]))
    elif job.stratum is not None and job.stratum.season is not None:
        name, season = job.stratum.sport, sport_of(job.stratum.sport).season_name(job.stratum.season)
    else:  # an unusable config of a batch without seasons: its season is unknown
        name, season = (job.stratum.sport if job.stratum else None), None
    return {**({"candidate": job.candidate} if job.candidate is not None else {}), "sport": name, "season": season,
            "seed": job.seed, **fields}


def _run_batch(spec: BatchSpec, base: Path, workers: int | None, progress: bool) -> dict[str, Any]:
    workers = workers or spec.workers
    out = Path(spec.out)
    jobs, manifest = _jobs(spec, base)
    for d in {out / "runs", out / "configs", out / "notebooks", *(j.log_dir for j in jobs)}:
        d.mkdir(parents=True, exist_ok=True)
    if manifest is not None:  # before any run: the analysis must be able to tell which runs are whose
        write_text(out / fieldmod.MANIFEST, manifest.dump())  # candidates in spec order
    results: dict[int, dict[str, Any]] = {}
    todo = []
    for k, job in enumerate(jobs):
        if isinstance(job.cfg, str):
            results[k] = _row(job, status="failed", error=job.cfg, seconds=0.0)
            continue
        stale = _changed_config(job.run_dir, job.cfg)
        if stale:
            results[k] = _row(job, status="failed", error=stale, seconds=0.0)
            continue
        if RunDir(job.run_dir).exists() and RunDir(job.run_dir).meta().status == "complete":
            results[k] = _row(job, status="complete", error=None, seconds=0.0, skipped=True)
            continue
        write_text(job.cfg_path, yaml.safe_dump(job.cfg, sort_keys=False))
        todo.append(k)

    reused = sum(bool(r.get("skipped")) for r in results.values())
    if reused and progress:
        tqdm.write(f"{reused} run(s) already complete in {out}, reused", file=sys.stderr)
    # initial=: the rate counts only the runs played now (the reused ones took no time: "118987 run/s")
    bar = tqdm(total=len(jobs), initial=len(results), desc=f"batch {spec.name}", unit="run",
               disable=not progress)
    if todo:
        _execute(spec, workers, jobs, todo, results, bar)
    bar.close()

    table = pd.DataFrame([results[k] for k in range(len(jobs))]).drop(columns=["trace"], errors="ignore")
    write_csv(out / "batch_runs.csv", table)
    who = (["candidate"] if manifest is not None else []) + (["sport", "season"] if spec.seasons else []) + ["seed"]
    summary: dict[str, Any] = {"name": spec.name, "runs": len(table), "complete": int((table["status"] == "complete").sum()),
                               "failed": table.loc[table["status"] != "complete", [*who, "error"]].to_dict("records")}
    if spec.seasons is not None:  # a study: its seasons in the order written (runs/<label>/)
        summary["seasons"] = list(dict.fromkeys(j.stratum.label for j in jobs if j.stratum is not None))
    if manifest is not None:
        summary["design"], summary["manifest"] = "field", fieldmod.MANIFEST
    complete = [str(j.run_dir.resolve()) for k, j in enumerate(jobs) if results[k]["status"] == "complete"]
    #: the batch's own complete runs (relative to out): what its results.json is computed over
    summary["complete_runs"] = [j.run_dir.resolve().relative_to(out.resolve()).as_posix()
                                for k, j in enumerate(jobs) if results[k]["status"] == "complete"]
    if spec.analysis_notebooks and complete:
        summary["analysis"] = analyse(complete, out / "analysis", spec.kernel, spec.cell_timeout_s, progress,
                                      spec.analysis_notebooks)
    write_json(out / "batch_summary.json", summary)
    return summary


def analyse(runs: list[str], out: Path, kernel: str = "python3", timeout: int = 3600,
            progress: bool = False, notebooks: tuple[str, ...] = ANALYSIS) -> dict[str, str]:
    """Execute the analysis notebooks (default: every one) over ``runs``; returns notebook -> 'ok' or the error."""
    from ffbench_lib.runs.notebooks import execute

    status = {}
    for name in tqdm(notebooks, desc="analysis notebooks", unit="notebook", disable=not progress):
        try:
            execute(f"{name}.ipynb", out / f"{name}.ipynb", {"runs": runs, "out": str(out.resolve())},
                    timeout_s=timeout, kernel=kernel)
            status[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - one notebook's failure is reported, the others still run
            status[name] = f"failed: {str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else exc}"
    return status
