"""Agents of your own: a league's team (or an exam's candidate) ``{kind: python, entry: "package.module:factory",
options: {...}}`` is played by whatever ``factory(team, seed, **options)`` returns, any object with
``async decide(kind, view) -> answer`` (:class:`Decider`). The season treats it as every agent: it judges each
answer with the decision kind's rules (repairing a bad one, and stopping a run mostly repaired), masks its views
when the league masks, and names it ``python:<name>`` in every table.

What a plug-in may use (``ffbench_lib.agents`` exports it): :func:`view_schema` and :func:`answer_schema` of
each decision kind (:data:`~ffbench_lib.agents.DECISIONS`), :func:`~ffbench_lib.agents.bots.make_bot` to wrap or
consult a baseline, and, with ``model`` in its config, a :class:`ModelClient` handed to its ``use_model(client)``
before the first decision: its model calls then go through ffbench's client (replay cache, budget, provider
limits and retries) and each is a line of the run's ledger.
"""
from __future__ import annotations

import asyncio
import contextvars
import copy
import importlib
import inspect
import json
from typing import Any, Protocol, runtime_checkable

from ffbench_lib.agents.base import Agent, Answer
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.llm.client import FatalLLMError


class PluginError(ConfigError):
    """A plug-in that cannot play: its entry does not import, is no factory, or returns no agent (one line,
    naming the config field; ``ffbench`` exits 2)."""

    def __init__(self, problem: str):
        super().__init__([problem], what="agent")
        self.args = (problem,)

    def __str__(self) -> str:
        return self.problems[0]

#: the decision a plug-in is answering (its model calls' ledger lines name it)
_ASKED: contextvars.ContextVar[tuple[str, Any, Any] | None] = contextvars.ContextVar("plugin_asked", default=None)
#: the decision's model calls so far, per prompt: the n-th call of one prompt is its own sample (cached apart)
_CALLS: contextvars.ContextVar[dict[str, int] | None] = contextvars.ContextVar("plugin_calls", default=None)


@runtime_checkable
class Decider(Protocol):
    """What a plug-in's factory returns: one coroutine method. ``kind`` is a decision kind, ``view`` the plain
    dict the season built for it (:func:`view_schema`); the answer a plain dict (:func:`answer_schema`), a
    proposal the season judges."""

    async def decide(self, kind: str, view: dict) -> dict: ...


def view_schema(kind: str) -> dict[str, Any]:
    """The JSON schema of a decision kind's view (what ``decide`` is given)."""
    from pydantic import TypeAdapter

    return TypeAdapter(_decision(kind).view_schema).json_schema()


def answer_schema(kind: str) -> dict[str, Any]:
    """The JSON schema of a decision kind's answer (what ``decide`` returns; a rationale is free text)."""
    from pydantic import TypeAdapter

    return TypeAdapter(_decision(kind).Answer).json_schema()


