"""Wall time of the demo batch (params/batch_demo.yaml: 10 bots x 4 seeds, papermill per run) with 1 and 2
worker processes, runs only and runs + analysis notebooks. Each measurement starts from an empty batch folder
(the prepared 2024 season is cached in outputs/prepared, as after a first run).

    python benchmarks/batch_demo.py
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import yaml

from ffbench_lib.runs.batch import run_batch


def main() -> None:
    spec = yaml.safe_load(Path("params/batch_demo.yaml").read_text())
    print(f"{'workers':>7}{'analysis':>10}{'wall s':>9}")
    for workers in (1, 2):
        for analysis in (False, True):
            tmp = Path(tempfile.mkdtemp())
            s = {**spec, "base": str(Path("params/demo.yaml").resolve()), "out": str(tmp / "batch"),
                 "workers": workers, "analysis": analysis}
            (tmp / "spec.yaml").write_text(yaml.safe_dump(s))
            t = time.perf_counter()
            summary = run_batch(tmp / "spec.yaml", progress=False)
            wall = time.perf_counter() - t
            assert summary["complete"] == len(spec["seeds"]), summary
            print(f"{workers:>7}{str(analysis):>10}{wall:>9.1f}")
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
