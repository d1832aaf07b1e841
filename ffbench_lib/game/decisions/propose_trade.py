"""``propose_trade``: in a trade window, each team in turn may open one negotiation (or pass).

Legal: equal numbers of players (1..max per side) the two teams own and have not moved this week, leaving both
rosters within caps and able to field a lineup. Anything illegal is a pass."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config

from ffbench_lib.game.render import trade_parts
from ffbench_lib.game.rules.trades import parse_offer
from ffbench_lib.game.decisions.base import Decision, Outcome, market_from_view, register
from ffbench_lib.game.decisions._view_parts import VIEW, Trade
from ffbench_lib.game.decisions._trade import OfferAnswer


class ProposeAnswer(OfferAnswer):
    to_team: str | None = None


@with_config(VIEW)
class ProposeTradeView(Trade):
    """``Firewall.trade_view`` of a team that may open a negotiation."""

    decision: Literal["trade_propose"]


@register
class ProposeTrade(Decision):
    kind = "propose_trade"
    Answer = ProposeAnswer
    view_schema = ProposeTradeView
    tables = ("trade_steps", "trades")

    @classmethod
    def view(cls, fw, state, team, *, week: int, locked: set[str]) -> dict:
        return fw.trade_view(state, team, week, step="propose", locked=locked)

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        action = answer.get("action") if isinstance(answer, dict) else None
        offer, problem = None, None
        if action == "propose":
            offer, problem = parse_offer(answer, view["team"], str(answer.get("to_team")))
            if offer is not None:
                problem = market_from_view(view).problem(offer)
        elif action != "pass":
            problem = f"action must be 'propose' or 'pass' (got {action!r})"
        if problem or action == "pass":
            return Outcome("pass", "fallback" if problem else "agent", [problem] if problem else [], None)
        return Outcome(offer.from_side(view["team"]) | {"to_team": offer.b}, "agent", [], offer)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        return trade_parts(view, version)
