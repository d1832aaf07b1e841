"""Agents: the small interface every team's manager implements, the baseline bots, and (in ``llm``) LLMs."""
from ffbench_lib.agents.base import Agent, DECISIONS
from ffbench_lib.agents.bots import BOTS, make_bot

__all__ = ["Agent", "DECISIONS", "BOTS", "make_bot"]
