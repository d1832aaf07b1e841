"""Waiver claims (``waiver_claims``: FAAB bids or rolling priority) and free-agent adds (``free_agent_adds``):
browse the free agents the view shows (search, position filter), add a claim row per player, each with the
player you drop and (FAAB) your bid; rows can be removed or moved up (claims are ranked). Legality (the drop,
caps, the bid within the budget left, a player claimed twice, the number of claims) is the registry's."""
from __future__ import annotations

import html
from typing import ClassVar

from ffbench_lib.game.decisions.base import roster_from_rules
from ffbench_lib.game.decisions.waiver_claims import MODE_RULES, legal_swaps
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import Form, form


@form
class ClaimsForm(cards.NamedProblems, Form):
    """A ranked list of claims built from a free-agent browser; no claims (the default) is a legal answer."""

    kinds: ClassVar[tuple[str, ...]] = ("waiver_claims", "free_agent_adds")
    submit_label = "Submit claims"

    def build(self):
        import ipywidgets as w

        v = self.view
        self.faab = v["mode"] == "faab"
        self.mine = v["my_roster"]
        self.free = [c for cs in v["free_agents"].values() for c in cs]
        self.cards = {c["id"]: c for c in [*self.mine, *self.free]}
        self.search, self.position = cards.search_controls(v["free_agents"])
        self.browser = w.Select(options=[], rows=10, layout=w.Layout(width="48em"))
        for control in (self.search, self.position):
            self.observe(control, self.filter)
        self.add_button = w.Button(description="Add claim", icon="plus")
        self.on_click(self.add_button, lambda _: self.add_claim(self.browser.value))
        self.rows_box = w.VBox()
        self.rows: list[dict] = []  # {"add": id, "drop", "bid" (FAAB), "up", "remove", "box": widgets}
        self.filter()
        rules = MODE_RULES[v["mode"]].format(**v, teams=v["rules"]["teams"])
        budget = (f"<b>Budget left: ${v['budget_left']} of ${v['budget']}</b> · " if self.faab else "")
        head = w.HTML(f"<b>Week {v['week']}</b> · {budget}at most {v['max_claims']} claim(s), ranked first to last"
                      f"<br><span style='font-size:12px'>{html.escape(rules)}</span>")
        return w.VBox([head, self.search, self.position, self.browser, self.add_button,
                       w.HTML("<b>Your claims</b>"), self.rows_box, w.HTML(cards.table(self.mine, "Your roster"))])

    def filter(self, *_):
        shown = cards.matching(self.free, self.search.value, self.position.value)
        shown.sort(key=lambda c: (-cards.value(c, "proj_week"), c["name"]))
        keep = self.browser.value
        self.browser.options = [(cards.label(c), c["id"]) for c in shown]
        self.browser.value = keep if keep in {c["id"] for c in shown} else (shown[0]["id"] if shown else None)

    def default_drop(self, add: str) -> str | None:
        """The weakest player (this week's projection) whose drop the rules allow for ``add``; None if none."""
        positions = {c["id"]: c["pos"] for c in [*self.mine, *self.free]}
        ok = {d for _, d in legal_swaps([c["id"] for c in self.mine], positions, [add],
                                        roster_from_rules(self.view["rules"]))}
        if None in ok:
            return None
        weakest = sorted((c for c in self.mine if c["id"] in ok), key=lambda c: (cards.value(c, "proj_week"), c["name"]))
        return weakest[0]["id"] if weakest else self.mine[0]["id"] if self.mine else None

    def add_claim(self, add: str | None, bid: int = 0):
        import ipywidgets as w

        if add is None:
            return
        drop = w.Dropdown(options=cards.drop_options(self.mine), value=self.default_drop(add) or "", description="drop",
                          layout=w.Layout(width="30em"))
        self.observe(drop, self.refresh)
        amount = w.IntText(value=bid, description="bid $", style={"description_width": "initial"},
                           layout=w.Layout(width="9em")) if self.faab else None
        if amount is not None:
            self.observe(amount, self.refresh)
        up, remove = w.Button(icon="arrow-up", tooltip="rank higher", layout=w.Layout(width="3em")), \
            w.Button(icon="trash", tooltip="remove this claim", layout=w.Layout(width="3em"))
        row = {"add": add, "drop": drop, "bid": amount, "up": up, "remove": remove}
        self.on_click(up, lambda _: self.move(row, -1))
        self.on_click(remove, lambda _: self.move(row, None))
        row["box"] = w.VBox([w.HTML(f"<b>add</b> {html.escape(cards.label(self.cards[add]))}"),
                             w.HBox([drop, *([amount] if amount else []), up, remove])],
                            layout=w.Layout(border_bottom="1px solid #ddd", margin="0 0 4px 0"))
        self.rows.append(row)
        self.redraw()

    def move(self, row: dict, by: int | None):
        """Remove ``row`` (``by`` None) or rank it one higher; a second click on a removed row does nothing."""
        i = next((i for i, r in enumerate(self.rows) if r is row), None)
        if i is None:
            return
        if by is None:
            self.rows.pop(i)
        elif i > 0:
            self.rows[i - 1], self.rows[i] = self.rows[i], self.rows[i - 1]
        self.redraw()

    def redraw(self):
        self.rows_box.children = [r["box"] for r in self.rows]
        self.refresh()

    def value(self) -> dict:
        claims = []
        for r in self.rows:
            claim = {"add": r["add"], "drop": r["drop"].value or None}
            if r["bid"] is not None:
                claim["bid"] = r["bid"].value
            claims.append(claim)
        return {"claims": claims}
