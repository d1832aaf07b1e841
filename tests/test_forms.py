"""The forms a person answers with (ffbench_lib.play.forms), on real views: a short season with a human seat whose
lineup, waiver, IR and trade questions are answered by clicking the forms (every kind is asked: waivers on, an IR
slot, three trade weeks against random bots, which propose and counter), and a short queue-mode draft for
``draft_queue``. Every registered kind gets a form; the dedicated forms' default or filled-in answers are legal by
the registry, and an illegal choice disables Submit and shows the registry's problem."""
from __future__ import annotations

import asyncio
import html
import json

import ipywidgets as w
import pytest
import yaml

from engine_helpers import REPO
from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.config.load import parse_config
from ffbench_lib.game.decisions import REGISTRY, market_from_view, roster_from_rules
from ffbench_lib.game.decisions.ir_moves import ir_eligible
from ffbench_lib.play.desk import question_text
from ffbench_lib.play.forms import FORMS, Form, GenericForm, form_for
from ffbench_lib.play.forms.base import PROBLEMS, SUBMIT
from ffbench_lib.play.forms.cards import readable, record
from ffbench_lib.play.forms.ir import IRForm
from ffbench_lib.play.forms.lineup import LINEUP_SLOT, LineupForm
from ffbench_lib.play.forms.trades import ProposeForm, ReplyForm
from ffbench_lib.play.forms.waivers import ClaimsForm
from ffbench_lib.play.session import start_play
from ffbench_lib.game.rules.trades import OfferSpace

ME = "Me"
MINE = {"set_lineup": LineupForm, "waiver_claims": ClaimsForm, "free_agent_adds": ClaimsForm,
        "ir_moves": IRForm, "propose_trade": ProposeForm, "respond_to_offer": ReplyForm,
        "reply_to_counter": ReplyForm, "final_decision": ReplyForm}


def league(queue: bool = False):
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d.update(weeks=1 if queue else 5, seed=3, trades={"weeks": [] if queue else [1, 2, 3], "max_players_per_side": 2})
    d["waivers"]["enabled"] = not queue
    d["roster"]["IR"] = 0 if queue else 1
    if queue:
        d["draft"]["mode"] = "queue"
    else:
        d["playoffs"] = {"enabled": True, "teams": 2, "round_weeks": [1]}  # week 5 is a playoff week
    d["teams"] = [{"name": ME, "agent": {"kind": "human", "name": "forms"}}] + [
        {"name": f"R{i}", "agent": {"kind": "bot", "strategy": "random"}} for i in range(1, 6)]
    return parse_config(d)


def first_offer(view: dict, partners: list[str], size: int | None = None):
    """The first legal offer the trade rules enumerate (what a person might pick)."""
    return next(iter(OfferSpace(market_from_view(view), view["team"], partners, size=size).legal()))


def tick(boxes: dict, ids) -> None:
    for pid in ids:
        boxes[pid].value = True


async def play(lg, prepared, run_dir) -> dict[str, list[dict]]:
    """Play ``lg``; draft questions answered by an ADP bot, every other question by submitting its form (default
    state; trades filled in: propose the first legal offer, counter with the offer as it stands)."""
    game = start_play(lg, run_dir, prepared)
    bot = ADPBot(ME, lg.seed)
    views: dict[str, list[dict]] = {}

    async def answer() -> None:
        while True:
            p = await game.seat.next()
            views.setdefault(p.kind, []).append(p.view)
            if p.kind not in MINE:
                game.seat.answer(p, await bot.decide(p.kind, p.view))
                continue
            f = form_for(p.kind, p.view, on_submit=lambda ans, p=p: game.seat.answer(p, ans))
            if p.kind == "propose_trade":
                o = first_offer(p.view, [t["team"] for t in p.view["other_teams"]])
                f.action.value, f.partner.value = "propose", o.b
                tick(f.give.boxes, o.a_gives)
                tick(f.get.boxes, o.b_gives)
            elif isinstance(f, ReplyForm) and f.counter:
                f.action.value = f.counter
            elif isinstance(f, IRForm):  # every player ruled Out to IR, when that fits
                tick(f.to_ir, list(f.to_ir))
                if f.problems():
                    for box in f.to_ir.values():
                        box.value = False
            f.submit.click()
            assert p not in game.seat.pending, f"{p.kind}: the form's answer was not submitted: {f.problems()}"

    answerer = asyncio.get_running_loop().create_task(answer())
    try:
        await asyncio.wait({game.task, answerer}, timeout=300, return_when=asyncio.FIRST_COMPLETED)
        if answerer.done() and not answerer.cancelled() and answerer.exception() is not None:
            raise answerer.exception()
        game.task.result()
    finally:
        answerer.cancel()
        game.task.cancel()
    return views


