"""Seasons per minute of a bot batch (the demo league, papermill per season) on the local executor and on Dask
(an embedded LocalCluster, started inside the measured time), and on the local executor with ``runner: direct``
(each season played in its worker, no kernel), with 1 and 2 workers, and the executors' own overhead per task
(the round trip of a no-op task, and the Dask minus local wall time per season).

    python benchmarks/batch_scale.py                 # 16 full seasons per setting
    python benchmarks/batch_scale.py --seasons 8 --weeks 6

Each setting starts from an empty batch folder; the prepared season is cached (outputs/prepared) as after a
first run. On a machine with fewer cores than workers the numbers say more about the machine than the executor.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from ffbench_lib.runs.batch import run_batch

REPO = Path(__file__).resolve().parents[1]


def _noop(i: int) -> int:
    return i


def round_trip(kind: str, n: int = 200) -> float:
    """Milliseconds per no-op task through one worker, the pool or cluster already started."""
    if kind == "local":
        with ProcessPoolExecutor(max_workers=1) as pool:
            pool.submit(_noop, -1).result()
            t = time.perf_counter()
            for i in range(n):
                pool.submit(_noop, i).result()
            return (time.perf_counter() - t) / n * 1000
    import distributed

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        client.submit(_noop, -1, pure=False).result()
        t = time.perf_counter()
        for i in range(n):
            client.submit(_noop, i, pure=False).result()
        return (time.perf_counter() - t) / n * 1000


def season_batch(executor: str, workers: int, seasons: int, weeks: int | None, runner: str = "notebook") -> float:
    """Wall seconds of a batch of ``seasons`` bot seasons (analysis off)."""
    tmp = Path(tempfile.mkdtemp(prefix="ffbench-scale-"))
    try:
        spec = {"name": "scale", "base": str(REPO / "params" / "demo.yaml"), "seeds": list(range(seasons)),
                "workers": workers, "executor": executor, "runner": runner, "out": str(tmp / "batch"),
                "analysis": False,
                "overrides": {"weeks": weeks, "trades": {"weeks": [w for w in (2, 6, 10) if w < weeks]}}
                if weeks else {}}
        (tmp / "spec.yaml").write_text(yaml.safe_dump(spec))
        t = time.perf_counter()
        summary = run_batch(tmp / "spec.yaml", progress=False)
        wall = time.perf_counter() - t
        assert summary["complete"] == seasons, summary
        return wall
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seasons", type=int, default=16, help="bot seasons per setting (default 16)")
    ap.add_argument("--weeks", type=int, default=None, help="shorter seasons (default: the demo league's)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default 1 2)")
    args = ap.parse_args()

    walls: dict[tuple[str, int], float] = {}
    print(f"{args.seasons} bot seasons{f' of {args.weeks} weeks' if args.weeks else ''} per setting")
    print(f"{'executor':>9}{'runner':>10}{'workers':>8}{'wall s':>9}{'seasons/min':>13}{'s/season':>10}")
    for workers in args.workers:
        for executor, runner in (("local", "notebook"), ("local", "direct"), ("dask", "notebook")):
            wall = season_batch(executor, workers, args.seasons, args.weeks, runner)
            if runner == "notebook":
                walls[executor, workers] = wall
            print(f"{executor:>9}{runner:>10}{workers:>8}{wall:>9.1f}{args.seasons / wall * 60:>13.1f}"
                  f"{wall / args.seasons:>10.2f}", flush=True)
    print("\noverhead per task")
    for workers in args.workers:
        extra = (walls["dask", workers] - walls["local", workers]) / args.seasons
        print(f"  dask - local wall per season, {workers} worker(s): {extra:+.2f} s (includes starting the cluster)")
    for kind in ("local", "dask"):
        print(f"  no-op task round trip, {kind}: {round_trip(kind):.2f} ms")


if __name__ == "__main__":
    main()
