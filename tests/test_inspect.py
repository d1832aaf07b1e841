"""ffbench inside inspect_ai (the ``inspect`` extra, docs/inspect.md): ``inspect eval ffbench/exam`` scores each state
exactly as ``ffbench exam run`` does (same answers from the fake server, same scores in inspect's log and in the
ffbench folder beside it); ``inspect eval ffbench/season`` plays two model roles in a short synthetic season and
scores them by the season metrics of its run directory; an inspect agent plays a seat through ffbench's LLM agent;
bad input is one line; ffbench itself never imports inspect."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytest.importorskip("inspect_ai")

from engine_helpers import REPO  # noqa: E402
from ffbench_lib.testing.fake_openai import FakeOpenAIServer  # noqa: E402

INSPECT = str(Path(sys.executable).with_name("inspect"))
SECRET = "sk-inspect-test-0123456789abcdef"


def _env(srv: FakeOpenAIServer | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "INSPECT_DISPLAY": "none", "NO_COLOR": "1"})
    if srv is not None:  # inspect's OpenAI-compatible provider: openai-api/fake/<model> reads FAKE_BASE_URL/_API_KEY
        env.update({"FAKE_BASE_URL": srv.api_base, "FAKE_API_KEY": SECRET})
    return env


def inspect_cli(*args: str, env: dict[str, str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run([INSPECT, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if check:
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out


def dump(log_dir: Path, env, cwd) -> dict:
    (log,) = sorted(log_dir.glob("*.eval"))
    return json.loads(inspect_cli("log", "dump", str(log), env=env, cwd=cwd).stdout)


@pytest.fixture(scope="module")
def small_suite(prepared_2024, tmp_path_factory) -> Path:
    """One synthetic season's states: a start/sit and a draft pick per team (20 states)."""
    from ffbench_lib.runs.exam import build_suite

    root = tmp_path_factory.mktemp("inspect-exam")
    spec = {"name": "t-inspect", "base": str(REPO / "params" / "demo.yaml"), "seasons": [2024], "seeds": [1],
            "skills": {"start_sit": {"per_team_season": 1}, "draft_pick": {"per_team_season": 1}}}
    (root / "spec.yaml").write_text(yaml.safe_dump(spec))
    build_suite(root / "spec.yaml", root / "suite", prepared_for=lambda league: prepared_2024)
    return root / "suite"


