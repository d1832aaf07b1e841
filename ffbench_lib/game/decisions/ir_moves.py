"""``ir_moves``: before a week's waivers, a team with injured-reserve slots (``roster.IR``) may move players ruled
``Out`` on that week's official injury report to IR, freeing their active spots, and bring IR players back.

The view: the team's active players and its IR players (each as seen before the week), its IR slots and active
spots. Legal answer ``{"to_ir": [ids], "from_ir": [{"player": id, "drop": id | null}]}``: a player moved to IR
is active and listed ``Out`` this week (the nflverse injury report has no IR designation of its own: a player
placed on the NFL's reserve list leaves the report instead); a player brought back is on the team's IR; a
``drop`` is an active player not moved to IR, each dropped once; and the team afterwards holds at most its IR
slots on IR and at most ``roster.size`` active players, within the caps and able to field a legal lineup (so
a team's only player of a starting position cannot go to IR: claim a replacement first). A player whose
status is no longer Out may stay on IR. The answer is judged as a whole, on the roster it leads to, so a
healthy player and an injured one may swap places in a full IR. An illegal answer keeps its moves that are
legal in turn (the decision marked ``fallback``); an unreadable one moves nobody. IR players never start,
are never traded (views show only active players) and are not dropped by waiver claims. Bots enumerate legal
moves with :func:`legal_moves`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, with_config

from ffbench_lib.game.knowledge import OUT  # the injury-report status that makes a player eligible for IR
from ffbench_lib.game.render import WEEK, record, table
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register, roster_from_rules
from ffbench_lib.game.decisions._view_parts import VIEW, Record, Week, WeekCard

if TYPE_CHECKING:
    from ffbench_lib.game.state import LeagueState
    from ffbench_lib.game.views import Firewall


def ir_eligible(card: dict) -> bool:
    """Whether a player card may go to IR this week: he is listed Out on the week's injury report."""
    return card.get("injury") == OUT


class FromIR(BaseModel):
    player: str
    drop: str | None = None


class IRAnswer(AnswerModel):
    to_ir: list[str]
    from_ir: list[FromIR]


def _id(x: Any) -> Any:
    return str(x) if isinstance(x, int) and not isinstance(x, bool) else x


def _after_problem(view: dict, to_ir: list[str], back: list[dict[str, Any]]) -> str | None:
    """Why the roster these moves lead to is illegal, or None (IR slots, active spots, caps, a lineup)."""
    mine = [c["id"] for c in view["my_roster"]]
    on_ir = [c["id"] for c in view["ir"]]
    pos = {c["id"]: c["pos"] for c in view["my_roster"] + view["ir"]}
    gone = set(to_ir) | {b["drop"] for b in back if b["drop"]}
    active = [p for p in mine if p not in gone] + [b["player"] for b in back]
    ir_after = len(on_ir) - len(back) + len(to_ir)
    if ir_after > view["ir_slots"]:
        return f"{ir_after} players on IR; the league has {view['ir_slots']} IR slot(s)"
    if len(active) > view["active_spots"]:
        return (f"{len(active)} active players; at most {view['active_spots']}: name a player to drop for each "
                "player brought back to a full roster")
    roster = roster_from_rules(view["rules"])
    capped = within_caps([pos[p] for p in active], roster)
    if capped:
        return f"the active roster would hold {capped}"
    if not can_field_lineup([pos[p] for p in active], roster):
        return "the active roster could not field a legal lineup afterwards"
    return None


def _item_problem(view: dict, kind: str, move: Any, to_ir: list[str], back: list[dict[str, Any]]) -> str | None:
    """Why one move (a ``to_ir`` id or a ``from_ir`` object) is malformed or clashes with the moves before it,
    or None; the roster the moves lead to is judged by :func:`_after_problem`."""
    cards = {c["id"]: c for c in view["my_roster"]}
    if kind == "to_ir":
        if not isinstance(move, str) or move not in cards:
            return f"{move!r} is not one of your active players"
        if move in to_ir:
            return f"{move} is moved to IR twice"
        if not ir_eligible(cards[move]):
            return f"{move} is not listed Out on this week's injury report (status {cards[move].get('injury')})"
        return None
    if not isinstance(move, dict):
        return "not an object with 'player' and 'drop'"
    player, drop = _id(move.get("player")), _id(move.get("drop"))
    if not isinstance(player, str) or player not in {c["id"] for c in view["ir"]}:
        return f"{player!r} is not on your IR"
    if player in {b["player"] for b in back}:
        return f"{player} is brought back twice"
    if drop is not None:
        if not isinstance(drop, str) or drop not in cards:
            return f"drop {drop!r} is not one of your active players"
        if drop in to_ir or drop in {b["drop"] for b in back}:
            return f"{drop} is dropped twice or also moved to IR"
    return None


