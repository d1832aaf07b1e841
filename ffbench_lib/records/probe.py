"""``probe.json``: the knowledge probe's result (``ffbench probe``), written by :mod:`ffbench_lib.runs.probe` and
read by :mod:`ffbench_lib.analysis.contamination`. Extra keys are kept (``extra="allow"``): the writer records
the sample's design (strata, depth, top-5 players) for a reader, which needs only these fields."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ProbeModel(BaseModel):
    """One probed model: how much better than the projection it recalled the season (with its CI)."""

    model_config = ConfigDict(extra="allow")

    model: str
    agent_id: str
    recall_advantage: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    coverage: float | None = None
    remembers: bool | None = None
    verdict: str = ""


class ProbeFile(BaseModel):
    model_config = ConfigDict(extra="allow")

    season: int
    models: list[ProbeModel]
