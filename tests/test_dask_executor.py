"""The Dask executor: a bot batch on Dask equals the local executor's byte for byte, a worker killed mid-season
has its run resumed elsewhere (its kernel does not live on), out must be on storage every worker sees, and the
spec/CLI refusals. Real short leagues (3 weeks) through the real batch and real Dask clusters (no mocks)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ffbench_lib.runs.batch import load_batch, run_batch
from ffbench_lib.config.errors import ConfigError

from engine_helpers import REPO, digests, same_run

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

BASE = REPO / "params" / "demo.yaml"
SEEDS = [0, 1]  # two leagues on two workers: each worker runs one (a kill hits a running league)
pytestmark = pytest.mark.slow


def spec_file(folder: Path, out: str = "batch", **kw) -> Path:
    d = {"name": "t", "base": str(BASE), "seeds": SEEDS, "workers": 2, "out": str(folder / out), "analysis": False,
         "overrides": {"weeks": 3, "trades": {"weeks": [2]}}, **kw}
    f = folder / f"{out}.yaml"
    f.write_text(yaml.safe_dump(d))
    return f


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ffbench_lib", "batch", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def local_batch(tmp_path_factory, data_dir):
    """The reference: the seeds on the local executor."""
    tmp = tmp_path_factory.mktemp("local")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        assert run_batch(spec_file(tmp), progress=False)["complete"] == len(SEEDS)
    return tmp / "batch"


@pytest.fixture(scope="module")
def shared_cluster():
    """One LocalCluster of 2 worker processes for the tests on an existing scheduler (--scheduler's path); a worker
    a test kills is started again by its nanny. Each test first waits for both workers."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield cluster, client


def assert_same_batch(local: Path, other: Path) -> list[list]:
    """Every run's files and config byte for byte (run.json apart from a resume list), batch_runs.csv apart
    from the seconds; returns each run's resumes."""
    resumes = []
    for seed in SEEDS:
        resumes.append(same_run(local / "runs" / f"seed-{seed}", other / "runs" / f"seed-{seed}"))
    assert digests(local / "configs") == digests(other / "configs") and len(digests(local / "configs")) == len(SEEDS)
    a, b = (pd.read_csv(d / "batch_runs.csv").drop(columns="seconds") for d in (local, other))
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["sport", "season", "seed", "status", "error"] and set(a["status"]) == {"complete"}
    return resumes


def test_dask_batch_equals_the_local_batch_byte_for_byte(local_batch, tmp_path, data_dir, capsys, monkeypatch):
    """The CLI's --executor dask on an embedded LocalCluster of 2 worker processes; the dashboard is printed. The
    CLI's main() in this process (the workers and their kernels are processes; a CLI process: the refusals and
    the interrupted batch below)."""
    from ffbench_lib.cli import main

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    code = main(["batch", str(spec_file(tmp_path)), "--executor", "dask", "--workers", "2", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"batch t: {len(SEEDS)}/{len(SEEDS)} runs complete" in out
    (line,) = [ln for ln in err.splitlines() if "Dask dashboard: http://" in ln]
    assert_same_batch(local_batch, tmp_path / "batch")


def _alive(p) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_worker_killed_mid_season_is_resumed_elsewhere_and_its_kernel_ends(local_batch, shared_cluster, tmp_path,
                                                                          data_dir, monkeypatch):
    """An existing scheduler (--scheduler's path): kill -9 the worker running a season once it has a checkpoint;
    Dask retries the task, the run resumes from its checkpoint, and the killed worker's kernel exits (one writer)."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    f = spec_file(tmp_path, executor="dask", workers=1)
    cluster, client = shared_cluster
    client.wait_for_workers(2, timeout=300)
    box: dict = {}
    batch = threading.Thread(target=lambda: box.update(summary=run_batch(f, progress=False,
                                                                         scheduler=cluster.scheduler_address)))
    batch.start()
    try:
        victim, killed, deadline = None, None, time.time() + 240
        while victim is None and time.time() < deadline and batch.is_alive():
            for seed in SEEDS:
                run = tmp_path / "batch" / "runs" / f"seed-{seed}"
                if (run / "checkpoint.json").exists():
                    busy = {w: keys for w, keys in client.processing().items()}
                    victim = next((w for w, keys in busy.items() if any(f"-seed{seed}-" in str(k) for k in keys)),
                                  None)
                    if victim is not None:
                        killed = seed
                        break
            time.sleep(0.05)
        assert victim is not None, "no run reached a checkpoint while its task ran"
        pid = client.run(os.getpid, workers=[victim])[victim]
        family = psutil.Process(pid).children(recursive=True)
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 30  # a bound, not a timing assertion: ipykernel polls its parent every 1 s
        while time.time() < deadline and any(_alive(p) for p in family):
            time.sleep(0.2)
        assert family and not [p.pid for p in family if _alive(p)], "the killed worker's kernel lives on"
        # read once its last writer is gone: the orphaned kernel plays on until it sees its parent died (up to a
        # second) and may finish the season meanwhile; unfinished then, the retry must resume it
        unfinished = json.loads((tmp_path / "batch" / "runs" / f"seed-{killed}" / "run.json").read_text())
        unfinished = unfinished["status"] != "complete"
    finally:
        batch.join(timeout=600)
    assert box["summary"]["complete"] == len(SEEDS) and box["summary"]["failed"] == []
    resumes = assert_same_batch(local_batch, tmp_path / "batch")
    assert resumes[SEEDS.index(killed)] or not unfinished  # killed mid-season: the retry resumed the checkpoint


def test_out_that_a_worker_cannot_see_is_refused_before_any_run(tmp_path):
    """A worker whose file system does not have out (its own mount namespace: a tmpfs over the test folder) is
    named, with the fix; exit 2, nothing run."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("needs unshare (user and mount namespaces) to give a worker another file system")
    f = spec_file(tmp_path, executor="dask")
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        dask = str(Path(sys.executable).with_name("dask"))
        worker = subprocess.Popen(["unshare", "-rm", "sh", "-c", f'mount -t tmpfs none "{tmp_path}" && exec "{dask}" '
                                   f"worker {cluster.scheduler_address} --nthreads 1 --no-nanny --no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(1, timeout=300)
            r = cli(str(f), "--scheduler", cluster.scheduler_address, "--quiet")
        finally:
            worker.terminate()
            worker.wait()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "cannot see" in r.stderr and str(tmp_path / "batch") in r.stderr and "shared file system" in r.stderr
    assert not list((tmp_path / "batch" / "runs").glob("seed-*/run.json"))


def test_scheduler_needs_the_dask_executor(tmp_path, capsys):
    """Through the real CLI (a process) once per refusal kind; the other cases through the same main() in this
    process."""
    from ffbench_lib.cli import main

    def in_process(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            code = main(["batch", *args])
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    with pytest.raises(ConfigError, match=r"scheduler: set to tcp://h:8786 but executor is local; use executor: dask"):
        load_batch(spec_file(tmp_path, scheduler="tcp://h:8786"))
    r = cli(str(spec_file(tmp_path)), "--scheduler", "tcp://h:8786")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "scheduler: set to tcp://h:8786" in r.stderr
    assert not (tmp_path / "batch").exists()
    r = in_process(str(spec_file(tmp_path)), "--executor", "spark")
    assert r.returncode == 2 and "invalid choice: 'spark'" in r.stderr
    for run, address, why in ((cli, "garbage!!", "missing port number"),
                              (in_process, "http://127.0.0.1:8786", "unknown address scheme")):
        r = run(str(spec_file(tmp_path)), "--executor", "dask", "--scheduler", address)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith(f"error: invalid batch setting:\n  scheduler: {address!r} is not a Dask scheduler "
                                   f"address ({why}"), r.stderr
        assert "write it as tcp://HOST:PORT" in r.stderr and not (tmp_path / "batch").exists()


def test_interrupted_batch_ends_its_leagues_on_an_existing_cluster(shared_cluster, tmp_path, data_dir):
    """Ctrl-C of a batch on an existing scheduler: the running leagues' kernels (children of the workers, which
    live on) are ended before the batch exits, so no season plays on, and pays, after it; the runs stay
    resumable (their locks free, not complete); the message says how to resume."""
    from filelock import FileLock

    f = spec_file(tmp_path, executor="dask", seeds=[0, 1], overrides={})  # full seasons: still running at the ^C
    cluster, client = shared_cluster
    client.wait_for_workers(2, timeout=300)
    batch = subprocess.Popen([sys.executable, "-m", "ffbench_lib", "batch", str(f), "--scheduler",
                              cluster.scheduler_address, "--quiet"], cwd=REPO, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "FFBENCH_DATA_DIR": str(data_dir)})
    runs = [tmp_path / "batch" / "runs" / f"seed-{s}" for s in (0, 1)]
    deadline = time.time() + 240
    while not any((r / "checkpoint.json").exists() for r in runs) and time.time() < deadline:
        assert batch.poll() is None, batch.communicate()
        time.sleep(0.1)
    workers = client.run(os.getpid).values()
    kernels = [p for w in workers for p in psutil.Process(w).children(recursive=True)]
    assert kernels, "no league was running on the workers"
    batch.send_signal(signal.SIGINT)
    out, err = batch.communicate(timeout=180)
    for run in runs:  # at once: no kernel holds a run any more (a season takes seconds; it had just begun)
        with FileLock(run / ".lock", timeout=0):
            pass
    state = {run: digests(run) for run in runs}
    deadline = time.time() + 10  # a bound for the OS to reap them, not a timing assertion
    while time.time() < deadline and any(_alive(p) for p in kernels):
        time.sleep(0.2)
    assert not [p.pid for p in kernels if _alive(p)], "a league plays on after the batch exited"
    assert {run: digests(run) for run in runs} == state  # nothing written since the batch exited
    assert batch.returncode == 130 and "Traceback" not in err, err
    assert "interrupted (SIGINT); run the same command again to resume" in err and "ended" in err, err


def test_a_task_lost_with_its_scheduler_is_interrupted_not_failed():
    """A lost scheduler cancels the batch's futures while their leagues may still finish on the workers: the row
    says interrupted and how to go on (a re-run resumes or skips them), never that the league failed."""
    from distributed.client import FutureCancelledError

    from ffbench_lib.runs.batch import _Job, _task_failure

    job = _Job(None, 3, {}, Path("r"), Path("c"), Path("l"))
    lost = FutureCancelledError("k", "scheduler-connection-lost", "Client lost the connection to the scheduler. "
                                "Please check your connection and re-run your work.")
    row = _task_failure(job, lost)
    assert row["status"] == "interrupted" and row["error"].startswith("the Dask scheduler was lost (")
    assert row["error"].endswith("re-run the batch to resume or skip it")
    assert _task_failure(job, FutureCancelledError("k", "cancelled"))["error"].startswith("cancelled on the cluster")
    other = _task_failure(job, RuntimeError("worker ran out of memory"))  # e.g. KilledWorker: a failed run
    assert other == {"seed": 3, "status": "failed", "seconds": 0.0, "error": "RuntimeError: worker ran out of memory"}
