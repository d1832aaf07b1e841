"""Where a batch's leagues run: ``local`` (a process pool on this machine) or ``dask`` (one task per league on a
Dask cluster, embedded LocalCluster or an existing scheduler). One small interface so the batch loop, its
progress bar and ``batch_runs.csv`` are the same under both.

* local workers die with the batch process (:func:`_exit_with_parent`);
* Dask reschedules the task of a worker that died (up to ``distributed.scheduler.allowed-failures`` times) and
  the run resumes from its checkpoint; a task that keeps killing workers ends as ``KilledWorker``, reported as a
  failed run;
* Dask workers must see ``out`` (run directories are resumed by whichever worker gets the retry):
  :meth:`DaskExecutor.check_shared` refuses the batch up front otherwise.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Iterator

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.runs.rundir import LOCK

DASK_MISSING = "executor: dask needs the dask extra; install it with pip install 'ffbench[dask]'"
WHAT = "batch setting"  # the heading of an executor's ConfigError: a spec key or its CLI flag
STOP_WAIT_S = 60  # how long an interrupted batch waits for its leagues' kernels on the workers to be stopped


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: a worker ends when the batch process dies (even by kill -9), instead of living on
    orphaned. Linux: the kernel signals it (prctl PR_SET_PDEATHSIG); elsewhere a thread polls the parent pid."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="ffbench-parent-watch", daemon=True).start()


class LocalExecutor:
    """Today's process pool."""

    dashboard: str | None = None
    scheduler: str | None = None

    def __init__(self, workers: int, runner: str = "notebook"):
        self.workers = workers
        context = multiprocessing.get_context()  # the pool's (the default)
        if context.get_start_method() == "fork":
            # forked workers inherit what this process imported: what each season needs imported here once
            # instead of in every worker (papermill: 4.5 s of CPU each here, 2.4 s of it jsonschema compiling the
            # Lark grammars of rfc3987-syntax; a direct season: the engine, pandas, pyarrow)
            if runner == "direct":
                import ffbench_lib.runs.season  # noqa: F401
            else:
                import papermill  # noqa: F401
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_exit_with_parent,
                                        initargs=(os.getpid(),))

    def submit(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        return self.pool.submit(fn, *args)

    def as_completed(self, futures: list[Any]) -> Iterator[tuple[Any, Any, BaseException | None]]:
        """(future, result, error) as each finishes."""
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                exc = fut.exception()
                yield fut, (None if exc else fut.result()), exc

    def check_shared(self, out: Path) -> None:
        """Every worker is on this machine."""

    def abort(self, futures: list[Any], run_dirs: list[str]) -> int:
        """The pool's workers (and their kernels) end with the batch process."""
        return 0

    def close(self) -> None:
        self.pool.shutdown()


def _read_probe(path: str, token: str) -> bool:
    """On a worker: does ``path`` hold ``token`` (the same storage as the submitter)?"""
    try:
        return Path(path).read_text(encoding="utf-8") == token
    except OSError:
        return False


class DaskExecutor:
    """A ``distributed.Client`` on ``scheduler``, or on an embedded LocalCluster of ``workers`` processes."""

    def __init__(self, workers: int, scheduler: str | None):
        try:
            import distributed
        except ImportError:
            raise ConfigError([DASK_MISSING], what=WHAT) from None
        self._distributed = distributed
        self.cluster = None
        if scheduler is None:
            self.cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                    dashboard_address=":0", silence_logs=40)
            self.client = distributed.Client(self.cluster)
        else:
            check_address(scheduler)
            try:
                self.client = distributed.Client(scheduler, timeout="30s")
            except (OSError, TimeoutError) as exc:
                raise ConfigError([f"scheduler: cannot reach the Dask scheduler at {scheduler} ({exc}); start it "
                                   "(dask scheduler) or fix the address"], what=WHAT) from None
        self.scheduler = self.client.scheduler.address
        self.dashboard = self.client.dashboard_link
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {}))) if scheduler else workers

    def submit(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A readable, unique task key: the dashboard shows which league a task is."""
        return self.client.submit(fn, *args, key=f"{name}-{uuid.uuid4().hex[:8]}", pure=False)

    def abort(self, futures: list[Any], run_dirs: list[str]) -> int:
        """The batch was interrupted: cancel its tasks and end the kernels still playing its leagues on the
        workers (a cancelled task's thread runs on, and its season lives in the kernel it started: on an
        existing cluster it would finish, and keep paying for calls, after the batch exited). A kernel still
        starting takes its run's lock a moment later, so this repeats until no task of the batch runs. Returns
        how many kernels were ended; their runs resume from their last checkpoint on the next batch."""
        keys = [f.key for f in futures]
        self.client.cancel(futures, force=True)
        ended: set[tuple[str, int]] = set()
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            report = self.client.run(_stop_runs, run_dirs, keys)
            ended |= {(w, pid) for w, (pids, _) in report.items() for pid in pids}
            if not any(running for _, running in report.values()):
                break
            time.sleep(1.0)
        return len(ended)

    def as_completed(self, futures: list[Any]) -> Iterator[tuple[Any, Any, BaseException | None]]:
        for fut in self._distributed.as_completed(futures):
            try:
                yield fut, fut.result(), None
            except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: a failed run, the batch goes on
                yield fut, None, exc

    def check_shared(self, out: Path) -> None:
        """Refuse a batch whose ``out`` some worker cannot see, before any run starts: a retried run would start
        over (or fail) on another worker, and the analysis would miss runs."""
        out.mkdir(parents=True, exist_ok=True)
        probe = out.resolve() / f".probe-{uuid.uuid4().hex}"
        token = uuid.uuid4().hex
        probe.write_text(token, encoding="utf-8")
        try:
            seen = self.client.run(_read_probe, str(probe), token)
        finally:
            probe.unlink(missing_ok=True)
        names = {w: str(info.get("name", w)) for w, info in self.client.scheduler_info().get("workers", {}).items()}
        blind = sorted(w if names.get(w, w) == w else f"{names[w]} ({w})" for w, ok in seen.items() if not ok)
        if not seen:
            raise ConfigError([f"scheduler: the Dask cluster at {self.scheduler} has no workers; start some "
                               f"(dask worker {self.scheduler})"], what=WHAT)
        if blind:
            raise ConfigError([f"out: Dask worker(s) {', '.join(blind)} cannot see {out.resolve()}; put out on "
                               "storage every worker mounts at the same path (a shared file system) or run those "
                               "workers where it is"], what=WHAT)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def check_address(address: str) -> None:
    """A scheduler address Dask can dial (``tcp://host:port``; ``host:port`` means tcp), or ConfigError before
    anything is written."""
    try:
        from distributed.comm.addressing import get_address_host_port, normalize_address
    except ImportError:
        raise ConfigError([DASK_MISSING], what=WHAT) from None
    try:
        get_address_host_port(normalize_address(address))
    except ValueError as exc:
        raise ConfigError([f"scheduler: {address!r} is not a Dask scheduler address ({exc}); write it as "
                           "tcp://HOST:PORT (dask scheduler prints it)"], what=WHAT) from None


def _stop_runs(run_dirs: list[str], keys: list[str], dask_worker: Any = None) -> tuple[list[int], list[str]]:
    """On a worker: kill the kernels (children of this worker) that hold one of ``run_dirs``' lock files, and
    say which of ``keys`` still run here (``dask_worker``: given by ``client.run``). Only this batch's leagues hold those locks (the engine's one-writer
    lock), so other work on a shared cluster is never touched."""
    import psutil

    locks = {str(Path(d) / LOCK) for d in run_dirs}
    ended = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if any(f.path in locks for f in proc.open_files()):
                proc.kill()
                ended.append(proc.pid)
        except psutil.Error:
            continue
    running = set(dask_worker.active_threads.values())  # client.run passes the worker by this argument name
    return ended, [k for k in keys if k in running]


def open_executor(kind: str, workers: int, scheduler: str | None,
                  runner: str = "notebook") -> LocalExecutor | DaskExecutor:
    """The batch's executor (``scheduler`` only with dask, ``runner`` direct only local: the batch spec's rules)."""
    return LocalExecutor(workers, runner) if kind == "local" else DaskExecutor(workers, scheduler)
