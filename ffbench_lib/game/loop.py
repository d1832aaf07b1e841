"""The season loop: the draft, then per week the phases of :mod:`ffbench_lib.game.phases`, asking the seats it is
given (TextArena style: the loop drives the game and never knows who plays a team; see :mod:`ffbench_lib.game.seat`).

Every answer is judged by its decision type and recorded by a :class:`~ffbench_lib.game.recorder.RunRecorder`.
What a run adds around the game (a run directory, checkpoints, a budget, live weeks, progress) comes in through
hooks a subclass overrides (:class:`ffbench_lib.runs.runner.Engine`); by default the season plays in memory, so
``await SeasonLoop(league, prepared, seats).play()`` is a whole season (tables in ``state.tables``, the decision
log in ``loop.decisions``).

Which errors stop the run rather than count as a bad answer: a :class:`~ffbench_lib.game.seat.StopRun`, and the
exception types the owner passes as ``reraise``. A tuple from the owner, not a shared base class, because the
layers forbid it: ``llm`` imports only ``core``, so its stop errors (a fatal provider error, a replay miss) cannot
subclass a ``game`` exception, and ``game`` may not import ``llm``; the run, which may import both, names them.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable, Mapping

from ffbench_lib.config.league import League
from ffbench_lib.core.secrets import scrub
from ffbench_lib.data.prepared import PreparedSeason
from ffbench_lib.game.knowledge import by_week
from ffbench_lib.game.phases import weekly_phases
from ffbench_lib.game.phases.draft import run_draft
from ffbench_lib.game.recorder import RunRecorder
from ffbench_lib.game.rules import draft as draft_rules
from ffbench_lib.game.rules.schedule import make_schedule
from ffbench_lib.game.seat import Answered, Seat, StopRun
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall

#: How a season stopped: (status, reason); ``("complete", None)`` when it ended.
Stop = tuple[str, str | None]


class SeasonLoop:
    """One season of ``league`` on ``prepared`` data, asking ``seats`` (team -> :class:`Seat`)."""

    #: Decide each week and checkpoint it (phase ``decided:<w>``) before scoring it: a live run commits to a
    #: week's decisions before its games are played.
    decide_before_games: bool = False

    def __init__(self, league: League, prepared: PreparedSeason, seats: Mapping[str, Seat],
                 reraise: tuple[type[BaseException], ...] = ()):
        self.league = league
        self.prepared = prepared
        self.fw = Firewall(prepared, league)
        self.catalog = self.fw.catalog  # static player facts: positions, names, projections
        self.seats = seats
        self.reraise = (StopRun, *reraise)
        self.run_id = f"{league.name}-s{league.seed}"
        self.rec: RunRecorder | None = None
        self.decisions: list[dict] = []  # the decision log, when no owner takes it (decision_sink)
        weekly = prepared.weekly  # actual points score the weeks; agents never see them (views use knowledge)
        #: week (in order) -> player -> actual points (his last row of the week), grouped by numpy, not pandas
        self.actual = {w: dict(zip(pids, pts)) for w, pids, pts in sorted(
            by_week(weekly["week"], weekly["player_id"].to_numpy(dtype=object),
                    weekly["fantasy_points"].to_numpy(dtype=float)), key=lambda group: group[0])}
        #: week -> the players who played in it (minutes > 0), where the data gives minutes (automatic subs)
        self.appeared: dict[int, frozenset[str]] = {}
        if "minutes" in weekly.columns:
            on = weekly[weekly["minutes"].fillna(0).to_numpy() > 0]
            self.appeared = {w: frozenset(pids) for w, pids in by_week(on["week"], on["player_id"].to_numpy(dtype=object))}

    # ------------------------------------------------------------------------------------- hooks
    @property
    def over_budget(self) -> bool:
        """Stop before the next draft round or week (a run's LLM budget is spent)."""
        return False

    def checkpoint(self, state: LeagueState, crash_after: str | None) -> None:
        """After every draft round and every week (``crash_after``: the owner's own token, passed through)."""

    def save_tables(self, state: LeagueState) -> None:
        """The tables as they stand (after the draft); in memory they are ``state.tables`` already."""

    def decision_sink(self, state: LeagueState) -> Callable[[dict, tuple[str, str] | None], None]:
        """Where the recorder writes each decision record (with its view's JSON texts: see RunRecorder)."""
        return lambda record, view_json: self.decisions.append(record)

    def before_deciding(self, state: LeagueState, w: int) -> Stop | None:
        """A stop before week ``w``'s decisions (a live run waits for the week's injury report), or None."""
        return None

    def before_scoring(self, state: LeagueState, w: int) -> Stop | None:
        """A stop before week ``w`` is scored (a live run waits for its results), or None."""
        return None

    def phase_done(self, state: LeagueState) -> None:
        """The draft or a week is complete (progress)."""

    # --------------------------------------------------------------------------------------- asking
    async def ask(self, team: str, kind: str, view: dict) -> tuple[Any, list[str]]:
        """Ask a team's seat for a ``kind`` decision: the answer and its problems. A seat's exception is an invalid
        answer (the decision type then repairs), never a crashed run, unless it is one of :attr:`reraise`."""
        seat = self.seats[team]
        try:
            answer = await seat.decide(kind, view)
        except self.reraise:
            raise
        except Exception as exc:  # noqa: BLE001 - any other seat failure is recorded and repaired
            return None, [scrub(f"agent error: {type(exc).__name__}: {exc}")]
        return (answer.answer, list(answer.problems)) if isinstance(answer, Answered) else (answer, [])

    async def ask_all(self, asks: list[tuple[str, str, dict]]) -> list[tuple[Any, list[str]]]:
        """Several independent decisions: all at once, or one by one with ``llm.sequential``."""
        if self.league.llm.sequential:
            return [await self.ask(*a) for a in asks]
        return list(await asyncio.gather(*(self.ask(*a) for a in asks)))

    # ---------------------------------------------------------------------------------------- state
    def _new_state(self) -> LeagueState:
        lg = self.league
        teams = [t.name for t in lg.teams]
        state = LeagueState(teams=teams, agent_ids={t: self.seats[t].agent_id for t in teams},
                            draft_order=draft_rules.draft_order(teams, lg.draft.order, lg.seed),
                            schedule=make_schedule(teams, lg.regular_weeks, lg.schedule, lg.seed))
        for phase in self._stateful_phases():
            state.extras[phase.name] = phase.init_state(lg, state)
        return state

    def _stateful_phases(self):
        """The weekly phases this league plays that keep state of their own."""
        lg = self.league
        return [p for p in weekly_phases() if p.init_state and any(p.applies(lg, w) for w in range(1, lg.weeks + 1))]

    # ----------------------------------------------------------------------------------------- play
    async def play(self) -> LeagueState:
        """A new season, played to its end or its first stop; the final state."""
        state = self._new_state()
        await self.play_season(state)
        return state

    async def play_season(self, state: LeagueState, crash_after: str | None = None) -> Stop:
        """Play from ``state`` (a new one or a checkpoint's) to the season's end, or until the budget or a hook
        stops it (``("stopped_budget", None)``: the owner says why)."""
        lg, rounds = self.league, self.league.roster.size
        self.rec = RunRecorder(state, self.run_id, lg.season, self.decision_sink(state))
        if state.rounds_done(rounds) < rounds:
            if not await run_draft(self, state, crash_after):
                return "stopped_budget", None
            self.phase_done(state)
        for w in range(state.last_completed_week() + 1, lg.weeks + 1):
            # a week decided earlier (live) only needs scoring, which asks nobody: a budget stop comes after it
            if state.decided_week() != w:
                if self.over_budget:
                    return "stopped_budget", None
                stop = self.before_deciding(state, w)
                if stop is not None:
                    return stop
                if self.decide_before_games:  # decide the week and checkpoint it before its games are scored
                    await self._week(state, w, after_games=False)
                    state.phase = f"decided:{w}"
                    self.checkpoint(state, crash_after)
            stop = self.before_scoring(state, w)
            if stop is not None:
                return stop
            await self._week(state, w, after_games=True if state.decided_week() == w else None)
            state.phase = f"week:{w}"
            self.checkpoint(state, crash_after)
            self.phase_done(state)
        return "complete", None

    async def _week(self, state: LeagueState, w: int, after_games: bool | None) -> None:
        """Week ``w``'s phases in order: all of them (None), or only those before (False) or after (True) its
        games, so a live run can decide a week and score it once its results are in."""
        for phase in weekly_phases():
            if phase.applies(self.league, w) and after_games in (None, phase.after_games):
                await phase.run(self, state, w)
