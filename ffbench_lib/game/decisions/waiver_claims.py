"""``waiver_claims``: after a week's games, each team may claim free agents: a ranked list of (add, drop) pairs,
with a blind bid under FAAB. Claims are processed for all teams together (:mod:`ffbench_lib.game.phases.waivers`).

The view: the team's roster and record, its budget left (FAAB) or place in the order (rolling), and the best
free agents per position with their form to date. The pool is every player known before the week (the draft
pool, and anyone who has played) on no roster, so a player who first plays in week 9 is not in it before
week 10. Legal claim: the player added is a free agent the view shows, the player dropped is on the team's
roster, the roster afterwards respects the caps and fields a lineup, a FAAB bid is a whole number within the
budget left, and no player is claimed twice; at most ``max_claims``. In a league with IR slots the roster is
the team's active players, and a claim may name no drop (``"drop": null``) while the team has fewer active
players than ``roster.size`` (a spot freed by moving a player to IR). Illegal claims are dropped (the legal
ones kept, the decision marked ``fallback``); an unreadable answer claims nobody. The rules below are the one
place this legality lives: the processing re-checks claims with them and bots enumerate legal claims with
:func:`legal_swaps` (the rules own the legal actions, as in OpenSpiel)."""
from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterator, Literal, Mapping, Sequence

from pydantic import BaseModel, with_config

from ffbench_lib.config.league import Roster
from ffbench_lib.game.render import WEEK, record, table
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register, roster_from_rules
from ffbench_lib.game.decisions._view_parts import VIEW, Claims

if TYPE_CHECKING:
    from ffbench_lib.game.state import LeagueState
    from ffbench_lib.game.views import Firewall

# ------------------------------------------------------------------------------------------------ legality
def swap_problem(roster_ids: Sequence[str], positions: Mapping[str, str], free: Sequence[str] | set[str], add: Any,
                 drop: Any, roster: Roster) -> str | None:
    """Why adding ``add`` and dropping ``drop`` is illegal for a team holding ``roster_ids``, or None."""
    if not isinstance(add, str) or add not in free:
        return f"{add!r} is not an available free agent"
    if drop is None and len(roster_ids) < roster.size:
        pass  # an open active spot (IR leagues): nobody needs to go
    elif not isinstance(drop, str) or drop not in roster_ids:
        return f"{drop!r} is not on your roster"
    after = [positions[p] for p in roster_ids if p != drop] + [positions[add]]
    move = f"adding {add} for {drop}" if drop is not None else f"adding {add} without a drop"
    capped = within_caps(after, roster)
    if capped:
        return f"{move}: {capped}"
    if not can_field_lineup(after, roster):
        return f"{move} leaves a roster that cannot field a legal lineup"
    return None


def bid_problem(bid: Any, budget_left: int) -> str | None:
    """Why ``bid`` is not a legal FAAB bid, or None."""
    if isinstance(bid, bool) or not isinstance(bid, (int, float)) or not math.isfinite(bid) or bid != int(bid):
        return f"bid {bid!r} must be a whole number of dollars"
    if not 0 <= bid <= budget_left:
        return f"bid {int(bid)} is outside 0..{budget_left} (the budget left)"
    return None


def legal_swaps(roster_ids: Sequence[str], positions: Mapping[str, str], free: Sequence[str],
                roster: Roster) -> Iterator[tuple[str, str]]:
    """Every legal (add, drop) pair, free agents in the order given, drops in roster order (then no drop, while
    an active spot is open). Legality depends only on the two players' positions, so :func:`swap_problem` is
    asked once per pair of positions; and within them only on the roster's positions afterwards, so its answer is
    kept per (roster rules, positions afterwards) for every later call (bots ask for every team every week)."""
    verdict: dict[tuple[str, str | None], bool] = {}
    drops: list[str | None] = [*roster_ids, *([None] if len(roster_ids) < roster.size else [])]
    base = Counter(positions[p] for p in roster_ids)
    known = _known_swaps(roster)
    for add in free:
        for drop in drops:
            key = (positions[add], positions[drop] if drop is not None else None)
            if key not in verdict:
                after = base.copy()
                if drop is not None:
                    after[key[1]] -= roster_ids.count(drop)
                after[key[0]] += 1
                shape = tuple(sorted((pos, n) for pos, n in after.items() if n))
                if shape not in known:
                    known[shape] = swap_problem(roster_ids, positions, free, add, drop, roster) is None
                verdict[key] = known[shape]
            if verdict[key]:
                yield add, drop


#: id(roster) -> (roster, {positions afterwards: legal}); the roster is held, so its id is not reused meanwhile
_SWAPS: dict[int, tuple[Roster, dict[tuple[tuple[str, int], ...], bool]]] = {}


def _known_swaps(roster: Roster) -> dict[tuple[tuple[str, int], ...], bool]:
    """The legality of a roster's positions after a swap, kept per roster rules (a :class:`Roster` is frozen)."""
    held = _SWAPS.get(id(roster))
    if held is None or held[0] is not roster:
        if len(_SWAPS) >= 16:
            _SWAPS.clear()
        held = _SWAPS[id(roster)] = (roster, {})
    return held[1]


