"""A run's lifecycle around the season loop (:class:`~ffbench_lib.game.loop.SeasonLoop`, which plays the draft and
the weeks): the run directory, opening and resume checks, fingerprints, run.json, the budget, the fallback guard,
binding the agents (masked ones behind :class:`~ffbench_lib.agents.masked.MaskedAgent`), live mode and signals.
:class:`Engine` is the loop with the run's hooks filled in. A checkpoint follows every draft round and every
week, so ``resume`` continues a killed run and ends identical to an uninterrupted one; the budget is checked at
each checkpoint, so a budget stop is always resumable. One process at a time runs a directory.
A live run (``live=True``, ``ffbench live``) decides each week once the data has its injury report, checkpoints
the decisions (``decided:<w>``) and commits to them in ``live.jsonl`` before scoring the week (flagged
``results_in_data`` when the results were in already); at the first week without results it stops
``waiting_for_week``; rerun on newer data, it scores that week and goes on. Otherwise a league with weeks the data
has no results for is refused.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import signal
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from tqdm.auto import tqdm

from ffbench_lib.agents import Agent
from ffbench_lib.agents.masked import MaskedAgent, masked
from ffbench_lib.agents.wiring import bind_agents, build_agents, check_cache
from ffbench_lib.core.atomic import remove_stale_temps, write_json
from ffbench_lib.config.diff import RESUMABLE, config_differences
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import dump_config
from ffbench_lib.data.base import DataError
from ffbench_lib.data.prepare import PreparedSeason, unplayed_weeks_problem
from ffbench_lib.llm import Budget, FatalLLMError, ReplayMiss
from ffbench_lib.runs.guard import FallbackGuard
from ffbench_lib.data.notices import knowledge_cutoffs
from ffbench_lib.game.loop import SeasonLoop, Stop
from ffbench_lib.game.masking import Masker
from ffbench_lib.game.phases.playoffs import week_points
from ffbench_lib.records.run import FORMAT, RunMeta
from ffbench_lib.runs.rundir import CheckpointError, RunDir, RunDirError, RunExists, RunInterrupted
from ffbench_lib.core.secrets import scrub
from ffbench_lib.game.state import LeagueState


class SimulatedCrash(RuntimeError):
    """Raised by ``crash_after`` (tests and drills): the run dies right after that checkpoint."""


class ResumeMismatch(RunDirError):
    """``--resume`` with a config (or data) other than the run's: the result would be neither run."""


__all__ = ["Engine", "RunExists", "ResumeMismatch", "RunInterrupted", "SimulatedCrash", "build_agents",
           "config_differences"]


