"""``field.json``: a field batch's manifest (which team is the seat, which agent the reference, where each
candidate's runs are), written by :mod:`ffbench_lib.runs.batch` and read by :mod:`ffbench_lib.analysis.field`,
and how a run finds the manifest of its batch."""
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
    seasons: list[str] | None = Field(None, description="a field study's seasons (<sport>-<season>, a batch with "
                                                        "seasons): each folder holds <season>/seed-N; absent: "
                                                        "seed-N")

    def dump(self) -> str:
        """``field.json``'s text: a batch without seasons writes no ``seasons`` key (its file as it always was)."""
        return self.model_dump_json(indent=2, exclude_none=True) + "\n"


def slug(agent_id: str) -> str:
    """A folder name for an agent id (``bot:adp`` -> ``bot-adp``, ``llm:openai/gpt-5`` -> ``llm-openai-gpt-5``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", agent_id).strip("-.") or "agent"


def candidate_dir(agent_id: str) -> str:
    """Where a candidate's runs live, relative to the batch folder: ``runs/<slug>``."""
    return f"runs/{slug(agent_id)}"


def run_folder(folder: str | Path, where: str, seed: int, season: str | None = None) -> Path:
    """A field batch's run of one agent's folder ``where``: ``<where>/seed-N``, in a study ``<where>/<season>/seed-N``."""
    return Path(folder) / where / (season or "") / f"seed-{seed}"


def folder_of(manifest: Manifest, run_dir: str | Path) -> Path:
    """The agent folder (a candidate's or the reference's) a run of this manifest's batch is in: its parent, in a
    study its parent's parent (the season's folder between)."""
    parent = Path(run_dir).resolve().parent
    return parent.parent if manifest.seasons else parent


def manifest_of(run_dir: str | Path) -> tuple[Manifest, Path] | None:
    """The field manifest of the batch this run belongs to (``out/runs/<cand>/seed-N``, a study's
    ``out/runs/<cand>/<season>/seed-N``: ``out/field.json``) and the batch folder; None for a run of no field
    batch."""
    for up in Path(run_dir).resolve().parents[1:4]:
        if (up / MANIFEST).is_file():
            return read_manifest(up), up
    return None


def read_manifest(folder: str | Path) -> Manifest:
    """The manifest in a field batch folder; a broken one is a ValueError naming the file (no traceback)."""
    f = Path(folder) / MANIFEST
    try:
        return Manifest.model_validate_json(f.read_text(encoding="utf-8"))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ValueError(f"{f}: not a field manifest ({str(exc).splitlines()[0]}); delete {f} and re-run the "
                         "batch (it rewrites it from the spec; the runs are kept)") from None


def stray(manifest: Manifest, folder: Path, run_dir: str | Path, seed) -> str | None:
    """Why a run under a field batch's folder is not one of its runs (a seed or candidate the spec no longer
    lists, a folder of its own), or None."""
    parent = folder_of(manifest, run_dir)
    dirs = {(folder / d).resolve() for d in (*manifest.candidates.values(), manifest.reference_dir)}
    if parent not in dirs:
        return f"not a candidate's or the reference's folder in {folder / MANIFEST}"
    season = Path(run_dir).resolve().parent.name
    if manifest.seasons and season not in manifest.seasons:
        return f"season {season} is not in {folder / MANIFEST} (a run of an earlier spec)"
    if seed not in manifest.seeds:
        return f"seed {seed} is not in {folder / MANIFEST} (a run of an earlier spec)"
    return None


def find_manifest(run_dirs: list[str | Path]) -> tuple[Manifest, Path] | None:
    """The field manifest of these runs (:func:`manifest_of` of the first run that has one) and the batch folder
    it is in; None when the runs are not a field batch's."""
    for d in run_dirs:
        found = manifest_of(d)
        if found is not None:
            return found
    return None


def run_dirs(manifest: Manifest, folder: str | Path) -> list[Path]:
    """The run folders of a field batch that exist: every candidate's and the reference's, per season and seed."""
    dirs = dict.fromkeys([*manifest.candidates.values(), manifest.reference_dir])
    return [p for d in dirs for season in (manifest.seasons or [None]) for s in manifest.seeds
            if (p := run_folder(folder, d, s, season)).is_dir()]
