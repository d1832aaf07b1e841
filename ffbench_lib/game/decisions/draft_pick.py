"""``draft_pick``: the team on the clock takes one player of its shortlist (shown in detail).

Legal: a shortlisted player at a position the team may still draft. The repair is the shortlisted legal player
with the best preseason projection."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config

from ffbench_lib.game.protect import midpoint
from ffbench_lib.game.render import DETAIL, table
from ffbench_lib.game.rules.draft import validate_pick
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register
from ffbench_lib.game.decisions._view_parts import VIEW, DetailCard, DraftBoard
from ffbench_lib.game.decisions.draft_shortlist import draft_common


class PickAnswer(AnswerModel):
    player_id: str


@with_config(VIEW)
class DraftPickView(DraftBoard):
    """The shortlist view plus the shortlisted players in detail."""

    decision: Literal["draft_pick"]
    shortlist_size: int
    shortlist_detail: list[DetailCard]


@register
class DraftPick(Decision):
    kind = "draft_pick"
    Answer = PickAnswer
    view_schema = DraftPickView
    tables = ("draft_picks",)

    @classmethod
    def view(cls, fw, state, team, *, base: dict, shortlist: list[str]) -> dict:
        """The shortlist view (``base``) plus the shortlisted players in detail."""
        return {**base, "decision": "draft_pick", "shortlist_detail": fw.shortlist_detail(shortlist)}

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        detail = view["shortlist_detail"]
        pid, problems, repaired = validate_pick(answer, [c["id"] for c in detail], {c["id"]: c["pos"] for c in detail},
                                                view["legal_positions"], {c["id"]: midpoint(c["proj"]) or 0.0 for c in detail})
        return Outcome(pid, "fallback" if repaired else "agent", problems, pid)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        return {**draft_common(view), "detail": table(view["shortlist_detail"], DETAIL)}
