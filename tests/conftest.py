"""Shared fixtures. Real data comes from FFBENCH_DATA_DIR (CI: ../shared/data); it is read, never copied."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["jupyterlab_helpers"]  # the `lab` fixture: a JupyterLab serving a copy of the project

REPO = Path(__file__).resolve().parents[1]


if os.environ.get("FFBENCH_DATA_DIR"):  # absolute, so subprocesses started in other folders find it too
    os.environ["FFBENCH_DATA_DIR"] = str(Path(os.environ["FFBENCH_DATA_DIR"]).resolve())


def _data_dir() -> Path | None:
    env = os.environ.get("FFBENCH_DATA_DIR")
    candidates = [Path(env)] if env else [REPO.parent / "shared" / "data"]
    for c in candidates:
        if (c / "nflverse").is_dir():
            return c.resolve()
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    d = _data_dir()
    if d is None:
        msg = "real NFL data not found: set FFBENCH_DATA_DIR to the folder holding nflverse/ (see docs/data.md)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return d


@pytest.fixture(scope="session")
def prepared_2024(data_dir, tmp_path_factory):
    from ffbench_lib.data.prepare import prepare_season

    return prepare_season(2024, "nflverse", data_dir, out=tmp_path_factory.mktemp("prep") / "nv2024")


@pytest.fixture(scope="session")
def prepared_2024_sdio(data_dir, tmp_path_factory):
    from ffbench_lib.data.prepare import prepare_season

    return prepare_season(2024, "sportsdataio", data_dir, out=tmp_path_factory.mktemp("prep") / "sd2024")
