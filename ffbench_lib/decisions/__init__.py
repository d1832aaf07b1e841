"""Decision types as data: one module per kind, each registered in :data:`REGISTRY` (see :mod:`.base`).

Adding a decision type = one module here (answer model, ``validate``, ``repair``, prompt fields), its prompt
template, its bot policies and tests. The engine, the LLM agent and the bots look kinds up here."""
from .base import REGISTRY, Decision, Outcome, market_from_view, register, roster_from_rules
from . import (draft_shortlist, draft_pick, set_lineup, propose_trade, respond_to_offer,  # noqa: F401 - registers
               reply_to_counter, final_decision, waiver_claims, free_agent_adds)

KINDS = tuple(REGISTRY)

__all__ = ["REGISTRY", "KINDS", "Decision", "Outcome", "register", "roster_from_rules", "market_from_view"]
