"""A human seat: the engine runs as a task on the running loop and waits for answers given through the seat; a
killed run resumes and replays the recorded answers without asking again."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
import yaml

from engine_helpers import REPO, digests
from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.agents.human import AnswerBook, league_digest, view_key
from ffbench_lib.runs.batch import load_batch
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.load import dump_config, parse_config
from ffbench_lib.runs.runner import Engine
from ffbench_lib.play.session import start_play

HUMAN = "Human-1"


def human_league(name: str = "tester"):
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d.update(weeks=3, seed=3, trades={"weeks": [2]})
    d["teams"][0] = {"name": HUMAN, "agent": {"kind": "human", "name": name}}
    return parse_config(d)


async def play(league, prepared, run_dir, asked: list, forbid: frozenset = frozenset(), stop_after: int | None = None):
    """Play the season, answering the seat like an ADP bot would (a legal answer); with ``stop_after``, cancel the
    run after that many answers (a kernel killed mid-season). ``forbid``: questions that must not be asked."""
    game = start_play(league, run_dir, prepared)
    bot = ADPBot(HUMAN, league.seed)

    async def answer() -> None:
        while True:
            p = await game.seat.next()
            key = view_key(p.kind, p.view)
            assert key not in forbid, f"asked again: {p.kind}"
            ans = await bot.decide(p.kind, p.view)
            ans["rationale"] = f"my {p.kind}"
            asked.append(key)
            game.seat.answer(p, ans)
            if stop_after is not None and len(asked) == stop_after:
                game.task.cancel()
                return

    answerer = asyncio.get_running_loop().create_task(answer())
    try:
        await asyncio.wait({game.task, answerer}, timeout=300, return_when=asyncio.FIRST_COMPLETED)
        if answerer.done() and not answerer.cancelled() and answerer.exception() is not None:
            raise answerer.exception()
        return game.task.result()
    finally:
        answerer.cancel()
        game.task.cancel()


def test_human_seat_plays_and_resumes(prepared_2024, tmp_path):
    league = human_league()
    asked: list[str] = []
    asyncio.run(play(league, prepared_2024, tmp_path / "whole", asked))
    whole = tmp_path / "whole"
    assert json.loads((whole / "run.json").read_text())["status"] == "complete"
    mine = [json.loads(x) for x in (whole / "decisions.jsonl").read_text().splitlines()]
    mine = [r for r in mine if r.get("team") == HUMAN]
    assert len(mine) == len(asked) > 10  # draft picks, lineups, ...
    assert {r["agent"] for r in mine} == {"human:tester"}
    assert {r["decided_by"] for r in mine} == {"agent"}
    assert {r["decision"] for r in mine} >= {"draft_pick", "set_lineup", "propose_trade"}
    book = (whole / "human_answers.jsonl").read_text().splitlines()
    assert len(book) == len(asked)

    # killed after half the answers (mid-season), resumed with an answerer that fails on any repeated question
    first: list[str] = []
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(play(league, prepared_2024, tmp_path / "resumed", first, stop_after=len(asked) // 2))
    again: list[str] = []
    asyncio.run(play(league, prepared_2024, tmp_path / "resumed", again, forbid=frozenset(first)))
    assert first and again and len(first) + len(again) == len(asked)
    a, b = digests(whole), digests(tmp_path / "resumed")
    assert {k: v for k, v in a.items() if k != "run.json"} == {k: v for k, v in b.items() if k != "run.json"}


def test_human_seat_outside_play_is_refused(prepared_2024, tmp_path):
    with pytest.raises(ConfigError,
                       match=r"teams\[0\].agent: team Human-1 is played by a person; play the league in notebooks/10_"):
        Engine(human_league(), prepared_2024, tmp_path / "run", progress=False)


def test_human_in_batch_is_refused(tmp_path):
    league = tmp_path / "league.yaml"
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d["teams"][2] = {"name": "Me", "agent": {"kind": "human"}}
    league.write_text(yaml.safe_dump(d))
    batch = tmp_path / "batch.yaml"
    batch.write_text(yaml.safe_dump({"name": "b", "base": str(league), "seeds": [1], "out": str(tmp_path / "out")}))
    with pytest.raises(ConfigError, match="team Me is played by a human: a batch cannot ask a person"):
        load_batch(batch)


def test_human_agent_id_and_bad_name():
    assert human_league("Ann").teams[0].agent.agent_id == "human:Ann"
    with pytest.raises(ConfigError, match=r"teams\[0\]\.agent\.name"):
        human_league("a/b")
    with pytest.raises(ConfigError, match=r"teams\[0\]\.agent\.name: .*'-autopilot-' marks seats a bot played"):
        human_league("me-autopilot-adp")


def test_answers_of_another_league_are_refused_not_replayed(prepared_2024, tmp_path):
    """An answers file left from another league (here: another seed) in the run folder is refused by name; the same
    league's file is replayed; a whole last record without its newline is kept and the next answer starts a line."""
    league = human_league()
    asked: list[str] = []
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(play(league, prepared_2024, tmp_path / "a", asked, stop_after=3))
    book = tmp_path / "a" / "human_answers.jsonl"
    stale = tmp_path / "b" / "human_answers.jsonl"
    stale.parent.mkdir()
    stale.write_text(book.read_text())
    other = league.model_copy(update={"seed": 4})
    with pytest.raises(ValueError, match="human_answers.jsonl holds answers given in another league"):
        AnswerBook(stale, league_digest(dump_config(other)))
    text = book.read_text()
    book.write_text(text[:-1])  # the last record whole, its newline lost
    again = AnswerBook(book, league_digest(dump_config(league)))
    assert len(again.answers) == 3
    again.add("k", HUMAN, {"rationale": "x"})
    assert book.read_text() == text + json.dumps({"answer": {"rationale": "x"}, "key": "k", "league": again.league,
                                                  "team": HUMAN}, sort_keys=True) + "\n"


