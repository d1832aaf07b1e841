"""An inspect_ai model or agent playing an ffbench seat (an exam's candidate, a season's team).

:class:`InspectSeat` is ffbench's LLM agent (:class:`ffbench_lib.agents.llm.LLMAgent`: its prompts, re-asks,
validation and ledger, unchanged) whose client answers through inspect instead of litellm: an inspect ``Model``
(``get_model()``, ``get_model(role="seat1")``) generates each answer, or an inspect ``Agent`` (e.g. ``react()``)
is run on the prompt's messages and its final output is the answer. Either way the answer is parsed and checked
by the decision's rules exactly as an LLM team's, invalid answers are re-asked with the errors, and every call is
a ledger line; inspect records the same calls in its own transcript.
"""
from __future__ import annotations

import time
from typing import Any

from inspect_ai.agent import Agent, AgentState, is_agent
from inspect_ai.agent import run as run_agent
from inspect_ai.model import (ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig,
                              Model, ModelOutput)

from ffbench_lib.agents.llm import LLMAgent
from ffbench_lib.config.league import LLMAgent as LLMSpec
from ffbench_lib.core.secrets import scrub
from ffbench_lib.llm.client import CallResult, _cut

#: inspect's stop reasons as the OpenAI-style finish reasons ffbench's ledger and checks read
FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length", "tool_calls": "tool_calls",
          "content_filter": "content_filter"}
_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def chat(messages: list[dict[str, str]]) -> list[ChatMessage]:
    """ffbench's prompt messages (``{"role", "content"}``) as inspect chat messages."""
    return [_ROLES[m["role"]](content=m["content"]) for m in messages]


def _result(output: ModelOutput, t0: float) -> CallResult:
    text, n, cut = _cut(scrub(output.completion) if output.completion else output.completion or None)
    u = output.usage
    usage = {"prompt_tokens": u.input_tokens if u else None, "completion_tokens": u.output_tokens if u else None,
             "reasoning_tokens": u.reasoning_tokens if u else None}
    stop = output.stop_reason if output.choices else None
    return CallResult(text=text, finish_reason=FINISH.get(stop, stop), usage=usage,
                      cost_usd=getattr(u, "total_cost", None) if u else None,
                      latency_s=round(time.perf_counter() - t0, 3), answer_chars=n, truncated=cut)


class InspectModelClient:
    """:class:`~ffbench_lib.llm.client.LLMClient`'s ``complete`` answered by an inspect ``Model`` (its retries,
    limits, cache and generate config are inspect's; ``max_tokens`` overrides the config's, as a calibration asks)."""

    def __init__(self, model: Model):
        self.model = model

    def request_params(self) -> dict[str, Any]:
        return {"via": "inspect_ai", "model": str(self.model),
                **self.model.config.model_dump(exclude_none=True, mode="json")}

    async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None,
                       sample: int = 0) -> CallResult:
        t0 = time.perf_counter()
        config = GenerateConfig(max_tokens=max_tokens) if max_tokens is not None else GenerateConfig()
        return _result(await self.model.generate(chat(messages), config=config), t0)


class InspectAgentClient:
    """``complete`` answered by running an inspect ``Agent`` on the messages: its final output is the answer
    (whatever tools or turns it used on the way are its own, in inspect's transcript)."""

    def __init__(self, agent: Agent, name: str):
        self.agent, self.name = agent, name

    def request_params(self) -> dict[str, Any]:
        return {"via": "inspect_ai", "agent": self.name}

    async def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None,
                       sample: int = 0) -> CallResult:
        t0 = time.perf_counter()
        state = await run_agent(self.agent, AgentState(messages=chat(messages)), name=self.name)
        return _result(state.output, t0)


class InspectSeat(LLMAgent):
    """ffbench's LLM agent answering through an inspect ``Model`` or ``Agent`` (``name``: how tables name it, by
    default the model's name; its agent id is ``llm:<model>`` for a model, ``python:inspect.<name>`` for an agent).
    ``prompt``, ``max_prompt_tokens`` and ``system_in_user`` are an LLM team's own (:class:`LLMSpec`)."""

    def __init__(self, team: str, seed: int, backend: Model | Agent, name: str | None = None, **spec: Any):
        self.backend = backend
        agent = not isinstance(backend, Model)
        if agent and not is_agent(backend) and not callable(backend):
            raise TypeError(f"{type(backend).__name__} is neither an inspect Model nor an Agent")
        label = name or (str(backend) if not agent else getattr(backend, "__name__", "agent"))
        if spec.get("mode", "tables") != "tables":
            raise ValueError("mode: tools is not available for an inspect seat yet (inspect's own tool calling "
                             "would answer it); use mode: tables, or an inspect Agent with tools of its own")
        super().__init__(team, seed, LLMSpec(kind="llm", model=label, **spec))
        if agent:
            self.agent_id = f"python:inspect.{label}"

    def bind(self, ctx) -> None:
        """The run's ledger, budget and settings, as an LLM team gets them; the calls go through inspect."""
        self.ctx = ctx
        self.client = (InspectModelClient(self.backend) if isinstance(self.backend, Model)
                       else InspectAgentClient(self.backend, self.spec.model))
