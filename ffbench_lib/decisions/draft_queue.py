"""``draft_queue`` (``draft.mode: queue``): at the start of a round every team names, at once, a ranked queue of up
to ``queue_size`` players; the round's picks are then made from the queues in snake order (each team gets the first
queued player still available and legal for it at its turn), so no pick waits for the one before.

The view is the shortlist view (board, roster, legal positions) plus every pick made so far. Legal: players the
board shows, at a position the team may draft now, each once (the shortlist's rule); extra ids are cut. With none
left the repair is the best legal players on the board by preseason projection."""
from __future__ import annotations

import json
from typing import Any

from ..render import CARD, table
from ..rules.draft import validate_shortlist
from .base import AnswerModel, Decision, Outcome, register
from .draft_shortlist import DraftShortlist, board, draft_common

#: the picks-so-far table of the prompt
PICKS = [("pick", "pick"), ("team", "team"), ("id", "id"), ("name", "name"), ("pos", "pos")]


class QueueAnswer(AnswerModel):
    queue: list[str]


@register
class DraftQueue(Decision):
    kind = "draft_queue"
    Answer = QueueAnswer

    @classmethod
    def view(cls, fw, state, team, *, pick: int, rnd: int, picks_before: int) -> dict:
        """The shortlist view of ``team``'s pick, plus every pick so far and how many picks of the round come
        before its own (``picks_before``: how deep its queue must reach)."""
        view = DraftShortlist.view(fw, state, team, pick=pick, rnd=rnd)
        view.pop("shortlist_size")
        return {**view, "decision": "draft_queue", "queue_size": fw.league.draft.queue_size,
                "picks_before": picks_before, "picks_so_far": fw.picks_so_far(state)}

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        cards = board(view)
        queue, problems, repaired = validate_shortlist(
            answer, [c["id"] for c in cards], {c["id"]: c["pos"] for c in cards}, view["legal_positions"],
            view["queue_size"], key="queue")
        return Outcome(queue, "fallback" if repaired else "agent", problems, queue)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        avail = "\n\n".join(f"{pos}\n{table(ps, CARD)}" for pos, ps in view["available"].items())
        return {**draft_common(view), "thin": ", ".join(view["thin_positions"]) or "none",
                "drafted": json.dumps(view["drafted_by_position"]), "queue_size": view["queue_size"],
                "picks_before": view["picks_before"], "picks": table(view["picks_so_far"], PICKS),
                "available": avail}
