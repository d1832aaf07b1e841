"""No credential reaches disk or the terminal: canary keys (one through an oddly named ``api_key_env``, one
through the provider's standard variable) against a server that echoes the Authorization header into every
answer and error body; then every written file is scanned (raw bytes, every decoded parquet cell, the replay
cache, an executed notebook) and so is everything printed."""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from ffbench_lib.cli import main
from ffbench_lib.core import atomic, secrets
from ffbench_lib.core.atomic import write_csv, write_json, write_parquet, write_text
from ffbench_lib.runs.notebooks import execute
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.runs.season import run_season
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import demo_league

ODD = "ffb-canary-odd-" + "Q7" * 12  # named by api_key_env: LOCAL_LLM_AUTH (no KEY/TOKEN in the name)
STD = "sk-canary-std-" + "Z9" * 12  # OPENAI_API_KEY, read by litellm itself
CANARIES = (ODD, STD)


class RecordingServer(FakeOpenAIServer):
    """The fake server, also counting requests whose BODY holds a canary: a key echoed into one answer must not
    travel on in a later prompt (another team's model, another provider)."""

    def respond(self, body, auth="", *args):
        if any(c in json.dumps(body) for c in CANARIES):
            self.injected["canary_in_prompt"] += 1
        return super().respond(body, auth, *args)


@pytest.fixture
def canary_env(monkeypatch):
    monkeypatch.setenv("LOCAL_LLM_AUTH", ODD)
    monkeypatch.setenv("OPENAI_API_KEY", STD)
    yield
    secrets._REGISTERED.discard(ODD)  # the registry lives for the process; later tests start clean


def canary_config(path: Path, api_base: str, cache: Path, weeks: int = 2, odd: tuple[int, ...] = (0, 2)) -> Path:
    """Four LLM teams: ``odd`` ones with ``api_key_env: LOCAL_LLM_AUTH``, the others on litellm's OPENAI_API_KEY;
    two weeks by default, the second a trade week (every kind of call: picks, lineups, proposals, responses). The
    season is prepared in the test run's shared cache (FFBENCH_CACHE_DIR): prepared from the data alone, before any
    key is read."""
    d = demo_league().model_dump(mode="json")
    d["teams"] = [{"name": f"T{i}", "agent": {
        "kind": "llm", "model": f"openai/fake-{i}", "api_base": api_base, "timeout_s": 10, "max_tokens": 500,
        "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6,
        **({"api_key_env": "LOCAL_LLM_AUTH"} if i in odd else {})}} for i in range(4)]
    d.update(weeks=weeks, trades={"weeks": [2] if weeks >= 2 else [], "max_players_per_side": 1})
    d["llm"] = {"backoff_s": 0.01, "retries": 1, "cache_dir": str(cache)}
    path.write_text(yaml.safe_dump(d))
    return path


