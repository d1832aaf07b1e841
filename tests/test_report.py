"""``ffbench report``: one self-contained page over runs that opens offline (figures embedded, nothing fetched
from the network, no code cells), with a leaderboard row and a card for every agent, on bot runs and on the
imported earlier runs."""
import asyncio
import contextlib
import io
import json
import re
import shutil

import pytest
import yaml
from PIL import Image

from ffbench_lib.analysis import metrics, ratings
from ffbench_lib.present import plots, report
from ffbench_lib.cli import main
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.core.secrets import register

from engine_helpers import REPO, ScriptedAgent, agents_with, demo_league, run_engine
from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.config.load import parse_config
from ffbench_lib.play.desk import PlayDesk
from ffbench_lib.runs.notebooks import NotebookError
from ffbench_lib.play.session import start_play
from jupyterlab_helpers import launch, need_chromium
from report_helpers import demo_batch_report, demo_runs

AGENTS = ["bot:adp", "bot:vorp", "bot:recent_form", "bot:random", "scripted"]


@pytest.fixture(scope="module")
def bot_runs(prepared_2024, tmp_path_factory):
    """Three 4-week runs of the demo league; in the third, team ADP-1 is played by an agent whose lineups are all
    invalid (the engine sets them: a run with mass fallbacks). The first two are copies of the runs
    test_consistency reads (tests/report_helpers.py: played once per test run)."""
    root = tmp_path_factory.mktemp("report_runs")
    shared = demo_runs(tmp_path_factory, prepared_2024)
    for seed in range(2):
        shutil.copytree(shared / f"s{seed}", root / f"s{seed}")
    league = demo_league(seed=2, weeks=4)
    agents = agents_with(league, {"ADP-1": ScriptedAgent("ADP-1", 2, {
        "set_lineup": lambda view: {"lineup": {"QB": ["nobody"]}, "rationale": "broken"}})})
    run_engine(league, prepared_2024, root / "s2", agents=agents)
    return root


def _body(page: str) -> str:
    return page[page.index("<body"):]


def replay_gif(page: str) -> Image.Image:
    """The page's one standings replay: a real animated GIF."""
    gifs = report.embedded_gifs(page)
    assert len(gifs) == 1
    gif = Image.open(io.BytesIO(gifs[0]))
    assert gif.format == "GIF" and gif.is_animated and gif.info.get("loop") == 0
    return gif


#: table cells (but a row's last, a note) whose text takes more than one line
WRAPPED = """() => [...document.querySelectorAll('table.ffb td:not(:last-child)')].filter(td => {
    const r = document.createRange(); r.selectNodeContents(td);
    return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; }).map(td => td.textContent)"""


def open_offline(path, screenshot) -> None:
    """Open the page in Chromium with every http(s) request aborted: nothing was asked of the network and every
    image (figures, the replay) decoded. Called last: without Chromium it skips (fails under CI)."""
    sync_api = need_chromium()
    asked = []
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.on("request", lambda req: asked.append(req.url))
            page.route(lambda url: not url.startswith(("file:", "data:")), lambda route: route.abort())
            page.goto(path.as_uri(), wait_until="load")
            images = page.evaluate("() => [...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 0])")
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            wrapped = page.evaluate(WRAPPED)
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    assert [u for u in asked if not u.startswith(("file:", "data:"))] == []
    assert len(images) >= 9 and all(ok for _, ok in images), images
    assert any(alt.startswith("standings replay of") for alt, _ in images)
    assert wide <= 1280 and wrapped == []  # nothing cut at 1280 px; no name in a table breaks over two lines


