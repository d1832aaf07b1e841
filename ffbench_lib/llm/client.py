"""One model's calls through litellm's async API.

* per-call timeout; retries with exponential backoff on rate limits, 5xx, timeouts and connection errors
  (each attempt and its error is returned for the ledger, which is why ffbench drives the retry loop
  instead of litellm's ``num_retries``; every request carries an ``X-FFBench-Attempt`` id so the ledger can
  be matched to a server's log); other errors (bad request) fail at once;
* configuration errors stop the run (:class:`FatalCallFailed`): a rejected key, no permission, an unknown
  model, a prompt longer than the model's context window, and anything raised that is not a provider error
  (a ``TypeError`` from a bad argument, a parameter litellm does not support). Repairing every answer instead would make the
  results measure the engine, not the model;
* answers longer than ``MAX_ANSWER_CHARS`` are stored truncated (ledger and cache) and marked so;
* a concurrency limit per provider endpoint (``max_concurrency``), held around each request by
  :func:`.limits.lease`: in this process, and across a batch's processes or a Dask cluster when
  ``FFBENCH_PROVIDER_LIMITS`` says where;
* cost from litellm's price table, or from the config's per-token prices for models it does not know;
* the replay cache: a recorded answer is returned without any call; ``replay_only`` turns a miss into an error;
* never a switch to another model.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ffbench_lib.core.secrets import register, register_credentials, scrub
from ffbench_lib.llm import limits
from ffbench_lib.llm.cache import ReplayCache, ReplayMiss  # noqa: F401 - ReplayMiss re-exported

RETRYABLE = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
             "APIConnectionError", "Timeout", "APIError")
#: litellm exception name -> kind; these are configuration errors, never transient
FATAL = {"AuthenticationError": "auth", "PermissionDeniedError": "permission", "NotFoundError": "not_found",
         "ContextWindowExceededError": "context", "UnsupportedParamsError": "config",
         "LiteLLMUnknownProvider": "config"}
FATAL_STATUS = {401: "auth", 403: "permission", 404: "not_found"}  # litellm maps some of these to APIError
#: sampling parameters a provider defaults when a request leaves them out (the ledger says which were left out)
SAMPLING = ("temperature", "top_p", "seed", "reasoning_effort")
#: what is kept of an answer in the ledger and the cache; a longer answer is invalid (no JSON answer needs it)
MAX_ANSWER_CHARS = 65_536


class FatalLLMError(RuntimeError):
    """Stops the run instead of being repaired: a replay miss, a missing or rejected API key."""


class FatalCallFailed(FatalLLMError):
    """A call failed with a configuration error (``kind`` from :data:`FATAL`); ``attempts`` go to the ledger."""

    def __init__(self, message: str, attempts: list[dict[str, Any]], kind: str, error: str):
        super().__init__(message)
        self.attempts, self.kind, self.error = attempts, kind, error


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
    latency_s: float  # from the first request to the answer, without waiting for a concurrency slot
    attempts: list[dict[str, Any]] = field(default_factory=list)
    cache_hit: bool = False
    cache_key: str = ""
    answer_chars: int = 0  # length of the whole answer; ``text`` holds at most MAX_ANSWER_CHARS of it
    truncated: bool = False
    cache_error: str | None = None  # the answer could not be stored (it is used all the same)
    wait_s: float = 0.0  # waiting for the endpoint's concurrency slot (max_concurrency), every attempt
    #: the function calls the model asked for (tools mode): ``[{"id", "name", "arguments"}]``; None: none
    tool_calls: list[dict[str, Any]] | None = None


def _usage(resp: Any) -> dict[str, int | None]:
    u = getattr(resp, "usage", None)
    if u is None:
        return {"prompt_tokens": None, "completion_tokens": None, "reasoning_tokens": None}
    details = getattr(u, "completion_tokens_details", None)
    return {"prompt_tokens": getattr(u, "prompt_tokens", None),
            "completion_tokens": getattr(u, "completion_tokens", None),
            "reasoning_tokens": getattr(details, "reasoning_tokens", None) if details else None}


def key_variable(spec) -> str:
    """The environment variable the key comes from: ``api_key_env``, else the one litellm reads for the
    provider (asked with an empty environment, so it names the variable even when it is set)."""
    if spec.api_key_env:
        return spec.api_key_env
    import litellm
    from unittest import mock

    with mock.patch.dict(os.environ, clear=True):
        missing = litellm.validate_environment(model=spec.model).get("missing_keys") or []
    return " / ".join(missing) or "the provider's API key variable"


def local_server(spec) -> bool:
    """An OpenAI-compatible server of the user's own (``openai/...`` with ``api_base``): it needs no key."""
    return bool(spec.api_base) and spec.model.startswith("openai/") and not spec.api_key_env


