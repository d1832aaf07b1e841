"""``final_decision``: The receiver ends the negotiation on the final counter: accept or reject.

An illegal answer (another action, an illegal counter) is ``reject``."""
from __future__ import annotations

from typing import Literal

from pydantic import with_config

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply
from ffbench_lib.game.decisions._view_parts import VIEW, OfferView


@with_config(VIEW)
class FinalDecisionView(OfferView):
    """The receiver's view of the final counter."""

    decision: Literal["trade_final_decision"]


@register
class FinalDecision(TradeReply):
    kind = "final_decision"
    view_schema = FinalDecisionView
    actions = ("accept", "reject")
    counter = None
    default = "reject"
    actor_proposes = False
