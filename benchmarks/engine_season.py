"""Engine time and peak memory of full bot seasons on real 2024 data.

Each configuration runs in a fresh process (prepared data loaded from the cache first, not timed), 5 seasons,
median reported. Scales the number of teams (8, 10, 12, 14) and of weeks (6, 12, 17), runs the 10-team
season with waivers and free agents on (FAAB and rolling priority), and the full-league presets as shipped
(``params/standard_10.yaml``: K, DST, IR, FAAB, playoffs; ``params/superflex_12.yaml``: 12 teams, SUPERFLEX too).

    python benchmarks/engine_season.py [--repeat 5] [--code DIR]

``--code DIR`` times another checkout's code (its ``ffbench_lib`` on ``PYTHONPATH``, this checkout's params).
``--compare OLD_DIR`` times the presets (demo, standard_10, superflex_12) old against new (``--code``, default
this checkout) pair by pair: each pair runs one child of each, alternating which goes first, and the pair's
ratio new/old is reported with the median over ``--pairs`` pairs (a busy machine slows both of a pair alike),
besides each side's median engine time; ``--presets demo standard_10`` compares only those.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = {"demo": "params/demo.yaml", "standard_10": "params/standard_10.yaml",
           "superflex_12": "params/superflex_12.yaml"}

CHILD = r"""
import asyncio, json, resource, statistics, sys, tempfile, time
from pathlib import Path
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import Engine
teams, weeks, repeat, waivers = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if waivers.endswith(".yaml"):  # a preset as shipped
    league = load_config(Path(waivers))
else:
    base = load_config(Path("params/demo.yaml"))
    strategies = ["vorp", "adp", "recent_form", "random"]
    league = base.model_copy(update={
        "weeks": weeks, "trades": base.trades.model_copy(update={"weeks": [w for w in base.trades.weeks if w <= weeks]}),
        "teams": [{"name": f"T{i}", "agent": {"kind": "bot", "strategy": strategies[i % 4]}} for i in range(teams)],
        "waivers": {"enabled": waivers != "off", "mode": "faab" if waivers == "off" else waivers}})
    league = type(base).model_validate(league.model_dump())
prepared = prepared_for(league)
times = []
for seed in range(repeat):
    with tempfile.TemporaryDirectory() as out:
        lg = league.model_copy(update={"seed": seed})
        t = time.perf_counter()
        asyncio.run(Engine(lg, prepared, Path(out) / "run", progress=False).run())
        times.append(time.perf_counter() - t)
import ffbench_lib
print(json.dumps({"code": str(Path(ffbench_lib.__file__).resolve().parents[1]), "median": statistics.median(times), "min": min(times),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(code: Path, teams: int, weeks: int, repeat: int, waivers: str) -> dict:
    """One fresh process timing ``repeat`` seasons with the ``ffbench_lib`` of ``code``. ``-P``: ``python -c`` would
    put its working folder (this checkout, for the params) ahead of ``PYTHONPATH``, timing this code whatever
    ``code`` says."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, "-P", "-c", CHILD, str(teams), str(weeks), str(repeat), waivers], cwd=ROOT,
                         env=env, check=True, capture_output=True, text=True).stdout
    res = json.loads(out)
    if Path(res["code"]) != Path(code).resolve():  # never time one checkout and label it another
        raise SystemExit(f"the child timed the ffbench_lib of {res['code']}, not of {code}")
    return res


def compare(old: Path, new: Path, pairs: int, repeat: int, presets: list[str] | None = None) -> None:
    """Old against new code on the presets (``presets``: some of them), pair by pair (alternating which runs
    first), medians."""
    print(f"{'preset':>13}{'old s':>8}{'new s':>8}{'ratio':>7}   pair ratios (new/old)")
    for name, path in PRESETS.items():
        if presets and name not in presets:
            continue
        teams = 12 if name == "superflex_12" else 10
        olds, news, ratios = [], [], []
        for i in range(pairs):
            first, second = (old, new) if i % 2 == 0 else (new, old)
            a = child(first, teams, 17, repeat, path)["median"]
            b = child(second, teams, 17, repeat, path)["median"]
            o, n = (a, b) if first == old else (b, a)
            olds.append(o), news.append(n), ratios.append(n / o)
        print(f"{name:>13}{statistics.median(olds):>8.2f}{statistics.median(news):>8.2f}"
              f"{statistics.median(ratios):>7.2f}   {' '.join(f'{r:.2f}' for r in ratios)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="seasons per child process (median)")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose ffbench_lib is timed")
    ap.add_argument("--compare", type=Path, metavar="OLD_DIR", help="time OLD_DIR's code against --code's")
    ap.add_argument("--pairs", type=int, default=5, help="old/new pairs per preset with --compare")
    ap.add_argument("--presets", nargs="+", choices=sorted(PRESETS), help="with --compare: only these presets")
    ap.add_argument("--config", nargs="+", metavar="YAML", help="time only these league files as shipped (e.g. "
                    "params/fpl_draft.yaml: the Premier League, 38 gameweeks)")
    args = ap.parse_args()
    code = args.code.resolve()
    if args.compare is not None:
        compare(args.compare.resolve(), code, args.pairs, args.repeat, args.presets)
        return
    print(f"{'teams':>5}{'weeks':>6}{'waivers':>13}{'median s':>10}{'min s':>8}{'peak RSS MB':>13}")
    runs = [(10, 17, "off"), (10, 17, "faab"), (10, 17, "rolling"), (8, 17, "off"), (12, 17, "off"), (14, 17, "off"),
            (10, 6, "off"), (10, 12, "off"), (10, 17, "params/standard_10.yaml"), (12, 17, "params/superflex_12.yaml"),
            (10, 38, "params/fpl_draft.yaml")]
    if args.config:  # the teams and weeks columns are the files' own; shown as the header's 0
        runs = [(0, 0, path) for path in args.config]
    for teams, weeks, waivers in runs:
        r = child(code, teams, weeks, args.repeat, waivers)
        label = waivers.rsplit("/", 1)[-1].removesuffix(".yaml")
        print(f"{teams:>5}{weeks:>6}{label:>13}{r['median']:>10.2f}{r['min']:>8.2f}{r['peak_rss_mb']:>13.0f}")


if __name__ == "__main__":
    main()
