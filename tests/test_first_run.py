"""What a new user meets on a fresh clone (issue #25): the analysis notebooks' default ``runs`` finds the demo's runs,
the fake OpenAI server runs from the command line, a re-run batch says its runs were reused, the draft board says
what its lines mean and shows the draft so far, a pick without a "why" stores none, and a refused answers file is
one line in a notebook, not a traceback."""
from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

from engine_helpers import REPO, run_engine
from ffbench_lib.analysis import metrics
from ffbench_lib.agents.human import AnswersRefused
from ffbench_lib.config.load import parse_config
from ffbench_lib.play.desk import PlayDesk
from ffbench_lib.play.forms.draft import DraftBoard, needs_html
from ffbench_lib.core.paths import from_root
from ffbench_lib.play.session import start_play

# --------------------------------------------------------------------------------------------- default runs


@pytest.fixture(scope="module")
def one_run(prepared_2024, tmp_path_factory):
    """A finished two-week run of the demo league, copied into each test's project."""
    out = tmp_path_factory.mktemp("run") / "seed-0"
    d = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    d.update(weeks=2, trades={"weeks": []})
    run_engine(parse_config(d), prepared_2024, out)
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    return out


def put_run(run, where, mtime: float, status: str | None = None):
    shutil.copytree(run, where)
    meta = where / "run.json"
    if status:
        meta.write_text(json.dumps({**json.loads(meta.read_text()), "status": status}))
    os.utime(meta, (mtime, mtime))  # which batch is newest, without waiting for the clock
    return where


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "outputs").mkdir(parents=True)
    monkeypatch.setenv("FFBENCH_PROJECT_ROOT", str(root))
    return root


def test_default_runs_use_the_newest_batch_and_say_so(one_run, project, capsys):
    """Right after `./run.sh demo` (runs in outputs/batches/demo/runs, none in outputs/runs) the notebooks' default
    loads the demo's runs and prints which; a batch without a complete run is passed over; an older batch too."""
    batches = project / "outputs" / "batches"
    put_run(one_run, batches / "old" / "runs" / "seed-0", 1_000)
    put_run(one_run, batches / "demo" / "runs" / "seed-0", 2_000)
    put_run(one_run, batches / "demo" / "runs" / "seed-1", 2_100)
    put_run(one_run, batches / "running" / "runs" / "seed-0", 3_000, status="running")
    for given in (str(from_root("outputs/runs/*")), "outputs/runs/*"):  # as the notebooks pass it, and as written
        data = metrics.load_runs(given)
        assert sorted(os.path.relpath(p, project) for p in data["meta"]["path"]) == [
            "outputs/batches/demo/runs/seed-0", "outputs/batches/demo/runs/seed-1"]
        said = capsys.readouterr().out
        assert "no runs in outputs/runs/*; using the 2 runs of outputs/batches/demo/runs (the newest of 2" in said

    # runs in outputs/runs: the default is theirs, nothing else is said
    put_run(one_run, project / "outputs" / "runs" / "mine", 500)
    data = metrics.load_runs(str(from_root("outputs/runs/*")))
    assert [os.path.relpath(p, project) for p in data["meta"]["path"]] == ["outputs/runs/mine"]
    assert "using the" not in capsys.readouterr().out


def test_a_pattern_given_that_matches_nothing_stays_an_error(one_run, project):
    put_run(one_run, project / "outputs" / "batches" / "demo" / "runs" / "seed-0", 2_000)
    for given in (str(project / "outputs" / "runs" / "seed-*"), str(project / "outputs" / "runs"),
                  [str(from_root("outputs/runs/*"))]):  # a list is the user's own, even of the default
        with pytest.raises(FileNotFoundError, match="no run directories"):
            metrics.load_runs(given)


def test_default_runs_with_no_runs_anywhere_say_what_to_do(project):
    with pytest.raises(FileNotFoundError, match=r"nor in any batch under .*batches: run `./run.sh demo` first"):
        metrics.load_runs(str(from_root("outputs/runs/*")))


