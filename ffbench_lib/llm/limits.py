"""How many calls one provider endpoint may have in flight (its ``max_concurrency``): :func:`lease`.

A live call holds a lease around the request only (never a cache hit or a retry's backoff sleep). The limit
always holds within this process (an asyncio semaphore per event loop and endpoint) and, by
``FFBENCH_PROVIDER_LIMITS`` (:mod:`ffbench_lib.settings`), across processes:

* a Dask scheduler address (``tcp://host:8786``): one ``distributed.Semaphore`` per endpoint, named
  ``ffbench-provider:<endpoint>``. The season's kernel is not a Dask worker, so each process connects its own
  client once; that client's thread refreshes the leases (every ``lease-timeout``/5), so a long call keeps its
  lease, and the leases of a process that dies are freed after ``distributed.scheduler.locks.lease-timeout``
  (30 s by default). The scheduler keeps the first limit it was given for an endpoint: asking another one is
  refused (:class:`LimitError`) until the scheduler restarts, never two limits at once;
* a folder (the local executor's ``<out>/.limits``): ``limit`` lock files per endpoint, a call holds one; the OS
  frees a dead process's locks at once. A process only takes slots below its own limit, so if processes disagree
  the endpoint never has more calls in flight than the largest limit;
* unset: this process only (a single ``ffbench run``).
Within one process, one endpoint has one limit: two limits for it are refused, never silently merged.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import threading
import weakref
from pathlib import Path
from typing import Any, AsyncIterator

from ..settings import Settings, settings

POLL_S = 0.05  # how often a call waiting for a lock-file slot tries again
_LOCAL: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[int, asyncio.Semaphore]]]" = \
    weakref.WeakKeyDictionary()
_CLUSTERS: dict[str, "_Cluster"] = {}
_CLUSTERS_LOCK = threading.Lock()


class LimitError(RuntimeError):
    """A provider limit that cannot be held as configured (conflicting limits, an unreachable scheduler)."""


@contextlib.asynccontextmanager
async def lease(provider_key: str, limit: int) -> AsyncIterator[None]:
    """Hold one of ``limit`` slots of ``provider_key`` for the block: in this process, then where
    ``FFBENCH_PROVIDER_LIMITS`` says."""
    where = settings().provider_limits
    async with _local(provider_key, limit):
        if not where:
            yield
        elif "://" in where:
            async with _dask_lease(where, provider_key, limit):
                yield
        else:
            async with _folder_lease(Path(where), provider_key, limit):
                yield


def _local(key: str, limit: int) -> asyncio.Semaphore:
    per_loop = _LOCAL.setdefault(asyncio.get_running_loop(), {})
    held, sem = per_loop.setdefault(key, (limit, asyncio.Semaphore(limit)))
    if held != limit:
        raise LimitError(f"provider {key}: max_concurrency {limit} here but {held} for another team using the same "
                         "endpoint in this process; give every team of one endpoint the same max_concurrency")
    return sem


def slot_folder(folder: Path, key: str) -> Path:
    """``key``'s lock files: a readable, file-name-safe prefix and a hash (two endpoints never share one)."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return folder / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', key)[:60]}-{digest}"


@contextlib.asynccontextmanager
async def _folder_lease(folder: Path, key: str, limit: int) -> AsyncIterator[None]:
    from filelock import FileLock, Timeout

    slots = slot_folder(folder, key)
    try:
        slots.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LimitError(f"{Settings.variable('provider_limits')}={folder}: cannot create {slots} "
                         f"({exc.strerror or exc}); point it at a writable folder") from None
    while True:
        for i in range(limit):
            lock = FileLock(slots / f"slot-{i}.lock")  # flock per open file: also exclusive within a process
            try:
                lock.acquire(blocking=False)
            except Timeout:
                continue
            try:
                yield
            finally:
                lock.release()
            return
        await asyncio.sleep(POLL_S)


class _Cluster:
    """This process's client of one Dask scheduler (its own loop thread) and its semaphores."""

    def __init__(self, address: str):
        try:
            import distributed
        except ImportError:
            raise LimitError(f"{Settings.variable('provider_limits')}={address} is a Dask scheduler address but "
                             "dask.distributed is not installed; pip install 'ffbench[dask]'") from None
        try:
            self.client = distributed.Client(address, set_as_default=False)
        except (OSError, asyncio.TimeoutError) as exc:
            raise LimitError(f"{Settings.variable('provider_limits')}={address}: cannot reach the Dask scheduler "
                             f"({exc}); start it or fix the address") from None
        self.address, self.semaphores, self._lock = address, {}, threading.Lock()

    def semaphore(self, key: str, limit: int) -> Any:
        from distributed import Semaphore

        name = f"ffbench-provider:{key}"
        with self._lock:
            if name not in self.semaphores:
                self.semaphores[name] = Semaphore(max_leases=limit, name=name, scheduler_rpc=self.client.scheduler,
                                                  loop=self.client.loop)
            sem = self.semaphores[name]
        if sem.max_leases != limit:
            raise self.conflict(key, limit, sem.max_leases)
        return sem

    def conflict(self, key: str, limit: int, held: Any) -> LimitError:
        return LimitError(f"provider {key}: max_concurrency {limit}, but the Dask scheduler at {self.address} "
                          f"already holds this endpoint to {held}; use one max_concurrency per endpoint while the "
                          "scheduler runs, or restart the scheduler to change it")

    def run(self, coro: Any) -> "asyncio.Future[Any]":
        """``coro`` on the client's loop, awaitable from the caller's loop."""
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.client.loop.asyncio_loop))


def _cluster(address: str) -> _Cluster:
    with _CLUSTERS_LOCK:
        if address not in _CLUSTERS:
            _CLUSTERS[address] = _Cluster(address)
        return _CLUSTERS[address]


async def _acquire(sem: Any) -> bool:  # on the client's loop, where the Semaphore's methods are coroutines
    await sem  # registers it (once); the scheduler refuses another max_leases for the name
    return await sem.acquire()


async def _release(sem: Any) -> bool:
    return await sem.release()


@contextlib.asynccontextmanager
async def _dask_lease(address: str, key: str, limit: int) -> AsyncIterator[None]:
    # connects once per process, off the season's loop
    cluster = _CLUSTERS.get(address) or await asyncio.to_thread(_cluster, address)
    sem = cluster.semaphore(key, limit)
    acquiring = asyncio.run_coroutine_threadsafe(_acquire(sem), cluster.client.loop.asyncio_loop)
    try:
        await asyncio.shield(asyncio.wrap_future(acquiring))
    except asyncio.CancelledError:  # the lease may still be granted: give it back then
        acquiring.add_done_callback(lambda f: f.cancelled() or f.exception() is not None
                                    or asyncio.run_coroutine_threadsafe(_release(sem),
                                                                        cluster.client.loop.asyncio_loop))
        raise
    except ValueError as exc:
        if "Inconsistent max leases" in str(exc):
            raise cluster.conflict(key, limit, str(exc).rpartition(" ")[2]) from None
        raise
    except (OSError, asyncio.TimeoutError) as exc:
        raise LimitError(f"provider {key}: no lease from the Dask scheduler at {address} ({exc})") from None
    try:
        yield
    finally:
        await asyncio.shield(cluster.run(_release(sem)))  # cancelled or not, the lease goes back


def close() -> None:
    """Disconnect from every Dask scheduler (tests; a notebook done with a cluster)."""
    with _CLUSTERS_LOCK:
        clusters = list(_CLUSTERS.values())
        _CLUSTERS.clear()
    for c in clusters:
        with contextlib.suppress(Exception):
            c.client.close()
