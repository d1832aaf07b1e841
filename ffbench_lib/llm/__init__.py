"""LLM calls through litellm: the client (timeouts, retries, concurrency limits, cost), JSON parsing, the
replay cache and the budget. Nothing here knows about fantasy football."""
from ffbench_lib.llm.cache import ReplayCache, ReplayMiss
from ffbench_lib.llm.client import MAX_ANSWER_CHARS, Budget, BudgetExceeded, CallResult, FatalCallFailed, FatalLLMError, LLMCallFailed, LLMClient
from ffbench_lib.llm.parse import parse_json

__all__ = ["ReplayCache", "ReplayMiss", "Budget", "BudgetExceeded", "CallResult", "FatalCallFailed", "FatalLLMError",
           "LLMCallFailed", "LLMClient", "MAX_ANSWER_CHARS",
           "parse_json"]
