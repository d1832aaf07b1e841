"""Play a league with human teams: the engine runs as a task on the running event loop (a Jupyter kernel's), so
widget callbacks keep arriving while it waits for a person; no thread blocks the kernel.

In a notebook cell: ``game = start_play(league, run_dir)``; the cell returns at once, the widgets answer
``game.seat``'s questions, ``await game.task`` gives the final state. Re-running the cell after a kernel restart
resumes the run from its last checkpoint and replays the recorded answers (run_dir/human_answers.jsonl).

``autopilot="adp"`` (papermill, scripts) has that bot answer the human seats; the seats are then named
``human:<name>-autopilot-<bot>`` everywhere (decisions, tables, the report), so a bot's answers are never taken for
a person's, and a run started on autopilot cannot be resumed by hand (its league differs) or the other way round.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ffbench_lib.agents.human import AnswerBook, HumanSeat, league_digest
from ffbench_lib.agents.wiring import build_agents
from ffbench_lib.config.league import AUTOPILOT, League
from ffbench_lib.config.load import dump_config
from ffbench_lib.runs.runner import Engine
from ffbench_lib.runs.rundir import HUMAN_ANSWERS


@dataclass
class Game:
    """A season being played: the seat the person answers through, the engine's task, and its run folder."""

    seat: HumanSeat
    task: asyncio.Task
    engine: Engine
    run_dir: Path
    autopilot: str | None = None


def on_autopilot(league: League, autopilot: str) -> League:
    """``league`` with each human seat renamed ``<name>-autopilot-<bot>`` (its agent id says who answered)."""
    from ffbench_lib.agents.bots import BOTS

    if autopilot not in BOTS:
        raise ValueError(f"autopilot: unknown bot strategy {autopilot!r}; allowed: {', '.join(BOTS)} or None")
    def renamed(agent):
        return agent.model_copy(update={"name": f"{agent.name}{AUTOPILOT}{autopilot}"})

    teams = [t.model_copy(update={"agent": renamed(t.agent)}) if t.agent.kind == "human" else t for t in league.teams]
    return league.model_copy(update={"teams": teams})


def start_play(league: League, run_dir: str | Path, prepared: Any = None, crash_after: str | None = None,
               autopilot: str | None = None) -> Game:
    """Start (or resume) ``league`` in ``run_dir`` as a task on the running loop and return at once.
    Must be called with a loop running (a notebook cell, or inside ``asyncio.run``). ``autopilot``: a bot
    strategy that answers the human seats (see the module's docstring)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError("start_play needs a running event loop: call it from a notebook cell or inside "
                           "an async function (asyncio.run)") from None
    if autopilot is not None:
        league = on_autopilot(league, autopilot)
    if prepared is None:
        from ffbench_lib.data.prepare import prepared_for
        prepared = prepared_for(league)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    seat = HumanSeat()
    book = AnswerBook(run_dir / HUMAN_ANSWERS, league_digest(dump_config(league)))
    agents = build_agents(league, league.seed, seat=seat, answers=book)
    engine = Engine(league, prepared, run_dir, agents=agents, progress=False)
    task = asyncio.get_running_loop().create_task(engine.run(resume=True, crash_after=crash_after),
                                                  name=f"ffbench play {league.name}")
    return Game(seat, task, engine, run_dir, autopilot)
