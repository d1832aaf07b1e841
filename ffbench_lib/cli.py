"""The ``ffbench`` command. Errors a user can fix exit with status 2 and one clear message, no traceback.

Exit status: 0 done; 1 a failed run in a batch, or a bug; 2 an error the user can fix; 3 ``run`` stopped at the
LLM budget (resumable); 130 / 143 stopped by SIGINT / SIGTERM (resumable). The stop messages give the exact
``--resume`` command.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.load import load_config
from ffbench_lib.core.secrets import scrub
from ffbench_lib.core.settings import SettingsError, export, settings

if TYPE_CHECKING:  # run.json's model, for annotations (commands import what they run when they run)
    from ffbench_lib.records.run import RunMeta


class UsageError(Exception):
    pass


def _count(low: int, high: int | None = None):
    """An argparse type: an integer in low..high, else a usage error naming the option (exit 2)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if n < low or (high is not None and n > high):
            allowed = f"{low}..{high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be {allowed} (got {n})")
        return n
    return parse


def _fraction(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a level or a power)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (got {text})")
    return x


def _power_value(text: str) -> str:
    """An argparse type: a season result :mod:`power` compares (``power.VALUES``, imported only when given: the
    parser stays light)."""
    from ffbench_lib.analysis.power import VALUES

    if text not in VALUES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(VALUES)}")
    return text


def _check_out_file(path: str, option: str, example: str) -> None:
    """A file we can write (checked before the work): not a folder, not under a file, in a writable place."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file name (e.g. {p / example})")
    up = p.parent
    while not up.exists() and up != up.parent:
        up = up.parent
    if not up.is_dir():
        raise UsageError(f"{option} {path}: {up} is a file, not a folder; give a path in a folder")
    if not os.access(up, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{option} {path}: cannot write there (no permission in {up}); give a writable path")


def _out_folder(text: str) -> str:
    """An argparse type: a folder we can create or reuse (not a file, not inside a file, writable)."""
    p = Path(text).expanduser().absolute()
    existing = next(q for q in (p, *p.parents) if q.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text} cannot be a folder: {existing} is a file")
    try:  # os.access says yes to root even on /proc or a read-only mount: try a throw-away file
        import tempfile

        tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{existing} is not writable ({exc.strerror})") from None
    return text


def _assignments(args: argparse.Namespace) -> list[str]:
    """The command line's config overrides (``--model``/``--teams``/``--api-base``, then every ``--set``) as
    ``KEY=VALUE`` texts, applied to the file before validation and so recorded in the run's config.yaml."""
    out: list[str] = []
    if getattr(args, "model", None):
        from ffbench_lib.config.load import load_yaml, model_overrides

        data = load_yaml(args.config)
        out += model_overrides(data if isinstance(data, dict) else {}, args.model, args.teams, args.api_base)
    elif getattr(args, "teams", None) or getattr(args, "api_base", None):
        raise UsageError("--teams and --api-base go with --model (e.g. --model openai/gpt-5 --teams 1-3)")
    return out + list(getattr(args, "set", None) or [])


def _league(args: argparse.Namespace, **overrides):
    """The config file with the command line's overrides (see :func:`_assignments`)."""
    return load_config(args.config, settings_overrides=_assignments(args) or None, **overrides)


def _cmd_validate(args: argparse.Namespace) -> int:
    from ffbench_lib.data.prepare import check_inputs
    from ffbench_lib.data.notices import print_notices

    from ffbench_lib.agents.wiring import build_agent, check_cache

    league = _league(args)
    played = check_inputs(league, live=args.live)  # every file the run reads is there and has its columns
    check_cache(league)  # LLM teams: the replay cache folder can be written
    for i, team in enumerate(league.teams):  # plug-ins: the entry imports and returns an agent
        if team.agent.kind == "python":
            build_agent(team, league.seed, where=f"teams[{i}].agent")
    history = "; data.allow_missing_history: true (a missing previous season is allowed)" if (
        league.data.allow_missing_history) else ""
    r, po = league.roster, league.playoffs
    playoffs = (f"playoffs: top {po.teams} in weeks {league.regular_weeks + 1}-{league.weeks}" if po.enabled
                else "no playoffs")
    print(f"ok: {args.config}: {len(league.teams)} teams, season {league.sport_spec.season_name(league.season)}, "
          f"{league.weeks} weeks, "
          f"roster of {r.size} ({' '.join(f'{s}:{n}' for s, n in r.slot_counts().items())} BENCH:{r.BENCH}"
          f"{f' IR:{r.IR}' if r.IR else ''}), scoring {league.scoring.preset or 'custom'}, "
          f"waivers {league.waivers.mode if league.waivers.enabled else 'off'}, {playoffs}; "
          f"{league.data.source} data in {league.data.resolved_dir()}{history}")
    if args.live:  # the one check skipped: ffbench live plays the weeks without results as they come
        print(f"live: weeks without results are not refused (`ffbench live` waits for them): season "
              f"{league.sport_spec.season_name(league.season)} "
              f"has results through week {played} of the league's {league.weeks} weeks")
    people = [t.name for t in league.teams if t.agent.kind == "human"]
    if people:
        print(f"played by a person: {', '.join(people)}: play this league in notebooks/10_play.ipynb "
              "(ffbench run and batches refuse it)")
    print_notices(league, args.config)  # inputs the season lacks, models that may know its results
    return _llm_preflight(league)


