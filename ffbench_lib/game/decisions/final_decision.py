"""``final_decision``: The receiver ends the negotiation on the final counter: accept or reject.

An illegal answer (another action, an illegal counter) is ``reject``."""
from __future__ import annotations

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply


@register
class FinalDecision(TradeReply):
    kind = "final_decision"
    actions = ("accept", "reject")
    counter = None
    default = "reject"
    actor_proposes = False
