"""One call to run one season: load the config, prepare (or reuse) the data, build agents, run the engine."""
from __future__ import annotations

import asyncio
from pathlib import Path

from .config import League, load_config
from .data.prepare import prepared_for
from .engine import Engine


def run_season(config: str | Path | League, seed: int | None = None, out: str | Path = "outputs/run",
               resume: bool = False, progress: bool = True, crash_after: str | None = None, **engine_kwargs) -> Path:
    """Run (or, with ``resume``, continue) one season and return its run directory."""
    league = load_config(config, seed=seed) if not isinstance(config, League) else (
        config.model_copy(update={"seed": seed}) if seed is not None else config)
    prepared = prepared_for(league)
    engine = Engine(league, prepared, out, progress=progress, **engine_kwargs)
    run_sync(engine.run(resume=resume, crash_after=crash_after))
    return Path(out)


def run_sync(coro):
    """``asyncio.run`` that also works inside Jupyter, whose kernel already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