@pytest.fixture(scope="module")
def season(prepared_2024, tmp_path_factory):
    """(views by kind, the human's logged decisions) of one short season, plus a queue-mode draft's views."""
    run = tmp_path_factory.mktemp("forms") / "season"
    views = asyncio.run(play(league(), prepared_2024, run))
    queue = asyncio.run(play(league(queue=True), prepared_2024, run.parent / "queue"))
    views["draft_queue"] = queue["draft_queue"]
    logged = [json.loads(x) for x in (run / "decisions.jsonl").read_text().splitlines()]
    return views, [r for r in logged if r.get("team") == ME]


def texts(widget) -> str:
    """Everything a person reads in a widget tree (HTML, labels, option labels)."""
    out = [str(getattr(widget, "value", "")) if isinstance(widget, w.HTML) else "",
           str(getattr(widget, "description", "") or "")]
    out += [str(o[0]) if isinstance(o, tuple) else str(o) for o in getattr(widget, "options", ()) or ()]
    for child in getattr(widget, "children", ()):
        out.append(texts(child))
    return "\n".join(out)


def assert_illegal(f, fragment: str) -> None:
    """Submit is disabled, the problems line shows the registry's problem, and clicking Submit sends nothing."""
    sent = []
    f.on_submit = sent.append
    assert f.problems() == f.refresh()
    assert f.submit.disabled and html.escape(fragment) in f.problems_line.value, f.problems()
    # the registry's own problems, players named
    assert f.problems() == readable(REGISTRY[f.kind].validate(f.answer(), f.view), f.cards)
    f.submit.click()
    assert sent == []


def assert_legal(f) -> dict:
    sent = []
    f.on_submit = sent.append
    assert f.refresh() == [] and not f.submit.disabled and f.problems_line.value == ""
    f.submit.click()
    assert sent == [f.answer()] and REGISTRY[f.kind].validate(sent[0], f.view) == []
    return sent[0]


def test_every_registered_kind_gets_a_form(season):
    views, _ = season
    assert set(views) == set(REGISTRY), f"kinds never asked: {set(REGISTRY) - set(views)}"
    for kind in REGISTRY:
        f = form_for(kind, views[kind][0])
        assert isinstance(f, FORMS.get(kind, GenericForm)) and isinstance(f.widget, w.Widget)
        assert SUBMIT in f.submit._dom_classes and PROBLEMS in f.problems_line._dom_classes
    for kind, cls in MINE.items():
        assert FORMS[kind] is cls


def test_the_season_was_answered_through_the_forms(season):
    """The engine judged every answer the forms submitted legal (nothing repaired), trades included."""
    _, logged = season
    mine = [r for r in logged if r["decision"] in MINE]
    assert {r["decision"] for r in mine} == set(MINE)
    assert {r["agent"] for r in mine} == {"human:forms"}
    assert [r for r in mine if r["decided_by"] != "agent"] == []
    assert any(r["decision"] == "respond_to_offer" and r["applied"] not in ("reject", "accept") for r in mine)


