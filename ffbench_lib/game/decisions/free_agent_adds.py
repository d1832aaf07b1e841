"""``free_agent_adds``: once waivers have cleared, each team may add free agents first come (worse record
first) until lineups lock: ranked (add, drop) pairs, no bids. Legality is the waiver claims' (a claim on a
player taken earlier in the order is ``lost`` when processed, not an illegal answer)."""
from __future__ import annotations

from typing import Literal

from pydantic import with_config

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions.waiver_claims import WaiverClaims
from ffbench_lib.game.decisions._view_parts import VIEW, Claims


@with_config(VIEW)
class FreeAgentAddsView(Claims):
    """``claims_view`` once waivers have cleared (no budget left or priority: ``null``)."""

    decision: Literal["free_agents"]
    mode: Literal["free_agents"]


@register
class FreeAgentAdds(WaiverClaims):
    kind = "free_agent_adds"
    mode = "free_agents"
    view_schema = FreeAgentAddsView
