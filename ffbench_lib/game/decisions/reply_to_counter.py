"""``reply_to_counter``: The proposer answers a counter: accept, withdraw, or make a final counter of the same size.

An illegal answer (another action, an illegal counter) is ``withdraw``."""
from __future__ import annotations

from typing import Literal

from pydantic import with_config

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply
from ffbench_lib.game.decisions._view_parts import VIEW, OfferView


@with_config(VIEW)
class ReplyToCounterView(OfferView):
    """The proposer's view of the receiver's counter."""

    decision: Literal["trade_reply_to_counter"]


@register
class ReplyToCounter(TradeReply):
    kind = "reply_to_counter"
    view_schema = ReplyToCounterView
    actions = ("accept", "withdraw", "final_counter")
    counter = "final_counter"
    default = "withdraw"
    actor_proposes = True