def test_lineup_form_prefills_the_best_lineup_and_flags_a_player_twice(season):
    views, _ = season
    assert any("playoff" in v for v in views["set_lineup"]), "no playoff week lineup view"
    for view in views["set_lineup"]:
        f = form_for("set_lineup", view)
        roster = roster_from_rules(view["rules"])
        assert [dd.description for _, dd in f.slots] == [s for s, n in roster.slot_counts().items()
                                                         for _ in range(n)]
        assert all(LINEUP_SLOT in dd._dom_classes and dd.index is not None for _, dd in f.slots)  # shown
        pos = {p["id"]: p["pos"] for p in view["players"]}
        for slot, dd in f.slots:  # options: the players who may fill the slot, nobody else
            assert {pos[v] for _, v in dd.options if v} <= roster.slot_positions()[slot]
        ans = assert_legal(f)
        # the prefill is the lineup the engine's repair would start (the best by this week's projection)
        best = REGISTRY["set_lineup"].resolve({"lineup": {}}, view).applied
        assert {s: sorted(ids) for s, ids in ans["lineup"].items()} == {s: sorted(ids) for s, ids in best.items()}
        if "playoff" in view:
            assert "PLAYOFFS" in texts(f.widget)
        assert "Bench" in texts(f.widget)
        # a person picks a starter again in a second slot that allows him
        a, b = next((a, b) for a in f.slots for b in f.slots
                    if a is not b and a[1].value and a[1].value in {v for _, v in b[1].options})
        b[1].value = a[1].value
        assert_illegal(f, f"{a[1].value} ({f.cards[a[1].value]['name']}) is already in the lineup")


@pytest.mark.parametrize("kind", ["waiver_claims", "free_agent_adds"])
def test_claims_form_browses_adds_bids_and_removes(season, kind):
    view = season[0][kind][0]
    f = form_for(kind, view)
    assert assert_legal(f) == {"claims": []}  # claiming nobody is legal
    pos = list(view["free_agents"])[-1]
    target = view["free_agents"][pos][-1]
    f.position.value = pos
    f.search.value = target["name"][:5]
    assert target["id"] in {v for _, v in f.browser.options}
    assert all(f.cards[v]["pos"] == pos for _, v in f.browser.options)
    f.browser.value = target["id"]
    f.add_button.click()
    if view["mode"] == "faab":
        assert f"Budget left: ${view['budget_left']}" in texts(f.widget)
        f.rows[0]["bid"].value = 1
    ans = assert_legal(f)
    assert ans["claims"][0]["add"] == target["id"] and f.rows[0]["drop"].index is not None  # the drop is shown
    if view["mode"] == "faab":
        f.rows[0]["bid"].value = view["budget_left"] + 1
        assert_illegal(f, f"outside 0..{view['budget_left']}")
        f.rows[0]["bid"].value = 0
    f.add_button.click()  # the same player again
    assert_illegal(f, f"{target['id']} ({target['name']}) is claimed twice")
    errors: list[Exception] = []
    f.on_error = errors.append
    again = f.rows[1]["remove"]
    again.click()
    again.click()  # a double click: the second finds the row gone and does nothing
    assert errors == [] and [c["add"] for c in assert_legal(f)["claims"]] == [target["id"]]


def test_ir_form_moves_out_players_and_judges_them_together(season):
    views = season[0]["ir_moves"]
    for view in views:
        f = form_for("ir_moves", view)
        assert assert_legal(f) == {"to_ir": [], "from_ir": []}
        assert set(f.to_ir) == {c["id"] for c in view["my_roster"] if ir_eligible(c)}  # the rule's own test
        assert set(f.back) == {c["id"] for c in view["ir"]}
        assert all(drop.index is not None for _, drop in f.back.values())  # "no drop" shown selected
    # an Out player while IR is full: alone he does not fit; dropping him for the IR player is not a move
    view = next(v for v in views if f_out(v) and len(v["ir"]) == v["ir_slots"])
    f = form_for("ir_moves", view)
    out = f_out(view)[0]
    f.to_ir[out].value = True
    assert_illegal(f, "players on IR; the league has")
    box, drop = next(iter(f.back.values()))
    box.value, drop.value = True, out
    assert_illegal(f, f"{out} ({f.cards[out]['name']}) is dropped twice or also moved to IR")


