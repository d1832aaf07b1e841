"""One model's calls through litellm's async API.

* per-call timeout; retries with exponential backoff on rate limits, 5xx, timeouts and connection errors
  (each attempt and its error is returned for the ledger, which is why ffbench drives the retry loop
  instead of litellm's ``num_retries``); other errors (auth, bad request) fail at once;
* a concurrency limit per provider endpoint, shared by every team that uses it in this process and divided
  by ``FFBENCH_CONCURRENCY_SHARE`` (the batch runner sets it to the number of worker processes);
* cost from litellm's price table, or from the config's per-token prices for models it does not know;
* the replay cache: a recorded answer is returned without any call; ``replay_only`` turns a miss into an error;
* never a switch to another model.
"""
from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

from ..secrets import scrub
from .cache import ReplayCache, ReplayMiss  # noqa: F401 - ReplayMiss re-exported

RETRYABLE = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
             "APIConnectionError", "Timeout", "APIError")


class FatalLLMError(RuntimeError):
    """Stops the run instead of being repaired: a replay miss, a missing API key."""


class LLMCallFailed(RuntimeError):
    def __init__(self, message: str, attempts: list[dict[str, Any]]):
        super().__init__(message)
        self.attempts = attempts


class BudgetExceeded(RuntimeError):
    pass


