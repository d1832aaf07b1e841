"""The agent interface: one method, ``async decide(kind, view) -> answer``.

``kind`` names a decision type of :mod:`ffbench_lib.game.decisions` (its module documents the answer's shape and
what is legal); ``view`` is the plain dict the season loop built for it (:mod:`ffbench_lib.game.views`); the answer is a
plain dict, with a free-text ``rationale``. An answer is a proposal, not an action: the loop judges it with
the decision type's ``resolve`` and repairs or rejects it. A human seat, a bot and a model are all agents.
"""
from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ffbench_lib.game.decisions import KINDS

DECISIONS = KINDS  # the decision kinds an agent may be asked

Answer = dict[str, Any]


class Agent(ABC):
    """One team's manager. ``agent_id`` names the model or bot in every output (metrics key on it)."""

    agent_id: str = "agent"
    #: Whether masked mode (``information.masking``) shows this agent pseudonyms instead of real players and teams
    #: (the run seats it behind :class:`ffbench_lib.agents.masked.MaskedAgent`): every agent that reads names (a
    #: model, a human) must; bots, which decide by numbers alone, need not.
    masked_views: bool = True

    def __init__(self, team: str, seed: int):
        self.team = team
        self.seed = seed

    def rng(self, key: str) -> np.random.Generator:
        """A generator that depends only on (seed, team, decision key): deterministic and resumable."""
        return np.random.default_rng([self.seed, zlib.crc32(self.team.encode()), zlib.crc32(key.encode())])

    @abstractmethod
    async def decide(self, kind: str, view: dict) -> Answer: ...

    async def aclose(self) -> None:  # pragma: no cover - LLM agents close clients here
        return None
