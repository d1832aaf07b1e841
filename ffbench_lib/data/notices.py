"""What a user is told before a season is played (``ffbench validate`` and ``ffbench run``, on stderr; run.json
keeps it): inputs the season lacks, which it is run without, and LLMs that may have read the season's results.

A model may know the results when its ``knowledge_cutoff`` is on or after the last game the league scores (the
last game date of its weeks in the schedules file) or the season's end (the last game date of the season there,
playoffs included where the file lists them). A month cutoff counts as the month's last day: a warning too many
is cheap, a contaminated ranking read as skill is not. Models without a cutoff are never guessed at.
"""
from __future__ import annotations

import calendar
import sys
from datetime import date
from typing import Any

import pandas as pd

from ffbench_lib.config.league import League, LLMAgent
from ffbench_lib.data import fpl
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.base import DataError
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.prepare import unavailable_inputs


def cutoff_date(text: str) -> date:
    """The last day a cutoff covers: ``2024-06`` -> 2024-06-30; ``2024-06-15`` -> itself."""
    parts = [int(x) for x in text.split("-")]
    last = calendar.monthrange(parts[0], parts[1])[1]
    return date(parts[0], parts[1], min(parts[2], last) if len(parts) == 3 else last)


def _season_dates(league: League) -> dict[str, Any]:
    """The season's end and the end of the league's weeks, from the nflverse schedules file (dates as text), or
    a Premier League season's fixture list (the league's gameweeks' last kickoffs)."""
    if league.data.source == "fpl":
        return _fixture_dates(league)
    try:
        games, path = NflverseDir(league.data.resolved_dir()).season_calendar(league.season)
    except DataError as exc:
        return {"problem": str(exc)}
    if games.empty:
        return {"problem": f"{league.season}: no games in the schedules file"}
    reg = games[(games["game_type"] == "REG") & (games["week"] <= league.weeks)]
    week_end = {int(w): d.isoformat() for w, d in reg.groupby("week")["gameday"].max().items()}
    return {"season_end": games["gameday"].max().isoformat(), "league_end": reg["gameday"].max().isoformat()
            if len(reg) else None, "week_end": week_end, "playoffs_listed": bool((games["game_type"] != "REG").any()),
            "schedules_file": path.name}


def _fixture_dates(league: League) -> dict[str, Any]:
    name = league.sport_spec.season_name(league.season)
    try:
        fx = fpl.fixtures(fpl.season_dir(league.data.resolved_dir(), name)).dropna(subset=["gameweek"])
    except DataError as exc:
        return {"problem": str(exc)}
    day = pd.to_datetime(fx["kickoff_time"], utc=True).dt.date
    week_end = {int(w): d.isoformat() for w, d in day.groupby(fx["gameweek"].astype(int)).max().items()}
    ours = [d for w, d in week_end.items() if w <= league.weeks]
    return {"season_end": max(week_end.values()), "league_end": max(ours) if ours else None,
            "week_end": {w: d for w, d in week_end.items() if w <= league.weeks}, "playoffs_listed": True,
            "schedules_file": "fixtures.csv"}


def knowledge_cutoffs(league: League, config: str = "CONFIG") -> list[dict[str, Any]]:
    """One entry per model with a ``knowledge_cutoff`` (its teams, the dates compared, ``may_know_results`` and the
    warning line, None when there is nothing to warn about); empty when no team sets one."""
    by_model: dict[tuple[str, str], list[str]] = {}
    for t in league.teams:
        if isinstance(t.agent, LLMAgent) and t.agent.knowledge_cutoff:
            by_model.setdefault((t.agent.model, t.agent.knowledge_cutoff), []).append(t.name)
    if not by_model:
        return []
    dates = _season_dates(league)
    out = []
    for (model, cutoff), teams in by_model.items():
        entry: dict[str, Any] = {"model": model, "knowledge_cutoff": cutoff, "teams": teams, **dates}
        known = [d for d in (dates.get("league_end"), dates.get("season_end")) if d]
        # None: the dates are unknown (no schedules file), so nothing is claimed either way
        entry["may_know_results"] = date.fromisoformat(min(known)) <= cutoff_date(cutoff) if known else None
        # a cutoff inside the league's weeks: the model may know how the first of them went
        entry["weeks_before_cutoff"] = max((w for w, d in dates.get("week_end", {}).items()
                                            if date.fromisoformat(d) <= cutoff_date(cutoff)), default=0)
        entry["warning"] = _warning(league, entry, config)
        out.append(entry)
    return out


