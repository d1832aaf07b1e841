"""LLM calls through litellm: the client (timeouts, retries, concurrency limits, cost), JSON parsing, the
replay cache and the budget. Nothing here knows about fantasy football."""
from .cache import ReplayCache, ReplayMiss
from .client import (MAX_ANSWER_CHARS, Budget, BudgetExceeded, CallResult, FatalCallFailed, FatalLLMError,
                     LLMCallFailed, LLMClient)
from .parse import parse_json

__all__ = ["ReplayCache", "ReplayMiss", "Budget", "BudgetExceeded", "CallResult", "FatalCallFailed", "FatalLLMError",
           "LLMCallFailed", "LLMClient", "MAX_ANSWER_CHARS",
           "parse_json"]
