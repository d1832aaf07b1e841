"""How the forms show players: one label for a dropdown or checkbox, a small HTML table, a team's record, the
search box and position filter of a player browser, the "drop" choices; also the sums a trade offer is judged
by at a glance. One place, so every form reads the same."""
from __future__ import annotations

import html
import math
from typing import Iterable

from ffbench_lib.game.protect import midpoint

ALL = "all"  # the position filter's "every position"
NO_DROP = "(no drop: open spot)"  # option value "" (a Dropdown valued None shows nothing)


def num(x) -> str:
    """A number as the forms show it; a protected view's range (``180-210``) as it is."""
    return "-" if x is None else x if isinstance(x, str) else f"{x:.1f}"


def value(card: dict, field: str) -> float:
    """A card's number to sort and add by (a protected view's range: its midpoint; none counts 0)."""
    return midpoint(card.get(field)) or 0.0


def label(card: dict) -> str:
    """``name (pos, NFL team) · proj this week · vs opponent · bye/out/injury`` for one player card."""
    zero = card.get("zero_flags") or []
    flags = [zero.upper()] if isinstance(zero, str) else [f.upper() for f in zero]  # protected: "BYE OR -"
    if card.get("injury") and "OUT" not in flags:
        flags.append(str(card["injury"]))
    where = "BYE" if "BYE" in flags else f"vs {card.get('opp') or '-'}"
    bye = f"bye wk {card['bye']}" if card.get("bye") else ""
    text = (f"{card['name']} ({card['pos']}, {card.get('team') or 'FA'}) · {num(card.get('proj_week'))} proj · "
            f"{where}")
    extra = [f for f in flags if f != "BYE"] + ([bye] if bye and "BYE" not in flags else [])
    return text + (" · " + " · ".join(extra) if extra else "")


#: the table's columns: (header, card field)
COLUMNS = [("player", "name"), ("pos", "pos"), ("NFL", "team"), ("opp", "opp"), ("proj wk", "proj_week"),
           ("season proj", "proj"), ("pts so far", "std_pts"), ("last 3", "last3_avg"), ("bye", "bye"),
           ("injury", "injury")]


def cell(v) -> str:
    """One value as a table shows it (a missing number is ``-``)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def table(cards: Iterable[dict], caption: str = "", columns: list[tuple[str, str]] = COLUMNS) -> str:
    """Players as a compact HTML table (rosters shown beside the controls); ``columns``: (header, card field)."""
    cards = list(cards)
    head = "".join(f"<th style='text-align:left;padding:0 6px'>{h}</th>" for h, _ in columns)
    rows = "".join("<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(cell(c.get(f)))}</td>"
                                    for _, f in columns) + "</tr>" for c in cards)
    cap = f"<caption style='text-align:left;font-weight:bold'>{html.escape(caption)}</caption>" if caption else ""
    body = rows or f"<tr><td colspan={len(columns)}><i>nobody</i></td></tr>"
    return (f"<table style='border-collapse:collapse;white-space:nowrap;font-size:12px'>{cap}<tr>{head}</tr>"
            f"{body}</table>")


def record(r: dict) -> str:
    """A record as ``wins-losses`` (``-ties`` when there are any)."""
    return f"{r.get('wins', 0)}-{r.get('losses', 0)}" + (f"-{r['ties']}" if r.get("ties") else "")


def search_controls(positions: Iterable[str]):
    """A player browser's search box (name or NFL team) and position filter (the view's positions, and ALL)."""
    import ipywidgets as w

    return (w.Text(placeholder="search a name or NFL team", description="search"),
            w.ToggleButtons(options=[ALL, *positions], value=ALL, description="position",
                            style={"button_width": "auto"}))


def matching(cards: Iterable[dict], search: str, position: str) -> list[dict]:
    """The cards a browser shows for its search text and position filter."""
    text = search.strip().lower()
    return [c for c in cards if (position == ALL or c["pos"] == position)
            and (not text or text in c["name"].lower() or text in str(c.get("team") or "").lower())]


def drop_options(roster: list[dict]) -> list[tuple[str, str]]:
    """A "drop" dropdown's options: no drop, then the roster weakest first (this week's projection)."""
    return [(NO_DROP, "")] + [(label(c), c["id"]) for c in
                              sorted(roster, key=lambda c: (value(c, "proj_week"), c["name"]))]


def total(cards: Iterable[dict], field: str) -> float:
    """The sum of one projection field over cards (a missing projection counts 0)."""
    return float(sum(value(c, field) for c in cards))


def readable(problems: list[str], by_id: dict[str, dict]) -> list[str]:
    """The registry's problems with each player id followed by the player's name (the rules speak in ids)."""
    out = []
    for p in problems:
        for pid, c in by_id.items():
            if pid in p:
                p = p.replace(pid, f"{pid} ({c['name']})")
        out.append(p)
    return out


class NamedProblems:
    """Form mixin: problems name players; the form sets ``self.cards`` (id -> card) in ``build``."""

    cards: dict[str, dict]

    def problems(self) -> list[str]:
        return readable(super().problems(), getattr(self, "cards", {}))  # type: ignore[misc]