def _cli(args: list[str]) -> tuple[int, str, str]:
    """``ffbench`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def bot_site(bot_runs, tmp_path_factory):
    """The one page over the bot runs (one notebook execution shared by the tests reading it), written into a
    folder where two builds over a run with an unreadable table failed first: what each step said and left behind
    is kept for test_a_failed_report_leaves_no_temporary_folder. The page's command names the runs' folder and a
    fourth run, unfinished (a copy of s1 marked running), to be left out."""
    root = tmp_path_factory.mktemp("report_site")
    bad = root / "bad" / "s0"
    shutil.copytree(bot_runs / "s0", bad)
    (bad / "standings.parquet").write_bytes(b"not a parquet file")
    unfinished = root / "unfinished"
    shutil.copytree(bot_runs / "s1", unfinished)
    meta = json.loads((unfinished / "run.json").read_text())
    (unfinished / "run.json").write_text(json.dumps({**meta, "status": "running"}))
    site, seen = root / "site", {}
    out = site / "report.html"
    seen["cli_failed"] = _cli(["report", str(bad.parent), "--out", str(out)])
    seen["after_cli"] = sorted(p.name for p in site.iterdir())
    failed = out.with_name(f"{out.name}.failed.ipynb")
    seen["failed_text"] = failed.read_text() if failed.exists() else ""
    try:
        report.build(str(bad.parent), out)
        seen["api_failed"] = None
    except NotebookError as exc:
        seen["api_failed"] = exc
    seen["after_api"] = sorted(p.name for p in site.iterdir())
    seen["cli"] = _cli(["report", str(bot_runs), str(unfinished), "--out", str(out)])
    seen["after_good"] = sorted(p.name for p in site.iterdir())
    return out, seen


def test_report_page_on_bot_runs_opens_offline(bot_site):
    out, seen = bot_site
    code, printed, err = seen["cli"]
    assert code == 0 and "report written to" in printed, err
    page = out.read_text()
    body = _body(page)
    # self-contained: every figure embedded (8 of them), nothing loaded from the network, no code
    assert report.embedded_images(page) >= 8
    assert report.offline_problems(page) == []
    assert not re.search(r"<(script|img|link|iframe)\b[^>]*(src|href)\s*=\s*[\"']?\s*(https?:)?//", page, re.I)
    assert "jp-CodeMirrorEditor" not in body and "from ffbench_lib" not in body and "report.load(" not in body
    assert "jp-InputPrompt" not in body
    # a leaderboard row and a card for every agent; the scripted team's run is marked, the agent never ranked
    board = body[body.index("Leaderboard"):body.index("Caveats")]
    rows = re.findall(r"<tr>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", board)
    shown = {agent.strip() for _, agent in rows}
    assert shown == {"adp", "vorp", "recent_form", "random", "scripted \u2020"}
    scripted = board[board.index("scripted \u2020"):]
    assert "all 1" in scripted[:scripted.index("</tr>")]  # its one run is marked as mostly fallbacks
    assert dict((a.strip(), r.strip()) for r, a in rows)["scripted \u2020"] == ""  # no rank
    cards = body[body.index(">Agents<"):]
    for agent in AGENTS:
        assert f">{agent}" in cards or f"{agent};" in cards, agent
    assert "NOT statistically significant" in body or "no specific ranking is supported" in body
    assert "3 runs (seeds of the 2024 season)" in body
    # the standings replay: one frame per week of the first run, named in the caption
    assert replay_gif(page).n_frames == 4 and 'id="ffb-animation"' in body
    assert "the first of the 3 runs (s0)" in body


def test_agent_cards_quote_rationales_escaped_and_scrubbed(bot_runs):
    """A rationale is the model's free text: shown as a quote, HTML-escaped, with any credential masked."""
    import pandas as pd

    secret = "sk-report-test-0123456789"
    register(secret)
    r = report.load(str(bot_runs))
    steps = r.data["trade_steps"]
    row = {c: None for c in steps.columns} | {
        "run_id": r.data["meta"]["run_id"].iloc[0], "week": 2, "negotiation": "w2-x", "step": 1, "agent": "bot:adp",
        "action": "propose", "decided_by": "agent",
        "rationale": f"<script>alert('x')</script> my key is {secret} & more"}
    r.data["trade_steps"] = pd.concat([steps, pd.DataFrame([row])], ignore_index=True)
    html = report.model_cards(r).data
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html and "<script>" not in html
    assert secret not in html and "my key is ***" in html


