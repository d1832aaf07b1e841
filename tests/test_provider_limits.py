"""A provider's ``max_concurrency`` holds across processes (:mod:`ffbench_lib.llm.limits`): a Dask cluster's
workers share one ``distributed.Semaphore`` per endpoint, the local executor's workers share lock files.

Every test first shows the same setup WITHOUT the shared limit exceeds it (so the check can fail): the fake
server holds each answer until 3 requests are in flight at once (or ``hold_s`` passes), which makes overlap
certain wherever the limit allows it, with no timing-sensitive assert.
"""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import pytest

from ffbench_lib.llm import limits
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

CROWD = 3  # one more than the limit
LIMIT = 2
CALLS = 2  # per process: with 3 processes, per-process limits alone allow 6 in flight


@dataclass
class CrowdServer(FakeOpenAIServer):
    """Holds every answer until ``CROWD`` requests have been in flight at once (then all go), or ``hold_s``."""

    hold_s: float = 30.0

    def respond(self, body, auth="", attempt_id=None):
        end = time.monotonic() + self.hold_s
        while self.max_inflight < CROWD and time.monotonic() < end:
            time.sleep(0.01)
        return super().respond(body, auth, attempt_id)


def _calls(api_base: str, where: str | None, n: int = CALLS) -> dict:
    """``n`` concurrent calls through the real client and litellm, in this process, with ``max_concurrency``
    LIMIT and FFBENCH_PROVIDER_LIMITS ``where`` (None: unset)."""
    import dask

    from ffbench_lib.config.league import LLMAgent, LLMSettings
    from ffbench_lib.llm import Budget, LLMClient
    from ffbench_lib.core.settings import Settings, export

    if where is None:
        os.environ.pop(Settings.variable("provider_limits"), None)
    else:
        export(provider_limits=where)
    spec = LLMAgent(kind="llm", model="openai/fake", api_base=api_base, max_concurrency=LIMIT, timeout_s=120,
                    max_tokens=100, input_cost_per_token=0, output_cost_per_token=0)
    client = LLMClient(spec, LLMSettings(retries=0), None, Budget(None), team="T")

    async def run():
        return await asyncio.gather(*(client.complete([{"role": "user", "content": f"DECISION: none\n{os.getpid()}"
                                                                                   f" call {i}"}]) for i in range(n)))

    results = asyncio.run(run())
    return {"pid": os.getpid(), "texts": [r.text for r in results],
            "lease_timeout": dask.config.get("distributed.scheduler.locks.lease-timeout", None)}


#: what every worker process imports before its first call (litellm alone is ~10 s of CPU per process)
PRELOAD = ["litellm", "dask", "distributed", "ffbench_lib.llm", "ffbench_lib.config.league", "ffbench_lib.core.settings"]


@pytest.fixture(scope="module")
def forkserver():
    """The process pools and Dask workers of this module fork from one server that imported litellm once,
    instead of each spawned process importing it again. The server starts clean (it never took a lease or
    opened a lock file), so every worker is still a separate process with its own, fresh limits state."""
    ctx = get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    import multiprocessing.forkserver as fs

    fs.ensure_running()
    return ctx


def _all_answered(outs: list[dict], n_procs: int = 3) -> None:
    assert len({o["pid"] for o in outs}) == n_procs
    assert all(t and "rationale" in t for o in outs for t in o["texts"])


