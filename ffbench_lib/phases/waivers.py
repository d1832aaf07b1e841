"""Waivers and free agency, after a week's games and before the next week's lineups.

Every team may claim free agents at once (ranked (add, drop) pairs, blind FAAB bids or rolling priority).
Claims are then processed together: each round takes every team's best claim that can still be met; under
FAAB the highest bid wins (ties to the worse record) and pays, under rolling priority the first team in the
order wins and moves to its end; a claim on a player another team won is ``lost``, one that can no longer be
met (its drop already left, a cap, the budget) is ``skipped``. Then, if enabled, first-come free-agent adds:
every team answers at once and adds are served round by round, worse record first. Players dropped this week
wait for next week's waivers. The pool is every player known before the week (the draft pool, and anyone who
has played) on no roster."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..decisions import REGISTRY
from ..decisions.waiver_claims import apply_swap, best_free_agents, pool, swap_problem
from ..state import LeagueState
from . import Season, weekly

if TYPE_CHECKING:
    from ..config import League


def start(league: "League", state: LeagueState) -> dict[str, Any]:
    """FAAB: every team's season budget; rolling: priority in reverse draft order."""
    if league.waivers.mode == "faab":
        return {"faab": {t: league.waivers.budget for t in state.teams}}
    return {"order": state.draft_order[::-1]}


def check(league: "League", state: LeagueState, saved: Any) -> list[str]:
    teams = sorted(state.teams)
    if league.waivers.mode == "faab":
        faab = saved.get("faab") if isinstance(saved, dict) else None
        if not isinstance(faab, dict) or sorted(faab) != teams or any(
                type(v) is not int or not 0 <= v <= league.waivers.budget for v in faab.values()):
            return [f"waivers: FAAB budgets must be whole dollars in 0..{league.waivers.budget} for every team"]
        return []
    order = saved.get("order") if isinstance(saved, dict) else None
    if not isinstance(order, list) or sorted(order) != teams:
        return ["waivers: the waiver order must list every team once"]
    return []


@weekly("waivers", order=10, applies=lambda league, w: league.waivers.enabled and w > 1, init_state=start,
        check_state=check)
async def waiver_window(eng: Season, state: LeagueState, w: int) -> None:
    cfg = eng.league.waivers
    mine = state.extras["waivers"]
    players = pool(eng.fw, state, w)
    free = set(players)
    mode = cfg.mode
    best = best_free_agents(eng.fw, players, w)
    views = {t: REGISTRY["waiver_claims"].view(eng.fw, state, t, week=w, best=best,
                                               budget_left=mine["faab"][t] if mode == "faab" else None,
                                               priority=mine["order"].index(t) + 1 if mode == "rolling" else None)
             for t in state.teams}
    claims = await _ask(eng, state, w, "waiver_claims", views)
    worse_first = list(reversed(state.standings_order()))
    pending = {t: list(enumerate(claims[t], start=1)) for t in state.teams}
    while True:
        tops = {}
        for t in state.teams:
            while pending[t]:
                rank, c = pending[t][0]
                why = _unmet(eng, state, t, c, free, mine.get("faab"))
                if why is None:
                    tops[t] = (rank, c)
                    break
                pending[t].pop(0)
                _row(eng, state, w, "waivers", t, rank, c, why, claims)
        if not tops:
            break
        if mode == "faab":
            winner = max(tops, key=lambda t: (tops[t][1]["bid"], -worse_first.index(t)))
        else:
            winner = next(t for t in mine["order"] if t in tops)
        rank, c = tops[winner]
        pending[winner].pop(0)
        _win(eng, state, w, "waivers", winner, rank, c, free, claims)
        if mode == "faab":
            mine["faab"][winner] -= c["bid"]
        else:
            mine["order"] = [t for t in mine["order"] if t != winner] + [winner]
    if not cfg.free_agents:
        return
    best = best_free_agents(eng.fw, sorted(free), w)
    views = {t: REGISTRY["free_agent_adds"].view(eng.fw, state, t, week=w, best=best) for t in state.teams}
    adds = await _ask(eng, state, w, "free_agent_adds", views)
    for r in range(cfg.max_claims):
        for t in worse_first:
            if r < len(adds[t]):
                c = adds[t][r]
                why = _unmet(eng, state, t, c, free, None)
                if why is None:
                    _win(eng, state, w, "free_agents", t, r + 1, c, free, adds)
                else:
                    _row(eng, state, w, "free_agents", t, r + 1, c, why, adds)


async def _ask(eng: Season, state: LeagueState, w: int, kind: str, views: dict[str, dict]) -> dict[str, list]:
    """Every team's claims, judged and logged; the legal ones, best first, carry ``decided_by``."""
    answers = await eng.ask_all([(t, kind, views[t]) for t in state.teams])
    out: dict[str, list] = {}
    for team, (answer, errs) in zip(state.teams, answers):
        res = REGISTRY[kind].resolve(answer, views[team])
        eng.rec.decision(team=team, decision=kind, view=views[team], answer=answer, applied=res.applied,
                         decided_by=res.decided_by, problems=errs + res.problems, week=w)
        out[team] = [{**c, "decided_by": res.decided_by} for c in res.value]
    return out


def _unmet(eng: Season, state: LeagueState, team: str, c: dict[str, Any], free: set[str],
           faab: dict[str, int] | None) -> str | None:
    """Why a claim judged legal on the team's view cannot be met now, or None."""
    if c["add"] not in free:
        return "lost: another team got the player"
    problem = swap_problem(state.rosters[team], eng.catalog.position, free, c["add"], c["drop"],
                           eng.league.roster)
    if problem:
        return f"skipped: {problem}"
    if faab is not None and c["bid"] > faab[team]:
        return f"skipped: bid {c['bid']} is above the {faab[team]} dollars left"
    return None


def _row(eng, state, w, phase, team, rank, c, why, claims) -> None:
    result, _, reason = why.partition(": ")
    eng.rec.claim(week=w, phase=phase, team=team, rank=rank, add=c["add"], drop=c["drop"], bid=c["bid"],
                  result=result, reason=reason or None, decided_by=c["decided_by"])


def _win(eng, state, w, phase, team, rank, c, free, claims) -> None:
    apply_swap(state.rosters, team, c["add"], c["drop"])
    free.discard(c["add"])
    eng.rec.claim(week=w, phase=phase, team=team, rank=rank, add=c["add"], drop=c["drop"], bid=c["bid"],
                  result="won", reason=None, decided_by=c["decided_by"])
    eng.rec.transaction(week=w, team=team, kind="waiver" if phase == "waivers" else "free_agent", add=c["add"],
                        drop=c["drop"], bid=c["bid"], position=eng.catalog.position,
                        name=eng.catalog.name)
