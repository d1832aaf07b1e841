"""The snake draft: per pick, a shortlist then a pick from it (two decisions), a checkpoint after every round
(``draft.mode: queue``: per round, every team's ranked queue at once, see :func:`run_queue_draft`).

With ``draft.on_deck`` the next team's shortlist is requested while the team on the clock picks (its view is
the board before that pick: a shortlisted player taken meanwhile is dropped, and if all were taken the team is
asked again with the current board). The snake turns at a round's end (one team picks twice), so no on-deck
request is pending at a checkpoint and a resumed draft asks exactly what an uninterrupted one asks."""
from __future__ import annotations

import asyncio
import math
from typing import Any

from ffbench_lib.game.decisions import REGISTRY, Outcome
from ffbench_lib.game.decisions.draft_shortlist import legal_now
from ffbench_lib.game.rules import draft as draft_rules
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.phases import Season


SHORTLIST, PICK, QUEUE = REGISTRY["draft_shortlist"], REGISTRY["draft_pick"], REGISTRY["draft_queue"]


async def run_draft(eng: Season, state: LeagueState, crash_after: str | None = None) -> bool:
    """Play the draft from the last completed round; False if the budget stops it before a round."""
    lg = eng.league
    if lg.draft.mode == "queue":
        return await run_queue_draft(eng, state, crash_after)
    seq = draft_rules.snake(state.draft_order, lg.roster.size)
    n = len(state.teams)
    pending: dict[int, tuple[dict, asyncio.Task]] = {}
    for i in range(state.rounds_done(lg.roster.size) * n, len(seq)):
        pick, rnd, team = seq[i]
        if i % n == 0 and eng.over_budget:
            return False
        if pick in pending:
            view, task = pending.pop(pick)
            answer, errs = await task
        else:
            view = draft_view(eng, state, team, pick, rnd)
            answer, errs = await eng.ask(team, "draft_shortlist", view)
        out, notes = judge_shortlist(state, view, answer)
        if out is None:  # on deck, every shortlisted player went meanwhile: ask again with the board now
            eng.rec.decision(team=team, decision="draft_shortlist", view=view, answer=answer, applied=[],
                             decided_by="agent", problems=notes, pick=pick, extra={"on_deck": True})
            view = draft_view(eng, state, team, pick, rnd)
            answer, errs = await eng.ask(team, "draft_shortlist", view)
            out, notes = judge_shortlist(state, view, answer)
            assert out is not None  # a fresh board holds none of the taken players
        problems = errs + out.problems
        eng.rec.decision(team=team, decision="draft_shortlist", view=view, answer=answer, applied=out.applied,
                         decided_by=out.decided_by, problems=problems + notes, pick=pick)
        if lg.draft.on_deck and i + 1 < len(seq) and seq[i + 1][2] != team:
            nxt_pick, nxt_rnd, nxt_team = seq[i + 1]
            nxt_view = draft_view(eng, state, nxt_team, nxt_pick, nxt_rnd)
            task = asyncio.create_task(eng.ask(nxt_team, "draft_shortlist", nxt_view))
            if lg.llm.sequential:  # same views and answers as on deck, but one request at a time
                await task
            pending[nxt_pick] = (nxt_view, task)
        shortlist = out.value
        view2 = PICK.view(eng.fw, state, team, base=view, shortlist=shortlist)
        answer2, errs2 = await eng.ask(team, "draft_pick", view2)
        out2 = PICK.resolve(answer2, view2)
        problems2 = errs2 + out2.problems
        eng.rec.decision(team=team, decision="draft_pick", view=view2, answer=answer2, applied=out2.applied,
                         decided_by=out2.decided_by, problems=problems2, pick=pick)
        record_pick(eng, pick, rnd, team, out2.value, shortlist,
                    "fallback" if "fallback" in (out.decided_by, out2.decided_by) else "agent",
                    "; ".join(problems + problems2) or None)
        if (i + 1) % n == 0:  # the round is complete
            assert not pending, "an on-deck request is pending at a round's end"
            end_round(eng, state, rnd, crash_after)
    return True


