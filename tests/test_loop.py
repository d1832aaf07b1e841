"""The season loop (game.loop) on its own: seats are plain objects (no agents package, no run directory); its
hooks are where a run comes in; a seat's failure is a repaired answer unless it must stop the run."""
from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from ffbench_lib.config.league import League
from ffbench_lib.game.loop import SeasonLoop
from ffbench_lib.game.seat import Answered, StopRun

from engine_helpers import REPO, demo_league


class Plain:
    """A seat that answers nothing usable: every decision is the decision type's fallback."""

    agent_id = "plain"

    def __init__(self):
        self.kinds: list[str] = []

    async def decide(self, kind, view):
        self.kinds.append(kind)
        return {"rationale": "no idea"}


def short_league():
    """The demo league cut to 4 teams, 2 weeks and no trade window."""
    d = demo_league().model_dump(mode="json")
    d.update(weeks=2, trades={"weeks": []}, teams=d["teams"][:4])
    return League.model_validate(d)


def test_the_loop_plays_a_short_season_in_memory_with_plain_seats(prepared_2024):
    league = short_league()
    seats = {t.name: Plain() for t in league.teams}
    loop = SeasonLoop(league, prepared_2024, seats)
    state = asyncio.run(loop.play())
    assert state.phase == "week:2" and state.agent_ids == {t: "plain" for t in seats}
    picks = state.tables["draft_picks"]
    assert len(picks) == 4 * league.roster.size and {r["decided_by"] for r in picks} == {"fallback"}
    assert sorted({r["week"] for r in state.tables["matchups"]}) == [1, 2]
    assert all(s.kinds.count("set_lineup") == 2 for s in seats.values())
    assert len(loop.decisions) == sum(len(s.kinds) for s in seats.values())  # one record per question
    assert {d["decided_by"] for d in loop.decisions} == {"fallback"}
    again = asyncio.run(SeasonLoop(league, prepared_2024, {t: Plain() for t in seats}).play())
    assert again.tables == state.tables  # nothing but the seats and the seed decides


class Stopping(SeasonLoop):
    """A loop whose hooks record every checkpoint and stop for a budget once the draft is done."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.phases: list[str] = []
        self.tables_saved: list[str] = []

    @property
    def over_budget(self):
        return "drafted" in self.phases

    def checkpoint(self, state, crash_after):
        self.phases.append(state.phase)

    def save_tables(self, state):
        self.tables_saved.append(state.phase)


def test_the_loops_hooks_checkpoint_every_round_and_stop_for_the_budget(prepared_2024):
    league = short_league()
    loop = Stopping(league, prepared_2024, {t.name: Plain() for t in league.teams})
    state = loop._new_state()
    assert asyncio.run(loop.play_season(state)) == ("stopped_budget", None)
    rounds = league.roster.size
    assert loop.phases == [f"draft:{r}" for r in range(1, rounds)] + ["drafted"] and loop.tables_saved == ["drafted"]
    assert state.last_completed_week() == 0


class Raising:
    agent_id = "raising"

    def __init__(self, exc):
        self.exc = exc

    async def decide(self, kind, view):
        if self.exc is None:
            return Answered({"x": 1}, ["noted by the seat"])
        raise self.exc


class OwnStop(RuntimeError):
    """Stands for an error of a layer game may not import (llm's): the owner names it in ``reraise``."""


@pytest.mark.parametrize("exc, stops", [(ValueError("bad"), False), (StopRun("leak"), True), (OwnStop("x"), True),
                                        (None, False)])
def test_a_seat_failure_is_a_repaired_answer_unless_it_stops_the_run(prepared_2024, exc, stops):
    league = short_league()
    loop = SeasonLoop(league, prepared_2024, {t.name: Raising(exc) for t in league.teams}, reraise=(OwnStop,))
    team = league.teams[0].name
    if stops:
        with pytest.raises(type(exc)):
            asyncio.run(loop.ask(team, "set_lineup", {}))
    elif exc is None:
        assert asyncio.run(loop.ask(team, "set_lineup", {})) == ({"x": 1}, ["noted by the seat"])
    else:
        assert asyncio.run(loop.ask(team, "set_lineup", {})) == (None, ["agent error: ValueError: bad"])


def test_the_loop_loads_no_agents_llm_or_runs_module():
    code = ("import sys, ffbench_lib.game.loop; "
            "print(sorted(m for m in sys.modules if m.startswith(('ffbench_lib.agents', 'ffbench_lib.llm', "
            "'ffbench_lib.runs', 'litellm'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