def test_default_nbconvert_page_would_need_the_network(tmp_path):
    """The check is real: nbconvert's own lab template loads require.js and MathJax from a CDN; ours nothing."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# hi $x^2$")])
    default, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    assert any("require" in p for p in report.offline_problems(default))
    nbformat.write(nb, tmp_path / "hi.ipynb")
    assert report.offline_problems(report.to_html(tmp_path / "hi.ipynb")) == []


def test_bad_runs_are_one_line_and_exit_2(prepared_2024, tmp_path, capsys):
    assert main(["report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run directories" in err and "Traceback" not in err
    with pytest.raises(SimulatedCrash):
        run_engine(demo_league(seed=9, weeks=2), prepared_2024, tmp_path / "partial" / "p", crash_after="week:1")
    assert main(["report", str(tmp_path / "partial"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no complete runs" in err
    assert main(["report", str(tmp_path / "partial"), "--out", str(tmp_path)]) == 2  # a folder, not a file
    assert f"is a folder; give a file name (e.g. {tmp_path / 'report.html'})" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.browser
def test_report_page_on_imported_runs(imported_runs, tmp_path):
    """Two of the earlier benchmark's recorded runs (real data, imported once per test run by conftest; read, never
    written): the page renders, models flagged as mostly engine fallbacks keep their row with a dagger and their
    runs marked, and trades are quoted in the models' words."""
    runs = [str(p) for p in sorted(imported_runs.glob("simulation_*"))[-2:]]
    assert len(runs) == 2
    out = report.build(runs, tmp_path / "imported.html")
    page = out.read_text()
    body = _body(page)
    assert report.embedded_images(page) >= 8 and report.offline_problems(page) == []
    weeks = int(report.load(runs).data["standings"]["week"].max())
    assert replay_gif(page).n_frames == weeks == 17
    board = body[body.index("Leaderboard"):body.index("Caveats")]
    assert re.search(r"<td>gpt-5 \(drafted by [^)]+\)</td>", board)  # the season model, and who drafted
    gemini = board[board.index("<td>gemini-2.5-pro (drafted by"):]
    gemini = gemini[:gemini.index("</tr>")]
    assert "\u2020</td>" in gemini and "all 2" in gemini and "mostly engine fallbacks" in gemini
    assert "Imported runs" in body
    assert "(trade made): \u201c" in body or "(trade made): &ldquo;" in body
    assert "no token or cost data" in body.lower()
    assert "from ffbench_lib" not in body
    open_offline(out, tmp_path / "imported.png")


@pytest.mark.slow
@pytest.mark.browser
def test_report_on_a_demo_batch_opens_offline(tmp_path_factory, tmp_path):
    """The README's flow in small: a batch of the demo league (params/batch_demo.yaml's shape: bot seeds, rotate
    design; 2 seeds of 3 weeks here), then the report on the batch folder (built once with test_consistency:
    tests/report_helpers.py); opened in Chromium offline."""
    folder = demo_batch_report(tmp_path_factory)
    assert json.loads((folder / "batch.json").read_text())["complete"] == 2
    out = folder / "report.html"
    page = out.read_text()
    assert report.offline_problems(page) == [] and report.embedded_images(page) >= 8
    assert replay_gif(page).n_frames == 3 and "the first of the 2 runs (seed-0)" in page
    assert "2 runs (seeds of the 2024 season)" in page
    open_offline(out, tmp_path / "batch_report.png")


