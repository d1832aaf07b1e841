"""Time and peak memory to prepare one season from each source (fresh process per measurement).

    python benchmarks/prepare_season.py [--season 2024] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, tempfile, time
from ffbench_lib.data.prepare import prepare_season
season, source = int(sys.argv[1]), sys.argv[2]
with tempfile.TemporaryDirectory() as out:
    t = time.perf_counter()
    prepare_season(season, source, out=out, force=True)
    secs = time.perf_counter() - t
print(json.dumps({"seconds": secs, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--season", type=int, default=2024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'source':<14}{'median s':>10}{'min s':>8}{'peak RSS MB':>13}")
    for source in ("nflverse", "sportsdataio"):
        runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD, str(args.season), source], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(args.repeat)]
        secs = [r["seconds"] for r in runs]
        print(f"{source:<14}{statistics.median(secs):>10.2f}{min(secs):>8.2f}"
              f"{max(r['peak_rss_mb'] for r in runs):>13.0f}")


if __name__ == "__main__":
    main()
