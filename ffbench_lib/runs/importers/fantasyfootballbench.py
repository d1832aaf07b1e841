"""Import a run recorded by the earlier FantasyFootballBench (``data/simulations/simulation_*``) as an ffbench
run directory, so every metric and notebook runs on it.

* Two models per team. The old code drafted each team with the model in its label (``GPT_5_Team_9`` drafted with
  ``openai/gpt-5``), then handed the teams to other models for the season and rewrote the draft CSVs' ``Model``
  column. So draft picks and draft decisions are the drafting model's (``draft_picks.agent``), everything from
  week 1 on is the season model's (the logged ``Model`` of the weekly results); the label is the team name.
* Draft picks come from the draft calls in order (shortlist = the named candidates); a pick whose answer was
  empty is the old engine's and is marked ``fallback``. Projections are SportsData.io's preseason numbers of
  the run's season joined by player id (NaN where it has none: the old pool file gave Jefferson 0 and Etienne
  Hockenson's 124).
* Trades: an invalid proposal was replaced by the old engine with a swap of each side's first two roster
  entries, sent to the alphabetically first other team. Such a proposal is marked ``fallback`` (the proposing
  side of that trade is not the model's); every other step is the model's if its answer was readable. A trade is
  ``made_by: agent`` only if the offer accepted was its maker's own and the acceptance the acceptor's: such a
  proposal accepted as proposed is ``fallback``.
* Lineups come from the weekly results; the FLEX slot from the model's answer. The bench was not logged: each
  week's roster is rebuilt from the lineup prompt's list of names, bench points from nflverse.
* Lineups that followed an empty model answer are marked ``decided_by: fallback``.
* Not supported by those logs: tokens, cost, latency, re-asks (no ``llm_calls.jsonl``).
* The season is the run's own (the year in ``final_standings_<season>.csv``, the draft CSVs and the player
  pool file); files of two seasons, or a season the data directory lacks, are refused.
* Every row and decision is written by :class:`~ffbench_lib.game.recorder.RunRecorder`, as the engine writes its own.
* An incomplete or inconsistent recorded run (a week, team or log missing, a short draft, standings that the
  weekly results do not reproduce) is refused with a DataError before anything is written: a partial season
  imported as ``complete`` would be counted by every metric as a full one.
"""
from __future__ import annotations

import glob
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from ffbench_lib.config.league import League
from ffbench_lib.config.load import dump_config
from ffbench_lib.data.base import DataError, name_key, resolve_names
from ffbench_lib.data.prepare import prepare_cached
from ffbench_lib.game.recorder import RunRecorder
from ffbench_lib.records.run import FORMAT, RunMeta
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.game.state import LeagueState

STEP = {"propose": 1, "counter_or_accept": 2, "proposer_react": 3, "final_decision": 4}
DECISION = {"propose": "propose_trade", "counter_or_accept": "respond_to_offer",
            "proposer_react": "reply_to_counter", "final_decision": "final_decision"}
UNSUPPORTED = ["tokens, cost and latency (not logged)", "re-asks and invalid-answer rates (only empty answers are "
               "recognisable)", "bench decisions as logged (the bench is rebuilt from lineup prompts)"]


#: the share of recorded starter points nflverse must reproduce (the five reference runs: 99.7% to 100%); far
#: fewer means the files name another season than the one played
MIN_POINTS_MATCH = 0.9


