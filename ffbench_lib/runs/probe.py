"""The knowledge probe (``ffbench probe``): does a model remember how a season turned out?

Before any play, each distinct LLM model of a league is asked, through the same client as in a run (ledger,
replay cache, budget, retries, masked keys), for the season PPR totals of a fixed sample of real players and
each position's top 5. Its answers are scored against the actual season and against the error of the league's
preseason projection on the same players:

``recall_advantage`` = mean over the sample of ``|projection - actual| - |answer - actual|`` (an unanswered
player adds 0: the model claims no knowledge, so it is as good as the projection), with a 95% CI by the project's
one rule (:func:`stats.mean_ci`: a t-interval below 20 players, a BCa bootstrap from there on), named in
``ci_method``.
A model whose CI lies above 0, and whose CI on the stars and mid- and late-round picks does too, knows the
outcome better than the preseason projection: it ``remembers``.

The sample is a function of the season's data only (never of a league's seed): per position, players in the
draft pool ranked by preseason ADP (players without one after them, by the projection of ``data.projections``)
into strata, see :data:`STRATA`, and :data:`PER_STRATUM` of each drawn with the constant :data:`SAMPLE_SEED`.
Breakouts and busts are where memory shows most (no preseason judgement predicts them), but a guess pulled toward
a position's typical season gains there too, so ``remembers`` also needs a gain on the rank-chosen strata (:data:`RANKED_STRATA`).
"""
from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ffbench_lib.core.atomic import write_csv, write_json, write_text
from ffbench_lib.config.league import League
from ffbench_lib.config.load import dump_config, load_config, parse_config
from ffbench_lib.sport import sport
from ffbench_lib.data.base import name_key as base_name_key
from ffbench_lib.data.prepare import PreparedSeason, prepared_for
from ffbench_lib.data.schema import DEFAULT_POSITIONS
from ffbench_lib.llm import Budget, FatalLLMError, parse_json
from ffbench_lib.game.render import scoring_name, scoring_values, table
from ffbench_lib.records.probe import ProbeFile
from ffbench_lib.runs.rundir import RunDir, exclusive
from ffbench_lib.core.secrets import register_league, scrub
from ffbench_lib.core.stats import ci_label, mean_ci

#: the positions probed: the offensive ones every league has (kickers and defenses are not asked about)
POSITIONS = DEFAULT_POSITIONS
DECISION = "knowledge_probe"
SAMPLE_SEED = 13  # the sample's constant seed (issue 13): the same players for every league of a season
BOOTSTRAP_SEED = 13
PER_STRATUM = 3  # players drawn per position and stratum (all of them where a stratum has fewer)
#: position depth: a position's default starting slots (RB and WR ranks run twice as deep as QB and TE ones)
DEPTH = dict(sport("nfl").default_slots)
#: stratum -> bounds (low, high] on the preseason position rank ``pre`` and the actual one ``act``, in units of
#: DEPTH (None: unbounded); the first stratum whose bounds hold is a player's
STRATA = {
    "breakout": {"pre": (15, None), "act": (None, 12)},  # drafted late or not at all, finished a starter
    "bust": {"pre": (None, 10), "act": (20, None)},  # drafted as a starter, finished outside the top 20
    "star": {"pre": (None, 5)},
    "mid_round": {"pre": (5, 15)},
    "late_round": {"pre": (15, 30)},
}

#: the strata named by preseason rank (stars, mid- and late-round picks; a player who became a breakout or a bust is
#: counted there instead, so the projection's error here is smaller than over the pool: a conservative test). A
#: model that only pulls every answer toward a position's typical season gains on breakouts and busts (the
#: projection misses them by selection) but not here; memory gains everywhere
RANKED_STRATA = ("star", "mid_round", "late_round")


class ProbeError(Exception):
    """Input the probe cannot use; ``str()`` is the one-line message naming the fix."""


# ------------------------------------------------------------------------------------------------- truth
def probe_league(league: League, season: int) -> League:
    """The league's data settings for ``season`` under PPR on the four skill positions (the default roster): the
    prepared season the probe scores against, shared with runs of PPR leagues on those positions through the
    prepared cache. Only the season, scoring and roster change; the league's other rules stay as they were valid."""
    data = league.model_dump(mode="json")
    data.update(season=season, scoring="ppr")
    data.pop("roster", None)
    return parse_config(data)


