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
from ffbench_lib.agents.examples import with_examples
from ffbench_lib.agents.prompts import fold_system, system_prompt, user_prompt
from ffbench_lib.game.decisions.draft_shortlist import board
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
    cols = [("id", "id")] + [(k, k) for k in sorted(row) if k not in ("id", "recent", "zero_flags")] + [
        ("flags", "zero_flags")]
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
            return (f"TEAM \"{name}\" ROSTER (record {record(o['record'])}; strength {json.dumps(o['strength'], sort_keys=True)})\n"
                    f"{table(o['roster'], WEEK)}")
    return f"no team {name!r}: one of {', '.join(o['team'] for o in view.get('other_teams') or ())}"


def _fn(name: str, *required: str, **props: str) -> dict:
    """A terse function spec: every spec is sent, and counted, with every call, so the system prompt says what
    the tools give once, and a spec is its name and parameters."""
    params: dict[str, Any] = {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}}
    if required:
        params["required"] = list(required)
    return {"type": "function", "function": {"name": name, "parameters": params}}


#: name -> (OpenAI tool spec, the view key it reads or None, the decisions it serves or None: every one, run)
TOOLS: dict[str, tuple[dict, str | None, tuple[str, ...] | None, Callable[[dict, dict], str]]] = {
    # the point values, in the draft: in-season every projection is already in the league's points
    "league_rules": (_fn("league_rules"), None, ("draft_shortlist", "draft_pick", "draft_queue"), _league_rules),
    "player": (_fn("player", "player_id", player_id="string"),
               None, None, _player),
    "free_agents": (_fn("free_agents", "position", position="string", limit="integer"), "free_agents", None, _board("free_agents", "FREE AGENTS")),
    "draft_board": (_fn("draft_board", "position", position="string", limit="integer"), "available", ("draft_shortlist", "draft_queue"),
                    _board("available", "BEST AVAILABLE")),
    "team_roster": (_fn("team_roster", "team", team="string"), "other_teams", None,
                    _team_roster),
}


def _offered(decision: str, view: dict, name: str) -> bool:
    _, key, decisions, _ = TOOLS[name]
    return (key is None or bool(view.get(key))) and (decisions is None or decision in decisions)


def specs(decision: str, view: dict) -> list[dict]:
    """The tools offered for ``decision`` on ``view``: those whose data it holds, where they serve."""
    return [TOOLS[name][0] for name in TOOLS if _offered(decision, view, name)]


def run(decision: str, view: dict, name: str, arguments: str | None) -> str:
    """One tool call's result as text; a bad call gets a line saying what was wrong (the model may try again)."""
    if name not in TOOLS or not _offered(decision, view, name):
        return f"no tool {name!r}: use one of {', '.join(s['function']['name'] for s in specs(decision, view))}"
    try:
        args = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return "the arguments are not a JSON object"
    if not isinstance(args, dict):
        return "the arguments are not a JSON object"
    text = TOOLS[name][3](view, args)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "\n[...cut: ask for fewer rows]"


def brief(view: dict) -> tuple[dict, list[str]]:
    """The view the tools prompt is rendered on, and what was shortened (the model is told, with the tool):
    :mod:`.fit`'s shortest, except a draft board, which keeps every player who makes the best
    ``shortlist_size`` (``queue_size``) at the legal positions, and each position's best."""
    short, notes = fit.shorten(view, fit.levels(view))
    if view.get("free_agents"):
        # one table of each position's best (its header once): under no position's name
        short["free_agents"] = {"": [cards[0] for cards in view["free_agents"].values() if cards]}
        notes = [n for n in notes if not n.startswith("the free agents")] + ["the free agents show each position's best"]
    size = view.get("shortlist_size") or view.get("queue_size")
    if view.get("available") and size:
        legal = set(view.get("legal_positions") or view["available"])
        top = {c["id"] for c in [c for c in board(view) if c["pos"] in legal][:size]}
        short["available"] = {pos: [c for i, c in enumerate(cards) if i == 0 or c["id"] in top]
                              for pos, cards in view["available"].items()}
        notes = [n for n in notes if not n.startswith("the board")] + [
            f"the board shows the best {size} available at the legal positions and each position's best"]
    return short, notes


def messages(decision: str, view: dict, version: str, strategy=None, system_in_user: bool = False,
             ) -> list[dict[str, Any]]:
    """The tools prompt of ``decision``: the ``tools_system`` rules and the decision's tools template (else its
    table template) on :func:`brief`."""
    short, notes = brief(view)
    with brief_columns():
        user = user_prompt(decision, short, version, strategy, prefix="tools_")
    if notes:
        user += f"\n\nShortened: {'; '.join(notes)}."
    msgs = [{"role": "system", "content": system_prompt(view, version, strategy, name="tools_system")},
            {"role": "user", "content": user}]
    if strategy is not None and strategy.examples:
        def render(v: dict) -> str:
            with brief_columns():
                return user_prompt(decision, brief(v)[0], version, strategy, prefix="tools_")

        msgs = with_examples(msgs, decision, view, strategy.examples, render)
    return fold_system(msgs) if system_in_user else msgs