def test_standings_notebook_with_its_defaults_after_the_demo(one_run, tmp_path, data_dir):
    """notebooks/03_standings.ipynb, parameters untouched, run from notebooks/ (as JupyterLab starts its kernel) in
    a project whose only runs are the demo batch's: it finishes and its output says which runs it used."""
    import papermill as pm

    from ffbench_lib.runs.notebooks import KERNEL_ARGS
    from project_copy import OVERRIDES, copy_project

    project = copy_project(tmp_path / "ffbench")
    for seed in (0, 1):
        put_run(one_run, project / "outputs" / "batches" / "demo" / "runs" / f"seed-{seed}", 2_000 + seed)
    executed = tmp_path / "03.ipynb"
    with pytest.MonkeyPatch.context() as mp:
        for k in OVERRIDES:
            mp.delenv(k, raising=False)
        mp.setenv("FFBENCH_DATA_DIR", str(data_dir))
        pm.execute_notebook(str(project / "notebooks" / "03_standings.ipynb"), str(executed), kernel_name="python3",
                            cwd=str(project / "notebooks"), progress_bar=False, execution_timeout=600,
                            extra_arguments=KERNEL_ARGS)
    outputs = [o for c in json.loads(executed.read_text())["cells"] for o in c.get("outputs", [])]
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert "no runs in outputs/runs/*; using the 2 runs of outputs/batches/demo/runs" in text
    assert (project / "outputs" / "analysis" / "standings.csv").exists()


# --------------------------------------------------------------------------------------------- fake server CLI

FAKE = [sys.executable, "-m", "ffbench_lib.testing.fake_openai"]
OFFER = "DECISION: respond_to_offer\nYou manage Team A.\n"