def missing_key(spec) -> str | None:
    """The key variable(s) a team needs and the environment lacks, or None (set, not needed, or a provider whose
    credentials come from elsewhere, e.g. a cloud login). Nothing is called."""
    if spec.api_key_env:
        return None if os.environ.get(spec.api_key_env) else spec.api_key_env
    if local_server(spec):
        return None
    import litellm

    try:
        found = litellm.validate_environment(model=spec.model, api_base=spec.api_base)
    except Exception:  # noqa: BLE001 - a model id litellm cannot place: the call itself will say
        return None
    keys = [k for k in found.get("missing_keys") or [] if re.search(r"KEY|TOKEN", k)]
    return " or ".join(keys) if keys and not found.get("keys_in_environment") else None


def _chain(exc: BaseException) -> list[BaseException]:
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def before_request(exc: BaseException) -> str | None:
    """``missing_key`` or ``bad_url`` when the error was raised before any request left this process (litellm
    wraps both as ``InternalServerError``, which would be retried as a server fault); None otherwise."""
    import httpx
    import openai

    for c in _chain(exc):
        if isinstance(c, (httpx.InvalidURL, httpx.UnsupportedProtocol)) or type(c).__name__ in (
                "InvalidURL", "InvalidUrlClientError", "NonHttpUrlClientError", "MissingSchema", "InvalidSchema"):
            return "bad_url"
        # the SDK's own base error (not an APIError: no response, no connection attempt), e.g. no api_key
        if type(c) is openai.OpenAIError:
            return "missing_key" if re.search(r"api[_ ]key|credential", str(c), re.I) else "config"
    return None


def _provider_error(exc: Exception) -> bool:
    """An answer from (or a failure to reach) the provider; anything else litellm raises (a TypeError, a
    ValueError from its argument handling) is a configuration or programming error, the same on every call."""
    import httpx
    import openai

    return isinstance(exc, (openai.APIError, httpx.HTTPError, TimeoutError, ConnectionError))


def classify(exc: BaseException) -> str | None:
    """The configuration-error kind of a failed call (``auth``, ``missing_key``, ``bad_url``, ``not_found``,
    ``context``, ``config``, ...), or None for a provider failure that a retry may fix."""
    kind = next((FATAL[c.__name__] for c in type(exc).__mro__ if c.__name__ in FATAL),
                FATAL_STATUS.get(getattr(exc, "status_code", None)))
    return before_request(exc) or kind or (None if _provider_error(exc) else "config")


def _fatal_message(team: str, spec, kind: str, name: str, text: str) -> str:
    who = f"team {team!r} ({spec.model})" if team else spec.model
    where = f" at {spec.api_base}" if spec.api_base else ""
    if kind == "missing_key" or (kind == "auth" and missing_key(spec)):  # litellm's own text adds nothing
        return (f"{who}: no API key: {missing_key(spec) or key_variable(spec)} is not set; export it (or set "
                "api_key_env to the variable holding the key)")
    if kind == "bad_url":
        return (f"{who}: api_base {spec.api_base!r} is not a usable URL ({name}: {text}); give the server's "
                "address, e.g. http://127.0.0.1:8080/v1")
    if kind == "auth":
        return (f"{who}: the provider rejected the API key from {key_variable(spec)} ({name}: {text}); "
                "set a valid key for this provider and run again")
    if kind == "permission":
        return (f"{who}: the key from {key_variable(spec)} has no access to this model ({name}: {text}); "
                "use a key with access or another model")
    if kind == "not_found":
        return f"{who}: model not found{where} ({name}: {text}); check the model id in the config"
    if kind == "config":
        return (f"{who}: the call could not be made ({name}: {text}); this is a configuration error, not a "
                "provider failure: check this team's agent settings (extra, model, api_base)")
    return f"{who}: {name}: {text}"


