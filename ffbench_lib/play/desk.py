"""The play desk: the widget a person plays a season from (``notebooks/10_play.ipynb``).

A task on the running loop takes the seat's questions one at a time and shows each kind's form
(:func:`ffbench_lib.play.forms.form_for`) under a header (team, question, pick or week, record); while the bots play the
status line says so; when the run ends it shows the final standings and the standings replay, or the error that
ended it (never silently). A game started on autopilot (``start_play(..., autopilot="adp")``: papermill, tests)
has every question answered by that bot.

A draft pick takes one click: the board answers ``draft_shortlist`` with ``[player]`` and the desk answers the
``draft_pick`` that follows (a shortlist of exactly that player, the only legal answer) with him, as the person's
own decision (no rationale unless the person wrote one); a pick from a longer shortlist (one typed as JSON) shows
the pick form. The draft forms also show the draft so far (who took whom), as in any draft room.
"""
from __future__ import annotations

import asyncio
import html
from typing import Any

from ffbench_lib.agents.bots import make_bot
from ffbench_lib.play.forms import GenericForm, form_for
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import DESK, QUESTION, STATUS, error_text
from ffbench_lib.play.forms.draft import when
from ffbench_lib.play.session import Game

WAITING = "waiting for the bots..."
TICK_S = 1.0  # the waiting line's clock (seconds)
COMPLETE = "season complete"
#: the final standings table's columns (those the run has)
#: how the header names a question where the decision kind's name would puzzle a person (the board's one pick)
TITLES = {"draft_shortlist": "draft pick", "draft_queue": "draft queue"}
STANDINGS = ["rank", "team", "agent", "wins", "losses", "ties", "points_for", "points_against"]


def record_text(view: dict) -> str:
    rec = view.get("record") or view.get("my_record")
    if not isinstance(rec, dict):
        return ""
    pf = rec.get("points_for")
    return f"record {cards.record(rec)}" + (f", {pf:.1f} pts" if isinstance(pf, (int, float)) else "")


def title(kind: str) -> str:
    return TITLES.get(kind, kind.replace("_", " "))


def question_text(team: str, kind: str, view: dict) -> str:
    """The header: who is asked what, and when."""
    if "pick" in view and "round" in view:
        at = when(view)
    elif "week" in view:
        at = f"week {view['week']}" + (f" of {view['rules']['weeks']}" if "weeks" in view.get("rules", {}) else "")
    else:
        at = ""
    return " &middot; ".join(html.escape(x) for x in (team, title(kind), at, record_text(view)) if x)