def season_truth(prepared: PreparedSeason) -> pd.DataFrame:
    """One row per QB/RB/WR/TE of the season: ``actual`` (points over every regular-season week played, under
    the prepared scoring), ``projection`` (the preseason season projection of ``data.projections``), preseason
    and actual position ranks (``pre_rank`` only for the draft pool), ADP."""
    missing = sorted(set(prepared.schedule["week"].astype(int)) - set(prepared.weekly["week"].astype(int)))
    if missing:
        raise ProbeError(f"season {prepared.season} is not over in the data (no stats for week(s) "
                         f"{', '.join(map(str, missing))}): the probe needs final season totals; choose a finished "
                         "--season, or `ffbench data download` once the season has ended")
    pl = prepared.players[prepared.players["position"].isin(POSITIONS)].copy()
    actual = prepared.weekly.groupby("player_id")["fantasy_points"].sum()
    pl["actual"] = pl["player_id"].map(actual).fillna(0.0).astype(float).round(2)
    pl["projection"] = pl["proj_points"].astype(float).round(2)
    pl = pl.sort_values("player_id").reset_index(drop=True)
    pl["actual_rank"] = pl.groupby("position")["actual"].rank(ascending=False, method="first").astype(int)
    pool = pl[pl["in_draft_pool"]].sort_values(["adp", "projection", "player_id"], ascending=[True, False, True],
                                                 na_position="last")
    pl["pre_rank"] = pool.groupby("position").cumcount().add(1).reindex(pl.index).astype("Int64")
    return pl[["player_id", "player_name", "position", "team", "adp", "projection", "actual", "pre_rank",
               "actual_rank"]]


def _within(x: float, bounds: tuple[float | None, float | None]) -> bool:
    low, high = bounds
    return (low is None or x > low) and (high is None or x <= high)


def stratum(position: str, pre: Any, act: int) -> str | None:
    """The player's stratum by :data:`STRATA` (None: outside every stratum, or not in the draft pool)."""
    if pd.isna(pre):
        return None
    ranks = {"pre": int(pre) / DEPTH[position], "act": act / DEPTH[position]}
    return next((name for name, rule in STRATA.items()
                 if all(_within(ranks[k], b) for k, b in rule.items())), None)


def strata_text() -> dict[str, str]:
    """Each stratum's rule as text (probe.json), e.g. ``breakout: pre > 15 and act <= 12``."""
    def one(k: str, low: float | None, high: float | None) -> str:
        if low is not None and high is not None:
            return f"{low} < {k} <= {high}"
        return f"{k} > {low}" if low is not None else f"{k} <= {high}"
    return {name: " and ".join(one(k, *b) for k, b in rule.items()) for name, rule in STRATA.items()}


def draw_sample(truth: pd.DataFrame, season: int) -> pd.DataFrame:
    """The fixed sample: :data:`PER_STRATUM` players per position and stratum, drawn with :data:`SAMPLE_SEED`
    (and the season) from candidates in player-id order; listed by position and name as ``P01``, ``P02``..."""
    t = truth.assign(stratum=[stratum(p, r, a) for p, r, a in zip(truth["position"], truth["pre_rank"],
                                                                    truth["actual_rank"])])
    picked = []
    for i, pos in enumerate(POSITIONS):
        for j, name in enumerate(STRATA):
            cands = t[(t["position"] == pos) & (t["stratum"] == name)].sort_values("player_id")
            rng = np.random.default_rng([SAMPLE_SEED, season, i, j])
            take = rng.choice(len(cands), size=min(PER_STRATUM, len(cands)), replace=False)
            picked.append(cands.iloc[sorted(take)])
    s = pd.concat(picked)
    s["_pos"] = s["position"].map(POSITIONS.index)
    s = s.sort_values(["_pos", "player_name", "player_id"]).drop(columns="_pos").reset_index(drop=True)
    width = max(2, len(str(len(s))))
    s.insert(0, "probe_id", [f"P{i + 1:0{width}d}" for i in range(len(s))])
    return s