async def run_queue_draft(eng: Season, state: LeagueState, crash_after: str | None = None) -> bool:
    """``draft.mode: queue``: per round, every team's queue at once (one by one in snake order with
    ``llm.sequential``), then the round's picks from the queues in snake order; a team whose queue ran dry is asked
    again at its turn with the board then. Each pick is logged as its team's ``draft_queue`` decision with the
    queue position used; a dry queue is logged too (``queue_dry``, noting why it ran dry). A checkpoint follows
    every round, and a round's queues are asked after the last one, so a resumed draft asks exactly what an
    uninterrupted one asks."""
    lg = eng.league
    seq = draft_rules.snake(state.draft_order, lg.roster.size)
    n = len(state.teams)
    for start in range(state.rounds_done(lg.roster.size) * n, len(seq), n):
        if eng.over_budget:
            return False
        picks = seq[start:start + n]
        rnd = picks[0][1]
        views = [QUEUE.view(eng.fw, state, team, pick=pick, rnd=rnd, picks_before=j)
                 for j, (pick, _, team) in enumerate(picks)]
        answers = await eng.ask_all([(team, "draft_queue", v) for (_, _, team), v in zip(picks, views)])
        for (pick, _, team), view, (answer, errs) in zip(picks, views, answers):
            out = QUEUE.resolve(answer, view)
            got = queue_pick(eng, state, team, out.value)
            if got is None:  # every queued player was taken (or is no longer legal): ask again with the board now
                eng.rec.decision(team=team, decision="draft_queue", view=view, answer=answer, applied=None,
                                 decided_by=out.decided_by,
                                 problems=errs + out.problems + [dry_note(eng, state, team, out.value)],
                                 pick=pick, extra={"queue": out.value, "queue_dry": True})
                view = QUEUE.view(eng.fw, state, team, pick=pick, rnd=rnd, picks_before=0, at_turn=True)
                answer, errs = await eng.ask(team, "draft_queue", view)
                out = QUEUE.resolve(answer, view)
                got = queue_pick(eng, state, team, out.value)
                if got is None:
                    raise RuntimeError(f"draft pick {pick} ({team!r}): a queue asked again on the clock holds no "
                                       f"player it may draft ({out.value}); legal positions now: "
                                       f"{view['legal_positions']}")
            k, pid = got
            problems = errs + out.problems
            eng.rec.decision(team=team, decision="draft_queue", view=view, answer=answer, applied=pid,
                             decided_by=out.decided_by, problems=problems, pick=pick,
                             extra={"queue": out.value, "queue_position": k})
            record_pick(eng, pick, rnd, team, pid, out.value, out.decided_by, "; ".join(problems) or None)
        end_round(eng, state, rnd, crash_after)
    return True


def end_round(eng: Season, state: LeagueState, rnd: int, crash_after: str | None) -> None:
    """A draft round is complete: its phase (the tables written after the last round), then a checkpoint."""
    state.phase = "drafted" if rnd == eng.league.roster.size else f"draft:{rnd}"
    if state.phase == "drafted":
        eng.save_tables(state)
    eng.checkpoint(state, crash_after)


def queue_pick(eng: Season, state: LeagueState, team: str, queue: list[str]) -> tuple[int, str] | None:
    """The first queued player still available and legal for ``team`` now (the shortlist view's rules), with
    his 1-based queue position; None if the queue ran dry."""
    return draft_rules.first_pickable(queue, eng.fw.available_ids(state), eng.fw.position,
                                      legal_now(eng.fw, state, team))


def dry_note(eng: Season, state: LeagueState, team: str, queue: list[str]) -> str:
    """Why a queue ran dry: at which picks its players were taken, and which may no longer be drafted."""
    taken = {r["player_id"]: r["pick"] for r in state.tables.get("draft_picks", [])}
    gone = [f"{p} at pick {taken[p]}" for p in queue if p in taken]
    illegal = [f"{p} ({eng.fw.position[p]})" for p in queue if p not in taken]
    parts = ([f"taken before this pick: {', '.join(gone)}"] if gone else []) + (
        [f"at a position no longer legal (legal now: {', '.join(legal_now(eng.fw, state, team))}): "
         f"{', '.join(illegal)}"]
        if illegal else [])
    return f"queue ran dry: {'; '.join(parts) or 'empty queue'}"


def draft_view(eng: Season, state: LeagueState, team: str, pick: int, rnd: int) -> dict:
    return SHORTLIST.view(eng.fw, state, team, pick=pick, rnd=rnd)


def judge_shortlist(state: LeagueState, view: dict, answer: Any) -> tuple[Outcome | None, list[str]]:
    """Judge a shortlist against the board now: players the view showed available and taken since are dropped
    with a note (not the agent's mistake); None when that leaves nothing. A player taken before the view was
    built stays in the answer, a mistake the judge marks (else the same answer, asked again, is None again)."""
    taken = state.drafted()
    shown = {c["id"] for cards in view["available"].values() for c in cards}
    notes: list[str] = []
    if isinstance(answer, dict) and isinstance(answer.get("shortlist"), list):
        gone = [str(p) for p in answer["shortlist"] if str(p) in taken and str(p) in shown]
        if gone:
            notes.append(f"taken while on deck: {', '.join(gone)}")
            answer = {**answer, "shortlist": [p for p in answer["shortlist"] if str(p) not in taken]}
            if not answer["shortlist"]:
                return None, notes
    board = {pos: [c for c in cards if c["id"] not in taken] for pos, cards in view["available"].items()}
    return SHORTLIST.resolve(answer, {**view, "available": board}), notes


def record_pick(eng: Season, pick: int, rnd: int, team: str, pid: str, shortlist: list[str], by: str,
                reason: str | None) -> None:
    cat = eng.catalog
    adp = cat.adp.get(pid)
    eng.rec.draft_pick(pick=pick, rnd=rnd, team=team, player_id=pid, player_name=cat.name[pid],
                       position=cat.position[pid], proj_points=float(cat.preseason_proj.get(pid, 0.0)),
                       prev_points=float(cat.card(pid)["prev_pts"] or 0.0),
                       adp=None if adp is None or math.isnan(adp) else float(adp), shortlist=shortlist,
                       in_shortlist=True, decided_by=by, reason=reason)
