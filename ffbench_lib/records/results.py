"""``results.json``: what a batch, an exam or a report found, in one documented, versioned schema a leaderboard can
merge (:class:`Results`; its JSON schema: :func:`schema`, committed as ``docs/results.schema.json``). ``ffbench
batch`` writes it beside ``batch_summary.json``, ``ffbench exam run`` beside ``exam_results.parquet``, ``ffbench
report`` beside its page (``<page>.results.json``); :mod:`ffbench_lib.analysis.results` builds it.

A record names its agents (with their sample sizes and cost), every metric with its interval and the method of it,
every test (the pair, the estimate, p and the adjusted p), and the data and code fingerprints of the runs or suite
it was computed from, so two files can be merged only where they agree on what they measured. Numbers are as the
tables show them (ratings to 6 places, an exam's regrets to 2, as its skill table); nothing is timestamped, so the
same inputs give the same bytes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT = "ffbench-results"
#: the schema's version: a reader refuses another (the schema is in docs/results.md)
VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentEntry(_Record):
    agent_id: str = Field(description="bot:<strategy>, llm:<model>, python:<name> or human:<name> (a field "
                                      "batch's baseline: field:<id>, kind other)")
    name: str | None = Field(None, description="an exam's candidate name (metrics and tests name it): two "
                                               "candidates may share an agent id")
    kind: Literal["bot", "llm", "python", "human", "other"]
    n: int = Field(ge=0, description="team-seasons (runs) or states answered (exams)")
    cost_usd: float | None = Field(None, description="what its model calls cost (None: unknown or unpriced)")


class Metric(_Record):
    name: str = Field(description="e.g. rating (Bradley-Terry), points_per_team_season, mean_regret")
    agent: str
    value: float | None
    low: float | None = Field(None, description="the interval's lower end (None: no interval)")
    high: float | None = None
    interval: str | None = Field(None, description="how the interval was computed (None: none)")
    n: int = Field(ge=0, description="the units the value averages (runs, or states)")
    skill: str | None = None
    sport: str | None = None
    note: str | None = None


class Test(_Record):
    name: str = Field(description="what was compared, e.g. points_for (paired by run) or regret (same states)")
    a: str
    b: str
    estimate: float | None = Field(description="a - b")
    low: float | None = None
    high: float | None = None
    p: float | None
    p_adjusted: float | None = Field(description="Holm-adjusted over the family the source names")
    significant: bool
    n: int = Field(ge=0)
    method: str
    skill: str | None = None
    sport: str | None = None


class Fingerprints(_Record):
    data: list[str] = Field(description="the prepared data's fingerprints (sorted)")
    code: list[str] = Field(description="the ffbench code's fingerprints (sorted)")


class Results(_Record):
    format: Literal["ffbench-results"]
    version: Literal[1]
    source: Literal["batch", "exam", "report"]
    name: str
    sample: dict[str, Any] = Field(description="runs, seeds, seasons (batch, report); states, team_seasons (exam)")
    agents: list[AgentEntry]
    metrics: list[Metric]
    tests: list[Test]
    fingerprints: Fingerprints
    notes: list[str] = Field(default_factory=list, description="what the numbers leave out, in words")


def schema() -> dict[str, Any]:
    """The JSON schema every ``results.json`` validates against."""
    return Results.model_json_schema()


def write(path: str | Path, results: Results) -> Path:
    """``results`` to ``path`` (atomically), as JSON with sorted keys."""
    from ffbench_lib.core.atomic import write_json

    write_json(Path(path), results.model_dump(mode="json"))
    return Path(path)