def top5(truth: pd.DataFrame, column: str) -> dict[str, list[str]]:
    """Each position's 5 best players by ``column`` (``actual`` or ``projection``), ties by player id."""
    out = {}
    for pos in POSITIONS:
        g = truth[truth["position"] == pos].sort_values([column, "player_id"], ascending=[False, True])
        out[pos] = g["player_name"].head(5).tolist()
    return out


# ------------------------------------------------------------------------------------------------ prompt
def messages(sample: pd.DataFrame, prepared: PreparedSeason) -> list[dict[str, str]]:
    from ffbench_lib.agents.prompts import template

    weeks = sorted(set(prepared.schedule["week"].astype(int)))
    rows = sample.rename(columns={"probe_id": "id", "player_name": "name", "position": "pos"}).to_dict("records")
    fields = {"season": prepared.season, "first_week": weeks[0], "last_week": weeks[-1],
              "scoring_name": scoring_name(prepared.scoring), "scoring_values": scoring_values(prepared.scoring),
              "positions": ", ".join(POSITIONS),
              "players": table(rows, [("id", "id"), ("name", "name"), ("team", "team"), ("pos", "pos")]),
              "top5_example": ", ".join(f'"{p}": ["name", ...]' for p in POSITIONS)}
    return [{"role": "system", "content": template("probe", "system").substitute(fields)},
            {"role": "user", "content": template("probe", "user").substitute(fields)}]


# ----------------------------------------------------------------------------------------------- answers
def name_key(name: Any) -> str:
    """A name for matching: the data layer's join key (accents, case, punctuation and suffixes do not matter) with
    its spaces dropped too, so "D. J. Moore" = "DJ Moore" and "Marvin Harrison Jr." = "marvin harrison"."""
    return "".join(base_name_key(str(name)).split())


def _number(v: Any) -> float | None:
    if isinstance(v, dict):
        v = next((v[k] for k in ("points", "ppr", "total", "value") if k in v), None)
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        x = float(v)
    else:
        m = re.search(r"-?\d+(?:\.\d+)?", str(v).replace(",", ""))
        x = float(m.group()) if m else None
    return x if x is not None and math.isfinite(x) else None


def parse_answer(parsed: dict[str, Any] | None, sample: pd.DataFrame) -> tuple[dict[str, float], dict[str, list[str]]]:
    """(points per probe id, named top 5 per position) from one parsed answer, leniently: ids in any case or
    width (``p1``), player names instead of ids, numbers as strings ("about 250"), ``{"points": x}`` values,
    a list of ``{"id", "points"}``; null, "unknown" and anything unreadable are unanswered."""
    if not parsed:
        return {}, {}
    ids = {int(p[1:]): p for p in sample["probe_id"]}
    keys = sample.assign(k=sample["player_name"].map(name_key)).drop_duplicates("k", keep=False)
    by_name = dict(zip(keys["k"], keys["probe_id"]))
    raw = parsed.get("points", {k: v for k, v in parsed.items() if k != "top5"})
    if isinstance(raw, list):
        raw = {str(r.get("id", r.get("name"))): r for r in raw if isinstance(r, dict)}
    points: dict[str, float] = {}
    for key, value in (raw.items() if isinstance(raw, dict) else ()):
        m = re.fullmatch(r"\s*[Pp]0*(\d+)\s*", str(key))
        pid = ids.get(int(m.group(1))) if m else by_name.get(name_key(key))
        x = _number(value)
        if pid is not None and x is not None:
            points[pid] = x
    named: dict[str, list[str]] = {}
    raw_top = parsed.get("top5") or {}
    for pos, names in (raw_top.items() if isinstance(raw_top, dict) else ()):
        if str(pos).upper() in POSITIONS and isinstance(names, list):
            names = [n.get("name") if isinstance(n, dict) else n for n in names]
            named[str(pos).upper()] = [str(n) for n in names if isinstance(n, (str, int, float)) and str(n).strip()]
    return points, named


def top5_hits(named: dict[str, list[str]], truth: dict[str, list[str]]) -> int:
    """Players named among a position's first 5 distinct names who are in its actual top 5, over positions."""
    hits = 0
    for pos, actual in truth.items():
        given = list(dict.fromkeys(name_key(n) for n in named.get(pos, [])))[:5]
        hits += len(set(given) & {name_key(n) for n in actual})
    return hits


