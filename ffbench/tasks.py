"""ffbench's inspect_ai tasks (the ``inspect`` extra), registered through inspect's ``inspect_ai`` entry point:

* ``inspect eval ffbench/exam -T suite=SUITE_DIR --model M``: one sample per state of an exam suite; the model
  answers through ffbench's LLM agent (prompt, re-asks, validation: :class:`ffbench.seat.InspectSeat`) and the
  score is the state's exact score by its skill's own rule (:func:`ffbench_lib.runs.exam.result_row`);
* ``inspect eval ffbench/season -T config=CONFIG --model-role seat1=M1 --model-role seat2=M2``: one sample per
  seed; model role ``seatK`` plays the config's K-th team (without seat roles, ``--model`` plays the first), the
  config's own agents (bots) the rest; the scores are the seats' season metrics (points for, win rate, rank,
  start/sit regret).

Beside inspect's log each writes an ffbench folder our analysis reads (``<log>.ffbench/``): an exam's
``exam_results.parquet``, ``exam.json`` and ``llm_calls.jsonl``, as ``ffbench exam run`` writes them; a season's run
directory per seed (``seed-<k>/``), as ``ffbench run`` writes it. ``-T out=DIR`` puts it elsewhere.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model, model_roles
from inspect_ai.scorer import Score, Target, grouped, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from ffbench.seat import InspectSeat, chat

#: the suites and configs of the tasks constructed in this process (by path), for their solvers and scorers
_SUITES: dict[str, tuple[dict, dict[str, dict]]] = {}
_WRITERS: dict[str, "_ExamResults"] = {}
SEAT = re.compile(r"^seat([1-9]\d*)$")


def _refuse(message: str):
    """A one-line error inspect prints without a traceback (its own prerequisite errors are shown so)."""
    from inspect_ai._util.error import PrerequisiteError

    return PrerequisiteError(" ".join(str(message).split()))


def _beside_log(out: str | None, what: str) -> Path:
    """The ffbench folder of this eval: ``out``, else beside inspect's log file (``<log>.ffbench``)."""
    if out:
        return Path(out).resolve()
    from inspect_ai.log._samples import sample_active

    active = sample_active()
    location = getattr(active, "log_location", None) or ""
    if not location or "://" in location.removeprefix("file://"):
        raise _refuse(f"ffbench/{what}: inspect's log is not a local file ({location or 'none'}); give the ffbench "
                      f"folder with -T out=DIR")
    log = Path(location.removeprefix("file://")).resolve()  # inspect names it relative to the working folder
    return log.with_name(log.name.rsplit(".", 1)[0] + ".ffbench")


def _settings(max_reasks: int | None):
    from ffbench_lib.config.league import LLMSettings

    return LLMSettings(**({"max_reasks": max_reasks} if max_reasks is not None else {}))


# ------------------------------------------------------------------------------------------------ exam
@task
def exam(suite: str | None = None, max_reasks: int | None = None, out: str | None = None) -> Task:
    """Every state of the suite ``suite`` (a folder ``ffbench exam build`` wrote) as one sample; the model answers
    through ffbench's LLM agent and each answer is scored exactly by its skill (``score``, ``regret``; means per
    skill). ``max_reasks``: re-asks after an invalid answer (default 2, as a league's ``llm.max_reasks``)."""
    from ffbench_lib.agents.prompts import messages
    from ffbench_lib.game.skills import shown
    from ffbench_lib.runs.exam import RunDirError, load_suite

    if not suite:
        raise _refuse("ffbench/exam: no suite given; pass -T suite=SUITE_DIR (a folder `ffbench exam build` wrote)")
    try:
        meta, states = load_suite(suite)
    except RunDirError as exc:
        raise _refuse(f"ffbench/exam: -T suite={suite}: {exc}") from None
    if not states:
        raise _refuse(f"ffbench/exam: -T suite={suite}: the suite holds no state; build one whose skills draw states")
    key = str(Path(suite).resolve())
    _SUITES[key] = (meta, {s["state_id"]: s for s in states})
    samples = [Sample(id=s["state_id"], input=chat(messages(s["kind"], shown(s, False))),
                      metadata={"state_id": s["state_id"], "skill": s["skill"], "sport": s["sport"],
                                "season": str(s["season"]), "week": s["week"], "source": s["source"],
                                "team_season": s["team_season"]})
               for s in states]
    return Task(dataset=MemoryDataset(samples, name=meta["name"]),
                solver=exam_answer(key, max_reasks, out), scorer=exam_score(key),
                metadata={"ffbench_suite": meta["name"], "suite_sha256": meta["states_sha256"]})


