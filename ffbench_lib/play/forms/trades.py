"""Trade forms: ``propose_trade`` (pass, or a partner and the players you give and get) and the replies
``respond_to_offer``, ``reply_to_counter``, ``final_decision`` (accept / reject or withdraw / counter). Every offer
is shown from your side by :func:`offer_html` (one place): you give, you get, the net projection. The actions, the
counter's name and the default come from the decision classes; legality (sizes, locked players, caps, a lineup
afterwards) is the registry's verdict, shown live."""
from __future__ import annotations

import html
from typing import ClassVar

from ffbench_lib.game.decisions.base import REGISTRY
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import Form, form

PASS, PROPOSE = "pass", "propose"


def offer_html(you_give: list[dict], you_get: list[dict]) -> str:
    """An offer from your side: the players you give and get (this week's and season projections) and the net."""
    def side(cs: list[dict]) -> str:
        return ", ".join(f"{html.escape(c['name'])} ({html.escape(c['pos'])}, {cards.num(c.get('proj_week'))} wk, "
                         f"{cards.num(c.get('proj'))} season)" for c in cs) or "nobody"
    week = cards.total(you_get, "proj_week") - cards.total(you_give, "proj_week")
    season = cards.total(you_get, "proj") - cards.total(you_give, "proj")
    return (f"<b>You give:</b> {side(you_give)}<br><b>You get:</b> {side(you_get)}<br>"
            f"<b>Net projection:</b> {week:+.1f} this week, {season:+.1f} season")


def _by_id(view: dict) -> dict[str, dict]:
    """Every player card a trade view shows, by id."""
    out = {c["id"]: c for t in view["other_teams"] for c in t["roster"]}
    out.update({c["id"]: c for c in view["my_roster"]})
    offer = view.get("offer") or {}
    out.update({c["id"]: c for c in [*offer.get("you_give", []), *offer.get("you_get", [])]})
    return out


class Picker:
    """Checkboxes over one roster (best projection first); players traded this week are shown but disabled.
    Each tick refreshes ``form``."""

    def __init__(self, form: Form, roster: list[dict], locked: set[str], chosen: set[str], title: str):
        import ipywidgets as w

        self.boxes: dict[str, object] = {}
        for c in sorted(roster, key=lambda c: (-cards.value(c, "proj_week"), c["name"])):
            lock = c["id"] in locked
            text = ("LOCKED (traded this week) · " if lock else "") + cards.label(c)
            box = w.Checkbox(value=c["id"] in chosen and not lock, disabled=lock, indent=False, description=text,
                             tooltip=text, layout=w.Layout(width="100%"))
            form.observe(box, form.refresh)
            self.boxes[c["id"]] = box
        self.widget = w.VBox([w.HTML(f"<b>{html.escape(title)}</b>"), *self.boxes.values()],
                             layout=w.Layout(flex="1 1 0", min_width="0"))  # two pickers share the width

    def ids(self) -> list[str]:
        return [pid for pid, box in self.boxes.items() if box.value]


class _TradeForm(cards.NamedProblems, Form):
    """What the trade forms share: the cards by id, the max-size note, and the panel of the offer you make (shown
    while ``action`` is ``panel_action``) with its live preview."""

    panel_action: str | None = None

    def refresh(self, *_):
        if hasattr(self, "preview_line") and hasattr(self, "get"):  # once built (a partner's picker is made late)
            self.panel.layout.display = "" if self.action.value == self.panel_action else "none"
            self.preview_line.value = self.preview(self.give.ids(), self.get.ids())
        return super().refresh()

    def preview(self, give: list[str], get: list[str]) -> str:
        return offer_html([self.cards[p] for p in give], [self.cards[p] for p in get])

    def size_note(self) -> str:
        return f"each side moves the same number of players, 1 to {self.view['max_players_per_side']}"


