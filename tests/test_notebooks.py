"""Every notebook executes under papermill on real data and writes what it promises."""
import json

import pytest

from ffbench_lib.notebooks import execute


@pytest.mark.slow
def test_prepare_notebook_executes(data_dir, tmp_path):
    out = tmp_path / "prep"
    nb = execute("01_prepare_data.ipynb", tmp_path / "01.ipynb",
                 {"season": 2023, "source": "sportsdataio", "data_dir": str(data_dir), "out": str(out),
                  "scoring": "half_ppr"}, timeout_s=600)
    for f in ("players.parquet", "weekly.parquet", "manifest.json", "points_by_position.png",
              "projected_vs_actual.svg", "projection_accuracy.csv"):
        assert (out / f).exists(), f
    assert json.loads((out / "manifest.json").read_text())["scoring"]["receptions"] == 0.5
    cells = json.loads(nb.read_text())["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert any(c.get("metadata", {}).get("tags") == ["injected-parameters"] for c in cells)