def f_out(view: dict) -> list[str]:
    return [c["id"] for c in view["my_roster"] if ir_eligible(c)]


def test_propose_form_passes_proposes_and_locks(season):
    views = season[0]["propose_trade"]
    assert any(v["locked_players"] for v in views), "no propose view with players traded earlier in the week"
    for view in views:
        f = form_for("propose_trade", view)
        assert assert_legal(f) == {"action": "pass"}
        for team in view["other_teams"]:
            f.partner.value = team["team"]
            for picker, roster in ((f.give, view["my_roster"]), (f.get, team["roster"])):
                locked = {c["id"] for c in roster if c["id"] in view["locked_players"]}
                assert {pid for pid, box in picker.boxes.items() if box.disabled} == locked
        o = first_offer(view, [t["team"] for t in view["other_teams"]])
        f.action.value, f.partner.value = "propose", o.b
        tick(f.give.boxes, o.a_gives)
        tick(f.get.boxes, o.b_gives)
        ans = assert_legal(f)
        assert (ans["action"], ans["to_team"], set(ans["give"]), set(ans["get"])) == \
            ("propose", o.b, set(o.a_gives), set(o.b_gives))
        give_name = next(c["name"] for c in view["my_roster"] if c["id"] == o.a_gives[0])
        preview = f.preview_line.value
        assert f"You give:</b> {html.escape(give_name)}" in preview and "Net projection" in preview
        extra = next(b for pid, b in f.give.boxes.items() if not b.value and not b.disabled)
        extra.value = True
        assert_illegal(f, "unequal player counts")


@pytest.mark.parametrize("kind", ["respond_to_offer", "reply_to_counter", "final_decision"])
def test_reply_forms_show_the_offer_from_your_side(season, kind):
    for view in season[0][kind]:
        f = form_for(kind, view)
        dec = REGISTRY[kind]
        assert [a for _, a in f.action.options] == list(dec.actions)
        assert assert_legal(f) == {"action": dec.default}
        shown = texts(f.widget)
        # the record reads the same on the form and in the desk's header
        assert f"your record {record(view['my_record'])}" in shown
        assert f"record {record(view['my_record'])}" in question_text(ME, kind, view)
        offer = view["offer"]
        assert f"You give:</b> {html.escape(offer['you_give'][0]['name'])}" in shown and "Net projection" in shown
        assert all(html.escape(c["name"]) in shown for c in offer["you_give"] + offer["you_get"])
        for s in view.get("negotiation") or []:  # the negotiation so far, each step from your side
            assert f"step {s['step']} ({'you' if s['by'] == 'you' else s['by']}:" in shown
        for action in dec.actions:
            if action != dec.counter:
                f.action.value = action
                assert assert_legal(f) == {"action": action}
        if dec.counter is None:
            continue
        f.action.value = dec.counter  # the counter starts from the offer on the table
        ans = assert_legal(f)
        assert ans["action"] == dec.counter and set(ans["give"]) == {c["id"] for c in offer["you_give"]} \
            and set(ans["get"]) == {c["id"] for c in offer["you_get"]}
        extra = next(b for b in f.give.boxes.values() if not b.value and not b.disabled)
        extra.value = True
        assert_illegal(f, "unequal player counts")


def test_an_error_in_a_callback_of_a_widget_made_later_goes_to_on_error(season):
    """The partner's picker is made when a partner is chosen, after the form stood; an exception in its callbacks
    (here the preview, on cards gone bad) goes to ``on_error`` (the desk: its status line), by default the form's
    problems line, never to the kernel's log."""
    view = next(v for v in season[0]["propose_trade"] if len(v["other_teams"]) > 1)
    for where in ("on_error", "problems line"):
        f = form_for("propose_trade", view)
        errors: list[Exception] = []
        if where == "on_error":
            f.on_error = errors.append
        f.action.value = "propose"
        f.partner.value = view["other_teams"][-1]["team"]  # its picker is made now
        f.cards = {}  # a bug: the preview can no longer find the players
        next(b for b in f.get.boxes.values() if not b.disabled).value = True
        if where == "on_error":
            assert [type(e) for e in errors] == [KeyError]
        else:
            assert "error: KeyError" in f.problems_line.value