@form
class ProposeForm(_TradeForm):
    """Pass (the default) or propose: a partner, the players you give and the players you get."""

    kinds: ClassVar[tuple[str, ...]] = ("propose_trade",)
    submit_label = "Submit"

    def build(self):
        import ipywidgets as w

        v = self.view
        self.cards = _by_id(v)
        self.locked = set(v["locked_players"])
        self.teams = {t["team"]: t for t in v["other_teams"]}
        self.panel_action = PROPOSE
        self.action = w.ToggleButtons(options=[PASS, PROPOSE], value=PASS, description="action")
        self.partner = w.Dropdown(options=[(f"{t} ({cards.record(x['record'])})", t) for t, x in self.teams.items()],
                                  description="partner")
        self.give = Picker(self, v["my_roster"], self.locked, set(), "You give (your roster)")
        self.get_box, self.pickers = w.VBox(layout=w.Layout(flex="1 1 0", min_width="0")), {}
        self.preview_line = w.HTML()
        self.panel = w.VBox([w.HTML(self.size_note()), self.partner, w.HBox([self.give.widget, self.get_box]),
                             self.preview_line])
        self.observe(self.partner, self.new_partner)
        self.observe(self.action, self.refresh)
        self.new_partner(refresh=False)
        strength = ", ".join(f"{pos} {x:.1f} (league {v['league_avg_strength'].get(pos, 0):.1f})"
                             for pos, x in v["my_strength"].items())
        head = (f"<b>Trade window, week {v['week']}</b> · your record {cards.record(v['my_record'])}<br>"
                f"<span style='font-size:12px'>your starters' weekly projection by position: {strength}</span>")
        return w.VBox([w.HTML(head), self.action, self.panel])

    def new_partner(self, *_, refresh: bool = True):
        """Show the partner's roster (each partner's picker built once, so its ticks survive a look elsewhere)."""
        team = self.partner.value
        if team not in self.pickers:
            self.pickers[team] = Picker(self, self.teams[team]["roster"], self.locked, set(), f"You get ({team})")
        self.get = self.pickers[team]
        self.get_box.children = [self.get.widget]
        if refresh:
            self.refresh()

    def value(self) -> dict:
        if self.action.value == PASS:
            return {"action": PASS}
        return {"action": PROPOSE, "to_team": self.partner.value, "give": self.give.ids(), "get": self.get.ids()}


@form
class ReplyForm(_TradeForm):
    """The offer on the table from your side, the negotiation so far, and your answer (the kind's default,
    reject or withdraw, until you choose); a counter starts from the offer and keeps its size."""

    kinds: ClassVar[tuple[str, ...]] = ("respond_to_offer", "reply_to_counter", "final_decision")

    def build(self):
        import ipywidgets as w

        v, dec = self.view, REGISTRY[self.kind]
        self.cards = _by_id(v)
        offer, them = v["offer"], v["offer"]["from_team"]
        self.counter = self.panel_action = dec.counter
        self.action = w.ToggleButtons(options=[(a.replace("_", " "), a) for a in dec.actions], value=dec.default,
                                      description="answer")
        parts = [w.HTML(f"<b>Trade with {html.escape(them)}, week {v['week']}</b> · your record "
                        f"{cards.record(v['my_record'])}")]
        for step in v.get("negotiation") or []:
            who = "you" if step["by"] == "you" else step["by"]
            note = step.get("their_rationale_untrusted")
            parts.append(w.HTML(f"<div style='font-size:12px;color:#555'>step {step['step']} ({html.escape(who)}: "
                                f"{html.escape(step['action'].replace('_', ' '))}): "
                                + self.preview([p for p in step["you_give"] if p in self.cards],
                                               [p for p in step["you_get"] if p in self.cards]).replace("<br>", "; ")
                                + (f"<br><i>their note (their words, unchecked):</i> {html.escape(str(note))}"
                                   if note else "") + "</div>"))
        parts += [w.HTML(f"<b>On the table now</b> ({html.escape(them)}'s offer):<br>"
                         + offer_html(offer["you_give"], offer["you_get"])), self.action]
        self.panel = None
        if self.counter is not None:
            locked = set(v["locked_players"])
            give, get = ({c["id"] for c in offer[k]} for k in ("you_give", "you_get"))
            self.give = Picker(self, v["my_roster"], locked, give, "You give (your roster)")
            self.get = Picker(self, v["other_teams"][0]["roster"], locked, get, f"You get ({them})")
            self.preview_line = w.HTML()
            self.panel = w.VBox([w.HTML(f"<b>Your {html.escape(self.counter.replace('_', ' '))}</b>: "
                                        f"{len(offer['you_give'])} player(s) each side, as the offer"),
                                 w.HBox([self.give.widget, self.get.widget]), self.preview_line])
            parts.append(self.panel)
        self.observe(self.action, self.refresh)
        return w.VBox(parts)

    def value(self) -> dict:
        if self.counter is not None and self.action.value == self.counter:
            return {"action": self.counter, "give": self.give.ids(), "get": self.get.ids()}
        return {"action": self.action.value}