def test_a_stopped_question_is_refused_and_keys_never_reach_disk(prepared_2024, tmp_path):
    """An answer to a question whose run stopped is refused and not recorded; a key pasted into the "why" (known to
    the process, or only shaped like one) is masked in the answers file and the decisions log."""
    league = human_league()
    shaped = "sk-ant-api03-" + "Zx9" * 10

    async def main():
        game = start_play(league, tmp_path / "run", prepared_2024)
        p = await asyncio.wait_for(game.seat.next(), 120)
        bot = ADPBot(HUMAN, league.seed)
        ans = await bot.decide(p.kind, p.view)
        game.seat.answer(p, {**ans, "rationale": f"because {shaped} and " + "y" * 5000})
        p2 = await asyncio.wait_for(game.seat.next(), 120)
        game.task.cancel()
        await asyncio.wait({game.task})
        with pytest.raises(ValueError, match=f"the {p2.kind} question is no longer open"):
            game.seat.answer(p2, await bot.decide(p2.kind, p2.view))

    asyncio.run(main())
    book = (tmp_path / "run" / "human_answers.jsonl").read_text().splitlines()
    assert len(book) == 1
    why = json.loads(book[0])["answer"]["rationale"]
    assert why.startswith("because *** and yyy") and len(why) < 2100 and shaped not in why
    assert shaped not in (tmp_path / "run" / "decisions.jsonl").read_text()


def test_a_person_is_not_shown_pseudonyms():
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d["teams"][0] = {"name": HUMAN, "agent": {"kind": "human"}}
    d["information"] = {"masking": "players"}
    with pytest.raises(ConfigError, match=r"information\.masking: team Human-1 is played by a person"):
        parse_config(d)


def test_validate_says_who_is_played_by_a_person():
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(REPO / "params" / "play.yaml")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "played by a person: You: play this league in notebooks/10_play.ipynb" in r.stdout
