"""Field mode: duplicate seasons. Every candidate agent plays the same seat of the same league of fixed baseline
bots on the same seeds (same schedule, draft slot and bot seeds), one candidate per league; its score on a seed is
its result minus the reference agent's in that seat on that seed (the duplicate-bridge idea), so schedule, slot and
opponent luck cancel.

A field batch (``design: field``, written by :mod:`ffbench_lib.batch`) keeps :data:`MANIFEST` beside its runs:
which team is the seat, which agent is the reference, and where each candidate's runs are.
"""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

#: the field batch's manifest, in the batch's ``out`` folder
MANIFEST = "field.json"
#: the folder (under ``runs/``) of the reference's leagues when the reference is not also a candidate
REFERENCE_DIR = "reference"


class Manifest(BaseModel):
    """What an analysis needs to score a field batch (``field.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    design: str = "field"
    name: str
    seat: str = Field(description="the base league's team whose agent each candidate replaces")
    reference: str = Field(description="agent id of the reference (its result per seed is subtracted)")
    reference_dir: str = Field(description="folder of the reference's runs, relative to the batch folder")
    candidates: dict[str, str] = Field(description="candidate agent id -> folder of its runs (relative to the "
                                                   "batch folder), in the spec's order")
    seeds: list[int]


def slug(agent_id: str) -> str:
    """A folder name for an agent id (``bot:adp`` -> ``bot-adp``, ``llm:openai/gpt-5`` -> ``llm-openai-gpt-5``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", agent_id).strip("-.") or "agent"


def candidate_dir(agent_id: str) -> str:
    """Where a candidate's runs live, relative to the batch folder: ``runs/<slug>``."""
    return f"runs/{slug(agent_id)}"


def find_manifest(run_dirs: list[str | Path]) -> tuple[Manifest, Path] | None:
    """The field manifest of these runs (searched two and three levels above each run: ``out/runs/<cand>/seed-N``)
    and the batch folder it is in; None when the runs are not a field batch's."""
    for d in run_dirs:
        for up in Path(d).resolve().parents[1:3]:
            f = up / MANIFEST
            if f.is_file():
                return Manifest.model_validate_json(f.read_text(encoding="utf-8")), up
    return None
