"""``waiver_claims``: after a week's games, each team may claim free agents: a ranked list of (add, drop) pairs,
with a blind bid under FAAB. Claims are processed for all teams together (:mod:`ffbench_lib.phases.waivers`).

Legal claim: the player added is a free agent the view shows, the player dropped is on the team's roster, the
roster afterwards respects the caps and fields a lineup, a FAAB bid is a whole number within the budget left,
and no player is claimed twice; at most ``max_claims``. Illegal claims are dropped (the legal ones kept, the
decision marked ``fallback``); an unreadable answer claims nobody."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..render import WEEK, record, table
from ..rules.waivers import bid_problem, swap_problem
from .base import AnswerModel, Decision, Outcome, register, roster_from_rules

MODE_RULES = {
    "faab": ("Waivers are FAAB blind bids: you have {budget_left} of {budget} dollars left for the season. For each "
             "player the highest bid wins (a tie goes to the team with the worse record) and pays its bid."),
    "rolling": ("Waivers go by rolling priority: you are number {priority} of {teams} in the order. The first team "
                "in the order that claims a player gets him and moves to the end of the order."),
    "free_agents": ("Waivers have cleared; the players below are free agents. Adds are first come: teams with worse "
                    "records are served first, and a player already taken is skipped."),
}


class Claim(BaseModel):
    add: str
    drop: str
    bid: int | None = None


class ClaimsAnswer(AnswerModel):
    claims: list[Claim]


def free_agent_ids(view: dict) -> list[str]:
    return [c["id"] for cards in view["free_agents"].values() for c in cards]


@register
class WaiverClaims(Decision):
    kind = "waiver_claims"
    Answer = ClaimsAnswer

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        claims = answer.get("claims") if isinstance(answer, dict) else None
        if not isinstance(claims, list):
            return Outcome([], "fallback", ["no 'claims' list in the answer (an empty list claims nobody)"], [])
        problems: list[str] = []
        if len(claims) > view["max_claims"]:
            problems.append(f"{len(claims)} claims; at most {view['max_claims']}: the first {view['max_claims']} kept")
        mine = [c["id"] for c in view["my_roster"]]
        free = set(free_agent_ids(view))
        positions = {c["id"]: c["pos"] for c in view["my_roster"]}
        positions.update({c["id"]: c["pos"] for cards in view["free_agents"].values() for c in cards})
        roster = roster_from_rules(view["rules"])
        kept: list[dict[str, Any]] = []
        for i, claim in enumerate(claims[: view["max_claims"]], start=1):
            if not isinstance(claim, dict):
                problems.append(f"claim {i}: not an object with 'add' and 'drop'")
                continue
            add, drop = claim.get("add"), claim.get("drop")
            add, drop = (str(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in (add, drop))
            problem = swap_problem(mine, positions, free, add, drop, roster)
            if problem is None and any(k["add"] == add for k in kept):
                problem = f"{add} is claimed twice"
            bid = 0
            if problem is None and view["mode"] == "faab":
                problem = bid_problem(claim.get("bid"), view["budget_left"])
                bid = int(claim["bid"]) if problem is None else 0
            if problem:
                problems.append(f"claim {i}: {problem}")
            else:
                kept.append({"add": add, "drop": drop, "bid": bid if view["mode"] == "faab" else None})
        return Outcome(kept, "fallback" if problems else "agent", problems, kept)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        rules = view["rules"]
        free = "\n\n".join(f"{pos}\n{table(cards, WEEK)}" for pos, cards in view["free_agents"].items())
        bid = ', "bid": <whole dollars>' if view["mode"] == "faab" else ""
        return {"kind": cls.kind, "week": view["week"], "weeks": rules["weeks"], "weeks_left": view["weeks_left"],
                "record": record(view["record"]), "roster_size": len(view["my_roster"]),
                "mode_rules": MODE_RULES[view["mode"]].format(**view, teams=rules["teams"]),
                "max_claims": view["max_claims"], "my_roster": table(view["my_roster"], WEEK), "free_agents": free,
                "bid_schema": bid}
