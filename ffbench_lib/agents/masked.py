"""Masked mode as a wrapper around an agent (like TextArena's observation and action wrappers): the agent sees
pseudonyms (:meth:`Masker.view <ffbench_lib.game.masking.Masker.view>`) and its answer is mapped back to real
ids (:meth:`Masker.answer <ffbench_lib.game.masking.Masker.answer>`), so the season loop has no masking branch.

Only agents that read names are wrapped (``Agent.masked_views``: models and people, not bots). A view that
cannot be masked stops the run (:class:`~ffbench_lib.game.masking.MaskingError` is a
:class:`~ffbench_lib.game.seat.StopRun`), never counts as a bad answer: it would have leaked a real player.
A real name in the answer is a problem logged with the decision (:class:`~ffbench_lib.game.seat.Answered`).
"""
from __future__ import annotations

from typing import Mapping

from ffbench_lib.agents.base import Agent
from ffbench_lib.game.masking import Masker, MaskingError
from ffbench_lib.game.seat import Answered, StopRun


class MaskedAgent(Agent):
    """``agent`` behind ``masker``: pseudonyms in, real ids out; its ``agent_id`` is the agent's."""

    masked_views = False  # its views are masked already: never wrapped twice

    def __init__(self, agent: Agent, masker: Masker):
        super().__init__(agent.team, agent.seed)
        self.agent, self.masker = agent, masker

    @property
    def agent_id(self) -> str:  # type: ignore[override]
        return self.agent.agent_id

    async def decide(self, kind: str, view: dict) -> Answered:
        try:
            shown = self.masker.view(view)
        except StopRun:
            raise
        except Exception as exc:  # a masker bug: stop rather than ask with a view that may not be masked
            raise MaskingError(f"the {kind} view could not be masked ({type(exc).__name__}: {exc})") from exc
        return Answered(*self.masker.answer(await self.agent.decide(kind, shown)))

    async def aclose(self) -> None:
        await self.agent.aclose()


def masked(agents: Mapping[str, Agent], masker: Masker | None) -> dict[str, Agent]:
    """The seats of a run: ``agents`` with each that reads names behind a :class:`MaskedAgent` (all as they
    are when ``masker`` is None: masking off)."""
    return {team: MaskedAgent(a, masker) if masker is not None and a.masked_views else a
            for team, a in agents.items()}
