"""The agent interface: seven decision points, each an ``async`` method taking a view (plain dict from
:mod:`ffbench_lib.views`) and returning an answer (plain dict, always with a free-text ``rationale``).

An answer is a proposal, not an action: the engine validates it against the rules and repairs or rejects it.
Answer shapes (what the rules accept):

=====================  ===================================================================================
draft_shortlist        ``{"shortlist": [player_id, ...], "rationale": str}``
draft_pick             ``{"player_id": str, "rationale": str}``
set_lineup             ``{"lineup": {"QB": [id], "RB": [id, id], ..., "FLEX": [id]}, "rationale": str}``
propose_trade          ``{"action": "propose", "to_team": str, "give": [ids], "get": [ids], "rationale": str}``
                       or ``{"action": "pass", "rationale": str}``
respond_to_offer       ``{"action": "accept" | "reject", ...}`` or ``{"action": "counter", "give": [ids],
                       "get": [ids], "rationale": str}`` (give/get from the responder's side)
reply_to_counter       ``{"action": "accept" | "withdraw"}`` or ``{"action": "final_counter", "give", "get"}``
final_decision         ``{"action": "accept" | "reject", "rationale": str}``
=====================  ===================================================================================
"""
from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

DECISIONS = ("draft_shortlist", "draft_pick", "set_lineup", "propose_trade", "respond_to_offer",
             "reply_to_counter", "final_decision")

Answer = dict[str, Any]


class Agent(ABC):
    """One team's manager. ``agent_id`` names the model or bot in every output (metrics key on it)."""

    agent_id: str = "agent"

    def __init__(self, team: str, seed: int):
        self.team = team
        self.seed = seed

    def rng(self, key: str) -> np.random.Generator:
        """A generator that depends only on (seed, team, decision key): deterministic and resumable."""
        return np.random.default_rng([self.seed, zlib.crc32(self.team.encode()), zlib.crc32(key.encode())])

    @abstractmethod
    async def draft_shortlist(self, view: dict) -> Answer: ...

    @abstractmethod
    async def draft_pick(self, view: dict) -> Answer: ...

    @abstractmethod
    async def set_lineup(self, view: dict) -> Answer: ...

    @abstractmethod
    async def propose_trade(self, view: dict) -> Answer: ...

    @abstractmethod
    async def respond_to_offer(self, view: dict) -> Answer: ...

    @abstractmethod
    async def reply_to_counter(self, view: dict) -> Answer: ...

    @abstractmethod
    async def final_decision(self, view: dict) -> Answer: ...

    async def aclose(self) -> None:  # pragma: no cover - LLM agents close clients here
        return None