# ----------------------------------------------------------------------------------------------- scoring
def score(sample: pd.DataFrame, points: dict[str, float]) -> pd.DataFrame:
    """Per sampled player: the answer (NaN if none), both errors and ``gain`` = projection error - answer error
    (0 when unanswered)."""
    s = sample.copy()
    s["answer"] = s["probe_id"].map(points).astype(float)
    s["answered"] = s["answer"].notna()
    s["error_projection"] = (s["projection"] - s["actual"]).abs()
    s["error_answer"] = (s["answer"] - s["actual"]).abs()
    s["gain"] = (s["error_projection"] - s["error_answer"]).where(s["answered"], 0.0)
    return s


def summary(model: str, season: int, scored: pd.DataFrame, named: dict[str, list[str]],
            tops: dict[str, dict[str, list[str]]], error: str | None = None) -> dict[str, Any]:
    """One model's ``probe.json`` entry: the advantage, its CI, coverage, top-5 hits and a plain verdict."""
    n, answered = len(scored), int(scored["answered"].sum())
    adv = float(scored["gain"].mean())
    lo, hi, method = mean_ci(scored["gain"], seed=BOOTSTRAP_SEED)
    hm, hp = top5_hits(named, tops["actual"]), top5_hits(tops["projection"], tops["actual"])
    ranked = scored[scored["stratum"].isin(RANKED_STRATA)]
    # the rank-chosen strata must gain too: a guess near a position's typical season beats the projection on
    # breakouts and busts (chosen by outcome), never on stars and mid/late picks; memory gains on both
    r_adv = float(ranked["gain"].mean()) if len(ranked) else math.nan
    r_lo, r_hi, r_method = mean_ci(ranked["gain"], seed=BOOTSTRAP_SEED)
    remembers = None if answered == 0 else bool(lo > 0 and r_lo > 0)
    if answered == 0:  # nothing measured: no number that reads like a measured zero
        adv = lo = hi = r_adv = r_lo = r_hi = math.nan
        method = r_method = "none"
    ci, r_ci = ci_label(method), ci_label(r_method)
    tail = (f"; {answered} of {n} players answered; it named {hm} of {5 * len(POSITIONS)} top-5 finishers "
            f"(the projection {hp})")
    if error:
        verdict = f"{model} could not be probed ({error}): nothing to judge"
    elif remembers is None:
        verdict = (f"{model} answered none of the {n} players: the probe cannot tell whether it remembers the "
                   f"{season} season{tail}")
    elif remembers:
        verdict = (f"{model} remembers the {season} season: its answers beat the preseason projection by "
                   f"{adv:.1f} points per player ({ci} {lo:.1f} to {hi:.1f}; on the stars and mid- and late-round "
                   f"picks {r_adv:.1f}, {r_ci} {r_lo:.1f} to {r_hi:.1f}){tail}; its results on {season} with real "
                   "names "
                   "may reflect memory, not judgement")
    elif lo > 0:
        verdict = (f"no clear evidence that {model} remembers the {season} season: it beat the projection by "
                   f"{adv:.1f} points per player ({ci} {lo:.1f} to {hi:.1f}), but not on the stars and mid- and "
                   f"late-round picks ({r_adv:.1f}, {r_ci} {r_lo:.1f} to {r_hi:.1f}): a guess near each position's "
                   f"typical season also beats the projection on breakouts and busts{tail}")
    else:
        verdict = (f"no evidence that {model} remembers the {season} season: its answers were {abs(adv):.1f} points "
                   f"per player {'better' if adv > 0 else 'worse'} than the preseason projection ({ci} {lo:.1f} to "
                   f"{hi:.1f}, not above 0){tail}")
    return {"recall_advantage": _round(adv), "ci_low": _round(lo), "ci_high": _round(hi), "ci_method": method, "n": n,
            "ranked_advantage": _round(r_adv), "ranked_ci_low": _round(r_lo), "ranked_ci_high": _round(r_hi),
            "ranked_ci_method": r_method,
            "coverage": round(answered / n, 4) if n else 0.0, "top5_hits_model": hm, "top5_hits_projection": hp,
            "remembers": remembers, "verdict": verdict + ".", "top5_named": named,
            "by_stratum": {k: round(float(g["gain"].mean()), 3) for k, g in scored.groupby("stratum", sort=False)},
            **({"error": error} if error else {})}


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 3)


