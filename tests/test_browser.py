"""A person plays in a real browser: JupyterLab on 127.0.0.1 over a copy of the project, notebooks/10_play.ipynb
run against 9 bots in a short league; every draft pick made by clicking a player on the board and Draft, the
first week's lineup changed in a slot dropdown and submitted, the season's standings replay moved by dragging its
slider and by a key, then ``ffbench report`` on the run opened from file:// with the network blocked. A
screenshot after each step is saved in the test's tmp_path (``NN_*.png``). Needs Chromium: skipped without it
locally, failed under CI (tests/jupyterlab_helpers.py)."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml

from ffbench_lib.cli import main
from jupyterlab_helpers import IDLE, launch, need_chromium, run_all

ME, HUMAN = "You", "human:you"
RUN_DIR = "outputs/play/browser"
LEAGUE = "params/browser_play.yaml"
WEEKS = 2  # the fewest that still have waivers between two lineups and a replay to move back a week
VIEWPORT = {"width": 1280, "height": 900}
NAME_WIDTH = 24  # the board's first column (ffbench_lib/play/forms/draft.py COLUMNS): the name, then the position


def short_league(project) -> None:
    """params/play.yaml cut short: 2 weeks, one RB and one WR slot, one bench spot (6 rounds: a kernel restart
    after the second pick still leaves picks to resume), no trade weeks; the notebook's parameters cell pointed at
    it (as papermill would set them)."""
    league = yaml.safe_load((project / "params" / "play.yaml").read_text())
    league.update(name="browser", weeks=WEEKS, trades={"weeks": []})
    league["roster"].update(RB=1, WR=1, BENCH=1)
    (project / LEAGUE).write_text(yaml.safe_dump(league, sort_keys=False))
    path = project / "notebooks" / "10_play.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = (f'# Parameters (set by tests/test_browser.py)\nleague = "{LEAGUE}"\nrun_dir = "{RUN_DIR}"\n'
                      'autopilot = None\n')
    path.write_text(json.dumps(nb, indent=1))


# The header of the question the desk shows a form for now, once that form is drawn, or of the season's end;
# false while it still shows ``after`` (a header) or is between questions. A draft question (its header names the
# round and the pick) counts once its board for a pick other than ``last_pick`` is drawn: the header changes
# before the board, and the desk's own answer that follows the board's may show the same pick without a form.
ASKED = """([after, lastPick, draft]) => {
    const h = document.querySelector('.ffbench-question'), d = document.querySelector('.ffbench-desk');
    if (!h || !d) return false;
    const t = h.innerText.trim(), body = d.innerText, has = css => d.querySelector(css) !== null;
    if (!t || t === after) return false;
    if (body.includes('season complete')) return t;
    const pick = t.match(new RegExp(draft));
    // the board's own heading names the pick too (the header alone is drawn first)
    if (pick) return pick[1] !== lastPick && body.split('pick ' + pick[1] + ' overall').length > 2
                     && has('.ffbench-draft-board select') ? t : false;
    if (t.includes('set lineup')) return has('.ffbench-lineup-slot select') ? t : false;
    return has('.ffbench-submit') ? t : false; }"""
DRAFT = r"round \d+ of \d+, pick (\d+)"  # in the desk's header: "You · draft pick · round 2 of 8, pick 19"


def next_question(page, after: str, last_pick: int | None = None) -> str:
    """Wait until the desk asks something else than ``after`` (a header) or the season has ended: the header."""
    return page.wait_for_function(ASKED, arg=[after, str(last_pick), DRAFT], timeout=300_000).json_value()


def restart_and_run_all(page) -> None:
    """Kernel > Restart Kernel and Run All Cells, confirmed; returns once the old desk is gone from the page."""
    page.get_by_role("menuitem", name="Kernel", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel and Run All Cells")).click()
    page.get_by_role("button", name=re.compile(r"^(Confirm Kernel Restart|Restart)$")).click()  # aria label
    page.locator(".ffbench-desk").wait_for(state="detached", timeout=300_000)


def draft_by_clicking(page, shot) -> tuple[list[str], str]:
    """Every pick of team You: click a legal player on the board (the second legal one when there is one, so the
    click is not the board's preselection), wait until the kernel shows him selected, click Draft. Returns the
    names clicked, in order, and the header of the question after the draft."""
    desk = page.locator(".ffbench-desk")
    clicked, picks = [], []
    text = next_question(page, "")
    while (draft := re.search(DRAFT, text)) is not None:
        picks.append(int(draft.group(1)))
        legal = re.search(r"you may draft: ([^·\n]*)", desk.inner_text()).group(1).split(",")
        legal = {p.strip() for p in legal}
        options = page.locator(".ffbench-draft-board select option")
        labels = [label.replace("\xa0", " ") for label in options.all_inner_texts()]  # Select shows spaces as nbsp
        ok = [i for i, label in enumerate(labels) if label[NAME_WIDTH:NAME_WIDTH + 4].strip() in legal]
        assert ok, f"no legal player on the board (legal: {legal}): {labels[:5]}"
        i = ok[1] if len(ok) > 1 else ok[0]
        name = labels[i][:NAME_WIDTH].strip()
        options.nth(i).click()
        desk.get_by_text(f"selected: {name}").wait_for()
        if not clicked:
            shot("02_draft_board_player_selected")
        page.locator(".ffbench-draft-button").click()
        clicked.append(name)
        text = next_question(page, text, picks[-1])
        if len(clicked) == 1:
            shot("03_after_first_pick")
        if len(clicked) == 2:  # the person restarts the kernel mid-draft: Run All resumes at the next pick
            restart_and_run_all(page)
            text = next_question(page, "", picks[-1])
            page.locator(".ffbench-question").scroll_into_view_if_needed()
            shot("03b_resumed_after_kernel_restart")
    assert "set lineup" in text, f"after the draft the desk asks something else than the lineup: {text}"
    assert picks == sorted(picks) and len(set(picks)) == len(picks), f"the header's pick did not advance: {picks}"
    return clicked, text


def set_lineups(page, shot, text: str) -> tuple[str, str]:
    """Week 1: put a bench player into a slot he may fill (choosing him in that slot's dropdown) and submit;
    later weeks: submit the prefilled lineup. ``text``: the header of week 1's question. Returns (slot, the
    chosen option's text) of the change."""
    change, weeks, others = None, [], set()
    while "set lineup" in text or "waiver claims" in text or "free agent adds" in text:
        if "set lineup" not in text:  # after each week's games (play.yaml has waivers): submit as shown, no claims
            others.add(text.split(" · ")[1])
            page.locator(".ffbench-desk .ffbench-submit").click()
            text = next_question(page, text)
            continue
        weeks.append(int(re.search(r"week (\d+)", text).group(1)))
        slots = page.locator(".ffbench-lineup-slot select")
        if change is None:
            state = slots.evaluate_all(
                "els => els.map(s => ({opts: [...s.options].map(o => o.textContent.replace(/\\u00a0/g, ' ')),"
                "                      sel: s.selectedIndex}))")
            chosen = {s["opts"][s["sel"]] for s in state}
            change = next(((k, j) for k, s in enumerate(state) for j, o in enumerate(s["opts"])
                           if o not in chosen and o != "(empty)"), None)
            assert change is not None, f"no bench player may fill any slot: {state}"
            k, j = change
            slots.nth(k).select_option(index=j)
            label = state[k]["opts"][j]
            # the bench table (drawn by the kernel from the dropdowns' values) no longer lists him
            page.wait_for_function(
                """name => { const b = [...document.querySelectorAll('.ffbench-desk table')].find(
                                 t => t.innerText.trim().startsWith('Bench'));
                             return b && !b.innerText.includes(name); }""", arg=label.split(" (")[0])
            page.locator(".ffbench-question").scroll_into_view_if_needed()  # the header and every slot in view
            shot("04_lineup_slot_changed")
            change = (page.locator(".ffbench-lineup-slot label").nth(k).inner_text(), label)
        page.locator(".ffbench-desk .ffbench-submit").click()
        text = next_question(page, text)
    assert weeks == list(range(1, WEEKS + 1)), f"lineups asked for weeks {weeks}, then: {text}"
    assert others == {"waiver claims", "free agent adds"}, others
    return change


def move_replay(page, shot) -> None:
    """Drag the replay's week slider to its right end, then one week back with the arrow key: the caption
    follows both."""
    desk = page.locator(".ffbench-desk")
    caption = desk.get_by_text(re.compile(r"week \d+ of \d+"))
    caption.first.wait_for()
    assert f"week 1 of {WEEKS}" in caption.first.inner_text()
    slider = desk.locator(".widget-hslider .noUi-target").first
    handle = desk.locator(".widget-hslider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    hb, sb = handle.bounding_box(), slider.bounding_box()
    page.mouse.move(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
    page.mouse.down()
    page.mouse.move(sb["x"] + sb["width"] + 20, hb["y"] + hb["height"] / 2, steps=8)
    page.mouse.up()
    desk.get_by_text(f"week {WEEKS} of {WEEKS} (final)").wait_for()
    shot("06_replay_dragged_to_last_week")
    handle.focus()
    page.keyboard.press("ArrowLeft")
    desk.get_by_text(re.compile(rf"week {WEEKS - 1} of {WEEKS}(?! \(final)")).wait_for()
    shot("07_replay_key_one_week_back")


def open_report_offline(browser, report, shot) -> None:
    """The report from file:// with every http(s) request aborted: none was attempted, the leaderboard and its
    figures are there and every image decoded."""
    page = browser.new_page(viewport=VIEWPORT)
    asked = []
    page.on("request", lambda req: asked.append(req.url))
    page.route(lambda url: not url.startswith(("file:", "data:")), lambda route: route.abort())
    page.goto(report.as_uri(), wait_until="load")
    page.get_by_role("heading", name=re.compile("Leaderboard")).first.wait_for()
    images = page.evaluate("() => [...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 0])")
    shot("08_report_offline_top", page=page)
    shot("09_report_offline_full_page", page=page, full_page=True)
    assert [u for u in asked if not u.startswith(("file:", "data:"))] == []
    assert len(images) >= 4 and all(ok for _, ok in images), images
    assert any(alt.startswith("standings replay of") for alt, _ in images), images


@pytest.mark.slow
@pytest.mark.browser
def test_play_a_short_season_by_clicking_then_replay_and_report(lab, tmp_path, capsys):
    sync_api = need_chromium()
    url, project = lab
    short_league(project)
    run = project / RUN_DIR
    shots = []

    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(180_000)  # a busy CI machine: a bound, not a timing assertion

            def shot(name, page=page, full_page=False):
                path = tmp_path / f"{name}.png"
                page.screenshot(path=str(path), full_page=full_page)
                shots.append(path)

            # a. the play notebook open in JupyterLab
            page.goto(f"{url}/lab/tree/notebooks/10_play.ipynb")
            page.get_by_text(IDLE).wait_for()
            page.keyboard.press("Control+b")  # the file browser closed: the notebook has the window's width
            shot("00_play_notebook_open")
            run_all(page)
            # b. the draft, by clicking; the header shows each new pick
            page.locator(".ffbench-draft-board select").wait_for(timeout=600_000)
            page.locator(".ffbench-desk").scroll_into_view_if_needed()
            shot("01_play_notebook_draft_board")
            clicked, text = draft_by_clicking(page, shot)
            slot, chosen = set_lineups(page, shot, text)
            page.locator(".ffbench-status").get_by_text("season complete").wait_for(timeout=300_000)
            page.locator(".ffbench-desk .widget-hslider").wait_for()  # the replay drawn under the final standings
            page.locator(".ffbench-desk").scroll_into_view_if_needed()
            shot("05_season_complete")
            # c. the standings replay the desk shows at the season's end
            move_replay(page, shot)
            assert page.get_by_text("Traceback").count() == 0, page.inner_text(".jp-Notebook")[-3000:]
            # d. the report on this run, offline
            report = tmp_path / "report.html"
            # (in-process: the command's own subprocess path is tested elsewhere; the project copy's run)
            assert main(["report", str(run), "--out", str(report)]) == 0, capsys.readouterr().err[-3000:]
            open_report_offline(browser, report, shot)
        finally:
            print("screenshots:", *shots, sep="\n  ")
            browser.close()

    # the person's clicks are the team's decisions, logged as the human agent's own (not fallbacks)
    rows = [json.loads(x) for x in (run / "decisions.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["team"] == ME]
    assert {r["agent"] for r in mine} == {HUMAN}
    assert all(r["decided_by"] == "agent" for r in mine), [r for r in mine if r["decided_by"] != "agent"]
    kinds = [r["decision"] for r in mine]
    assert kinds.count("draft_pick") == len(clicked) and kinds.count("set_lineup") == WEEKS
    picks = pd.read_parquet(run / "draft_picks.parquet")
    mine_picked = picks[picks["team"] == ME].sort_values("pick")["player_name"]
    assert [n[:NAME_WIDTH - 1].strip() for n in mine_picked] == clicked  # the board shows names cut to the column
    week1 = next(r for r in mine if r["decision"] == "set_lineup" and r["week"] == 1)
    names = {c["id"]: c["name"] for c in week1["view"]["players"]}
    in_slot = [names[i] for i in week1["raw_answer"]["lineup"][slot]]
    assert chosen.split(" (")[0] in in_slot, (slot, chosen, in_slot)
