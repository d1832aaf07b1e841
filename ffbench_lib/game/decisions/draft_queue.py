"""``draft_queue`` (``draft.mode: queue``): at the start of a round every team names, at once, a ranked queue of up
to ``queue_size`` players; the round's picks are then made from the queues in snake order (each team gets the first
queued player still available and legal for it at its turn), so no pick waits for the one before.

The view is the shortlist view (board, roster, legal positions) plus every pick made so far. Legal: players the
board shows, at a position the team may draft now, each once (the shortlist's rule); extra ids are cut. With none
left the repair is the best legal players on the board by preseason projection. A queue may name a player the
model knows beyond the board: the problem says he is not among the players shown (not that he is unavailable)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config

from ffbench_lib.game.render import table
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register
from ffbench_lib.game.decisions._view_parts import VIEW, DraftBoard, PickMade
from ffbench_lib.game.decisions.draft_shortlist import DraftShortlist, board_fields, judge_board_list

#: the problem of a queued id the board does not show (he may be available beyond it, or taken, or no player)
NOT_SHOWN = "is not among the available players shown"

#: the picks-so-far table of the prompt
PICKS = [("pick", "pick"), ("team", "team"), ("id", "id"), ("name", "name"), ("pos", "pos")]


class QueueAnswer(AnswerModel):
    queue: list[str]


@with_config(VIEW)
class DraftQueueView(DraftBoard):
    """The board (no shortlist size), how deep the queue must reach, and every pick so far."""

    decision: Literal["draft_queue"]
    queue_size: int
    picks_before: int
    at_turn: bool
    picks_so_far: list[PickMade]


@register
class DraftQueue(Decision):
    kind = "draft_queue"
    Answer = QueueAnswer
    view_schema = DraftQueueView
    tables = ("draft_picks",)

    @classmethod
    def view(cls, fw, state, team, *, pick: int, rnd: int, picks_before: int, at_turn: bool = False) -> dict:
        """The shortlist view of ``team``'s pick, plus every pick so far and how many picks of the round come
        before its own (``picks_before``: how deep its queue must reach); ``at_turn``: asked again on the clock,
        its queue having run dry."""
        view = DraftShortlist.view(fw, state, team, pick=pick, rnd=rnd)
        view.pop("shortlist_size")
        return {**view, "decision": "draft_queue", "queue_size": fw.league.draft.queue_size,
                "picks_before": picks_before, "at_turn": at_turn, "picks_so_far": fw.picks_so_far(state)}

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        return judge_board_list(answer, view, view["queue_size"], "queue", NOT_SHOWN)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        when = (f"your queue ran dry, so you are on the clock now with pick number {view['pick']}: name a new "
                "queue from the board as it is now." if view.get("at_turn") else
                f"every team names its draft queue now, at once. Your pick this round is number {view['pick']}; "
                f"{view['picks_before']} pick(s) of this round come before yours.")
        return {**board_fields(view), "queue_size": view["queue_size"], "picks_before": view["picks_before"],
                "when": when, "picks": table(view["picks_so_far"], PICKS)}