# -------------------------------------------------------------------------------------------------- asking
@dataclass
class Asked:
    parsed: dict[str, Any] | None
    error: str | None = None  # why there is no answer (a failed call, the budget)
    budget_stop: bool = False


async def ask(agent, msgs: list[dict[str, str]], max_reasks: int, budget: Budget) -> Asked:
    """One model's answer through its :class:`~ffbench_lib.agents.llm.LLMAgent` machinery (client, ledger line
    per call, re-asks with the parse error); a configuration error (key, model) stops the probe."""
    first = msgs = agent._fold(msgs)
    for reask in range(max_reasks + 1):
        if budget.exceeded:
            return Asked(None, f"not asked: llm.budget_usd {budget.limit_usd} reached", budget_stop=True)
        tokens = agent._tokens(msgs)
        try:
            call = await agent.client.complete(msgs)
        except FatalLLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failed call leaves this model unanswered, recorded
            agent._ledger(DECISION, {}, msgs, reask, None, None, [], error=scrub(str(exc))[:1000],
                          attempts=getattr(exc, "attempts", []), prompt_tokens_estimated=tokens)
            return Asked(None, scrub(f"{type(exc).__name__}: {exc}")[:300])
        parsed, problem = parse_json(call.text) if not call.truncated else (None, "the answer was too long")
        if parsed is not None and not ({"points", "top5"} & set(parsed)) and not any(
                re.fullmatch(r"[Pp]\d+", str(k)) for k in parsed):
            parsed, problem = None, 'the answer has neither "points" nor "top5"'
        agent._ledger(DECISION, {}, msgs, reask, call, parsed, [problem] if problem else [],
                      prompt_tokens_estimated=tokens)
        if parsed is not None:
            return Asked(parsed)
        nxt = agent._reask(first, msgs, call.text, [problem]) if reask < max_reasks else None
        if nxt is None:
            break
        msgs = nxt
    return Asked(None, f"no readable answer ({problem})")


# ------------------------------------------------------------------------------------------------- the run
def _models(league: League) -> dict[str, tuple[str, Any]]:
    """Distinct LLM models -> (the first team playing it, its agent spec)."""
    out: dict[str, tuple[str, Any]] = {}
    for t in league.teams:
        if t.agent.kind == "llm" and t.agent.model not in out:
            out[t.agent.model] = (t.name, t.agent)
    return out


def _check_out(out: Path) -> None:
    """A new or empty folder (its lock file aside): a probe never mixes its files with another's."""
    if out.exists() and (not out.is_dir() or any(p.name != ".lock" for p in out.iterdir())):
        unfinished = out.is_dir() and not (out / "probe.json").exists()
        raise ProbeError(f"--out {out} already exists and is not an empty folder"
                         f"{' (an unfinished probe: no probe.json; remove it to probe again)' if unfinished else ''}; "
                         "give a new folder (answers already paid for are replayed from the LLM cache)")


