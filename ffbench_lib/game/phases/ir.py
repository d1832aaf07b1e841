"""Injured reserve (leagues with ``roster.IR`` slots): every week, week 1 included, before waivers, each team
with an IR decision to make (:func:`~ffbench_lib.game.decisions.ir_moves.worth_asking`) is asked for its moves (:mod:`ffbench_lib.game.decisions.ir_moves`); teams answer at once
(IR moves of different teams never interact). Players brought back are applied first, then players moved to
IR; a player dropped for a returning one leaves the roster (a transaction of kind ``ir_return``).

``state.extras["ir"]`` holds each team's IR players (``state.rosters`` holds every player a team holds, IR
included); a saved one must be what the recorded IR moves lead to."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.decisions.ir_moves import worth_asking
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season, weekly

if TYPE_CHECKING:
    from ffbench_lib.config.league import League

IR = REGISTRY["ir_moves"]


def start(league: "League", state: LeagueState) -> dict[str, list[str]]:
    return {t: [] for t in state.teams}


def check(league: "League", state: LeagueState, saved: Any) -> list[str]:
    """The saved IR lists must be the ones the recorded ``ir_moves`` rows lead to from empty lists, each within
    the league's IR slots and held by its team."""
    expected = start(league, state)
    for row in state.tables.get("ir_moves", []):
        team, pid, move = row.get("team"), row.get("player_id"), row.get("move")
        if team not in expected or move not in ("to_ir", "from_ir") or (move == "from_ir") != (pid in expected[team]):
            return [f"ir: a recorded IR move ({move!r} of {pid!r} by {team!r}) does not follow from the ones before"]
        if move == "to_ir":
            expected[team].append(pid)
        else:
            expected[team].remove(pid)
    if saved != expected:
        return ["ir: the saved IR lists are not what the recorded IR moves lead to"]
    out = [f"ir: {t} has {len(ids)} players on IR; the league has {league.roster.IR} IR slot(s)"
           for t, ids in expected.items() if len(ids) > league.roster.IR]
    out += [f"ir: {t}'s IR player {p} is not on its roster" for t, ids in expected.items() for p in ids
            if p not in state.rosters.get(t, [])]
    return out


@weekly("ir", order=5, applies=lambda league, w: league.roster.IR > 0, init_state=start, check_state=check)
async def ir_window(eng: Season, state: LeagueState, w: int) -> None:
    views = {t: IR.view(eng.fw, state, t, week=w) for t in state.teams}
    asked = [t for t in state.teams if worth_asking(views[t])]
    answers = await eng.ask_all([(t, "ir_moves", views[t]) for t in asked])
    mine = state.extras["ir"]
    for team, (answer, errs) in zip(asked, answers):
        view = views[team]
        out = IR.resolve(answer, view)
        eng.rec.decision(team=team, decision="ir_moves", view=view, answer=answer, applied=out.applied,
                         decided_by=out.decided_by, problems=errs + out.problems, week=w)
        status = {c["id"]: c.get("injury") for c in view["my_roster"] + view["ir"]}
        common = {"week": w, "team": team, "decided_by": out.decided_by, "position": eng.catalog.position,
                  "name": eng.catalog.name}
        for back in out.value["from_ir"]:
            mine[team].remove(back["player"])
            eng.rec.ir_move(move="from_ir", player=back["player"], drop=back["drop"],
                            status=status[back["player"]], **common)
            if back["drop"] is not None:
                state.rosters[team] = [p for p in state.rosters[team] if p != back["drop"]]
                eng.rec.transaction(week=w, team=team, kind="ir_return", add=None, drop=back["drop"], bid=None,
                                    position=eng.catalog.position, name=eng.catalog.name)
        for pid in out.value["to_ir"]:
            mine[team].append(pid)
            eng.rec.ir_move(move="to_ir", player=pid, drop=None, status=status[pid], **common)