class _ExamResults:
    """The eval's ffbench results folder: every scored state a row of ``exam_results.parquet`` (rewritten whole,
    atomically, after each), ``exam.json``, and the ledger ``llm_calls.jsonl``."""

    def __init__(self, folder: Path, meta: dict, suite: str):
        from ffbench_lib.runs.rundir import RunDir

        self.folder, self.meta, self.suite = folder, meta, suite
        self.rundir = RunDir(folder)
        self.rows: dict[tuple[str, str], dict] = {}
        folder.mkdir(parents=True, exist_ok=True)

    def log(self, state_id: str, record: dict) -> None:
        self.rundir.append("llm_calls.jsonl", {"exam": self.meta["name"], "state_id": state_id, **record})

    def add(self, row: dict, candidate: dict) -> None:
        import pandas as pd

        from ffbench_lib.core.atomic import write_json, write_parquet
        from ffbench_lib.runs.exam import COLUMNS, RESULTS, RESULTS_META
        from ffbench_lib.runs.runner import code_fingerprint

        self.rows[(row["agent"], row["state_id"])] = row
        write_parquet(self.folder / RESULTS, pd.DataFrame(list(self.rows.values()), columns=COLUMNS))
        write_json(self.folder / RESULTS_META, {
            "suite": self.meta["name"], "suite_sha256": self.meta["states_sha256"], "suite_dir": self.suite,
            "states": len({k[1] for k in self.rows}), "candidates": [candidate],
            "information": {"masking": "off", "numbers": "exact"}, "cost_usd": None,
            "code_fingerprint": code_fingerprint(), "via": "inspect_ai"})


@solver
def exam_answer(suite: str, max_reasks: int | None = None, out: str | None = None):
    """The model answers the sample's state as an ffbench LLM candidate does (``_answer``, the exam's own ask)."""
    from ffbench_lib.agents.wiring import RunContext
    from ffbench_lib.game.skills import shown
    from ffbench_lib.llm.client import Budget
    from ffbench_lib.runs.exam import _answer

    settings = _settings(max_reasks)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta, states = _SUITES[suite]
        st = states[str(state.sample_id)]
        folder = _beside_log(out, "exam")
        writer = _WRITERS.setdefault(str(folder), _ExamResults(folder, meta, suite))
        model = get_model()
        seat = InspectSeat(st["team_season"], 0, model)
        seat.bind(RunContext(settings, None, Budget(None), lambda record: writer.log(st["state_id"], record)))
        answer, problems = await _answer(seat, st, shown(st, False))
        raw = (answer or {}).get("_llm", {}).get("raw_text") if isinstance(answer, dict) else None
        state.output = ModelOutput.from_content(str(model), raw or "")
        state.messages.append(state.output.message)
        state.metadata["ffbench"] = {"answer": answer, "problems": problems, "agent": str(model),
                                     "agent_id": seat.agent_id, "results": str(folder)}
        return state

    return solve


@scorer(metrics={"score": [grouped(mean(), "skill")], "regret": [grouped(mean(), "skill")],
                 "repaired": [grouped(mean(), "skill")]})
def exam_score(suite: str):
    """The state's exact score and regret by its skill's rule (the row ``ffbench exam run`` writes for it), and
    ``repaired``: 1 where the answer was invalid and the rules answered instead (its mean: the repaired share, which
    ``ffbench exam run`` refuses above ``llm.max_fallback_rate``: a model the rules mostly answered for scores as
    the engine's fallback)."""
    from ffbench_lib.runs.exam import result_row

    async def score(state: TaskState, target: Target) -> Score:
        meta, states = _SUITES[suite]
        st, got = states[str(state.sample_id)], state.metadata["ffbench"]
        row = result_row(meta, st, got["agent"], got["agent_id"], got["answer"], got["problems"])
        folder = Path(got["results"])
        writer = _WRITERS.setdefault(str(folder), _ExamResults(folder, meta, suite))
        writer.add(row, {"name": got["agent"], "agent": {"kind": "llm", "model": got["agent"]}})
        repaired = float(row["decided_by"] != "agent")
        return Score(value={"score": row["score"], "regret": row["regret"], "repaired": repaired},
                     answer=row["applied"],
                     explanation=row["problems"],
                     metadata={"best_possible": row["best_possible"], "decided_by": row["decided_by"]})

    return score


# ------------------------------------------------------------------------------------------------ season
def _seeds(seeds: Any, default: int) -> list[int]:
    if seeds is None:
        return [default]
    items = seeds if isinstance(seeds, (list, tuple)) else str(seeds).split(",")
    try:
        out = [int(str(x).strip()) for x in items if str(x).strip()]
    except ValueError:
        out = []
    if not out or any(s < 0 for s in out) or len(set(out)) != len(out):
        raise _refuse(f"ffbench/season: -T seeds={seeds}: give distinct whole numbers from 0, e.g. -T seeds=1,2,3")
    return out


def _league(config: str, seed: int, weeks: int | None):
    from ffbench_lib.config.load import load_yaml, parse_config

    raw = load_yaml(Path(config), "league config")
    if not isinstance(raw, dict):
        from ffbench_lib.config.errors import ConfigError

        raise ConfigError([f"(top level): expected a mapping of keys to values, got {type(raw).__name__}"],
                          config)
    return parse_config({**raw, "seed": seed, **({"weeks": weeks} if weeks is not None else {})}, config)


