"""A trade window: every team, in a seeded order, may open one negotiation of at most four steps (propose;
accept, reject or counter; accept, withdraw or final counter; accept or reject).

All opening proposals are requested at once from the rosters as the window opens; when an accepted trade has
changed any roster before a team's turn, its proposal is superseded (logged) and it is asked again with the
current rosters. A player traded this week is locked until the window closes. Offers are stored
proposer -> receiver; each side sees its own side ("you give" / "you get")."""
from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.rules import trades as trade_rules
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season, weekly


#: steps 2-4 alternate: receiver, proposer, receiver
STEPS = ((2, "receiver", "respond_to_offer"), (3, "proposer", "reply_to_counter"), (4, "receiver", "final_decision"))


@weekly("trades", order=50, applies=lambda league, w: w in league.trades.weeks)
async def trade_window(eng: Season, state: LeagueState, w: int) -> None:
    rng = np.random.default_rng([eng.league.seed, 0x7EAD, w])
    order = [state.teams[i] for i in rng.permutation(len(state.teams))]
    window = Window(eng, state, w)
    opening: dict[str, tuple[dict, asyncio.Task | None]] = {}
    if not eng.league.llm.sequential:
        for team in order:
            view = REGISTRY["propose_trade"].view(eng.fw, state, team, week=w, locked=window.locked)
            opening[team] = (view, asyncio.create_task(eng.ask(team, "propose_trade", view)))
    for n, proposer in enumerate(order, start=1):
        first = None
        if proposer in opening:
            view, task = opening.pop(proposer)
            ans, errs = await task
            if window.done == 0:
                first = (view, ans, errs)
            else:
                eng.rec.decision(team=proposer, decision="propose_trade", view=view, answer=ans,
                                 applied="superseded", decided_by="agent", week=w, step=1,
                                 problems=["rosters changed by an earlier trade this week; asked again"],
                                 extra={"negotiation": f"w{w}-n{n}"})
        await window.negotiate(f"w{w}-n{n}", proposer, first)


def _rationale(ans: Any) -> str | None:
    r = ans.get("rationale") if isinstance(ans, dict) else None
    return str(r)[:2000] if r is not None else None


class Window:
    """One week's trade window: the players locked so far and the trades done."""

    def __init__(self, eng: Season, state: LeagueState, w: int):
        self.eng, self.state, self.w = eng, state, w
        self.locked: set[str] = set()
        self.done = 0

    def _step(self, neg: str, step: int, actor: str, action: str, offer: trade_rules.Offer | None,
              rationale: str | None, by: str, problems: list[str]) -> None:
        self.eng.rec.trade_step(week=self.w, negotiation=neg, step=step, actor=actor, action=action,
                                proposer=offer.a if offer else actor, receiver=offer.b if offer else None,
                                proposer_gives=list(offer.a_gives) if offer else [],
                                receiver_gives=list(offer.b_gives) if offer else [], rationale=rationale,
                                decided_by=by, reason="; ".join(problems) or None)

    async def negotiate(self, neg: str, proposer: str, first: tuple[dict, Any, list[str]] | None = None) -> None:
        eng, state, w = self.eng, self.state, self.w
        history: dict[str, list[dict]] = {}

        def remember(step: int, actor: str, action: str, offer: trade_rules.Offer, text: str | None) -> None:
            for side in (offer.a, offer.b):
                entry = {"step": step, "by": "you" if side == actor else actor, "action": action,
                         **offer.from_side(side)}
                if side != actor and text:
                    entry["their_rationale_untrusted"] = text
                history.setdefault(side, []).append(entry)

        # step 1: propose (asked when the window opened if no roster has changed since)
        if first is not None:
            view, ans, errs = first
        else:
            view = REGISTRY["propose_trade"].view(eng.fw, state, proposer, week=w, locked=self.locked)
            ans, errs = await eng.ask(proposer, "propose_trade", view)
        out = REGISTRY["propose_trade"].resolve(ans, view)
        problems = errs + out.problems
        eng.rec.decision(team=proposer, decision="propose_trade", view=view, answer=ans, applied=out.applied,
                         decided_by=out.decided_by, problems=problems, week=w, step=1, extra={"negotiation": neg})
        offer = out.value
        if offer is None:
            self._step(neg, 1, proposer, "pass", None, _rationale(ans), out.decided_by, problems)
            return
        self._step(neg, 1, proposer, "propose", offer, _rationale(ans), "agent", [])
        remember(1, proposer, "propose", offer, _rationale(ans))
        receiver = offer.b
        current = offer
        for step, role, kind in STEPS:
            actor = proposer if role == "proposer" else receiver
            other = receiver if role == "proposer" else proposer
            view = REGISTRY[kind].view(eng.fw, state, actor, week=w, offer=current.from_side(actor), counterparty=other,
                                       history=list(history.get(actor, [])) or None, locked=self.locked)
            ans, errs = await eng.ask(actor, kind, view)
            out = REGISTRY[kind].resolve(ans, view)
            action, new_offer = out.value
            problems = errs + out.problems
            eng.rec.decision(team=actor, decision=kind, view=view, answer=ans, applied=out.applied,
                             decided_by=out.decided_by, problems=problems, week=w, step=step,
                             extra={"negotiation": neg})
            self._step(neg, step, actor, action, new_offer or current, _rationale(ans), out.decided_by, problems)
            if action == "accept":
                trade_rules.apply_offer(state, current)
                self.locked.update(current.a_gives + current.b_gives)
                self.done += 1
                eng.rec.trade(week=w, negotiation=neg, proposer=proposer, receiver=receiver,
                              proposer_gives=list(current.a_gives), receiver_gives=list(current.b_gives),
                              accepted_step=step, made_by=out.decided_by)
                return
            if new_offer is None:
                return  # reject / withdraw (or a repaired answer)
            remember(step, actor, action, new_offer, _rationale(ans))
            current = new_offer
