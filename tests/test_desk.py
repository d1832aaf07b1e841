"""The play desk: a season of params/play.yaml played through the desk's widgets (select a player on the board,
click Draft; submit each shown form), killed and resumed on a new desk, a failed run shown in the status, and
notebooks/10_play.ipynb executed by papermill on autopilot."""
from __future__ import annotations

import asyncio
import json
import threading

import ipywidgets as w
import pytest
import yaml

from engine_helpers import REPO, digests
from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.config.load import load_config, parse_config
from ffbench_lib.play.desk import COMPLETE, PlayDesk, question_text
from ffbench_lib.play.forms import GenericForm
from ffbench_lib.play.forms.draft import BOARD, DRAFT_BUTTON, DraftBoard
from ffbench_lib.play.forms.waivers import ClaimsForm
from ffbench_lib.play.session import start_play
from ffbench_lib.present.widgets import StandingsReplay

ME = "You"


def play_league(weeks: int = 4, **changes):
    d = yaml.safe_load((REPO / "params" / "play.yaml").read_text())
    d.update({"weeks": weeks, "trades": {"weeks": [2]}, **changes})
    return parse_config(d)


async def click_through(desk: PlayDesk, clicks: list, stop_after: int | None = None, until: str | None = None) -> None:
    """Answer every form the desk shows as a person would, by setting widget values and clicking: the draft board
    gets the player the ADP bot would shortlist first; a GenericForm gets the ADP bot's answer typed in; any other
    form is submitted as prefilled. ``stop_after``: cancel the run after that many clicks (a kernel killed);
    ``until``: return when the desk shows a question of that kind (left unanswered)."""
    bot = ADPBot(ME, desk.game.engine.league.seed)
    while True:
        asked = asyncio.ensure_future(desk.asked.wait())
        await asyncio.wait({asked, desk.done}, return_when=asyncio.FIRST_COMPLETED)
        if not asked.done():
            asked.cancel()
            return
        form, p = desk.form, desk.pending
        if p.kind == until:
            return
        if isinstance(form, DraftBoard):
            pid = (await bot.decide(p.kind, p.view))["shortlist"][0]
            assert BOARD in form.board._dom_classes and DRAFT_BUTTON in form.submit._dom_classes
            form.board.value = pid
        elif isinstance(form, GenericForm):
            form.text.value = json.dumps(await bot.decide(p.kind, p.view))
        assert not form.submit.disabled, f"{p.kind}: {form.problems()}"
        form.submit.click()
        assert desk.form is not form, f"{p.kind}: the click did not answer ({desk.status_text})"
        clicks.append(p.kind)
        if stop_after is not None and len(clicks) == stop_after:
            desk.game.task.cancel()
            return


async def play(league, prepared, run_dir, clicks: list, stop_after: int | None = None) -> PlayDesk:
    game = start_play(league, run_dir, prepared)
    desk = PlayDesk(game)
    clicker = asyncio.ensure_future(click_through(desk, clicks, stop_after))
    try:
        await asyncio.wait({desk.done, clicker}, timeout=600)
        if clicker.done() and clicker.exception() is not None:
            raise clicker.exception()
        await asyncio.wait({desk.done}, timeout=60)
        return desk
    finally:
        clicker.cancel()
        game.task.cancel()


def human_decisions(run_dir) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "decisions.jsonl").read_text().splitlines()]
    return [r for r in rows if r.get("team") == ME]


