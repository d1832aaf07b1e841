"""The demo batch's report page, built once per test run (``conftest.built_once``) for the two files that only
read it: tests/test_report.py (the README's flow: a batch, then its page, opened offline) and
tests/test_consistency.py (the stages the build prints, the figures' layout). One notebook execution instead of
two."""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import yaml

from conftest import built_once
from engine_helpers import REPO

SEEDS, WEEKS = [0, 1], 3


@contextlib.contextmanager
def stderr_to(path: Path):
    """Everything written to stderr inside, by Python (``sys.stderr``) and by child processes (fd 2, e.g. the
    kernel), goes to ``path``: what a person at a terminal would see."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as f:
        os.dup2(f.fileno(), 2)
        try:
            with contextlib.redirect_stderr(f):
                yield
        finally:
            f.flush()
            os.dup2(saved, 2)
            os.close(saved)


def demo_batch_report(tmp_path_factory) -> Path:
    """``<folder>/batch``: a batch of the demo league (params/batch_demo.yaml's shape: bot seeds, rotate design;
    2 seeds of 3 weeks, one local worker, each season played in it: ``runner: direct``) and ``batch.json`` its summary; ``<folder>/report.html``: the page over
    the batch folder, built with progress on (as on a terminal), its stderr in ``<folder>/stderr.txt``."""
    from ffbench_lib.present import report
    from ffbench_lib.runs.batch import run_batch

    def build(folder: Path) -> None:
        spec = yaml.safe_load((REPO / "params" / "batch_demo.yaml").read_text())
        short = {"weeks": WEEKS, "trades": {"weeks": [2]}}
        spec.update(base=str(REPO / "params" / "demo.yaml"), seeds=SEEDS, workers=1, out=str(folder / "batch"),
                    analysis=False, seed_overrides={s: short for s in SEEDS}, runner="direct")  # runs, no kernels
        (folder / "batch.yaml").write_text(yaml.safe_dump(spec))
        summary = run_batch(folder / "batch.yaml", progress=False)
        (folder / "batch.json").write_text(json.dumps({"complete": summary["complete"]}))
        with stderr_to(folder / "stderr.txt"):
            report.build(str(folder / "batch"), folder / "report.html", progress=True)

    return built_once(tmp_path_factory, "demo-batch-report", build)


def demo_runs(tmp_path_factory, prepared) -> Path:
    """``<folder>/s0``, ``<folder>/s1``: 4-week runs of the demo league (seeds 0 and 1), played once per test run
    for tests/test_consistency.py (reads them) and tests/test_report.py (copies them beside a third). Read only."""
    from engine_helpers import demo_league, run_engine

    def build(folder: Path) -> None:
        for seed in range(2):
            run_engine(demo_league(seed=seed, weeks=4), prepared, folder / f"s{seed}")

    return built_once(tmp_path_factory, "demo-4week-runs", build)