def _cells(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from _cells(v)
    elif isinstance(x, (list, tuple, np.ndarray)):
        for v in x:
            yield from _cells(v)
    else:
        yield x


def leaks(root: Path) -> list[str]:
    """Every place under ``root`` that holds a canary: raw bytes of every file, every decoded parquet cell."""
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = f.read_bytes()
        found += [f"{f} (bytes)" for c in CANARIES if c.encode() in raw]
        if f.suffix == ".parquet":
            table = pq.read_table(f)
            meta = json.dumps({k.decode(errors="replace"): v.decode(errors="replace")
                               for k, v in (table.schema.metadata or {}).items()})
            for cell in [*table.column_names, meta, *_cells(table.to_pylist())]:
                found += [f"{f} (cell)" for c in CANARIES if c in str(cell)]
    return found


def test_canary_keys_never_written_or_printed(canary_env, data_dir, tmp_path, capfd):
    with RecordingServer(echo_auth_in_answers=True, echo_auth_in_errors=True, fault_rate=0.3,
                         faults=("500", "fence", "prose"), seed=5) as srv:
        cfg = canary_config(tmp_path / "league.yaml", srv.api_base, tmp_path / "cache")
        run = RunDir(run_season(cfg, seed=1, out=tmp_path / "run", progress=False))
        # the kernel's season: one week (its draft and lineups: more than 50 calls), the trade week is the run's above
        nb_cfg = canary_config(tmp_path / "league-nb.yaml", srv.api_base, tmp_path / "cache-nb", weeks=1)
        executed = execute("02_simulate_season.ipynb", tmp_path / "notebooks" / "02.ipynb",
                           {"config": str(nb_cfg), "seed": 2, "out": str(tmp_path / "nbrun"), "progress": False},
                           timeout_s=600)
        assert srv.injected["500"] > 0 and srv.injected["canary_in_prompt"] == 0
    assert run.meta().status == "complete" and RunDir(tmp_path / "nbrun").meta().status == "complete"
    # the keys really were echoed (and masked) in answers, error bodies, the tables and the cache
    steps = run.table("trade_steps")
    assert steps["rationale"].str.contains("request auth: Bearer ***", regex=False).any()
    assert any("***" in (a.get("message") or "") for c in run.llm_calls() for a in c["attempts"] or [])
    cached = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    assert len(cached) > 50 and any("Bearer ***" in json.dumps(e) for e in cached)
    assert executed.exists() and len(list((tmp_path / "cache-nb").rglob("*.json"))) > 50
    assert leaks(tmp_path) == []
    out, err = capfd.readouterr()
    assert not [c for c in CANARIES if c in out + err]


@pytest.mark.parametrize("odd", [(0, 1, 2, 3), ()], ids=["api_key_env", "provider_variable"])
def test_rejected_key_error_printed_by_the_cli_is_masked(canary_env, data_dir, tmp_path, capfd, odd):
    """A 401 whose body echoes the key stops the run: the CLI's message must not show it (nor any file). The CLI
    runs in-process (capfd sees all this process writes, litellm's own prints included); its exit code through a
    real process: test_llm_faults.test_rejected_key_names_api_key_env_and_cli_exits_nonzero."""
    with FakeOpenAIServer(echo_auth_in_errors=True, fault_rate=1.0, faults=("401",)) as srv:
        cfg = canary_config(tmp_path / "league.yaml", srv.api_base, tmp_path / "cache", weeks=1, odd=odd)
        capfd.readouterr()
        rc = main(["run", str(cfg), "--out", str(tmp_path / "run"), "--quiet"])
        assert srv.injected["401"] > 0
    out, err = capfd.readouterr()
    assert not [c for c in CANARIES if c in out + err]
    assert rc != 0 and "Bearer ***" in err  # the body was echoed, and masked
    assert leaks(tmp_path) == []


# ------------------------------------------------------------------------------------ the scrubber itself

def test_registered_value_is_masked_whatever_its_variable_is_called(monkeypatch):
    value = "plain-looking-value-1234"
    monkeypatch.setenv("MY_LOCAL_AUTH", value)
    assert secrets.scrub(f"x {value} y") == f"x {value} y"  # nothing says it is a credential yet
    secrets.register_env("MY_LOCAL_AUTH")
    try:
        assert secrets.scrub(f"x {value} y") == "x *** y"
        secrets.register("short")  # too short to mask without corrupting ordinary text
        assert secrets.scrub("a short note") == "a short note"
    finally:
        secrets._REGISTERED.discard(value)


def test_every_writer_scrubs_strings_lists_and_json_escapes(tmp_path, monkeypatch):
    odd = 'k3y"with\\quotes-é-0000'  # characters JSON escapes
    monkeypatch.setenv("SOME_API_KEY", odd)
    df = pd.DataFrame({"n": [1, 2], "why": [f"auth {odd}", "fine"], "ids": [[odd, "a"], ["b"]],
                       "nested": [{"k": [odd]}, {"k": []}]})
    write_parquet(tmp_path / "t.parquet", df)
    write_csv(tmp_path / "t.csv", df[["n", "why"]])
    write_json(tmp_path / "t.json", {"a": [odd], odd: 1})
    write_text(tmp_path / "t.txt", f"{odd}\n")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert back["why"].tolist() == ["auth ***", "fine"] and list(back["ids"][0]) == ["***", "a"]
    assert list(back["nested"][0]["k"]) == ["***"]
    for f in tmp_path.iterdir():
        text = f.read_bytes().decode("utf-8", errors="replace")
        assert odd not in text and json.dumps(odd)[1:-1] not in text, f.name
        assert odd not in str(pq.read_table(f).to_pylist()) if f.suffix == ".parquet" else True
    assert df["why"][0] == f"auth {odd}"  # the caller's frame is left as it was


def test_clean_frames_are_written_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "not-in-this-table-123")
    df = pd.DataFrame({"a": ["x", "y"], "b": [["p"], ["q", "r"]], "c": [1.5, 2.5]})
    assert secrets.scrub_frame(df) is df
    write_parquet(tmp_path / "a.parquet", df)
    monkeypatch.delenv("SOME_API_KEY")
    write_parquet(tmp_path / "b.parquet", df)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_executed_notebook_file_is_scrubbed(tmp_path, monkeypatch):
    """What papermill writes (the kernel's outputs, tracebacks) is scrubbed after execution: scrub_file."""
    value = "kernel-printed-credential-42"
    secrets.register(value)
    try:
        nb = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "error", "evalue": f"401 {value}",
                                                           "traceback": [f"Bearer {value}\u00e9"]}]}]}
        path = tmp_path / "out.ipynb"
        path.write_text(json.dumps(nb, ensure_ascii=False, indent=1))
        atomic.scrub_file(path)
        back = json.loads(path.read_text())
        assert value not in path.read_text() and back["cells"][0]["outputs"][0]["evalue"] == "401 ***"
    finally:
        secrets._REGISTERED.discard(value)


