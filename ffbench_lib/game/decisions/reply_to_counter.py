"""``reply_to_counter``: The proposer answers a counter: accept, withdraw, or make a final counter of the same size.

An illegal answer (another action, an illegal counter) is ``withdraw``."""
from __future__ import annotations

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions._trade import TradeReply


@register
class ReplyToCounter(TradeReply):
    kind = "reply_to_counter"
    actions = ("accept", "withdraw", "final_counter")
    counter = "final_counter"
    default = "withdraw"
    actor_proposes = True