@pytest.mark.slow
def test_report_on_llm_runs_shows_cost_reliability_fallbacks_and_scrubbed_quotes(prepared_2024, tmp_path,
                                                                                   monkeypatch):
    """Two models on the fake OpenAI server: one answers well, one only in broken JSON (the engine makes all its
    decisions). The page prices each, counts its fallbacks, marks the broken one and never ranks it, quotes the
    good one's trade rationales, and never shows the key (the server echoes it into every rationale)."""
    from ffbench_lib.config.league import League
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer
    from test_llm import llm_league

    canary = "sk-canary-report-" + "7" * 24
    monkeypatch.setenv("FFBENCH_REPORT_KEY", canary)
    with FakeOpenAIServer(echo_auth_in_answers=True) as good, \
            FakeOpenAIServer(fault_rate=1.0, faults=("malformed",)) as bad:
        # a run the engine mostly played for one model: kept, to be reported as such; no re-asks (an invalid
        # answer goes straight to the engine: the broken model's calls are one per decision)
        d = llm_league(good.api_base, tmp_path / "cache", n_llm=2, weeks=3, max_fallback_rate=1.0,
                       max_reasks=0).model_dump(mode="json")
        d["trades"]["weeks"] = [2, 3]
        d["teams"][0]["agent"].update(model="openai/fake-good", api_key_env="FFBENCH_REPORT_KEY")
        d["teams"][1]["agent"].update(model="openai/fake-broken", api_base=bad.api_base)
        run_engine(League.model_validate(d), prepared_2024, tmp_path / "runs" / "llm")
        assert good.requests > 0 and bad.injected["malformed"] > 0
    out = report.build(str(tmp_path / "runs"), tmp_path / "llm.html")
    page = out.read_text()
    body = _body(page)
    assert report.offline_problems(page) == [] and replay_gif(page).n_frames == 3
    assert canary not in page
    board = body[body.index("Leaderboard"):body.index("Caveats")]
    broken = board[board.index("<td>fake-broken \u2020</td>"):]
    broken = broken[:broken.index("</tr>")]
    assert "<td>100%</td>" in broken and "all 1" in broken  # its draft and season: the engine's
    cards = body[body.index(">Agents<"):body.index("Reliability and cost")]
    good_card = cards[cards.index(">fake-good<"):]
    good_card = good_card[:good_card.index("</div>")]
    assert re.search(r"<b>Cost</b>: \$\d+\.\d\d in all, \$\d+\.\d\d per team-season; \d+ calls, 0\.0% invalid",
                     good_card)
    assert re.search(r"<b>Reliability</b>: \d+ decisions, 0 engine fallbacks", good_card)
    quotes = re.findall(r"<blockquote>week \d, [a-z_]+[^:]*: (?:&ldquo;|\u201c)(.*?)(?:&rdquo;|\u201d)</blockquote>",
                        good_card)
    assert quotes and all("(request auth: Bearer ***)" in q for q in quotes), good_card
    bad_card = cards[cards.index(">fake-broken \u2020 not ranked"):]
    bad_card = bad_card[:bad_card.index("</div>")]
    assert re.search(r"<b>Reliability</b>: (\d+) decisions, \1 engine fallbacks", bad_card)
    assert re.search(r"\d+ calls, 100\.0% invalid answers", bad_card)
    fallbacks = body[body.index("Share of each decision type"):]
    assert re.match(r"[^<]*</p>\s*<table[^>]*>\s*<thead>\s*<tr[^>]*>\s*<th>agent</th>", fallbacks)  # no stray header
    caveats = body[body.index(">Caveats<"):body.index(">Figures<")]
    assert "Not ranked (\u2020): fake-broken" in caveats and "Rated from one run, no interval" in caveats


def test_a_failed_report_leaves_no_temporary_folder(bot_site):
    """A run whose table cannot be read fails in the notebook: exit 1 with one line, no page, no ``.report-*``
    folder left beside --out; the executed copy with the traceback is kept as ``<out>.failed.ipynb``, and a later
    good build (bot_site's page, into the same folder) removes it."""
    out, seen = bot_site
    failed = out.with_name(f"{out.name}.failed.ipynb")
    code, _, err = seen["cli_failed"]
    assert code == 1
    assert err.count("\n") == 1 and "11_report.ipynb: cell" in err and str(failed) in err
    assert seen["after_cli"] == [failed.name]  # no page, no temporary folder
    assert "Traceback" in seen["failed_text"] or "ArrowInvalid" in seen["failed_text"]
    assert isinstance(seen["api_failed"], NotebookError)  # report.build raises it
    assert seen["after_api"] == [failed.name]
    assert seen["cli"][0] == 0 and seen["after_good"] == sorted([out.name, f"{out.stem}.results.json"])


# ----------------------------------------------------------------------------------------- a person's season
ME = "Human-1"


def human_league(name: str):
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d.update(weeks=3, seed=3, trades={"weeks": [2]})
    d["teams"][0] = {"name": ME, "agent": {"kind": "human", "name": name}}
    return parse_config(d)


