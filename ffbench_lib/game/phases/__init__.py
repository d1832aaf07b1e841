"""The season's phases, each a small module the season loop (:mod:`ffbench_lib.game.loop`) calls in turn: the
draft, then every week the weekly phases registered here in their order (injured reserve, waivers, the trade
window, the playoff bracket, lineups, then scoring: the one phase that needs the week's games, ``after_games``).

A phase asks the teams' seats through the loop (``eng.ask``), judges every answer with its decision type
(:mod:`ffbench_lib.game.decisions`) and records rows through the run's :class:`~ffbench_lib.game.recorder.RunRecorder`
(``eng.rec``). A weekly phase registers with :func:`weekly`: when it applies, and, if it keeps state of its
own across weeks (FAAB budgets, IR lists, the bracket), how a new league's state starts and how a checkpoint's is checked (kept in
``LeagueState.extras[name]``). Adding a phase = one module here; the season loop does not change."""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

if TYPE_CHECKING:
    from ffbench_lib.config.league import League
    from ffbench_lib.game.knowledge import PlayerCatalog
    from ffbench_lib.game.recorder import RunRecorder
    from ffbench_lib.game.state import LeagueState
    from ffbench_lib.game.views import Firewall


class Season(Protocol):
    """What a phase uses of the season loop playing it (:class:`ffbench_lib.game.loop.SeasonLoop`): the league,
    the views, the recorder, asking, and the run's hooks (checkpoint, tables, budget) it may not import."""

    league: "League"
    fw: "Firewall"
    catalog: "PlayerCatalog"
    rec: "RunRecorder"
    actual: dict[int, dict[str, float]]  # week -> player -> actual points (scoring only; never in a view)
    appeared: dict[int, frozenset[str]]  # week -> who played (minutes > 0) where the data says: automatic subs

    @property
    def over_budget(self) -> bool: ...

    def save_tables(self, state: "LeagueState") -> None: ...

    async def ask(self, team: str, kind: str, view: dict) -> tuple[Any, list[str]]: ...

    async def ask_all(self, asks: list[tuple[str, str, dict]]) -> list[tuple[Any, list[str]]]: ...

    def checkpoint(self, state: "LeagueState", crash_after: str | None) -> None: ...


@dataclass(frozen=True)
class WeeklyPhase:
    name: str
    order: int  # phases of a week run in ascending order
    applies: Callable[["League", int], bool]
    run: Callable[[Season, "LeagueState", int], Awaitable[None]]
    init_state: Callable[["League", "LeagueState"], Any] | None = None  # the phase's starting state (extras)
    check_state: Callable[["League", "LeagueState", Any], list[str]] | None = None  # why a saved one is not valid
    after_games: bool = False  # needs the week's results (scoring): a live run decides a week before they exist


WEEKLY: dict[str, WeeklyPhase] = {}


def weekly(name: str, order: int, applies: Callable[["League", int], bool], init_state=None, check_state=None,
           after_games: bool = False):
    def register(run):
        if name in WEEKLY:
            raise ValueError(f"weekly phase {name!r} registered twice")
        WEEKLY[name] = WeeklyPhase(name, order, applies, run, init_state, check_state, after_games)
        return run
    return register


def weekly_phases() -> list[WeeklyPhase]:
    return sorted(WEEKLY.values(), key=lambda p: p.order)


for _m in pkgutil.iter_modules(__path__):  # every module of this package registers its phases on import
    importlib.import_module(f"{__name__}.{_m.name}")
