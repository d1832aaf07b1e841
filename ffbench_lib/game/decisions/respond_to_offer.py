"""``respond_to_offer``: The receiver answers the proposal: accept, reject, or counter with an offer of the same size.

An illegal answer (another action, an illegal counter) is ``reject``."""
from __future__ import annotations

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply


@register
class RespondToOffer(TradeReply):
    kind = "respond_to_offer"
    actions = ("accept", "reject", "counter")
    counter = "counter"
    default = "reject"
    actor_proposes = False
