"""The season loop: ask agents, validate and apply through the rules, write the run directory.

Draft (sequential, snake) -> for each week: trades on trade weeks (seeded order, one negotiation per team),
then all lineups concurrently, then scoring with actual points and standings. A checkpoint follows every draft
round and every week, so ``resume`` continues a killed run and ends identical to an uninterrupted one; the budget
is checked at each checkpoint, so a budget stop is always resumable. One process at a time runs a directory.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml
from tqdm.auto import tqdm

from .agents import Agent, make_bot
from .llm import Budget, FatalLLMError, ReplayCache, ReplayMiss
from .llm.guard import FallbackGuard
from .atomic import remove_stale_temps
from .config import ConfigError, League, dump_config, parse_config
from .data.prepare import PreparedSeason
from .rules import draft as draft_rules
from .rules import lineup as lineup_rules
from .rules import trades as trade_rules
from .rules.schedule import make_schedule
from .paths import outputs_dir
from .rundir import CheckpointError, RunDir, RunDirError, RunExists, RunInterrupted
from .secrets import scrub
from .state import LeagueState
from .views import Firewall, view_hash


@dataclass
class RunContext:
    """What an LLM agent needs from the run: settings, the replay cache, the budget and the ledger."""

    settings: Any
    cache: ReplayCache | None
    budget: Budget
    log: Callable[[dict], None]


class SimulatedCrash(RuntimeError):
    """Raised by ``crash_after`` (tests and drills): the run dies right after that checkpoint."""


class ResumeMismatch(RunDirError):
    """``--resume`` with a config (or data) other than the run's: the result would be neither run."""


#: Config keys a resume may change: how calls are made and paid for, never what shapes an answer or the game.
RESUMABLE = ("llm.budget_usd", "llm.max_fallback_rate", "llm.fallback_min_decisions", "llm.replay_only", "llm.cache_dir", "llm.retries", "llm.backoff_s", "data.dir",
             "data.prepared_dir", "teams[].agent.api_base", "teams[].agent.api_key_env", "teams[].agent.timeout_s",
             "teams[].agent.max_concurrency")

__all__ = ["Engine", "RunExists", "ResumeMismatch", "RunInterrupted", "SimulatedCrash", "build_agents",
           "config_differences"]


def build_agents(league: League, seed: int, llm_factory: Callable[..., Agent] | None = None) -> dict[str, Agent]:
    agents: dict[str, Agent] = {}
    for team in league.teams:
        spec = team.agent
        if spec.kind == "bot":
            agents[team.name] = make_bot(spec.strategy, team.name, seed)
        else:
            if llm_factory is None:
                from .agents.llm import LLMAgent  # imported lazily: bots-only leagues never load litellm
                llm_factory = LLMAgent
            agents[team.name] = llm_factory(team.name, seed, spec)
    return agents


