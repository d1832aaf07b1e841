"""Configuration errors and hostile answers through the real litellm path against the local fake server:
a rejected key, a missing model, a context overflow, a run the engine would mostly play, deeply nested and huge
answers, prompt budgets, system-less chat templates, and what the ledger records (retries, request parameters,
replayed attempts)."""
import json
import os
import subprocess
import sys

import pytest

from ffbench_lib.core import secrets
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import parse_config
from ffbench_lib.llm import MAX_ANSWER_CHARS, FatalLLMError
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import demo_league, run_engine


def small_league(api_base, cache_dir, n_teams=2, n_llm=1, weeks=1, agent=None, **llm):
    """``n_teams`` of the demo league, the first ``n_llm`` played by fake models (a 2-team draft is cheap)."""
    d = demo_league().model_dump(mode="json")
    d["teams"] = d["teams"][:n_teams]
    for i in range(n_llm):
        d["teams"][i] = {"name": f"M{i}", "agent": {
            "kind": "llm", "model": f"openai/fake-model-{i}", "api_base": api_base, "timeout_s": 5.0,
            "max_tokens": 2000, "max_concurrency": 4, **(agent or {})}}
    d["weeks"] = weeks
    d["trades"]["weeks"] = [w for w in d["trades"]["weeks"] if w <= weeks]
    d["llm"] = {"backoff_s": 0.01, "retries": 2, "cache_dir": str(cache_dir), **llm}
    return League.model_validate(d)


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("fault, words", [("401", "rejected the API key from OPENAI_API_KEY"),
                                          ("403", "has no access to this model"),
                                          ("404", "model not found")])