# -- Dask -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_cluster(forkserver):
    """3 worker processes (forked from the module's server), the default lease timeout (30 s); the scheduler
    checks leases every 200 ms (a semaphore registered with a short timeout frees a dead holder's lease soon)."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import tests/
    with dask.config.set({"distributed.scheduler.locks.lease-validation-interval": "200ms",
                          "distributed.worker.multiprocessing-method": "forkserver"}):
        with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      silence_logs=40) as cluster, distributed.Client(cluster) as client:
            yield cluster, client
            limits.close()  # before the scheduler goes: no reconnection attempts


def _on_each_worker(client, fn, *args) -> list[dict]:
    workers = sorted(client.scheduler_info()["workers"])
    assert len(workers) == 3
    futures = [client.submit(fn, *args, workers=[w], allow_other_workers=False, pure=False) for w in workers]
    return client.gather(futures)


def test_dask_workers_never_exceed_the_provider_limit(dask_cluster):
    cluster, client = dask_cluster
    with CrowdServer() as srv:  # per-process limits only: 3 workers x 2 calls crowd the server
        _all_answered(_on_each_worker(client, _calls, srv.api_base, None))
        assert srv.max_inflight >= CROWD
    with CrowdServer(hold_s=1.0) as srv:  # the scheduler's semaphore: never a 3rd call, so every answer waits 1 s
        outs = _on_each_worker(client, _calls, srv.api_base, cluster.scheduler_address)
        _all_answered(outs)
        assert srv.requests == 3 * CALLS and srv.max_inflight <= LIMIT


@pytest.mark.slow
def test_dask_lease_longer_than_its_timeout_is_kept_by_refreshing(dask_cluster, monkeypatch):
    """A call held 8 s on a semaphore whose leases time out after 5 s unless refreshed (every 1 s): still one
    lease, and no other call let in (a refresh would have to stall 4 s to lose it)."""
    import dask

    cluster, _ = dask_cluster
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", cluster.scheduler_address)
    leases = cluster.scheduler.extensions["semaphores"].leases

    async def main():
        async with limits.lease("refresh@dask", 1):
            await asyncio.sleep(8)
            assert len(leases["ffbench-provider:refresh@dask"]) == 1  # not timed out
            assert not await asyncio.to_thread(asyncio.run, _lease_once("refresh@dask", 1))  # another loop
    with dask.config.set({"distributed.scheduler.locks.lease-timeout": "5s"}):
        asyncio.run(main())


def test_dask_semaphore_forgotten_by_the_scheduler_is_registered_again(dask_cluster, monkeypatch):
    """After a scheduler restart a long-lived process's semaphore is unknown there: the next call registers it
    again (same limit) instead of failing."""
    from distributed import Semaphore

    cluster, client = dask_cluster
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", cluster.scheduler_address)
    assert asyncio.run(_lease_once("restart@dask", 60))
    ext = cluster.scheduler.extensions["semaphores"]
    Semaphore(max_leases=1, name="ffbench-provider:restart@dask", scheduler_rpc=client.scheduler,
              loop=client.loop).close()  # the scheduler forgets it, as a restarted one would
    assert "ffbench-provider:restart@dask" not in ext.max_leases
    assert asyncio.run(_lease_once("restart@dask", 60))
    assert ext.max_leases["ffbench-provider:restart@dask"] == 1


_HOLD = """
import asyncio, sys
from ffbench_lib.llm import limits
async def main():
    async with limits.lease(sys.argv[1], 1):
        print("held", flush=True)
        await asyncio.sleep(600)
asyncio.run(main())
"""


def _holder(where: str, key: str, env: dict | None = None) -> subprocess.Popen:
    """A process holding ``key``'s only slot until it is killed (SIGKILL: no clean-up of any kind)."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, key], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {}), "FFBENCH_PROVIDER_LIMITS": where})
    assert proc.stdout.readline().strip() == "held", "the holder did not get its lease"
    return proc


async def _lease_once(key: str, wait_s: float) -> bool:
    async def take():
        async with limits.lease(key, 1):
            return True
    try:
        return await asyncio.wait_for(take(), wait_s)
    except asyncio.TimeoutError:
        return False


