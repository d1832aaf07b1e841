"""``draft_shortlist``: the team on the clock (or on deck) names up to ``shortlist_size`` players it would take.

Legal: players the board shows, at a position the team may still draft, each once. The ids that pass are kept
(extra ones cut); with none left the repair is the best legal players on the board by preseason projection."""
from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import with_config

from ffbench_lib.game.protect import midpoint
from ffbench_lib.game.render import CARD, table
from ffbench_lib.game.rules.draft import NOT_AVAILABLE, legal_positions, others_need, validate_shortlist
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register
from ffbench_lib.game.decisions._view_parts import VIEW, DraftBoard


class ShortlistAnswer(AnswerModel):
    shortlist: list[str]


def board(view: dict) -> list[dict]:
    """Every player card the board shows, best preseason projection first (the draft pool's order)."""
    cards = [c for cs in view["available"].values() for c in cs]
    # a protected view's projection may be a range ("180-210"): its midpoint
    return sorted(cards, key=lambda c: (-midpoint(c["proj"]) if c["proj"] is not None else math.inf, c["id"]))


def draft_common(view: dict) -> dict[str, Any]:
    """Template fields both draft decisions share."""
    return {"pick": view["pick"], "round": view["round"], "rounds": view["rounds"],
            "roster": table(view["roster"], CARD), "unfilled": view["roster_summary"]["unfilled_starters"],
            "legal": ", ".join(view["legal_positions"])}


def judge_board_list(answer: Any, view: dict, size: int, key: str,
                     not_shown: str = NOT_AVAILABLE) -> Outcome:
    """Judge a ranked list of board players (a shortlist, or a draft queue: one rule, see
    :func:`validate_shortlist`) against the view's board and legal positions."""
    cards = board(view)
    ids, problems, repaired = validate_shortlist(
        answer, [c["id"] for c in cards], {c["id"]: c["pos"] for c in cards}, view["legal_positions"], size,
        key=key, not_shown=not_shown)
    return Outcome(ids, "fallback" if repaired else "agent", problems, ids)


def board_fields(view: dict) -> dict[str, Any]:
    """Template fields of the board both list decisions (shortlist, queue) show."""
    avail = "\n\n".join(f"{pos}\n{table(ps, CARD)}" for pos, ps in view["available"].items())
    return {**draft_common(view), "thin": ", ".join(view["thin_positions"]) or "none",
            "drafted": json.dumps(view["drafted_by_position"]), "available": avail}


def legal_now(fw, state, team: str) -> list[str]:
    """The positions ``team`` may draft with the board as it is now (its roster, and what the others still need)."""
    roster = fw.league.roster
    need = others_need(team, state.rosters, fw.position, roster)
    return legal_positions([fw.position[p] for p in state.rosters[team]], roster, fw.supply(state), need)


@with_config(VIEW)
class DraftShortlistView(DraftBoard):
    """The board, the roster and the positions the team on the clock (or on deck) may draft."""

    decision: Literal["draft"]
    shortlist_size: int


@register
class DraftShortlist(Decision):
    kind = "draft_shortlist"
    Answer = ShortlistAnswer
    view_schema = DraftShortlistView
    tables = ("draft_picks",)  # its shortlist column

    @classmethod
    def view(cls, fw, state, team, *, pick: int, rnd: int) -> dict:
        """The board (best available per position), the team's roster, and the positions it may still draft."""
        view = fw.draft_view(state, team, pick, rnd)
        view["legal_positions"] = legal_now(fw, state, team)
        return view

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        return judge_board_list(answer, view, view["shortlist_size"], "shortlist")

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        return {**board_fields(view), "shortlist_size": view["shortlist_size"]}
