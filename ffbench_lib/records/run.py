"""``run.json``: what a run is and how it stopped, written by the runner (and the importer of recorded runs),
read by the CLI, batches, reports and analysis through :class:`RunMeta` only."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The newest ``run.json`` format this code reads and writes.
FORMAT = 1

Status = Literal["running", "complete", "failed", "interrupted", "stopped_budget", "waiting_for_week"]


class RunMetaError(ValueError):
    """A ``run.json`` that cannot be read as a run's; ``str()`` names the file and the fix."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Budget(_Record):
    limit_usd: float = Field(description="the spend limit in force (llm.budget_usd; a resume may have raised it)")
    spent_usd: float = Field(description="what the run's live LLM calls cost so far, rounded to 6 decimals")


class Resume(_Record):
    from_status: str | None = Field(description="the run's status when it was resumed")
    from_phase: str = Field(description="the checkpoint's phase it resumed from (``new``: none yet)")
    changes: dict[str, list[Any]] = Field(description="the resumable config keys it changed, as [before, now]")


class DataUpdate(_Record):
    at_phase: str = Field(description="the phase the live run was at when its data grew")
    fingerprint: list[str | None] = Field(description="the prepared data's fingerprint [before, now]")
    played_weeks: int = Field(description="the weeks with results in the new data")


class Live(_Record):
    played_weeks: int = Field(description="the weeks with results in the data the run last played with")
    data_updates: list[DataUpdate] | None = Field(None, description="every time the data grew between reruns")
    waiting_for_week: int | None = Field(None, description="the week the run waits for (status waiting_for_week)")
    waiting_for: Literal["results", "injury_report"] | None = Field(
        None, description="what it waits for: the week's results, or its final injury report before deciding it")


class KnowledgeCutoff(BaseModel):
    """One model with a ``knowledge_cutoff`` against the season's dates (data.notices.knowledge_cutoffs)."""

    model_config = ConfigDict(extra="allow")  # the season's dates (season_end, week_end, ...) as prepared

    model: str
    knowledge_cutoff: str
    teams: list[str]
    may_know_results: bool | None = None
    weeks_before_cutoff: int = 0
    warning: str | None = None


class RunMeta(_Record):
    """``run.json``. Optional fields are written only when they apply (``model_dump(exclude_unset=True)``, which
    :meth:`dump` uses), so a run's file holds exactly the keys it always did.

    Formats: none (before format 1): the same fields without ``format``, read as format 1; imported runs hold
    ``imported_from``, ``unsupported_metrics`` and ``checks`` and no fingerprints. 1: adds ``format``.
    """

    format: int = Field(FORMAT, description="the run.json format (see the class docstring); absent before 1")
    run_id: str = Field(description="<league name>-s<seed>")
    seed: int = Field(description="the league's seed")
    season: int = Field(description="the NFL season played")
    status: Status = Field(description="how the run stands: running, or how it stopped")
    phase: str = Field(description="the last completed phase (``draft:round:N``, ``week:N``, ``decided:N``)")
    agents: dict[str, str] = Field(description="team -> agent id (``bot:adp``, ``llm:<model>``, ``human:<name>``)")
    data_fingerprint: str | None = Field(None, description="the prepared data's fingerprint (its manifest's)")
    code_fingerprint: str | None = Field(None, description="the ffbench code's fingerprint: a resume needs the same")
    reason: str | None = Field(None, description="why the run stopped (any status but complete and running)")
    budget: Budget | None = Field(None, description="only with llm.budget_usd: the limit and the spend")
    resumes: list[Resume] | None = Field(None, description="every resume of the run and the config keys it changed")
    live: Live | None = Field(None, description="live runs only (ffbench live)")
    unavailable: list[str] | None = Field(None, description="inputs the season was prepared without (2025: "
                                                            "injury_report)")
    unavailable_notes: dict[str, str] | None = Field(None, description="why each unavailable input is missing")
    knowledge_cutoffs: list[KnowledgeCutoff] | None = Field(
        None, description="only when a team's model has a knowledge_cutoff: may it know the season's results")
    imported_from: str | None = Field(None, description="imported runs: the recorded simulation folder")
    unsupported_metrics: list[str] | None = Field(None, description="imported runs: metrics their logs cannot give")
    checks: dict[str, Any] | None = Field(None, description="imported runs: what the importer checked and found")

    def dump(self) -> dict[str, Any]:
        """The JSON object run.json holds: only the fields that were set (and ``format``)."""
        return {"format": self.format, **self.model_dump(mode="json", exclude_unset=True)}

    @classmethod
    def read(cls, path: str | Path) -> RunMeta:
        """``path`` (a run.json) as a RunMeta; an old file (no ``format``) reads as format 1. :class:`RunMetaError`
        names the file for one that is unreadable, of a newer format, or not a run's."""
        f = Path(path)
        try:
            raw = json.loads(f.read_bytes())
        except (OSError, ValueError) as exc:
            raise RunMetaError(f"{f}: unreadable ({_first(exc)}); the run directory is damaged: run it again "
                               "with another --out") from None
        return cls.parse(raw, f)

    @classmethod
    def parse(cls, raw: Any, where: str | Path = "run.json") -> RunMeta:
        if not isinstance(raw, dict):
            raise RunMetaError(f"{where}: not a JSON object; the run directory is damaged: run it again with "
                               "another --out")
        fmt = raw.get("format", FORMAT)
        if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1 or fmt > FORMAT:
            raise RunMetaError(f"{where}: run.json format {fmt!r} is not one this ffbench reads (formats 1 to "
                               f"{FORMAT}); it was written by a newer ffbench: upgrade ffbench to read it")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e["loc"]) or "(top level)"
            raise RunMetaError(f"{where}: {loc}: {e['msg']}; it is not a run.json of ffbench (damaged or "
                               "edited): run it again with another --out") from None


def _first(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