def test_the_exam_task_scores_every_state_as_ffbench_exam_run_does(small_suite, tmp_path):
    from ffbench_lib.analysis.exams import load_results
    from ffbench_lib.runs.exam import load_suite, run_exam

    _, states = load_suite(small_suite)
    cands = tmp_path / "cands.yaml"
    with FakeOpenAIServer() as srv:
        env = _env(srv)
        inspect_cli("eval", "ffbench/exam", "-T", f"suite={small_suite}", "--model", "openai-api/fake/fake-0",
                    "--log-dir", str(tmp_path / "logs"), env=env, cwd=tmp_path)
        cands.write_text(yaml.safe_dump({"candidates": [{"name": "fake", "agent": {
            "kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base, "timeout_s": 30}}],
            "llm": {"cache_dir": str(tmp_path / "cache")}}))
        ours = run_exam(small_suite, cands, tmp_path / "ffbench").set_index("state_id")
    log = dump(tmp_path / "logs", env, tmp_path)
    assert log["status"] == "success" and log["eval"]["task"] == "ffbench/exam"
    got = {s["id"]: s["scores"]["exam_score"] for s in log["samples"]}
    assert set(got) == {s["state_id"] for s in states} and len(got) == 20  # one sample per state
    for state_id, sc in got.items():  # the same answers (the fake server's), the exam's own scores
        assert sc["value"] == {"score": ours.loc[state_id, "score"], "regret": ours.loc[state_id, "regret"],
                               "repaired": float(ours.loc[state_id, "decided_by"] != "agent")}
        assert sc["metadata"]["best_possible"] == ours.loc[state_id, "best_possible"]
    assert (ours["decided_by"] == "agent").mean() > 0.9
    metrics = {s["name"]: s["metrics"] for s in log["results"]["scores"]}
    for skill in ("start_sit", "draft_pick"):  # the mean per skill
        assert metrics["score"][f"grouped_{skill}"]["value"] == pytest.approx(
            ours[ours["skill"] == skill]["score"].mean())
    # the ffbench folder beside the log: results our analysis reads, the same rows as ffbench exam run's
    (folder,) = (tmp_path / "logs").glob("*.ffbench")
    beside = load_results(folder).set_index("state_id").loc[ours.index]
    for col in ("skill", "answer", "applied", "decided_by", "score", "best_possible", "regret"):
        assert beside[col].tolist() == ours[col].tolist(), col
    assert set(beside["agent_id"]) == {"llm:openai-api/fake/fake-0"}
    calls = [json.loads(x) for x in (folder / "llm_calls.jsonl").open()]
    assert {c["state_id"] for c in calls} == set(got) and all(c["exam"] == "t-inspect" for c in calls)
    assert not any(SECRET in p.read_text(errors="replace") for p in folder.iterdir())  # the key never written


def test_the_season_task_plays_two_model_roles_and_scores_their_season_metrics(tmp_path, prepared_2024):
    from ffbench_lib.analysis import metrics

    raw = yaml.safe_load((REPO / "params" / "demo.yaml").read_text())
    raw.update({"weeks": 3, "trades": {**raw["trades"], "weeks": [2]}})
    config = tmp_path / "short.yaml"
    config.write_text(yaml.safe_dump(raw))
    with FakeOpenAIServer() as srv:
        env = _env(srv)
        inspect_cli("eval", "ffbench/season", "-T", f"config={config}", "-T", "seeds=1",
                    "--model", "openai-api/fake/fake-0", "--model-role", "seat1=openai-api/fake/fake-a",
                    "--model-role", "seat2=openai-api/fake/fake-b", "--log-dir", str(tmp_path / "logs"),
                    env=env, cwd=tmp_path)
    log = dump(tmp_path / "logs", env, tmp_path)
    assert log["status"] == "success" and [s["id"] for s in log["samples"]] == ["seed-1"]  # one sample per seed
    (score,) = log["samples"][0]["scores"].values()
    run = Path(score["metadata"]["run"])
    assert run.parent.name.endswith(".ffbench") and run.parent.parent == tmp_path / "logs"  # beside the log
    runs = metrics.load_runs(run)
    st = metrics.standings(runs).set_index("team")
    ss = metrics.start_sit_season(runs).set_index("team")
    for role, team, model in (("seat1", "VORP-1", "fake-a"), ("seat2", "ADP-1", "fake-b")):
        assert st.loc[team, "agent"] == f"llm:openai-api/fake/{model}"
        assert score["value"][f"{role}_points_for"] == st.loc[team, "points_for"]
        assert score["value"][f"{role}_win_rate"] == st.loc[team, "win_rate"]
        assert score["value"][f"{role}_rank"] == st.loc[team, "rank"]
        assert score["value"][f"{role}_left_on_table"] == ss.loc[team, "left_on_table"]
    assert st.drop(index=["VORP-1", "ADP-1"])["agent"].str.startswith("bot:").all()  # bots fill the rest
    calls = [json.loads(x) for x in (run / "llm_calls.jsonl").open()]
    assert {c["team"] for c in calls} == {"VORP-1", "ADP-1"} and all(c["problems"] is None for c in calls[:5])
    decisions = pd.read_json(run / "decisions.jsonl", lines=True)
    mine = decisions[decisions["team"].isin(["VORP-1", "ADP-1"])]
    assert len(mine) and (mine["decided_by"] == "agent").mean() > 0.9
    assert not any(SECRET in p.read_text(errors="replace") for p in run.iterdir() if p.suffix in (".jsonl", ".yaml",
                                                                                                  ".json"))


def test_an_inspect_agent_plays_a_seat_through_ffbenchs_llm_agent(small_suite):
    """An inspect Agent (here one answering from the fake server's policy) is asked each state's prompt and its
    final output is parsed, checked and, when invalid, re-asked like an LLM answer."""
    from inspect_ai.agent import AgentState, agent
    from inspect_ai.model import ChatMessageAssistant, ModelOutput

    from ffbench.seat import InspectSeat
    from ffbench_lib.agents.wiring import RunContext
    from ffbench_lib.config.league import LLMSettings
    from ffbench_lib.llm.client import Budget
    from ffbench_lib.runs.exam import _answer, load_suite, result_row
    from ffbench_lib.testing.fake_openai import policy

    asked: list[int] = []

    @agent
    def manager():
        async def execute(state: AgentState) -> AgentState:
            asked.append(len(state.messages))
            text = "no idea" if len(asked) == 1 else json.dumps(policy(state.messages[1].text))
            state.output = ModelOutput.from_message(ChatMessageAssistant(content=text))
            state.messages.append(state.output.message)
            return state
        return execute

    meta, states = load_suite(small_suite)
    ledger: list[dict] = []
    seat = InspectSeat("me", 0, manager(), name="manager")
    seat.bind(RunContext(LLMSettings(), None, Budget(None), ledger.append))
    assert seat.agent_id == "python:inspect.manager"
    rows = []
    for st in states[:4]:
        answer, problems = asyncio.run(_answer(seat, st, st["view"]))
        rows.append(result_row(meta, st, "manager", seat.agent_id, answer, problems))
    assert asked[:2] == [2, 4]  # the first answer was no JSON: re-asked with it and the problem
    assert ledger[0]["problems"] and ledger[1]["reask"] == 1 and ledger[1]["problems"] is None
    assert all(r["decided_by"] == "agent" for r in rows) and len(ledger) == 5


def test_a_missing_suite_or_config_is_one_line_naming_the_parameter(tmp_path):
    env = {**_env(), "INSPECT_DISPLAY": "plain"}  # "none" would not show the error either
    cases = [(["ffbench/exam", "-T", f"suite={tmp_path / 'nope'}"], "-T suite="),
             (["ffbench/exam"], "-T suite=SUITE_DIR"),
             (["ffbench/season", "-T", f"config={tmp_path / 'nope.yaml'}"], "-T config="),
             (["ffbench/season", "-T", f"config={REPO / 'params' / 'demo.yaml'}", "-T", "weeks=2"], "trades.weeks")]
    for args, says in cases:
        out = inspect_cli("eval", *args, "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs"), env=env,
                          cwd=tmp_path, check=False)
        text = " ".join((out.stdout + out.stderr).split())
        assert out.returncode != 0 and says in text and "Traceback" not in text, text[-2000:]


def test_ffbench_runs_without_inspect_installed():
    """The core never imports inspect: with inspect_ai made unimportable, the CLI, exams and seasons still load."""
    code = ("import sys; sys.modules['inspect_ai'] = None\n"
            "import ffbench_lib.cli, ffbench_lib.runs.exam, ffbench_lib.runs.season, ffbench_lib.agents.llm\n"
            "import ffbench_lib.agents.wiring, ffbench_lib.analysis.exams, ffbench_lib.testing.fake_openai\n"
            "assert not [m for m in sys.modules if m.startswith('inspect_ai') and sys.modules[m] is not None]\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert out.returncode == 0, out.stderr[-2000:]
