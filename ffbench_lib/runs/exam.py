"""Exams: the same decision states for every candidate, scored exactly, skill by skill.

``ffbench exam build SPEC --out SUITE`` plays the spec's source seasons (bot leagues on real data: several seasons,
both sports, every team a policy, so the states come from several policies' rosters) into ``SUITE/sources/``, and
draws each skill's states from them (:mod:`ffbench_lib.game.skills`: a few per team-season, stratified by week or
round and by position scarcity).
A state holds the view exactly as the season showed it (in its own key order, so its prompt is the season's prompt
byte for byte; ``decisions.jsonl`` sorts keys) and, apart, the truth it is scored by. ``states.jsonl`` is frozen:
``suite.json`` records its SHA-256, the format version, the spec and each source league, and a suite whose states
were edited is refused.

``ffbench exam run SUITE CANDIDATES --out RESULTS`` asks every candidate (bots and models, from a candidates file
such as ``params/exam_bots.yaml``) every state through the same agents, client, replay cache, budget and ledger
(``RESULTS/llm_calls.jsonl``) as a season, and writes ``RESULTS/exam_results.parquet``: one row per state and
candidate (:data:`COLUMNS`). A rerun with the same cache replays every answer.
"""
from __future__ import annotations

import asyncio
import contextvars
import copy
import hashlib
import json
import random
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ffbench_lib.agents.base import Agent
from ffbench_lib.agents.wiring import bind_agents, build_agent, check_cache_for
from ffbench_lib.config.batch import SeasonName
from ffbench_lib.config.errors import ConfigError, format_validation_error
from ffbench_lib.config.league import BotAgent, Information, League, LLMAgent, LLMSettings, PythonAgent
from ffbench_lib.config.load import load_config, load_yaml, parse_config
from ffbench_lib.core.aio import run_sync
from ffbench_lib.core.atomic import write_json, write_parquet, write_text
from ffbench_lib.game.seat import Answered, StopRun
from ffbench_lib.game.skills import SKILLS, scarcity, shown
from ffbench_lib.llm.cache import ReplayMiss
from ffbench_lib.llm.client import Budget, FatalLLMError
from ffbench_lib.runs.batch import Stratum, strata
from ffbench_lib.runs.rundir import RunDir, RunDirError, exclusive
from ffbench_lib.runs.runner import Engine, code_fingerprint

FORMAT = "ffbench-exam-suite"
#: the suite format's version: a suite of another version is refused (rebuild it)
VERSION = 2  # 2: each state names its position-scarcity stratum
SUITE, STATES, RESULTS, RESULTS_META = "suite.json", "states.jsonl", "exam_results.parquet", "exam.json"
#: exam_results.parquet's columns, in order (``roster``/``started``: start/sit's lists of player ids, else empty;
#: ``stratum``: the state's position scarcity, :func:`~ffbench_lib.game.skills.scarcity`; ``view``: ``protected``
#: where the answer was judged as a protected team's (:func:`judged_as`), else ``exact``; ``detail``: the skill's own
#: numbers as JSON, e.g. a trade's value accepted and kept)
COLUMNS = ["suite", "state_id", "skill", "sport", "season", "week", "round", "stratum", "view", "source",
           "team_season", "source_agent", "agent", "agent_id", "answer", "applied", "decided_by", "problems", "score",
           "best_possible", "regret", "roster", "started", "detail"]


#: the decision kinds whose lists a protected team sees cut (:meth:`~ffbench_lib.game.views.Firewall.board`,
#: ``free_agent_lists``): a protected suite freezes both versions of their views
CUT_KINDS = frozenset({"draft_shortlist", "waiver_claims"})
#: the state a candidate's call answers (each answer is its own task, so its ledger line names its state)
_STATE: contextvars.ContextVar[str | None] = contextvars.ContextVar("exam_state", default=None)


class SuiteError(RunDirError):
    """A suite or results folder that cannot be used as it is (exit 2, naming the file)."""


