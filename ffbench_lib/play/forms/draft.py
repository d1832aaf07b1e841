"""The draft board (``draft_shortlist``, ``draft_queue``) and the pick form (``draft_pick``).

A person drafts one player with one click: the board answers ``draft_shortlist`` with ``[that player]`` and the
desk (:mod:`ffbench_lib.play.desk`) answers the ``draft_pick`` that follows from it. Positions, columns and legality
come from the view and the decision registry; nothing here knows a position by name. The draft so far (who took
whom) comes from the view's ``picks_so_far`` (the queue view has it; the desk adds it to the others).
"""
from __future__ import annotations

import html
import math
from typing import ClassVar

from ffbench_lib.game.protect import midpoint
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import Form, form

BOARD, DRAFT_BUTTON = "ffbench-draft-board", "ffbench-draft-button"
#: the draft so far: the board lists this many of the latest picks, newest first
RECENT_PICKS = 12
#: the board's sort keys: label -> (card field, best first is smallest)
SORTS = {"ADP": ("adp", True), "projection": ("proj", False), "last season": ("prev_pts", False)}
#: the board's columns: (header, card field, width)
COLUMNS = [("player", "name", 24), ("pos", "pos", 4), ("NFL", "team", 4), ("bye", "bye", 4), ("proj", "proj", 7),
           ("ADP", "adp", 6), ("last pts", "prev_pts", 9), ("g", "prev_g", 3)]
TABLE = [(head, field) for head, field, _ in COLUMNS]  # the same columns as an HTML table (the roster)
MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;white-space:pre"


def when(view: dict) -> str:
    """Where the draft stands for this question (the desk's header, the board, the pick form)."""
    return f"round {view['round']} of {view['rounds']}, pick {view['pick']} overall"


def player_label(card: dict) -> str:
    """One board row: the columns at fixed widths (the board is shown in a monospace font)."""
    return "".join(cards.cell(card.get(field))[:width - 1].ljust(width) for _, field, width in COLUMNS).rstrip()


def header_label() -> str:
    return "".join(head.ljust(width) for head, _, width in COLUMNS).rstrip()


def _sort_key(field: str, ascending: bool):
    def key(card: dict):
        v = midpoint(card.get(field))  # a protected view's range: its midpoint
        missing = v is None or (isinstance(v, float) and math.isnan(v))
        return (missing, 0.0 if missing else (v if ascending else -v), card["name"])
    return key


def needs_html(view: dict) -> str:
    """Your roster's counts, unfilled starters (and the positions below their starting slots: the view's
    ``thin_positions``, your roster's, not the league's), the positions you may draft now, and how many of each
    position the league has drafted."""
    summary = view.get("roster_summary", {})
    counts = ", ".join(f"{pos} {n}" for pos, n in summary.get("counts", {}).items())
    short = ", ".join(view.get("thin_positions", []))
    taken = view.get("drafted_by_position", {})
    return (f"<b>Your roster</b> ({counts}) &middot; unfilled starters: {summary.get('unfilled_starters', '?')}"
            + (f" (at {html.escape(short)})" if short else "")
            + f" &middot; you may draft: <b>{html.escape(', '.join(view.get('legal_positions', [])) or 'nobody')}</b>"
            + (" &middot; drafted league-wide: " + html.escape(", ".join(f"{pos} {n}" for pos, n in taken.items()))
               if any(taken.values()) else ""))


def picks_html(view: dict) -> str:
    """The draft so far: the latest picks, newest first, yours marked (empty when the view has no picks)."""
    picks = view.get("picks_so_far")
    if picks is None:
        return ""
    if not picks:
        return "<i>no picks yet: yours is the first</i>"
    me = view.get("team")
    rows = [{**r, "team": f"{r['team']} (you)" if r["team"] == me else r["team"]}
            for r in reversed(picks[-RECENT_PICKS:])]
    shown = f"the last {len(rows)}, newest first" if len(picks) > len(rows) else "newest first"
    return cards.table(rows, caption=f"Draft so far: {len(picks)} pick(s) ({shown})",
                       columns=[("pick", "pick"), ("round", "round"), ("team", "team"), ("player", "name"),
                                ("pos", "pos")])