class PlayDesk:
    """The desk of ``game`` (from :func:`ffbench_lib.play.session.start_play`); construct it inside a running loop.
    ``done`` is the desk's task (ends when the run ends); ``await desk.wait()`` gives the run's final state."""

    def __init__(self, game: Game):
        import ipywidgets as w

        self.game, self.autopilot = game, game.autopilot
        self.header = w.HTML().add_class(QUESTION)
        self.body = w.VBox()
        self.status = w.HTML().add_class(STATUS)
        self.widget = w.VBox([self.header, self.body, self.status]).add_class(DESK)
        self.form = None
        self.pending = None
        self.standings_html = ""
        self.replay = None
        self.answered = 0
        self._bots: dict[str, Any] = {}
        self._board: dict[str, dict] = {}  # team -> its board answer (a one-player shortlist) awaiting its pick
        self.asked = asyncio.Event()  # set while a form waits for the person (scripts and tests await it)
        self.header.value = html.escape(f"{game.engine.league.name}: {game.run_dir.name}")
        self.set_status(WAITING)
        self.done = asyncio.get_running_loop().create_task(self._run(), name="ffbench play desk")

    # --- status ---------------------------------------------------------------------------------------------
    def set_status(self, text: str, error: bool = False) -> None:
        self.status_text = text
        style = "color:#b00020;font-weight:bold" if error else "color:#555"
        self.status.value = f"<span style='{style}'>{html.escape(text)}</span>"

    # --- the loop -------------------------------------------------------------------------------------------
    async def _run(self) -> None:
        task = self.game.task
        try:
            while not task.done():
                nxt = asyncio.ensure_future(self.game.seat.next())
                await self.wait_showing_time({nxt, task})
                if not nxt.done():
                    nxt.cancel()
                    break
                p = nxt.result()
                await self.handle(p)
                await asyncio.wait({p.future, task}, return_when=asyncio.FIRST_COMPLETED)
            self.finish()
        except asyncio.CancelledError:
            self.set_status("the desk was stopped; run the notebook's cells again to resume", error=True)
            raise
        except Exception as e:  # noqa: BLE001 - the desk itself failed: say so where the person looks
            self.set_status(f"the desk failed: {type(e).__name__}: {e}", error=True)
            raise

    async def wait_showing_time(self, aws: set) -> None:
        """Wait for the first of ``aws``, the status line counting the seconds meanwhile (the person sees the bots
        are at work, not a frozen page)."""
        start = asyncio.get_running_loop().time()
        while not (await asyncio.wait(aws, timeout=TICK_S, return_when=asyncio.FIRST_COMPLETED))[0]:
            if self.status_text == WAITING:
                waited = asyncio.get_running_loop().time() - start
                self.status.value = f"<span style='color:#555'>{html.escape(WAITING)} {waited:.0f} s</span>"

    async def handle(self, p) -> None:
        """Answer ``p`` by autopilot or the board's pending choice, else show its form."""
        self.pending = p
        self.header.value = question_text(p.team, p.kind, p.view)
        if self.autopilot is not None:
            if p.team not in self._bots:
                self._bots[p.team] = make_bot(self.autopilot, p.team, self.game.engine.league.seed)
            ans = dict(await self._bots[p.team].decide(p.kind, p.view))
            ans["rationale"] = f"autopilot: {self.autopilot}"
            self.send(p, ans)
            return
        chosen = self._board.pop(p.team, None) if p.kind in ("draft_pick", "draft_shortlist") else None
        note = f"your turn: {title(p.kind)}"
        if chosen is not None and p.kind == "draft_shortlist":  # asked on deck, and the player went before our turn
            note = "the player you chose was taken before your turn: choose again"
        elif p.kind == "draft_pick":
            ids = [c["id"] for c in p.view.get("shortlist_detail", [])]
            if len(ids) == 1:  # the board's one player (also after a restart, which forgot ``chosen``): no choice
                why = chosen.get("rationale") if chosen and chosen["shortlist"] == ids else None
                self.send(p, {"player_id": ids[0], **({"rationale": why} if why else {})})
                return
            if chosen is not None:
                note = "your shortlist changed before your turn: take one of these"
        try:
            self.form = form_for(p.kind, self.shown_view(p), lambda ans: self.submitted(p, ans))
        except Exception as e:  # noqa: BLE001 - a broken form must not leave the person stuck: answer as JSON
            self.form = GenericForm(p.kind, p.view, lambda ans: self.submitted(p, ans))
            self.set_status(f"the {p.kind} form failed ({type(e).__name__}: {e}); answer as JSON", error=True)
        else:
            self.set_status(note)
        # a callback's exception (the form's, or on submit the desk's) goes where the person looks
        self.form.on_error = lambda e: self.set_status(error_text(e), error=True)
        self.body.children = [self.form.widget]
        self.asked.set()

    def shown_view(self, p) -> dict:
        """What the form shows: the question's view, a draft question's with the picks so far (the queue view has
        them; the others only the board, so the desk reads them from the running engine). A copy: the view the
        engine judges and records is never changed."""
        rec = getattr(self.game.engine, "rec", None)
        if p.kind not in ("draft_shortlist", "draft_pick") or "picks_so_far" in p.view or rec is None:
            return p.view
        return {**p.view, "picks_so_far": self.game.engine.fw.picks_so_far(rec.state)}

    def submitted(self, p, answer: dict) -> None:
        if p.future.done() or p not in self.game.seat.pending:
            self.set_status("that question is no longer open (answered already, or the run stopped)", error=True)
            return
        if p.kind == "draft_shortlist" and len(answer.get("shortlist") or []) == 1:
            self._board[p.team] = answer
        self.send(p, answer)

    def send(self, p, answer: dict) -> None:
        # the desk is cleared first: once answered, the season (on its own loop, maybe another thread than this
        # click's) may show the next question at once, which a later clear would wipe
        self.asked.clear()
        self.form, self.pending = None, None
        self.body.children = []
        self.set_status(WAITING)
        self.game.seat.answer(p, answer)
        self.answered += 1

    def finish(self) -> None:
        """The run ended: the final standings and the replay, or why it did not finish."""
        task = self.game.task
        self.form, self.pending = None, None
        self.body.children = []
        if task.cancelled():
            self.header.value = "run stopped"
            self.set_status("the run was stopped; run the notebook's cells again to resume it", error=True)
            return
        if task.exception() is not None:
            e = task.exception()
            self.header.value = "run failed"
            self.set_status(f"the run failed: {type(e).__name__}: {e}", error=True)
            return
        import ipywidgets as w

        from ffbench_lib.runs.rundir import RunDir
        from ffbench_lib.present.widgets import StandingsReplay, html_table

        st = RunDir(self.game.run_dir).table("standings")
        final = st[st["week"] == st["week"].max()].sort_values("rank")
        self.standings_html = html_table(final[[c for c in STANDINGS if c in final]])
        self.header.value = f"{html.escape(self.game.engine.league.name)}: final standings"
        self.set_status(COMPLETE)
        parts = [w.HTML(self.standings_html)]
        try:
            mine = next((t.name for t in self.game.engine.league.teams if t.agent.kind == "human"), None)
            self.replay = StandingsReplay(self.game.run_dir, team=mine)  # the person's lineup shown first
            parts.append(self.replay.widget)
        except Exception as e:  # noqa: BLE001 - the standings are shown; say why the replay is not
            self.set_status(f"{COMPLETE} (the replay failed: {type(e).__name__}: {e})", error=True)
        self.body.children = parts

    async def wait(self) -> Any:
        """Wait for the run to end and return its final state (raises the run's error, or the desk's)."""
        await self.done  # ends when the run does, or raises if the desk itself failed (the run would wait forever)
        return self.game.task.result()

    # --- display --------------------------------------------------------------------------------------------
    def summary(self) -> str:
        return f"ffbench play desk ({self.game.run_dir}): {self.status_text}; {self.answered} answers given here"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The live desk where widgets render; else (an executed notebook) where the run stands, as text/HTML."""
        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["text/plain"] = self.summary()
        bundle["text/html"] = (f"<div><b>{self.header.value}</b></div><div>{self.status.value}</div>"
                               + self.standings_html)
        return bundle