@with_config(VIEW)
class IRMovesView(Week):
    """The active players and the IR players (each as seen before the week), the IR slots and active spots."""

    decision: Literal["ir"]
    ir_slots: int
    active_spots: int
    record: Record
    my_roster: list[WeekCard]
    ir: list[WeekCard]


@register
class IRMoves(Decision):
    kind = "ir_moves"
    Answer = IRAnswer
    view_schema = IRMovesView
    tables = ("ir_moves", "transactions")  # a drop for a player back from IR

    @classmethod
    def view(cls, fw: "Firewall", state: "LeagueState", team: str, *, week: int) -> dict:
        lg = fw.league
        return {"decision": "ir", "season": lg.season, "week": week, "team": team, "rules": fw.rules(),
                "ir_slots": lg.roster.IR, "active_spots": lg.roster.size, "record": fw.record(state, team),
                "my_roster": [fw.player_week(p, week) for p in sorted(state.active(team))],
                "ir": [fw.player_week(p, week) for p in state.on_ir(team)]}

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        """Every well-formed move, if the roster they lead to together is legal; otherwise those legal in turn
        (moves to IR first)."""
        none = {"to_ir": [], "from_ir": []}
        if not isinstance(answer, dict) or not ({"to_ir", "from_ir"} & set(answer)):
            return Outcome(none, "fallback", ["no 'to_ir' or 'from_ir' list in the answer (empty lists move "
                                              "nobody)"], none)
        problems: list[str] = []
        to_ir: list[str] = []
        back: list[dict[str, Any]] = []
        for key in ("to_ir", "from_ir"):
            moves = answer.get(key, [])
            if key not in answer:
                problems.append(f"no '{key}' list in the answer (give an empty list to move nobody)")
            elif not isinstance(moves, list):
                problems.append(f"'{key}' must be a list")
                moves = []
            for i, move in enumerate(moves, start=1):
                move = _id(move) if key == "to_ir" else move
                problem = _item_problem(view, key, move, to_ir, back)
                if problem:
                    problems.append(f"{key} {i}: {problem}")
                elif key == "to_ir":
                    to_ir.append(move)
                else:
                    back.append({"player": _id(move["player"]), "drop": _id(move.get("drop"))})
        together = _after_problem(view, to_ir, back)
        if together:
            problems.append(f"the moves together: {together}")
            kept_ir: list[str] = []
            kept_back: list[dict[str, Any]] = []
            for p in to_ir:
                if _after_problem(view, [*kept_ir, p], kept_back) is None:
                    kept_ir.append(p)
            for b in back:
                if _after_problem(view, kept_ir, [*kept_back, b]) is None:
                    kept_back.append(b)
            to_ir, back = kept_ir, kept_back
        applied = {"to_ir": to_ir, "from_ir": back}
        return Outcome(applied, "fallback" if problems else "agent", problems, applied)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        rules = view["rules"]
        open_spots = view["active_spots"] - len(view["my_roster"])
        return {"kind": cls.kind, "week": view["week"], "weeks": rules["weeks"], "record": record(view["record"]),
                "ir_slots": view["ir_slots"], "ir_free": view["ir_slots"] - len(view["ir"]),
                "active_spots": view["active_spots"], "active": len(view["my_roster"]), "open_spots": open_spots,
                "my_roster": table(view["my_roster"], WEEK), "ir": table(view["ir"], WEEK)}


# ------------------------------------------------------------------------------------------------ legal actions
def legal_moves(view: dict) -> list[dict[str, Any]]:
    """Every legal single move as an answer: one player to IR, or one IR player back (without a drop when an
    active spot is open, else with each legal drop), active players and IR players in view order."""
    out: list[dict[str, Any]] = []
    for c in view["my_roster"]:
        if _item_problem(view, "to_ir", c["id"], [], []) is None and _after_problem(view, [c["id"]], []) is None:
            out.append({"to_ir": [c["id"]], "from_ir": []})
    for c in view["ir"]:
        for drop in [None, *(d["id"] for d in view["my_roster"])]:
            back = {"player": c["id"], "drop": drop}
            if _item_problem(view, "from_ir", back, [], []) is None and _after_problem(view, [], [back]) is None:
                out.append({"to_ir": [], "from_ir": [back]})
    return out


def has_legal_move(view: dict) -> bool:
    """Whether the team can make any IR move this week."""
    return bool(legal_moves(view))


def worth_asking(view: dict) -> bool:
    """Whether the team has an IR decision to make this week (only such teams are asked: an LLM ask costs tokens):
    a legal move exists, and an active player is ruled Out (he may go to IR, in a full IR in place of another) or
    an IR player no longer is (he may come back). Bringing back a player still ruled Out is legal but never asked
    for on its own."""
    out_now = any(ir_eligible(c) for c in view["my_roster"])
    recovered = any(not ir_eligible(c) for c in view["ir"])
    return (out_now or recovered) and has_legal_move(view)