def test_a_direct_seasons_log_is_masked_as_it_is_written(tmp_path):
    """What a season played in a batch worker prints (``runner: direct``) reaches its log masked, before the file
    is scrubbed once more at the end."""
    from contextlib import redirect_stderr, redirect_stdout

    from ffbench_lib.runs.batch import _ScrubbedLog

    value = "worker-printed-credential-42"
    secrets.register(value)
    try:
        with open(tmp_path / "seed-0.log", "w", encoding="utf-8") as fh, redirect_stdout(_ScrubbedLog(fh)), \
                redirect_stderr(_ScrubbedLog(fh)):
            print(f"401 Bearer {value}")
            print(f"warning: {value}", file=sys.stderr)
            fh.flush()
            assert (tmp_path / "seed-0.log").read_text() == "401 Bearer ***\nwarning: ***\n"
    finally:
        secrets._REGISTERED.discard(value)


def test_credentials_in_extra_that_slip_past_validation_are_never_written(prepared_2024, tmp_path):
    """Config validation rejects keys in ``extra``; should one get past it (a League built in code), the
    header token and the key-looking value still reach the provider but no ledger line, cache entry or
    config.yaml: they are registered and masked."""
    from ffbench_lib.runs.runner import Engine
    from test_llm_faults import small_league, with_extra

    header, body = "tokHDR1234567890abcdefg", "sk-proj-EXTRAdef1234567890xyz"
    seen = []

    class HeaderServer(FakeOpenAIServer):
        def respond(self, body_, auth="", *args):
            seen.append(json.dumps(body_))
            return super().respond(body_, auth, *args)

    with HeaderServer() as srv:
        league = with_extra(small_league(srv.api_base, tmp_path / "cache"),
                            {"extra_headers": {"X-Api-Token": header}, "extra_body": {"user": body}})
        try:
            import asyncio

            asyncio.run(Engine(league, prepared_2024, tmp_path / "run", progress=False).run())
        finally:
            secrets._REGISTERED.difference_update({header, body})
    assert any(body in s for s in seen)  # the arguments were really used
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    assert calls and all(c["request_params"]["extra_headers"] == {"X-Api-Token": "***"} and
                         c["request_params"]["extra_body"] == {"user": "***"} for c in calls)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == len(calls)
    hits = [f for f in tmp_path.rglob("*") if f.is_file() and (header.encode() in f.read_bytes() or
                                                               body.encode() in f.read_bytes())]
    assert hits == []


def test_plain_values_of_key_named_variables_are_not_masked(monkeypatch):
    # only names are known for such variables: a short or spaced value is an ordinary word, and masking it would
    # corrupt every file ("status": "complete" -> "***"); the keys a run uses are registered and always masked
    from ffbench_lib.core import secrets

    monkeypatch.setenv("MY_API_KEY", "complete")
    monkeypatch.setenv("SOME_TOKEN", "a phrase with spaces in it")
    monkeypatch.setenv("REAL_API_KEY", "sk-live-0123456789abcdef")
    text = '{"status": "complete", "note": "a phrase with spaces in it", "k": "sk-live-0123456789abcdef"}'
    assert secrets.scrub(text) == '{"status": "complete", "note": "a phrase with spaces in it", "k": "***"}'
    secrets.register("complete")  # a key the run really used, however short, is masked
    try:
        assert secrets.scrub("complete") == "***"
    finally:
        secrets._REGISTERED.discard("complete")
