"""The environment variables ffbench reads: declared once, read afresh, bad values named, all in the docs."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ffbench_lib.core.settings import Settings, SettingsError, export, markdown_table, settings

REPO = Path(__file__).resolve().parents[1]
DECLARED = {Settings.variable(f) for f in Settings.model_fields}


def _code_files() -> list[Path]:
    return sorted((REPO / "ffbench_lib").rglob("*.py")) + [REPO / "run.sh"]


def test_every_variable_the_code_names_is_declared():
    named = {m for p in _code_files() for m in re.findall(r"\bFFBENCH_[A-Z_]+\b", p.read_text())}
    assert named, "the grep found nothing: the pattern is wrong"
    assert named <= DECLARED, f"declare these in ffbench_lib/core/settings.py: {sorted(named - DECLARED)}"


def test_only_settings_reads_the_environment_for_ffbench_variables():
    read = re.compile(r"(?:environ(?:\.get\(|\[)|getenv\()\s*[\"'](?:FFBENCH_|LITELLM_LOCAL)")
    offenders = [f"{p.relative_to(REPO)}:{n}" for p in _code_files() if p.suffix == ".py"
                 and p.name != "settings.py" for n, line in enumerate(p.read_text().splitlines(), 1)
                 if read.search(line)]
    assert offenders == [], "read these through ffbench_lib.core.settings.settings(): " + ", ".join(offenders)


def test_the_docs_list_every_variable():
    reference = (REPO / "docs" / "configuration.md").read_text()
    missing = [v for v in sorted(DECLARED) if not re.search(rf"^\| `{v}` \|", reference, re.M)]
    assert missing == [], (f"docs/configuration.md has no table row for {missing}; regenerate it: "
                           "python -m ffbench_lib.config.reference > docs/configuration.md")


def test_the_table_has_one_row_per_variable_with_its_description():
    rows = markdown_table().splitlines()[2:]
    assert [r.split("|")[1].strip(" `") for r in rows] == [Settings.variable(f) for f in Settings.model_fields]
    assert all(r.split("|")[3].strip() for r in rows)
    assert "| `FFBENCH_VENV` | `.venv` |" in markdown_table() and "| `FFBENCH_LLM_CACHE` | unset |" in markdown_table()


def test_values_are_read_afresh_on_each_call(monkeypatch, tmp_path):
    monkeypatch.delenv("FFBENCH_PROVIDER_LIMITS", raising=False)
    monkeypatch.delenv("FFBENCH_LLM_CACHE", raising=False)
    assert settings().provider_limits is None and settings().llm_cache is None
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "tcp://127.0.0.1:8786")
    monkeypatch.setenv("FFBENCH_LLM_CACHE", str(tmp_path))
    assert settings().provider_limits == "tcp://127.0.0.1:8786" and settings().llm_cache == tmp_path
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "")  # empty counts as unset
    assert settings().provider_limits is None


@pytest.mark.parametrize("name, value, says", [
    ("FFBENCH_PROJECT_ROOT", "/nonexistent-ffbench", "is not an existing folder"),
    ("FFBENCH_PROVIDER_LIMITS", str(REPO / "README.md"), "is a file, not a folder (give a folder for lock files or "
                                                         "a Dask scheduler address"),
    ("FFBENCH_PROVIDER_LIMITS", "10.0.0.5:8786", "10.0.0.5:8786 looks like a Dask scheduler address without its "
                                                 "scheme; write tcp://10.0.0.5:8786"),
    ("FFBENCH_PROVIDER_LIMITS", "outputs/limits", "outputs/limits is a relative folder; give an absolute folder"),
    ("FFBENCH_LLM_CACHE", str(REPO / "README.md"), "is a file, not a folder")])
def test_a_bad_value_is_one_line_naming_the_variable(monkeypatch, name, value, says):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        settings()
    msg = str(err.value)
    assert msg.startswith(f"environment variable {name}={value!r}: ") and says in msg
    assert msg.endswith("; fix or unset it") and "\n" not in msg


def test_export_sets_the_variable_for_child_processes(monkeypatch, tmp_path):
    monkeypatch.setenv("FFBENCH_PROVIDER_LIMITS", "unused")  # restored after the test
    export(provider_limits=tmp_path)
    out = subprocess.run([sys.executable, "-c", "from ffbench_lib.core.settings import settings; "
                          "print(settings().provider_limits)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(SettingsError, match=f"FFBENCH_PROVIDER_LIMITS='{tmp_path / 'file'}'"):
        export(provider_limits=tmp_path / "file")
    assert settings().provider_limits == str(tmp_path)  # a bad value changes nothing


def test_the_llm_cache_folder_follows_config_then_variable_then_outputs(monkeypatch, tmp_path):
    from ffbench_lib.llm import ReplayCache
    from ffbench_lib.core.paths import outputs_dir

    monkeypatch.delenv("FFBENCH_LLM_CACHE", raising=False)
    assert ReplayCache.for_config(None).folder == outputs_dir() / "llm_cache"
    monkeypatch.setenv("FFBENCH_LLM_CACHE", str(tmp_path / "env"))
    assert ReplayCache.for_config(None).folder == tmp_path / "env"
    assert ReplayCache.for_config(tmp_path / "cfg").folder == tmp_path / "cfg"


def test_the_cli_names_a_bad_variable_and_exits_2_without_traceback(tmp_path):
    import os

    env = {**os.environ, "FFBENCH_PROJECT_ROOT": "/nonexistent-ffbench"}
    out = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(REPO / "params" / "demo.yaml")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "error: environment variable FFBENCH_PROJECT_ROOT='/nonexistent-ffbench': /nonexistent-ffbench is not an "
        "existing folder (the project folder holds pyproject.toml); fix or unset it"]


def test_importing_ffbench_sets_litellm_offline_to_the_declared_default():
    env = {k: v for k, v in __import__("os").environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run([sys.executable, "-c", "import os, ffbench_lib; "
                          "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == Settings.model_fields["litellm_local_model_cost_map"].default


@pytest.mark.parametrize("name,value,words", [
    ("FFBENCH_PROJECT_ROOT", "/nonexistent-ffbench", "is not an existing folder"),
    ("FFBENCH_CACHE_DIR", "README.md", "is a file, not a folder"),
    ("FFBENCH_LLM_CACHE", "README.md", "is a file, not a folder"),
    ("FFBENCH_DATA_DIR", "README.md", "is a file, not a folder"),
    ("FFBENCH_PROVIDER_LIMITS", "README.md", "is a file, not a folder"),
])
def test_folders_that_cannot_be_used_are_named(monkeypatch, capsys, name, value, words):
    from ffbench_lib.cli import main

    monkeypatch.setenv(name, str(REPO / value) if not value.startswith("/") else value)
    assert main(["validate", str(REPO / "params" / "demo.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"environment variable {name}=" in err and words in err and "Traceback" not in err
    assert not Path("/nonexistent-ffbench").exists()  # never created