def _llm_preflight(league, ratios: dict | None = None, windows: dict | None = None, sample=None) -> int:
    """Offline checks of the LLM teams (``validate``, ``check``): unset keys and a guard that cannot apply are
    warnings; a decision kind whose smallest prompt cannot fit a team's budget or window is an error (exit 2)."""
    from ffbench_lib.runs import preflight

    if not preflight.llm_specs(league):
        return 0
    for line in preflight.key_warnings(league):
        print(f"warning: {line}", file=sys.stderr)
    sample = sample or preflight.sample_views(league)
    guard = preflight.guard_warning(league, sample)
    if guard:
        print(f"warning: {guard}", file=sys.stderr)
    rows = preflight.prompt_sizes(league, sample, ratios)
    problems = preflight.prompt_problems(rows, windows)
    largest: dict[str, int] = {}
    for r in rows:
        largest[r["kind"]] = max(largest.get(r["kind"], 0), r["server_tokens"] or r["tokens"])
    kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(largest.items()))
    print(f"smallest prompts (every table shortened, {'server' if ratios else 'litellm'} tokens, "
          f"views of a bots-only copy of the league to week {sample.weeks}): {kinds}")
    if problems:
        raise ConfigError(problems, what="league for its LLM teams")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    """One cheap call per distinct model and endpoint, then the offline checks with what the servers said."""
    from ffbench_lib.runs import preflight

    league = _league(args)
    if not preflight.llm_specs(league):
        print(f"{args.config}: no team has an LLM agent; nothing to check")
        return 0
    sample = preflight.sample_views(league)
    rows = preflight.run_check(league, sample)
    print(preflight.format_check(rows))
    ratios = {r["model"]: r["ratio"] for r in rows if r.get("ratio")}
    windows = {r["model"]: r["context_window"] for r in rows if r.get("context_window")}
    failed = [r for r in rows if not (r["reachable"] and r["model_found"])]
    code = _llm_preflight(league, ratios, windows, sample)
    if failed:
        print(f"error: {len(failed)} of {len(rows)} model endpoint(s) cannot be used; fix the problems above",
              file=sys.stderr)
        return 2
    return code


def _season_arg(text: str) -> int:
    """A season on the command line: its start year, or named by its two years (``2024-25`` is 2024)."""
    m = re.fullmatch(r"(\d{4})(?:-(\d{2}))?", text.strip())
    if not m or (m.group(2) and int(m.group(2)) != (int(m.group(1)) + 1) % 100):
        raise argparse.ArgumentTypeError(f"invalid season {text!r}: give its start year (2024) or its two years "
                                         "(2024-25)")
    return int(m.group(1))


def _prepare_fpl(args: argparse.Namespace, league) -> int:
    from ffbench_lib.data import fpl
    from ffbench_lib.data.prepared import write_prepared

    spec = league.sport_spec
    if args.season != league.season:
        raise ConfigError([f"--season {spec.season_name(args.season)}: {args.config} plays season "
                           f"{spec.season_name(league.season)}; "
                           "give that season or another config"])
    prepared = fpl.prepare_season(league.season, args.data_dir or league.data.resolved_dir(), league.weeks,
                                  args.allow_missing_history or league.data.allow_missing_history)
    write_prepared(prepared, args.out)
    m = prepared.manifest
    print(f"prepared {spec.season_name(league.season)} from fpl -> {args.out}: "
          + ", ".join(f"{k} {v}" for k, v in m["rows"].items()))
    print(f"  FPL points by the season's rules against the files' own total_points: "
          f"{m['points_parity']['matching']:,} of {m['points_parity']['rows']:,} player-fixture rows match")
    for what, n in m["read_notes"].items():
        print(f"  {what}: {n}")
    return 0


