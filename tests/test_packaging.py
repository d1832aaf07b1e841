"""The project installs from one dependency list and its documented commands are the ones that run."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
COMPROMISED_LITELLM = {"1.82.7", "1.82.8", "1.107.0"}


def test_environment_yml_only_installs_the_project():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    deps = env["dependencies"]
    plain = [d for d in deps if isinstance(d, str)]
    pips = [d for d in deps if isinstance(d, dict)]
    assert sorted(p.split("=")[0] for p in plain) == ["pip", "python"]
    assert pips == [{"pip": ['-e ".[dev]"']}] or pips == [{"pip": ["-e .[dev]"]}]


def test_litellm_pinned_exactly_to_a_safe_release():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (lite,) = [d for d in deps if d.startswith("litellm")]
    m = re.fullmatch(r"litellm==(\d+\.\d+\.\d+)", lite)
    assert m and m.group(1) not in COMPROMISED_LITELLM


def test_importing_sets_offline_litellm_price_map():
    code = "import os, ffbench_lib; print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])"
    env = {k: v for k, v in __import__("os").environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout.strip() == "True"


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = re.findall(r"^\s*(\./run\.sh \w+)\s*$", readme, flags=re.M)
    assert "./run.sh test" in commands and "./run.sh demo" in commands
    ci_lines = [ln.strip() for ln in ci.splitlines() if ln.strip() and not ln.startswith("#")]
    assert ci_lines[-1] == "./run.sh test"


def test_console_script_and_module_entry_point():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"ffbench": "ffbench_lib.cli:main"}
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "data" in r.stdout


def test_no_data_files_tracked():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True).stdout.split()
    # the prompt examples are the synthetic world's, rebuilt byte for byte by a test (test_prompt_strategies.py)
    made_up = ("tests/fixtures/", "ffbench_lib/prompts/examples/")
    bad = [f for f in tracked if f.endswith((".csv", ".csv.gz", ".parquet", ".jsonl")) and not f.startswith(made_up)]
    assert bad == []
