"""Agents of your own (``{kind: python, entry: "module:factory"}``): a user's module, written here to a temporary
folder, plays a full season and an exam exactly as the bot it wraps; its model calls go through ffbench's client
(the ledger, the replay cache); a broken entry is refused in one line with exit 2; the public API's schemas cover
every decision kind; a plug-in the engine mostly repairs stops as a model would."""
from __future__ import annotations

import json
import sys
import textwrap

import pandas as pd
import pytest
import yaml

from engine_helpers import REPO, demo_league, digests, run_engine
from ffbench_lib.agents import DECISIONS, Decider, answer_schema, make_bot, view_schema
from ffbench_lib.cli import main as cli
from ffbench_lib.config.league import League
from ffbench_lib.llm import FatalLLMError
from ffbench_lib.runs.rundir import RunDir

MODULE = '''
from ffbench_lib.agents import make_bot


class Wrap:
    """A baseline bot's answers, through the plug-in path."""

    def __init__(self, team, seed, base):
        self.bot = make_bot(base, team, seed)
        self.masked_views = False  # decides by numbers, as the bot does

    async def decide(self, kind, view):
        return await self.bot.decide(kind, view)


def wrap(team, seed, base="vorp"):
    return Wrap(team, seed, base)


class Asker:
    """Asks its model before every decision, then answers as adp (the model's text is only logged)."""

    def __init__(self, team, seed):
        self.bot, self.client, self.texts = make_bot("adp", team, seed), None, []

    def use_model(self, client):
        self.client = client

    async def decide(self, kind, view):
        ask = f"{kind} in week {view.get('week')}, pick {view.get('pick')}"
        self.texts.append(await self.client.complete([{"role": "user", "content": ask}]))
        return await self.bot.decide(kind, view)


def asker(team, seed):
    return Asker(team, seed)


class Broken:
    async def decide(self, kind, view):
        raise RuntimeError("my bug")


def broken(team, seed):
    return Broken()


class Sync:
    def decide(self, kind, view):
        return {}


def sync(team, seed):
    return Sync()


def no_decide(team, seed):
    return object()


def fails(team, seed, **options):
    raise ValueError("bad option")


NOT_CALLABLE = 3
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """``user_agents`` importable from a temporary folder, as a user's own module on PYTHONPATH."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "user_agents.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "user_agents", raising=False)
    yield "user_agents"
    sys.modules.pop("user_agents", None)


def _league(entry: str, **agent) -> League:
    d = demo_league().model_dump(mode="json")
    d["teams"][0] = {"name": d["teams"][0]["name"], "agent": {"kind": "python", "entry": entry, **agent}}
    return League.model_validate(d)


def test_a_plugin_plays_a_full_season_exactly_as_the_bot_it_wraps(user_module, prepared_2024, tmp_path):
    """A demo season whose first team is a plug-in wrapping vorp is, file by file, the season where that team is
    the vorp bot itself, its agent id python:user_agents.wrap instead of bot:vorp."""
    plugin = _league(f"{user_module}:wrap", options={"base": "vorp"})
    bot = demo_league().model_copy(update={"teams": [plugin.teams[0].model_copy(update={
        "agent": demo_league().teams[0].agent.model_copy(update={"strategy": "vorp"})}), *plugin.teams[1:]]})
    run_engine(plugin, prepared_2024, tmp_path / "plugin")
    run_engine(bot, prepared_2024, tmp_path / "bot")
    a, b = RunDir(tmp_path / "plugin"), RunDir(tmp_path / "bot")
    assert a.meta().status == "complete" and plugin.teams[0].agent.agent_id == "python:user_agents.wrap"
    for name in ("draft_picks", "lineups", "standings", "trades", "matchups"):
        ta, tb = a.table(name), b.table(name)
        ids = [c for c in ta.columns if c.endswith("agent")]
        assert name in ("trades", "matchups") or "python:user_agents.wrap" in set(ta["agent"])
        for c in ids:
            ta[c] = ta[c].map(lambda x: "bot:vorp" if x == "python:user_agents.wrap" else x)
        assert ta.equals(tb), name
    da = (tmp_path / "plugin" / "decisions.jsonl").read_text().replace("python:user_agents.wrap", "bot:vorp")
    assert da == (tmp_path / "bot" / "decisions.jsonl").read_text()
    assert len(da.splitlines()) > 100


def test_a_plugin_answers_an_exam_as_the_bot_it_wraps(user_module, prepared_2024, tmp_path):
    from ffbench_lib.runs.exam import build_suite, run_exam

    spec = {"name": "p-exam", "base": str(REPO / "params" / "demo.yaml"), "seasons": [2024], "seeds": [1],
            "skills": {"start_sit": {"per_team_season": 2}, "draft_pick": {"per_team_season": 2}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    build_suite(tmp_path / "spec.yaml", tmp_path / "suite", prepared_for=lambda league: prepared_2024)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"candidates": [
        {"name": "mine", "agent": {"kind": "python", "entry": f"{user_module}:wrap", "options": {"base": "vorp"}}},
        {"name": "vorp", "agent": {"kind": "bot", "strategy": "vorp"}}]}))
    df = run_exam(tmp_path / "suite", tmp_path / "c.yaml", tmp_path / "r")
    mine, bot = (df[df["agent"] == n].reset_index(drop=True) for n in ("mine", "vorp"))
    assert set(mine["agent_id"]) == {"python:user_agents.wrap"} and len(mine) == 40
    cols = ["state_id", "applied", "score", "best_possible", "regret", "decided_by"]
    assert mine[cols].equals(bot[cols])


def test_a_plugins_model_calls_go_through_the_ledger_and_a_rerun_replays_them(user_module, prepared_2024,
                                                                              tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    def league(api_base, replay_only=False):
        d = _league(f"{user_module}:asker", model={"model": "openai/fake-0", "api_base": api_base,
                                                   "timeout_s": 30}).model_dump(mode="json")
        d |= {"weeks": 2, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0, "replay_only": replay_only}}
        d["trades"]["weeks"] = []
        return League.model_validate(d)

    with FakeOpenAIServer() as srv:
        run_engine(league(srv.api_base), prepared_2024, tmp_path / "live")
        assert srv.requests > 12
    calls = RunDir(tmp_path / "live").llm_calls()
    mine = [d for d in RunDir(tmp_path / "live").decisions() if d["agent"] == "python:user_agents.asker"]
    assert len(calls) == len(mine) and all(c["agent"] == "python:user_agents.asker" and c["source"] == "plugin" for c in calls)
    assert {c["decision"] for c in calls} == {d["decision"] for d in mine} and not any(c["cache_hit"] for c in calls)
    assert all(c["response"] for c in calls) and all(c["messages"][0]["content"] for c in calls)
    with FakeOpenAIServer() as srv2:  # replay only: the cache answers, the server is never asked
        run_engine(league(srv2.api_base, replay_only=True), prepared_2024, tmp_path / "replay")
        assert srv2.requests == 0
    a, b = digests(tmp_path / "live"), digests(tmp_path / "replay")
    assert all(a[f] == b[f] for f in ("decisions.jsonl", "draft_picks.parquet", "lineups.parquet"))
    assert all(c["cache_hit"] for c in RunDir(tmp_path / "replay").llm_calls())


@pytest.mark.parametrize("entry, extra, says", [
    ("no_such_module:f", {}, "teams[0].agent.entry: cannot import 'no_such_module' (ModuleNotFoundError"),
    ("{m}:missing", {}, "teams[0].agent.entry: {m} has no callable 'missing'"),
    ("{m}:NOT_CALLABLE", {}, "has no callable 'NOT_CALLABLE'"),
    ("{m}:no_decide", {}, "returned a object without a decide(kind, view) method"),
    ("{m}:sync", {}, "Sync.decide is not async"),
    ("{m}:fails", {}, "failed (ValueError: bad option); check its options"),
    ("{m}:wrap", {"model": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1"}}, "has no use_model(client)"),
])
def test_a_broken_entry_is_refused_in_one_line_with_exit_2(user_module, tmp_path, capsys, entry, extra, says):
    """``ffbench run`` and ``ffbench validate`` alike: one line naming the field, exit 2, no run folder."""
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "python", "entry": entry.format(m=user_module), **extra}
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    for argv in (["run", str(tmp_path / "l.yaml"), "--out", str(tmp_path / "run")],
                 ["validate", str(tmp_path / "l.yaml")]):
        capsys.readouterr()
        assert cli(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("error: ") and says.format(m=user_module) in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("agent, says", [
    ({"kind": "python", "entry": "just_a_module"}, "teams[0].agent.entry: expected package.module:factory"),
    ({"kind": "python", "entry": "m:f", "options": {"api_key": "sk-live-123"}}, "looks like a credential"),
    ({"kind": "python", "entry": "m:f", "name": "has space"}, "teams[0].agent.name"),
])
def test_a_bad_plugin_config_is_refused_naming_the_field(tmp_path, capsys, agent, says):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = agent
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and "sk-live-123" not in err, err


def test_a_plugin_the_engine_mostly_repairs_stops_as_a_model_would(user_module, prepared_2024, tmp_path):
    """Every decision raises: the engine repairs each (agent error), and past llm.max_fallback_rate the run stops
    instead of finishing with the engine's answers under the plug-in's name."""
    with pytest.raises(FatalLLMError, match=r"python:user_agents.broken.*max_fallback_rate|max_fallback_rate"):
        run_engine(_league(f"{user_module}:broken"), prepared_2024, tmp_path / "run")
    assert RunDir(tmp_path / "run").meta().status == "failed"
    mine = [d for d in RunDir(tmp_path / "run").decisions() if d["agent"] == "python:user_agents.broken"]
    assert mine and all(d["decided_by"] == "fallback" and "agent error: RuntimeError: my bug" in d["reason"]
                        for d in mine)


def test_the_public_api_describes_every_decision_kind_and_the_protocol(user_module):
    import importlib

    for kind in DECISIONS:
        view, answer = view_schema(kind), answer_schema(kind)
        assert view["type"] == "object" and view["properties"] and answer["properties"], kind
    with pytest.raises(KeyError, match="no decision kind 'draft_oracle'"):
        view_schema("draft_oracle")
    mod = importlib.import_module(user_module)
    assert isinstance(mod.wrap("T", 1), Decider) and isinstance(make_bot("adp", "T", 1), Decider)
    assert json.dumps(answer_schema("set_lineup"))  # plain JSON, for a prompt or a tool's schema


HOSTILE = '''
import asyncio
import sys

