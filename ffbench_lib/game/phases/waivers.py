"""Waivers and free agency, after a week's games and before the next week's lineups.

Every team may claim free agents at once (ranked (add, drop) pairs, blind FAAB bids or rolling priority).
Claims are then processed together, one at a time: under FAAB the highest bid in the league first (ties: the
worse record, then the team's own ranking), and the winner pays; under rolling priority the first team in the
order that has a claim left, its best claim first, and a winner moves to the end of the order. A claim on a
player another team already won is ``lost``; one that can no longer be met (its drop already left, a cap, the
budget left) is ``skipped``. Then, if enabled, first-come free-agent adds:
every team answers at once and adds are served round by round, worse record first. Players dropped this week
wait for next week's waivers. The pool is every player known before the week (the draft pool, and anyone who
has played) on no roster."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.decisions.waiver_claims import apply_swap, bid_problem, free_agent_lists, pool, swap_problem
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season, weekly

if TYPE_CHECKING:
    from ffbench_lib.config.league import League


def start(league: "League", state: LeagueState) -> dict[str, Any]:
    """FAAB: every team's season budget; rolling: priority in reverse draft order."""
    if league.waivers.mode == "faab":
        return {"faab": {t: league.waivers.budget for t in state.teams}}
    return {"order": state.draft_order[::-1]}


def check(league: "League", state: LeagueState, saved: Any) -> list[str]:
    """A saved waiver state must be the one its recorded transactions lead to from the start: every budget less
    its won bids (never below 0), the order with each winner moved to the end as it won; and the transactions
    must be the won claims of ``waiver_claims``, in order."""
    expected = start(league, state)
    for row in state.tables.get("transactions", []):
        team, bid = row.get("team"), row.get("bid")
        if row.get("kind") != "waiver":
            continue
        if team not in state.teams or ("faab" in expected and (type(bid) is not int or bid < 0)):
            return [f"waivers: a recorded waiver move names team {team!r} and bid {bid!r}"]
        if "faab" in expected:
            expected["faab"][team] -= bid
        else:
            expected["order"] = [t for t in expected["order"] if t != team] + [team]
    if saved != expected:
        what = "FAAB budgets" if "faab" in expected else "waiver order"
        return [f"waivers: the saved {what} are not what the recorded waiver moves lead to"]
    spent = [t for t, left in expected.get("faab", {}).items() if left < 0]
    if spent:
        return [f"waivers: {spent[0]}'s recorded winning bids exceed its FAAB budget of {league.waivers.budget}"]
    kind = {"waivers": "waiver", "free_agents": "free_agent"}
    won = [(r.get("week"), r.get("team"), kind.get(r.get("phase")), r.get("add"), r.get("drop"), r.get("bid"))
           for r in state.tables.get("waiver_claims", []) if r.get("result") == "won"]
    moved = [(r.get("week"), r.get("team"), r.get("kind"), r.get("add"), r.get("drop"), r.get("bid"))
             for r in state.tables.get("transactions", []) if r.get("kind") in kind.values()]
    if won != moved:
        i = next((i for i, (a, b) in enumerate(zip(won, moved)) if a != b), min(len(won), len(moved)))
        return [f"waivers: the won claims of waiver_claims are not the waiver and free-agent transactions (first "
                f"difference: claim {won[i] if i < len(won) else None}, transaction "
                f"{moved[i] if i < len(moved) else None})"]
    return []


@weekly("waivers", order=10, applies=lambda league, w: league.waivers.enabled and w > 1, init_state=start,
        check_state=check)
async def waiver_window(eng: Season, state: LeagueState, w: int) -> None:
    cfg = eng.league.waivers
    mine = state.extras["waivers"]
    players = pool(eng.fw, state, w)
    free = set(players)
    mode = cfg.mode
    best = free_agent_lists(eng.fw, players, w, state.teams)
    views = {t: REGISTRY["waiver_claims"].view(eng.fw, state, t, week=w, best=best[t],
                                               budget_left=mine["faab"][t] if mode == "faab" else None,
                                               priority=mine["order"].index(t) + 1 if mode == "rolling" else None)
             for t in state.teams}
    claims = await _ask(eng, state, w, "waiver_claims", views)
    worse_first = list(reversed(state.standings_order()))
    pending = [(t, rank, c) for t in state.teams for rank, c in enumerate(claims[t], start=1)]
    while pending:
        if mode == "faab":  # the highest bid in the league first; ties: the worse record, then the team's own order
            pending.sort(key=lambda x: (-x[2]["bid"], worse_first.index(x[0]), x[1]))
        else:  # the first team in the order that has a claim left, its best claim first
            pending.sort(key=lambda x: (mine["order"].index(x[0]), x[1]))
        t, rank, c = pending.pop(0)
        why = _unmet(eng, state, t, c, free, mine.get("faab"))
        if why is not None:
            _row(eng, w, "waivers", t, rank, c, why)
            continue
        _win(eng, state, w, "waivers", t, rank, c, free)
        if mode == "faab":
            mine["faab"][t] -= c["bid"]
        else:
            mine["order"] = [x for x in mine["order"] if x != t] + [t]
    if not cfg.free_agents:
        return
    best = free_agent_lists(eng.fw, sorted(free), w, state.teams)
    views = {t: REGISTRY["free_agent_adds"].view(eng.fw, state, t, week=w, best=best[t]) for t in state.teams}
    adds = await _ask(eng, state, w, "free_agent_adds", views)
    for r in range(cfg.max_claims):
        for t in worse_first:
            if r < len(adds[t]):
                c = adds[t][r]
                why = _unmet(eng, state, t, c, free, None)
                if why is None:
                    _win(eng, state, w, "free_agents", t, r + 1, c, free)
                else:
                    _row(eng, w, "free_agents", t, r + 1, c, why)


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
    problem = swap_problem(state.active(team), eng.catalog.position, free, c["add"], c["drop"],
                           eng.league.roster)
    if problem:
        return f"skipped: {problem}"
    problem = bid_problem(c["bid"], faab[team]) if faab is not None else None
    if problem:
        return f"skipped: {problem}"
    return None


def _row(eng: Season, w: int, phase: str, team: str, rank: int, c: dict[str, Any], why: str) -> None:
    result, _, reason = why.partition(": ")
    eng.rec.claim(week=w, phase=phase, team=team, rank=rank, add=c["add"], drop=c["drop"], bid=c["bid"],
                  result=result, reason=reason or None, decided_by=c["decided_by"])


def _win(eng: Season, state: LeagueState, w: int, phase: str, team: str, rank: int, c: dict[str, Any],
         free: set[str]) -> None:
    apply_swap(state.rosters, team, c["add"], c["drop"])
    free.discard(c["add"])
    eng.rec.claim(week=w, phase=phase, team=team, rank=rank, add=c["add"], drop=c["drop"], bid=c["bid"],
                  result="won", reason=None, decided_by=c["decided_by"])
    eng.rec.transaction(week=w, team=team, kind="waiver" if phase == "waivers" else "free_agent", add=c["add"],
                        drop=c["drop"], bid=c["bid"], position=eng.catalog.position,
                        name=eng.catalog.name)