def test_configuration_errors_stop_the_run(prepared_2024, tmp_path, fault, words):
    with FakeOpenAIServer(fault_rate=1.0, faults=(fault,)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache")
        with pytest.raises(FatalLLMError, match=words) as err:
            run_engine(league, prepared_2024, tmp_path / "run")
        assert srv.requests == 1  # not retried, not repaired: the first call stops the run
    assert "team 'M0' (openai/fake-model-0)" in str(err.value)
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "failed"
    [line] = run.llm_calls()
    assert line["error"] and line["retries"] == 0 and len(line["attempts"]) == 1
    assert not list((tmp_path / "cache").rglob("*.json"))  # never cached: a fixed key must call again


def test_rejected_key_names_api_key_env_and_cli_exits_nonzero(prepared_2024, tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("FFBENCH_TEST_KEY", "sk-revoked-" + "1" * 20)
    with FakeOpenAIServer(fault_rate=1.0, faults=("401",)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"api_key_env": "FFBENCH_TEST_KEY"})
        cfg = tmp_path / "league.yaml"
        cfg.write_text(json.dumps(league.model_dump(mode="json")))
        # the test run's shared prepared-season cache (FFBENCH_CACHE_DIR, set by conftest): nothing to prepare
        r = subprocess.run([sys.executable, "-m", "ffbench_lib", "run", str(cfg), "--out", str(tmp_path / "cli"),
                            "--quiet"], capture_output=True, text=True,
                           env={**os.environ, "FFBENCH_DATA_DIR": str(data_dir)}, timeout=600)
        assert srv.requests == 1  # the first call stops the run
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "rejected the API key from FFBENCH_TEST_KEY" in r.stderr and "M0" in r.stderr
    assert RunDir(tmp_path / "cli").meta().status == "failed"


def test_fallback_rate_guard_stops_a_run_the_engine_played(prepared_2024, tmp_path):
    with FakeOpenAIServer(fault_rate=1.0, faults=("empty",)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", max_reasks=0)
        with pytest.raises(FatalLLMError, match=r"repaired 20 of its 20 decisions .*max_fallback_rate 25%"):
            run_engine(league, prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "failed"
    assert len(run.decisions()) >= 20 and run.file("llm_summary.parquet").exists()


def test_nested_and_huge_answers_are_invalid_bounded_and_logged(prepared_2024, tmp_path):
    with FakeOpenAIServer(fault_rate=0.5, faults=("nested", "huge"), seed=5) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", max_reasks=1, max_fallback_rate=None)
        run_engine(league, prepared_2024, tmp_path / "run")
        requests, injected = srv.requests, dict(srv.injected)
    assert injected["nested"] > 0 and injected["huge"] > 0
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    assert len(calls) == requests  # every call has its ledger line, also the unreadable ones
    nested = [c for c in calls if c["problems"] and "nested more than" in c["problems"][0]]
    huge = [c for c in calls if c["answer_truncated"]]
    assert len(nested) == injected["nested"] and len(huge) == injected["huge"]
    assert all(len(c["response"]) == MAX_ANSWER_CHARS and c["answer_chars"] > 1_000_000 and
               "characters; at most" in c["problems"][0] for c in huge)
    assert run.file("llm_summary.parquet").exists()
    size = sum(f.stat().st_size for d in ("run", "cache") for f in (tmp_path / d).rglob("*") if f.is_file())
    assert size < injected["huge"] * 1_000_000  # the 1 MB answers are not stored whole (not even once)


def test_ledger_retries_request_params_and_replayed_attempts(prepared_2024, tmp_path):
    with FakeOpenAIServer(fault_rate=0.4, faults=("500", "429"), seed=2) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", retries=1, max_fallback_rate=None)
        run_engine(league, prepared_2024, tmp_path / "run")
    live = RunDir(tmp_path / "run").llm_calls()
    assert any(c["error"] for c in live) and any(len(c["attempts"]) == 1 for c in live)
    for c in live:
        assert c["retries"] == len(c["attempts"]) - 1  # one attempt: no retry, also when it failed
        p = c["request_params"]
        assert p["max_tokens"] == 2000 and p["response_format"] == {"type": "json_object"} and p["timeout_s"] == 5
        assert c["prompt_tokens_estimated"] > 0
    with FakeOpenAIServer() as srv2:
        replay = small_league(srv2.api_base, tmp_path / "cache", retries=1, max_fallback_rate=None, replay_only=True)
        run_engine(replay, prepared_2024, tmp_path / "replay")
        assert srv2.requests == 0
    replayed = RunDir(tmp_path / "replay").llm_calls()
    assert [c["attempts"] for c in replayed] == [c["attempts"] for c in live]
    assert all(c["cache_hit"] for c in replayed if not c["error"])


def test_context_overflow_is_a_configuration_error(prepared_2024, tmp_path):
    with FakeOpenAIServer(context_window=1000) as srv:
        league = small_league(srv.api_base, tmp_path / "cache")
        with pytest.raises(FatalLLMError, match=r"draft_shortlist prompt is [\d,]+ tokens by the server's count "
                                                r"\([\d,]+ by litellm's estimate\).*window is 1,000 tokens.*Set "
                                                r"max_prompt_tokens"):
            run_engine(league, prepared_2024, tmp_path / "run")
    assert RunDir(tmp_path / "run").meta().status == "failed"


def test_prompt_budget_shortens_other_teams_tables(prepared_2024, tmp_path):
    """A 10-team trade prompt is ~7,000 tokens; with max_prompt_tokens 3000 it is shortened to fit a server
    whose window is 3000 tokens, and the model is told so."""
    budget = 3000
    with FakeOpenAIServer(context_window=budget) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", n_teams=10, weeks=1,
                              agent={"max_prompt_tokens": budget})
        league = league.model_copy(update={"trades": league.trades.model_copy(update={"weeks": [1]})})
        run_engine(league, prepared_2024, tmp_path / "run")
        assert srv.injected["context"] == 0
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    [propose] = [c for c in calls if c["decision"] == "propose_trade"]
    assert propose["trimmed"] and propose["prompt_tokens_estimated"] <= budget
    assert "Some tables were shortened to fit your context: other teams' rosters show only" in \
        propose["messages"][-1]["content"]
    assert all(c["prompt_tokens_estimated"] <= budget for c in calls)
    assert {d["decided_by"] for d in run.decisions() if d["team"] == "M0"} == {"agent"}


def test_system_in_user_folds_the_system_text(prepared_2024, tmp_path):
    with FakeOpenAIServer() as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"system_in_user": True})
        run_engine(league, prepared_2024, tmp_path / "run")
    calls = RunDir(tmp_path / "run").llm_calls()
    for c in calls:
        roles = [m["role"] for m in c["messages"]]
        assert "system" not in roles and roles[0] == "user"
        assert "DECISION:" in c["messages"][0]["content"]
        assert c["messages"][0]["content"].index("M0") < c["messages"][0]["content"].index("DECISION:")
    assert {d["decided_by"] for d in RunDir(tmp_path / "run").decisions() if d["team"] == "M0"} == {"agent"}


def test_prompt_budget_drops_older_reask_turns(prepared_2024, tmp_path):
    """Invalid answers are re-asked with the first prompt and the latest answer only, within the budget."""
    budget = 2600
    with FakeOpenAIServer(fault_rate=1.0, faults=("malformed",)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"max_prompt_tokens": budget},
                              max_reasks=2, max_fallback_rate=None)
        run_engine(league, prepared_2024, tmp_path / "run")
    calls = RunDir(tmp_path / "run").llm_calls()
    assert all(c["prompt_tokens_estimated"] <= budget for c in calls)
    second = [c for c in calls if c["reask"] == 2]
    assert second and all(len(c["messages"]) == 4 for c in second)  # never the earlier re-ask turns


