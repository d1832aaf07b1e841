"""Tools mode (``{kind: llm, mode: tools}``): a short prompt with brief tables, and function-calling tools that
read only the decision's view. Against the fake server (which looks things up before it answers): every tool
call and its result is in the ledger and equals the tool run again on the logged view; the season replays from
the cache byte for byte; it uses fewer prompt tokens than the table prompts for the same league and seed; a bad
tool call gets a line back, never a crash; v1 prompts refuse tools mode in one line."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from engine_helpers import demo_league, digests, run_engine
from ffbench_lib.agents import tools
from ffbench_lib.cli import main as cli
from ffbench_lib.config.league import League
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer


def _league(api_base: str, cache, mode_of_first: str = "tools", **extra) -> League:
    d = demo_league().model_dump(mode="json")
    llm = {"kind": "llm", "model": "openai/fake-0", "api_base": api_base, "timeout_s": 30}
    d["teams"][0]["agent"] = {**llm, "mode": mode_of_first}
    d["teams"][1]["agent"] = dict(llm)  # the table prompts, same league and seed
    d |= {"weeks": 4, "llm": {"cache_dir": str(cache), "retries": 0, **extra}}
    d["trades"]["weeks"] = [2, 3]
    d["waivers"]["enabled"] = True
    return League.model_validate(d)


@pytest.fixture(scope="module")
def tools_season(prepared_2024, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tools")
    with FakeOpenAIServer() as srv:
        league = _league(srv.api_base, tmp / "cache")
        run_engine(league, prepared_2024, tmp / "run")
    return league, tmp


class _Curious(FakeOpenAIServer):
    """The fake manager, which first calls every tool it is offered once (a player of the prompt's, the RB list,
    the first other team), then answers from the prompt and the results."""

    def respond(self, body, auth="", attempt_id=None):
        msgs = body.get("messages", [])
        offered = [t["function"]["name"] for t in body.get("tools") or ()] if body.get("tool_choice") != "none" else []
        if offered and not any(m.get("role") == "tool" for m in msgs):
            user = next(m["content"] for m in msgs if m["role"] == "user")
            pid = re.search(r"^(\S+) \|", user.split("id | ", 1)[-1].split("\n", 1)[-1], re.M)
            team = re.search(r'TEAM "([^"]+)"', user)
            args = {"league_rules": {}, "player": {"player_id": pid.group(1) if pid else "x"},
                    "free_agents": {"position": "RB", "limit": 3}, "draft_board": {"position": "RB", "limit": 3},
                    "team_roster": {"team": team.group(1) if team else "x"}}
            calls = [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(args[n])}}
                     for i, n in enumerate(offered)]
            return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
                                      "finish_reason": "tool_calls"}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}, 0.0
        return super().respond(body, auth, attempt_id)


def test_every_tool_call_and_result_is_in_the_ledger_and_reads_only_the_view(prepared_2024, tmp_path):
    with _Curious() as srv:
        league = _league(srv.api_base, tmp_path / "cache")
        league = league.model_copy(update={"weeks": 3})
        run_engine(league, prepared_2024, tmp_path / "run")
    tmp = tmp_path
    run = RunDir(tmp / "run")
    assert run.meta().status == "complete"
    team = league.teams[0].name
    calls = [c for c in run.llm_calls() if c["team"] == team]
    assert calls and all(c["mode"] == "tools" and c["agent"] == "llm:openai/fake-0[tools]" for c in calls)
    looked = [c for c in calls if c["tool_calls"]]
    assert {t["name"] for c in looked for t in c["tool_calls"]} == set(tools.TOOLS)  # every tool, somewhere
    views = {(r["decision"], r.get("week"), r.get("pick")): r["view"] for r in run.decisions() if r["team"] == team}
    for c in looked:  # each result is the tool run again on the decision's own (logged) view
        view = views[(c["decision"], c["week"], c["pick"])]
        assert [r["id"] for r in c["tool_results"]] == [t["id"] for t in c["tool_calls"]]
        for t, r in zip(c["tool_calls"], c["tool_results"]):
            assert r["content"] == tools.run(c["decision"], view, t["name"], t["arguments"])
            shown = set(re.findall(r"^(\S+) \|", r["content"], re.M)) - {"id"}
            assert shown <= set(tools._players(view)), "a tool showed a player the view does not hold"
    # the answer after the tools was judged like any other, and the next call carries the results
    for c in looked:
        nxt = next(x for x in calls if x["messages"][:len(c["messages"])] == c["messages"] and x is not c)
        assert [m["content"] for m in nxt["messages"] if m["role"] == "tool"][-len(c["tool_results"]):] == \
            [r["content"] for r in c["tool_results"]]
    other = [c for c in run.llm_calls() if c["team"] == league.teams[1].name]
    assert other and all("mode" not in c and "tool_calls" not in c for c in other)  # table lines as they were
    config = yaml.safe_load((tmp / "run" / "config.yaml").read_text())
    assert config["teams"][0]["agent"]["mode"] == "tools" and "mode" not in config["teams"][1]["agent"]


def test_a_tools_season_replays_from_the_cache_byte_for_byte(tools_season, prepared_2024):
    league, tmp = tools_season
    again = league.model_copy(update={"llm": league.llm.model_copy(update={"replay_only": True})})
    run_engine(again, prepared_2024, tmp / "again")
    assert all(c["cache_hit"] for c in RunDir(tmp / "again").llm_calls())
    first, second = digests(tmp / "run"), digests(tmp / "again")
    for name in ("decisions.jsonl", "standings.csv", "lineups.csv", "draft_picks.csv"):
        if name in first:
            assert first[name] == second[name], name


def test_the_short_prompt_uses_fewer_prompt_tokens_than_the_tables(tools_season):
    """Same league, seed and fake model: the tools team's prompts (tool specs, rounds and results counted)
    against the table team's, decision kind by decision kind where the tools team looked things up."""
    league, tmp = tools_season
    run = RunDir(tmp / "run")
    totals = {}
    for c in run.llm_calls():
        totals.setdefault(c["team"], 0)
        totals[c["team"]] += c["prompt_tokens"] or 0
    tools_team, tables_team = (t.name for t in league.teams[:2])
    assert 0 < totals[tools_team] < totals[tables_team], totals


