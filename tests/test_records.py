"""The typed records (ffbench_lib/records): run.json as RunMeta (its writer and every reader; old files load, a
newer format is refused), the decisions.jsonl line model, and the records layer importing only what it may."""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from engine_helpers import REPO, demo_league, run_engine
from ffbench_lib.analysis import metrics
from ffbench_lib.core.atomic import write_json
from ffbench_lib.records.decision import DecisionLine, is_decision
from ffbench_lib.records.load import RunFiles
from ffbench_lib.records.run import FORMAT, RunMeta, RunMetaError
from ffbench_lib.runs.rundir import CheckpointError


def _league():
    """A short bot league with a trade week (negotiations in the log) and a budget (run.json's ``budget``)."""
    league = demo_league(seed=2, weeks=4, trades=demo_league().trades.model_copy(update={"weeks": [2]}))
    return league.model_copy(update={"llm": league.llm.model_copy(update={"budget_usd": 5.0})})


@pytest.fixture(scope="module")
def season(prepared_2024, tmp_path_factory):
    out = tmp_path_factory.mktemp("records") / "run"
    run_engine(_league(), prepared_2024, out)
    return out


@pytest.fixture(scope="module")
def imported(imported_runs):
    """A recorded real run, imported once per test run (the reference runs are in the real data only: marks its
    tests realdata). Shared: read it, never write into it."""
    return imported_runs / "simulation_20251020_174956"


def _round_trips(run_json: Path, tmp_path: Path) -> None:
    """RunMeta reads the file and writes it back byte for byte (run.json is written sorted, indented)."""
    meta = RunMeta.read(run_json)
    assert meta.dump() == json.loads(run_json.read_bytes())
    again = tmp_path / "again.json"  # beside the test, never into a shared run
    write_json(again, meta.dump())
    assert again.read_bytes() == run_json.read_bytes()


def test_run_json_round_trips_through_run_meta(season, tmp_path):
    _round_trips(season / "run.json", tmp_path)
    meta = RunFiles(season).meta()
    assert (meta.format, meta.status, meta.phase, meta.seed) == (FORMAT, "complete", "week:4", 2)
    assert meta.budget is not None and meta.budget.limit_usd == 5.0 and meta.code_fingerprint
    assert set(meta.dump()) == {"format", "run_id", "seed", "season", "status", "phase", "agents", "budget",
                                "data_fingerprint", "code_fingerprint"}  # only the fields that apply


def test_an_imported_run_json_round_trips_through_run_meta(imported, tmp_path):
    _round_trips(imported / "run.json", tmp_path)
    imp = RunFiles(imported).meta()
    assert imp.imported_from and imp.checks["final_standings_match"] is True and imp.data_fingerprint is None


def test_an_old_run_json_without_format_loads(season, tmp_path):
    old = json.loads((season / "run.json").read_text())
    del old["format"]
    f = tmp_path / "run.json"
    write_json(f, old)
    meta = RunMeta.read(f)
    assert meta.format == 1 and meta.dump() == {"format": 1, **old}


def test_a_newer_format_is_refused_naming_the_file_and_the_format(season, prepared_2024, tmp_path):
    run = tmp_path / "future"
    run.mkdir()
    for name in ("config.yaml", "standings.parquet"):
        (run / name).write_bytes((season / name).read_bytes())
    write_json(run / "run.json", {**json.loads((season / "run.json").read_text()), "format": FORMAT + 1})
    with pytest.raises(RunMetaError, match=rf"{run / 'run.json'}: run.json format {FORMAT + 1} .*upgrade ffbench"):
        RunFiles(run).meta()
    with pytest.raises(RunMetaError, match="format"):  # analysis refuses it too, never reads it as format 1
        metrics.load_runs(run)
    copy = tmp_path / "resumed"
    shutil.copytree(season, copy)
    write_json(copy / "run.json", {**json.loads((season / "run.json").read_text()), "format": FORMAT + 1})
    before = (copy / "run.json").read_bytes()
    with pytest.raises(CheckpointError, match=rf"cannot resume {copy}: .*run.json format {FORMAT + 1} "):
        run_engine(_league(), prepared_2024, copy, resume=True)  # never resumed and rewritten as format 1
    assert (copy / "run.json").read_bytes() == before
    write_json(run / "run.json", {"run_id": "x", "status": "done"})
    with pytest.raises(RunMetaError, match=r"run.json: (seed|season|status|phase|agents): "):
        RunMeta.read(run / "run.json")


def _decision_lines_validate(lines):
    kinds = {d["decision"] for d in lines}
    assert {"draft_shortlist", "draft_pick", "set_lineup", "propose_trade"} <= kinds
    for d in lines:
        assert DecisionLine.model_validate(d).model_dump(exclude_unset=True) == d


def test_every_decision_line_validates_and_keeps_every_key(season):
    lines = RunFiles(season).decisions()
    _decision_lines_validate(lines)
    assert any(d.get("negotiation") for d in lines)
    assert not is_decision({**lines[0], "applied": "superseded"}) and is_decision(lines[0])


def test_every_imported_decision_line_validates_and_keeps_every_key(imported):
    _decision_lines_validate(RunFiles(imported).decisions())


def _ffbench_imports(layer: str) -> list[tuple[str, str]]:
    """(file, layer imported) of every ffbench import in ``layer``: module level, inside functions and under
    TYPE_CHECKING alike."""
    out = []
    for f in sorted((REPO / "ffbench_lib" / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            out += [(str(f.relative_to(REPO)), n.split(".")[1]) for n in names
                    if n.startswith("ffbench_lib.") and n.count(".") >= 1]
    return out


def test_records_import_only_core_sport_config_and_analysis_never_the_game_or_runs():
    bad = [x for x in _ffbench_imports("records") if x[1] not in {"core", "sport", "config", "records"}]
    bad += [x for x in _ffbench_imports("analysis") if x[1] in {"game", "agents", "llm", "runs"}]
    assert not bad, bad
