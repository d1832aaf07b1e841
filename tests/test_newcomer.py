"""The commands a new user copies from the README work as written, and their failures are one clear line."""
import hashlib
import json
import subprocess
import sys

import pytest

from project_copy import REPO, clean_env, copy_project


def ffbench(*args, cwd=REPO, env=None):
    return subprocess.run([sys.executable, "-m", "ffbench_lib", *map(str, args)], cwd=cwd, env=env or clean_env(),
                          capture_output=True, text=True, timeout=900)


def one_line_error(r):
    assert "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1, r.stderr
    return errors[0]


@pytest.fixture
def refs(tmp_path, real_data_dir):
    """A reference-runs folder like ``$FFBENCH_DATA_DIR/reference_runs`` holding one recorded (real) run."""
    sim = sorted((real_data_dir / "reference_runs").glob("simulation_*"))[0]
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / "simulation_a").symlink_to(sim, target_is_directory=True)
    (folder / "latest_simulation_id.txt").write_text(sim.name)
    return folder


@pytest.mark.slow
def test_import_takes_the_readme_pattern_absolute_or_relative(refs, tmp_path, real_data_dir):
    env = clean_env(FFBENCH_DATA_DIR=str(real_data_dir))
    r = ffbench("import-ffb", f"{refs}/simulation_*", "--out", tmp_path / "abs", env=env)  # quoted, as in the README
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "abs" / "simulation_a" / "run.json").read_text())["status"] == "complete"
    r = ffbench("import-ffb", "refs/simulation_*", "--out", "rel", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "rel" / "simulation_a" / "run.json").exists()


def test_import_pattern_without_match_is_a_clear_error(tmp_path):
    refs = tmp_path / "refs"  # the patterns are checked before any run is read: an empty recorded run will do
    (refs / "simulation_a").mkdir(parents=True)
    r = ffbench("import-ffb", f"{refs}/simulation_*", f"{refs}/simulaton_*", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "no folder matches" in one_line_error(r) and "simulaton_*" in r.stderr
    assert not (tmp_path / "out").exists()  # nothing imported when one pattern is wrong


def test_demo_without_data_says_how_to_get_it(tmp_path):
    project = copy_project(tmp_path / "ffbench")  # no shared/data next to it, no outputs/data in it
    env = clean_env()
    env.pop("FFBENCH_DATA_DIR", None)
    r = ffbench("demo", cwd=project, env=env)
    assert r.returncode == 2
    assert "no NFL data found" in one_line_error(r) and "FFBENCH_DATA_DIR" in r.stderr
    (tmp_path / "empty").mkdir()
    r = ffbench("demo", cwd=project, env=clean_env(FFBENCH_DATA_DIR=str(tmp_path / "empty")))
    assert r.returncode == 2 and "has no nflverse/ folder" in one_line_error(r)


@pytest.mark.slow
def test_demo_notebook_failure_is_one_line_naming_notebook_and_exception(tmp_path):
    project = copy_project(tmp_path / "ffbench")
    (tmp_path / "data" / "nflverse").mkdir(parents=True)  # looks like data, holds no files
    r = ffbench("demo", cwd=project / "notebooks", env=clean_env(FFBENCH_DATA_DIR=str(tmp_path / "data")))
    assert r.returncode == 1
    line = one_line_error(r)
    assert "01_prepare_data.ipynb: cell" in line and "DataError" in line, line
    # started from notebooks/, the demo still writes under the project root's outputs/
    assert (project / "outputs" / "batches" / "demo" / "notebooks" / "01_prepare_data.ipynb").exists()
    assert not (project / "notebooks" / "outputs").exists()


@pytest.mark.slow
def test_cli_finds_shared_data_next_to_the_project_and_writes_under_its_outputs(tmp_path, data_dir):
    project = copy_project(tmp_path / "ffbench")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir, target_is_directory=True)  # the ../shared/data layout
    env = clean_env()
    env.pop("FFBENCH_DATA_DIR", None)
    r = ffbench("run", "../params/demo.yaml", "--seed", 0, "--out", "../outputs/runs/s0", "--quiet",
                "--set", "weeks=2", "--set", "trades.weeks=[]", cwd=project / "notebooks", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads((project / "outputs" / "runs" / "s0" / "run.json").read_text())["status"] == "complete"
    assert any((project / "outputs" / "prepared").glob("2024-*/manifest.json"))  # the cache: root outputs/
    assert not (project / "notebooks" / "outputs").exists()


def test_run_sh_passes_ffbench_commands_through(tmp_path):
    project = copy_project(tmp_path / "ffbench")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    stamp = hashlib.sha256((project / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (venv / ".ffbench-installed").write_text(stamp + "\n")  # installed: run.sh must not pip install
    env = clean_env(FFBENCH_VENV=str(venv))
    r = subprocess.run(["bash", str(project / "run.sh"), "ffbench", "validate", "params/demo.yaml"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok: params/demo.yaml")
    r = subprocess.run(["bash", str(project / "run.sh"), "ffbench", "validate", "params/nope.yaml"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "file not found: params/nope.yaml" in r.stderr and "Traceback" not in r.stderr