async def play_by_hand(league, prepared, run_dir) -> None:
    """A person's season through the seat (each answer the one an ADP bot would give, as typed in)."""
    game = start_play(league, run_dir, prepared)
    bot = ADPBot(ME, league.seed)

    async def answer() -> None:
        while True:
            p = await game.seat.next()
            game.seat.answer(p, {**await bot.decide(p.kind, p.view), "rationale": f"my {p.kind}"})

    answerer = asyncio.get_running_loop().create_task(answer())
    try:
        await asyncio.wait_for(game.task, timeout=600)
    finally:
        answerer.cancel()


async def play_on_autopilot(league, prepared, run_dir) -> None:
    game = start_play(league, run_dir, prepared, autopilot="adp")
    desk = PlayDesk(game)
    await asyncio.wait_for(desk.done, timeout=600)
    assert game.task.done() and game.task.exception() is None


@pytest.fixture(scope="module")
def human_runs(prepared_2024, tmp_path_factory):
    """Two 3-week seasons of the demo league with team Human-1 a person's: one played by hand (through the seat),
    one on autopilot (the desk's ADP bot answers for the person)."""
    root = tmp_path_factory.mktemp("human_runs")
    asyncio.run(play_by_hand(human_league("tester"), prepared_2024, root / "by-hand"))
    asyncio.run(play_on_autopilot(human_league("tester"), prepared_2024, root / "autopilot"))
    return root


def test_a_person_is_free_marked_and_caveated(human_runs):
    """A person makes no LLM calls: free like a bot (never "cost unknown"), marked as a person in the leaderboard
    and on the card, with a caveat that a person replaying 2024 may remember it; a seat played on autopilot says
    its answers are the bot's."""
    me, auto = "human:tester", "human:tester-autopilot-adp"
    assert metrics.is_human(me) and not metrics.is_bot(me) and not metrics.makes_calls(me)
    assert metrics.autopilot_bot(auto) == "adp" and metrics.autopilot_bot(me) is None
    assert metrics.autopilot_bot("llm:x-autopilot-adp") is None and metrics.makes_calls("llm:openai/gpt-5")
    r = report.load(str(human_runs))
    assert {me, auto} <= set(r.board["agent"])
    cost = ratings.costs(r.data).set_index("agent")
    assert cost.loc[[me, auto], "cost_known"].all() and cost.loc[[me, auto], "free"].all()
    assert (cost.loc[[me, auto], "cost_usd"] == 0).all()

    board = report.leaderboard(r).data
    shown = {a.strip() for _, a in re.findall(r"<tr>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", board)}
    assert {"tester (a person)", "tester-autopilot-adp (autopilot: answered by the adp bot)"} <= shown
    cards = report.model_cards(r).data
    for head in ("<h3>tester (a person)</h3>", "<h3>tester-autopilot-adp (autopilot: answered by the adp bot)</h3>"):
        card = cards[cards.index(head):]
        assert "<b>Cost</b>: free (a person: no LLM calls)." in card[:card.index("</div>")]
    assert "unknown" not in cards

    caveats = report.caveats(r).data
    assert ("<li>tester is a person playing the 2024 season after it happened: a person may remember how it went "
            "(breakouts, injuries, who won), so the result is not comparable with how a model did") in caveats
    assert "<li>tester-autopilot-adp was played on autopilot: the adp bot gave every answer, not a person." in caveats
    assert "bots are free" not in report.reliability(r).data

    fig = plots.cost_vs_rating(r.board, r.palette, r.info)
    text = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "cost unknown" not in text and "only bots and people" in text


def test_a_run_left_out_is_said_in_prose_not_as_a_python_warning(bot_site):
    """A report over finished runs and an unfinished one (bot_site's page): the page says which run was left out
    (header), and shows no Python warning (source line, local path) where the notebook's stderr would have
    been."""
    out, seen = bot_site
    assert seen["cli"][0] == 0
    body = _body(out.read_text())
    assert "1 run(s) excluded as not complete" in body
    assert "UserWarning" not in body and "report.py" not in body and "load_runs(" not in body
