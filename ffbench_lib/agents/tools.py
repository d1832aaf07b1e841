"""Tools mode (``{kind: llm, mode: tools}``): a short prompt, and function-calling tools that read the view.

The prompt is the decision's own template rendered on a brief of its view: every table with only the columns a
choice needs (:data:`~ffbench_lib.game.render.BRIEF_KEYS`), the lookups cut to their best rows (other teams'
rosters to one player, a board or the free agents to two per position, as :mod:`.fit` cuts them) and the rules
without the point values (system template ``tools``). The tools return the rest: a player's whole row and recent
games, a position's free agents or board, another team's roster, the league's full rules. They read only the
view the firewall built for this decision, so a tool knows nothing the table prompt would not have shown; the
answer is judged against the whole view, as in table mode.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from ffbench_lib.agents import fit
from ffbench_lib.agents.prompts import fold_system, system_prompt, user_prompt
from ffbench_lib.game.render import CARD, WEEK, brief_columns, record, table

MAX_ROWS = 40  # a list tool's largest page
RESULT_CHARS = 12_000  # of one tool result (a long list is cut, and says so)


def _players(view: dict) -> dict[str, dict]:
    """Every player row the view holds, by id (the fullest row when a player appears twice)."""
    out: dict[str, dict] = {}

    def add(rows):
        for r in rows or ():
            if isinstance(r, dict) and "id" in r and len(r) >= len(out.get(r["id"], {})):
                out[r["id"]] = r

    for key in ("players", "ir", "my_roster", "roster", "shortlist_detail"):
        add(view.get(key))
    for key in ("free_agents", "available"):
        for rows in (view.get(key) or {}).values():
            add(rows)
    for o in view.get("other_teams") or ():
        add(o.get("roster"))
    for side in ("you_give", "you_get"):
        add((view.get("offer") or {}).get(side))
    return out


def _cols(row: dict) -> list[tuple[str, str]]:
    return WEEK if "proj_week" in row else CARD


def _league_rules(view: dict, args: dict) -> str:
    return system_prompt(view).split("\n\nANSWER FORMAT", 1)[0]


def _player(view: dict, args: dict) -> str:
    pid = str(args.get("player_id", ""))
    row = _players(view).get(pid)
    if row is None:
        return f"no player {pid!r} in this decision's data: use an id shown in a table"
    cols = [(k, k) for k in row if k not in ("recent", "zero_flags")] + [("flags", "zero_flags")]
    out = table([row], cols)
    games = row.get("recent")
    if games:
        out += "\n\nRECENT GAMES\n" + "\n".join(json.dumps(g, sort_keys=True) for g in games)
    return out


def _limit(args: dict, default: int) -> int:
    try:
        return max(1, min(MAX_ROWS, int(args.get("limit", default))))
    except (TypeError, ValueError):
        return default


def _board(key: str, header: str) -> Callable[[dict, dict], str]:
    def run(view: dict, args: dict) -> str:
        board = view.get(key) or {}
        pos = str(args.get("position", ""))
        if pos not in board:
            return f"no position {pos!r}: one of {', '.join(board)}"
        rows = board[pos][:_limit(args, 10)]
        return f"{header} {pos}\n{table(rows, _cols(rows[0]) if rows else WEEK)}"
    return run


def _team_roster(view: dict, args: dict) -> str:
    name = str(args.get("team", ""))
    for o in view.get("other_teams") or ():
        if o["team"] == name:
            return (f"TEAM \"{name}\" ROSTER (record {record(o['record'])}; strength {json.dumps(o['strength'])})\n"
                    f"{table(o['roster'], WEEK)}")
    return f"no team {name!r}: one of {', '.join(o['team'] for o in view.get('other_teams') or ())}"


def _fn(name: str, description: str, *required: str, **props: str) -> dict:
    """A terse function spec (every spec is sent, and counted, with every call)."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": list(required)}}}


#: name -> (OpenAI tool spec, the view key it needs or None, run)
TOOLS: dict[str, tuple[dict, str | None, Callable[[dict, dict], str]]] = {
    "league_rules": (_fn("league_rules", "Full rules, every stat's points"), None, _league_rules),
    "player": (_fn("player", "A player's season, last season, recent games", "player_id", player_id="string"),
               None, _player),
    "free_agents": (_fn("free_agents", "Free agents at a position, best first", "position", position="string",
                        limit="integer"), "free_agents", _board("free_agents", "FREE AGENTS")),
    "draft_board": (_fn("draft_board", "Undrafted players at a position, best first", "position",
                        position="string", limit="integer"), "available", _board("available", "BEST AVAILABLE")),
    "team_roster": (_fn("team_roster", "Another team's roster", "team", team="string"), "other_teams",
                    _team_roster),
}


def specs(view: dict) -> list[dict]:
    """The tools offered for ``view``: those whose data it holds."""
    return [spec for spec, key, _ in TOOLS.values() if key is None or view.get(key)]


def run(view: dict, name: str, arguments: str | None) -> str:
    """One tool call's result as text; a bad call gets a line saying what was wrong (the model may try again)."""
    if name not in TOOLS or not (TOOLS[name][1] is None or view.get(TOOLS[name][1])):
        return f"no tool {name!r}: use one of {', '.join(s['function']['name'] for s in specs(view))}"
    try:
        args = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return "the arguments are not a JSON object"
    if not isinstance(args, dict):
        return "the arguments are not a JSON object"
    text = TOOLS[name][2](view, args)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "\n[...cut: ask for fewer rows]"


def brief(view: dict) -> tuple[dict, list[str]]:
    """The view the tools prompt is rendered on, and what was shortened (the model is told, with the tool)."""
    short, notes = fit.shorten(view, fit.levels(view))
    return short, notes


def messages(decision: str, view: dict, version: str, strategy=None, system_in_user: bool = False,
             ) -> list[dict[str, Any]]:
    """The tools prompt of ``decision``: the ``tools`` rules and the decision's template on :func:`brief`."""
    short, notes = brief(view)
    with brief_columns():
        user = user_prompt(decision, short, version, strategy)
    if notes:
        user += f"\n\nSome tables are shortened (the tools give the rest): {'; '.join(notes)}."
    msgs = [{"role": "system", "content": system_prompt(view, version, strategy, name="tools")},
            {"role": "user", "content": user}]
    return fold_system(msgs) if system_in_user else msgs