@dataclass
class Budget:
    """Money spent on live calls in one run; the engine stops at the next checkpoint once it passes the limit."""

    limit_usd: float | None
    spent_usd: float = 0.0

    def add(self, cost: float | None) -> None:
        self.spent_usd += float(cost or 0.0)

    @property
    def exceeded(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd


@dataclass
class CallResult:
    text: str | None
    finish_reason: str | None
    usage: dict[str, int | None]
    cost_usd: float | None
    latency_s: float
    attempts: list[dict[str, Any]] = field(default_factory=list)
    cache_hit: bool = False
    cache_key: str = ""


_SEMAPHORES: dict[tuple[int, str], asyncio.Semaphore] = {}


def _semaphore(key: str, limit: int) -> asyncio.Semaphore:
    share = max(1, int(os.environ.get("FFBENCH_CONCURRENCY_SHARE", "1")))
    loop_key = (id(asyncio.get_running_loop()), key)
    if loop_key not in _SEMAPHORES:
        _SEMAPHORES[loop_key] = asyncio.Semaphore(max(1, limit // share))
    return _SEMAPHORES[loop_key]


def _usage(resp: Any) -> dict[str, int | None]:
    u = getattr(resp, "usage", None)
    if u is None:
        return {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
    details = getattr(u, "completion_tokens_details", None)
    return {"prompt_tokens": getattr(u, "prompt_tokens", None),
            "completion_tokens": getattr(u, "completion_tokens", None),
            "reasoning_tokens": getattr(details, "reasoning_tokens", None) if details else None}


class LLMClient:
    def __init__(self, spec, settings, cache: ReplayCache | None, budget: Budget):
        self.spec = spec
        self.settings = settings
        self.cache = cache
        self.budget = budget
        self.provider_key = f"{spec.model.split('/', 1)[0]}@{spec.api_base or 'default'}"

    # the parameters that shape an answer (and so key the cache); never the key or the address
    def answer_params(self) -> dict[str, Any]:
        s = self.spec
        p: dict[str, Any] = {"max_tokens": s.max_tokens}
        if s.temperature is not None:
            p["temperature"] = s.temperature
        if s.reasoning_effort is not None:
            p["reasoning_effort"] = s.reasoning_effort
        p.update(s.extra)
        if self._json_mode():
            p["response_format"] = {"type": "json_object"}
        return p

    def _json_mode(self) -> bool:
        import litellm

        litellm.suppress_debug_info = True  # no provider-list banners in a researcher's notebook
        try:
            provider = self.spec.model.split("/", 1)[0] if "/" in self.spec.model else None
            supported = litellm.get_supported_openai_params(model=self.spec.model, custom_llm_provider=provider)
        except Exception:  # noqa: BLE001 - unknown model: plain text and robust parsing
            return False
        return bool(supported) and "response_format" in supported

    def _call_kwargs(self) -> dict[str, Any]:
        s = self.spec
        kw: dict[str, Any] = {"timeout": s.timeout_s, "num_retries": 0}
        if s.api_base:
            kw["api_base"] = s.api_base
        if s.api_key_env:
            key = os.environ.get(s.api_key_env)
            if not key:
                raise FatalLLMError(f"environment variable {s.api_key_env} (api_key_env of {s.model}) is not set; "
                                    "export it before running")
            kw["api_key"] = key
        elif s.api_base and s.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kw["api_key"] = "not-needed"  # local OpenAI-compatible servers ignore it
        return kw

    def _cost(self, resp: Any) -> float | None:
        import litellm

        s = self.spec
        custom = None
        if s.input_cost_per_token is not None or s.output_cost_per_token is not None:
            custom = {"input_cost_per_token": s.input_cost_per_token or 0.0,
                      "output_cost_per_token": s.output_cost_per_token or 0.0}
        try:
            return float(litellm.completion_cost(completion_response=resp, custom_cost_per_token=custom))
        except Exception:  # noqa: BLE001 - model missing from the price table and no prices configured
            return None

    async def complete(self, messages: list[dict[str, str]]) -> CallResult:
        import litellm

        params = self.answer_params()
        key = ReplayCache.key(self.spec.model, messages, params) if self.cache else ""
        if self.cache:
            hit = self.cache.get(key)
            if hit is not None and "response" in hit:
                r = hit["response"]
                return CallResult(r["text"], r["finish_reason"], r["usage"], r["cost_usd"], 0.0, [], True, key)
            if hit is not None and self.settings.replay_only:  # a recorded failure replays as that failure
                raise LLMCallFailed(hit["failure"]["message"], hit["failure"]["attempts"])
            if self.settings.replay_only:
                raise ReplayMiss(f"replay_only: no recorded answer for {self.spec.model} (cache key {key[:12]}); "
                                 "run without replay_only to call the provider")
        attempts: list[dict[str, Any]] = []
        kwargs = self._call_kwargs()
        t_total = time.perf_counter()
        for attempt in range(self.settings.retries + 1):
            t0 = time.perf_counter()
            try:
                async with _semaphore(self.provider_key, self.spec.max_concurrency):
                    resp = await litellm.acompletion(model=self.spec.model, messages=messages, **params, **kwargs)
            except Exception as exc:  # noqa: BLE001 - classified below
                name = type(exc).__name__
                retry = name in RETRYABLE and attempt < self.settings.retries
                attempts.append({"attempt": attempt, "error": name, "message": scrub(str(exc))[:500],
                                 "latency_s": round(time.perf_counter() - t0, 3), "retried": retry})
                if not retry:
                    message = f"{self.spec.model}: {name}: {scrub(str(exc))[:300]}"
                    if self.cache:
                        self.cache.put(key, {"request": {"model": self.spec.model, "messages": messages,
                                                         "params": params},
                                             "failure": {"message": message, "attempts": attempts}})
                    raise LLMCallFailed(message, attempts) from None
                await asyncio.sleep(self.settings.backoff_s * (2 ** attempt))
                continue
            choice = resp.choices[0]
            text = getattr(choice.message, "content", None)
            result = CallResult(text=text, finish_reason=getattr(choice, "finish_reason", None), usage=_usage(resp),
                                cost_usd=self._cost(resp), latency_s=round(time.perf_counter() - t_total, 3),
                                attempts=attempts + [{"attempt": attempt, "error": None,
                                                      "latency_s": round(time.perf_counter() - t0, 3)}],
                                cache_key=key)
            self.budget.add(result.cost_usd)
            if self.cache:
                self.cache.put(key, {"request": {"model": self.spec.model, "messages": messages, "params": params},
                                     "response": {"text": text, "finish_reason": result.finish_reason,
                                                  "usage": result.usage, "cost_usd": result.cost_usd}})
            return result
        raise AssertionError("unreachable")  # pragma: no cover