def _decision(kind: str):
    from ffbench_lib.game.decisions import REGISTRY

    if kind not in REGISTRY:
        raise KeyError(f"no decision kind {kind!r}; the kinds: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[kind]


def _line(exc: BaseException) -> str:
    """An exception's text on one line (an error is one line)."""
    return " ".join(str(exc).split())[:300]


def load_factory(entry: str, where: str):
    """The callable ``entry`` names (``package.module:factory``); a :class:`ConfigError` of one line otherwise."""
    module, _, attr = entry.partition(":")
    try:
        mod = importlib.import_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure to import is the same answer for the user
        raise PluginError(f"{where}.entry: cannot import {module!r} ({type(exc).__name__}: {_line(exc)}); put its "
                          "folder on PYTHONPATH (or install it) where the season runs") from None
    factory = getattr(mod, attr, None)
    if not callable(factory):
        raise PluginError(f"{where}.entry: {module} has no callable {attr!r}; name the factory that returns your "
                           "agent (module:factory)")
    return factory


class PluginAgent(Agent):
    """A league's seat for a plug-in: asks it, and gives it the run's model client."""

    def __init__(self, team: str, seed: int, spec, where: str = "agent"):
        super().__init__(team, seed)
        self.spec, self.agent_id = spec, spec.agent_id
        factory = load_factory(spec.entry, where)
        try:
            self.inner = factory(team, seed, **spec.options)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's factory failing is a configuration problem
            raise PluginError(f"{where}: {spec.entry}({team!r}, {seed}, **options) failed ({type(exc).__name__}: "
                              f"{_line(exc)}); check its options") from None
        if inspect.isclass(self.inner):
            raise PluginError(f"{where}.entry: {spec.entry} returned the class {self.inner.__name__}, not an agent; "
                              "return an instance (e.g. return MyAgent(team, seed))")
        decide = getattr(self.inner, "decide", None)
        if not callable(decide):
            raise PluginError(f"{where}.entry: {spec.entry} returned a {type(self.inner).__name__} without a "
                               "decide(kind, view) method; return an object with async decide(kind, view)")
        if not inspect.iscoroutinefunction(decide):
            raise PluginError(f"{where}.entry: {type(self.inner).__name__}.decide is not async; define it as "
                               "async def decide(self, kind, view)")
        if spec.model is not None and not callable(getattr(self.inner, "use_model", None)):
            raise PluginError(f"{where}.model: {type(self.inner).__name__} has no use_model(client) method to take "
                               "the model's client; add one, or drop model from the config")
        #: a plug-in that decides by numbers alone may say so (``masked_views = False``), as the bots do
        self.masked_views = bool(getattr(self.inner, "masked_views", True))

    def bind(self, ctx) -> None:
        if self.spec.model is not None:
            self.inner.use_model(ModelClient(self.spec.model, ctx, self.team, self.agent_id,
                                             self.spec.max_calls_per_decision))

    async def decide(self, kind: str, view: dict) -> Answer:
        """The plug-in's answer to its own copy of the view (what it does to it never reaches the rules that
        judge the answer), within ``timeout_s``."""
        _ASKED.set((kind, view.get("week"), view.get("pick")))
        _CALLS.set({})
        try:
            return await asyncio.wait_for(self.inner.decide(kind, copy.deepcopy(view)), self.spec.timeout_s)
        except asyncio.TimeoutError:
            raise TimeoutError(f"decide({kind!r}) took longer than timeout_s {self.spec.timeout_s:g}") from None

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if callable(close):
            await close()


class ModelClient:
    """A plug-in's model, through ffbench's client: ``await client.complete(messages)`` returns the answer's
    text; the call goes through the run's replay cache (a rerun replays it; the same prompt asked again within one
    decision is another sample, cached as the n-th), budget (checked before every call: a spent budget stops the
    run), the endpoint's concurrency limit and retries, at most ``max_calls_per_decision`` calls a decision, and
    its ledger line names the team, the agent and the decision it was made for."""

    def __init__(self, spec, ctx, team: str, agent_id: str, max_calls: int = 20):
        from ffbench_lib.llm.client import LLMClient

        self.spec, self.ctx, self.team, self.agent_id = spec, ctx, team, agent_id
        self.max_calls = max_calls
        self._client = LLMClient(spec, ctx.settings, ctx.cache, ctx.budget, team=team)

    @property
    def model(self) -> str:
        return self.spec.model

    async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str | None:
        from ffbench_lib.core.secrets import scrub

        decision, week, pick = _ASKED.get() or (None, None, None)
        calls = _CALLS.get()
        if calls is None:
            calls = {}
            _CALLS.set(calls)
        if sum(calls.values()) >= self.max_calls:
            raise RuntimeError(f"more than max_calls_per_decision {self.max_calls} model calls in one decision")
        if self.ctx.budget.exceeded:
            raise FatalLLMError(f"team {self.team!r} ({self.agent_id}): llm.budget_usd {self.ctx.budget.limit_usd} "
                                f"spent (${self.ctx.budget.spent_usd:.4f}) by its own model calls in the middle of a "
                                "decision; the run stops (raise the budget, or cap the calls: max_calls_per_decision)")
        prompt = json.dumps(messages, sort_keys=True, default=str)
        nth = calls.get(prompt, 0)  # the same prompt again in one decision: another sample, cached as such
        calls[prompt] = nth + 1
        line = {"team": self.team, "model": self.spec.model, "agent": self.agent_id, "decision": decision,
                "week": week, "pick": pick, "reask": 0, "prompt_version": None, "messages": messages,
                "request_params": self._client.request_params(), "source": "plugin"}
        try:
            call = await self._client.complete(messages, max_tokens=max_tokens, sample=nth)
        except Exception as exc:
            self.ctx.log({**line, "response": None, "error": scrub(str(exc))[:1000], "cache_hit": False,
                          "cost_usd": None, "attempts": getattr(exc, "attempts", []),
                          "retries": max(0, len(getattr(exc, "attempts", [])) - 1)})
            raise
        self.ctx.log({**line, "response": call.text, "finish_reason": call.finish_reason,
                      "answer_chars": call.answer_chars, "answer_truncated": call.truncated, "parsed": None,
                      "problems": None, "prompt_tokens": call.usage.get("prompt_tokens"),
                      "completion_tokens": call.usage.get("completion_tokens"),
                      "reasoning_tokens": call.usage.get("reasoning_tokens"), "cost_usd": call.cost_usd,
                      "latency_s": call.latency_s, "wait_s": call.wait_s, "attempts": call.attempts,
                      "retries": max(0, len(call.attempts) - 1), "cache_hit": call.cache_hit, "error": None,
                      "cache_error": call.cache_error})
        return call.text