from ffbench_lib.agents import make_bot


class Tamper:
    """Rewrites the view it is given (as a hostile plug-in would) before answering as adp."""

    def __init__(self, team, seed):
        self.bot = make_bot("adp", team, seed)

    async def decide(self, kind, view):
        answer = await self.bot.decide(kind, dict(view))
        view["players"] = view.get("players", [])[:1]
        view.clear()
        return answer


def tamper(team, seed):
    return Tamper(team, seed)


class Slow:
    async def decide(self, kind, view):
        await asyncio.sleep(30)


def slow(team, seed):
    return Slow()


class Voter:
    """Asks the same prompt three times a decision, at once (samples), then answers as adp."""

    def __init__(self, team, seed):
        self.bot, self.client, self.seen = make_bot("adp", team, seed), None, []

    def use_model(self, client):
        self.client = client

    async def decide(self, kind, view):
        ask = [{"role": "user", "content": f"{kind} {view.get('week')} {view.get('pick')}"}]
        self.seen.append(await asyncio.gather(*(self.client.complete(ask) for _ in range(3))))
        return await self.bot.decide(kind, view)


def voter(team, seed):
    return Voter(team, seed)


def a_class(team, seed):
    return Tamper
'''


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "hostile_agents.py").write_text(textwrap.dedent(HOSTILE))
    (folder / "exits_agents.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(folder))
    for m in ("hostile_agents", "exits_agents"):
        monkeypatch.delitem(sys.modules, m, raising=False)
    yield "hostile_agents"
    for m in ("hostile_agents", "exits_agents"):
        sys.modules.pop(m, None)


def test_a_plugin_answers_its_own_copy_of_the_view(hostile, prepared_2024, tmp_path):
    """What a plug-in does to its view never reaches the rules that judge it: in a season its answers are
    judged as the bot's it wraps, and in an exam the states score every candidate after it as before."""
    from ffbench_lib.runs.exam import build_suite, run_exam

    d = demo_league().model_dump(mode="json")
    d["weeks"], d["trades"]["weeks"] = 3, []
    d["teams"][0]["agent"] = {"kind": "python", "entry": f"{hostile}:tamper"}
    run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    picks = RunDir(tmp_path / "run").table("draft_picks")
    assert picks["player_id"].is_unique and (picks["decided_by"] == "agent").all()
    spec = {"name": "t", "base": str(REPO / "params" / "demo.yaml"), "seasons": [2024], "seeds": [1],
            "skills": {"start_sit": {"per_team_season": 2}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    build_suite(tmp_path / "spec.yaml", tmp_path / "suite", prepared_for=lambda league: prepared_2024)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"candidates": [
        {"name": "t", "agent": {"kind": "python", "entry": f"{hostile}:tamper"}},
        {"name": "adp", "agent": {"kind": "bot", "strategy": "adp"}}]}))
    df = run_exam(tmp_path / "suite", tmp_path / "c.yaml", tmp_path / "r")
    mine, adp = (df[df["agent"] == n].reset_index(drop=True) for n in ("t", "adp"))
    assert mine["regret"].equals(adp["regret"]) and adp["regret"].mean() > 1


def test_a_slow_plugin_is_repaired_not_waited_for(hostile, prepared_2024, tmp_path):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "python", "entry": f"{hostile}:slow", "timeout_s": 0.05}
    with pytest.raises(FatalLLMError, match="max_fallback_rate"):
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    first = next(x for x in RunDir(tmp_path / "run").decisions() if x["team"] == d["teams"][0]["name"])
    assert "took longer than timeout_s 0.05" in first["reason"] and first["decided_by"] == "fallback"


def test_the_same_prompt_asked_again_is_another_sample_and_replays_as_it_was(hostile, prepared_2024, tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    def league(api_base, replay_only=False):
        d = demo_league().model_dump(mode="json")
        d["teams"][0]["agent"] = {"kind": "python", "entry": f"{hostile}:voter",
                                  "model": {"model": "openai/fake-0", "api_base": api_base, "timeout_s": 30}}
        d |= {"weeks": 1, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0, "replay_only": replay_only}}
        d["trades"]["weeks"] = []
        return League.model_validate(d)

    with FakeOpenAIServer() as srv:
        run_engine(league(srv.api_base), prepared_2024, tmp_path / "live")
    live = RunDir(tmp_path / "live").llm_calls()
    assert not any(c["cache_hit"] for c in live) and len(live) % 3 == 0 and len(live) >= 39  # 3 samples each
    with FakeOpenAIServer() as srv2:
        run_engine(league(srv2.api_base, replay_only=True), prepared_2024, tmp_path / "replay")
        assert srv2.requests == 0
    again = RunDir(tmp_path / "replay").llm_calls()
    key = lambda c: (c["decision"], c["week"], c["pick"])  # noqa: E731
    assert sorted((key(c), c["response"]) for c in again) == sorted((key(c), c["response"]) for c in live)
    assert (tmp_path / "live" / "decisions.jsonl").read_bytes() == (tmp_path / "replay" / "decisions.jsonl").read_bytes()


def test_plugins_set_up_apart_need_names_apart_and_a_class_or_an_exit_is_refused(hostile, user_module, tmp_path,
                                                                                 capsys):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "python", "entry": f"{user_module}:wrap", "options": {"base": "vorp"}}
    d["teams"][1]["agent"] = {"kind": "python", "entry": f"{user_module}:wrap", "options": {"base": "random"}}
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    assert "teams[1].agent.name: python:user_agents.wrap also names teams[0]'s plug-in" in capsys.readouterr().err
    d["teams"][1]["agent"]["name"] = "wrap-random"
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 0
    for entry, says in ((f"{hostile}:a_class", "returned the class Tamper, not an agent"),
                        ("exits_agents:f", "cannot import 'exits_agents' (SystemExit: 3)")):
        d["teams"][1]["agent"] = {"kind": "python", "entry": entry}
        (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
        capsys.readouterr()
        assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and len(err.splitlines()) == 1, err


def test_a_batch_refuses_a_broken_entry_before_writing_anything(user_module, tmp_path, capsys):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "python", "entry": "no_such_module:f"}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(d))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"name": "b", "base": str(tmp_path / "base.yaml"), "seeds": [0, 1],
                                                     "workers": 1, "out": str(tmp_path / "out"), "analysis": False}))
    capsys.readouterr()
    assert cli(["batch", str(tmp_path / "b.yaml"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot import 'no_such_module'" in err and len(err.splitlines()) == 1 and not (tmp_path / "out").exists()
