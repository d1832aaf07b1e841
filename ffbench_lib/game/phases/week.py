"""A week's lineups, then its scoring, as two phases so a live run can decide a week before its games are played:
every team's lineup (asked concurrently: an LLM league waits for the slowest model, not the sum), judged slot by
slot and held in ``state.decided``; then, with the actual points, the lineup rows and a regular-season week's
matchups and standings, or a playoff week's ``playoffs`` rows (every team sets a lineup either way)."""
from __future__ import annotations

from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.rules.lineup import BENCH, substituted
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season, weekly
from ffbench_lib.game.phases.playoffs import week_rows as playoff_rows

LINEUP = REGISTRY["set_lineup"]


@weekly("lineups", order=100, applies=lambda league, w: True)
async def set_lineups(eng: Season, state: LeagueState, w: int) -> None:
    views = {t: LINEUP.view(eng.fw, state, t, week=w) for t in state.teams}
    answers = await eng.ask_all([(t, "set_lineup", views[t]) for t in state.teams])
    for team, (answer, errs) in zip(state.teams, answers):
        out = LINEUP.resolve(answer, views[team])
        eng.rec.decision(team=team, decision="set_lineup", view=views[team], answer=answer, applied=out.applied,
                         decided_by=out.decided_by, problems=errs + out.problems, week=w)
        # the starters, then an ordered bench's players (roster.auto_subs) in its order
        state.decided[team] = [list(s) for s in out.value.starters()] + [[BENCH, pid, by]
                                                                          for pid, by in out.value.bench]


@weekly("scoring", order=110, applies=lambda league, w: True, after_games=True)
async def score_week(eng: Season, state: LeagueState, w: int) -> None:
    actual = eng.actual.get(w, {})
    roster = eng.league.roster
    if roster.auto_subs:  # a starter who did not play makes way for the first bench player who did
        played = eng.appeared.get(w, frozenset())
        state.decided = {team: [list(e) for e in substituted(state.decided[team], eng.catalog.position,
                                                             {p: True for p in played}, roster)]
                         for team in state.teams}
    totals = {team: eng.rec.lineup(w, team, state.decided[team], state.rosters[team], eng.catalog.position, actual)
              for team in state.teams}
    state.decided = {}
    eng.rec.dropped(w, eng.catalog.position, actual)
    if eng.league.playoff_round(w) is None:
        eng.rec.results(w, state.schedule[str(w)], totals)
    else:
        eng.rec.add("playoffs", playoff_rows(eng.league, state, w))