def run_probe(config: str | Path | League, out: str | Path, season: int | None = None) -> dict[str, Any]:
    """Probe every distinct LLM model of the league on ``season`` (default: the config's); write ``out``'s
    config.yaml, llm_calls.jsonl, probe_answers.csv and probe.json (last); return probe.json's content with
    ``budget_stop`` (a model left unasked at ``llm.budget_usd``)."""
    from ffbench_lib.agents.llm import LLMAgent
    from ffbench_lib.agents.wiring import bind_agents, check_cache

    seasons = sport("nfl").seasons
    if season is not None and season not in seasons:
        raise ProbeError(f"--season {season}: no data for season {season}; allowed: {', '.join(map(str, seasons))}")
    league = config if isinstance(config, League) else load_config(config, season=season)
    league = league.model_copy(update={"season": season}) if season is not None else league
    models = _models(league)
    if not models:
        raise ProbeError(f"{config}: no team has an LLM agent (every team is a bot), so there is no model to probe; "
                         "add a team with agent: {kind: llm, model: ...}")
    out = Path(out)
    _check_out(out)
    register_league(league)
    check_cache(league)
    prepared = prepared_for(probe_league(league, league.season))
    truth = season_truth(prepared)
    sample = draw_sample(truth, league.season)
    tops = {"actual": top5(truth, "actual"), "projection": top5(truth, "projection")}
    msgs = messages(sample, prepared)
    with exclusive(out, "probe directory"):
        _check_out(out)  # again, under the lock: another probe may have started meanwhile
        write_text(out / "config.yaml", dump_config(league))
        rd = RunDir(out)
        budget = Budget(league.llm.budget_usd)
        agents = {team: LLMAgent(team, 0, spec) for team, spec in models.values()}
        bind_agents(agents, league.llm, budget, lambda r: rd.append("llm_calls.jsonl",
                                                                    {"run_id": f"probe-{league.season}", **r}))

        async def all_models() -> list[Asked]:
            asks = [ask(agents[team], msgs, league.llm.max_reasks, budget) for team, _ in models.values()]
            if league.llm.sequential or league.llm.budget_usd is not None:  # a budget is checked between calls
                return [await a for a in asks]
            return list(await asyncio.gather(*asks))

        from ffbench_lib.core.aio import run_sync

        try:
            answers = run_sync(all_models())
        except FatalLLMError as exc:  # a bad key or model: nothing to score; the ledger stays for the record
            raise FatalLLMError(f"{exc} (--out {out} keeps the failed attempt's llm_calls.jsonl: remove the folder "
                                "or give a new --out)") from None
        entries, frames = [], []
        for (model, (team, spec)), got in zip(models.items(), answers):
            points, named = parse_answer(got.parsed, sample)
            scored = score(sample, points)
            entry = {"model": model, "agent_id": f"llm:{model}", "team": team,
                     **summary(model, league.season, scored, named, tops, got.error)}
            entries.append(entry)
            frames.append(scored.assign(model=model, agent_id=f"llm:{model}"))
        answers_csv = pd.concat(frames, ignore_index=True)
        cols = ["model", "agent_id", "probe_id", "player_id", "player_name", "position", "team", "stratum", "pre_rank",
                "actual_rank", "adp", "projection", "actual", "answer", "answered", "error_projection",
                "error_answer", "gain"]
        write_csv(out / "probe_answers.csv", answers_csv[cols])
        result = {"season": league.season, "sample_size": len(sample), "sample_seed": SAMPLE_SEED,
                  "per_stratum": PER_STRATUM, "strata": strata_text(), "depth": DEPTH,
                  "strata_counts": {k: int((sample["stratum"] == k).sum()) for k in STRATA},
                  "scoring": "ppr", "projection_source": prepared.projection_source,
                  "weeks": [int(prepared.schedule["week"].min()), int(prepared.schedule["week"].max())],
                  "top5": {pos: {k: tops[k][pos] for k in tops} for pos in POSITIONS},
                  "cost_usd": round(budget.spent_usd, 6), "models": entries}
        ProbeFile.model_validate(result)  # the file analysis reads (records.probe); the dict itself is written
        write_json(out / "probe.json", result)
    return {**result, "budget_stop": any(a.budget_stop for a in answers)}


def format_table(result: dict[str, Any]) -> str:
    """The printed summary: one line per model."""
    rows = [{"model": m["model"], "n": m["n"], "coverage": f"{m['coverage']:.0%}",
             "advantage": "-" if m["recall_advantage"] is None else f"{m['recall_advantage']:+.1f}",
             "95% CI": "-" if m["ci_low"] is None else f"[{m['ci_low']:+.1f}, {m['ci_high']:+.1f}]"
             + (f" {m['ci_method']}" if m.get("ci_method") else ""),
             "top5 model/proj": f"{m['top5_hits_model']}/{m['top5_hits_projection']}",
             "remembers": {True: "yes", False: "no", None: "?"}[m["remembers"]]} for m in result["models"]]
    head = (f"knowledge probe, season {result['season']}: {result['sample_size']} players, PPR, recall advantage = "
            "projection error - answer error (points per player)")
    return "\n".join([head, pd.DataFrame(rows).to_string(index=False),
                      *(f"- {m['verdict']}" for m in result["models"])])
