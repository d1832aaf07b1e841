"""Prompt strategies as data (``prompt: {reasoning, dir}`` on an LLM agent): the default renders the templates as
they always were; ``reasoning`` changes the answer-format line alone; a folder of one's own templates replaces the
files it holds and no others, and a file naming a placeholder no view fills is refused in one line; a variant is
its own agent id, in every ledger line, and (through the prompt text) its own replay-cache entries."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from engine_helpers import REPO, demo_league, run_engine
from ffbench_lib.agents.prompts import REASONING, messages
from ffbench_lib.cli import main as cli
from ffbench_lib.config.league import League, PromptStrategy
from ffbench_lib.runs.rundir import RunDir


def _lineup_view(prepared_2024, tmp_path):
    """A real set_lineup view: the first one a bots' season logged."""
    run_engine(demo_league(weeks=1, trades=demo_league().trades.model_copy(update={"weeks": []})), prepared_2024,
               tmp_path / "bots")
    return next(r for r in RunDir(tmp_path / "bots").decisions() if r["decision"] == "set_lineup")["view"]


def test_reasoning_changes_the_answer_format_line_alone_and_brief_is_the_default(prepared_2024, tmp_path):
    view = _lineup_view(prepared_2024, tmp_path)
    plain = messages("set_lineup", view)
    assert messages("set_lineup", view, strategy=PromptStrategy()) == plain  # brief: the templates as they are
    for reasoning in ("none", "full"):
        got = messages("set_lineup", view, strategy=PromptStrategy(reasoning=reasoning))
        assert got[1] == plain[1] and got[0]["content"] == plain[0]["content"].replace(REASONING["brief"],
                                                                                     REASONING[reasoning])
        assert REASONING[reasoning] in got[0]["content"] and REASONING["brief"] not in got[0]["content"]


def test_a_folder_of_templates_replaces_its_files_only(prepared_2024, tmp_path):
    view = _lineup_view(prepared_2024, tmp_path)
    own = tmp_path / "mine"
    own.mkdir()
    original = (REPO / "ffbench_lib" / "prompts" / "v2" / "set_lineup.txt").read_text()
    (own / "set_lineup.txt").write_text("Think about byes first.\n" + original)
    strategy = PromptStrategy(dir=own)
    got, plain = messages("set_lineup", view, strategy=strategy), messages("set_lineup", view)
    assert got[0] == plain[0] and got[1]["content"] == "Think about byes first.\n" + plain[1]["content"]
    assert strategy.label == "[prompts=mine]"


@pytest.mark.parametrize("name, text, says", [
    ("set_lineup.txt", "Week $week. $not_a_field", "set_lineup.txt: $not_a_field is filled by no view"),
    ("lineups.txt", "x", "lineups.txt: no template of that name"),
])
def test_a_bad_template_folder_is_refused_in_one_line(tmp_path, capsys, name, text, says):
    own = tmp_path / "mine"
    own.mkdir()
    (own / name).write_text(text)
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/x", "api_base": "http://127.0.0.1:9/v1",
                              "prompt": {"dir": str(own)}}
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert "teams[0].agent.prompt.dir" in err and says in err and "Traceback" not in err, err


def test_a_variant_is_its_own_agent_in_the_ledger_and_the_cache(prepared_2024, tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        d = demo_league().model_dump(mode="json")
        llm = {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base, "timeout_s": 30}
        d["teams"][0]["agent"] = {**llm, "prompt": {"reasoning": "full"}}
        d["teams"][1]["agent"] = dict(llm)
        d |= {"weeks": 2, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0}}
        d["trades"]["weeks"] = []
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    ids = {r["team"]: r["agent"] for r in run.decisions()}
    assert ids[d["teams"][0]["name"]] == "llm:openai/fake-0[reasoning=full]"
    assert ids[d["teams"][1]["name"]] == "llm:openai/fake-0"
    calls = run.llm_calls()
    full = [c for c in calls if c["team"] == d["teams"][0]["name"]]
    plain = [c for c in calls if c["team"] == d["teams"][1]["name"]]
    assert full and all(c["prompt"] == {"reasoning": "full", "dir": None} for c in full)
    assert all("prompt" not in c for c in plain)
    assert all(REASONING["full"] in c["messages"][0]["content"] for c in full)
    standings = run.table("standings")
    assert {"llm:openai/fake-0[reasoning=full]", "llm:openai/fake-0"} <= set(standings["agent"])
    assert "reasoning: full" in (tmp_path / "run" / "config.yaml").read_text()  # recorded with the run
    # the cache keys hold the variant: the same season replayed from the cache with the first team's variant
    # dropped misses on its first call (the other team's answers replay), with the variant kept it all replays
    from ffbench_lib.llm import ReplayMiss

    d["llm"]["replay_only"] = True
    run_engine(League.model_validate(d), prepared_2024, tmp_path / "again")
    assert all(c["cache_hit"] for c in RunDir(tmp_path / "again").llm_calls())
    d["teams"][0]["agent"].pop("prompt")
    with pytest.raises(ReplayMiss):
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "dropped")


def test_reasoning_first_then_the_answer_is_read_from_its_last_json_object():
    from ffbench_lib.llm import parse_json

    text = 'Weighing {"RB": "thin"} against byes, then: {"lineup": {"QB": ["a"]}, "rationale": "r"}'
    assert parse_json(text, last=True) == ({"lineup": {"QB": ["a"]}, "rationale": "r"}, None)
    assert parse_json(text) == ({"RB": "thin"}, None)  # the default reads the first, as it always did
    assert parse_json("reasoning, and no answer", last=True)[0] is None