def _cmd_prepare(args: argparse.Namespace) -> int:
    from ffbench_lib.data.prepare import prepare_season

    scoring, league_positions = args.scoring, {}
    if args.config:
        league = load_config(args.config)
        if league.data.source == "fpl":  # a Premier League season: its own reader, the league's rules
            return _prepare_fpl(args, league)
        scoring = league.scoring_weights
        league_positions = {"positions": league.roster.positions, "tiers": league.scoring_tiers}  # K/DST rows
    prepared = prepare_season(args.season, args.source, args.data_dir, scoring=scoring,
                              projection_source=args.projections, out=args.out, force=args.force,
                              allow_missing_history=args.allow_missing_history, **league_positions)
    m = prepared.manifest
    print(f"prepared {args.season} from {args.source} -> {args.out}: "
          + ", ".join(f"{k} {v}" for k, v in m["rows"].items()))
    for name, rows in m["unmatched"].items():
        n = rows if isinstance(rows, int) else len(rows)
        if n:
            print(f"  unmatched {name}: {n} (listed in manifest.json)")
    parity = m.get("ppr_parity")
    if isinstance(parity, dict) and parity.get("rows_compared"):
        known = parity.get("classified_mismatches") or {}
        known = sum(known.values()) if isinstance(known, dict) else int(known)
        print(f"  PPR points against the file's own {parity.get('column')}: {parity.get('matching'):,} of "
              f"{parity['rows_compared']:,} rows match" + (f", {known:,} differ for known reasons (manifest.json)"
                                                           if known else ""))
    return 0


