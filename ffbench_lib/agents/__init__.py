"""Agents: the small interface every team's manager implements, the baseline bots, (in ``llm``) LLMs, and the
public API of agents of your own (``{kind: python, entry: "module:factory"}``, :mod:`ffbench_lib.agents.plugin`):
the protocol, each decision kind's view and answer schemas, the bots, and the client for a plug-in's model calls."""
from ffbench_lib.agents.base import Agent, DECISIONS
from ffbench_lib.agents.bots import BOTS, make_bot
from ffbench_lib.agents.plugin import Decider, ModelClient, answer_schema, view_schema

__all__ = ["Agent", "DECISIONS", "BOTS", "make_bot", "Decider", "ModelClient", "answer_schema", "view_schema"]
