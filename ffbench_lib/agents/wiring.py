"""Agents for a league's teams, and their wiring to a run: LLM agents get the run's settings, replay cache,
budget and ledger here, so the engine knows nothing of models, caches or providers (masked mode wraps the
agents that read names: :func:`ffbench_lib.agents.masked.masked`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League, LLMSettings
from ffbench_lib.agents.base import Agent
from ffbench_lib.agents.bots import make_bot


@dataclass
class RunContext:
    """What an LLM agent needs from the run: settings, the replay cache, the budget and the ledger."""

    settings: Any
    cache: Any
    budget: Any
    log: Callable[[dict], None]


def build_agents(league: League, seed: int, llm_factory: Callable[..., Agent] | None = None,
                 seat: Any = None, answers: Any = None) -> dict[str, Agent]:
    """One agent per team. Human teams need a ``seat`` (and an ``answers`` book to resume):
    :func:`ffbench_lib.play.session.start_play` gives both; without a seat a league with a human team is refused."""
    return {team.name: build_agent(team, seed, llm_factory, seat, answers, where=f"teams[{i}].agent")
            for i, team in enumerate(league.teams)}


def build_agent(team: Any, seed: int, llm_factory: Callable[..., Agent] | None = None, seat: Any = None,
                answers: Any = None, where: str = "agent") -> Agent:
    """The agent of one team (a league's ``teams`` entry, or an exam's candidate: a name and an agent spec)."""
    spec = team.agent
    if spec.kind == "bot":
        return make_bot(spec.strategy, team.name, seed)
    if spec.kind == "human":
        if seat is None:
            raise ConfigError([f"{where}: team {team.name} is played by a person; play the league in "
                               "notebooks/10_play.ipynb (or ffbench_lib.play.session.start_play), not with ffbench run "
                               "or a batch"])
        from ffbench_lib.agents.human import HumanAgent
        return HumanAgent(team.name, seed, spec.name, seat, answers)
    if spec.kind == "python":
        from ffbench_lib.agents.plugin import PluginAgent
        return PluginAgent(team.name, seed, spec, where)
    if llm_factory is None:
        from ffbench_lib.agents.llm import LLMAgent  # imported lazily: bots-only leagues never load litellm
        llm_factory = LLMAgent
    return llm_factory(team.name, seed, spec)


def check_cache(league: League) -> None:
    """A league with LLM teams needs a replay cache it can write (else every paid answer would be lost): a
    :class:`ConfigError` naming the setting otherwise."""
    check_cache_for(league.teams, league.llm)


def check_cache_for(teams: Any, settings: LLMSettings) -> None:
    """:func:`check_cache` for any teams (an exam's candidates) and their LLM settings."""
    from ffbench_lib.llm.cache import CacheUnusable, ReplayCache

    if any(t.agent.kind == "llm" or getattr(t.agent, "model", None) is not None and t.agent.kind == "python"
           for t in teams):  # a plug-in's own model calls are cached as an LLM team's
        try:
            ReplayCache.for_config(settings.cache_dir).check(replay_only=settings.replay_only)
        except CacheUnusable as exc:
            raise ConfigError([str(exc)]) from None


def bind_agents(agents: dict[str, Agent], settings: LLMSettings, budget: Any, log: Callable[[dict], None]) -> None:
    """Give every agent that takes one (``bind``) the run's context; bots take none."""
    from ffbench_lib.llm import ReplayCache

    ctx = RunContext(settings, ReplayCache.for_config(settings.cache_dir), budget, log)
    for agent in agents.values():
        if hasattr(agent, "bind"):
            agent.bind(ctx)
