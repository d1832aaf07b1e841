"""``results.json``: ``ffbench batch``, ``ffbench exam run`` and ``ffbench report`` each write one that validates
against the versioned schema (committed as docs/results.schema.json, regenerated from the models), holding every
agent, its metrics with intervals, the pair tests and the data and code fingerprints; the schema refuses a record
of another version or with fields it does not know."""
from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from engine_helpers import REPO
from ffbench_lib.cli import main as cli
from ffbench_lib.records.results import VERSION, schema

SCHEMA = REPO / "docs" / "results.schema.json"


def valid(path) -> dict:
    record = json.loads(path.read_text())
    jsonschema.validate(record, json.loads(SCHEMA.read_text()))
    assert record["format"] == "ffbench-results" and record["version"] == VERSION
    return record


def test_the_committed_schema_is_the_models():
    assert json.loads(SCHEMA.read_text()) == schema(), (
        "docs/results.schema.json is stale: regenerate it from ffbench_lib.records.results.schema()")


def test_the_schema_refuses_another_version_and_unknown_fields():
    good = {"format": "ffbench-results", "version": VERSION, "source": "exam", "name": "x", "sample": {},
            "agents": [], "metrics": [], "tests": [], "fingerprints": {"data": [], "code": []}}
    jsonschema.validate(good, schema())
    missing = {k: v for k, v in good.items() if k not in ("format", "version")}
    for bad in ({**good, "version": VERSION + 1}, {**good, "extra": 1}, {**good, "source": "season"}, missing,
                {**good, "metrics": [{"name": "rating", "agent": "a", "value": "high", "n": 1}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema())


def test_a_batch_and_its_report_write_results_that_validate(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    spec = {"name": "t", "base": str(REPO / "params" / "demo.yaml"), "seeds": [0, 1], "workers": 1,
            "out": str(tmp_path / "batch"), "analysis": False, "overrides": {"weeks": 3, "trades": {"weeks": [2]}}}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(spec))
    assert cli(["batch", str(tmp_path / "b.yaml"), "--quiet"]) == 0
    rec = valid(tmp_path / "batch" / "results.json")
    agents = {a["agent_id"] for a in rec["agents"]}
    assert agents == {"bot:adp", "bot:vorp", "bot:recent_form", "bot:random"} and rec["source"] == "batch"
    assert all(a["n"] > 0 and a["cost_usd"] == 0.0 for a in rec["agents"])
    ratings = [m for m in rec["metrics"] if m["name"] == "rating"]
    assert {m["agent"] for m in ratings} == agents and all(m["low"] <= m["value"] <= m["high"] for m in ratings)
    assert len(rec["tests"]) == 6 and all(0 <= t["p"] <= 1 for t in rec["tests"])
    assert rec["sample"]["runs"] == 2 and rec["fingerprints"]["data"] and rec["fingerprints"]["code"]
    spec["seeds"] = [0]  # a second, smaller batch into the same folder: its results are its own run
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(spec))
    assert cli(["batch", str(tmp_path / "b.yaml"), "--quiet"]) == 0
    assert valid(tmp_path / "batch" / "results.json")["sample"]["runs"] == 1
    spec["seeds"] = [0, 1]
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(spec))
    assert cli(["batch", str(tmp_path / "b.yaml"), "--quiet"]) == 0
    assert cli(["report", str(tmp_path / "batch"), "--out", str(tmp_path / "page.html")]) == 0
    page = valid(tmp_path / "page.results.json")
    assert page["source"] == "report" and page["metrics"] == rec["metrics"] and page["tests"] == rec["tests"]


def test_an_exam_writes_results_that_validate(tmp_path, prepared_2024, data_dir, monkeypatch, capsys):
    from ffbench_lib.runs.exam import build_suite

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    spec = {"name": "r-exam", "base": str(REPO / "params" / "demo.yaml"), "seasons": [2024], "seeds": [1],
            "skills": {"start_sit": {"per_team_season": 2}, "draft_pick": {"per_team_season": 2}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    build_suite(tmp_path / "spec.yaml", tmp_path / "suite", prepared_for=lambda league: prepared_2024)
    assert cli(["exam", "run", str(tmp_path / "suite"), str(REPO / "params" / "exam_bots.yaml"), "--out",
                str(tmp_path / "r")]) == 0
    rec = valid(tmp_path / "r" / "results.json")
    assert rec["source"] == "exam" and rec["sample"]["states"] == 40
    regrets = {(m["agent"], m["skill"]) for m in rec["metrics"] if m["name"] == "mean_regret"}
    assert regrets == {(a, s) for a in ("adp", "vorp", "recent_form", "random") for s in ("start_sit", "draft_pick")}
    assert {(a["name"], a["agent_id"]) for a in rec["agents"]} == {(n, f"bot:{n}") for n in ("adp", "vorp",
                                                                                          "recent_form", "random")}
    lineup = {(t["a"], t["b"]): t for t in rec["tests"] if t["skill"] == "start_sit"}
    assert lineup[("adp", "vorp")]["estimate"] == 0.0 and len(rec["tests"]) == 12
    assert rec["fingerprints"]["code"] and rec["fingerprints"]["data"]
    assert any("draft pick" in n for n in rec["notes"])  # the scoring rules (and the draft's caveat) go with it


def test_a_batch_with_a_failed_run_says_it_left_it_out(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    spec = {"name": "t", "base": str(REPO / "params" / "demo.yaml"), "seeds": [0, 1], "workers": 1,
            "out": str(tmp_path / "batch"), "analysis": False, "overrides": {"weeks": 3, "trades": {"weeks": [2]}},
            "seed_overrides": {1: {"weeks": 99}}}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(spec))
    assert cli(["batch", str(tmp_path / "b.yaml"), "--quiet"]) == 1
    rec = valid(tmp_path / "batch" / "results.json")
    assert rec["sample"]["runs"] == 1 and rec["sample"]["left_out"] == 1
    assert any("1 run(s) not complete, left out: seed 1" in n for n in rec["notes"])
