"""``ffbench report``: one self-contained page over runs that opens offline (figures embedded, nothing fetched
from the network, no code cells), with a leaderboard row and a card for every agent, on bot runs and on the
imported earlier runs."""
import re

import pytest

from ffbench_lib import report
from ffbench_lib.cli import main
from ffbench_lib.engine import SimulatedCrash
from ffbench_lib.secrets import register

from engine_helpers import ScriptedAgent, agents_with, demo_league, run_engine

AGENTS = ["bot:adp", "bot:vorp", "bot:recent_form", "bot:random", "scripted"]


@pytest.fixture(scope="module")
def bot_runs(prepared_2024, tmp_path_factory):
    """Three 4-week runs of the demo league; in the third, team ADP-1 is played by an agent whose lineups are all
    invalid (the engine sets them: a run with mass fallbacks)."""
    root = tmp_path_factory.mktemp("report_runs")
    for seed in range(3):
        league = demo_league(seed=seed, weeks=4)
        agents = None
        if seed == 2:
            agents = agents_with(league, {"ADP-1": ScriptedAgent("ADP-1", seed, {
                "set_lineup": lambda view: {"lineup": {"QB": ["nobody"]}, "rationale": "broken"}})})
        run_engine(league, prepared_2024, root / f"s{seed}", agents=agents)
    return root


def _body(page: str) -> str:
    return page[page.index("<body"):]


def test_report_page_on_bot_runs_opens_offline(bot_runs, tmp_path, capsys):
    out = tmp_path / "site" / "report.html"
    assert main(["report", str(bot_runs), "--out", str(out)]) == 0
    assert "report written to" in capsys.readouterr().out
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
    assert 'id="ffb-animation"' in body  # the replay's place, until the animation lands


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
        run_engine(demo_league(seed=9, weeks=3), prepared_2024, tmp_path / "partial" / "p", crash_after="week:1")
    assert main(["report", str(tmp_path / "partial"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no complete runs" in err
    assert main(["report", str(tmp_path / "partial"), "--out", str(tmp_path)]) == 2  # a folder, not a file
    assert "is a folder" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_report_page_on_imported_runs(data_dir, tmp_path):
    """Two of the earlier benchmark's recorded runs: the page renders, models flagged as mostly engine fallbacks
    keep their row with a dagger and their runs marked, and trades are quoted in the models' words."""
    from ffbench_lib.importers.fantasyfootballbench import import_reference_run

    sims = sorted((data_dir / "reference_runs").glob("simulation_*"))[-2:]
    for i, sim in enumerate(sims):
        import_reference_run(sim, tmp_path / "runs" / sim.name, data_dir, seed=i)
    out = report.build(str(tmp_path / "runs"), tmp_path / "imported.html")
    page = out.read_text()
    body = _body(page)
    assert report.embedded_images(page) >= 8 and report.offline_problems(page) == []
    board = body[body.index("Leaderboard"):body.index("Caveats")]
    assert re.search(r"<td>gpt-5 \(drafted by [^)]+\)</td>", board)  # the season model, and who drafted
    gemini = board[board.index("<td>gemini-2.5-pro (drafted by"):]
    gemini = gemini[:gemini.index("</tr>")]
    assert "\u2020</td>" in gemini and "all 2" in gemini and "mostly engine fallbacks" in gemini
    assert "Imported runs" in body
    assert "(trade made): \u201c" in body or "(trade made): &ldquo;" in body
    assert "no token or cost data" in body.lower()
    assert "from ffbench_lib" not in body
