"""``set_lineup``: before a week kicks off, every team names its starters, slot by slot.

Legal: roster players in slots their position may fill (FLEX from the flex positions), each once. Every legal
entry is kept; the rest of the slots are filled with the best remaining players by :func:`start_value` and
marked ``fallback`` one by one."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import with_config
from typing_extensions import NotRequired

from ffbench_lib.game.render import AUTO_SUBS_RULE, WEEK, flex, formation_text, record, slot_items, slots, table
from ffbench_lib.game.rules.lineup import order_bench, start_value, validate_and_repair
from ffbench_lib.game.decisions.base import AnswerModel, Decision, Outcome, register, roster_from_rules
from ffbench_lib.game.decisions._view_parts import VIEW, PlayoffContext, Record, Week, WeekCard


class LineupAnswer(AnswerModel):
    lineup: dict[str, list[str | None]]
    #: the bench in the order substitutes come on (a league with ``roster.auto_subs`` only)
    bench: list[str] | None = None


@with_config(VIEW)
class SetLineupView(Week):
    """``Firewall.lineup_view``: the active players; IR players in a league with IR slots; a playoff week's stakes."""

    decision: Literal["lineup"]
    record: Record
    opponent_team: str | None
    players: list[WeekCard]
    ir: NotRequired[list[WeekCard]]
    playoff: NotRequired[PlayoffContext]


@register
class SetLineup(Decision):
    kind = "set_lineup"
    Answer = LineupAnswer
    view_schema = SetLineupView
    tables = ("lineups", "bench", "rosters")

    @classmethod
    def view(cls, fw, state, team, *, week: int) -> dict:
        return fw.lineup_view(state, team, week)

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:
        players = view["players"]
        lineup = answer.get("lineup") if isinstance(answer, dict) else None
        roster = roster_from_rules(view["rules"])
        values = {p["id"]: start_value(p) for p in players}
        result = validate_and_repair(lineup, {p["id"]: p["pos"] for p in players}, values, roster)
        by = "agent" if all(d == "agent" for ds in result.decided_by.values() for d in ds) else "fallback"
        if not roster.auto_subs:
            return Outcome(result.slots, by, result.problems, result)
        starting = {pid for ids in result.slots.values() for pid in ids}
        bench, problems = order_bench(answer.get("bench") if isinstance(answer, dict) else None,
                                      [p["id"] for p in players if p["id"] not in starting], values)
        result = replace(result, problems=result.problems + problems, bench=tuple(bench))
        by = "agent" if by == "agent" and not problems else "fallback"
        return Outcome({"lineup": result.slots, "bench": [pid for pid, _ in bench]}, by, result.problems, result)

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:
        rules = view["rules"]
        schema = ", ".join(f'"{k}": [{", ".join(["<id>"] * v)}]' for k, v in slot_items(rules))
        _, flex_note, flex_sentence = flex(rules)
        choose = ("Choose your starters: exactly the number of players per slot shown above, each player at most "
                  f"once.{flex_sentence}")
        formation_line = bench_schema = ""
        if "most_starters" in rules:  # a formation: each position's least in its slots, FLEX the rest
            formation_line = f"\nFORMATION: {formation_text(rules)}"
            choose = ("Choose your starters within the formation: each position's slots, and FLEX for the players "
                      "beyond a position's least (you may also list every starter under his position), each player "
                      "at most once.")
        if rules.get("auto_subs"):
            formation_line += f"\nBENCH ORDER: all {rules['bench']} players who do not start, first substitute first"
            choose += f" Then order your bench. {AUTO_SUBS_RULE}"
            bench_schema = f', "bench": [{", ".join(["<id>"] * rules["bench"])}]'
        return {"week": view["week"], "weeks": rules["weeks"], "record": record(view["record"]),
                "opponent": view["opponent_team"] or "-", "slots": slots(rules),
                "flex": "/".join(rules["flex_positions"]), "last_week": view["week"] - 1,
                "players": table(view["players"], WEEK) + _ir(view), "lineup_schema": schema, "flex_note": flex_note,
                "flex_sentence": flex_sentence, "playoff_line": playoff_line(view), "choose": choose,
                "formation_line": formation_line, "bench_schema": bench_schema}


def playoff_line(view: dict) -> str:
    """Where the team stands in a playoff week (empty in the regular season and in leagues without playoffs)."""
    p = view.get("playoff")
    if p is None:
        return ""
    name = "the final" if p["round"] == p["rounds"] else f"round {p['round']} of {p['rounds']}"
    if p["status"] != "playing":
        return (f"\nPLAYOFFS, {name}: you have a bye this round." if p["status"] == "bye" else
                f"\nPLAYOFFS, {name}: you are not in the bracket; no game is at stake for you this week.")
    line = f"\nPLAYOFFS, {name}: win or go home."
    if p["weeks_in_round"] > 1:
        line += f" This round adds the points of {p['weeks_in_round']} weeks; this is week {p['week_of_round']}."
    if "round_points_so_far" in p:
        so_far = p["round_points_so_far"]
        line += f" Round points so far: you {so_far['you']:.2f}, opponent {so_far['opponent']:.2f}."
    return line


def _ir(view: dict) -> str:
    """The team's IR players after its roster (a league with IR slots only): shown, never startable."""
    if "ir" not in view:
        return ""
    return f"\n\nON INJURED RESERVE (cannot start)\n{table(view['ir'], WEEK)}"