class Engine:
    def __init__(self, league: League, prepared: PreparedSeason, run_dir: str | Path,
                 agents: dict[str, Agent] | None = None, progress: bool = True):
        self.league = league
        self.prepared = prepared
        self.rundir = RunDir(run_dir)
        self.fw = Firewall(prepared, league)
        self.agents = agents if agents is not None else build_agents(league, league.seed)
        self.progress = progress
        self.run_id = f"{league.name}-s{league.seed}"
        self.positions = self.fw.position
        self.budget = Budget(league.llm.budget_usd)
        self._resumes: list[dict[str, Any]] = []  # every resume of this run and the config keys it changed
        self._task: asyncio.Task | None = None  # the task playing the season, while it can still be interrupted
        self._signal: int | None = None
        self.guard = FallbackGuard(league.llm.max_fallback_rate, league.llm.fallback_min_decisions)
        weekly = prepared.weekly
        self._actual = {w: dict(zip(g["player_id"], g["fantasy_points"].astype(float)))
                        for w, g in weekly.groupby("week")}

    # ------------------------------------------------------------------------------------------ plumbing
    def _meta(self, status: str, state: LeagueState, reason: str | None = None) -> dict[str, Any]:
        meta = {"run_id": self.run_id, "seed": self.league.seed, "season": self.league.season,
                "status": status, "phase": state.phase, "data_fingerprint": self.prepared.manifest.get("fingerprint"),
                "agents": state.agent_ids}
        if reason:
            meta["reason"] = reason
        if self.league.llm.budget_usd is not None:  # the limit in force (a resume may have raised it)
            meta["budget"] = {"limit_usd": self.budget.limit_usd, "spent_usd": round(self.budget.spent_usd, 6)}
        if self._resumes:
            meta["resumes"] = self._resumes
        return meta

    def _log(self, state: LeagueState, *, team: str, decision: str, view: dict, answer: Any, applied: Any,
             decided_by: str, problems: list[str], week: int | None = None, pick: int | None = None,
             step: int | None = None, extra: dict | None = None) -> None:
        record = {"run_id": self.run_id, "season": self.league.season, "week": week, "pick": pick, "step": step,
                  "team": team, "agent": state.agent_ids[team], "decision": decision, "view_hash": view_hash(view),
                  "view": view, "raw_answer": answer, "applied": applied, "decided_by": decided_by,
                  "reason": "; ".join(problems) or None, **(extra or {})}
        state.decisions += 1
        state.log_bytes["decisions.jsonl"] = self.rundir.append("decisions.jsonl", record)
        self.guard.record(record)  # stops a run the engine mostly played

    async def _ask(self, team: str, method: str, view: dict) -> tuple[Any, list[str]]:
        """Call an agent; an exception is an invalid answer (the rules then repair), never a crashed run."""
        try:
            return await getattr(self.agents[team], method)(view), []
        except (FatalLLMError, ReplayMiss):
            raise
        except Exception as exc:  # noqa: BLE001 - any other agent failure is recorded and repaired
            return None, [scrub(f"agent error: {type(exc).__name__}: {exc}")]

    def _new_state(self) -> LeagueState:
        lg = self.league
        teams = [t.name for t in lg.teams]
        return LeagueState(teams=teams, agent_ids={t: self.agents[t].agent_id for t in teams},
                           draft_order=draft_rules.draft_order(teams, lg.draft.order, lg.seed),
                           schedule=make_schedule(teams, lg.weeks, lg.schedule, lg.seed))

    # --------------------------------------------------------------------------------------------- run
    async def run(self, resume: bool = False, crash_after: str | None = None) -> LeagueState:
        """Play the season into the run directory (with ``resume``, continue the run it holds). The directory
        is locked for the whole call: a second writer gets :class:`RunLocked` at once."""
        with self.rundir.exclusive():
            state, finished = self._open(resume)
            if finished:
                return state
            return await self._play(state, crash_after)

    def interrupt(self, signum: int) -> None:
        """Stop the run at its next await (called by a signal handler): run.json records why; ``--resume``
        continues from the last checkpoint."""
        if self._task is not None and not self._task.done():
            self._signal = signum
            self._task.cancel()

    async def _play(self, state: LeagueState, crash_after: str | None) -> LeagueState:
        lg, rounds = self.league, self.league.roster.size
        self._bind_agents(state)
        self._task, self._signal = asyncio.current_task(), None
        bar = tqdm(total=lg.weeks + 1, desc=self.run_id, unit="phase", disable=not self.progress, leave=False)
        bar.update((state.rounds_done(rounds) == rounds) + state.last_completed_week())
        status, reason = "complete", None
        try:
            if state.rounds_done(rounds) < rounds:
                if await self.draft(state, crash_after):
                    bar.update(1)
                else:
                    status, reason = "stopped_budget", self._budget_reason()
            for w in range(state.last_completed_week() + 1, lg.weeks + 1) if status == "complete" else ():
                if self.budget.exceeded:
                    status, reason = "stopped_budget", self._budget_reason()
                    break
                if w in lg.trades.weeks:
                    await self.trades(state, w)
                await self.play_week(state, w)
                state.phase = f"week:{w}"
                self._checkpoint(state, crash_after)
                bar.update(1)
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
            self._stop(state, "failed", scrub(f"{type(exc).__name__}: {exc}")[:500])
            raise
        finally:
            self._task = None
            bar.close()
        return self._stop(state, status, reason)

    def _stop(self, state: LeagueState, status: str, reason: str | None = None) -> LeagueState:
        """The tables and run.json as the run ends (complete) or stops early; an early stop leaves the
        checkpoint as it was, so ``--resume`` continues from it."""
        self.rundir.write_tables(state)
        self.rundir.write_meta(self._meta(status, state, reason))
        return state

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
        meta = rd.read_json("run.json")
        if not isinstance(meta, dict):
            raise CheckpointError(f"cannot resume {rd.path}: run.json is not a JSON object; the directory is "
                                  "damaged: start the run again with another --out")
        changes = self._config_changes()
        was, now = meta.get("data_fingerprint"), self.prepared.manifest.get("fingerprint")
        if was and now and was != now:
            raise ResumeMismatch(f"cannot resume {rd.path}: the prepared data changed since the run started "
                                 f"(fingerprint {was} -> {now}: other data files or another ffbench version); "
                                 "resume with the same data, or start a new run with another --out")
        state = rd.load_state()
        problems = rd.log_problems(state)
        if state is not None:
            problems = state.problems(self._new_state(), lg.roster.size, lg.weeks, dict(lg.roster.caps),
                                      self.positions) + problems
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise CheckpointError(f"cannot resume {rd.path}: checkpoint.json does not fit the league or the logs: "
                                  f"{'; '.join(problems[:3])}{more}; it was damaged or edited: start the run again "
                                  "with another --out")
        if state is not None and meta.get("status") == "complete" and state.phase == f"week:{lg.weeks}":
            return state, True
        earlier = meta.get("resumes")
        self._resumes = [*(earlier if isinstance(earlier, list) else []),
                         {"from_status": meta.get("status"), "from_phase": state.phase if state else "new",
                          "changes": changes}]
        if state is None:  # killed before the first checkpoint: start over
            state = self._new_state()
            rd.start(dump_config(lg), self._meta("running", state))
            return state, False
        rd.rewind_logs(state)
        for d in rd.decisions():  # the fallback guard counts as if the run had never stopped
            self.guard.record(d)
        if changes:
            rd.write_config(dump_config(lg))  # config.yaml always holds the config in force
        rd.write_meta(self._meta("running", state))
        return state, False

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
        settings = self.league.llm
        folder = settings.cache_dir or Path(os.environ.get("FFBENCH_LLM_CACHE") or outputs_dir() / "llm_cache")
        self.budget = Budget(settings.budget_usd, state.llm_cost_usd)

        def log(record: dict) -> None:
            state.log_bytes["llm_calls.jsonl"] = self.rundir.append("llm_calls.jsonl", {"run_id": self.run_id,
                                                                                         **record})

        ctx = RunContext(settings, ReplayCache(folder), self.budget, log)
        for agent in self.agents.values():
            if hasattr(agent, "bind"):
                agent.bind(ctx)

    def _checkpoint(self, state: LeagueState, crash_after: str | None) -> None:
        state.llm_cost_usd = round(self.budget.spent_usd, 6)
        self.rundir.checkpoint(state)
        self.rundir.write_meta(self._meta("running", state))
        if crash_after is not None and state.phase == crash_after:
            raise SimulatedCrash(f"simulated crash after {crash_after}")

    # --------------------------------------------------------------------------------------------- draft
    async def draft(self, state: LeagueState, crash_after: str | None = None) -> bool:
        """Snake draft. With ``draft.on_deck`` the next team's shortlist is requested while the team on the
        clock makes its pick (its view is the board before that pick: a shortlisted player taken meanwhile
        is dropped, and if all were taken the team is asked again with the current board).

        A checkpoint follows every round: the snake turns there (one team picks twice), so no on-deck request
        is pending and a resumed draft asks exactly what an uninterrupted one asks. Returns False if the budget
        stops the draft before a round."""
        lg = self.league
        seq = draft_rules.snake(state.draft_order, lg.roster.size)
        n = len(state.teams)
        pending: dict[int, tuple[dict, asyncio.Task]] = {}
        for i in range(state.rounds_done(lg.roster.size) * n, len(seq)):
            pick, rnd, team = seq[i]
            if i % n == 0 and self.budget.exceeded:
                return False
            if pick in pending:
                view, task = pending.pop(pick)
                answer, errs = await task
            else:
                view = self._draft_view(state, team, pick, rnd)
                answer, errs = await self._ask(team, "draft_shortlist", view)
            shortlist, problems, repaired, notes = self._shortlist(state, view, answer)
            if not shortlist and not repaired:  # on deck, every shortlisted player went meanwhile: ask again
                self._log(state, team=team, decision="draft_shortlist", view=view, answer=answer, applied=[],
                          decided_by="agent", problems=notes, pick=pick, extra={"on_deck": True})
                view = self._draft_view(state, team, pick, rnd)
                answer, errs = await self._ask(team, "draft_shortlist", view)
                shortlist, problems, repaired, notes = self._shortlist(state, view, answer)
            problems = errs + problems
            self._log(state, team=team, decision="draft_shortlist", view=view, answer=answer, applied=shortlist,
                      decided_by="fallback" if repaired else "agent", problems=problems + notes, pick=pick)
            if lg.draft.on_deck and i + 1 < len(seq) and seq[i + 1][2] != team:
                nxt_pick, nxt_rnd, nxt_team = seq[i + 1]
                nxt_view = self._draft_view(state, nxt_team, nxt_pick, nxt_rnd)
                pending[nxt_pick] = (nxt_view, asyncio.create_task(self._ask(nxt_team, "draft_shortlist", nxt_view)))
            legal = view["legal_positions"]
            view2 = {**view, "decision": "draft_pick", "shortlist_detail": self.fw.shortlist_detail(shortlist)}
            answer2, errs2 = await self._ask(team, "draft_pick", view2)
            pid, problems2, repaired2 = draft_rules.validate_pick(answer2, shortlist, self.positions, legal,
                                                                  self.fw.preseason_proj)
            problems2 = errs2 + problems2
            self._log(state, team=team, decision="draft_pick", view=view2, answer=answer2, applied=pid,
                      decided_by="fallback" if repaired2 else "agent", problems=problems2, pick=pick)
            state.rosters[team].append(pid)
            adp = self.fw.adp.get(pid)
            state.add_rows("draft_picks", [{
                "pick": pick, "round": rnd, "team": team, "agent": state.agent_ids[team], "player_id": pid,
                "player_name": self.fw.name[pid], "position": self.positions[pid],
                "proj_points": float(self.fw.preseason_proj.get(pid, 0.0)),
                "prev_points": float(self.fw.player_card(pid)["prev_pts"] or 0.0),
                "adp": None if adp is None or np.isnan(adp) else float(adp), "shortlist": shortlist,
                "in_shortlist": True, "decided_by": "fallback" if (repaired or repaired2) else "agent",
                "reason": "; ".join(problems + problems2) or None}])
            if (i + 1) % n == 0:  # the round is complete
                assert not pending, "an on-deck request is pending at a round's end"
                state.phase = "drafted" if rnd == lg.roster.size else f"draft:{rnd}"
                if state.phase == "drafted":
                    self.rundir.write_tables(state)
                self._checkpoint(state, crash_after)
        return True

    def _draft_view(self, state: LeagueState, team: str, pick: int, rnd: int) -> dict:
        view = self.fw.draft_view(state, team, pick, rnd)
        view["legal_positions"] = draft_rules.legal_positions([self.positions[p] for p in state.rosters[team]],
                                                              self.league.roster)
        return view

    def _shortlist(self, state: LeagueState, view: dict, answer: Any) -> tuple[list[str], list[str], bool, list[str]]:
        """Validate a shortlist against the board now; players taken since the view was built are dropped
        with a note (not a mistake of the agent's)."""
        taken = state.drafted()
        notes: list[str] = []
        if isinstance(answer, dict) and isinstance(answer.get("shortlist"), list):
            gone = [str(p) for p in answer["shortlist"] if str(p) in taken]
            if gone:
                notes.append(f"taken while on deck: {', '.join(gone)}")
                answer = {**answer, "shortlist": [p for p in answer["shortlist"] if str(p) not in taken]}
                if not answer["shortlist"]:
                    return [], [], False, notes
        shortlist, problems, repaired = draft_rules.validate_shortlist(
            answer, self.fw.available_ids(state), self.positions, view["legal_positions"],
            self.league.draft.shortlist_size)
        return shortlist, problems, repaired, notes

    # ------------------------------------------------------------------------------------------- lineups
    async def play_week(self, state: LeagueState, w: int) -> None:
        lg = self.league
        views = {t: self.fw.lineup_view(state, t, w) for t in state.teams}
        if lg.llm.sequential:
            answers = [await self._ask(t, "set_lineup", views[t]) for t in state.teams]
        else:  # every team's lineup at once: an LLM league waits for the slowest model, not the sum
            answers = await asyncio.gather(*(self._ask(t, "set_lineup", views[t]) for t in state.teams))
        actual = self._actual.get(w, {})
        totals: dict[str, float] = {}
        for team, (answer, errs) in zip(state.teams, answers):
            view = views[team]
            positions = {p: self.positions[p] for p in state.rosters[team]}
            values = {p["id"]: (-1.0 if p["zero_flags"] else float(p["proj_week"] or 0.0)) for p in view["players"]}
            lineup = answer.get("lineup") if isinstance(answer, dict) else None
            result = lineup_rules.validate_and_repair(lineup, positions, values, lg.roster)
            problems = errs + result.problems
            by = "agent" if all(d == "agent" for ds in result.decided_by.values() for d in ds) else "fallback"
            self._log(state, team=team, decision="set_lineup", view=view, answer=answer, applied=result.slots,
                      decided_by=by, problems=problems, week=w)
            agent = state.agent_ids[team]
            started = set()
            rows = []
            for slot, pid, d in result.starters():
                pts = float(actual.get(pid, 0.0)) if pid else 0.0
                rows.append({"week": w, "team": team, "agent": agent, "slot": slot, "player_id": pid,
                             "position": self.positions.get(pid) if pid else None, "points": pts, "decided_by": d})
                if pid:
                    started.add(pid)
            state.add_rows("lineups", rows)
            state.add_rows("bench", [{"week": w, "team": team, "agent": agent, "player_id": p,
                                      "position": self.positions[p], "points": float(actual.get(p, 0.0))}
                                     for p in sorted(state.rosters[team]) if p not in started])
            state.add_rows("rosters", [{"week": w, "team": team, "agent": agent, "player_id": p,
                                        "position": self.positions[p]} for p in sorted(state.rosters[team])])
            totals[team] = round(sum(r["points"] for r in rows), 2)
        state.record_week(w, state.schedule[str(w)], totals)

    # -------------------------------------------------------------------------------------------- trades
    async def trades(self, state: LeagueState, w: int) -> None:
        """Every team, in a seeded order, may open one negotiation. All opening proposals are requested at
        once from the rosters as the window opens; when an accepted trade has changed any roster before a
        team's turn, its proposal is superseded and it is asked again with the current rosters."""
        rng = np.random.default_rng([self.league.seed, 0x7EAD, w])
        order = [state.teams[i] for i in rng.permutation(len(state.teams))]
        locked: set[str] = set()
        self._trades_done = 0
        opening: dict[str, tuple[dict, asyncio.Task | None]] = {}
        if not self.league.llm.sequential:
            for team in order:
                view = self.fw.trade_view(state, team, w, step="propose", locked=locked)
                opening[team] = (view, asyncio.create_task(self._ask(team, "propose_trade", view)))
        for n, proposer in enumerate(order, start=1):
            first = None
            if proposer in opening:
                view, task = opening.pop(proposer)
                ans, errs = await task
                if self._trades_done == 0:
                    first = (view, ans, errs)
                else:
                    self._log(state, team=proposer, decision="propose_trade", view=view, answer=ans,
                              applied="superseded", decided_by="agent", week=w, step=1,
                              problems=["rosters changed by an earlier trade this week; asked again"],
                              extra={"negotiation": f"w{w}-n{n}"})
            await self.negotiate(state, w, f"w{w}-n{n}", proposer, locked, first)

    def _step_row(self, state, w, neg, step, actor, action, offer, rationale, by, problems):
        return {"week": w, "negotiation": neg, "step": step, "actor": actor, "agent": state.agent_ids[actor],
                "action": action, "proposer": offer.a if offer else actor, "receiver": offer.b if offer else None,
                "proposer_gives": list(offer.a_gives) if offer else [],
                "receiver_gives": list(offer.b_gives) if offer else [],
                "rationale": rationale, "decided_by": by, "reason": "; ".join(problems) or None}

    async def negotiate(self, state: LeagueState, w: int, neg: str, proposer: str, locked: set[str],
                        first: tuple[dict, Any, list[str]] | None = None) -> None:
        """The four bounded steps. Offers are stored as proposer->receiver; each side sees its own side."""
        lg, roster = self.league, self.league.roster
        maxn = lg.trades.max_players_per_side

        def check(offer: trade_rules.Offer, size: int | None = None) -> str | None:
            return trade_rules.offer_problem(state, offer, self.positions, roster, maxn, locked, size)

        def rationale(ans: Any) -> str | None:
            r = ans.get("rationale") if isinstance(ans, dict) else None
            return str(r)[:2000] if r is not None else None

        history: dict[str, list[dict]] = {}

        def remember(step: int, actor: str, action: str, offer: trade_rules.Offer | None, text: str | None):
            for side in (offer.a, offer.b) if offer else (actor,):
                entry = {"step": step, "by": "you" if side == actor else actor, "action": action,
                         **(offer.from_side(side) if offer else {})}
                if side != actor and text:
                    entry["their_rationale_untrusted"] = text
                history.setdefault(side, []).append(entry)

        # step 1: propose (asked when the window opened if no roster has changed since)
        if first is not None:
            view, ans, errs = first
        else:
            view = self.fw.trade_view(state, proposer, w, step="propose", locked=locked)
            ans, errs = await self._ask(proposer, "propose_trade", view)
        action = ans.get("action") if isinstance(ans, dict) else None
        offer, problem = None, None
        if action == "propose":
            offer, problem = trade_rules.parse_offer(ans, proposer, str(ans.get("to_team")))
            if offer is not None:
                problem = check(offer)
        elif action != "pass":
            problem = f"action must be 'propose' or 'pass' (got {action!r})"
        problems = errs + ([problem] if problem else [])
        if problem or action == "pass":
            self._log(state, team=proposer, decision="propose_trade", view=view, answer=ans, applied="pass",
                      decided_by="fallback" if problems else "agent", problems=problems, week=w, step=1,
                      extra={"negotiation": neg})
            state.add_rows("trade_steps", [self._step_row(state, w, neg, 1, proposer, "pass", None, rationale(ans),
                                                          "fallback" if problems else "agent", problems)])
            return
        assert offer is not None
        self._log(state, team=proposer, decision="propose_trade", view=view, answer=ans,
                  applied=offer.from_side(proposer) | {"to_team": offer.b}, decided_by="agent", problems=[],
                  week=w, step=1, extra={"negotiation": neg})
        state.add_rows("trade_steps", [self._step_row(state, w, neg, 1, proposer, "propose", offer, rationale(ans),
                                                      "agent", [])])
        remember(1, proposer, "propose", offer, rationale(ans))
        receiver, size = offer.b, len(offer.a_gives)

        # steps 2-4 alternate: receiver, proposer, receiver
        steps = [(2, receiver, "respond_to_offer", {"accept", "reject", "counter"}, "reject"),
                 (3, proposer, "reply_to_counter", {"accept", "withdraw", "final_counter"}, "withdraw"),
                 (4, receiver, "final_decision", {"accept", "reject"}, "reject")]
        current = offer
        for step, actor, method, allowed, default in steps:
            other = proposer if actor == receiver else receiver
            view = self.fw.trade_view(state, actor, w, offer=current.from_side(actor), counterparty=other,
                                      step=method, history=list(history.get(actor, [])) or None, locked=locked)
            ans, errs = await self._ask(actor, method, view)
            action = ans.get("action") if isinstance(ans, dict) else None
            problems = list(errs)
            new_offer = None
            if action not in allowed:
                problems.append(f"action must be one of {sorted(allowed)} (got {action!r})")
            elif action in ("counter", "final_counter"):
                mine, problem = trade_rules.parse_offer(ans, actor, other)
                if mine is not None:
                    # store every offer as proposer -> receiver
                    new_offer = mine if actor == proposer else trade_rules.Offer(proposer, receiver, mine.b_gives,
                                                                                 mine.a_gives)
                    problem = check(new_offer, size)
                if problem:
                    problems.append(problem)
                    new_offer = None
            if problems:
                action = default
            by = "fallback" if problems else "agent"
            applied = (new_offer.from_side(actor) if new_offer else action)
            self._log(state, team=actor, decision=method, view=view, answer=ans, applied=applied, decided_by=by,
                      problems=problems, week=w, step=step, extra={"negotiation": neg})
            state.add_rows("trade_steps", [self._step_row(state, w, neg, step, actor, action, new_offer or current,
                                                          rationale(ans), by, problems)])
            if action == "accept":
                # the accepting side's answer is the agent's own unless it was repaired
                trade_rules.apply_offer(state, current)
                locked.update(current.a_gives + current.b_gives)
                self._trades_done += 1
                state.add_rows("trades", [{
                    "week": w, "negotiation": neg, "proposer": proposer, "receiver": receiver,
                    "proposer_agent": state.agent_ids[proposer], "receiver_agent": state.agent_ids[receiver],
                    "proposer_gives": list(current.a_gives), "receiver_gives": list(current.b_gives),
                    "accepted_step": step, "made_by": by}])
                return
            if new_offer is None:
                return  # reject / withdraw (or a repaired answer)
            remember(step, actor, action, new_offer, rationale(ans))
            current = new_offer


