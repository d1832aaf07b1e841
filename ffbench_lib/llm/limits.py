"""How many calls one provider endpoint may have in flight (its ``max_concurrency``): :func:`lease`.

A live call holds a lease around the request only (never a cache hit or a retry's backoff sleep). The limit
always holds within this process (an asyncio semaphore per event loop and endpoint) and, by
``FFBENCH_PROVIDER_LIMITS`` (:mod:`ffbench_lib.core.settings`), across processes:

* a Dask scheduler address (``tcp://host:8786``): one ``distributed.Semaphore`` per endpoint, named
  ``ffbench-provider:<endpoint>``. The season's kernel is not a Dask worker, so each process connects its own
  client once; that client's thread refreshes the leases (every ``lease-timeout``/5), so a long call keeps its
  lease, and the leases of a process that dies are freed after ``distributed.scheduler.locks.lease-timeout``
  (30 s by default). The scheduler keeps the first limit it was given for an endpoint: asking another one is
  refused (:class:`LimitError`) until the scheduler restarts, never two limits at once. A restarted scheduler
  has forgotten the semaphore: the next call registers it again;
* an absolute folder (the local executor's ``<out>/.limits``): ``limit`` lock files per endpoint, a call holds one; the OS
  frees a dead process's locks at once. A process only takes slots below its own limit, so if processes disagree
  the endpoint never has more calls in flight than the largest limit. A process never opens a slot it holds
  (on NFS, flock is a per-process POSIX lock: a second hold would succeed and its release drop both). Waiting
  calls queue first come, first served across processes (a locked marker file each, see :func:`_folder_lease`),
  so a busy process cannot retake every slot it frees before other processes' next try;
* unset: this process only (a single ``ffbench run``).
Within one process, one endpoint has one limit: two limits for it are refused, never silently merged.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import os
import re
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Any, AsyncIterator

from ffbench_lib.core.settings import Settings, SettingsError, settings

POLL_S = 0.05  # how often a call waiting for a lock-file slot tries again
HANDOFF_S = 1.0  # how long a free lock-file slot is left to an older waiter before a younger call takes it
_HELD: dict[Path, set[int]] = {}  # slot folder -> the slots this process holds or is trying
_OWN_MARKERS: set[str] = set()  # this process's waiting calls' marker files
_HELD_LOCK = threading.Lock()
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
    try:
        where = settings().provider_limits
    except SettingsError as exc:  # e.g. a kernel started with a bad value: no call, one line
        raise LimitError(str(exc)) from None
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
    """A call that finds no slot free, or leaves a free one to an older waiter, puts a locked marker file
    ``wait-<time>-<limit>-<token>`` in the slot folder and tries again every ``POLL_S``; a call takes a free slot
    only if no live marker older than its own could take it (a dead process's marker is unlocked and removed).
    An older waiter that does not take a free slot within ``HANDOFF_S`` (its event loop busy) is passed over, so
    a stalled process never idles the endpoint for long."""
    slots = slot_folder(folder, key)
    try:
        slots.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LimitError(f"{Settings.variable('provider_limits')}={folder}: cannot create {slots} "
                         f"({exc.strerror or exc}); point it at a writable folder") from None
    marker: tuple[Path, int] | None = None
    free_since: float | None = None  # a slot this call could take has been left to an older waiter since
    try:
        while True:
            elders = _elders(slots, marker[0].name if marker else None)
            defer = free_since is None or time.monotonic() - free_since < HANDOFF_S
            got, seen_free = _take_slot(slots, limit, elders if defer else [])
            if got is not None:
                break
            free_since = (free_since or time.monotonic()) if seen_free else None
            marker = marker or _enqueue(slots, limit)
            await asyncio.sleep(POLL_S)
    finally:
        if marker:
            _dequeue(*marker)
    lock, i = got
    try:
        yield
    finally:
        try:
            lock.release()
        finally:
            with _HELD_LOCK:
                _HELD[slots].discard(i)


def _take_slot(slots: Path, limit: int, elders: list[int]) -> tuple[tuple[Any, int] | None, bool]:
    """A slot below ``limit`` this process does not hold, locked, and whether a free slot was left to an older
    waiter (one whose limit exceeds its index: ``elders`` are their limits)."""
    from filelock import FileLock, Timeout

    seen_free = False
    for i in range(limit):
        with _HELD_LOCK:
            held = _HELD.setdefault(slots, set())
            if i in held:
                continue
            held.add(i)  # never two attempts on one slot in one process
        lock = FileLock(slots / f"slot-{i}.lock")
        try:
            lock.acquire(blocking=False)
        except Timeout:
            lock = None
        if lock is not None and any(e > i for e in elders):
            lock.release()
            lock, seen_free = None, True
        if lock is not None:
            return (lock, i), seen_free
        with _HELD_LOCK:
            held.discard(i)
    return None, seen_free


def _enqueue(slots: Path, limit: int) -> tuple[Path, int]:
    """This call's marker: created under a hidden name, locked, then renamed (never seen unlocked while live)."""
    name = f"wait-{time.time_ns():020d}-{limit}-{uuid.uuid4().hex[:8]}"
    fd = os.open(slots / f".{name}", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _OWN_MARKERS.add(name)
    os.rename(slots / f".{name}", slots / name)
    return slots / name, fd


def _dequeue(path: Path, fd: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # before the unlock: a live marker is never seen unlocked
    os.close(fd)
    _OWN_MARKERS.discard(path.name)


def _elders(slots: Path, mine: str | None) -> list[int]:
    """The limits of the live waiters queued before ``mine`` (None: a call not queued yet, after all of them)."""
    out = []
    with os.scandir(slots) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith("wait-") and (mine is None or name < mine) \
                    and (name in _OWN_MARKERS or _alive(Path(entry.path))):
                out.append(int(name.split("-")[2]))
    return out


def _alive(marker: Path) -> bool:
    """Whether another process still holds ``marker`` (never one of ours: on NFS our probe would get our own
    lock, and closing it would drop it); a dead one is removed."""
    try:
        fd = os.open(marker, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return True
        raise
    else:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()
        return False
    finally:
        os.close(fd)


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

    def forget(self, sem: Any) -> None:
        """Drop ``sem`` (the scheduler no longer knows it: it restarted); the next :meth:`semaphore` registers
        the endpoint again."""
        with self._lock:
            if self.semaphores.get(sem.name) is sem:
                del self.semaphores[sem.name]
        with contextlib.suppress(Exception):
            self.client.loop.add_callback(sem.refresh_callback.stop)

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
    for again in (True, False):
        sem = cluster.semaphore(key, limit)
        acquiring = asyncio.run_coroutine_threadsafe(_acquire(sem), cluster.client.loop.asyncio_loop)
        try:
            await asyncio.shield(asyncio.wrap_future(acquiring))
            break
        except asyncio.CancelledError:  # the lease may still be granted: give it back then
            acquiring.add_done_callback(lambda f, sem=sem: f.cancelled() or f.exception() is not None
                                        or asyncio.run_coroutine_threadsafe(_release(sem),
                                                                            cluster.client.loop.asyncio_loop))
            raise
        except ValueError as exc:
            if "Inconsistent max leases" in str(exc):
                raise cluster.conflict(key, limit, str(exc).rpartition(" ")[2]) from None
            raise
        except RuntimeError as exc:  # a scheduler that restarted no longer knows the semaphore: register it anew
            if "not known" not in str(exc):
                raise
            cluster.forget(sem)
            if not again:
                raise LimitError(f"provider {key}: the Dask scheduler at {address} keeps forgetting this "
                                 "endpoint's semaphore (restarting?); check the scheduler") from None
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
