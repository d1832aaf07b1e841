"""What the season loop asks: a seat per team, anything with an ``agent_id`` and ``async decide(kind, view)``.

The loop never knows who sits there (a bot, a model, a person, a wrapper that masks names): it only turns a
seat's failure into an invalid answer the decision type repairs, except a :class:`StopRun`, which no repair may
hide (a view that would leak a real player under masking stops the run instead of counting as a bad answer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class Seat(Protocol):
    """One team's decision maker as the loop sees it (:class:`ffbench_lib.agents.base.Agent` is one)."""

    agent_id: str

    async def decide(self, kind: str, view: dict) -> Any: ...


class StopRun(Exception):
    """Raised by a seat (or what wraps it): the run must stop, never repair this answer."""


@dataclass(frozen=True)
class Answered:
    """An answer with problems its seat found in it itself (a masked seat's answer naming a real player): the
    loop logs them with the decision's own problems, as an action wrapper's notes."""

    answer: Any
    problems: list[str] = field(default_factory=list)
