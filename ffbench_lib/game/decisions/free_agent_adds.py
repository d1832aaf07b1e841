"""``free_agent_adds``: once waivers have cleared, each team may add free agents first come (worse record
first) until lineups lock: ranked (add, drop) pairs, no bids. Legality is the waiver claims' (a claim on a
player taken earlier in the order is ``lost`` when processed, not an illegal answer)."""
from __future__ import annotations

from ffbench_lib.game.decisions.base import register
from ffbench_lib.game.decisions.waiver_claims import WaiverClaims


@register
class FreeAgentAdds(WaiverClaims):
    kind = "free_agent_adds"
    mode = "free_agents"