def apply_swap(rosters: dict[str, list[str]], team: str, add: str, drop: str | None) -> None:
    rosters[team] = [p for p in rosters[team] if p != drop] + [add]


# ---------------------------------------------------------------------------------------------------- views
def pool(fw: "Firewall", state: "LeagueState", w: int) -> list[str]:
    """Every player known before week ``w`` who is on no roster (sorted by id): the waiver pool. A player
    dropped earlier this week (for a player back from IR) waits for next week's waivers."""
    dropped = {r["drop"] for r in state.tables.get("transactions", []) if r["week"] == w}
    return sorted(fw.week(w).known_players() - state.drafted() - dropped)


def best_free_agents(fw: "Firewall", players: list[str], w: int, protected: bool = False
                     ) -> dict[str, list[dict[str, Any]]]:
    """The best ``waivers.show_per_position`` of ``players`` per position by this week's projection (then points
    to date, then id), as seen before week ``w``: built once per window, shown in every team's view. ``protected``:
    the list of the teams shown protected numbers, by the protected projection (``Protector.ranked``), so that
    which players it holds says no more than their cards."""
    k, lg = fw.week(w), fw.league
    out: dict[str, list[dict[str, Any]]] = {}
    for pos in lg.roster.holdable:
        mine = [p for p in players if fw.position[p] == pos]
        ids = (fw.protector.ranked(mine, "proj_week", w) if protected else
               sorted(mine, key=lambda p: (-(k.projection.get(p) or 0.0), -k.points.get(p, 0.0), p)))
        out[pos] = [fw.player_week(p, w) for p in ids[: lg.waivers.show_per_position]]
    return out


def free_agent_lists(fw: "Firewall", players: list[str], w: int, teams: list[str]) -> dict[str, dict]:
    """team -> the free-agent lists its view shows (:func:`best_free_agents`; the protected lists only for the
    teams shown protected numbers), each built once."""
    built = {p: best_free_agents(fw, players, w, p) for p in {t in fw.protected_teams for t in teams}}
    return {t: built[t in fw.protected_teams] for t in teams}


def claims_view(fw: "Firewall", state: "LeagueState", team: str, w: int, mode: str,
                best: dict[str, list[dict[str, Any]]], budget_left: int | None = None,
                priority: int | None = None) -> dict[str, Any]:
    """Waiver claims (``mode`` faab / rolling) or free-agent adds (``free_agents``) as seen by ``team``."""
    lg = fw.league
    return {"decision": mode if mode == "free_agents" else "waivers", "season": lg.season, "week": w,
            "team": team, "rules": fw.rules(), "mode": mode, "budget": lg.waivers.budget,
            "budget_left": budget_left, "priority": priority, "max_claims": lg.waivers.max_claims,
            "weeks_left": lg.weeks - w + 1, "record": fw.record(state, team),
            "my_roster": [fw.player_week(p, w) for p in sorted(state.active(team))],
            "free_agents": {pos: list(cards) for pos, cards in best.items()}}  # the cards are read-only, shared


# --------------------------------------------------------------------------------------------------- answers
MODE_RULES = {
    "faab": ("Waivers are FAAB blind bids: you have {budget_left} of {budget} dollars left for the season. Bids "
             "are processed highest first across the league, so each player goes to his highest bidder (a tie goes "
             "to the team with the worse record, then to the claim you ranked higher), who pays the bid."),
    "rolling": ("Waivers go by rolling priority: you are number {priority} of {teams} in the order. The first team "
                "in the order that claims a player gets him and moves to the end of the order."),
    "free_agents": ("Waivers have cleared; the players below are free agents. Adds are first come: teams with worse "
                    "records are served first, and a player already taken is skipped."),
}


class Claim(BaseModel):
    add: str
    drop: str | None  # None: into an open active spot (IR leagues)
    bid: int | None = None


class ClaimsAnswer(AnswerModel):
    claims: list[Claim]


def free_agent_ids(view: dict) -> list[str]:
    return [c["id"] for cards in view["free_agents"].values() for c in cards]


@with_config(VIEW)
class WaiverClaimsView(Claims):
    """``claims_view`` of waivers (FAAB: ``budget_left``; rolling: ``priority``)."""

    decision: Literal["waivers"]
    mode: Literal["faab", "rolling"]


@register
class WaiverClaims(Decision):
    kind = "waiver_claims"
    Answer = ClaimsAnswer
    view_schema = WaiverClaimsView
    tables = ("waiver_claims", "transactions")

    mode: str | None = None  # None: the league's (faab / rolling)

    @classmethod
    def view(cls, fw, state, team, *, week: int, best: dict, budget_left: int | None = None,
             priority: int | None = None) -> dict:
        return claims_view(fw, state, team, week, cls.mode or fw.league.waivers.mode, best, budget_left, priority)

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
                "bid_schema": bid, "open_spots": _open_spots(view)}


def _open_spots(view: dict) -> str:
    """The prompt's sentence about open active spots (only a team with a player on IR has one)."""
    n = roster_from_rules(view["rules"]).size - len(view["my_roster"])
    if n <= 0:
        return ""
    return (f"\nYou have {n} open roster spot(s) (a player moved to IR): while a spot is open a claim may add a "
            'player without dropping anyone ("drop": null).')