def test_a_callback_that_fails_while_the_form_is_built_raises():
    """Until the form stands a callback's exception is raised, not shown and then overwritten by the first
    validation (the desk then offers the answer as JSON)."""
    class Half(Form):
        def build(self):
            text = w.Text()
            self.observe(text, self.fail)
            text.value = "typed"
            return text

        def fail(self, _):
            raise RuntimeError("half built")

        def value(self) -> dict:
            return {"claims": []}

    with pytest.raises(RuntimeError, match="half built"):
        Half("waiver_claims", {})


def test_lineup_form_of_a_formation_sets_a_bench_order(prepared_fpl, tmp_path):
    """A Premier League lineup (FPL rules): the slots are the formation's least plus FLEX, the bench has one
    dropdown per place; the default is legal, a reordered bench too, and a starter on the bench is not (the
    registry names him)."""
    from engine_helpers import run_engine
    from ffbench_lib.config.load import load_config
    from ffbench_lib.play.forms.lineup import BENCH_PLACE
    from ffbench_lib.runs.rundir import RunDir

    lg = load_config(REPO / "params" / "fpl_draft.yaml")
    run_engine(lg.model_copy(update={"weeks": 1, "trades": lg.trades.model_copy(update={"weeks": []})}),
               prepared_fpl, tmp_path / "run")
    view = next(d["view"] for d in RunDir(tmp_path / "run").decisions() if d["decision"] == "set_lineup")
    f = form_for("set_lineup", view)
    assert [dd.description for _, dd in f.slots] == ["GK", "DEF", "DEF", "DEF", "MID", "MID", "FWD"] + ["FLEX"] * 4
    assert [dd.description for dd in f.order] == ["bench 1", "bench 2", "bench 3", "bench 4"]
    assert all(BENCH_PLACE in dd._dom_classes for dd in f.order)
    assert "GK 1, DEF 3-5, MID 2-5, FWD 1-3" in texts(f.widget) and "first bench player" in texts(f.widget)
    ans = assert_legal(f)
    assert len(ans["bench"]) == 4 and not set(ans["bench"]) & {p for ids in ans["lineup"].values() for p in ids}
    f.order[0].value, f.order[3].value = f.order[3].value, f.order[0].value
    assert assert_legal(f)["bench"][0] == ans["bench"][3]
    starter = f.slots[1][1].value
    f.order[1].value = starter
    assert_illegal(f, f"bench: {starter} ({f.cards[starter]['name']}) is not a bench player")


def test_every_form_reads_a_protected_view(season, prepared_2024):
    """A person in a league with protected numbers (information.numbers: protected) is shown ranges, flags such as
    ``bye or -`` and ``?`` for the withheld team: every form builds, sorts and adds by a range's midpoint, and the
    dedicated forms' default answers stay legal."""
    from ffbench_lib.config.league import Information
    from ffbench_lib.game.protect import Protector
    from ffbench_lib.game.views import Firewall

    views, _ = season
    lg = league().model_copy(update={"information": Information(masking="players_and_teams", numbers="protected")})
    pr = Protector(Firewall(prepared_2024, lg), lg.seed)
    ranges = 0
    for kind, vs in views.items():
        for view in vs[:3]:
            shown = pr.view(view)
            f = form_for(kind, shown)
            text = texts(f.widget)
            ranges += "-" in text and any(c.isdigit() for c in text)
            if kind in MINE and not f.problems() and kind not in ("propose_trade",):
                assert REGISTRY[kind].validate(f.answer(), shown) == [], kind
    assert ranges > 0