def test_dask_lease_of_a_dead_process_is_freed(dask_cluster, monkeypatch):
    cluster, client = dask_cluster
    proc = _holder(cluster.scheduler_address, "dead@dask",
                   {"DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "2s"})
    try:
        monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", cluster.scheduler_address)
        from distributed import Semaphore

        sem = Semaphore(max_leases=1, name="ffbench-provider:dead@dask", scheduler_rpc=client.scheduler,
                        loop=client.loop)
        assert sem.get_value() == 1  # the holder's lease
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert asyncio.run(_lease_once("dead@dask", 60))  # freed once its client stops refreshing it


def test_dask_call_cancelled_while_waiting_leaves_no_lease(dask_cluster, monkeypatch):
    """A lease granted after its caller gave up is given back (not kept, refreshed forever, by this process)."""
    import threading

    cluster, _ = dask_cluster
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", cluster.scheduler_address)
    pending = cluster.scheduler.extensions["semaphores"].metrics["pending"]
    waiting: dict = {}

    def other_loop():  # another event loop: its per-loop limit lets it wait on the scheduler's semaphore
        async def wait_for_lease():
            async with limits.lease("cancel@dask", 1):
                await asyncio.sleep(600)

        async def main():
            waiting["loop"], waiting["task"] = asyncio.get_running_loop(), asyncio.create_task(wait_for_lease())
            with pytest.raises(asyncio.CancelledError):
                await waiting["task"]
        asyncio.run(main())

    async def main():
        held, done = asyncio.Event(), asyncio.Event()

        async def holder():
            async with limits.lease("cancel@dask", 1):
                held.set()
                await done.wait()
        task = asyncio.create_task(holder())
        await held.wait()
        t = threading.Thread(target=other_loop)
        t.start()
        while pending["ffbench-provider:cancel@dask"] < 1:  # the other loop waits on the scheduler
            await asyncio.sleep(0.05)
        waiting["loop"].call_soon_threadsafe(waiting["task"].cancel)
        await asyncio.to_thread(t.join)
        done.set()  # the scheduler now grants the lease to the cancelled request
        await task
        return await _lease_once("cancel@dask", 60)
    assert asyncio.run(asyncio.wait_for(main(), 120))


def test_dask_refuses_a_second_limit_for_one_endpoint(dask_cluster, monkeypatch):
    cluster, _ = dask_cluster
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", cluster.scheduler_address)
    assert asyncio.run(_lease_once("two@dask", 60))
    limits.close()  # a new process, as far as the scheduler knows

    async def other():
        async with limits.lease("two@dask", 3):
            pass
    with pytest.raises(limits.LimitError, match=r"max_concurrency 3, but the Dask scheduler .* already holds this "
                                                r"endpoint to 1; .*restart the scheduler"):
        asyncio.run(other())



def test_an_unreachable_scheduler_stops_the_call_with_one_line(monkeypatch):
    dask = pytest.importorskip("dask")
    from ffbench_lib.config.league import LLMAgent, LLMSettings
    from ffbench_lib.llm import Budget, FatalLLMError, LLMClient

    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "tcp://127.0.0.1:1")  # nothing listens there
    spec = LLMAgent(kind="llm", model="openai/fake", api_base="http://127.0.0.1:9/v1", max_concurrency=2)
    client = LLMClient(spec, LLMSettings(retries=0), None, Budget(None), team="T")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), pytest.raises(FatalLLMError) as err:
        asyncio.run(client.complete([{"role": "user", "content": "hi"}]))
    assert str(err.value).startswith("team 'T' (openai/fake): FFBENCH_PROVIDER_LIMITS=tcp://127.0.0.1:1: cannot "
                                     "reach the Dask scheduler (") and "\n" not in str(err.value)


def test_a_scheduler_address_without_scheme_stops_the_call_with_one_line(monkeypatch):
    """Never a folder named ``10.0.0.5:8786`` in the kernel's working folder."""
    from ffbench_lib.config.league import LLMAgent, LLMSettings
    from ffbench_lib.llm import Budget, FatalLLMError, LLMClient

    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "10.0.0.5:8786")
    spec = LLMAgent(kind="llm", model="openai/fake", api_base="http://127.0.0.1:9/v1", max_concurrency=2)
    client = LLMClient(spec, LLMSettings(retries=0), None, Budget(None), team="T")
    with pytest.raises(FatalLLMError) as err:
        asyncio.run(client.complete([{"role": "user", "content": "hi"}]))
    assert str(err.value) == ("team 'T' (openai/fake): environment variable FFBENCH_PROVIDER_LIMITS='10.0.0.5:8786': "
                              "10.0.0.5:8786 looks like a Dask scheduler address without its scheme; write "
                              "tcp://10.0.0.5:8786; fix or unset it")


def test_a_scheduler_address_without_dask_installed_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the dask extra were not installed
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "tcp://127.0.0.1:8786")
    with pytest.raises(limits.LimitError, match=r"is a Dask scheduler address but dask.distributed is not "
                                                r"installed; pip install 'ffbench\[dask\]'"):
        asyncio.run(_lease_once("no@dask", 60))

