"""How the in-season forms (lineup, waivers, trades, IR) show a player card: one label for a dropdown or checkbox,
and a small HTML table; also the sums a trade offer is judged by at a glance. One place, so every form reads
the same."""
from __future__ import annotations

import html
from typing import Iterable


def num(x) -> str:
    return "-" if x is None else f"{x:.1f}"


def label(card: dict) -> str:
    """``name (pos, NFL team) · proj this week · vs opponent · bye/out/injury`` for one player card."""
    flags = [f.upper() for f in card.get("zero_flags") or []]
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


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.1f}"
    return "-" if v is None else str(v)


def table(cards: Iterable[dict], caption: str = "") -> str:
    """Players as a compact HTML table (rosters shown beside the controls)."""
    cards = list(cards)
    head = "".join(f"<th style='text-align:left;padding:0 6px'>{h}</th>" for h, _ in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(_cell(c.get(f)))}</td>"
                                    for _, f in COLUMNS) + "</tr>" for c in cards)
    cap = f"<caption style='text-align:left;font-weight:bold'>{html.escape(caption)}</caption>" if caption else ""
    body = rows or f"<tr><td colspan={len(COLUMNS)}><i>nobody</i></td></tr>"
    return (f"<table style='border-collapse:collapse;white-space:nowrap;font-size:12px'>{cap}<tr>{head}</tr>"
            f"{body}</table>")


def total(cards: Iterable[dict], field: str) -> float:
    """The sum of one projection field over cards (a missing projection counts 0)."""
    return float(sum(c.get(field) or 0.0 for c in cards))


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
