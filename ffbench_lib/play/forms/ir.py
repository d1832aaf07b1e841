"""IR moves (``ir_moves``): a checkbox per active player ruled Out this week (move him to IR) and, per IR player,
a checkbox to bring him back with the active player to drop for him (none while an active spot is open). Moving
nobody (the default) is legal; whether the moves together fit the IR slots, the active spots, the caps and a
lineup is the registry's verdict, shown live."""
from __future__ import annotations

from typing import ClassVar

from ffbench_lib.game.decisions.ir_moves import ir_eligible
from ffbench_lib.play.forms import cards
from ffbench_lib.play.forms.base import Form, form


@form
class IRForm(cards.NamedProblems, Form):
    kinds: ClassVar[tuple[str, ...]] = ("ir_moves",)
    submit_label = "Submit IR moves"

    def build(self):
        import ipywidgets as w

        v = self.view
        self.cards = {c["id"]: c for c in [*v["my_roster"], *v["ir"]]}
        wide = w.Layout(width="36em")
        self.to_ir = {c["id"]: w.Checkbox(value=False, description=cards.label(c), indent=False, layout=wide)
                      for c in v["my_roster"] if ir_eligible(c)}
        drops = cards.drop_options(v["my_roster"])
        self.back = {c["id"]: (w.Checkbox(value=False, description="bring back " + cards.label(c), indent=False,
                                          layout=wide),
                               w.Dropdown(options=drops, value="", description="drop", layout=w.Layout(width="32em")))
                     for c in v["ir"]}
        for box in [*self.to_ir.values(), *(x for pair in self.back.values() for x in pair)]:
            self.observe(box, self.refresh)
        head = (f"<b>Week {v['week']}</b> · IR slots: {len(v['ir'])} of {v['ir_slots']} used · active players: "
                f"{len(v['my_roster'])} of {v['active_spots']}")
        parts = [w.HTML(head), w.HTML("<b>Move to IR</b> (players ruled Out this week)")]
        parts += list(self.to_ir.values()) or [w.HTML("<i>nobody on your roster is ruled Out this week</i>")]
        parts.append(w.HTML("<b>Bring back from IR</b>"))
        parts += [w.VBox(list(pair)) for pair in self.back.values()] or [w.HTML("<i>nobody on IR</i>")]
        parts.append(w.HTML(cards.table(v["my_roster"], "Active roster") + cards.table(v["ir"], "On IR")))
        return w.VBox(parts)

    def value(self) -> dict:
        return {"to_ir": [pid for pid, box in self.to_ir.items() if box.value],
                "from_ir": [{"player": pid, "drop": drop.value or None}
                            for pid, (box, drop) in self.back.items() if box.value]}