@task
def season(config: str | None = None, seeds: Any = None, weeks: int | None = None, out: str | None = None) -> Task:
    """One sample per seed of the league ``config``: model roles ``seat1``, ``seat2``, ... play its first, second,
    ... team (without any, ``--model`` plays the first), its own agents the rest. ``seeds`` (``-T seeds=1,2``):
    default the config's seed; ``weeks``: a shorter season."""
    from ffbench_lib.config.errors import ConfigError

    if not config:
        raise _refuse("ffbench/season: no league given; pass -T config=CONFIG (a league YAML, e.g. params/demo.yaml)")
    if not Path(config).is_file():
        raise _refuse(f"ffbench/season: -T config={config}: no such file; give a league YAML (e.g. params/demo.yaml)")
    try:
        league = _league(config, 0, weeks)
    except ConfigError as exc:
        raise _refuse(f"ffbench/season: -T config={config}: {'; '.join(exc.problems)}") from None
    from ffbench_lib.config.load import load_yaml

    found = load_yaml(Path(config), "league config").get("seed", league.seed)
    samples = [Sample(id=f"seed-{s}", input=f"ffbench season {league.name}, seed {s}", metadata={"seed": s})
               for s in _seeds(seeds, found)]
    return Task(dataset=MemoryDataset(samples, name=league.name), solver=season_play(config, weeks, out),
                scorer=season_score(), metadata={"ffbench_league": league.name})


def _seats(n_teams: int) -> dict[str, Any]:
    """seat role -> its model: the ``seatK`` roles given, else the eval's model as ``seat1``."""
    roles = {r: m[0] if isinstance(m, list) else m for r, m in model_roles().items() if SEAT.match(r)}
    if not roles:
        return {"seat1": get_model()}
    far = [r for r in roles if int(SEAT.match(r).group(1)) > n_teams]
    if far:
        raise _refuse(f"ffbench/season: --model-role {far[0]}: the league has {n_teams} teams (seat1 to "
                      f"seat{n_teams})")
    return dict(sorted(roles.items(), key=lambda kv: int(SEAT.match(kv[0]).group(1))))


@solver
def season_play(config: str, weeks: int | None = None, out: str | None = None):
    """Play the sample's seed: the seats' models through ffbench's LLM agent, the rest as the config says."""
    from ffbench_lib.agents.wiring import build_agents
    from ffbench_lib.config.league import League
    from ffbench_lib.data.prepare import prepared_for
    from ffbench_lib.runs.runner import Engine

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seed = int(state.metadata["seed"])
        league = _league(config, seed, weeks)
        seats = _seats(len(league.teams))
        teams = {}
        raw = league.model_dump(mode="json")
        for role, model in seats.items():
            k = int(SEAT.match(role).group(1)) - 1
            teams[league.teams[k].name] = (role, model)
            raw["teams"][k]["agent"] = {"kind": "llm", "model": str(model)}
        league = League.model_validate(raw)  # config.yaml names the seats' models
        agents = build_agents(league, seed, llm_factory=lambda team, s, spec: InspectSeat(team, s, teams[team][1]))
        run = _beside_log(out, "season") / f"seed-{seed}"
        engine = Engine(league, prepared_for(league), run, agents=agents, progress=False)
        final = await engine.run()
        state.output = ModelOutput.from_content("ffbench", f"season {league.name} seed {seed}: {run}")
        state.metadata["ffbench"] = {"run": str(run), "seats": {t: r for t, (r, _) in teams.items()},
                                     "status": getattr(final, "status", None)}
        return state

    return solve


@scorer(metrics={"*": [mean()]})
def season_score():
    """Each seat's season metrics from the run directory (``ffbench_lib.analysis.metrics``): points for, win rate
    (its team's record), final regular-season rank, start/sit regret over the season."""
    from ffbench_lib.analysis import metrics

    async def score(state: TaskState, target: Target) -> Score:
        got = state.metadata["ffbench"]
        runs = metrics.load_runs(got["run"])
        st = metrics.standings(runs).set_index("team")
        ss = metrics.start_sit_season(runs).set_index("team")
        value, table = {}, {}
        for team, role in got["seats"].items():
            value[f"{role}_points_for"] = float(st.loc[team, "points_for"])
            value[f"{role}_win_rate"] = float(st.loc[team, "win_rate"])
            value[f"{role}_rank"] = float(st.loc[team, "rank"])
            value[f"{role}_left_on_table"] = float(ss.loc[team, "left_on_table"])
        for team, r in st.iterrows():
            table[team] = {"agent": r["agent"], "points_for": float(r["points_for"]), "rank": int(r["rank"]),
                           "win_rate": float(r["win_rate"])}
        return Score(value=value, answer=json.dumps(got["seats"]), explanation=f"run directory {got['run']}",
                     metadata={"standings": table, "run": got["run"]})

    return score