def test_prompt_budget_too_small_for_any_shortening_stops_the_run(prepared_2024, tmp_path):
    with FakeOpenAIServer() as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"max_prompt_tokens": 500})
        with pytest.raises(FatalLLMError, match=r"draft_shortlist prompt needs [\d,]+ tokens even with every table "
                                                r"shortened; max_prompt_tokens is 500"):
            run_engine(league, prepared_2024, tmp_path / "run")
        assert srv.requests == 0


# ------------------------------------------------------------------------ extra: no keys, no ffbench arguments

EXTRA_KEY = "sk-proj-EXTRAdef1234567890xyz"
HDR_TOKEN = "tokHDR1234567890abcdefg"


def with_extra(league, extra):
    """The league with team 0's ``extra`` replaced WITHOUT validation (what config validation would reject)."""
    t0 = league.teams[0]
    t0 = t0.model_copy(update={"agent": t0.agent.model_copy(update={"extra": extra})})
    return league.model_copy(update={"teams": [t0, *league.teams[1:]]})


@pytest.mark.parametrize("extra, words", [
    ({"api_key": EXTRA_KEY}, "'api_key' is set by ffbench; give the NAME of an environment variable in api_key_env"),
    ({"extra_headers": {"X-Api-Token": HDR_TOKEN}}, "extra_headers.X-Api-Token looks like a credential (value "
                                                    "hidden): give the NAME of an environment variable in api_key_env"),
    ({"extra_headers": {"Authorization": "Bearer " + HDR_TOKEN}}, "extra_headers.Authorization looks like a credential"),
    ({"extra_body": {"user": [EXTRA_KEY]}}, "extra_body.user[0] looks like a credential"),
    ({"client_secret": 12345678901}, "client_secret looks like a credential"),
    ({"timeout": 3}, "'timeout' is set by ffbench; use timeout_s"),
    ({"num_retries": 3}, "'num_retries' is set by ffbench; use llm.retries"),
    ({"response_format": {"type": "text"}}, "'response_format' is set by ffbench"),
    ({"max_tokens": 10}, "'max_tokens' is set by ffbench; use max_tokens"),
    ({"base_url": "http://x"}, "'base_url' is set by ffbench; use api_base"),
    ({"extra_headers": "X-Title: a"}, "extra_headers must be a mapping"),
], ids=["api_key", "header_token", "header_bearer", "key_value", "secret_number", "timeout", "num_retries",
        "response_format", "max_tokens", "base_url", "headers_not_mapping"])
def test_extra_rejects_credentials_and_ffbench_arguments(tmp_path, extra, words):
    d = small_league("http://127.0.0.1:9/v1", tmp_path).model_dump(mode="json")
    d["teams"][0]["agent"]["extra"] = extra
    with pytest.raises(ConfigError) as err:
        parse_config(d)
    assert "teams[0].agent.extra: " in str(err.value) and words in str(err.value)
    assert EXTRA_KEY not in str(err.value) and HDR_TOKEN not in str(err.value)


def test_extra_keeps_ordinary_arguments(tmp_path):
    """Token COUNTS and OpenAI's prompt_cache_key are settings, not credentials."""
    d = small_league("http://127.0.0.1:9/v1", tmp_path).model_dump(mode="json")
    extra = {"max_completion_tokens": 100, "thinking": {"type": "enabled", "budget_tokens": 1000},
             "prompt_cache_key": "ffbench", "extra_headers": {"X-Title": "ffbench"}, "top_p": 0.9}
    d["teams"][0]["agent"]["extra"] = extra
    assert parse_config(d).teams[0].agent.extra == extra


def test_extra_api_key_in_a_config_file_exits_2_without_showing_it(tmp_path, data_dir):
    d = small_league("http://127.0.0.1:9/v1", tmp_path / "cache").model_dump(mode="json")
    d["teams"][0]["agent"]["extra"] = {"api_key": EXTRA_KEY, "extra_headers": {"X-Api-Token": HDR_TOKEN}}
    cfg = tmp_path / "league.yaml"
    cfg.write_text(json.dumps(d))
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "run", str(cfg), "--out", str(tmp_path / "run"),
                        "--quiet"], capture_output=True, text=True,
                       env={**os.environ, "FFBENCH_DATA_DIR": str(data_dir)}, timeout=600)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "teams[0].agent.extra: 'api_key' is set by ffbench" in r.stderr and "X-Api-Token" in r.stderr
    assert EXTRA_KEY not in r.stdout + r.stderr and HDR_TOKEN not in r.stdout + r.stderr
    assert not (tmp_path / "run").exists()


