"""A week's lineups and scoring: every team's lineup (asked concurrently: an LLM league waits for the slowest
model, not the sum), judged slot by slot, then scored with the actual points: a regular-season week into the
matchups and standings, a playoff week into the ``playoffs`` table (every team sets a lineup either way)."""
from __future__ import annotations

from ..decisions import REGISTRY
from ..state import LeagueState
from . import Season, weekly
from .playoffs import week_rows as playoff_rows

LINEUP = REGISTRY["set_lineup"]


@weekly("lineups", order=100, applies=lambda league, w: True)
async def play_week(eng: Season, state: LeagueState, w: int) -> None:
    views = {t: LINEUP.view(eng.fw, state, t, week=w) for t in state.teams}
    answers = await eng.ask_all([(t, "set_lineup", views[t]) for t in state.teams])
    actual = eng.actual.get(w, {})
    totals: dict[str, float] = {}
    for team, (answer, errs) in zip(state.teams, answers):
        out = LINEUP.resolve(answer, views[team])
        eng.rec.decision(team=team, decision="set_lineup", view=views[team], answer=answer, applied=out.applied,
                         decided_by=out.decided_by, problems=errs + out.problems, week=w)
        totals[team] = eng.rec.lineup(w, team, out.value.starters(), state.rosters[team], eng.catalog.position,
                                      actual)
    eng.rec.dropped(w, eng.catalog.position, actual)
    if eng.league.playoff_round(w) is None:
        eng.rec.results(w, state.schedule[str(w)], totals)
    else:
        eng.rec.add("playoffs", playoff_rows(eng.league, state, w))