def config_differences(stored: Any, league: League | dict[str, Any],
                       include_resumable: bool = True) -> dict[str, list[Any]]:
    """Config keys whose value differs between a run's stored config (config.yaml text or its parsed mapping) and
    ``league``, as [stored, now]; without :data:`RESUMABLE` keys when ``include_resumable`` is False. One rule for
    resuming a run and for a batch reusing one."""
    raw = yaml.safe_load(stored) if isinstance(stored, str) else stored
    try:
        before = parse_config(raw).model_dump(mode="json")
    except ConfigError:
        before = raw if isinstance(raw, dict) else {}
    now = league.model_dump(mode="json") if isinstance(league, League) else league
    diff = _diff(_flatten(before), _flatten(now))
    if include_resumable:
        return diff
    return {k: v for k, v in diff.items() if re.sub(r"\[\d+\]", "[]", k) not in RESUMABLE}


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A config as ``{"llm.budget_usd": 2.0, "teams[3].agent.model": ...}`` (lists of mappings indexed)."""
    if isinstance(obj, dict) and obj:
        return {k: v for key, val in obj.items()
                for k, v in _flatten(val, f"{prefix}.{key}" if prefix else str(key)).items()}
    if isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        return {k: v for i, val in enumerate(obj) for k, v in _flatten(val, f"{prefix}[{i}]").items()}
    return {prefix: obj}


def _diff(before: dict[str, Any], now: dict[str, Any]) -> dict[str, list[Any]]:
    return {k: [before.get(k), now.get(k)] for k in dict.fromkeys([*before, *now])
            if k not in before or k not in now or before[k] != now[k]}
