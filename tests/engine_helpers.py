"""Small helpers for engine tests: scripted agents (real Agent subclasses, not mocks) and file comparison."""
from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.config import load_config
from ffbench_lib.engine import Engine, build_agents

REPO = Path(__file__).resolve().parents[1]


def demo_league(**updates):
    league = load_config(REPO / "params" / "demo.yaml")
    return league.model_copy(update=updates) if updates else league


def run_engine(league, prepared, out, agents=None, **kw):
    engine = Engine(league, prepared, out, agents=agents, progress=False)
    return asyncio.run(engine.run(**kw)), engine


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(folder).iterdir()) if p.is_file()}


class ScriptedAgent(ADPBot):
    """An ADP bot whose answers for chosen decisions come from a script (callables of the view)."""

    def __init__(self, team, seed, script=None):
        super().__init__(team, seed)
        self.agent_id = "scripted"
        self.script = script or {}
        self.seen: list[tuple[str, dict]] = []

    async def _maybe(self, name, view, default):
        self.seen.append((name, view))
        if name in self.script:
            return self.script[name](view)
        return await default(view)

    async def draft_shortlist(self, view):
        return await self._maybe("draft_shortlist", view, super().draft_shortlist)

    async def draft_pick(self, view):
        return await self._maybe("draft_pick", view, super().draft_pick)

    async def set_lineup(self, view):
        return await self._maybe("set_lineup", view, super().set_lineup)

    async def propose_trade(self, view):
        return await self._maybe("propose_trade", view, super().propose_trade)

    async def respond_to_offer(self, view):
        return await self._maybe("respond_to_offer", view, super().respond_to_offer)

    async def reply_to_counter(self, view):
        return await self._maybe("reply_to_counter", view, super().reply_to_counter)

    async def final_decision(self, view):
        return await self._maybe("final_decision", view, super().final_decision)


def agents_with(league, replacements: dict):
    agents = build_agents(league, league.seed)
    agents.update(replacements)
    return agents