# -- lock files (the local executor) ----------------------------------------------------------------------------
def test_local_workers_never_exceed_the_provider_limit(tmp_path, forkserver):
    with ProcessPoolExecutor(3, mp_context=forkserver) as pool:
        def each(where, api_base):
            return [f.result() for f in [pool.submit(_calls, api_base, where) for _ in range(3)]]

        with CrowdServer() as srv:
            _all_answered(each(None, srv.api_base))
            assert srv.max_inflight >= CROWD
        with CrowdServer(hold_s=1.0) as srv:
            _all_answered(each(str(tmp_path / "limits"), srv.api_base))
            assert srv.requests == 3 * CALLS and srv.max_inflight <= LIMIT
    (key,) = (tmp_path / "limits").iterdir()
    assert sorted(p.name for p in key.iterdir()) == ["slot-0.lock", "slot-1.lock"]


def test_lock_file_of_a_dead_process_is_freed(tmp_path, monkeypatch):
    from filelock import FileLock, Timeout

    proc = _holder(str(tmp_path), "dead@files")
    try:
        with pytest.raises(Timeout):  # held by the other process
            FileLock(limits.slot_folder(tmp_path, "dead@files") / "slot-0.lock").acquire(blocking=False)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", str(tmp_path))
    assert asyncio.run(_lease_once("dead@files", 60))


_HOG = """
import asyncio, sys
from ffbench_lib.llm import limits
async def call(i):
    async with limits.lease("fair@files", 1):
        with open(sys.argv[1], "a") as log:
            log.write("A\\n")
        await asyncio.sleep(0.05)
async def main():
    await asyncio.gather(*(call(i) for i in range(400)))
asyncio.run(main())
"""


def test_a_busy_process_does_not_starve_another(tmp_path, monkeypatch):
    """Limit 1: process A keeps 400 calls queued (50 ms each); this process then wants one call. It gets the
    slot within A's next few calls (counted in A's log), not when A happens to leave a gap."""
    log = tmp_path / "log"
    log.write_text("")
    hog = subprocess.Popen([sys.executable, "-c", _HOG, str(log)],
                           env={**os.environ, "FFBENCH_PROVIDER_LIMITS": str(tmp_path / "limits")})
    try:
        deadline = time.monotonic() + 120
        while log.read_text().count("A") < 3:  # A is under way
            assert hog.poll() is None and time.monotonic() < deadline, "the busy process did not start"
            time.sleep(0.05)
        monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", str(tmp_path / "limits"))

        async def one():
            before = log.read_text().count("A")
            async with limits.lease("fair@files", 1):
                return log.read_text().count("A") - before
        calls_of_a_meanwhile = asyncio.run(one())
        assert hog.poll() is None  # A still had calls queued
    finally:
        hog.kill()
        hog.wait()
    # A's call under way, maybe its next (B not queued yet); a margin of two more for a busy machine stalling
    # this process past the handoff (without the queue, A made 11-252 calls meanwhile)
    assert calls_of_a_meanwhile <= 4


_LOCKED = """
import fcntl, os, sys
for path in sys.argv[1:]:
    if not os.path.exists(path):
        print("free")
        continue
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("free")
    except OSError:
        print("held")
    finally:
        os.close(fd)
"""


def test_one_process_never_holds_one_slot_twice_where_locks_are_per_process(tmp_path, monkeypatch):
    """As on an NFS client, where flock is a POSIX lock (per process, dropped by closing any of the process's
    descriptors of the file): two calls of one process hold two slots, and releasing one keeps the other."""
    import fcntl

    monkeypatch.setattr(fcntl, "flock", lambda fd, op: fcntl.lockf(fd, op))  # the NFS client's flock
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", str(tmp_path))
    folder = limits.slot_folder(tmp_path, "nfs@files")
    slots = [str(folder / f"slot-{i}.lock") for i in range(2)]

    def seen_from_another_process() -> list[str]:
        out = subprocess.run([sys.executable, "-c", _LOCKED, *slots], capture_output=True, text=True, check=True)
        return out.stdout.split()

    async def main():
        first, second, release_first = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def call(held: asyncio.Event, release: asyncio.Event):
            async with limits.lease("nfs@files", 2):
                held.set()
                await release.wait()
        done = asyncio.Event()
        tasks = [asyncio.create_task(call(first, release_first)), asyncio.create_task(call(second, done))]
        await first.wait()
        await second.wait()
        both = await asyncio.to_thread(seen_from_another_process)
        release_first.set()
        await tasks[0]
        one = await asyncio.to_thread(seen_from_another_process)
        done.set()
        await tasks[1]
        return both, one
    both, one = asyncio.run(main())
    assert both == ["held", "held"]
    assert sorted(one) == ["free", "held"]


