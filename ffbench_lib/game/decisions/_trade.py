"""What the four trade decisions share: reading an offer from an answer, judging it with the trade rules
against the rosters the view shows, and the prompt fields."""
from __future__ import annotations

from typing import Any, ClassVar

from ffbench_lib.game.render import trade_parts
from ffbench_lib.game.rules.trades import Offer, parse_offer
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, market_from_view


class OfferAnswer(AnswerModel):
    action: str
    give: list[str] | None = None
    get: list[str] | None = None


class TradeReply(Decision):
    """A reply to the offer on the table: one of ``actions``; ``counter`` (if any) is a new offer of the same
    size; an illegal answer becomes ``default``. Offers are kept proposer -> receiver (``actor_proposes``)."""

    actions: ClassVar[tuple[str, ...]]
    counter: ClassVar[str | None] = None
    default: ClassVar[str]
    actor_proposes: ClassVar[bool] = False
    Answer = OfferAnswer
    tables = ("trade_steps", "trades")

    @classmethod
    def view(cls, fw, state, team, *, week: int, offer: dict, counterparty: str, history: list[dict] | None,
             locked: set[str]) -> dict:
        return fw.trade_view(state, team, week, offer=offer, counterparty=counterparty, step=cls.kind,
                             history=history, locked=locked)

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        me, other = view["team"], view["offer"]["from_team"]
        action = answer.get("action") if isinstance(answer, dict) else None
        problems: list[str] = []
        offer = None
        if action not in cls.actions:
            problems.append(f"action must be one of {sorted(cls.actions)} (got {action!r})")
        elif action == cls.counter:
            mine, problem = parse_offer(answer, me, other)
            if mine is not None:
                offer = mine if cls.actor_proposes else Offer(other, me, mine.b_gives, mine.a_gives)
                problem = market_from_view(view).problem(offer, len(view["offer"]["you_give"]))
            if problem:
                problems.append(problem)
                offer = None
        if problems:
            action = cls.default
        return Outcome(offer.from_side(me) if offer else action, "fallback" if problems else "agent", problems,
                       (action, offer))

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        return trade_parts(view, version)
