"""What a new user hits before and at the first LLM call (#25): a missing key or an address no request can reach
stops at once naming the team, the model and the fix; ``ffbench check`` asks each model once; ``validate`` warns of
unset keys and a guard that cannot apply, and refuses a league whose smallest prompt cannot fit; config overrides
on the command line; line numbers in config errors; re-asks that are really asked; the ledger's waiting time and
unsent sampling parameters; token budgets calibrated on the server's own count."""
import json
import os
import re

import pytest
import yaml

from ffbench_lib import cli
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config, parse_config
from ffbench_lib.llm import FatalLLMError
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, demo_league, run_engine
from test_llm_faults import small_league


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FFBENCH_PROG"):
        monkeypatch.delenv(var, raising=False)


def _with_agent(league: League, **agent) -> League:
    """Team 0's agent replaced WITHOUT validation (what a run gets if validation were bypassed)."""
    t0 = league.teams[0]
    t0 = t0.model_copy(update={"agent": t0.agent.model_copy(update=agent)})
    return league.model_copy(update={"teams": [t0, *league.teams[1:]]})


def _write(tmp_path, league: League, name="league.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(league.model_dump(mode="json"), sort_keys=False))
    return path


# ------------------------------------------------------------------------------------ keys and addresses

@pytest.mark.parametrize("model, var", [("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_a_missing_key_stops_the_run_at_once_naming_team_model_and_variable(prepared_2024, tmp_path, model, var):
    league = _with_agent(small_league("http://127.0.0.1:9/v1", tmp_path / "cache"), model=model, api_base=None)
    with pytest.raises(FatalLLMError) as err:
        run_engine(league, prepared_2024, tmp_path / "run")
    msg = str(err.value)
    assert f"team 'M0' ({model})" in msg and "no API key" in msg and var in msg
    [call] = RunDir(tmp_path / "run").llm_calls()  # one call, one attempt: never retried as a server fault
    assert len(call["attempts"]) == 1 and call["retries"] == 0 and call["attempts"][0]["retried"] is False
    assert RunDir(tmp_path / "run").meta().status == "failed"


def test_a_missing_key_through_the_cli_names_every_team_and_how_to_go_on(tmp_path, capsys):
    d = demo_league().model_dump(mode="json")
    d["weeks"], d["trades"]["weeks"] = 1, []
    for i in range(2):
        d["teams"][i]["agent"] = {"kind": "llm", "model": f"openai/gpt-4o-mini{'-x' * i}"}
    d["llm"] = {"cache_dir": str(tmp_path / "cache")}
    cfg = _write(tmp_path, League.model_validate(d))
    assert cli.main(["run", str(cfg), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("OPENAI_API_KEY is not set") == 3  # a warning per model before the run, then the stop
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: team ") and "no API key: OPENAI_API_KEY is not set" in last
    assert "InternalServerError" not in last and last.endswith(f"--out {tmp_path / 'run'} --resume")


def test_api_base_that_is_not_a_url_is_refused_in_the_config():
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/x", "api_base": "not a url"}
    with pytest.raises(ConfigError, match=r"teams\[0\]\.agent\.api_base: expected the server's http\(s\) address"):
        parse_config(d)


def test_an_address_no_request_can_reach_stops_the_run_at_once(prepared_2024, tmp_path):
    league = _with_agent(small_league("http://127.0.0.1:9/v1", tmp_path / "cache"), api_base="not a url")
    with pytest.raises(FatalLLMError, match=r"api_base 'not a url' is not a usable URL"):
        run_engine(league, prepared_2024, tmp_path / "run")
    [call] = RunDir(tmp_path / "run").llm_calls()
    assert len(call["attempts"]) == 1


def test_validate_warns_of_unset_keys_without_calling(tmp_path, capsys):
    path = REPO / "params" / "league.yaml"
    assert cli.main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning: openai/" in err and "OPENAI_API_KEY is not set" in err and "ANTHROPIC_API_KEY is not set" in err


# ----------------------------------------------------------------------------------------- ffbench check

def test_check_reports_each_model_and_endpoint(tmp_path, capsys):
    with FakeOpenAIServer() as srv:
        league = small_league(srv.api_base, tmp_path / "cache", n_teams=4, n_llm=2)
        league = _with_agent(league, model="anthropic/claude-sonnet-4-5", api_base=None)
        code = cli.main(["check", str(_write(tmp_path, league))])
        requests = srv.requests
    out = capsys.readouterr()
    assert code == 2 and "1 of 2 model endpoint(s) cannot be used" in out.err  # the missing key fails the check
    assert requests == 3  # the fake model: one call, one with a system text, one real prompt; none without a key
    fake = out.out.split("openai/fake-model-1 at ")[1]
    assert re.search(r"key\s+not needed \(local server\)", fake) and re.search(r"endpoint reachable\s+yes", fake)
    assert re.search(r"model found\s+yes", fake) and re.search(r"JSON mode\s+accepted", fake)
    assert re.search(r"token count\s+\d+ prompt tokens by the server.s count, \d+ by litellm.s estimate \(x[\d.]+, on the \w+ prompt\)", fake)
    assert re.search(r"price\s+", fake)
    assert "anthropic/claude-sonnet-4-5" in out.out and "missing: ANTHROPIC_API_KEY is not set" in out.out
    assert "smallest prompts" in out.out


def test_check_names_a_model_the_server_does_not_have(tmp_path, capsys):
    with FakeOpenAIServer(fault_rate=1.0, faults=("404",)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache")
        code = cli.main(["check", str(_write(tmp_path, league))])
    out = capsys.readouterr()
    assert code == 2
    assert re.search(r"model found\s+no", out.out) and "model not found" in out.out
    assert "cannot be used" in out.err


# ------------------------------------------------------------------------------ validate's LLM checks

def test_validate_refuses_a_league_whose_smallest_trade_prompt_cannot_fit(tmp_path, capsys):
    league = small_league("http://127.0.0.1:9/v1", tmp_path / "cache", n_teams=10, weeks=4,
                          agent={"max_prompt_tokens": 2000})
    code = cli.main(["validate", str(_write(tmp_path, league))])
    err = capsys.readouterr().err
    assert code == 2
    assert re.search(r"the propose_trade prompt needs [\d,]+ tokens by litellm's estimate even with every table "
                     r"shortened, above max_prompt_tokens 2,000", err)
    assert "draft_pick prompt" not in err  # the kinds that fit are not named


def test_validate_says_when_the_fallback_guard_can_never_apply(tmp_path, capsys):
    league = small_league("http://127.0.0.1:9/v1", tmp_path / "cache", weeks=2)
    league = league.model_copy(update={"draft": league.draft.model_copy(update={"mode": "queue"})})  # 1 a round
    assert cli.main(["validate", str(_write(tmp_path, league))]) == 0
    err = capsys.readouterr().err
    assert re.search(r"llm.fallback_min_decisions is 20, but a team makes about \d+ decisions", err)


# ---------------------------------------------------------------------------------------- overrides

def test_overrides_on_the_command_line_are_validated_and_recorded(tmp_path, capsys, monkeypatch):
    with FakeOpenAIServer() as srv:
        out = tmp_path / "run"
        args = ["run", str(REPO / "params" / "demo.yaml"), "--seed", "1", "--out", str(out), "--quiet",
                "--model", "openai/fake-x", "--api-base", srv.api_base, "--teams", "1-2", "--set", "weeks=1",
                "--set", f"llm.cache_dir={tmp_path / 'cache'}", "--set", "trades.weeks=[]"]
        assert cli.main(args) == 0, capsys.readouterr().err
    cfg = yaml.safe_load((out / "config.yaml").read_text())
    assert [t["agent"]["model"] for t in cfg["teams"][:2]] == ["openai/fake-x"] * 2
    assert cfg["teams"][2]["agent"]["kind"] == "bot" and cfg["weeks"] == 1
    with pytest.raises(ConfigError, match=r"--teams 1-99: the league has teams 1..10"):
        load_config(REPO / "params" / "demo.yaml", settings_overrides=cli._assignments(
            cli.build_parser().parse_args(["run", str(REPO / "params" / "demo.yaml"), "--out", str(tmp_path / "x"),
                                           "--model", "openai/y", "--teams", "1-99"])))
    assert cli.main(["validate", str(REPO / "params" / "demo.yaml"), "--set", "draft.shortlst_size=3"]) == 2
    assert "--set draft.shortlst_size=3: draft.shortlst_size: unknown key" in capsys.readouterr().err
    assert cli.main(["validate", str(REPO / "params" / "demo.yaml"), "--set", "weeks=abc"]) == 2
    err = capsys.readouterr().err  # named by the override, never by the file's line of the value it replaced
    assert "--set weeks=abc: weeks: Input should be a valid integer" in err and "line " not in err


def test_a_yaml_alias_is_overridden_for_one_team_only(tmp_path):
    path = REPO / "params" / "local_llm.yaml"  # five teams share one agent through &local / *local
    league = load_config(path, settings_overrides=["teams[0].agent.max_prompt_tokens=3000"])
    assert league.teams[0].agent.max_prompt_tokens == 3000 and league.teams[1].agent.max_prompt_tokens != 3000


def test_resume_hint_starts_the_way_the_user_typed_and_keeps_the_overrides(monkeypatch):
    monkeypatch.setenv("FFBENCH_PROG", "./run.sh ffbench")
    args = cli.build_parser().parse_args(["run", "params/demo.yaml", "--seed", "2", "--out", "outputs/runs/x",
                                          "--set", "weeks=3"])
    assert cli._resume_command(args) == ("./run.sh ffbench run params/demo.yaml --seed 2 --set weeks=3 --out "
                                         "outputs/runs/x --resume")


# ------------------------------------------------------------------------------------- config messages

def test_an_unknown_key_names_its_line(tmp_path):
    text = (REPO / "params" / "local_llm.yaml").read_text().replace("shortlist_size: 5", "shortlst_size: 5")
    (tmp_path / "bad.yaml").write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "shortlst_size" in ln)
    with pytest.raises(ConfigError, match=rf"line {line}: draft\.shortlst_size: unknown key"):
        load_config(tmp_path / "bad.yaml")


def test_playoffs_that_fill_a_short_league_are_named_before_its_trade_weeks():
    d = demo_league().model_dump(mode="json")
    d.update(weeks=2, playoffs={"enabled": True, "teams": 3, "round_weeks": [1, 1]})
    with pytest.raises(ConfigError, match=r"playoffs.round_weeks: 2 playoff weeks leave no regular season"):
        parse_config(d)


# ------------------------------------------------------------------------------------------ re-asks

def test_every_reask_is_really_asked_and_does_not_grow(prepared_2024, tmp_path):
    """A model that repeats one invalid answer: the second re-ask says so (else it repeats the first re-ask
    byte for byte and the cache answers it), and each re-ask is the first prompt plus the latest answer only."""
    with FakeOpenAIServer(fault_rate=1.0, faults=("malformed",)) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", max_reasks=2, max_fallback_rate=None)
        run_engine(league, prepared_2024, tmp_path / "run")
        served = srv.requests
    calls = RunDir(tmp_path / "run").llm_calls()
    reasks = [c for c in calls if c["reask"] > 0]
    assert reasks and not any(c["cache_hit"] for c in calls) and served == len(calls)
    assert all(len(c["messages"]) == 4 for c in reasks)
    second = [c for c in calls if c["reask"] == 2]
    assert second and all("Re-ask 2 of 2: your answer repeated the same mistake" in c["messages"][-1]["content"]
                          for c in second)


# ------------------------------------------------------------------------------------------- ledger

def test_ledger_records_waiting_apart_and_the_parameters_left_to_the_server(prepared_2024, tmp_path):
    with FakeOpenAIServer(latency_s=0.05) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", n_teams=4, n_llm=2,
                              agent={"max_concurrency": 1, "temperature": 0.2})
        run_engine(league, prepared_2024, tmp_path / "run")
    calls = RunDir(tmp_path / "run").llm_calls()
    assert all(c["wait_s"] is not None and c["wait_s"] >= 0 for c in calls)
    assert all(a["wait_s"] >= 0 for c in calls for a in c["attempts"])
    for c in calls:
        assert c["request_params"]["temperature"] == 0.2
        assert "temperature" not in c["request_params"]["server_defaults"]
        assert {"top_p", "seed"} <= set(c["request_params"]["server_defaults"])


# ------------------------------------------------------------------------- budgets by the server's count

def test_a_budget_is_kept_by_the_servers_own_count(prepared_2024, tmp_path):
    """A server that counts more than litellm's estimate: a max_prompt_tokens equal to its window would overflow it
    at the first draft prompt (estimated to fit); calibrated on the server's count (once, recorded), every prompt
    fits, shortened where needed, and the model is told."""
    budget = 2450
    with FakeOpenAIServer(context_window=budget, token_factor=2.0) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", n_teams=10, weeks=1,
                              agent={"max_prompt_tokens": budget})
        run_engine(league, prepared_2024, tmp_path / "run")
        assert srv.injected["context"] == 0
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    [cal] = [c for c in calls if c.get("calibration", {}).get("ratio")]
    assert cal["decision"] == "token_calibration" and cal["calibration"]["ratio"] > 1.1
    assert all(c["prompt_tokens"] <= budget for c in calls if c["prompt_tokens"])
    assert any(c["trimmed"] for c in calls if c["decision"] == "draft_shortlist")
    assert {d["decided_by"] for d in run.decisions() if d["team"] == "M0"} == {"agent"}


def test_a_context_overflow_quotes_the_servers_count(prepared_2024, tmp_path):
    with FakeOpenAIServer(context_window=1000, token_factor=1.2) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"max_prompt_tokens": 3000})
        with pytest.raises(FatalLLMError, match=r"prompt is [\d,]+ tokens by the server's count \([\d,]+ by litellm's "
                                                r"estimate\).*max_prompt_tokens is 3,000: lower it"):
            run_engine(league, prepared_2024, tmp_path / "run")


def test_a_dropped_system_message_is_named(prepared_2024, tmp_path, capsys):
    with FakeOpenAIServer(drop_system=True) as srv:
        league = small_league(srv.api_base, tmp_path / "cache", agent={"max_prompt_tokens": 2600})
        run_engine(league, prepared_2024, tmp_path / "run")
    warned = [c for c in RunDir(tmp_path / "run").llm_calls() if c.get("calibration", {}).get("warning")]
    assert len(warned) == 1 and "drops the system role" in warned[0]["calibration"]["warning"]
    assert "set system_in_user: true" in capsys.readouterr().err
    with FakeOpenAIServer() as srv:  # a server that keeps it: no warning
        league = small_league(srv.api_base, tmp_path / "cache2", agent={"max_prompt_tokens": 2600})
        run_engine(league, prepared_2024, tmp_path / "run2")
    cal = [c for c in RunDir(tmp_path / "run2").llm_calls() if c["decision"] == "token_calibration"]
    assert len(cal) == 2 and not any(c["calibration"].get("warning") for c in cal)


def test_check_names_a_chat_template_that_drops_the_system_role(tmp_path, capsys):
    with FakeOpenAIServer(drop_system=True, context_window=8192) as srv:
        league = small_league(srv.api_base, tmp_path / "cache")
        cli.main(["check", str(_write(tmp_path, league))])
    out = capsys.readouterr().out
    assert re.search(r"system role\s+dropped by the chat template", out) and "set system_in_user: true" in out
    assert re.search(r"context window\s+8,192 tokens", out)  # read from the server's /v1/models