@form
class DraftBoard(Form):
    """Every available player on the board with search, position filter and sort; select one and click Draft.
    In queue mode (``draft_queue``) the selected player is added to a ranked queue instead."""

    kinds: ClassVar[tuple[str, ...]] = ("draft_shortlist", "draft_queue")
    submit_label = "Draft"

    def build(self):
        import ipywidgets as w

        self.queue_mode = self.kind == "draft_queue"
        if self.queue_mode:
            self.submit.description = "Send queue"
        self.submit.add_class(DRAFT_BUTTON)
        self.cards = {c["id"]: c for cs in self.view["available"].values() for c in cs}
        self.search, self.position = cards.search_controls(self.view["available"])
        self.sort = w.Dropdown(options=list(SORTS), value="ADP", description="sort by",
                               layout=w.Layout(width="14em"))
        self.board = w.Select(options=[], rows=14, layout=w.Layout(width="100%")).add_class(BOARD)
        self.detail = w.HTML()
        self.queue: list[str] = []
        for control in (self.search, self.position, self.sort):
            self.observe(control, self.filter)
        self.observe(self.board, self.selected)
        self.filter()
        legal = set(self.view.get("legal_positions", []))
        first = next((pid for _, pid in self.board.options if self.cards[pid]["pos"] in legal), None)
        self.board.value = first if not self.queue_mode else None
        style = w.HTML(f"<style>.{BOARD} select, .{BOARD} option {{{MONO}}}</style>")
        head = w.HTML(f"<div style='{MONO};padding-left:6px;color:#555'>{html.escape(header_label())}</div>")
        parts = [style, w.HTML(f"<b>{when(self.view).capitalize()}</b>"), w.HTML(needs_html(self.view)),
                 w.HTML(cards.table(self.view.get("roster", []), columns=TABLE)), w.HTML(picks_html(self.view)),
                 w.HBox([self.search, self.sort]), self.position, head, self.board, self.detail]
        if self.queue_mode:
            self.queue_list = w.Select(options=[], rows=6, description="queue", layout=w.Layout(width="100%"))
            add, remove, up = (w.Button(description=d) for d in ("Add to queue", "Remove", "Move up"))
            self.on_click(add, lambda _: self.edit_queue("add"))
            self.on_click(remove, lambda _: self.edit_queue("remove"))
            self.on_click(up, lambda _: self.edit_queue("up"))
            parts += [w.HBox([add, remove, up]), self.queue_list]
        return w.VBox(parts)

    def filter(self, *_):
        """Rebuild the board's options from the search, position and sort (the selection kept when still shown)."""
        field, ascending = SORTS[self.sort.value]
        shown = cards.matching(self.cards.values(), self.search.value, self.position.value)
        shown.sort(key=_sort_key(field, ascending))
        keep = self.board.value
        self.board.options = [(player_label(c), c["id"]) for c in shown]
        self.board.value = keep if keep in {c["id"] for c in shown} else None

    def selected(self, *_):
        card = self.cards.get(self.board.value)
        self.detail.value = "" if card is None else (
            f"selected: <b>{html.escape(card['name'])}</b> ({html.escape(card['pos'])}, "
            f"{html.escape(str(card.get('team') or '-'))})")
        self.refresh()

    def edit_queue(self, how: str) -> None:
        pid, at = self.board.value, self.queue_list.value
        if how == "add" and pid is not None and pid not in self.queue:
            self.queue.append(pid)
        elif how == "remove" and at in self.queue:
            self.queue.remove(at)
        elif how == "up" and at in self.queue and (i := self.queue.index(at)) > 0:
            self.queue[i - 1], self.queue[i] = self.queue[i], self.queue[i - 1]
        self.queue_list.options = [(player_label(self.cards[p]), p) for p in self.queue]
        self.queue_list.value = at if at in self.queue else None
        self.refresh()

    def value(self) -> dict:
        if self.queue_mode:
            return {"queue": list(self.queue)}
        return {"shortlist": [] if self.board.value is None else [self.board.value]}


@form
class PickForm(Form):
    """Take one player of the shortlist (shown when the board's choice did not reach the pick unchanged)."""

    kinds: ClassVar[tuple[str, ...]] = ("draft_pick",)
    submit_label = "Draft"

    def build(self):
        import ipywidgets as w

        self.submit.add_class(DRAFT_BUTTON)
        detail = self.view["shortlist_detail"]
        self.choice = w.RadioButtons(options=[(player_label(c), c["id"]) for c in detail],
                                     layout=w.Layout(width="100%")).add_class(BOARD)
        self.choice.value = detail[0]["id"] if detail else None
        self.observe(self.choice, self.refresh)
        return w.VBox([w.HTML(f"<b>{when(self.view).capitalize()}</b>: take one of your shortlist"),
                       w.HTML(needs_html(self.view)), w.HTML(picks_html(self.view)),
                       w.HTML(f"<style>.{BOARD} label {{{MONO}}}</style>"
                              f"<div style='{MONO};padding-left:22px;color:#555'>{html.escape(header_label())}</div>"),
                       self.choice])

    def value(self) -> dict:
        return {"player_id": self.choice.value}