# ------------------------------------------------------------------------------------------------ the spec
class SkillDraw(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    per_team_season: int | dict[str, int] = Field(
        3, description="states drawn per team and season (one per week bin), or per sport {nfl: 3, fpl: 12}: a "
                       "sport whose lineups barely differ needs more states (docs/exams.md)")

    @field_validator("per_team_season", mode="before")
    @classmethod
    def _counts(cls, value: Any) -> Any:
        def one(x: Any, where: str) -> int:
            if isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= 40:
                raise ValueError(f"{where}{x!r} is no count of states: give a whole number from 1 to 40")
            return x
        if isinstance(value, dict):
            if not value:
                raise ValueError("an empty mapping: give one count, or a count per sport ({nfl: 3, fpl: 30})")
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                raise ValueError(f"{bad[0]!r} is no sport: key the counts by sport ({{nfl: 3, fpl: 30}})")
            return {k: one(v, f"{k}: ") for k, v in value.items()}
        return one(value, "")

    def count(self, sport: str) -> int:
        return self.per_team_season[sport] if isinstance(self.per_team_season, dict) else self.per_team_season


class ExamSpec(BaseModel):
    """An exam suite: where its states come from and how many of each skill."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    base: Path | dict[str, Path] = Field(description="the source seasons' league (relative to the spec file), or "
                                                     "one per sport: {nfl: demo.yaml, fpl: fpl_draft.yaml}")
    seasons: list[SeasonName] | dict[str, list[SeasonName]] = Field(
        description="the source seasons: a list for the base's sport, or per sport {nfl: [2023, 2024], fpl: [2024-25]}")
    seeds: list[Annotated[int, Field(ge=0)]] = Field(min_length=1, description="source seasons per season")
    skills: dict[str, SkillDraw] = Field(min_length=1, description="skill -> how many states to draw")
    draw_seed: int = Field(0, ge=0, description="the seed of the draw of states")
    protected: bool = Field(False, description="also freeze each draft board and free-agent list as a team shown "
                                               "protected numbers would see it (cut by the protected value), so "
                                               "candidates may run with information.numbers: protected")
    overrides: dict[str, Any] = Field(default_factory=dict,
                                      description="config changes merged into every source league, as a batch's "
                                                  "(e.g. {waivers: {enabled: true}} for waiver states)")

    @field_validator("skills")
    @classmethod
    def _known_skills(cls, value: dict[str, SkillDraw]) -> dict[str, SkillDraw]:
        unknown = sorted(set(value) - set(SKILLS))
        if unknown:
            raise ValueError(f"unknown skill(s) {', '.join(unknown)}; known: {', '.join(SKILLS)}")
        return value

    @model_validator(mode="after")
    def _unique_seeds(self) -> "ExamSpec":
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds: a seed is listed twice")
        for key in ("season", "seed", "name"):
            if key in self.overrides:
                raise ValueError(f"overrides: sets `{key}`, which the exam sets from its seasons, seeds and name")
        if isinstance(self.base, dict) != isinstance(self.seasons, dict) or (
                isinstance(self.base, dict) and set(self.base) != set(self.seasons)):
            raise ValueError("base: give one league file with a list of seasons, or one league file per sport with "
                             "seasons per sport (the same sports)")
        for name, draw in self.skills.items():
            if not isinstance(draw.per_team_season, dict):
                continue
            if not isinstance(self.seasons, dict):
                raise ValueError(f"skills.{name}.per_team_season: counts per sport need seasons per sport "
                                 "({nfl: [...], fpl: [...]}); give one number")
            if set(draw.per_team_season) != set(self.seasons):
                raise ValueError(f"skills.{name}.per_team_season: counts for {', '.join(sorted(draw.per_team_season))}"
                                 f"; the spec's sports are {', '.join(sorted(self.seasons))} (one count each)")
        return self


def _validated(p: Path, model: type[BaseModel], what: str, expected: str) -> Any:
    """``model`` read from the YAML file ``p``; :class:`ConfigError` naming the file (and the field) otherwise."""
    data = load_yaml(p, what)
    if not isinstance(data, dict):
        raise ConfigError([f"(top level): expected {expected}, got {type(data).__name__}"], str(p), what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), str(p), what) from None


def load_spec(path: str | Path) -> tuple[ExamSpec, list[Stratum]]:
    """The validated spec and its source seasons; :class:`ConfigError` (naming the file) for anything unusable."""
    p = Path(path)
    spec = _validated(p, ExamSpec, "exam spec", "a mapping of keys to values")
    bases = {}
    for key, given in (spec.base.items() if isinstance(spec.base, dict) else [(None, spec.base)]):
        found = given if given.is_absolute() else p.parent / given
        if not found.is_file():
            raise ConfigError([f"base{'.' + key if key else ''}: league file {found} not found (relative paths start "
                               "at the spec file's folder)"], str(p), "exam spec")
        bases[key] = found
    try:
        layers = strata(spec, bases[None] if None in bases else bases)  # type: ignore[arg-type]
    except ConfigError as exc:
        if exc.source:  # a base league's own error names its file
            raise
        raise ConfigError(exc.problems, str(p), "exam spec") from None
    for layer in layers:
        league = load_config(layer.base)  # its errors name the base file
        people = [t.name for t in league.teams if t.agent.kind != "bot"]
        if people:
            raise ConfigError([f"base: {layer.base.name} has teams that are not bots ({', '.join(people)}); an "
                               "exam's source seasons are bot seasons (each team a policy), candidates answer "
                               "their states in `ffbench exam run`"], str(p), "exam spec")
    return spec, layers


# ------------------------------------------------------------------------------------------------ building
class _Source(Engine):
    """A source season: an ordinary run (into the suite's ``sources/``) that also keeps each decision's view as the
    agent saw it, in its own key order; with ``protected``, beside each draft board and free-agent list also the
    one a team shown protected numbers would have seen at that moment (cut by the protected value)."""

    def __init__(self, *args, kinds: frozenset[str], protected: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds = kinds  # the decision kinds the spec's skills draw from: only these views are kept
        self.captured: list[dict[str, Any]] = []
        self.protected = protected
        self._boards: dict[tuple[str, int], list[dict]] = {}  # (team, pick) -> protected boards, in build order
        if protected:
            exact = self.fw.draft_view

            def draft_view(state, team, pick, rnd):  # the protected board of the same moment, built beside it
                with self.fw.shown_protected(team):
                    cut = exact(state, team, pick, rnd)["available"]
                self._boards.setdefault((team, pick), []).append(cut)
                return exact(state, team, pick, rnd)
            self.fw.draft_view = draft_view

    def _protected_view(self, record: dict, state) -> dict | None:
        """The view of ``record`` as a protected team saw it: a draft board built beside it, or the free-agent
        lists of its waiver window (rebuilt from the window's pool, which nothing has changed yet: checked)."""
        from ffbench_lib.game.decisions.waiver_claims import best_free_agents, pool

        view = record["view"]
        if record["decision"] == "draft_shortlist":
            return {**view, "available": self._boards[(record["team"], record["pick"])].pop(0)}
        if record["decision"] == "waiver_claims":
            w = record["week"]
            players = pool(self.fw, state, w)
            ids = lambda lists: {pos: [c["id"] for c in cards] for pos, cards in lists.items()}  # noqa: E731
            if ids(best_free_agents(self.fw, players, w)) != ids(view["free_agents"]):
                raise AssertionError(f"exam build: the waiver pool of week {w} changed before {record['team']}'s "
                                     "claims were recorded")
            with self.fw.shown_protected(record["team"]):
                return {**view, "free_agents": best_free_agents(self.fw, players, w, protected=True)}
        return None

    def decision_sink(self, state):
        write = super().decision_sink(state)

        def sink(record: dict, view_json) -> None:
            if record["decision"] in self.kinds:
                got = {"decision": record["decision"], "team": record["team"], "agent": record["agent"],
                       "week": record["week"], "pick": record["pick"],
                       "view": json.loads(json.dumps(record["view"], default=str))}
                cut = self._protected_view(record, state) if self.protected else None
                if cut is not None:
                    got["protected_view"] = json.loads(json.dumps(cut, default=str))
                self.captured.append(got)
            write(record, view_json)
        return sink


class _Truth:
    """What really happened in a source season, as a skill scores by it (never shown to an agent)."""

    def __init__(self, eng: Engine, final):
        self.eng = eng
        #: pick -> the player drafted with it (the season's draft_picks)
        self.picks = {r["pick"]: r["player_id"] for r in final.tables.get("draft_picks", [])}
        self._par: dict[str, float] | None = None  # above_replacement, once

    def drafted_before(self, pick: int) -> set[str]:
        """The players drafted with the picks before ``pick`` (an on-deck board still shows the last of them)."""
        return {p for k, p in self.picks.items() if k < pick}

    def points(self, w: int) -> dict[str, float]:
        return self.eng.actual.get(w, {})

    @property
    def weeks(self) -> int:
        return self.eng.league.weeks

    def above_replacement(self) -> dict[str, float]:
        """player -> his season's points above his position's replacement level (the season of the player ranked
        teams x starting slots + 1 there), over every player who played (kept: one pass per source season)."""
        if self._par is None:
            lg, pos = self.eng.league, self.eng.catalog.position
            season: dict[str, float] = {}
            for w in range(1, lg.weeks + 1):
                for p, pts in self.points(w).items():
                    season[p] = season.get(p, 0.0) + float(pts)
            by_pos: dict[str, list[float]] = {}
            for p, v in season.items():
                by_pos.setdefault(pos.get(p), []).append(v)
            level = {}
            for position, vals in by_pos.items():
                vals.sort(reverse=True)
                k = len(lg.teams) * max(lg.roster.starting(position) if position else 0, 1)
                level[position] = vals[k] if k < len(vals) else 0.0
            self._par = {p: round(v - level[pos.get(p)], 2) for p, v in season.items()}
        return self._par

    def plays(self, w: int) -> frozenset[str]:
        """The players who played in week ``w`` (a stat line that week; with minutes in the data, minutes above 0):
        a player on IR comes back the first week he plays (the injury report leaves a player off in his bye week
        and once he is on the NFL's own reserve list, so "not listed Out" is no sign he plays)."""
        if self.eng.appeared:
            return self.eng.appeared.get(w, frozenset())
        return frozenset(self.points(w))

    def played(self, w: int) -> frozenset[str] | None:
        """Who played in week ``w`` (an FPL formation's automatic substitutions), None where subs do not apply."""
        return self.eng.appeared.get(w, frozenset()) if self.eng.league.roster.auto_subs else None


def _league(layer: Stratum, seed: int, name: str, overrides: dict[str, Any]) -> League:
    from ffbench_lib.runs.batch import merged

    raw = merged(load_yaml(layer.base), overrides)
    return parse_config({**raw, "season": layer.season, "seed": seed, "name": name}, str(layer.base))


def _state_id(team_season: str, skill: str, week: int | None, nth: int, rnd: int | None = None) -> str:
    """``nfl-2024-s1-VORP-1-w05-start_sit`` (a draft state: ``-r03-``); a second state of the same week (two
    offers) ends ``-2``."""
    at = f"w{week:02d}" if week is not None else f"r{rnd:02d}"
    return f"{team_season}-{at}-{skill}" + (f"-{nth}" if nth > 1 else "")


def build_suite(spec_path: str | Path, out: str | Path, prepared_for=None) -> dict[str, Any]:
    """Build the suite of ``spec_path`` into ``out`` (refused when ``out`` holds one); returns ``suite.json``."""
    from ffbench_lib.data.prepare import prepared_for as prepare

    prepared_for = prepared_for or prepare
    spec, layers = load_spec(spec_path)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SuiteError(f"{out}: is a file; give a folder for the suite (--out)")
    states: list[dict[str, Any]] = []
    leagues: dict[str, Any] = {}
    with exclusive(out, "exam suite"):
        if (out / SUITE).exists():
            raise SuiteError(f"{out / SUITE}: {out} holds an exam suite already; give another --out (a suite is "
                             "frozen)")
        if (out / "sources").exists():
            raise SuiteError(f"{out / 'sources'}: {out} holds an interrupted build (its source seasons, no {SUITE}); "
                             "remove the folder, or give another --out")
        for layer in layers:
            for seed in spec.seeds:
                source = f"{layer.label}-s{seed}"
                league = _league(layer, seed, f"{spec.name}-{source}", spec.overrides)
                prepared = prepared_for(league)
                eng = _Source(league, prepared, out / "sources" / layer.label / f"seed-{seed}", progress=False,
                              kinds=frozenset(k for name in spec.skills for k in SKILLS[name].kinds()),
                              protected=spec.protected)
                final = run_sync(eng.run())
                leagues[source] = {"config": league.model_dump(mode="json"),
                                   "run": f"sources/{layer.label}/seed-{seed}",
                                   "data_fingerprint": prepared.manifest.get("fingerprint")}
                truth = _Truth(eng, final)
                for team in league.teams:
                    mine = [r for r in eng.captured if r["team"] == team.name]
                    team_season = f"{source}-{team.name}"
                    for name, draw in spec.skills.items():
                        sk = SKILLS[name]
                        rng = random.Random(f"{spec.draw_seed}|{team_season}|{name}")
                        seen: dict[Any, int] = {}
                        for st in sk.draw(mine, truth, draw.count(layer.sport), rng):
                            at = (st["week"], st.get("round"))
                            seen[at] = seen.get(at, 0) + 1
                            states.append({"state_id": _state_id(team_season, name, st["week"], seen[at],
                                                                 st.get("round")),
                                           "skill": name, "round": st.get("round"), "stratum": scarcity(st["view"]),
                                           "kind": sk.kind, "sport": layer.sport,
                                           "season": league.sport_spec.season_name(layer.season),
                                           "week": st["week"], "team_season": team_season, "source": source,
                                           "source_agent": mine[0]["agent"] if mine else None,
                                           "view": st["view"], "truth": st["truth"],
                                           **({"protected_view": st["protected_view"]} if "protected_view" in st
                                              else {})})
        if not states:
            raise SuiteError(f"{spec_path}: the skills drew no state from the source seasons (a skill whose decision "
                             "the league never asks: trades, waivers or IR slots off?); no suite written")
        ids = [s["state_id"] for s in states]
        if len(set(ids)) != len(ids):  # a result row names its state: two states of one id would be one
            raise AssertionError(f"exam build: duplicate state ids {sorted({i for i in ids if ids.count(i) > 1})[:3]}")
        text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in states)
        write_text(out / STATES, text)
        counts: dict[str, int] = {}
        for s in states:
            counts[s["skill"]] = counts.get(s["skill"], 0) + 1
        meta = {"format": FORMAT, "version": VERSION, "name": spec.name,
                "states_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "states": len(states),
                "by_skill": counts, "spec": spec.model_dump(mode="json"), "sources": leagues}
        write_json(out / SUITE, meta)  # last: a folder without it is no suite
    return meta


def load_suite(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``suite.json`` and the states, the states checked against its hash: an edited or cut suite is refused."""
    folder = Path(folder)
    f = folder / SUITE
    if not f.is_file():
        raise SuiteError(f"{folder}: not an exam suite (no {SUITE}); build one with `ffbench exam build SPEC --out "
                         "DIR`")
    try:
        meta = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise SuiteError(f"{f}: not readable as JSON; the suite is damaged: build it again") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise SuiteError(f"{f}: not an ffbench exam suite (format {FORMAT}); build one with `ffbench exam build`")
    if meta.get("version") != VERSION:
        raise SuiteError(f"{f}: suite format version {meta.get('version')}, this ffbench reads version {VERSION}; "
                         "build the suite again")
    try:
        data = (folder / STATES).read_bytes()
    except OSError:
        raise SuiteError(f"{folder / STATES}: missing or unreadable; the suite is damaged: build it again") from None
    if hashlib.sha256(data).hexdigest() != meta.get("states_sha256"):
        raise SuiteError(f"{folder / STATES}: its SHA-256 is not the one {SUITE} records: the states were edited or "
                         "cut; a suite is frozen: build it again (or restore its states)")
    states = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    return meta, states


# ------------------------------------------------------------------------------------------------ candidates
class Candidate(BaseModel):
    """One candidate: a name (its rows' ``agent``) and an agent spec as a league's team has it (bots and models)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(min_length=1, max_length=40)]
    agent: Annotated[BotAgent | LLMAgent | PythonAgent, Field(discriminator="kind")]


class CandidatesSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    candidates: list[Candidate] = Field(min_length=1)
    llm: LLMSettings = Field(default_factory=LLMSettings, description="as a league's llm: cache, budget, retries")
    seed: int = Field(0, ge=0, description="the candidates' seed (a random bot's draws)")
    information: Information = Field(default_factory=Information,
                                     description="as a league's: masking (players, players_and_teams) shows "
                                                 "candidates that read names pseudonyms, a season's own per source; "
                                                 "numbers: protected (a suite built with protected: true) shows "
                                                 "them protected numbers and cut boards, as a protected season")

    @model_validator(mode="after")
    def _unique(self) -> "CandidatesSpec":
        names = [c.name for c in self.candidates]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"candidates: {', '.join(twice)} named twice; give each candidate its own name")
        return self


def load_candidates(path: str | Path) -> CandidatesSpec:
    return _validated(Path(path), CandidatesSpec, "exam candidates file", "a mapping with candidates")


# ------------------------------------------------------------------------------------------------ running
async def _answer(agent: Agent, state: dict, view: dict) -> tuple[Any, list[str]]:
    """An answer and its problems, as the season loop asks a seat: a seat's failure is an invalid answer (the
    skill's rules then repair it), except the errors that must stop the exam (a fatal provider error, a replay
    miss)."""
    from ffbench_lib.core.secrets import scrub

    _STATE.set(state["state_id"])
    try:
        got = await agent.decide(state["kind"], copy.deepcopy(view))  # its own copy: the state scores every answer
    except (FatalLLMError, ReplayMiss, StopRun):  # StopRun: a view that cannot be masked stops the exam
        raise
    except Exception as exc:  # noqa: BLE001 - recorded, and the rules repair the answer
        return None, [scrub(f"agent error: {type(exc).__name__}: {exc}")]
    return (got.answer, list(got.problems)) if isinstance(got, Answered) else (got, [])


def run_exam(suite_dir: str | Path, candidates_path: str | Path, out: str | Path) -> pd.DataFrame:
    """Every candidate answers every state of the suite; the results (:data:`COLUMNS`) also go to
    ``out/exam_results.parquet`` (and ``out/exam.json``). ``out`` holding results is refused."""
    meta, states = load_suite(suite_dir)
    if not states:
        raise SuiteError(f"{Path(suite_dir) / STATES}: the suite holds no state; build one whose skills draw states")
    cands = load_candidates(candidates_path)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SuiteError(f"{out}: is a file; give a folder for the results (--out)")
    try:
        check_cache_for(cands.candidates, cands.llm)
    except ConfigError as exc:
        raise ConfigError(exc.problems, str(candidates_path), "exam candidates file") from None
    agents = {c.name: build_agent(c, cands.seed, where=f"candidates[{i}].agent")
              for i, c in enumerate(cands.candidates)}
    if cands.information.numbers == "protected" and not meta["spec"].get("protected"):
        cut = sorted({s["skill"] for s in states if s["kind"] in CUT_KINDS})
        if cut:
            raise ConfigError([f"information.numbers: protected needs a suite built with `protected: true` (its "
                               f"{', '.join(cut)} states hold only the exact boards; a protected team's are cut by the "
                               "protected value): rebuild the suite with protected: true in its spec"],
                              str(candidates_path), "exam candidates file")
    seats = _masked_seats(meta, agents, cands)  # (candidate, source) -> the seat that answers that source's states
    rows: list[dict[str, Any]] = []
    rundir = RunDir(out)
    with rundir.exclusive():  # one writer: the checks below and every write hold the folder's lock
        if (out / RESULTS).exists():
            raise SuiteError(f"{out / RESULTS}: {out} holds exam results already; give another --out")
        earlier = _ledger_cost(out / "llm_calls.jsonl")  # an attempt stopped at the budget: its spend counts
        budget = Budget(cands.llm.budget_usd, earlier)
        bind_agents(agents, cands.llm, budget,
                    lambda record: rundir.append("llm_calls.jsonl", {"exam": meta["name"], "state_id": _STATE.get(),
                                                                     **record}))
        protected = cands.information.numbers == "protected"
        answers = run_sync(_ask_all(agents, states, budget, seats, protected))
        for (name, state), (answer, problems) in zip(((n, s) for n in agents for s in states), answers):
            rows.append(result_row(meta, state, name, agents[name].agent_id, answer, problems,
                                   (name, state["source"]) in seats, protected))
        df = pd.DataFrame(rows, columns=COLUMNS)
        _guard(df, cands)  # a model the rules mostly answered for would be ranked as the engine's fallback
        write_parquet(out / RESULTS, df)
        write_json(out / RESULTS_META, {"suite": meta["name"], "suite_sha256": meta["states_sha256"],
                                        "suite_dir": str(Path(suite_dir)), "states": len(states),
                                        "candidates": [c.model_dump(mode="json") for c in cands.candidates],
                                        "information": cands.information.model_dump(mode="json"),
                                        "cost_usd": round(budget.spent_usd, 6), "code_fingerprint": code_fingerprint(),
                                        "cost_usd_earlier_attempts": round(earlier, 6)})
    return df


def result_row(meta: dict, state: dict, name: str, agent_id: str, answer: Any, problems: list[str],
               masked: bool = False, protected: bool = False) -> dict[str, Any]:
    """One row of the results (:data:`COLUMNS`): the candidate ``name``'s answer to ``state`` scored by its skill
    (the one exact rule, :meth:`~ffbench_lib.game.skills.Skill.score`), with the problems of the answer and of its
    repair; ``masked``: answered behind the source's masker (with ``protected``: judged as a protected team's)."""
    scored = SKILLS[state["skill"]].score(state, answer, masked and protected)
    return {"suite": meta["name"], "state_id": state["state_id"], "skill": state["skill"],
            "sport": state["sport"], "season": str(state["season"]), "week": state["week"],
            "round": state.get("round"), "stratum": state["stratum"],
            "view": judged_as(state, masked, protected), "source": state["source"],
            "team_season": state["team_season"], "source_agent": state["source_agent"], "agent": name,
            "agent_id": agent_id, "answer": json.dumps(answer, sort_keys=True, default=str),
            "applied": json.dumps(scored.applied, sort_keys=True, default=str),
            "decided_by": scored.decided_by, "problems": "; ".join([*problems, *scored.problems]) or None,
            "score": scored.score, "best_possible": scored.best_possible, "regret": scored.regret,
            "roster": scored.extra.get("roster", []), "started": scored.extra.get("started", []),
            "detail": json.dumps({k: v for k, v in scored.extra.items() if k not in ("roster", "started")},
                                 sort_keys=True)}


#: states asked at once per candidate (a budget is checked between batches: at most this many calls overshoot it)
BATCH = 8


class BudgetSpent(SuiteError):
    """``llm.budget_usd`` spent before every answer was in (``ffbench exam run`` exits 3, as a season does)."""


def _ledger_cost(ledger: Path) -> float:
    """What the live calls of earlier attempts into the same folder cost (their ``cost_usd``; replays cost nothing)."""
    if not ledger.is_file():
        return 0.0
    total = 0.0
    for line in ledger.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and not rec.get("cache_hit"):
            total += float(rec.get("cost_usd") or 0.0)
    return total


def _masked_seats(meta: dict, agents: dict[str, Agent], cands: CandidatesSpec) -> dict[tuple[str, str], Agent]:
    """With masking, each candidate that reads names answers a source's states behind that source's masker (the
    season's pseudonyms: its league and seed), built from the data the suite was drawn from (refused, naming the
    fingerprints, when the data here is other); without masking, none."""
    if cands.information.masking == "off" or not any(a.masked_views for a in agents.values()):
        return {}
    from ffbench_lib.agents.masked import MaskedAgent
    from ffbench_lib.data.prepare import prepared_for
    from ffbench_lib.game.masking import Masker
    from ffbench_lib.game.views import Firewall

    seats = {}
    for source, info in meta["sources"].items():
        league = League.model_validate({**info["config"], "information": cands.information.model_dump(mode="json")})
        prepared = prepared_for(league)
        now = prepared.manifest.get("fingerprint")
        if info.get("data_fingerprint") and now and info["data_fingerprint"] != now:
            raise SuiteError(f"suite source {source}: drawn from data {info['data_fingerprint']}, the data here is "
                             f"{now}; a masked exam needs the suite's data (FFBENCH_DATA_DIR, data.dir)")
        masker = Masker(Firewall(prepared, league), league)
        for name, agent in agents.items():
            if agent.masked_views:
                seats[(name, source)] = MaskedAgent(agent, masker)
    return seats


def judged_as(state: dict, masked: bool, protected: bool) -> str:
    """``protected`` where the candidate's answer was judged as a protected team's (a cut list, or an IR spot
    filled from one), else ``exact``: the results' ``view`` column, so pairs compare like with like. Only a masked
    candidate with protected numbers answers a protected view (:func:`~ffbench_lib.game.skills.shown`); bots,
    as in a protected season, answer the exact one."""
    cut = "protected_view" in state or "protected_values" in state["truth"]
    return "protected" if masked and protected and cut else "exact"


async def _ask_all(agents: dict[str, Agent], states: list[dict], budget: Budget,
                   seats: dict[tuple[str, str], Agent], protected: bool = False) -> list[tuple[Any, list[str]]]:
    """Every candidate's answer to every state (behind its source's masker, with masking), candidate by candidate,
    :data:`BATCH` states at once; the budget is checked before each batch."""
    out: list[tuple[Any, list[str]]] = []
    try:
        for name, agent in agents.items():
            for i in range(0, len(states), BATCH):
                if budget.exceeded:
                    raise BudgetSpent(
                        f"llm.budget_usd {budget.limit_usd} spent (${budget.spent_usd:.4f}, earlier attempts into this "
                        f"folder included) before candidate {agent.agent_id} answered every state; raise the budget "
                        "and run again into the same --out (answers so far are in the replay cache: a rerun replays "
                        "them at no cost)")
                out += await asyncio.gather(*(_answer(seats.get((name, s["source"]), agent), s,
                                                      shown(s, (name, s["source"]) in seats and protected))
                                              for s in states[i:i + BATCH]))
    finally:
        for agent in agents.values():
            await agent.aclose()
    return out


def _guard(df: pd.DataFrame, cands: CandidatesSpec) -> None:
    """An LLM candidate whose answers the rules repaired above ``llm.max_fallback_rate`` (past
    ``fallback_min_decisions``) is refused, as a season stops such a team: its regret would be the engine's."""
    limit = cands.llm.max_fallback_rate
    if limit is None:
        return
    llm = {c.name for c in cands.candidates if c.agent.kind in ("llm", "python")}  # models and plug-ins
    for name, g in df[df["agent"].isin(llm)].groupby("agent"):
        n, fb = len(g), int((g["decided_by"] != "agent").sum())
        if n >= cands.llm.fallback_min_decisions and fb / n > limit:
            first = next((x for x in g["problems"] if x), "")
            raise SuiteError(f"candidate {name}: the rules repaired {fb} of its {n} answers ({fb / n:.0%} > "
                             f"llm.max_fallback_rate {limit:.0%}), so its results would measure the engine's fallback, "
                             f"not the model (first problem: {first[:200]}); no results written: fix the model or its "
                             "server (answers in llm.cache_dir are replayed: clear them if the server was at fault), "
                             "or raise llm.max_fallback_rate")


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per skill and candidate: states, mean score, mean regret, the share the rules repaired."""
    g = df.groupby(["skill", "agent"], as_index=False).agg(
        states=("state_id", "size"), score=("score", "mean"), regret=("regret", "mean"),
        repaired=("decided_by", lambda s: float((s != "agent").mean())))
    return g.round({"score": 2, "regret": 2, "repaired": 3})
