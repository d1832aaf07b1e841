"""The season loop: ask agents, validate and apply through the rules, write the run directory.

Draft (sequential, snake) -> for each week: trades on trade weeks (seeded order, one negotiation per team),
then all lineups concurrently, then scoring with actual points and standings. A checkpoint follows the draft
and every week, so ``resume`` continues a killed run and ends identical to an uninterrupted one.
"""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm.auto import tqdm

from .agents import Agent, make_bot
from .llm import Budget, FatalLLMError, ReplayCache, ReplayMiss
from .config import League, dump_config
from .data.prepare import PreparedSeason
from .rules import draft as draft_rules
from .rules import lineup as lineup_rules
from .rules import trades as trade_rules
from .rules.schedule import make_schedule
from .rundir import RunDir
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


class RunExists(RuntimeError):
    pass


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
        weekly = prepared.weekly
        self._actual = {w: dict(zip(g["player_id"], g["fantasy_points"].astype(float)))
                        for w, g in weekly.groupby("week")}

    # ------------------------------------------------------------------------------------------ plumbing
    def _meta(self, status: str, state: LeagueState) -> dict[str, Any]:
        return {"run_id": self.run_id, "seed": self.league.seed, "season": self.league.season,
                "status": status, "phase": state.phase, "data_fingerprint": self.prepared.manifest.get("fingerprint"),
                "agents": state.agent_ids}

    def _log(self, state: LeagueState, *, team: str, decision: str, view: dict, answer: Any, applied: Any,
             decided_by: str, problems: list[str], week: int | None = None, pick: int | None = None,
             step: int | None = None, extra: dict | None = None) -> None:
        record = {"run_id": self.run_id, "season": self.league.season, "week": week, "pick": pick, "step": step,
                  "team": team, "agent": state.agent_ids[team], "decision": decision, "view_hash": view_hash(view),
                  "view": view, "raw_answer": answer, "applied": applied, "decided_by": decided_by,
                  "reason": "; ".join(problems) or None, **(extra or {})}
        state.decisions += 1
        state.log_bytes["decisions.jsonl"] = self.rundir.append("decisions.jsonl", record)

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
        state = None
        if self.rundir.exists():
            if not resume:
                raise RunExists(f"{self.rundir.path} already holds a run; pass --resume to continue it or choose "
                                "another --out")
            state = self.rundir.load_state()
        if state is None:
            state = self._new_state()
            self.rundir.start(dump_config(self.league), self._meta("running", state))
        self._bind_agents(state)
        total = self.league.weeks + 1
        bar = tqdm(total=total, desc=self.run_id, unit="phase", disable=not self.progress, leave=False)
        bar.update(0 if state.phase == "new" else 1 + state.last_completed_week())
        try:
            if state.phase == "new":
                await self.draft(state)
                state.phase = "drafted"
                self.rundir.write_tables(state)
                self._checkpoint(state, crash_after)
                bar.update(1)
            for w in range(state.last_completed_week() + 1, self.league.weeks + 1):
                if self.budget.exceeded:
                    return self._stop_for_budget(state)
                if w in self.league.trades.weeks:
                    await self.trades(state, w)
                await self.play_week(state, w)
                state.phase = f"week:{w}"
                self._checkpoint(state, crash_after)
                bar.update(1)
        except SimulatedCrash:
            raise
        except BaseException:
            self.rundir.write_tables(state)
            self.rundir.write_meta(self._meta("failed", state))
            raise
        finally:
            bar.close()
        self.rundir.write_tables(state)
        self.rundir.write_meta(self._meta("complete", state))
        return state

    def _stop_for_budget(self, state: LeagueState) -> LeagueState:
        """A clean stop at a checkpoint; ``--resume`` (with a larger budget) continues from here."""
        self.rundir.write_tables(state)
        meta = self._meta("stopped_budget", state)
        meta["budget"] = {"limit_usd": self.budget.limit_usd, "spent_usd": round(self.budget.spent_usd, 6)}
        self.rundir.write_meta(meta)
        return state

    def _bind_agents(self, state: LeagueState) -> None:
        settings = self.league.llm
        folder = settings.cache_dir or Path(os.environ.get("FFBENCH_LLM_CACHE", "outputs/llm_cache"))
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
    async def draft(self, state: LeagueState) -> None:
        """Snake draft. With ``draft.on_deck`` the next team's shortlist is requested while the team on the
        clock makes its pick (its view is the board before that pick: a shortlisted player taken meanwhile
        is dropped, and if all were taken the team is asked again with the current board)."""
        lg = self.league
        seq = draft_rules.snake(state.draft_order, lg.roster.size)
        pending: dict[int, tuple[dict, asyncio.Task]] = {}
        for i, (pick, rnd, team) in enumerate(seq):
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
                                      step=method, history=history.get(actor), locked=locked)
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
