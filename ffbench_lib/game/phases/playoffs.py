"""The playoffs: at each playoff week, before lineups, the week's bracket pairs (the seeds are fixed at the
first playoff week from the regular-season standings). The lineup view shows a team its playoff opponent from
them; the lineups phase scores the games into the ``playoffs`` table. The bracket rules are
:mod:`ffbench_lib.game.rules.playoffs`; a game's points are its team's lineup totals (the ``lineups`` table)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ffbench_lib.game.rules import playoffs as bracket_rules
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season, weekly

if TYPE_CHECKING:
    from ffbench_lib.config.league import League


def start(league: "League", state: LeagueState) -> dict[str, Any]:
    """No seeds and no pairs until the first playoff week."""
    return {"seeds": [], "pairs": {}}


def rounds(league: "League") -> list[list[int]]:
    return league.playoff_rounds()


def week_points(state: LeagueState, weeks: set[int] | range) -> dict[int, dict[str, float]]:
    """Every team's lineup total of the given weeks (summed in the rows' order and rounded to 0.01, exactly as
    the lineups phase totals them)."""
    out: dict[int, dict[str, float]] = {w: {} for w in weeks}
    for r in state.tables.get("lineups", []):
        if r["week"] in out:
            out[r["week"]][r["team"]] = out[r["week"]].get(r["team"], 0.0) + r["points"]
    return {w: {t: round(p, 2) for t, p in teams.items()} for w, teams in out.items()}


def seeds(league: "League", state: LeagueState) -> list[str]:
    return state.standings_order()[: league.playoffs.teams]


def expected(league: "League", state: LeagueState, through: int, with_rows: bool = True
             ) -> tuple[dict[str, Any], list[dict]]:
    """The bracket (seeds, pairs of every playoff week up to ``through``) and the ``playoffs`` rows of those weeks
    (unless not ``with_rows``) that the regular-season standings and the recorded lineup points lead to."""
    if through <= league.regular_weeks:
        return start(league, state), []
    top = seeds(league, state)
    weeks = range(league.regular_weeks + 1, through + 1)
    pts = week_points(state, weeks)
    pairs = bracket_rules.bracket(top, rounds(league), pts, through)
    if not with_rows:
        return {"seeds": top, "pairs": pairs}, []
    rows = [row for w in weeks for row in _rows(league, state, top, pairs[str(w)], w, pts)]
    return {"seeds": top, "pairs": pairs}, rows


def _rows(league: "League", state: LeagueState, top: list[str], pairs: list, w: int,
          pts: dict[int, dict[str, float]]) -> list[dict]:
    rnd = league.playoff_round(w)
    rows = bracket_rules.week_rows(top, pairs, rnd, rounds(league)[rnd - 1], w, pts)
    return [{**{k: r[k] for k in ("week", "round", "team")}, "agent": state.agent_ids[r["team"]],
             **{k: v for k, v in r.items() if k not in ("week", "round", "team")}} for r in rows]


def week_rows(league: "League", state: LeagueState, w: int) -> list[dict]:
    """The ``playoffs`` rows of week ``w`` (after its lineups are recorded)."""
    mine = state.extras["playoffs"]
    rnd_weeks = rounds(league)[league.playoff_round(w) - 1]
    pts = week_points(state, {x for x in rnd_weeks if x <= w})
    return _rows(league, state, mine["seeds"], mine["pairs"][str(w)], w, pts)


def check(league: "League", state: LeagueState, saved: Any) -> list[str]:
    """A saved bracket must be the one the regular-season standings and the recorded lineup points lead to, and
    the ``playoffs`` table its games."""
    last = state.last_completed_week()
    try:
        bracket, rows = expected(league, state, last)
        if state.decided_week():  # a decided week has its pairs set, not yet its games
            bracket = expected(league, state, state.decided_week(), with_rows=False)[0]
    except (KeyError, TypeError, ValueError) as exc:
        return [f"playoffs: the recorded lineups do not give every bracket team's points ({type(exc).__name__}: "
                f"{exc})"]
    out = []
    final = [r.get("team") for r in sorted((r for r in state.tables.get("standings", [])
                                             if r.get("week") == league.regular_weeks), key=lambda r: r.get("rank") or 0)]
    if last > league.regular_weeks and final[: league.playoffs.teams] != bracket["seeds"]:
        out.append("playoffs: the seeds from the records are not the top of the final regular-season standings")
    if saved != bracket:
        out.append("playoffs: the saved bracket (seeds and pairs) is not what the regular-season standings and the "
                   "recorded lineup points lead to")
    if state.tables.get("playoffs", []) != rows:
        out.append("playoffs: the playoffs table is not what the bracket and the recorded lineup points lead to")
    return out


@weekly("playoffs", order=90, applies=lambda league, w: league.playoff_round(w) is not None, init_state=start,
        check_state=check)
async def playoff_pairs(eng: Season, state: LeagueState, w: int) -> None:
    """Seed the bracket at the first playoff week; set this week's pairs."""
    lg = eng.league
    mine = state.extras["playoffs"]
    if not mine["seeds"]:
        mine["seeds"] = seeds(lg, state)
    earlier = {x for r in rounds(lg) for x in r if x < w}
    pairs = bracket_rules.bracket(mine["seeds"], rounds(lg), week_points(state, earlier), w)
    mine["pairs"][str(w)] = pairs[str(w)]
