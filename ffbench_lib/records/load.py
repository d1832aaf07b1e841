"""The one read-only way to read a run directory: ``run.json`` as :class:`~.run.RunMeta`, ``config.yaml`` as
written, the tables (:mod:`.tables`), and the logs line by line. :class:`ffbench_lib.runs.rundir.RunDir` (the
writer) reads through it too; analysis reads nothing else."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ffbench_lib.records.run import RunMeta
from ffbench_lib.records.tables import table_frame


class RunFiles:
    """A run directory, read only."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def file(self, name: str) -> Path:
        return self.path / name

    def exists(self) -> bool:
        """Whether the folder holds a run (its run.json)."""
        return self.file("run.json").exists()

    def meta(self) -> RunMeta:
        """run.json, typed; :class:`~.run.RunMetaError` (naming the file) for one that is not a run's."""
        return RunMeta.read(self.file("run.json"))

    def config(self) -> dict[str, Any]:
        """config.yaml as the run wrote it (the resolved league config), as plain data."""
        return yaml.safe_load(self.file("config.yaml").read_text(encoding="utf-8"))

    def table(self, name: str) -> pd.DataFrame:
        return pd.read_parquet(self.file(f"{name}.parquet"))

    def table_or_empty(self, name: str) -> pd.DataFrame:
        """The table, or an empty one with its columns when the run did not write it (an older run)."""
        f = self.file(f"{name}.parquet")
        return pd.read_parquet(f) if f.exists() else table_frame(name, [])

    def decisions(self) -> list[dict[str, Any]]:
        """Every decisions.jsonl line, as written (see :class:`~.decision.DecisionLine`)."""
        return self.read_log("decisions.jsonl")

    def llm_calls(self) -> list[dict[str, Any]]:
        return self.read_log("llm_calls.jsonl")

    def read_log(self, log: str) -> list[dict[str, Any]]:
        if not self.file(log).exists():
            return []
        with open(self.file(log), encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
