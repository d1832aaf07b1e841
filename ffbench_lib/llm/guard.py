"""The fallback-rate guard: a run whose LLM team is mostly repaired by the engine measures the engine, not
the model, so it stops (status ``failed``) instead of finishing with numbers that look like the model's."""
from __future__ import annotations

from collections import Counter

from ffbench_lib.llm.client import FatalLLMError


def is_decision(record: dict) -> bool:
    """Whether a decisions.jsonl record is a decision of its own for fallback rates (the guard's and the
    metrics'): not an opening proposal superseded by an earlier trade, nor an on-deck shortlist or a valid draft
    queue asked again because its players were taken meanwhile (none was the agent's to get right or wrong). A
    dry queue the engine repaired counts: the invalid answer was the agent's, whatever the re-ask gives."""
    dry_valid = record.get("queue_dry") and record.get("decided_by") == "agent"
    return str(record.get("applied")) != "superseded" and not record.get("on_deck") and not dry_valid


class FallbackGuard:
    def __init__(self, max_rate: float | None, min_decisions: int):
        self.max_rate, self.min_decisions = max_rate, min_decisions
        self.decisions: Counter = Counter()
        self.fallbacks: Counter = Counter()

    def record(self, record: dict) -> None:
        """Count one decisions.jsonl record of an LLM team; raise :class:`FatalLLMError` past the limit."""
        team, agent_id, decided_by = record["team"], str(record["agent"]), record["decided_by"]
        if self.max_rate is None or not agent_id.startswith("llm:") or not is_decision(record):
            return
        self.decisions[team] += 1
        self.fallbacks[team] += decided_by == "fallback"
        n, fb = self.decisions[team], self.fallbacks[team]
        if n >= self.min_decisions and fb / n > self.max_rate:
            raise FatalLLMError(
                f"team {team!r} ({agent_id.removeprefix('llm:')}): the engine repaired {fb} of its {n} decisions "
                f"({fb / n:.0%} > llm.max_fallback_rate {self.max_rate:.0%}), so the results would measure the "
                "engine, not the model; see llm_calls.jsonl for the errors (server, model, prompt size), or raise "
                "llm.max_fallback_rate (a resume may change it; answers recorded in llm.cache_dir are replayed: "
                "clear them, or use another cache_dir, if the server was at fault)")