def _warning(league: League, e: dict[str, Any], config: str) -> str | None:
    model, cutoff, season = e["model"], e["knowledge_cutoff"], league.season
    if "problem" in e:
        return (f"warning: model {model} (knowledge_cutoff {cutoff}): cannot tell whether it may know the {season} "
                f"results: {e['problem']}")
    masking = league.information.masking
    remedy = (f"information.masking is {masking}, so names are hidden; still measure what it remembers" if
              masking != "off" else "set information.masking: players (or players_and_teams) so it cannot "
              "recognise players, and measure what it remembers")
    probe = f"with `ffbench probe {config} --season {season} --out DIR`"
    if not e["may_know_results"] and e.get("weeks_before_cutoff"):
        k = e["weeks_before_cutoff"]
        weeks = "week 1" if k == 1 else f"weeks 1-{k}"
        return (f"warning: model {model} (knowledge_cutoff {cutoff}) may have read the results of {weeks} of "
                f"{season}, which ended on or before its cutoff; {remedy} {probe}")
    if not e["may_know_results"]:
        return None
    where = (f"the last game in {e['schedules_file']}, playoffs included" if e["playoffs_listed"] else
             f"the last game in {e['schedules_file']}, which lists no {season} playoff games")
    if date.fromisoformat(e["season_end"]) <= cutoff_date(cutoff):
        when = f"the {season} season ended {e['season_end']} ({where})"
    else:
        when = (f"the league's {'week 1' if league.weeks == 1 else f'weeks 1-{league.weeks}'} of {season} ended {e['league_end']} (the season ends "
                f"{e['season_end']}, {where})")
    return (f"warning: model {model} (knowledge_cutoff {cutoff}) may have read the results it is scored on: "
            f"{when}, on or before its cutoff; {remedy} {probe}")


def notices(league: League, config: str = "CONFIG") -> list[str]:
    """The lines ``validate`` and ``run`` print: one per input the season lacks, one per model that may know
    its results (see :func:`knowledge_cutoffs`)."""
    if league.data.source == "fpl":  # the sport never has them (FPL publishes no injury report)
        missing = {what: f"{league.sport_spec.title} data has none; no player is ever marked Out"
                   for what in league.sport_spec.never_available}
    else:
        missing = unavailable_inputs(get_source(league.data.source, league.data.resolved_dir()), league.season)
    lines = [f"note: season {league.sport_spec.season_name(league.season)} is run without its "
             f"{what.replace('_', ' ')}: {text}"
             for what, text in missing.items()]
    if league.roster.IR and "injury_report" in missing:
        lines.append(f"warning: roster.IR: with no {league.season} injury report no player is ever ruled Out, so "
                     f"the IR slot(s) stay empty; set IR: 0, or add injuries_{league.season}.csv (`ffbench data "
                     f"download --seasons {league.season} --out DIR` once nflverse publishes it)")
    return lines + [c["warning"] for c in knowledge_cutoffs(league, config) if c["warning"]]


def print_notices(league: League, config: Any = None) -> None:
    """:func:`notices` on stderr (``validate`` after its checks, ``run`` once the season is prepared)."""
    for line in notices(league, "CONFIG" if config is None or isinstance(config, League) else str(config)):
        print(line, file=sys.stderr)