def _tool_calls(choice: Any) -> list[dict[str, Any]] | None:
    """The function calls of an answer, as plain data (arguments scrubbed and cut like an answer's text)."""
    calls = getattr(getattr(choice, "message", None), "tool_calls", None) or []
    out = []
    for i, c in enumerate(calls):
        fn = getattr(c, "function", None)
        args = getattr(fn, "arguments", None)
        out.append({"id": str(getattr(c, "id", None) or f"call_{i}"), "name": str(getattr(fn, "name", "") or ""),
                    "arguments": _cut(scrub(args))[0] if isinstance(args, str) else "{}"})
    return out or None


def _cut(text: str | None) -> tuple[str | None, int, bool]:
    n = len(text or "")
    return (text[:MAX_ANSWER_CHARS] if n > MAX_ANSWER_CHARS else text), n, n > MAX_ANSWER_CHARS


class LLMClient:
    def __init__(self, spec, settings, cache: ReplayCache | None, budget: Budget, team: str = ""):
        self.spec = spec
        self.settings = settings
        self.cache = cache
        self.budget = budget
        self.team = team
        self.provider_key = spec.endpoint
        self._params: dict[str, Any] | None = None
        register_credentials(spec.extra)  # config validation rejects these; never written if one slips through

    # the parameters that shape an answer (and so key the cache); never the key or the address
    def answer_params(self) -> dict[str, Any]:
        if self._params is None:
            self._params = self._answer_params()
        return dict(self._params)

    def request_params(self) -> dict[str, Any]:
        """What the ledger records of a request: the answer parameters sent, timeout and retry policy, and the
        sampling parameters not sent (``server_defaults``: the server's own defaults applied to them)."""
        sent = self.answer_params()
        return {**sent, "timeout_s": self.spec.timeout_s, "retries": self.settings.retries,
                "server_defaults": [p for p in SAMPLING if p not in sent]}

    def _answer_params(self) -> dict[str, Any]:
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
            register(key)  # masked in every file and message from now on, whatever its variable is called
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

    async def complete(self, messages: list[dict[str, Any]], max_tokens: int | None = None,
                       sample: int = 0, tools: list[dict[str, Any]] | None = None,
                       tool_choice: str | None = None) -> CallResult:
        """One answer (``max_tokens`` overrides the team's, e.g. for a token-count calibration; ``sample``: the
        n-th answer to the same prompt, cached apart from the others: 0, the first, keys as it always did;
        ``tools``: function specs the model may call instead of answering, sent and keyed with the request;
        ``tool_choice: none`` for an answer due after tool calls)."""
        import litellm

        params = self.answer_params()
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if tools:
            params["tools"] = tools
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
            params.pop("response_format", None)  # a turn of tool calls is no JSON object: JSON mode off
        keyed = {**params, "sample": sample} if sample else params
        key = ReplayCache.key(self.spec.model, messages, keyed) if self.cache else ""
        if self.cache:
            hit = self.cache.get(key)
            if hit is not None and "response" in hit:  # replays the recorded attempts too (ledger = live one)
                r = hit["response"]
                n = r.get("answer_chars", len(r["text"] or ""))
                return CallResult(r["text"], r["finish_reason"], r["usage"], r["cost_usd"], 0.0,
                                  hit.get("attempts", []), True, key, n, bool(r.get("truncated")),
                                  tool_calls=r.get("tool_calls"))
            if hit is not None and self.settings.replay_only:  # a recorded failure replays as that failure
                raise LLMCallFailed(hit["failure"]["message"], hit["failure"]["attempts"])
            if self.settings.replay_only:
                raise ReplayMiss(f"replay_only: no recorded answer for {self.spec.model} (cache key {key[:12]}); "
                                 "run without replay_only to call the provider")
        attempts: list[dict[str, Any]] = []
        kwargs = self._call_kwargs()
        t_total, waited = time.perf_counter(), 0.0
        for attempt in range(self.settings.retries + 1):
            t0 = time.perf_counter()
            attempt_id = uuid.uuid4().hex[:16]
            wait = 0.0
            try:  # the headers too: a bad extra_headers that slipped past validation is a configuration error
                headers = {**params.get("extra_headers", {}), "X-FFBench-Attempt": attempt_id}
                async with limits.lease(self.provider_key, self.spec.max_concurrency):
                    wait = time.perf_counter() - t0  # another team's call held the slot: not this call's latency
                    waited += wait
                    t0 += wait
                    resp = await litellm.acompletion(model=self.spec.model, messages=messages,
                                                     **{**params, "extra_headers": headers}, **kwargs)
            except limits.LimitError as exc:  # the limit cannot be held as configured: no call was made
                who = f"team {self.team!r} ({self.spec.model})" if self.team else self.spec.model
                raise FatalLLMError(f"{who}: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - classified below
                name = type(exc).__name__
                retry = name in RETRYABLE and attempt < self.settings.retries
                attempts.append({"attempt": attempt, "id": attempt_id, "error": name,
                                 "message": scrub(str(exc))[:500],
                                 "latency_s": round(time.perf_counter() - t0, 3), "wait_s": round(wait, 3),
                                 "retried": retry})
                kind = classify(exc)
                if kind:  # never cached: a fixed key or config must call the provider again
                    attempts[-1]["retried"] = False
                    raise FatalCallFailed(_fatal_message(self.team, self.spec, kind, name, scrub(str(exc))[:300]),
                                          attempts, kind, scrub(str(exc))[:500]) from None
                if not retry:
                    message = f"{self.spec.model}: {name}: {scrub(str(exc))[:300]}"
                    if self.cache:
                        with contextlib.suppress(OSError):  # the failure is raised either way
                            self.cache.put(key, {"request": {"model": self.spec.model, "messages": messages,
                                                             "params": params},
                                                 "failure": {"message": message, "attempts": attempts}})
                    raise LLMCallFailed(message, attempts) from None
                await asyncio.sleep(self.settings.backoff_s * (2 ** attempt))
                continue
            choice = resp.choices[0] if getattr(resp, "choices", None) else None  # no choices: an empty answer
            content = getattr(getattr(choice, "message", None), "content", None)  # an echoed key never enters the league state:
            text, n_chars, truncated = _cut(scrub(content) if content else content)
            calls = _tool_calls(choice)
            attempts.append({"attempt": attempt, "id": attempt_id, "error": None,
                             "latency_s": round(time.perf_counter() - t0, 3), "wait_s": round(wait, 3)})
            result = CallResult(text=text, finish_reason=getattr(choice, "finish_reason", None), usage=_usage(resp),
                                cost_usd=self._cost(resp),
                                latency_s=round(time.perf_counter() - t_total - waited, 3),
                                attempts=attempts, cache_key=key, answer_chars=n_chars, truncated=truncated,
                                wait_s=round(waited, 3), tool_calls=calls)
            self.budget.add(result.cost_usd)
            if self.cache:
                try:  # a paid answer is used even if it cannot be stored; the ledger says so
                    self.cache.put(key, {"request": {"model": self.spec.model, "messages": messages, "params": params},
                                         "response": {"text": text, "finish_reason": result.finish_reason,
                                                      "usage": result.usage, "cost_usd": result.cost_usd,
                                                      "answer_chars": n_chars, "truncated": truncated,
                                                      **({"tool_calls": calls} if calls else {})},
                                         "attempts": attempts})
                except OSError as exc:
                    result.cache_error = f"{self.cache.source}: {exc.strerror or exc}"
            return result
        raise AssertionError("unreachable")  # pragma: no cover