def _cmd_download(args: argparse.Namespace) -> int:
    from ffbench_lib.data.download import download, parse_seasons

    files = download(parse_seasons(args.seasons), args.out)
    print(f"wrote {len(files)} files under {Path(args.out) / 'nflverse'}; set FFBENCH_DATA_DIR={args.out}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from ffbench_lib.data.download import parse_seasons
    from ffbench_lib.data.prepare import prepare_season
    from ffbench_lib.data.report import projection_report

    frames = [projection_report(prepare_season(s, args.source, args.data_dir)) for s in parse_seasons(args.seasons)]
    table = pd.concat(frames, ignore_index=True)
    print(table.round(3).to_string(index=False))
    if args.out:
        from ffbench_lib.core.atomic import write_csv
        write_csv(args.out, table)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from ffbench_lib.runs.runner import RunExists
    from ffbench_lib.runs.season import run_season

    league = _league(args, seed=args.seed)
    try:
        out = run_season(league, seed=args.seed, out=args.out, resume=args.resume, progress=not args.quiet,
                         config_name=args.config)
    except RunExists as exc:
        raise UsageError(str(exc)) from None
    from ffbench_lib.runs.rundir import RunDir

    meta = RunDir(out).meta()
    if meta.status == "stopped_budget":
        print(f"stopped at phase {meta.phase}: {meta.reason}: edit {args.config}, then run: "
              f"{_resume_command(args)}", file=sys.stderr)
        return EXIT_BUDGET
    return _print_result(out, meta)


def _print_result(out: Path, meta: RunMeta) -> int:
    """The final standings (and champion) of a finished run."""
    from ffbench_lib.runs.rundir import RunDir

    st = RunDir(out).table("standings")
    final = st[st["week"] == st["week"].max()].sort_values("rank")
    print(final[["rank", "team", "agent", "wins", "losses", "ties", "points_for"]].to_string(index=False))
    po = RunDir(out).table("playoffs") if RunDir(out).file("playoffs.parquet").exists() else None
    if po is not None and meta.status == "complete" and len(po):  # a league with playoffs
        won = po[(po["week"] == po["week"].max()) & (po["result"] == "W")].iloc[0]
        print(f"champion: {won['team']} ({won['agent']}, seed {won['playoff_seed']}), beating {won['opponent']} "
              f"{won['round_points_for']:.2f} to {won['round_points_against']:.2f} in the final")
    print(f"run directory: {out}")
    return 0


EXIT_BUDGET = 3


def _resume_command(args: argparse.Namespace) -> str:
    """The exact command that continues the run in ``args.out`` (its seed from run.json if not given)."""
    import shlex

    from ffbench_lib.runs.rundir import RunDir

    seed = args.seed
    if seed is None:
        try:
            seed = RunDir(args.out).meta().seed
        except (OSError, ValueError, KeyError, TypeError):
            pass
    again = ["--resume"] if args.command == "run" else []  # ffbench live continues a run by itself
    given = [*(["--model", args.model] if getattr(args, "model", None) else []),
             *(["--teams", args.teams] if getattr(args, "teams", None) else []),
             *(["--api-base", args.api_base] if getattr(args, "api_base", None) else []),
             *[x for kv in (getattr(args, "set", None) or []) for x in ("--set", kv)]]
    prog = shlex.split(settings().prog or "ffbench")  # ./run.sh ffbench when reached through run.sh
    return shlex.join([*prog, args.command, str(args.config), *(["--seed", str(seed)] if seed is not None else []),
                       *given, "--out", str(args.out), *again])


def _expand_folders(patterns: list[str]) -> list[Path]:
    """Folders named or matched by ``patterns``: absolute or relative, quoted (we glob) or expanded by the shell.
    A pattern that matches no folder is an error: importing fewer runs than asked would be silently wrong."""
    found: dict[Path, None] = {}
    for pattern in patterns:
        expanded = os.path.expanduser(pattern)
        literal = Path(expanded)  # a folder whose name holds [ ] or * is taken as it is
        hits = [literal] if literal.is_dir() else sorted(Path(h) for h in glob.glob(expanded) if Path(h).is_dir())
        if not hits:
            unset = "" if settings().data_dir else "; FFBENCH_DATA_DIR is not set in this shell"
            raise UsageError(f"no folder matches {pattern!r} (give simulation_* folders, e.g. "
                             f"\"$FFBENCH_DATA_DIR/reference_runs/simulation_*\"{unset})")
        found.update(dict.fromkeys(hits))
    return list(found)


def _cmd_import(args: argparse.Namespace) -> int:
    """All of the folders or none: each is checked, then all are imported into a staging folder inside ``--out``
    and moved into place only when every one succeeded."""
    import shutil
    import tempfile

    from ffbench_lib.runs.importers.fantasyfootballbench import check_season_data, import_reference_run, recorded_weeks
    from ffbench_lib.runs.rundir import RunDir

    sims = _expand_folders(args.sim_dirs)
    out = Path(args.out)
    for sim in sims:  # fast checks first; the full ones run while importing into the staging folder
        season = recorded_weeks(sim)[0]
        check_season_data(sim, season, args.data_dir)
        target = out / sim.name
        if target.exists():
            try:
                earlier = RunDir(target).meta().imported_from
            except (OSError, ValueError, AttributeError):
                earlier = None
            if not earlier:
                raise UsageError(f"{target} exists and is not an earlier import; choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=out))
    try:
        for i, sim in enumerate(sims):
            import_reference_run(sim, staging / sim.name, args.data_dir, seed=i)
        for sim in sims:
            target = out / sim.name
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging / sim.name, target)
            print(f"imported {sim} -> {target}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from ffbench_lib.runs.batch import run_batch

    summary = run_batch(args.spec, workers=args.workers, progress=not args.quiet, executor=args.executor,
                        scheduler=args.scheduler, runner=args.runner)
    print(f"batch {summary['name']}: {summary['complete']}/{summary['runs']} runs complete")
    _batch_results(args.spec, summary)
    for f in summary["failed"]:
        where = f"{f['sport']} {f['season']} " if f.get("season") is not None else ""
        print(f"  {f['candidate'] + ' ' if f.get('candidate') else ''}{where}seed {f['seed']} failed: {f['error']}")
    for nb, st in summary.get("analysis", {}).items():
        print(f"  analysis {nb}: {st}")
    return 0 if not summary["failed"] else 1


def _batch_results(spec_path, summary: dict) -> None:
    """``results.json`` beside a batch's summary, over its complete runs (none: none written)."""
    from ffbench_lib.analysis.results import write_for_runs
    from ffbench_lib.runs.batch import load_batch

    if not summary["complete"]:
        return
    spec, _ = load_batch(spec_path)
    out = Path(spec.out)
    failed = [f"{f.get('candidate') + ' ' if f.get('candidate') else ''}seed {f['seed']}" for f in summary["failed"]]
    try:
        f = write_for_runs([out / r for r in summary["complete_runs"]], out / "results.json", summary["name"], "batch",
                           left_out=failed)
    except (ValueError, KeyError) as exc:  # said, not hidden: the runs and their summary stand
        print(f"warning: results.json not written: {exc}", file=sys.stderr)
        return
    print(f"results: {f}")


def _cmd_power(args: argparse.Namespace) -> int:
    """Seeds (and dollars) needed to separate each adjacent pair of the ranking, from pilot runs."""
    import warnings

    from ffbench_lib.analysis import seasons
    from ffbench_lib.analysis.power import (check_pilot, format_report, format_season_plan, load_pilot, pair_table,
                                            season_plan)

    if args.out:
        _check_out_file(args.out, "--out", "power.csv")
    from ffbench_lib.analysis import exams

    if len(args.runs) == 1 and (Path(args.runs[0]) / exams.RESULTS).is_file():  # an exam's results: states needed
        try:
            plan = exams.power_plan(args.runs[0], alpha=args.alpha, target=args.power)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print(exams.format_plan(plan))
        if args.out:
            from ffbench_lib.core.atomic import write_csv

            write_csv(args.out, plan)
            print(f"written to {args.out}")
        return 0
    try:
        with warnings.catch_warnings(record=True) as caught:  # printed as lines, not as Python warnings
            warnings.simplefilter("always")
            pilot = load_pilot(args.runs)
            table = pair_table(pilot.runs, value=args.value, alpha=args.alpha, target=args.power,
                               manifest=pilot.manifest, full_runs=pilot.full_runs)
    except (ValueError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        for w in dict.fromkeys(str(w.message).replace("; see data['excluded']", "") for w in caught
                               if issubclass(w.category, UserWarning)):
            print(f"warning: {w}", file=sys.stderr)
    try:
        check_pilot(table)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(format_report(table))
    plan = None
    if pilot.manifest is not None and seasons.is_study(pilot.runs):
        print("\na field study over seasons: its seeds above are blocks (a season's seed, one league per candidate); "
              "the seasons x seeds plan is made from a full-league study (a batch with seasons and design: rotate)")
    if pilot.manifest is None and seasons.is_study(pilot.runs):  # seeds nested in seasons: plan both
        try:
            plan = season_plan(pilot.runs, value=args.value, alpha=args.alpha, target=args.power)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print("\nthe table above counts every seed as independent evidence, which seeds of one season are not; "
              "plan the study with seasons:\n")
        print(format_season_plan(plan))
    if args.out:
        from ffbench_lib.core.atomic import write_csv
        write_csv(args.out, table.pairs.assign(design=table.summary["design"], value=args.value))
        print(f"table written to {args.out}")
        if plan is not None:
            other = Path(args.out).with_name(f"{Path(args.out).stem}_seasons.csv")
            write_csv(other, plan.assign(value=args.value))
            print(f"seasons x seeds plan written to {other}")
    return 0


def _cmd_page(args: argparse.Namespace) -> int:
    """One self-contained HTML page over runs (notebook 11_report, converted without code cells)."""
    from ffbench_lib.runs.notebooks import NotebookError
    from ffbench_lib.present.report import build

    _check_out_file(args.out, "--out", "report.html")
    try:
        out = build(args.runs, args.out, exam=args.exam)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    except NotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"report written to {out} (opens offline)")
    from ffbench_lib.analysis.results import write_for_runs
    page = Path(out)
    print(f"results: {write_for_runs(args.runs, page.with_name(page.stem + '.results.json'), page.stem, 'report')}")
    return 0


def _cmd_masking_audit(args: argparse.Namespace) -> int:
    """How many real players each card of a masked run's prompts could be (``runs.anonymity``)."""
    import json

    from ffbench_lib.runs.anonymity import AUDIT, audit, format_audit

    result = audit(args.run)
    print(json.dumps(result, indent=2, sort_keys=True) if args.json else
          f"{format_audit(result)}\nwritten to {Path(args.run) / AUDIT}")
    return 0


def _cmd_exam_build(args: argparse.Namespace) -> int:
    """Draw an exam suite's states from its source seasons (``runs.exam``)."""
    from ffbench_lib.runs.exam import build_suite

    meta = build_suite(args.spec, args.out)
    skills = ", ".join(f"{k} {v}" for k, v in meta["by_skill"].items())
    print(f"exam suite {meta['name']}: {meta['states']} states ({skills}) from {len(meta['sources'])} source seasons "
          f"in {args.out} (states sha256 {meta['states_sha256'][:16]})")
    return 0


def _cmd_exam_run(args: argparse.Namespace) -> int:
    """Every candidate answers every state of a suite (``runs.exam``)."""
    from ffbench_lib.runs.exam import RESULTS, BudgetSpent, run_exam, summary

    try:
        df = run_exam(args.suite, args.candidates, args.out)
    except BudgetSpent as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        return 3
    print(summary(df).to_string(index=False))
    print(f"{len(df)} answers written to {Path(args.out) / RESULTS}")
    from ffbench_lib.analysis.results import write_for_exam
    print(f"results: {write_for_exam(args.out)}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    """The README's main job: prepare the 2024 data (notebook 01), then the demo batch to figures."""
    from ffbench_lib.runs.batch import load_batch, run_batch
    from ffbench_lib.runs.notebooks import NotebookError, execute
    from ffbench_lib.core.paths import find_data_dir, project_root

    data = find_data_dir()
    if data is None or not (data / "nflverse").is_dir():
        where = f"FFBENCH_DATA_DIR={data} has no nflverse/ folder" if data else "no NFL data found"
        raise UsageError(f"{where}: set FFBENCH_DATA_DIR to the data folder (the one holding nflverse/), or "
                         "download it with `./run.sh demo` (does it for you) or `ffbench data download "
                         "--seasons 2021-2024 --out outputs/data`")
    export(data_dir=data)  # the notebooks' kernels inherit it
    spec_path = args.spec
    if spec_path is None:  # the project's demo, wherever it is started from: its out is under the root
        os.chdir(project_root())
        spec_path = "params/batch_demo.yaml"
    spec, _ = load_batch(spec_path)
    out = Path(spec.out).resolve()
    print(f"[1/2] preparing the 2024 season from {data} (notebook 01_prepare_data)", file=sys.stderr, flush=True)
    try:
        execute("01_prepare_data.ipynb", out / "notebooks" / "01_prepare_data.ipynb",
                {"season": 2024, "source": "nflverse", "out": str(out / "prepared-2024")})
    except NotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"[2/2] batch {spec.name}: {len(spec.seeds)} seasons on {spec.workers} workers, then "
          f"{len(spec.analysis_notebooks)} analysis notebooks", file=sys.stderr, flush=True)
    summary = run_batch(spec_path, progress=True)
    print(f"demo batch: {summary['complete']}/{summary['runs']} runs complete; figures and tables in "
          f"{out / 'analysis'}")
    _batch_results(spec_path, summary)
    for f in summary["failed"]:
        print(f"  seed {f['seed']} failed: {f['error']}")
    for nb, st in summary.get("analysis", {}).items():
        if st != "ok":
            print(f"  analysis {nb}: {st}")
    return 0 if not summary["failed"] and set(summary.get("analysis", {}).values()) <= {"ok"} else 1


def _cmd_probe(args: argparse.Namespace) -> int:
    """The knowledge probe: what each LLM model of the league remembers of the season's outcome."""
    from ffbench_lib.runs.probe import ProbeError, format_table, run_probe

    try:
        result = run_probe(args.config, out=args.out, season=args.season)
    except ProbeError as exc:
        raise UsageError(str(exc)) from None
    print(format_table(result))
    print(f"probe directory: {args.out}")
    if result["budget_stop"]:
        print(f"stopped at llm.budget_usd before every model was asked: raise it in {args.config} and probe again "
              "into a new --out (answers already paid for are replayed from the cache)", file=sys.stderr)
        return EXIT_BUDGET
    failed = [m["model"] for m in result["models"] if m.get("error")]
    if failed:  # a probe that could not ask a model has no verdict for it: not a success
        print(f"could not probe {', '.join(failed)} (see {Path(args.out) / 'llm_calls.jsonl'}); fix the server or "
              "model and probe again into a new --out", file=sys.stderr)
        return 1
    return 0


def _cmd_live(args: argparse.Namespace) -> int:
    """A season under way: play every week the data has, decide the next one, commit to its decisions (a line of
    live.jsonl, printed to publish) and wait for its games; the same command continues once the data has them."""
    import json

    from ffbench_lib.runs.rundir import LIVE, RunDir
    from ffbench_lib.runs.season import run_season

    league = _league(args, seed=args.seed)
    out = run_season(league, seed=args.seed, out=args.out, resume=True, progress=not args.quiet, live=True,
                     config_name=args.config)
    meta = RunDir(out).meta()
    if meta.status == "stopped_budget":
        print(f"stopped at phase {meta.phase}: {meta.reason}: edit {args.config}, then run: "
              f"{_resume_command(args)}", file=sys.stderr)
        return EXIT_BUDGET
    if meta.status != "waiting_for_week" or meta.live is None:
        return _print_result(out, meta)
    week, played = meta.live.waiting_for_week, meta.live.played_weeks
    spec, season = league.sport_spec, league.sport_spec.season_name(league.season)
    download = spec.data_update.format(year=league.season, season=season, dir=league.data.resolved_dir())
    if meta.live.waiting_for == "injury_report":  # nothing decided yet: no line to publish
        print(f"waiting for week {week}: {meta.reason}. Final injury reports come out on Friday (teams playing "
              f"on Thursday report earlier); once it is out, update the data ({download}) and run the same command "
              f"again: {_resume_command(args)}")
        return 0
    line = next(x for x in RunDir(out).read_log(LIVE) if x["week"] == week)
    print(f"week {week} of {season} is decided; publish this line (the SHA-256 of the first {line['bytes']} "
          f"bytes of {Path(out) / 'decisions.jsonl'}, every decision so far):")
    print(json.dumps(line))
    if line.get("decided_after_first_game_day"):
        print(f"warning: week {week} was decided after the day of its first game ({line['first_game_day']}, "
              f"{spec.schedule_timezone}), so some of its games had been played: agents never see a week's results before the whole "
              "week is played, but the line does not prove those players' lineups came before their games",
              file=sys.stderr)
    print(f"waiting for week {week}: the data has results through week {played}. Once its games are played, update "
          f"the data ({download}) and run the same command again: {_resume_command(args)}")
    return 0


def _override_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("config overrides (recorded in the run's config.yaml)")
    g.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="replace one config value, the key written as the YAML nests it and the value as YAML, e.g. "
                        "--set llm.max_reasks=1 --set teams[0].agent.model=openai/gpt-5 (repeatable)")
    g.add_argument("--model", default=None, help="a litellm model id for the LLM teams (all teams if there are none), "
                                                 "or for --teams")
    g.add_argument("--teams", default=None, metavar="N-M,K", help="with --model: the teams that play it, counted "
                                                                  "from 1 in the file's order, e.g. 1-3")
    g.add_argument("--api-base", default=None, help="with --model: the server address for those teams")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ffbench", description="LLMs run fantasy-football teams through real NFL seasons.")
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="check a league YAML file (offline: nothing is called)")
    v.add_argument("config")
    _override_args(v)
    v.add_argument("--live", action="store_true", help="for `ffbench live`: allow weeks the data has no results "
                                                       "for yet (the check is skipped, and said)")
    v.set_defaults(func=_cmd_validate)

    data = sub.add_parser("data", help="download and prepare NFL data").add_subparsers(dest="data_command", required=True)
    pr = data.add_parser("prepare", help="write the parquet tables of one season")
    pr.add_argument("--season", type=_season_arg, required=True, help="its start year (2024), or as a soccer "
                    "season is named (2024-25)")
    pr.add_argument("--source", choices=["nflverse", "sportsdataio"], default="nflverse")
    pr.add_argument("--data-dir", default=None, help="default: $FFBENCH_DATA_DIR")
    pr.add_argument("--out", required=True, type=_out_folder)
    pr.add_argument("--scoring", default="ppr", choices=["ppr", "half_ppr", "standard", "ffbench_v1"])
    pr.add_argument("--config", default=None, help="take the scoring from this league YAML instead")
    pr.add_argument("--projections", default="builtin", choices=["builtin", "sportsdataio", "fantasypros"])
    pr.add_argument("--force", action="store_true", help="rewrite even if the inputs are unchanged")
    pr.add_argument("--allow-missing-history", action="store_true",
                    help="prepare a season whose previous season's stats are missing (recorded in the manifest)")
    pr.set_defaults(func=_cmd_prepare)

    dl = data.add_parser("download", help="fetch nflverse releases with nflreadpy into a local folder")
    dl.add_argument("--seasons", required=True, help="e.g. 2022-2024")
    dl.add_argument("--out", required=True)
    dl.set_defaults(func=_cmd_download)

    rp = data.add_parser("report", help="projection accuracy against actual season points")
    rp.add_argument("--seasons", default="2023,2024")
    rp.add_argument("--source", choices=["nflverse", "sportsdataio"], default="nflverse")
    rp.add_argument("--data-dir", default=None)
    rp.add_argument("--out", default=None, help="CSV path for the table")
    rp.set_defaults(func=_cmd_report)
    rn = sub.add_parser("run", help="run one season of a league")
    rn.add_argument("config")
    rn.add_argument("--seed", type=_count(0), default=None, help="default: the config's seed")
    rn.add_argument("--out", required=True, type=_out_folder, help="run directory")
    rn.add_argument("--resume", action="store_true", help="continue a killed run from its last checkpoint")
    rn.add_argument("--quiet", action="store_true", help="no progress bar")
    _override_args(rn)
    rn.set_defaults(func=_cmd_run)

    ck = sub.add_parser("check", help="one cheap call per LLM model and endpoint of a league: key, endpoint, model, "
                                      "JSON mode, context window, price, token counts; then validate's LLM checks "
                                      "with what the servers said")
    ck.add_argument("config")
    _override_args(ck)
    ck.set_defaults(func=_cmd_check)

    lv = sub.add_parser("live", help="play a season under way: the weeks played so far, then decide the next week "
                                     "and wait for its games (rerun to continue)")
    lv.add_argument("config")
    lv.add_argument("--seed", type=_count(0), default=None, help="default: the config's seed")
    lv.add_argument("--out", required=True, type=_out_folder, help="run directory (created, or continued)")
    lv.add_argument("--quiet", action="store_true", help="no progress bar")
    _override_args(lv)
    lv.set_defaults(func=_cmd_live)

    im = sub.add_parser("import-ffb", help="convert earlier FantasyFootballBench runs into ffbench run directories")
    im.add_argument("sim_dirs", nargs="+", help="simulation_* folders (globs allowed)")
    im.add_argument("--out", required=True, help="folder for the converted run directories")
    im.add_argument("--data-dir", default=None, help="default: $FFBENCH_DATA_DIR")
    im.set_defaults(func=_cmd_import)

    bt = sub.add_parser("batch", help="run a batch of seasons (notebooks run by papermill, or direct), then the "
                                      "analysis notebooks")
    bt.add_argument("spec", help="batch YAML, e.g. params/batch_demo.yaml")
    bt.add_argument("--workers", type=_count(1, 32), default=None, help="override the spec's worker count")
    bt.add_argument("--executor", choices=["local", "dask"], default=None,
                    help="override the spec's executor: local (a process pool) or dask (a Dask cluster)")
    bt.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="with --executor dask: an existing Dask scheduler (tcp://host:8786); default: an embedded "
                         "LocalCluster of --workers processes")
    bt.add_argument("--runner", choices=["notebook", "direct"], default=None,
                    help="override the spec's runner: notebook (each season an executed notebook) or direct (each "
                         "season played in its worker, no kernel: faster, for large bot batches)")
    bt.add_argument("--quiet", action="store_true")
    bt.set_defaults(func=_cmd_batch)

    pb = sub.add_parser("probe", help="ask each LLM model what it remembers of a season's outcome (before any play)")
    pb.add_argument("config")
    pb.add_argument("--season", type=int, default=None, help="default: the config's season")
    pb.add_argument("--out", required=True, type=_out_folder, help="a new folder for probe.json and the ledger")
    pb.set_defaults(func=_cmd_probe)

    pw = sub.add_parser("power", help="seeds (and dollars) needed to separate each adjacent pair of the ranking, "
                                      "in the field and full-league designs, from pilot runs")
    pw.add_argument("runs", nargs="+", help="a batch folder (field or not), run folders or globs; a field batch and "
                                            "a full-league batch together measure both designs")
    pw.add_argument("--alpha", type=_fraction, default=0.05, help="family-wise level (Holm over all pairs)")
    pw.add_argument("--power", type=_fraction, default=0.8, help="target power")
    pw.add_argument("--value", type=_power_value, default="points_for",
                    help="the season result compared: points_for (default), win_rate or wins")
    pw.add_argument("--out", default=None, help="CSV file for the pair table (checked before the work)")
    pw.set_defaults(func=_cmd_power)

    rep = sub.add_parser("report", help="one self-contained HTML page over runs (leaderboard, figures, agent cards, "
                                         "caveats) that opens offline")
    rep.add_argument("runs", nargs="+", help="a batch folder, run folders or globs")
    rep.add_argument("--out", required=True, help="the HTML file to write, e.g. report.html")
    rep.add_argument("--exam", default=None, help="an `ffbench exam run` results folder: its section beside the runs'")
    rep.set_defaults(func=_cmd_page)

    mk = sub.add_parser("masking", help="masked runs: audit what their prompts reveal").add_subparsers(
        dest="masking_command", required=True)
    ma = mk.add_parser("audit", help="per decision kind, how many real players each card the prompts showed could be "
                                     "(k-anonymity), also with a player's cards in one prompt and in every prompt "
                                     "read together; writes masking_audit.json into the run")
    ma.add_argument("run", help="a masked run directory with LLM teams")
    ma.add_argument("--json", action="store_true", help="print the result as JSON")
    ma.set_defaults(func=_cmd_masking_audit)

    ex = sub.add_parser("exam", help="exams: the same decision states for every candidate, scored exactly"
                        ).add_subparsers(dest="exam_command", required=True)
    eb = ex.add_parser("build", help="play the spec's source bot seasons and draw its states into a frozen suite")
    eb.add_argument("spec", help="exam spec YAML, e.g. params/exam_suite.yaml")
    eb.add_argument("--out", required=True, help="the suite folder to create, e.g. outputs/exams/demo")
    eb.set_defaults(func=_cmd_exam_build)
    er = ex.add_parser("run", help="every candidate answers every state; writes exam_results.parquet")
    er.add_argument("suite", help="a suite folder (ffbench exam build)")
    er.add_argument("candidates", help="candidates YAML, e.g. params/exam_bots.yaml")
    er.add_argument("--out", required=True, help="the results folder to create")
    er.set_defaults(func=_cmd_exam_run)

    dm = sub.add_parser("demo", help="the README's main job: the demo batch to figures")
    dm.add_argument("--spec", default=None, help="batch YAML (default: params/batch_demo.yaml of the project)")
    dm.set_defaults(func=_cmd_demo)
    return p


