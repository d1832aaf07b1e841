"""``respond_to_offer``: The receiver answers the proposal: accept, reject, or counter with an offer of the same size.

An illegal answer (another action, an illegal counter) is ``reject``."""
from __future__ import annotations

from typing import Literal

from pydantic import with_config

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply
from ffbench_lib.game.decisions._view_parts import VIEW, OfferView


@with_config(VIEW)
class RespondToOfferView(OfferView):
    """The receiver's view of a proposal."""

    decision: Literal["trade_respond_to_offer"]


@register
class RespondToOffer(TradeReply):
    kind = "respond_to_offer"
    view_schema = RespondToOfferView
    actions = ("accept", "reject", "counter")
    counter = "counter"
    default = "reject"
    actor_proposes = False
