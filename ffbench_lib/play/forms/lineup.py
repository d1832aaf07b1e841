"""The lineup editor (``set_lineup``): one dropdown per starting slot, prefilled with the best lineup by this
week's projection (the engine's own repair policy), the bench and IR listed below; with an ordered bench
(``roster.auto_subs``) one dropdown per bench place, and the formation's ranges above. Slots, counts and FLEX
eligibility come from the view's rules; a player chosen twice or left out is reported by the registry's
``validate`` live, never by a check of our own."""
from __future__ import annotations

import html
from typing import ClassVar

from ffbench_lib.game.decisions.base import roster_from_rules
from ffbench_lib.game.decisions.set_lineup import playoff_line
from ffbench_lib.game.render import AUTO_SUBS_RULE, formation_text
from ffbench_lib.game.rules.lineup import best_lineup, start_value
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import Form, form

LINEUP_SLOT = "ffbench-lineup-slot"
BENCH_PLACE = "ffbench-bench-place"
EMPTY = "(empty)"  # its option value is "": a Dropdown whose value is None shows no selection


@form
class LineupForm(cards.NamedProblems, Form):
    """Starters slot by slot; options are the roster's players that may fill the slot, best projection first."""

    kinds: ClassVar[tuple[str, ...]] = ("set_lineup",)
    submit_label = "Set lineup"

    def build(self):
        import ipywidgets as w

        roster = roster_from_rules(self.view["rules"])
        players = self.view["players"]
        self.cards = {p["id"]: p for p in [*players, *self.view.get("ir", [])]}
        value = {p["id"]: start_value(p) for p in players}
        best = best_lineup({p["id"]: p["pos"] for p in players}, value, roster)
        ranked = sorted(players, key=lambda p: (-value[p["id"]], p["name"]))
        counts, allowed = roster.slot_counts(), roster.slot_positions()
        self.slots: list[tuple[str, object]] = []  # (slot, dropdown), slots in display order
        rows = []
        for slot, n in counts.items():
            options = [(EMPTY, "")] + [(cards.label(p), p["id"]) for p in ranked if p["pos"] in allowed[slot]]
            for i in range(n):
                dd = w.Dropdown(options=options, value=best[slot][i] or "", description=slot,
                                layout=w.Layout(width="52em")).add_class(LINEUP_SLOT)
                self.observe(dd, self.refresh)
                self.slots.append((slot, dd))
                rows.append(dd)
        self.bench = w.HTML()
        # an ordered bench (roster.auto_subs): one dropdown per place, first substitute first, prefilled with the
        # players left out of the best lineup, best projection first
        self.order: list[object] = []
        if roster.auto_subs:
            starting = {p for ids in best.values() for p in ids}
            left = [p["id"] for p in ranked if p["id"] not in starting]
            options = [(EMPTY, "")] + [(cards.label(p), p["id"]) for p in ranked]
            for i in range(roster.BENCH):
                dd = w.Dropdown(options=options, value=left[i] if i < len(left) else "", description=f"bench {i + 1}",
                                layout=w.Layout(width="52em")).add_class(BENCH_PLACE)
                self.observe(dd, self.refresh)
                self.order.append(dd)
        v = self.view
        head = (f"<b>Week {v['week']} of {v['rules']['weeks']}</b> · opponent: "
                f"{html.escape(str(v.get('opponent_team') or '-'))}")
        if "most_starters" in v["rules"]:
            head += f"<br>{html.escape(formation_text(v['rules']))}"
        if self.order:
            rows.append(w.HTML(f"<b>Bench order</b>: {html.escape(AUTO_SUBS_RULE)}"))
            rows.extend(self.order)
        playoff = playoff_line(v).strip()
        parts = [w.HTML(head + (f"<br><b>{html.escape(playoff)}</b>" if playoff else "")), *rows, self.bench]
        if v.get("ir"):
            parts.append(w.HTML(cards.table(v["ir"], "On injured reserve (cannot start)")))
        return w.VBox(parts)

    def value(self) -> dict:
        lineup: dict[str, list[str]] = {}
        for slot, dd in self.slots:
            lineup.setdefault(slot, [])
            if dd.value:
                lineup[slot].append(dd.value)
        if self.order:
            return {"lineup": lineup, "bench": [dd.value for dd in self.order if dd.value]}
        return {"lineup": lineup}

    def refresh(self, *_):
        chosen = {dd.value for _, dd in self.slots}
        self.bench.value = cards.table([c for c in self.view["players"] if c["id"] not in chosen], "Bench")
        return super().refresh()