def test_one_endpoint_with_or_without_a_trailing_slash():
    from ffbench_lib.config.league import LLMAgent

    def agent(api_base):
        return LLMAgent(kind="llm", model="openai/m", api_base=api_base, max_concurrency=2)
    assert agent("http://h/v1/").endpoint == agent("http://h/v1").endpoint == "openai@http://h/v1"
    assert agent(None).endpoint == "openai@default"


def test_one_process_refuses_two_limits_for_one_endpoint(monkeypatch):
    monkeypatch.delenv("FFBENCH_PROVIDER_LIMITS", raising=False)

    async def two():
        async with limits.lease("one@proc", 2):
            async with limits.lease("one@proc", 4):
                pass
    with pytest.raises(limits.LimitError, match="max_concurrency 4 here but 2 for another team"):
        asyncio.run(two())



# -- end to end: `ffbench batch`, 3 local workers, LLM teams ------------------------------------------------------
@pytest.mark.slow
def test_batch_of_llm_seasons_never_exceeds_the_provider_limit(tmp_path, data_dir):
    """2 seasons at once in 2 workers (each played in its worker, ``runner: direct``), 3 LLM teams each with ``max_concurrency: 1``: the provider sees
    at most 1 call in flight for the whole batch (each worker alone would allow 1, the batch 2: two leagues
    drafting at once overlap their calls unless the batch's lock files keep them apart). The fewest processes and
    calls that show it: 2 leagues of 4 teams, 8 rounds, 1 week."""
    import pandas as pd
    import yaml
    from test_llm import llm_league

    limit, rounds = 1, 8
    with FakeOpenAIServer(latency_s=0.05) as srv:
        league = llm_league(srv.api_base, tmp_path / "cache", n_llm=3, weeks=1).model_dump(mode="json")
        league["teams"] = league["teams"][:4]  # 3 LLM teams and a bot: 3 x (8 picks + 1 lineup) calls a league
        league["roster"]["BENCH"] = 1  # QB RB RB WR WR TE FLEX BENCH: 8 rounds
        for t in league["teams"][:3]:
            t["agent"].update(max_concurrency=limit, timeout_s=60)
        (tmp_path / "base.yaml").write_text(yaml.safe_dump(league))
        spec = {"name": "limits", "base": str(tmp_path / "base.yaml"), "seeds": [0, 1], "workers": 2,
                "out": str(tmp_path / "batch"), "analysis": False, "runner": "direct"}  # two workers' own seasons
        (tmp_path / "batch.yaml").write_text(yaml.safe_dump(spec))
        r = subprocess.run([sys.executable, "-m", "ffbench_lib", "batch", str(tmp_path / "batch.yaml"), "--quiet"],
                           capture_output=True, text=True, env={**os.environ, "FFBENCH_DATA_DIR": str(data_dir)},
                           cwd=Path(__file__).resolve().parents[1])
        assert r.returncode == 0, r.stdout + r.stderr
        assert srv.requests >= 2 * 3 * (rounds + 1) and srv.max_inflight <= limit
    runs = pd.read_csv(tmp_path / "batch" / "batch_runs.csv")
    assert list(runs["status"]) == ["complete"] * 2
    picks = [pd.read_parquet(tmp_path / "batch" / "runs" / f"seed-{s}" / "draft_picks.parquet") for s in (0, 1)]
    assert all(p["round"].max() == rounds and len(p) == 4 * rounds for p in picks)
    (key,) = (tmp_path / "batch" / ".limits").iterdir()  # one endpoint, its lock files
    assert sorted(p.name for p in key.iterdir()) == ["slot-0.lock"]
