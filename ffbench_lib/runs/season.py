"""One call to run one season: load the config, prepare (or reuse) the data, build agents, run the engine."""
from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path

from ffbench_lib.core.aio import run_sync
from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import Engine
from ffbench_lib.data.notices import print_notices
from ffbench_lib.core.paths import outputs_dir
from ffbench_lib.runs.preflight import run_preflight


def run_season(config: str | Path | League, seed: int | None = None, out: str | Path | None = None,
               resume: bool = False, progress: bool = True, crash_after: str | None = None,
               config_name: str | Path | None = None, **engine_kwargs) -> Path:
    """Run (or, with ``resume``, continue) one season and return its run directory (default ``outputs/run``
    under the project root). ``config_name``: the file a given League came from, for messages."""
    out = Path(out) if out is not None else outputs_dir() / "run"
    league = load_config(config, seed=seed) if not isinstance(config, League) else (
        config.model_copy(update={"seed": seed}) if seed is not None else config)
    prepared = prepared_for(league)
    run_preflight(league)  # budgets that cannot fit stop here, before anything is written
    print_notices(league, config_name or config)  # inputs the season lacks, models that may know its results: stderr, before playing
    engine = Engine(league, prepared, out, progress=progress, **engine_kwargs)
    run_sync(_with_signals(engine, resume=resume, crash_after=crash_after))
    return Path(out)


async def _with_signals(engine: Engine, **kwargs):
    """``engine.run`` with SIGINT and SIGTERM stopping it cleanly (run.json says so, ``--resume`` continues);
    only where the loop can take signals (the main thread on POSIX), else the defaults stay."""
    loop = asyncio.get_running_loop()
    installed = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, engine.interrupt, sig)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
    try:
        return await engine.run(**kwargs)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
