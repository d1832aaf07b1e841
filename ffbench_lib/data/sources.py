"""The data sources behind one interface: ``get_source(name, data_dir)`` returns an object with
``weekly(season)``, ``schedule(season)``, ``injuries(season)``, ``byes(season)`` and ``season_projections(season)``;
every method returns a tidy pandas table in the canonical schema (:mod:`ffbench_lib.data.schema`)."""
from __future__ import annotations

import os
from pathlib import Path

from ffbench_lib.data.base import DataSource, DataError
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.sportsdataio import SportsDataIODir

SOURCES = {"nflverse": NflverseDir, "sportsdataio": SportsDataIODir}


def default_data_dir() -> Path:
    """``$FFBENCH_DATA_DIR`` (or the project's ``../shared/data`` / ``outputs/data``), or a clear error."""
    from ffbench_lib.core.paths import find_data_dir

    found = find_data_dir()
    if found is None:
        raise DataError("FFBENCH_DATA_DIR is not set: point it at the data directory (the folder holding "
                        "nflverse/, sportsdataio/, projections/), or run `ffbench data download` first")
    return found


def get_source(name: str, data_dir: str | os.PathLike[str] | None = None) -> DataSource:
    if name not in SOURCES:
        raise DataError(f"source: unknown data source {name!r}; allowed: {', '.join(SOURCES)}")
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    return SOURCES[name](root)