class Engine(SeasonLoop):
    """The season loop as a run: into ``run_dir``, with ``agents`` (default: built from the league's teams)."""

    def __init__(self, league: League, prepared: PreparedSeason, run_dir: str | Path,
                 agents: dict[str, Agent] | None = None, progress: bool = True, live: bool = False):
        self.league = league
        self.prepared = prepared
        _check_prepared(league, prepared)
        # live: play the weeks the data has, then decide the next one and wait for its games (ffbench live);
        # otherwise a week without results would be played as 0-0 ties: refused
        self.live, self.played = live, prepared.played_weeks
        season_weeks = int(prepared.schedule["week"].max())
        problem = unplayed_weeks_problem(league.sport_spec.season_name(league.season), league.weeks,
                                         season_weeks if live else self.played,
                                         season_weeks)
        if problem:
            raise DataError(problem)
        self.decide_before_games = live  # a live run commits to a week's decisions before its games
        self._live_meta: dict[str, Any] = {}  # run.json "live": data updates, the week waited for (live runs only)
        self.rundir = RunDir(run_dir)
        # the loop re-raises these (an answer must never hide them); llm's errors cannot subclass game's StopRun
        super().__init__(league, prepared, {}, reraise=(FatalLLMError, ReplayMiss))
        # masked mode: agents that read names see pseudonyms (MaskedAgent); None: real names
        self.masker = Masker(self.fw, league) if league.information.masking != "off" else None
        self.agents = agents if agents is not None else build_agents(league, league.seed)
        self.seats = masked(self.agents, self.masker)
        if self.masker is not None and self.masker.protect is not None:  # their boards are cut by protected values
            self.fw.protected_teams = frozenset(t for t, s in self.seats.items() if isinstance(s, MaskedAgent))
        self.progress = progress
        self.budget = Budget(league.llm.budget_usd)
        self._spent_usd = 0.0  # on live calls before the checkpoint a resume starts from (RunDir.live_cost)
        self._saved_logs: dict[str, int] = {}  # the logs' lengths at the last checkpoint on disk
        self._resumes: list[dict[str, Any]] = []  # every resume of this run and the config keys it changed
        self._task: asyncio.Task | None = None  # the task playing the season, while it can still be interrupted
        self._bar = None  # the progress bar while the season plays
        self._drawn = 0.0  # when its decisions count was last drawn
        self._signal: int | None = None
        self.guard = FallbackGuard(league.llm.max_fallback_rate, league.llm.fallback_min_decisions)
        self._cutoffs = knowledge_cutoffs(league)  # models that may have read the season's results (run.json)

    # ------------------------------------------------------------------------------------------ plumbing
    def _meta(self, status: str, state: LeagueState, reason: str | None = None) -> RunMeta:
        """run.json as it stands (only the fields that apply are set, so the file keeps its keys)."""
        meta = {"run_id": self.run_id, "seed": self.league.seed, "season": self.league.season,
                "status": status, "phase": state.phase, "data_fingerprint": self.prepared.manifest.get("fingerprint"),
                "code_fingerprint": code_fingerprint(), "agents": state.agent_ids}
        if reason:
            meta["reason"] = reason
        if self.league.llm.budget_usd is not None:  # the limit in force (a resume may have raised it)
            meta["budget"] = {"limit_usd": self.budget.limit_usd, "spent_usd": round(self.budget.spent_usd, 6)}
        if self._resumes:
            meta["resumes"] = self._resumes
        if self.live:
            meta["live"] = {**self._live_meta, "played_weeks": self.played}
        m = self.prepared.manifest
        if m.get("unavailable"):  # a season run without some inputs (2025: no injury report), as prepared
            meta.update(unavailable=m["unavailable"], unavailable_notes=m.get("unavailable_notes", {}))
        if self._cutoffs:  # only when a team's model has a knowledge_cutoff
            meta["knowledge_cutoffs"] = self._cutoffs
        return RunMeta(format=FORMAT, **meta)

    def decision_sink(self, state: LeagueState):
        def write(record: dict, view_json: tuple[str, str] | None) -> None:
            state.log_bytes["decisions.jsonl"] = self.rundir.append("decisions.jsonl", record, view_json)
            self.guard.record(record)  # stops a run the engine mostly played
            if self._bar is not None:  # a phase of LLM calls takes minutes: show the decisions as they come
                now = time.monotonic()  # at most one redraw a second (a log, not a terminal, keeps every one)
                self._bar.set_postfix_str(f"{state.decisions} decisions", refresh=now - self._drawn >= 1.0)
                self._drawn = now if now - self._drawn >= 1.0 else self._drawn
        return write

    # --------------------------------------------------------------------------------------------- run
    async def run(self, resume: bool = False, crash_after: str | None = None) -> LeagueState:
        """Play the season into the run directory (with ``resume``, continue the run it holds). The directory
        is locked for the whole call: a second writer gets :class:`RunLocked` at once."""
        with self.rundir.exclusive():
            check_cache(self.league)
            was = self._same_pseudonyms() if resume and self.masker is not None else None
            state, finished = self._open(resume)
            if self.masker is not None and not finished and was != self.masker.mapping():
                write_json(self.rundir.file("masking.json"), self.masker.mapping())  # masked runs: who is who
            if finished:
                return state
            return await self._play(state, crash_after)

    def _same_pseudonyms(self) -> dict | None:
        """The run's masking.json (None before it has one), if every pseudonym in it stands for the same player or
        team now; a resumed run whose agents saw one player as RB-041 and now another would be neither run:
        :class:`ResumeMismatch`. New pseudonyms (a live run's data grew) are fine."""
        if not self.rundir.file("masking.json").exists():
            return None
        self._config_changes()  # another seed or mode: that message first
        was, now = self.rundir.read_json("masking.json"), self.masker.mapping()
        if not (isinstance(was, dict) and all(isinstance(was.get(k, {}), dict) for k in ("players", "teams"))):
            raise CheckpointError(f"cannot resume {self.rundir.path}: masking.json is not a mapping of pseudonyms; "
                                  "the directory is damaged: start the run again with another --out")
        label = lambda v: f"{v.get('player_name')} ({v.get('player_id')})" if isinstance(v, dict) else v  # noqa: E731
        who = lambda v: v.get("player_id") if isinstance(v, dict) else v  # noqa: E731
        for kind in ("players", "teams"):
            old, new = was.get(kind) or {}, now[kind]
            fake_now = {who(v): f for f, v in new.items()}
            moved = [f for f in old if (who(new[f]) if f in new else None) != who(old[f])
                     and (f in new or who(old[f]) in fake_now)]  # another player, or he is now another pseudonym
            if moved:
                f = moved[0]
                now_is = (f"{f} would be {label(new[f])}" if f in new else
                          f"{label(old[f])} would be {fake_now[who(old[f])]}")
                raise ResumeMismatch(
                    f"cannot resume {self.rundir.path}: its agents saw {f} as {label(old[f])}, but now {now_is} "
                    f"({len(moved)} pseudonym(s) differ: other data or code than the run's); resume with the data "
                    "and code it started with, or start a new run with another --out")
        return was

    def interrupt(self, signum: int) -> None:
        """Stop the run at its next await (called by a signal handler): run.json records why; ``--resume``
        continues from the last checkpoint."""
        if self._task is not None and not self._task.done():
            self._signal = signum
            self._task.cancel()

    async def _play(self, state: LeagueState, crash_after: str | None) -> LeagueState:
        rounds = self.league.roster.size
        self._bind_agents(state)
        self._task, self._signal = asyncio.current_task(), None
        bar = tqdm(total=self.league.weeks + 1, desc=self.run_id, unit="phase", disable=not self.progress, leave=False)
        self._bar = bar if self.progress else None
        bar.update((state.rounds_done(rounds) == rounds) + state.last_completed_week())
        try:
            status, reason = await self.play_season(state, crash_after)
            if status == "stopped_budget":
                reason = self._budget_reason()
        except SimulatedCrash:
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._task = None
            name = signal.Signals(self._signal).name if self._signal else "KeyboardInterrupt or cancellation"
            self._stop(state, "interrupted", f"stopped by {name} during {self._next_phase(state)}; "
                                             "--resume continues from the last checkpoint")
            if self._signal:
                raise RunInterrupted(name, self._signal) from None
            raise
        except BaseException as exc:
            self._task = None
            self._stop(state, "failed", _failure(exc))
            raise
        finally:
            self._task = None
            self._bar = None
            bar.close()
        return self._stop(state, status, reason)

    # ------------------------------------------------------------------------------- the loop's hooks
    @property
    def over_budget(self) -> bool:
        return self.budget.exceeded

    def save_tables(self, state: LeagueState) -> None:
        self.rundir.write_tables(state)

    def phase_done(self, state: LeagueState) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def before_deciding(self, state: LeagueState, w: int) -> Stop | None:
        if self.live and self._report_missing(w):  # decided with its report, as in a normal run
            return "waiting_for_week", self._wait(w, "injury_report")
        return None

    def before_scoring(self, state: LeagueState, w: int) -> Stop | None:
        if self.live:  # every week a live run decides is committed to before it is scored
            self.rundir.commit_week(w, state.log_bytes.get("decisions.jsonl", 0), self._first_game_day(w),
                                    results_in_data=w <= self.played)
            if w > self.played:
                return "waiting_for_week", self._wait(w, "results")
        for key in ("waiting_for_week", "waiting_for"):
            self._live_meta.pop(key, None)
        return None

    def _stop(self, state: LeagueState, status: str, reason: str | None = None) -> LeagueState:
        """The tables and run.json as the run ends (complete) or stops early; an early stop leaves the
        checkpoint as it was, so ``--resume`` continues from it. Tables that cannot be written (a full disk)
        still leave run.json saying how the run stopped, if the disk has room for that small file (the tables'
        temporary file is gone by then; a run that would have ended is ``failed``). The error is raised, unless
        the run stops for an error of its own (failed, interrupted), which the caller raises."""
        own_error = status in ("failed", "interrupted")
        try:
            self.rundir.write_tables(state)
        except OSError as exc:
            why = (f"{reason}; the tables could not be written either ({scrub(str(exc))[:200]})" if reason
                   else f"the tables could not be written: {_failure(exc)}")
            with contextlib.suppress(OSError):  # nothing more to record on a disk without room for run.json
                self._record("failed" if status == "complete" else status, state, why)
            if own_error:
                return state
            raise
        try:
            self._record(status, state, reason)
        except OSError:
            if not own_error:
                raise
        return state

    def _record(self, status: str, state: LeagueState, reason: str | None) -> None:
        """run.json saying how the run stopped; on a full disk, after cutting the logs back to the checkpoint
        (what they hold past it, a torn line, is what a resume cuts anyway) to make room for it."""
        try:
            self.rundir.write_meta(self._meta(status, state, reason))
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            self.rundir.rewind_logs(self._saved_logs)
            self.rundir.write_meta(self._meta(status, state, reason))

    def _report_missing(self, w: int) -> bool:
        """Week ``w``'s injury report is not in the data yet, in a season that has one (a normal run's week-``w``
        views hold it, so a live run must not decide the week before it is out)."""
        if "injury_report" in (self.prepared.manifest.get("unavailable") or []):
            return False
        return not (self.prepared.injuries["week"] == w).any()

    def _wait(self, w: int, what: str) -> str:
        """A live run stops at week ``w`` until the data has ``what`` (``results`` of the decided week, or its
        ``injury_report`` before deciding it): run.json's ``live`` says which; the reason says why."""
        self._live_meta.update(waiting_for_week=w, waiting_for=what)
        if what == "results":
            return (f"week {w} is decided (live.jsonl) and has no results in the data yet (results through week "
                    f"{self.played})")
        weeks = self.prepared.injuries["week"]
        last = f"reports through week {int(weeks.max())}" if len(weeks) else "no report of this season yet"
        return (f"week {w}'s injury report is not in the data yet ({last}; results through week {self.played}): the "
                "week's decisions wait for it, as a normal run's see it")

    def _first_game_day(self, w: int) -> str | None:
        """The date of week ``w``'s first game (the schedule's ``gameday``), None if the schedule has none."""
        days = pd.to_datetime(self.prepared.schedule.loc[self.prepared.schedule["week"] == w, "gameday"],
                              errors="coerce").dropna()
        return days.min().date().isoformat() if len(days) else None

    def _budget_reason(self) -> str:
        return (f"LLM budget of {self.budget.limit_usd} USD reached ({self.budget.spent_usd:.4f} USD spent on live "
                "calls); raise llm.budget_usd and resume")

    def _next_phase(self, state: LeagueState) -> str:
        rounds = self.league.roster.size
        done = state.rounds_done(rounds)
        return f"draft round {done + 1}" if done < rounds else f"week {state.last_completed_week() + 1}"

    # ------------------------------------------------------------------------------------------ resume
    def _open(self, resume: bool) -> tuple[LeagueState, bool]:
        """The state to play from, and whether the run is already complete. A new run starts fresh; a resumed
        one must be this config's run (:data:`RESUMABLE` keys aside, recorded in run.json), its checkpoint
        must fit the league and the logs, and every log is cut back to the checkpoint."""
        rd, lg = self.rundir, self.league
        remove_stale_temps(rd.path)
        if not rd.exists():
            state = self._new_state()
            rd.start(dump_config(lg), self._meta("running", state))
            return state, False
        if not resume:
            raise RunExists(f"{rd.path} already holds a run; pass --resume to continue it or choose another --out")
        meta = RunMeta.parse(rd.read_json("run.json"), rd.file("run.json"))  # read_json refused what is not one
        changes = self._config_changes()
        was, now = meta.data_fingerprint, self.prepared.manifest.get("fingerprint")
        if was and now and was != now and not self.live:  # a live run's data grows week by week
            live = "; it is a live run: continue it with `ffbench live`" if meta.live is not None else ""
            raise ResumeMismatch(f"cannot resume {rd.path}: the prepared data changed since the run started "
                                 f"(fingerprint {was} -> {now}: other data files or another ffbench version); "
                                 f"resume with the same data, or start a new run with another --out{live}")
        was_code = meta.code_fingerprint
        if was_code and was_code != code_fingerprint():
            raise ResumeMismatch(f"cannot resume {rd.path}: the ffbench code changed since the run started (code "
                                 f"fingerprint {was_code} -> {code_fingerprint()}), so the resumed run would be neither "
                                 "version's; resume with the code that started it, or start a new run with another --out")
        state = rd.load_state()
        problems = rd.log_problems(state)
        if state is not None:
            problems = state.problems(self._new_state(), lg.roster.size, lg.weeks, dict(lg.roster.caps),
                                      self.catalog.position, lg.regular_weeks) + problems
            # points, records, standings and cost are rebuilt from the rows and the ledger: an edited value is
            # refused (a live run's earlier weeks keep the points they were scored with when the data changed)
            problems += self._derived_problems(state, same_data=not (self.live and was and now and was != now)
                                               ) if not problems else []
            self._spent_usd, costs = rd.live_cost(state)
            problems += costs
            at = max(1, state.decided_week() or state.last_completed_week())
            known = self.fw.week(at).known_players()
            problems += [f"{t} holds {p}, who is not known before week {at} "
                         "(first plays later)" for t, ids in state.rosters.items() for p in ids
                         if p in self.catalog.position and p not in known][:3]
            own = {p.name for p in self._stateful_phases()}
            problems += [f"extras hold state of phase(s) {sorted(set(state.extras) - own)} this league does not play"
                         ] if set(state.extras) - own else []
            problems += [msg for p in self._stateful_phases()
                         for msg in (p.check_state(lg, state, state.extras.get(p.name)) if p.check_state else [])]
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise CheckpointError(f"cannot resume {rd.path}: checkpoint.json does not fit the league or the logs: "
                                  f"{'; '.join(problems[:3])}{more}; it was damaged or edited: start the run again "
                                  "with another --out")
        if state is not None and meta.status == "complete" and state.phase == f"week:{lg.weeks}":
            return state, True
        if self.live:
            self._live_update(meta, state, was, now)
        self._resumes = [*meta.dump().get("resumes", []),
                         {"from_status": meta.status, "from_phase": state.phase if state else "new",
                          "changes": changes}]
        if state is None:  # killed before the first checkpoint: start over
            state = self._new_state()
            rd.start(dump_config(lg), self._meta("running", state))
            return state, False
        rd.rewind_logs(state.log_bytes)
        self._saved_logs = dict(state.log_bytes)
        for d in rd.decisions():  # the fallback guard counts as if the run had never stopped
            self.guard.record(d)
        if changes:
            rd.write_config(dump_config(lg))  # config.yaml always holds the config in force
        rd.write_meta(self._meta("running", state))
        return state, False

    def _derived_problems(self, state: LeagueState, same_data: bool) -> list[str]:
        """Why the checkpoint's scores are not what its recorded rows give: every player-week's points against the
        prepared season (``same_data``), then records, matchups and standings scored again from the lineups."""
        regular = min(state.last_completed_week(), self.league.regular_weeks)
        try:
            out = state.points_problems(self.actual) if same_data else []
            return out + state.results_problems(week_points(state, range(1, regular + 1)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return [f"the recorded lineups cannot be scored again ({type(exc).__name__}: {exc})"]

    def _live_update(self, meta: RunMeta, state: LeagueState | None, was: str | None, now: str | None) -> None:
        """A live run continued: its data may have grown (recorded in run.json's ``live.data_updates``), never
        shrunk below the weeks it has scored (the views of the next week need every week before it)."""
        scored = state.last_completed_week() if state else 0
        if self.played < scored:
            raise ResumeMismatch(f"cannot continue {self.rundir.path}: the data has results through week "
                                 f"{self.played}, but the run has scored week {scored} already; use the data it was "
                                 f"played with or newer (data.dir, FFBENCH_DATA_DIR)")
        earlier = meta.dump().get("live", {})
        updates = list(earlier.get("data_updates", []))
        if was and now and was != now:
            updates.append({"at_phase": state.phase if state else "new", "fingerprint": [was, now],
                            "played_weeks": self.played})
        self._live_meta = {"data_updates": updates} if updates else {}

    def _config_changes(self) -> dict[str, list[Any]]:
        """Config keys that differ from the run's config.yaml, as [before, now]; :class:`ResumeMismatch` if any
        of them is not resumable."""
        path = self.rundir.file("config.yaml")
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, yaml.YAMLError) as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise CheckpointError(f"cannot resume {self.rundir.path}: config.yaml is unreadable ({first}); start "
                                  "the run again with another --out") from None
        diff = config_differences(raw, self.league)
        refused = config_differences(raw, self.league, include_resumable=False)
        if refused:
            what = "; ".join(f"{k}: {a!r} in the run, {b!r} now" for k, (a, b) in list(refused.items())[:4])
            more = f" (and {len(refused) - 4} more)" if len(refused) > 4 else ""
            raise ResumeMismatch(f"cannot resume {self.rundir.path} with another config: {what}{more}. Resume with "
                                 f"the run's own config ({path}) and seed, or start a new run with another --out; "
                                 f"only {', '.join(RESUMABLE)} may change on resume")
        return diff

    def _bind_agents(self, state: LeagueState) -> None:
        """The agents' context (ledger, cache, budget) for this state (the loop makes the recorder)."""
        self.budget = Budget(self.league.llm.budget_usd, self._spent_usd)  # a resume: the ledger's sum, unrounded

        def log(record: dict) -> None:
            state.log_bytes["llm_calls.jsonl"] = self.rundir.append("llm_calls.jsonl", {"run_id": self.run_id,
                                                                                         **record})

        bind_agents(self.agents, self.league.llm, self.budget, log)

    def checkpoint(self, state: LeagueState, crash_after: str | None) -> None:
        state.llm_cost_usd = round(self.budget.spent_usd, 6)
        self.rundir.checkpoint(state)
        self._saved_logs = dict(state.log_bytes)
        self.rundir.write_meta(self._meta("running", state))
        if crash_after is not None and state.phase == crash_after:
            raise SimulatedCrash(f"simulated crash after {crash_after}")


def _failure(exc: BaseException) -> str:
    """run.json's reason for a run stopped by ``exc``; a file error (a full disk, a permission) says how to go on."""
    text = scrub(f"{type(exc).__name__}: {exc}")[:500]
    if isinstance(exc, OSError):
        text += "; free disk space (or fix the file's permissions) and --resume continues from the last checkpoint"
    return text


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the package's code and prompt templates: a run resumed under other code would be a mix of two
    versions, so ``--resume`` refuses it."""
    root = Path(__file__).resolve().parents[1]  # the whole package
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".txt") and p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _check_prepared(league: League, prepared: PreparedSeason) -> None:
    """A prepared season made for another league would score or field it wrongly (a kicker with no rows, points
    under other rules): refuse it, naming the difference (``prepared_for(league)`` makes the right one)."""
    problems = []
    if prepared.season != league.season:
        problems.append(f"season {prepared.season}, the league plays {league.season}")
    missing = [p for p in league.roster.positions if p not in prepared.positions]
    if missing:
        problems.append(f"no {'/'.join(missing)} players (prepared for {'/'.join(prepared.positions)})")
    pool = prepared.players.loc[prepared.players["in_draft_pool"], "position"].value_counts()
    short = [f"{int(pool.get(p, 0))} draftable {p} for {len(league.teams)} teams × {league.roster.starting(p)} "
             f"starting slot(s)" for p in league.roster.positions
             if not missing and pool.get(p, 0) < len(league.teams) * league.roster.starting(p)]
    if short:
        problems.append(f"too few players: {'; '.join(short)}; lower the slots or the number of teams")
    if dict(prepared.scoring) != league.scoring_weights or dict(prepared.tiers or {}) != league.scoring_tiers:
        problems.append("other scoring rules than the league's")
    if problems:
        raise ConfigError([f"the prepared season does not fit the league: {'; '.join(problems)}; prepare it for "
                           "this league (ffbench_lib.data.prepare.prepared_for(league))"], what="prepared season")