def test_desk_plays_a_season_by_clicking_and_resumes_on_a_new_desk(prepared_2024, tmp_path):
    league = play_league()
    clicks: list[str] = []
    desk = asyncio.run(play(league, prepared_2024, tmp_path / "whole", clicks))
    whole = tmp_path / "whole"
    assert desk.status_text == COMPLETE and "final standings" in desk.header.value
    assert json.loads((whole / "run.json").read_text())["status"] == "complete"
    mine = human_decisions(whole)
    assert {r["agent"] for r in mine} == {"human:you"} and {r["decided_by"] for r in mine} == {"agent"}
    picks = [r for r in mine if r["decision"] == "draft_pick"]
    assert len(picks) == league.roster.size
    # one click per pick: the board's shortlist of one, then the desk takes him
    assert clicks.count("draft_shortlist") == len(picks) and "draft_pick" not in clicks
    assert {r["raw_answer"].get("rationale") for r in picks} == {None}  # nobody wrote a "why": none is invented
    assert clicks.count("set_lineup") == league.weeks
    assert "<table" in desk.standings_html and desk.replay is not None
    assert desk.replay.team.value == ME  # the replay shows your lineup first (not the first team by name)
    with pytest.raises(ValueError, match="team: 'Nobody' is not a team of this run"):
        StandingsReplay(whole, team="Nobody")
    bundle = desk._repr_mimebundle_()
    assert COMPLETE in bundle["text/plain"] and "<table" in bundle["text/html"]

    # killed mid-season; a new start_play and a new desk over the same folder replay the answers and finish
    first: list[str] = []
    killed = asyncio.run(play(league, prepared_2024, tmp_path / "resumed", first, stop_after=len(clicks) // 2 + 3))
    assert killed.game.task.cancelled() and "run the notebook's cells again to resume" in killed.status_text
    again: list[str] = []
    desk2 = asyncio.run(play(league, prepared_2024, tmp_path / "resumed", again))
    assert desk2.status_text == COMPLETE and len(first) + len(again) == len(clicks)
    a, b = digests(whole), digests(tmp_path / "resumed")
    assert {k: v for k, v in a.items() if k != "run.json"} == {k: v for k, v in b.items() if k != "run.json"}


def test_desk_plays_a_full_season(prepared_2024, tmp_path):
    league = load_config(REPO / "params" / "play.yaml")  # as the notebook plays it: 17 weeks, 3 trade windows
    clicks: list[str] = []
    desk = asyncio.run(play(league, prepared_2024, tmp_path / "run", clicks))
    assert desk.status_text == COMPLETE
    assert clicks.count("set_lineup") == 17
    mine = human_decisions(tmp_path / "run")
    assert {r["agent"] for r in mine} == {"human:you"} and {r["decided_by"] for r in mine} == {"agent"}


def test_failed_run_shows_its_error_in_the_status(prepared_2024, tmp_path):
    async def main():
        game = start_play(play_league(), tmp_path / "run", prepared_2024, crash_after="week:1", autopilot="adp")
        desk = PlayDesk(game)
        await asyncio.wait({desk.done}, timeout=300)
        return desk

    desk = asyncio.run(main())
    assert desk.status_text.startswith("the run failed: ") and "week:1" in desk.status_text
    assert desk.game.task.exception() is not None
    assert "run failed" in desk._repr_mimebundle_()["text/plain"]


def test_autopilot_and_bad_autopilot(prepared_2024, tmp_path):
    async def main():
        with pytest.raises(ValueError, match="autopilot: unknown bot strategy 'adpp'"):
            start_play(play_league(weeks=2), tmp_path / "run", prepared_2024, autopilot="adpp")
        game = start_play(play_league(weeks=2), tmp_path / "run", prepared_2024, autopilot="adp")
        desk = PlayDesk(game)
        await desk.wait()
        return desk

    desk = asyncio.run(main())
    assert desk.status_text == COMPLETE
    mine = human_decisions(tmp_path / "run")
    assert {r["raw_answer"]["rationale"] for r in mine} == {"autopilot: adp"}
    assert {r["agent"] for r in mine} == {"human:you-autopilot-adp"}


def test_play_notebook_on_autopilot_from_the_notebooks_folder(data_dir, tmp_path):
    """As JupyterLab runs it (kernel in notebooks/), the default run_dir lands under the project's outputs/; the
    executed copy shows where the run stands as text (never ``VBox(children=...``), and running it again (a
    restarted kernel, Run All) resumes the finished season instead of failing."""
    import papermill as pm

    from ffbench_lib.runs.notebooks import KERNEL_ARGS
    from project_copy import OVERRIDES, copy_project

    project = copy_project(tmp_path / "ffbench")
    short = yaml.safe_load((project / "params" / "play.yaml").read_text())
    short.update({"weeks": 2, "trades": {"weeks": [1]}})
    (project / "params" / "play_short.yaml").write_text(yaml.safe_dump(short))
    for n in (1, 2):
        executed = tmp_path / f"10_play-{n}.ipynb"
        with pytest.MonkeyPatch.context() as mp:
            for k in OVERRIDES:
                mp.delenv(k, raising=False)
            mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
            pm.execute_notebook(str(project / "notebooks" / "10_play.ipynb"), str(executed), kernel_name="python3",
                                parameters={"autopilot": "adp", "league": "params/play_short.yaml"}, cwd=str(project / "notebooks"),
                                progress_bar=False, execution_timeout=600, extra_arguments=KERNEL_ARGS)
        outputs = [o for c in json.loads(executed.read_text())["cells"] for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"]
        texts = ["".join(o.get("data", {}).get("text/plain", "")) for o in outputs]
        assert not any("VBox(children" in t for t in texts), texts
        assert any(COMPLETE in t for t in texts), texts
        assert any("image/png" in o.get("data", {}) for o in outputs)  # the replay's static chart
    run = project / "outputs" / "play" / "you-2024"
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert not (project / "notebooks" / "outputs").exists()
    mine = human_decisions(run)
    assert mine and {r["agent"] for r in mine} == {"human:you-autopilot-adp"}  # a bot's answers, named so


def first_question(league, prepared, run_dir) -> tuple[str, dict]:
    async def main():
        game = start_play(league, run_dir, prepared)
        try:
            p = await asyncio.wait_for(game.seat.next(), 120)
            return p.kind, p.view
        finally:
            game.task.cancel()
    return asyncio.run(main())


def html_of(widget) -> str:
    """The HTML of every HTML widget in a widget tree."""
    return "".join([getattr(widget, "value", "") if isinstance(widget, w.HTML) else ""]
                   + [html_of(c) for c in getattr(widget, "children", ())])


def test_board_search_filter_and_live_problem_of_an_illegal_position(prepared_2024, tmp_path):
    kind, view = first_question(play_league(weeks=1, trades={"weeks": []}), prepared_2024, tmp_path / "run")
    assert kind == "draft_shortlist"
    sent: list[dict] = []
    board = DraftBoard(kind, view, sent.append)
    # the desk's header and the board say where the draft stands in the same words
    at = f"round {view['round']} of {view['rounds']}, pick {view['pick']} overall"
    assert at in question_text(ME, kind, view) and f"<b>{at.capitalize()}</b>" in html_of(board.widget)
    positions = list(view["available"])
    assert list(board.position.options) == ["all", *positions]  # the view's positions, no others
    assert board.board.value is not None and not board.submit.disabled  # a legal player preselected
    best = board.board.options[0][1]
    board.search.value = board.cards[best]["name"].split()[-1].upper()
    assert best in [pid for _, pid in board.board.options] and len(board.board.options) < len(board.cards)
    board.search.value = ""
    board.position.value = positions[1]
    assert {board.cards[pid]["pos"] for _, pid in board.board.options} == {positions[1]}

    # a position the team may not draft now: the registry's problem shows at once and Draft does nothing
    barred = dict(view, legal_positions=[p for p in view["legal_positions"] if p != positions[1]])
    board = DraftBoard(kind, barred, sent.append)
    board.position.value = positions[1]
    board.board.value = board.board.options[0][1]
    assert board.submit.disabled and positions[1] in board.problems_line.value
    board.submit.click()
    assert sent == []
    board.position.value = positions[0]
    board.board.value = board.board.options[0][1]
    board.why.value = "my first pick"
    board.submit.click()
    assert sent == [{"shortlist": [board.board.value], "rationale": "my first pick"}]


def test_board_in_queue_mode_answers_a_ranked_queue(prepared_2024, tmp_path):
    league = play_league(weeks=1, trades={"weeks": []}, draft={"mode": "queue", "queue_size": 4, "order": "rotate"})
    kind, view = first_question(league, prepared_2024, tmp_path / "run")
    assert kind == "draft_queue"
    sent: list[dict] = []
    board = DraftBoard(kind, view, sent.append)
    ids = [pid for _, pid in board.board.options[:3]]
    for pid in ids:
        board.board.value = pid
        board.edit_queue("add")
    board.queue_list.value = ids[2]
    board.edit_queue("up")
    board.queue_list.value = ids[0]
    board.edit_queue("remove")
    assert board.value() == {"queue": [ids[2], ids[1]]} and not board.submit.disabled
    board.submit.click()
    assert sent and sent[0]["queue"] == [ids[2], ids[1]]


def browser_msg(widget, data: dict) -> None:
    """What JupyterLab sends a widget's comm when a person types or clicks."""
    widget.comm.handle_msg({"content": {"data": data}, "buffers": []})


CLICK = {"method": "custom", "content": {"event": "click"}}


def test_an_error_in_a_callback_of_a_widget_made_later_shows_in_the_status(prepared_2024, tmp_path):
    """Browser clicks answer (the board: pick the first row, click Draft); a waiver claim row is made when "Add
    claim" is clicked, after the desk showed the form, and an exception in its callbacks (here the form's
    validation, on a view gone bad) reaches the desk's status line, not the kernel's log nobody reads."""
    async def main():
        game = start_play(play_league(weeks=2, trades={"weeks": []}), tmp_path / "run", prepared_2024)
        desk = PlayDesk(game)
        try:
            await asyncio.wait_for(desk.asked.wait(), 120)
            board = desk.form
            browser_msg(board.board, {"method": "update", "state": {"index": 0}})
            browser_msg(board.submit, CLICK)
            assert desk.form is not board and desk.answered == 1
            await asyncio.wait_for(click_through(desk, [], until="waiver_claims"), 300)
            form = desk.form
            assert isinstance(form, ClaimsForm) and form.rows == []
            browser_msg(form.add_button, CLICK)
            row = form.rows[0]
            assert desk.status_text == "your turn: waiver claims"
            form.view = {}  # a bug: the form's validation now fails
            browser_msg(row["drop"], {"method": "update", "state": {"index": 0}})
            assert desk.status_text == "error: KeyError: 'max_claims'" and "b00020" in desk.status.value
            desk.set_status("")
            browser_msg(row["remove"], CLICK)
            assert form.rows == [] and desk.status_text == "error: KeyError: 'max_claims'"
        finally:
            game.task.cancel()

    asyncio.run(main())


def test_play_cell_run_again_in_the_same_kernel(prepared_2024, tmp_path):
    """The notebook's play cell cancels the season it started before starting it again (resumed): the run folder's
    lock is free at once, and the new desk finishes the season."""
    league = play_league(weeks=1, trades={"weeks": []})

    async def main():
        game = start_play(league, tmp_path / "run", prepared_2024)
        old = PlayDesk(game)
        await asyncio.wait_for(old.asked.wait(), 120)
        old.form.why.value = "before the re-run"
        old.form.submit.click()
        game.task.cancel()  # what the cell does when run again
        game = start_play(league, tmp_path / "run", prepared_2024)
        new = PlayDesk(game)
        await asyncio.wait_for(click_through(new, []), 300)
        await new.wait()
        return old, new

    old, new = asyncio.run(main())
    assert "stopped" in old.status_text and new.status_text == COMPLETE
    first = [r for r in human_decisions(tmp_path / "run") if r["decision"] == "draft_shortlist"][0]
    assert first["raw_answer"]["rationale"] == "before the re-run"  # the click before the re-run was kept


def test_a_click_on_another_thread_wakes_the_season(prepared_2024, tmp_path):
    """JupyterLab may deliver a widget's click on a kernel subshell's thread (its own event loop). The answer must
    wake the season's loop at once: before the fix the season slept, the next question unasked, until the kernel's
    next message (a person would wait forever). A watchdog thread gives it 60 s, then stops the season."""
    league = play_league(weeks=1, trades={"weeks": []})
    verdict: dict = {}

    async def main():
        game = start_play(league, tmp_path / "run", prepared_2024)
        desk = PlayDesk(game)
        await asyncio.wait_for(desk.asked.wait(), 120)
        first, loop = desk.pending, asyncio.get_running_loop()

        def subshell():  # the click, from a thread running its own loop, as a kernel subshell does
            asyncio.run(asyncio.sleep(0.2))  # the season's loop is asleep in select() by now
            asyncio.run(_click(desk.form.submit))
            for _ in range(600):
                if any(p is not first for p in game.seat.pending):
                    verdict["next asked"] = True
                    break
                threading.Event().wait(0.1)
            loop.call_soon_threadsafe(game.task.cancel)

        async def _click(button):
            button.click()

        watchdog = threading.Thread(target=subshell)
        watchdog.start()
        await asyncio.wait({game.task}, timeout=600)
        watchdog.join()

    asyncio.run(main())
    assert verdict.get("next asked"), "the season did not go on after an answer given on another thread"
