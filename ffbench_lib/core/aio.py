"""Running a coroutine to its end from synchronous code, in a script or inside Jupyter."""
from __future__ import annotations

import asyncio
import concurrent.futures


def run_sync(coro):
    """``asyncio.run`` that also works inside Jupyter, whose kernel already runs an event loop (then the
    coroutine runs on a loop of its own in a worker thread)."""
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # decided outside the except block: an error of the run must not chain "no running loop"
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
