"""Which run directories an analysis reads: a batch folder is its runs, a field batch's too, and a path that holds
no run is an error naming it (a mistyped path must not quietly shrink the sample)."""
from __future__ import annotations

import json
import shutil

import pytest

from engine_helpers import demo_league, run_engine
from ffbench_lib.records import field as field_record
from ffbench_lib.analysis import field, metrics


@pytest.fixture(scope="module")
def two_runs(prepared_2024, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for seed in (0, 1):
        run_engine(demo_league(seed=seed, weeks=2), prepared_2024, root / f"seed-{seed}")
    return root


def test_batch_folder_and_field_batch_folder_expand_to_their_runs(two_runs, tmp_path):
    batch = tmp_path / "batch"
    shutil.copytree(two_runs, batch / "runs")
    assert [p.name for p in metrics.expand_paths(batch)] == ["seed-0", "seed-1"]
    fb = tmp_path / "fieldbatch"  # out/runs/<candidate>/seed-N
    shutil.copytree(two_runs, fb / "runs" / "bot-vorp")
    (fb / field_record.MANIFEST).write_text(field_record.Manifest(
        name="f", seat="VORP-1", reference="bot:vorp", reference_dir="runs/bot-vorp",
        candidates={"bot:vorp": "runs/bot-vorp"}, seeds=[0, 1]).model_dump_json())
    assert [p.parent.name + "/" + p.name for p in metrics.expand_paths(fb)] == ["bot-vorp/seed-0", "bot-vorp/seed-1"]
    data = metrics.load_runs(fb)  # the seat keeps its agent, every other team plays as field:<agent>
    st = data["standings"]
    assert set(st.loc[st["team"] == "VORP-1", "agent"]) == {"bot:vorp"}
    assert set(st.loc[st["team"] != "VORP-1", "agent"]) == {"field:bot:vorp", "field:bot:adp", "field:bot:recent_form",
                                                          "field:bot:random"}
    assert metrics.describe_sample(data) == "2 runs: 1 candidate × 2 seeds of the 2024 season"


def test_a_path_without_runs_is_named_even_beside_good_ones(two_runs, tmp_path):
    with pytest.raises(FileNotFoundError, match="no run directories.*nowhere"):
        metrics.expand_paths([two_runs, tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        metrics.load_runs([str(two_runs / "seed-*"), tmp_path / "empty"])


def test_runs_a_field_batch_no_longer_lists_are_left_out_and_named(two_runs, tmp_path):
    fb = tmp_path / "fieldbatch"
    shutil.copytree(two_runs, fb / "runs" / "bot-vorp")
    (fb / field_record.MANIFEST).write_text(json.dumps({
        "name": "f", "seat": "VORP-1", "reference": "bot:vorp", "reference_dir": "runs/bot-vorp",
        "candidates": {"bot:vorp": "runs/bot-vorp"}, "seeds": [0]}))
    with pytest.warns(UserWarning, match=r"1 run\(s\) excluded \(1 not in its field.json\): bot-vorp/seed-1"):
        data = metrics.load_runs(fb)
    assert list(data["meta"]["seed"]) == [0]
    assert "seed 1 is not in" in data["excluded"]["reason"].iloc[0]


def test_figure_labels_keep_a_field_batch_baseline_apart_from_the_candidate():
    """plots.short dropped everything up to the first ':', so field:bot:adp (the baseline teams) read as the
    candidate bot:adp in every figure."""
    from ffbench_lib.present import plots

    assert plots.short("field:bot:adp") == "field: adp" and plots.short("bot:adp") == "adp"
    assert plots.short("field:llm:openai/gpt-5") == "field: gpt-5" and plots.short("llm:openai/gpt-5") == "gpt-5"