def serve(*args: str) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen([*FAKE, "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=REPO)
    line = proc.stdout.readline()
    m = re.search(r"fake OpenAI-compatible server on (http://127\.0\.0\.1:\d+/v1) \(", line)
    assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
    return proc, m.group(1), line


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    return out, err


def test_fake_server_from_the_command_line_answers_litellm_and_stops_on_ctrl_c():
    import litellm

    proc, url, _ = serve()
    try:
        r = litellm.completion(model="openai/any-local-model", api_base=url, api_key="none",
                               messages=[{"role": "user", "content": OFFER}], timeout=60)
        answer = json.loads(r.choices[0].message.content)
        assert answer["action"] in ("accept", "reject") and answer["rationale"]
    finally:
        out, err = stop(proc)
    assert "stopped after 1 request(s); faults injected: none" in out


def test_fake_server_faults_from_the_command_line():
    proc, url, line = serve("--fault-rate", "1", "--faults", "429")
    try:
        assert "faults: 1 of answers from 429" in line
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": OFFER}]}).encode()
        req = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=60)
        assert err.value.code == 429
    finally:
        out, _ = stop(proc)
    assert "faults injected: 429 1" in out


def test_fake_server_bad_options_are_one_line_and_exit_2():
    r = subprocess.run([*FAKE, "--faults", "429,bogus"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "bogus: name one or more of 429,500" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([*FAKE, "--fault-rate", "2"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "2 is not a share between 0 and 1" in r.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([*FAKE, "--port", str(port)], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"error: cannot listen on 127.0.0.1:{port}: " in r.stderr and "--port" in r.stderr


# --------------------------------------------------------------------------------------------- batch re-run


def test_a_rerun_batch_says_its_runs_were_reused(tmp_path, data_dir, monkeypatch, capsys):
    from ffbench_lib.runs.batch import run_batch

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    spec = tmp_path / "batch.yaml"
    spec.write_text(yaml.safe_dump({"name": "t", "base": str(REPO / "params" / "demo.yaml"), "seeds": [0],
                                    "workers": 1, "out": str(tmp_path / "batch"), "analysis": False,
                                    "runner": "direct", "overrides": {"weeks": 1, "trades": {"weeks": []}}}))
    assert run_batch(spec, progress=False)["complete"] == 1
    capsys.readouterr()
    assert run_batch(spec, progress=True)["complete"] == 1
    err = capsys.readouterr().err
    assert "1 run(s) already complete in" in err and "reused" in err
    assert "1/1" in err and not re.search(r"\d run/s|\drun/s", err), err  # no rate: nothing was run


# --------------------------------------------------------------------------------------------- play desk


def play_league(**changes):
    d = yaml.safe_load((REPO / "params" / "play.yaml").read_text())
    d.update({"weeks": 1, "trades": {"weeks": []}, **changes})
    return parse_config(d)


def html_of(widget) -> str:
    import ipywidgets as w

    return "".join([getattr(widget, "value", "") if isinstance(widget, w.HTML) else ""]
                   + [html_of(c) for c in getattr(widget, "children", ())])


def test_board_shows_the_draft_so_far_and_a_pick_without_why_stores_none(prepared_2024, tmp_path):
    """The second question of the draft: the board lists the latest picks made so far (the other teams'), says
    what "unfilled starters" counts, never "thin league-wide"; the first pick, made with no "why", is recorded with
    no rationale."""
    league = play_league()
    run = tmp_path / "run"

    async def main():
        game = start_play(league, run, prepared_2024)
        desk = PlayDesk(game)
        try:
            await asyncio.wait_for(desk.asked.wait(), 120)
            first = html_of(desk.form.widget)
            desk.form.submit.click()  # the preselected player, no "why"
            await asyncio.wait_for(desk.asked.wait(), 120)
            return first, html_of(desk.form.widget), desk.pending.view
        finally:
            game.task.cancel()

    first, second, view = asyncio.run(main())
    assert "thin league-wide" not in first + second
    assert "unfilled starters: " in first and "(at " in first
    assert "picks_so_far" not in view  # the engine's view is unchanged; the desk shows the picks beside it
    picks = [json.loads(x) for x in (run / "decisions.jsonl").read_text().splitlines()
             if json.loads(x)["decision"] == "draft_pick"]
    mine = [r for r in picks if r["team"] == "You"]
    others = [r for r in picks if r["team"] != "You"]
    assert len(mine) == 1 and others
    assert f"Draft so far: {len(picks)} pick(s) (the last 12, newest first)" in second
    for r in others[-3:]:
        assert r["team"] in second
    assert mine[0]["raw_answer"].get("rationale") is None  # nobody wrote one: none is invented
    book = [json.loads(x) for x in (run / "human_answers.jsonl").read_text().splitlines()]
    assert all("rationale" not in b["answer"] for b in book)


def test_unfilled_starters_name_the_positions_and_the_league_count_appears_once_drafted():
    view = {"roster_summary": {"counts": {"QB": 0, "RB": 1}, "unfilled_starters": 3}, "legal_positions": ["QB"],
            "thin_positions": ["QB", "RB"], "drafted_by_position": {"QB": 0, "RB": 0}}
    text = needs_html(view)
    assert "unfilled starters: 3 (at QB, RB)" in text and "league-wide" not in text
    text = needs_html({**view, "thin_positions": [], "drafted_by_position": {"QB": 2, "RB": 5}})
    assert "unfilled starters: 3 &middot;" in text and "drafted league-wide: QB 2, RB 5" in text


def test_board_without_a_why_answers_no_rationale(prepared_2024, tmp_path):
    async def first_question():
        game = start_play(play_league(), tmp_path / "run", prepared_2024)
        try:
            p = await asyncio.wait_for(game.seat.next(), 120)
            return p.kind, p.view
        finally:
            game.task.cancel()

    kind, view = asyncio.run(first_question())
    sent: list[dict] = []
    DraftBoard(kind, view, sent.append).submit.click()
    assert sent and "rationale" not in sent[0]


# --------------------------------------------------------------------------------------------- refused answers


def test_a_refused_answers_file_is_one_line_in_a_notebook(prepared_2024, tmp_path, capsys):
    """human_answers.jsonl of another league (or edited) in the run folder: start_play refuses it with one line
    naming the file and the fix, and IPython shows just that line, no traceback."""
    from IPython.core.interactiveshell import InteractiveShell

    run = tmp_path / "run"
    run.mkdir()
    book = run / "human_answers.jsonl"
    book.write_text(json.dumps({"key": "k", "team": "You", "league": "another", "answer": {}}) + "\n")

    async def main():
        start_play(play_league(), run, prepared_2024)

    with pytest.raises(AnswersRefused, match=f"{re.escape(str(book))} holds answers given in another league"):
        asyncio.run(main())

    book.write_text("edited by hand\n" + json.dumps({"key": "k", "answer": {}}) + "\n")
    shell = InteractiveShell()
    try:
        capsys.readouterr()
        shell.run_cell(f"from ffbench_lib.agents.human import AnswerBook\nAnswerBook({str(book)!r})")
        shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    finally:
        InteractiveShell.clear_instance()
    assert shown == [f"AnswersRefused: {book} line 1: not an answer record; delete the file to answer every "
                     "question again, or play in another run_dir"]


def test_ctrl_c_stops_the_fake_server_and_a_run_started_with_sigint_ignored(tmp_path):
    """A process started with SIGINT ignored (a shell's background job, a test runner's worker) inherits SIG_IGN:
    Ctrl-C would do nothing. The fake server and the ffbench command take SIGINT back."""
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731 - the child's inherited state
    proc = subprocess.Popen([*FAKE, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO, preexec_fn=ignore)
    assert "fake OpenAI-compatible server on" in proc.stdout.readline()
    out, _ = stop(proc)
    assert "stopped after 0 request(s)" in out
    code = ("import signal, sys\nfrom ffbench_lib.cli import _ctrl_c_stops\n"
            "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n_ctrl_c_stops()\n"
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, preexec_fn=ignore,
                       timeout=120)
    assert r.stdout.strip() == "True", r.stderr