def test_an_error_that_is_not_the_providers_stops_the_run(prepared_2024, tmp_path):
    """``extra.api_key`` past validation: litellm raises TypeError before any request. That is the same on
    every call, so it stops the run at once naming team, model and error (not 20 engine-repaired decisions
    and a vague fallback-rate message), and the key is in no file."""
    with FakeOpenAIServer() as srv:
        league = with_extra(small_league(srv.api_base, tmp_path / "cache"), {"api_key": EXTRA_KEY})
        try:
            with pytest.raises(FatalLLMError) as err:
                run_engine(league, prepared_2024, tmp_path / "run")
        finally:
            secrets._REGISTERED.discard(EXTRA_KEY)  # registered for the process; later tests start clean
        assert srv.requests == 0
    msg = str(err.value)
    assert msg.startswith("team 'M0' (openai/fake-model-0): the call could not be made (TypeError: ")
    assert "multiple values for keyword argument 'api_key'" in msg and "configuration error" in msg
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "failed" and not [d for d in run.decisions() if d["team"] == "M0"]
    [line] = run.llm_calls()
    assert line["error"].startswith("team 'M0'") and line["attempts"][0]["error"] == "TypeError"
    assert line["request_params"]["api_key"] == "***"
    assert not list((tmp_path / "cache").rglob("*.json"))  # never cached
    assert not [f for f in tmp_path.rglob("*") if f.is_file() and EXTRA_KEY.encode() in f.read_bytes()]


def test_transient_errors_are_still_retried_and_bad_answers_still_reasked(prepared_2024, tmp_path):
    """Timeouts (``slow``), 5xx and 429 stay retryable, broken answers re-asked: none of them is fatal."""
    with FakeOpenAIServer(fault_rate=0.3, faults=("slow", "500", "429", "malformed", "empty"), seed=3,
                          slow_s=5) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"timeout_s": 1.0}, retries=2,
                              max_reasks=1, max_fallback_rate=None)
        run_engine(league, prepared_2024, tmp_path / "run")
        injected = srv.injected
    assert injected["slow"] and injected["500"] + injected["429"] and injected["malformed"] + injected["empty"]
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    errors = {a["error"] for c in run.llm_calls() for a in c["attempts"] if a["error"]}
    expected = {"slow": "Timeout", "500": "InternalServerError", "429": "RateLimitError"}
    assert errors == {name for fault, name in expected.items() if injected.get(fault)}
    assert any(a["retried"] for c in run.llm_calls() for a in c["attempts"])
    assert any(c["reask"] for c in run.llm_calls())


def test_an_unwritable_cache_is_refused_before_the_run(prepared_2024, tmp_path, monkeypatch, capsys):
    """A cache folder that is a file is named (the config key or the variable) before any call is paid for."""
    from ffbench_lib.cli import main

    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    league = small_league("http://127.0.0.1:9", blocker)
    with pytest.raises(ConfigError, match="llm.cache_dir: .*a_file cannot hold the LLM replay cache"):
        run_engine(league, prepared_2024, tmp_path / "run")
    assert not (tmp_path / "run" / "run.json").exists()  # no run was started
    d = league.model_dump(mode="json")
    d["llm"].pop("cache_dir")
    cfg = tmp_path / "league.yaml"
    cfg.write_text(json.dumps(d))
    monkeypatch.setenv("FFBENCH_LLM_CACHE", str(blocker / "cache"))  # a folder inside a file (the file itself: the
    # settings name it first)
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "FFBENCH_LLM_CACHE: " in err and "cannot hold the LLM replay cache" in err and "Traceback" not in err


def test_an_answer_that_cannot_be_cached_is_still_used(prepared_2024, tmp_path):
    """Every cache subfolder name taken by a file: each answer is used all the same and the ledger says it was
    not stored (never a paid answer turned into a failure or a fallback)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(256):
        (cache / f"{i:02x}").write_text("")
    with FakeOpenAIServer() as srv:
        run_engine(small_league(srv.api_base, cache), prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    calls = run.llm_calls()
    assert calls and all(c["cache_error"] and c["error"] is None and c["parsed"] for c in calls)
    assert {d["decided_by"] for d in run.decisions()} == {"agent"}


def test_cache_checks_create_nothing_and_replay_needs_only_a_folder(prepared_2024, tmp_path, capsys):
    from ffbench_lib.agents.wiring import check_cache
    from ffbench_lib.cli import main

    league = small_league("http://127.0.0.1:9", tmp_path / "new" / "cache")
    check_cache(league)  # a folder that does not exist yet, under one that can be written: fine, and not created
    cfg = tmp_path / "league.yaml"
    cfg.write_text(json.dumps(league.model_dump(mode="json")))
    assert main(["validate", str(cfg)]) == 0 and not (tmp_path / "new").exists()
    replay = small_league("http://127.0.0.1:9", tmp_path / "missing", replay_only=True)
    with pytest.raises(ConfigError, match="replay_only, and no such folder"):
        check_cache(replay)
    (tmp_path / "missing").mkdir()
    check_cache(replay)  # replaying only reads: an existing folder is enough (read-only mounts included)
    assert list((tmp_path / "missing").iterdir()) == []
