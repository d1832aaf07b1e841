"""The ``ffbench`` command. Errors a user can fix exit with status 2 and one clear message, no traceback."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import ConfigError, load_config


class UsageError(Exception):
    pass


def _cmd_validate(args: argparse.Namespace) -> int:
    league = load_config(args.config)
    print(f"ok: {args.config}: {len(league.teams)} teams, season {league.season}, {league.weeks} weeks, "
          f"roster of {league.roster.size}, scoring {league.scoring.preset or 'custom'}")
    return 0


def _cmd_prepare(args: argparse.Namespace) -> int:
    from .data.prepare import prepare_season

    scoring = args.scoring
    if args.config:
        league = load_config(args.config)
        scoring = league.scoring_weights
    prepared = prepare_season(args.season, args.source, args.data_dir, scoring=scoring,
                              projection_source=args.projections, out=args.out, force=args.force)
    m = prepared.manifest
    print(f"prepared {args.season} from {args.source} -> {args.out}: "
          + ", ".join(f"{k} {v}" for k, v in m["rows"].items()))
    for name, rows in m["unmatched"].items():
        n = rows if isinstance(rows, int) else len(rows)
        if n:
            print(f"  unmatched {name}: {n} (listed in manifest.json)")
    return 0


def _cmd_download(args: argparse.Namespace) -> int:
    from .data.download import download, parse_seasons

    files = download(parse_seasons(args.seasons), args.out)
    print(f"wrote {len(files)} files under {Path(args.out) / 'nflverse'}; set FFBENCH_DATA_DIR={args.out}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from .data.download import parse_seasons
    from .data.prepare import prepare_season
    from .data.report import projection_report

    frames = [projection_report(prepare_season(s, args.source, args.data_dir)) for s in parse_seasons(args.seasons)]
    table = pd.concat(frames, ignore_index=True)
    print(table.round(3).to_string(index=False))
    if args.out:
        from .atomic import write_csv
        write_csv(args.out, table)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .engine import RunExists
    from .season import run_season

    try:
        out = run_season(args.config, seed=args.seed, out=args.out, resume=args.resume, progress=not args.quiet)
    except RunExists as exc:
        raise UsageError(str(exc)) from None
    from .rundir import RunDir

    st = RunDir(out).table("standings")
    final = st[st["week"] == st["week"].max()].sort_values("rank")
    print(final[["rank", "team", "agent", "wins", "losses", "ties", "points_for"]].to_string(index=False))
    print(f"run directory: {out}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from .importers.fantasyfootballbench import import_reference_run

    sims = sorted(p for pattern in args.sim_dirs for p in Path().glob(pattern)) if not all(
        Path(s).exists() for s in args.sim_dirs) else [Path(s) for s in args.sim_dirs]
    if not sims:
        raise UsageError(f"no simulation folders match {args.sim_dirs}")
    for i, sim in enumerate(sims):
        out = import_reference_run(sim, Path(args.out) / sim.name, args.data_dir, seed=i)
        print(f"imported {sim} -> {out}")
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    from .batch import run_batch

    summary = run_batch(args.spec, workers=args.workers, progress=not args.quiet)
    print(f"batch {summary['name']}: {summary['complete']}/{summary['runs']} runs complete")
    for f in summary["failed"]:
        print(f"  seed {f['seed']} failed: {f['error']}")
    for nb, st in summary.get("analysis", {}).items():
        print(f"  analysis {nb}: {st}")
    return 0 if not summary["failed"] else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    """The README's main job: prepare the 2024 data (notebook 01), then the demo batch to figures."""
    from .batch import load_batch, run_batch
    from .notebooks import execute

    spec, _ = load_batch(args.spec)
    out = Path(spec.out)
    execute("01_prepare_data.ipynb", out / "notebooks" / "01_prepare_data.ipynb",
            {"season": 2024, "source": "nflverse", "out": str((out / "prepared-2024").resolve())})
    summary = run_batch(args.spec, progress=True)
    print(f"demo batch: {summary['complete']}/{summary['runs']} runs complete; figures and tables in "
          f"{out / 'analysis'}")
    return 0 if not summary["failed"] else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ffbench", description="LLMs run fantasy-football teams through real NFL seasons.")
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="check a league YAML file")
    v.add_argument("config")
    v.set_defaults(func=_cmd_validate)

    data = sub.add_parser("data", help="download and prepare NFL data").add_subparsers(dest="data_command", required=True)
    pr = data.add_parser("prepare", help="write the parquet tables of one season")
    pr.add_argument("--season", type=int, required=True)
    pr.add_argument("--source", choices=["nflverse", "sportsdataio"], default="nflverse")
    pr.add_argument("--data-dir", default=None, help="default: $FFBENCH_DATA_DIR")
    pr.add_argument("--out", required=True)
    pr.add_argument("--scoring", default="ppr", choices=["ppr", "half_ppr", "standard", "ffbench_v1"])
    pr.add_argument("--config", default=None, help="take the scoring from this league YAML instead")
    pr.add_argument("--projections", default="builtin", choices=["builtin", "sportsdataio", "fantasypros"])
    pr.add_argument("--force", action="store_true", help="rewrite even if the inputs are unchanged")
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
    rn.add_argument("--seed", type=int, default=None, help="default: the config's seed")
    rn.add_argument("--out", required=True, help="run directory")
    rn.add_argument("--resume", action="store_true", help="continue a killed run from its last checkpoint")
    rn.add_argument("--quiet", action="store_true", help="no progress bar")
    rn.set_defaults(func=_cmd_run)

    im = sub.add_parser("import-ffb", help="convert earlier FantasyFootballBench runs into ffbench run directories")
    im.add_argument("sim_dirs", nargs="+", help="simulation_* folders (globs allowed)")
    im.add_argument("--out", required=True, help="folder for the converted run directories")
    im.add_argument("--data-dir", default=None, help="default: $FFBENCH_DATA_DIR")
    im.set_defaults(func=_cmd_import)

    bt = sub.add_parser("batch", help="run a batch of seasons with papermill, then the analysis notebooks")
    bt.add_argument("spec", help="batch YAML, e.g. params/batch_demo.yaml")
    bt.add_argument("--workers", type=int, default=None, help="override the spec's worker count")
    bt.add_argument("--quiet", action="store_true")
    bt.set_defaults(func=_cmd_batch)

    dm = sub.add_parser("demo", help="the README's main job: the demo batch to figures")
    dm.add_argument("--spec", default="params/batch_demo.yaml")
    dm.set_defaults(func=_cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    from .data.base import DataError
    from .llm import FatalLLMError, ReplayMiss

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, DataError, UsageError, FatalLLMError, ReplayMiss) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