def test_the_brief_prompt_shows_every_choice_and_only_brief_columns(tools_season):
    league, tmp = tools_season
    run = RunDir(tmp / "run")
    for r in run.decisions():
        if r["team"] != league.teams[0].name or r["decision"] not in ("set_lineup", "waiver_claims"):
            continue
        own = r["view"].get("players") or r["view"]["my_roster"]
        msgs = tools.messages(r["decision"], r["view"], "v2")
        user = msgs[1]["content"]
        assert all(p["id"] in user for p in own)
        assert "std_ppg |" not in user and "| proj_week |" in user
        assert "Points per unit" not in msgs[0]["content"]  # the point values are the league_rules tool's
        assert tools.run(r["decision"], r["view"], "league_rules", "{}").startswith("no tool")  # the draft's
    draft = next(r for r in run.decisions() if r["decision"] == "draft_shortlist")
    assert "Points per unit" in tools.run("draft_shortlist", draft["view"], "league_rules", "{}")


def test_a_bad_tool_call_gets_a_line_back(tools_season):
    league, tmp = tools_season
    view = next(r["view"] for r in RunDir(tmp / "run").decisions() if r["decision"] == "waiver_claims")
    assert tools.run("waiver_claims", view, "draft_board", "{}").startswith("no tool 'draft_board'")  # not offered for waivers
    assert tools.run("waiver_claims", view, "nope", "{}").startswith("no tool 'nope'")
    assert tools.run("waiver_claims", view, "free_agents", "not json") == "the arguments are not a JSON object"
    assert tools.run("waiver_claims", view, "free_agents", "[1]") == "the arguments are not a JSON object"
    assert tools.run("waiver_claims", view, "free_agents", '{"position": "XX"}').startswith("no position 'XX'")
    assert tools.run("waiver_claims", view, "player", '{"player_id": "00-9999999"}').startswith("no player")
    big = tools.run("waiver_claims", view, "free_agents", '{"position": "RB", "limit": 100000}')
    assert 1 < len(big.splitlines()) <= tools.MAX_ROWS + 2
    assert {s["function"]["name"] for s in tools.specs("waiver_claims", view)} == {"player", "free_agents"}


def test_tools_mode_with_v1_prompts_is_refused_in_one_line(tmp_path, capsys):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/x", "mode": "tools"}
    d["llm"] = {"prompt_version": "v1"}
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert "teams[0].agent.mode" in err and "prompt_version v2" in err and "Traceback" not in err, err


class _Looper(FakeOpenAIServer):
    """A model that calls a tool whenever it may (and a bad one: a tool never offered), then answers."""

    def respond(self, body, auth="", attempt_id=None):
        self.bodies = getattr(self, "bodies", []) + [body]
        if body.get("tools") and body.get("tool_choice") != "none":
            calls = [{"id": f"c{len(self.bodies)}", "type": "function",
                      "function": {"name": "player", "arguments": '{"player_id": "nobody"}'}},
                     {"id": f"d{len(self.bodies)}", "type": "function", "function": {"name": "rm_rf", "arguments": "{"}}]
            return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
                                      "finish_reason": "tool_calls"}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}, 0.0
        return super().respond(body, auth, attempt_id)


def test_tool_rounds_are_capped_and_the_answer_is_then_due(prepared_2024, tmp_path):
    with _Looper() as srv:
        d = demo_league().model_dump(mode="json")
        d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base, "timeout_s": 30,
                                  "mode": "tools", "max_tool_rounds": 2}
        d |= {"weeks": 1, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0}}
        d["trades"]["weeks"] = []
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
        bodies = srv.bodies
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = run.llm_calls()
    first = [c for c in calls if c["decision"] == "draft_shortlist" and c["pick"] == calls[0]["pick"]]
    assert [c["tool_round"] for c in first] == [0, 1, None]  # two rounds of calls, then the answer
    assert [r["content"][:9] for r in first[0]["tool_results"]] == ["no player", "no tool '"]
    assert not first[-1]["problems"]  # the answer after the cap is judged like any other, and was valid
    due = [b for b in bodies if b.get("tool_choice") == "none"]
    assert len(due) == sum(1 for c in calls if c["tool_round"] is None)  # every answer was asked for without tools
    assert all(b["tools"] for b in due)  # the specs stay: the conversation holds tool calls
