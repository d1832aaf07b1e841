"""The fallback-rate guard: a run whose LLM team is mostly repaired by the engine measures the engine, not
the model, so it stops (status ``failed``) instead of finishing with numbers that look like the model's. It
counts decisions as the metrics do (``records.decision.is_decision``), so it lives with the runs, not in ``llm``."""
from __future__ import annotations

from collections import Counter

from ffbench_lib.llm.client import FatalLLMError
from ffbench_lib.records.decision import is_decision


#: the agents the guard watches: models and plug-ins (a plug-in that raises on every decision is the engine's)
GUARDED = ("llm:", "python:")


class FallbackGuard:
    def __init__(self, max_rate: float | None, min_decisions: int):
        self.max_rate, self.min_decisions = max_rate, min_decisions
        self.decisions: Counter = Counter()
        self.fallbacks: Counter = Counter()

    def record(self, record: dict) -> None:
        """Count one decisions.jsonl record of an LLM team; raise :class:`FatalLLMError` past the limit."""
        team, agent_id, decided_by = record["team"], str(record["agent"]), record["decided_by"]
        if self.max_rate is None or not agent_id.startswith(GUARDED) or not is_decision(record):
            return
        self.decisions[team] += 1
        self.fallbacks[team] += decided_by == "fallback"
        n, fb = self.decisions[team], self.fallbacks[team]
        if n >= self.min_decisions and fb / n > self.max_rate:
            raise FatalLLMError(
                f"team {team!r} ({agent_id.removeprefix('llm:')}): the engine repaired {fb} of its {n} decisions "
                f"({fb / n:.0%} > llm.max_fallback_rate {self.max_rate:.0%}), so the results would measure the "
                "engine, not the agent; see decisions.jsonl (and llm_calls.jsonl) for the errors (server, model, prompt size), or raise "
                "llm.max_fallback_rate (a resume may change it; answers recorded in llm.cache_dir are replayed: "
                "clear them, or use another cache_dir, if the server was at fault)")
