"""Engine time and peak memory of full bot seasons on real 2024 data.

Each configuration runs in a fresh process (prepared data loaded from the cache first, not timed), 5 seasons,
median reported. Scales the number of teams (8, 10, 12, 14) and of weeks (6, 12, 17), runs the 10-team
season with waivers and free agents on (FAAB and rolling priority), and the full-league presets as shipped
(``params/standard_10.yaml``: K, DST, IR, FAAB, playoffs; ``params/superflex_12.yaml``: 12 teams, SUPERFLEX too).

    python benchmarks/engine_season.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

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
print(json.dumps({"median": statistics.median(times), "min": min(times),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'teams':>5}{'weeks':>6}{'waivers':>13}{'median s':>10}{'min s':>8}{'peak RSS MB':>13}")
    for teams, weeks, waivers in [(10, 17, "off"), (10, 17, "faab"), (10, 17, "rolling"), (8, 17, "off"),
                                  (12, 17, "off"), (14, 17, "off"), (10, 6, "off"), (10, 12, "off"),
                                  (10, 17, "params/standard_10.yaml"), (12, 17, "params/superflex_12.yaml")]:
        r = json.loads(subprocess.run([sys.executable, "-c", CHILD, str(teams), str(weeks), str(args.repeat), waivers],
                                      check=True, capture_output=True, text=True).stdout)
        label = waivers.rsplit("/", 1)[-1].removesuffix(".yaml")
        print(f"{teams:>5}{weeks:>6}{label:>13}{r['median']:>10.2f}{r['min']:>8.2f}{r['peak_rss_mb']:>13.0f}")


if __name__ == "__main__":
    main()