def _jsonl(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _one(folder: Path, pattern: str) -> Path:
    hits = sorted(glob.glob(str(folder / pattern)))
    if len(hits) != 1:
        raise DataError(f"{folder}: {'no' if not hits else f'{len(hits)} files match'} {pattern}; "
                        "a recorded run has exactly one")
    return Path(hits[0])


LOGS = ["draft_results/llm_calls_*.jsonl", "draft_results/TopPlayers_{season}_Projections_PPR.csv",
        "season_results/llm_calls_season_*.jsonl", "season_results/llm_calls_trades_*.jsonl",
        "season_results/accepted_trades_*.jsonl", "season_results/final_standings_{season}.csv"]
#: The files whose names carry the season, and the pattern that reads it.
SEASON_FILES = {"season_results/final_standings_*.csv": r"final_standings_(\d{4})\.csv",
                "draft_results/TopPlayers_*_Projections_PPR.csv": r"TopPlayers_(\d{4})_Projections_PPR\.csv",
                "draft_results/*.csv": r"(?!TopPlayers_).+_(\d{4})\.csv"}
WEEK_COLS = {"Week", "Team", "Model", "Opponent", "Player", "ResolvedName", "Position", "Points"}
STANDING_COLS = {"Team", "Wins", "Losses", "Ties", "PointsFor"}


def _fail(sim: Path, problems: list[str]) -> None:
    if problems:
        raise DataError(f"{sim}: incomplete or inconsistent FantasyFootballBench run, not imported: "
                        + "; ".join(problems))


def _read_csv(path: Path, cols: set[str]) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a readable CSV ({exc}); replace it with the recorded file") from None
    missing = sorted(cols - set(df.columns))
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; replace it with the recorded file")
    return df


def recorded_season(sim: Path) -> int:
    """The season the run played, from the year in its file names; DataError if none or several."""
    found: dict[int, list[str]] = defaultdict(list)
    for pattern, regex in SEASON_FILES.items():
        for f in sorted(sim.glob(pattern)):
            m = re.fullmatch(regex, f.name)
            if m:
                found[int(m.group(1))].append(f"{f.parent.name}/{f.name}")
    if not found:
        _fail(sim, ["no season_results/final_standings_<season>.csv (nor any draft file naming a season)"])
    if len(found) > 1:
        which = "; ".join(f"{s} in {', '.join(fs[:2])}{' ...' if len(fs) > 2 else ''}"
                          for s, fs in sorted(found.items()))
        _fail(sim, [f"files of several seasons ({which}); a recorded run is of one season: remove the other "
                    "season's files"])
    return next(iter(found))


def check_season_data(sim: Path, season: int, data_dir: str | Path | None) -> None:
    """DataError unless the data directory has the nflverse stats of the run's season."""
    from ffbench_lib.data.sources import get_source

    source = get_source("nflverse", data_dir)
    have = source.available_seasons()
    if season not in have:
        raise DataError(f"{sim}: the run played the {season} season, but {source.folder} has no nflverse stats "
                        f"for it (it has {', '.join(map(str, have)) or 'none'}); add that season's data "
                        f"(`ffbench data download --seasons {season - 1}-{season}`) or set FFBENCH_DATA_DIR")


def recorded_weeks(sim: Path) -> tuple[int, list[int], pd.DataFrame, pd.DataFrame]:
    """The folder's season, weeks, weekly results and final standings, after checking that it is a whole recorded
    run: every log there once, weeks 1..N (N = games in the final standings) each in one file, every team in
    every week with a consistent opponent. Raises DataError naming the folder and everything missing."""
    if not (sim / "season_results").is_dir() or not (sim / "draft_results").is_dir():
        raise DataError(f"{sim}: not a FantasyFootballBench simulation folder (no season_results/ and "
                        "draft_results/); pass a data/simulations/simulation_* folder of the earlier benchmark")
    season = recorded_season(sim)
    standings = f"final_standings_{season}.csv"
    problems = []
    for pattern in (log.format(season=season) for log in LOGS):
        n = len(glob.glob(str(sim / pattern)))
        if n != 1:
            problems.append(f"{'no' if not n else f'{n} files match'} {pattern}")
    by_week: dict[int, list[str]] = defaultdict(list)
    for f in sorted((sim / "season_results").glob("week_*_results.csv")):
        m = re.fullmatch(r"week_(\d+)_results\.csv", f.name)
        if m:
            by_week[int(m.group(1))].append(f.name)
        else:
            problems.append(f"unexpected file season_results/{f.name}")
    problems += [f"week {w} recorded twice ({', '.join(fs)})" for w, fs in sorted(by_week.items()) if len(fs) > 1]
    if not by_week:
        problems.append("no season_results/week_N_results.csv")
    _fail(sim, problems)
    final = _read_csv(sim / "season_results" / standings, STANDING_COLS)
    twice = sorted(set(final.loc[final["Team"].duplicated(), "Team"]))
    if twice:
        _fail(sim, [f"{standings} lists {', '.join(twice)} more than once"])
    games = sorted(set((final["Wins"] + final["Losses"] + final["Ties"]).astype(int)))
    if len(games) != 1:
        _fail(sim, [f"{standings}: teams played different numbers of games ({games})"])
    expected = list(range(1, games[0] + 1))
    missing = [w for w in expected if w not in by_week]
    extra = [w for w in by_week if w not in expected]
    if missing:
        problems.append(f"missing week(s) {', '.join(map(str, missing))} (season_results/week_N_results.csv; "
                        f"the final standings count {games[0]} games)")
    if extra:
        problems.append(f"week(s) {', '.join(map(str, sorted(extra)))} beyond the {games[0]} games of the final "
                        "standings")
    _fail(sim, problems)
    frames = []
    for w in expected:
        f = sim / "season_results" / by_week[w][0]
        df = _read_csv(f, WEEK_COLS)
        if set(df["Week"].astype(str)) != {str(w)}:
            problems.append(f"{f.name} holds rows of week(s) {sorted(set(df['Week'].astype(str)))}")
        frames.append(df)
    results = pd.concat(frames, ignore_index=True)
    teams = set(final["Team"])
    for w, df in zip(expected, frames):
        absent = sorted(teams - set(df.loc[df["Player"] != "TOTAL", "Team"]))
        repeated = sorted(set(df.loc[df.duplicated(["Team", "Player"]), "Team"]))
        if repeated:
            problems.append(f"week {w}: rows repeated for {', '.join(repeated)}")
        if absent:
            problems.append(f"week {w}: no lineup rows for {', '.join(absent)}")
        opp = df.drop_duplicates("Team").set_index("Team")["Opponent"]
        bad = sorted(t for t, o in opp.items() if opp.get(o) != t)
        if bad:
            problems.append(f"week {w}: opponents do not pair up for {', '.join(bad)}")
    unknown = sorted(set(results["Team"]) - teams)
    if unknown:
        problems.append(f"teams not in {standings}: {', '.join(unknown)}")
    _fail(sim, problems)
    return season, expected, results, final.set_index("Team")


def _as_obj(output: Any) -> dict | None:
    if isinstance(output, dict):
        return output
    if isinstance(output, str) and output.strip():
        from ffbench_lib.llm.parse import parse_json

        obj, _ = parse_json(output)
        return obj
    return None


def _label(team: str) -> str:
    return team.replace(" ", "_")


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def drafting_model(label: str, models: list[str]) -> str:
    """The model named by a team label (``GPT_5_Mini_Team_10`` -> ``openai/gpt-5-mini``): an exact match of the
    label's name with a model id's last part, else the one model id that starts with it (``GPT_OSS`` ->
    ``gpt-oss-120b``)."""
    name = _squash(re.sub(r"_Team_\d+$", "", label))
    tails = {m: _squash(m.split("/")[-1]) for m in models}
    hits = [m for m, t in tails.items() if t == name] or [m for m, t in tails.items() if t.startswith(name)]
    if len(hits) != 1:
        raise ValueError(f"team label {label!r}: cannot tell which of {sorted(models)} drafted it "
                         f"({'no' if not hits else 'several'} model ids match {name!r})")
    return hits[0]


def _names_of(items: Any) -> list[str]:
    return [str(x.get("name")) if isinstance(x, dict) else str(x) for x in (items or [])]


def _team_of(text: Any) -> str:
    return re.sub(r"^Team\s+", "", str(text or "")).strip().replace(" ", "_")


def engine_made_proposal(output: Any, proposer: str, receiver: str, teams: list[str],
                         terms: tuple[list[str], list[str]] | None = None) -> bool:
    """Whether the old engine, not the model, made a proposal. The old engine replaced an invalid proposal by a
    swap of each side's first two roster entries sent to the alphabetically first other team; so a proposal to
    another team is the model's (even when the log cut its answer short), and one to that team is the model's
    only if the answer names it (and, when known, the same players: ``terms`` = proposer gives, receives)."""
    first = next(t for t in sorted(teams) if t != proposer)
    if receiver != first:
        return False
    obj = _as_obj(output)
    obj = obj if isinstance(obj, dict) else None
    m = re.search(r'"target_team"\s*:\s*"([^"]+)"', str(output or ""))
    target = _team_of(obj.get("target_team") if obj else (m.group(1) if m else ""))
    if target != receiver:
        return True
    if obj is not None and terms is not None:
        same = (sorted(map(name_key, _names_of(obj.get("give")))) == sorted(map(name_key, terms[0]))
                and sorted(map(name_key, _names_of(obj.get("receive")))) == sorted(map(name_key, terms[1])))
        return not same
    return False


class _Names:
    """Player name -> gsis id for the run's season (unique match by name and position, then by name). A name
    that matches no one becomes ``ffb:<name>``, with the position the log gave it."""

    def __init__(self, prepared, crosswalk: pd.DataFrame):
        p = prepared.players
        self.by_np: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.by_n: dict[str, set[str]] = defaultdict(set)
        for pid, name, pos in zip(p["player_id"], p["player_name"], p["position"]):
            self.by_np[(name_key(name), pos)].add(pid)
            self.by_n[name_key(name)].add(pid)
        self.position = dict(zip(p["player_id"], p["position"]))
        self.crosswalk = crosswalk
        self.unresolved: set[str] = set()

    def __call__(self, name: str, pos: str | None = None) -> str:
        k = name_key(name)
        for cands in ((self.by_np.get((k, pos)) if pos else None), self.by_n.get(k)):
            if cands and len(cands) == 1:
                return next(iter(cands))
        if pos:
            rid = resolve_names(pd.DataFrame({"player_name": [name], "position": [pos]}), self.crosswalk,
                                team_col=None).iloc[0]
            if isinstance(rid, str):
                return rid
        self.unresolved.add(name)
        if pos:
            self.position.setdefault(f"ffb:{name}", pos)
        return f"ffb:{name}"


def _season_problems(season: int, state: LeagueState, teams: list[str], picks: pd.DataFrame,
                     draft_csv_rows: dict[str, int], off: list[str], final: pd.DataFrame) -> list[str]:
    """What the rebuilt season says is wrong with the recorded one: a draft short of picks (per team, against
    its draft CSV and the other teams) and final standings the weekly results do not reproduce."""
    problems = []
    per_team = picks.groupby("team").size().reindex(teams, fill_value=0)
    no_csv = [t for t in teams if t not in draft_csv_rows]
    if no_csv:
        problems.append(f"no draft_results/<team>_{season}.csv for {', '.join(no_csv)}")
    short = [f"{t} ({n} of {draft_csv_rows[t]})" for t, n in per_team.items()
             if t in draft_csv_rows and n != draft_csv_rows[t]]
    if short or per_team.nunique() > 1:
        problems.append("draft incomplete: picks in the draft log vs the team's draft CSV: "
                        + ", ".join(short or [f"{t} {n}" for t, n in per_team.items()]))
    if off:
        t = off[0]
        problems.append(f"final_standings_{season}.csv is not reproduced by the weekly results for {len(off)} team(s), "
                        f"e.g. {t}: {int(final.loc[t, 'Wins'])} wins and {float(final.loc[t, 'PointsFor']):.2f} "
                        f"points recorded, {state.records[t].wins} and {state.records[t].points_for:.2f} in the "
                        "weekly results")
    return problems



def _draft(rec: RunRecorder, sim: Path, teams: list[str], drafter: dict[str, str], names: _Names,
           season_calls: dict[tuple[int, str], dict], pos_by_name: dict[str, str], players: pd.DataFrame) -> None:
    """Draft decisions and picks, in the order of the draft log, by the drafting model."""
    state = rec.state
    first_week: dict[str, tuple[int, list[str]]] = {}
    for (w, team), c in season_calls.items():
        m = re.search(r"All names MUST be selected from this list: (.*?)\.\n", c["input"]["prompt"])
        if m and (team not in first_week or w < first_week[team][0]):
            first_week[team] = (w, [n.strip() for n in m.group(1).split(", ")])

    def value(column: str, pid: str) -> Any:
        v = players[column].get(pid) if pid in players.index else None
        return v if v is not None and pd.notna(v) else None

    pick, shortlist_of = 0, {}
    for c in _jsonl(_one(sim / "draft_results", "llm_calls_*.jsonl")):
        team = _label(c["team"])
        view = {"prompt": (c.get("input") or {}).get("prompt")}
        obj = _as_obj(c.get("output"))
        if c["call_type"] == "request_candidates":
            cands = [str(x) for x in (obj or {}).get("candidates", [])]
            shortlist_of[team] = cands
            by = "agent" if cands else "fallback"
            rec.decision(team=team, decision="draft_shortlist", view=view, answer=c.get("output"), applied=cands,
                         decided_by=by, problems=None if cands else [OLD_ENGINE_CHOSE], pick=pick + 1,
                         agent=drafter[team], hashed=False)
            continue
        pick += 1
        name = (obj or {}).get("pick")
        by = "agent"
        if not name:  # an answer cut off by the old 800-token cap still names the pick first
            m = re.search(r'"pick"\s*:\s*"([^"]+)"', str(c.get("output") or ""))
            name = m.group(1) if m else None
        if not name:  # empty answer: the old engine picked; take the team's first unassigned week-1 player
            by = "fallback"
            rows = state.tables.get("draft_picks", [])
            mine = {name_key(r["player_name"]) for r in rows if r["team"] == team}
            taken = {name_key(r["player_name"]) for r in rows}
            pool = [n for n in first_week.get(team, (0, []))[1] if name_key(n) not in mine | taken]
            name = pool[0] if pool else None
        pid = names(name, pos_by_name.get(name_key(name))) if name else None
        rec.decision(team=team, decision="draft_pick", view=view, answer=c.get("output"), applied=pid,
                     decided_by=by, problems=None if by == "agent" else [OLD_ENGINE_CHOSE], pick=pick,
                     agent=drafter[team], hashed=False)
        if pid is None:
            continue
        if len(state.draft_order) < len(teams) and team not in state.draft_order:
            state.draft_order.append(team)
        sdio, prev, adp = (value(col, pid) for col in ("proj_points_sportsdataio", "prev_points", "adp"))
        rec.draft_pick(pick=pick, rnd=(pick - 1) // len(teams) + 1, team=team, player_id=pid, player_name=name,
                       position=names.position.get(pid, pos_by_name.get(name_key(name))),
                       proj_points=float(sdio) if sdio is not None else float("nan"),
                       prev_points=float(prev) if prev is not None else 0.0,
                       adp=float(adp) if adp is not None else None,
                       shortlist=[names(n, pos_by_name.get(name_key(n))) for n in shortlist_of.get(team, [])],
                       in_shortlist=name in shortlist_of.get(team, []), decided_by=by, reason=None,
                       agent=drafter[team])


def _negotiations(trade_calls: list[dict], trades: list[dict], teams: list[str]
                  ) -> tuple[dict[tuple[int, str], dict[str, Any]], set[tuple[int, str]]]:
    """(week, proposer) -> its calls and receiver, and the proposals the old engine made. The propose call is
    logged with a placeholder receiver; the later steps with the real one. An accepted record names the side
    whose offer was accepted as ``proposer``: at ``proposer_react`` that is the original receiver (its counter
    was accepted); each trade gets ``_p``, ``_r``, ``_gives``, ``_gets`` as the negotiation saw them."""
    negotiations: dict[tuple[int, str], dict[str, Any]] = {}
    for c in trade_calls:
        neg = negotiations.setdefault((c["week"], c["proposer"]), {"calls": [], "receiver": None})
        neg["calls"].append(c)
        if c["stage"] != "propose":
            neg["receiver"] = c["receiver"]
    engine_props: set[tuple[int, str]] = set()
    for (w, p), neg in negotiations.items():
        prop = [c for c in neg["calls"] if c["stage"] == "propose"]
        r = neg["receiver"]
        if prop and r and engine_made_proposal(prop[-1].get("output"), p, r, teams):
            engine_props.add((w, p))
    for t in trades:
        flipped = t["accepted_stage"] == "proposer_react"
        p, r = (t["receiver"], t["proposer"]) if flipped else (t["proposer"], t["receiver"])
        gives, gets = (t["receive"], t["give"]) if flipped else (t["give"], t["receive"])
        t["_p"], t["_r"], t["_gives"], t["_gets"] = p, r, gives, gets
        prop = [c for c in negotiations.get((t["week"], p), {"calls": []})["calls"] if c["stage"] == "propose"]
        terms = (gives, gets) if t["accepted_stage"] == "counter_or_accept" else None
        if prop and engine_made_proposal(prop[-1].get("output"), p, r, teams, terms):
            engine_props.add((t["week"], p))
        else:
            engine_props.discard((t["week"], p))
    return negotiations, engine_props


ENGINE_PROPOSAL = ("invalid proposal: the old engine proposed a swap of both sides' first two roster entries to the "
                   "alphabetically first team")
OLD_ENGINE_CHOSE = "empty or unreadable answer (old engine chose)"


def _trade_steps(rec: RunRecorder, negotiations: dict[tuple[int, str], dict[str, Any]],
                 engine_props: set[tuple[int, str]]) -> None:
    """Every negotiation step as a trade_steps row and a decision; the steps the old engine took are fallbacks."""
    for (w, p), neg in negotiations.items():
        r = neg["receiver"]
        for c in neg["calls"]:
            obj = _as_obj(c.get("output"))
            obj = obj if isinstance(obj, dict) else None
            actor = p if c["stage"] in ("propose", "proposer_react") else r
            if actor is None:  # a proposal nobody answered: the model's target, as far as the log shows
                actor = p
            action = (obj or {}).get("decision") or ("propose" if c["stage"] == "propose" and obj else None)
            engine = c["stage"] == "propose" and (w, p) in engine_props
            # a proposal's log is sometimes cut short (the old engine saw the whole answer): what counts is
            # whether the engine replaced it; an unanswered unreadable proposal is the engine's pass
            readable = obj is not None or (c["stage"] == "propose" and r is not None)
            by = "agent" if readable and not engine else "fallback"
            reason = ENGINE_PROPOSAL if engine else (None if by == "agent" else "empty or unreadable answer")
            rec.trade_step(week=w, negotiation=f"w{w}-{p}-{r}", step=STEP[c["stage"]], actor=actor,
                           action=action or "unreadable", proposer=p, receiver=r, proposer_gives=[],
                           receiver_gives=[], rationale=(obj or {}).get("rationale"), decided_by=by, reason=reason)
            problems = [ENGINE_PROPOSAL] if engine else (None if by == "agent" else [OLD_ENGINE_CHOSE])
            rec.decision(team=actor, decision=DECISION[c["stage"]], view={"prompt": None}, answer=c.get("output"),
                         applied=None, decided_by=by, problems=problems, week=w, step=STEP[c["stage"]],
                         hashed=False)


def import_reference_run(sim_dir: str | Path, out: str | Path, data_dir: str | Path | None = None,
                         seed: int = 0) -> Path:
    sim = Path(sim_dir)
    season, weeks, results, final = recorded_weeks(sim)  # before the slow preparation: a bad folder fails fast
    check_season_data(sim, season, data_dir)
    prepared = prepare_cached(season, "nflverse", data_dir, scoring="ffbench_v1")  # a cached preparation, reused
    from ffbench_lib.data.sources import get_source

    names = _Names(prepared, get_source("nflverse", data_dir).id_crosswalk)
    points_of_week = {int(w): dict(zip(g["player_id"], g["fantasy_points"].astype(float)))
                      for w, g in prepared.weekly.groupby("week")}

    # ---- who played which label: the Model column of the weekly results --------------------------------------
    label_model = results.drop_duplicates("Team").set_index("Team")["Model"].to_dict()
    teams = sorted(label_model)
    agent = {t: f"llm:{label_model[t]}" for t in teams}
    models = sorted(set(label_model.values()))
    try:
        drafter = {t: f"llm:{drafting_model(t, models)}" for t in teams}
    except ValueError as exc:
        raise DataError(f"{sim}: {exc}") from None
    checks: dict[str, Any] = {"draft_agents": drafter}
    draft_csv_models, draft_csv_rows = {}, {}
    suffix = f"_{season}.csv"
    for f in (sim / "draft_results").glob(f"*{suffix}"):
        if f.name.startswith("TopPlayers"):
            continue
        df = _read_csv(f, {"Name", "Model"})
        draft_csv_models[f.name[: -len(suffix)]] = df["Model"].iloc[0] if len(df) else None
        draft_csv_rows[f.name[: -len(suffix)]] = len(df)
    # the draft files' Model column sometimes holds a display name instead of the model id: reported, not used
    checks["draft_csv_model_mismatches"] = {k: [v, label_model.get(k)] for k, v in draft_csv_models.items()
                                            if label_model.get(k) != v}
    proj = pd.read_csv(sim / "draft_results" / f"TopPlayers_{season}_Projections_PPR.csv")
    pos_by_name = {name_key(n): p for n, p in zip(proj["Name"], proj["Position"])}
    trades = _jsonl(_one(sim / "season_results", "accepted_trades_*.jsonl"))
    run_id = f"ffb-{sim.name}"
    league = League.model_validate({
        "name": run_id, "season": season, "weeks": weeks[-1], "seed": seed, "scoring": "ffbench_v1",
        "trades": {"weeks": sorted({t["week"] for t in trades}) or [1]},
        "teams": [{"name": t, "agent": {"kind": "llm", "model": label_model[t]}} for t in teams]})

    state = LeagueState(teams=teams, agent_ids=agent, draft_order=[], schedule={})
    decisions: list[dict[str, Any]] = []
    rec = RunRecorder(state, run_id, season, lambda record, view_json: decisions.append(record))

    season_calls = {(c["week"], c["team"]): c
                    for c in _jsonl(_one(sim / "season_results", "llm_calls_season_*.jsonl"))}
    _draft(rec, sim, teams, drafter, names, season_calls, pos_by_name, prepared.players.set_index("player_id"))

    # ---- weeks ------------------------------------------------------------------------------------------------
    trade_calls = _jsonl(_one(sim / "season_results", "llm_calls_trades_*.jsonl"))
    negotiations, engine_props = _negotiations(trade_calls, trades, teams)
    roster_now = {t: list(state.rosters[t]) for t in teams}
    started_match, fallback_sides, twice = [], 0, []
    for w in weeks:
        wk = results[results["Week"] == w]
        points = points_of_week.get(w, {})
        for t in [t for t in trades if t["week"] == w]:  # trades of this week happen before its lineups
            p, r = t["_p"], t["_r"]
            gives = [names(n) for n in t["_gives"]]
            gets = [names(n) for n in t["_gets"]]
            upto = STEP[t["accepted_stage"]]
            steps = {STEP[c["stage"]]: c for c in negotiations.get((w, p), {"calls": []})["calls"]}
            ok = {s: (s in steps and (s != 1 or (w, p) not in engine_props)
                      and (s == 1 or isinstance(_as_obj(steps[s].get("output")), dict))) for s in range(1, upto + 1)}
            # made_by: the offer accepted was its maker's own and the acceptance the acceptor's (an engine proposal
            # accepted as proposed is not the proposer's trade); each side's own steps are in trade_steps
            fallback_sides += int(not all(ok[s] for s in range(1, upto + 1, 2))) + int(
                not all(ok[s] for s in range(2, upto + 1, 2)))
            roster_now[p] = [x for x in roster_now[p] if x not in gives] + gets
            roster_now[r] = [x for x in roster_now[r] if x not in gets] + gives
            rec.trade(week=w, negotiation=f"w{w}-{p}-{r}", proposer=p, receiver=r, proposer_gives=gives,
                      receiver_gives=gets, accepted_step=upto,
                      made_by="agent" if ok[upto - 1] and ok[upto] else "fallback")
        totals = {}
        for team in teams:
            rows = wk[(wk["Team"] == team) & (wk["Player"] != "TOTAL")]
            total = wk[(wk["Team"] == team) & (wk["Player"] == "TOTAL")]["Points"]
            totals[team] = float(total.iloc[0]) if len(total) else float(rows["Points"].sum())
            call = season_calls.get((w, team))
            prompt = (call or {}).get("input", {}).get("prompt", "")
            m = re.search(r"All names MUST be selected from this list: (.*?)\.\n", prompt)
            if m:
                roster_now[team] = [names(n.strip()) for n in m.group(1).split(", ")]
            obj = _as_obj((call or {}).get("output"))
            flex_name = (obj or {}).get("flex")
            by = "agent" if obj and flex_name else "fallback"
            rec.decision(team=team, decision="set_lineup", view={"prompt": prompt}, answer=(call or {}).get("output"),
                         applied=list(rows["Player"]), decided_by=by,
                         problems=None if by == "agent" else [OLD_ENGINE_CHOSE], week=w, hashed=False)
            counts: dict[str, int] = defaultdict(int)
            starters: list[tuple[str, str, str]] = []
            scored: dict[str, float] = {}
            flex_pid = names(flex_name) if flex_name else None
            for r in rows.itertuples(index=False):
                pid = names(r.ResolvedName if isinstance(r.ResolvedName, str) else r.Player, r.Position)
                slot = r.Position
                if pid == flex_pid or counts[slot] >= league.roster.starting(slot):
                    slot = "FLEX" if "FLEX" not in [s for s, _, _ in starters] else slot
                counts[r.Position] += 1
                if pid in scored:
                    twice.append(f"week {w}: {team} started {pid} twice")
                starters.append((slot, pid, by))
                scored[pid] = float(r.Points)
                started_match.append(abs(points.get(pid, 0.0) - float(r.Points)) < 0.011)
            rec.lineup(w, team, starters, sorted(set(roster_now[team]) | set(scored)), names.position, points,
                       starter_points=scored)
        pairs, seen = [], set()
        for team in teams:
            opp = wk[wk["Team"] == team]["Opponent"].iloc[0]
            if team not in seen:
                pairs.append([team, opp])
                seen.update((team, opp))
        rec.results(w, pairs, totals)
    _trade_steps(rec, negotiations, engine_props)

    off = [t for t in teams if int(final.loc[t, "Wins"]) != state.records[t].wins
           or abs(float(final.loc[t, "PointsFor"]) - state.records[t].points_for) >= 0.05]
    checks["final_standings_match"] = not off
    checks["starter_points_match_nflverse_rate"] = round(sum(started_match) / max(1, len(started_match)), 4)
    checks["unresolved_names"] = sorted(names.unresolved)
    picks = pd.DataFrame(state.tables.get("draft_picks", []), columns=["team", "player_id", "player_name",
                                                                        "proj_points"])
    rate = checks["starter_points_match_nflverse_rate"]
    wrong_season = [f"the recorded starters' points match nflverse's {season} stats for only {rate:.0%} of them "
                    f"(a recorded run matches for over 99%): the files name {season}, but the run did not play it"
                    ] if rate < MIN_POINTS_MATCH else []
    _fail(sim, twice[:3] + wrong_season + _season_problems(season, state, teams, picks, draft_csv_rows, off, final))
    # the old engine let two teams draft the same player; kept as played, listed here
    checks["duplicate_draft_picks"] = sorted(picks.loc[picks["player_id"].duplicated(), "player_name"])
    # no SportsData.io preseason projection (NaN in draft_picks, never 0)
    checks["drafted_without_projection"] = sorted(set(picks.loc[picks["proj_points"].isna(), "player_name"]))
    checks["engine_made_proposals"] = len(engine_props)
    checks["trade_sides_not_the_models"] = fallback_sides  # a step of that side invalid or the engine's
    sizes = pd.DataFrame(state.tables["lineups"]).groupby(["week", "team"]).size()
    checks["team_weeks_short_of_starters"] = int((sizes < league.roster.starters).sum())  # empty slots fielded
    state.phase = f"week:{weeks[-1]}"

    rd = RunDir(out)
    meta = RunMeta(format=FORMAT, run_id=run_id, seed=seed, season=season, status="complete", phase=state.phase,
                   imported_from=str(sim), agents=agent, unsupported_metrics=UNSUPPORTED, checks=checks)
    rd.start(dump_config(league), meta.model_copy(update={"status": "running"}))  # complete once all is written
    for record in decisions:
        state.log_bytes["decisions.jsonl"] = rd.append("decisions.jsonl", record)
    state.rosters = {t: list(roster_now[t]) for t in teams}  # the rosters the season ended with, not the draft's
    rd.write_tables(state)
    rd.checkpoint(state)
    rd.write_meta(meta)
    return Path(out)
