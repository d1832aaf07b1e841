"""Fitting a prompt into a model's budget (``max_prompt_tokens``) by shortening the VIEW before it is rendered,
so the templates never change: a draft queue's picks so far first (the latest are kept), other teams' tables
(their best players by this week's projection are kept), then per-position boards (the draft board, the free
agents), then long negotiation histories. Each step is one level of a ladder; the agent
renders, counts and climbs until the prompt fits. The model is told what was shortened.

The answer is still checked against the whole view: a shortened table hides players, it never makes them
illegal.
"""
from __future__ import annotations

from ffbench_lib.game.protect import midpoint

NOTE = "Some tables were shortened to fit your context: {what}."
_OTHER_ROWS = (8, 5, 3, 1)  # rows kept per other team's roster
_BOARD_ROWS = (6, 4, 2)  # players kept per position on a board (the views list them best first)
_BOARDS = {"available": "the board shows the {n} best available player(s) per position",
           "free_agents": "the free agents show the {n} best player(s) per position"}
_HISTORY = 2  # negotiation steps kept (the latest)
_PICKS = 10  # draft picks so far kept (the latest; the view's drafted_by_position still counts them all)
_RATIONALE_CHARS = 300


def _best(rows: list[dict], n: int) -> list[dict]:
    # a protected view's projection may be a range ("12-15"): its midpoint
    return sorted(rows, key=lambda r: (-(midpoint(r.get("proj_week")) or 0.0), str(r.get("id"))))[:n]


def _short_rationale(step: dict) -> dict:
    text = step.get("their_rationale_untrusted")
    return {**step, "their_rationale_untrusted": text[:_RATIONALE_CHARS]} if text else step


def levels(view: dict) -> int:
    """How many shortening steps exist for this view (0: nothing can be shortened)."""
    n = 0
    if view.get("other_teams"):
        n += len(_OTHER_ROWS)
    if any(view.get(key) for key in _BOARDS):
        n += len(_BOARD_ROWS)
    if len(view.get("negotiation") or []) > _HISTORY:
        n += 1
    if len(view.get("picks_so_far") or []) > _PICKS:
        n += 1
    return n


def shorten(view: dict, level: int) -> tuple[dict, list[str]]:
    """The view at shortening ``level`` (0 = unchanged) and what the model is told was shortened."""
    if level <= 0:
        return view, []
    out, notes, step = dict(view), [], 0
    if len(view.get("picks_so_far") or []) > _PICKS:
        step += 1  # a draft queue's picks so far: the counts by position stay in the view
        if level >= step:
            out["picks_so_far"] = view["picks_so_far"][-_PICKS:]
            notes.append(f"only the last {_PICKS} picks so far are shown")
    if view.get("negotiation") and len(view["negotiation"]) > _HISTORY:
        step += 1  # cheapest loss first: old negotiation steps and long rationales
        if level >= step:
            out["negotiation"] = [_short_rationale(h) for h in view["negotiation"][-_HISTORY:]]
            notes.append(f"only the last {_HISTORY} negotiation steps are shown")
    if view.get("other_teams"):
        k = min(level - step, len(_OTHER_ROWS))
        step += len(_OTHER_ROWS)
        if k > 0:
            n = _OTHER_ROWS[k - 1]
            out["other_teams"] = [{**o, "roster": _best(o["roster"], n)} for o in view["other_teams"]]
            notes.append(f"other teams' rosters show only their {n} best player(s) by this week's projection")
    boards = [key for key in _BOARDS if view.get(key)]
    if boards:
        k = min(level - step, len(_BOARD_ROWS))
        if k > 0:
            n = _BOARD_ROWS[k - 1]
            for key in boards:
                out[key] = {pos: ps[:n] for pos, ps in view[key].items()}
                notes.append(_BOARDS[key].format(n=n))
    return out, notes


def note(notes: list[str]) -> str:
    return NOTE.format(what="; ".join(notes))