def _ctrl_c_stops() -> None:
    """SIGINT stops a command (exit 130, resumable) even when the process was started with it ignored (a shell's
    background job, a test runner's worker): an inherited SIG_IGN would otherwise make Ctrl-C and ``kill -INT``
    do nothing."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    from ffbench_lib.data.base import DataError
    from ffbench_lib.llm import FatalLLMError, ReplayMiss
    from ffbench_lib.records.run import RunMetaError
    from ffbench_lib.runs.rundir import RunDirError, RunInterrupted

    args = build_parser().parse_args(argv)
    _ctrl_c_stops()
    try:
        settings()  # a bad environment variable is named before any work starts
        return args.func(args)
    except (FatalLLMError, ReplayMiss) as exc:  # the run stopped at its last checkpoint: say how it goes on
        started = args.command in ("run", "live") and (Path(args.out) / "run.json").is_file()
        again = f"; once fixed, continue with: {_resume_command(args)}" if started else ""
        print(f"error: {scrub(str(exc))}{again}", file=sys.stderr)
        return 2
    except (ConfigError, DataError, UsageError, RunDirError, RunMetaError, SettingsError) as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder that is a file, a full disk, no permission: the path says what to fix
        where = f": {exc.filename}" if exc.filename else ""
        # a run that started keeps its last checkpoint (run.json says how it stopped): --resume continues it
        started = args.command in ("run", "live") and (Path(args.out) / "run.json").is_file()
        resume = f"; once fixed (free disk space), continue with: {_resume_command(args)}" if started else ""
        print(scrub(f"error: {exc.strerror or exc}{where}{resume}"), file=sys.stderr)
        return 2
    except (KeyboardInterrupt, RunInterrupted) as exc:
        resume = (f"; continue with: {_resume_command(args)}" if args.command in ("run", "live") else
                  "; run the same command again to resume (finished runs are skipped)" if args.command == "batch"
                  else "")
        print(f"interrupted ({str(exc) or 'SIGINT'}){resume}", file=sys.stderr)
        return 128 + getattr(exc, "signum", 2)
    except Exception:  # a bug: the traceback is shown, with any credential in it masked
        import traceback

        sys.stderr.write(scrub(traceback.format_exc()))
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