# ------------------------------------------------------------------------------------------ worked examples
def test_examples_are_legal_made_up_decisions_and_the_file_is_what_the_builder_writes(tmp_path):
    """Every shipped example's answer is legal on its own view by the kind's own rule, its players are the
    synthetic world's (never a real id), and rebuilding the file gives the same bytes."""
    from ffbench_lib.agents import examples
    from ffbench_lib.game.decisions import REGISTRY
    from ffbench_lib.testing.examples import PER_KIND, build

    kinds = examples.load("nfl")
    assert {"set_lineup", "draft_shortlist", "draft_pick", "draft_queue", "waiver_claims", "free_agent_adds",
            "ir_moves", "propose_trade", "respond_to_offer"} <= set(kinds)
    for kind, exs in kinds.items():
        assert 1 <= len(exs) <= PER_KIND
        for ex in exs:
            assert REGISTRY[kind].validate(ex["answer"], ex["view"]) == [], (kind, ex["answer"])
    text = (examples.FOLDER / "nfl.jsonl").read_text()
    ids = set(re.findall(r'"(\d\d-\d{7})"', text))
    assert ids and all(i.startswith("00-9") for i in ids)  # the synthetic world's ids (00-9xxxxxx)
    build(tmp_path / "nfl.jsonl")
    assert (tmp_path / "nfl.jsonl").read_bytes() == (examples.FOLDER / "nfl.jsonl").read_bytes()


def test_examples_go_between_the_rules_and_the_decision_in_both_modes(prepared_2024, tmp_path):
    from ffbench_lib.agents import examples, tools

    view = _lineup_view(prepared_2024, tmp_path)
    plain = messages("set_lineup", view, "v2")
    two = messages("set_lineup", view, "v2", PromptStrategy(examples=2))
    assert [m["role"] for m in two] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert two[0] == plain[0] and two[-1] == plain[-1]
    assert all(m["content"].startswith(examples.HEADER) for m in two[1:5:2])
    assert json.loads(two[2]["content"]) == examples.load("nfl")["set_lineup"][0]["answer"]
    brief = tools.messages("set_lineup", view, "v2", PromptStrategy(examples=1))
    assert len(brief) == 4 and "std_ppg" not in brief[1]["content"]  # examples as brief as the decision
    assert messages("set_lineup", view, "v2", PromptStrategy(examples=0)) == plain
    assert PromptStrategy(examples=2).model_dump(mode="json") == {"reasoning": "brief", "dir": None, "examples": 2}
    assert "examples" not in PromptStrategy().model_dump(mode="json")  # recorded variants read as they did


def test_a_season_with_examples_answers_its_own_decisions(prepared_2024, tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        d = demo_league().model_dump(mode="json")
        d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                  "timeout_s": 30, "prompt": {"examples": 2}}
        d |= {"weeks": 2, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0}}
        d["trades"]["weeks"] = []
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    mine = [r for r in run.decisions() if r["team"] == d["teams"][0]["name"]]
    assert mine and {r["agent"] for r in mine} == {"llm:openai/fake-0[examples=2]"}
    assert all(r["decided_by"] == "agent" for r in mine), [r["problems"] for r in mine if r["decided_by"] != "agent"]
    assert all(len(c["messages"]) == 6 and c["prompt"]["examples"] == 2 for c in run.llm_calls())


@pytest.mark.parametrize("change, says", [({"llm": {"prompt_version": "v1"}}, "prompt_version v2 only")])
def test_examples_without_any_for_the_league_are_refused_in_one_line(tmp_path, capsys, change, says):
    d = demo_league().model_dump(mode="json")
    d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/x", "prompt": {"examples": 1}}
    d |= change
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert "teams[0].agent.prompt.examples" in err and says in err and "Traceback" not in err, err


def test_examples_in_a_sport_without_any_are_refused(tmp_path, capsys):
    d = yaml.safe_load((REPO / "params" / "fpl_llm.yaml").read_text())
    agent = next(t["agent"] for t in d["teams"] if t["agent"]["kind"] == "llm")
    agent["prompt"] = {"examples": 1}
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert "prompt.examples" in err and "exist for nfl" in err and "Traceback" not in err, err


def test_a_team_may_use_its_own_prompt_version(prepared_2024, tmp_path, capsys):
    """``prompt: {version: v1}`` renders that team's prompts with v1 (as the league's prompt_version would) and
    says so in its agent id and every ledger line; the league's v1 rules (no waivers, IR, other sports, tools)
    hold per team."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        d = demo_league().model_dump(mode="json")
        llm = {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base, "timeout_s": 30}
        d["teams"][0]["agent"] = {**llm, "prompt": {"version": "v1"}}
        d["teams"][1]["agent"] = dict(llm)
        d |= {"weeks": 1, "llm": {"cache_dir": str(tmp_path / "cache"), "retries": 0}}
        d["trades"]["weeks"] = []
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    versions = {(c["team"], c["prompt_version"]) for c in run.llm_calls()}
    assert versions == {(d["teams"][0]["name"], "v1"), (d["teams"][1]["name"], "v2")}
    assert {r["agent"] for r in run.decisions() if r["team"] == d["teams"][0]["name"]} == \
        {"llm:openai/fake-0[version=v1]"}
    for team, version in ((d["teams"][0]["name"], "v1"), (d["teams"][1]["name"], "v2")):  # rendered as told
        r = next(r for r in run.decisions() if r["team"] == team and r["decision"] == "set_lineup")
        call = next(c for c in run.llm_calls() if c["team"] == team and c["decision"] == "set_lineup")
        assert call["messages"] == messages("set_lineup", r["view"], version)
    assert messages("set_lineup", r["view"], "v1") != messages("set_lineup", r["view"], "v2")
    d["waivers"]["enabled"] = True
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(d))
    capsys.readouterr()
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    assert "prompt_version v1 has no waiver prompts" in capsys.readouterr().err
