"""Shared fixtures. Tests play the synthetic season (ffbench_lib.testing.synthetic) by default; the real data
(FFBENCH_DATA_DIR, CI: ../shared/data) is read, never copied, by the tests marked realdata."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock

pytest_plugins = ["jupyterlab_helpers"]  # the `lab` fixture: a JupyterLab serving a copy of the project

REPO = Path(__file__).resolve().parents[1]


#: the real data (licensed in part, never copied): $FFBENCH_DATA_DIR as the user set it, else ../shared/data
REAL_DATA_MISSING = ("real NFL data not found: set FFBENCH_DATA_DIR to the folder holding nflverse/ (see "
                     "docs/data.md)")


def _real_data_dir() -> Path | None:
    env = os.environ.get("FFBENCH_REAL_DATA_DIR") or os.environ.get("FFBENCH_DATA_DIR")
    candidates = [Path(env)] if env else [REPO.parent / "shared" / "data"]
    for c in candidates:
        if (c / "nflverse").is_dir() and not (c / SYNTHETIC_MARK).exists():
            return c.resolve()
    return None


SYNTHETIC_MARK = "SYNTHETIC.md"  # what write_world leaves in its folder
REAL = _real_data_dir()
if REAL is not None:  # kept for the realdata tests' subprocesses; FFBENCH_DATA_DIR becomes the synthetic world
    os.environ["FFBENCH_REAL_DATA_DIR"] = str(REAL)


#: scheduling only, never behaviour: the files that take longest (summed test durations, quiet 2-core machine,
#: 2026-12-02), heaviest first. ``./run.sh test`` hands files to workers in collection order
#: (``--no-loadscope-reorder``), so these start first and the run does not end on one long file while the other
#: workers idle; a file not listed runs after them, in its usual order.
HEAVY_FIRST = ("test_notebooks test_analysis test_report test_run_integrity test_masking test_provider_limits "
               "test_dask_executor test_batch test_field_analysis test_newcomer test_browser test_live "
               "test_contamination test_seasons test_exams test_results test_plugins test_prompt_strategies test_protect test_engine test_importer test_field_batch test_llm_faults test_playoffs "
               "test_standard_league test_kickers_defenses test_ir test_jupyterlab test_desk test_first_run test_llm "
               "test_bots test_season_2025 test_secrets test_firewall test_llm_preflight test_prepare "
               "test_waivers").split()


def pytest_collection_modifyitems(config, items):
    """A test that uses the real data (the ``real_data_dir`` fixture, directly or through another) is marked
    ``realdata``; without the data those are skipped (failed under CI), with one summary line saying why.
    Files are ordered :data:`HEAVY_FIRST` (a stable sort: each file's tests keep their order)."""
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))
    skip = pytest.mark.skip(reason=REAL_DATA_MISSING)
    for item in items:
        if "real_data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker("realdata")
        if REAL is None and not os.environ.get("CI") and item.get_closest_marker("realdata"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config):
    """One line per reason tests were skipped (pyproject's ``-rfE`` lists failures and errors, not each skip)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        if reason == REAL_DATA_MISSING:
            terminalreporter.write_line(f"ffbench: {n} tests skipped for want of the real NFL data (set "
                                        "FFBENCH_DATA_DIR to the folder holding nflverse/ to run them; see "
                                        "docs/data.md); the others ran on the synthetic season")
        else:
            terminalreporter.write_line(f"ffbench: {n} test(s) skipped: {reason}")


def _shared(tmp_path_factory, name: str) -> tuple[Path, FileLock]:
    """A folder shared by every xdist worker of this test run, and the lock its one builder holds."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    return root / name, FileLock(str(root / f"{name}.lock"))


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` run once per test run, whichever xdist worker asks first; the others wait for it and reuse
    the folder (a ``<name>.complete`` marker beside it says it finished: a builder that failed leaves none, and the
    next one to ask starts over in a clean folder). For expensive things several test files only read."""
    import shutil

    folder, lock = _shared(tmp_path_factory, name)
    done = folder.with_name(f"{name}.complete")
    with lock:
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session", autouse=True)
def synthetic_dir(tmp_path_factory) -> Path:
    """The synthetic NFL world (``ffbench_lib.testing.synthetic``, seed 0, seasons 2021-2024), written once per
    test run and shared; it is FFBENCH_DATA_DIR for every test and the subprocesses they start."""
    from ffbench_lib.testing.synthetic import write_world

    folder, lock = _shared(tmp_path_factory, "synthetic-world")
    with lock:
        if not (folder / SYNTHETIC_MARK).exists():
            write_world(folder)
    os.environ["FFBENCH_DATA_DIR"] = str(folder)
    # prepared seasons go to this run's folder, never the project's outputs/prepared (a user's cache)
    os.environ["FFBENCH_CACHE_DIR"] = str(_shared(tmp_path_factory, "prepared-cache")[0])
    return folder


@pytest.fixture(scope="session")
def data_dir(synthetic_dir) -> Path:
    """The data folder most tests use: the synthetic world (runs anywhere, in seconds)."""
    return synthetic_dir


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real NFL data, for what only it can show; tests using it are marked ``realdata``."""
    if REAL is None:
        if os.environ.get("CI"):
            pytest.fail(REAL_DATA_MISSING)
        pytest.skip(REAL_DATA_MISSING)
    return REAL


@pytest.fixture(scope="session")
def fpl_data_dir(real_data_dir) -> Path:
    """The real Premier League data (``fpl/`` of the real data folder), for the FPL tests (``realdata`` too)."""
    folder = real_data_dir / "fpl"
    if not folder.is_dir():
        why = f"FPL data not found: {folder} is missing (see docs/data.md)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    return folder


@pytest.fixture(autouse=True)
def _real_data_is_the_default_of_realdata_tests(request, monkeypatch):
    """A realdata test's commands (the CLI, subprocesses, ``prepared_for``) read the real data by default too."""
    if "real_data_dir" in request.fixturenames and REAL is not None:
        monkeypatch.setenv("FFBENCH_DATA_DIR", str(REAL))


def _prepared(tmp_path_factory, root: Path, source: str, name: str):
    from ffbench_lib.data.prepare import prepare_season

    folder, lock = _shared(tmp_path_factory, f"prepared-{name}")
    with lock:  # the first worker prepares, the others find the same fingerprint and load it
        return prepare_season(2024, source, root, out=folder)


@pytest.fixture(scope="session")
def prepared_2024(data_dir, tmp_path_factory):
    """The synthetic 2024 season, prepared once per test run."""
    return _prepared(tmp_path_factory, data_dir, "nflverse", "synthetic-2024")


@pytest.fixture(scope="session")
def real_prepared_2024(real_data_dir, tmp_path_factory):
    """The real 2024 season (nflverse), prepared once per test run."""
    return _prepared(tmp_path_factory, real_data_dir, "nflverse", "nflverse-2024")


@pytest.fixture(scope="session")
def prepared_fpl(fpl_data_dir, tmp_path_factory):
    """The real Premier League 2024-25 season (FPL rules, 38 gameweeks), prepared once per test run."""
    from ffbench_lib.data import fpl

    folder, lock = _shared(tmp_path_factory, "prepared-fpl")
    with lock:
        return fpl.prepare_cached(2024, fpl_data_dir.parent, 38, cache_root=folder)


@pytest.fixture(scope="session")
def prepared_2024_sdio(real_data_dir, tmp_path_factory):
    return _prepared(tmp_path_factory, real_data_dir, "sportsdataio", "sportsdataio-2024")


@pytest.fixture(scope="session")
def imported_runs(real_data_dir, tmp_path_factory) -> Path:
    """The earlier benchmark's five recorded real seasons (``reference_runs/simulation_*``), imported once per test
    run (``<folder>/<simulation name>``, seed = its place in name order). Read them; never write into them."""
    from ffbench_lib.runs.importers.fantasyfootballbench import import_reference_run

    def build(out: Path) -> None:
        for i, sim in enumerate(sorted((real_data_dir / "reference_runs").glob("simulation_*"))):
            import_reference_run(sim, out / sim.name, real_data_dir, seed=i)

    return built_once(tmp_path_factory, "imported-reference-runs", build)
