"""A batch's specification (``ffbench batch FILE``): many seasons of one base league across seeds (and, with
``seasons``, across real seasons and sports: a study), a design (rotate, random, field) and where they run. Checked here as the user wrote it; :func:`ffbench_lib.runs.batch.load_batch`
then checks it against the base league and the folder it would write."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ffbench_lib.config.league import League


#: the analysis notebooks a batch executes over its finished runs, in this order (``analysis: true``)
ANALYSIS_NOTEBOOKS = ("03_standings", "04_positions", "05_draft", "06_start_sit", "07_trades",
                      "08_model_comparison", "09_waivers")


class FieldSpec(BaseModel):
    """``field:`` of a ``design: field`` batch. Agents stay as written (any value): they are checked against the
    base league in :func:`load_batch`, with the league config's own messages (a string says the mapping's shape)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seat: str | None = Field(None, description="the base team whose agent each candidate replaces (its name, and "
                                               "so its schedule, draft slot and bot seeds, stay); default: the "
                                               "base's first team")
    reference: Any = Field(None, description="the agent whose result in the seat is subtracted; default: the "
                                             "seat's agent in the base league")
    candidates: list[Any] = Field(description="agent specs (as in a league's teams[].agent), 2 or more")


#: a season as a league file writes it: the year it starts in, or the sport's own name for it (``2024-25``)
SeasonName = Annotated[int | str, Field(union_mode="left_to_right")]


class BatchSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "batch"
    base: Path | dict[str, Path] = Field(
        description="league YAML the runs start from (path relative to the batch file); a study over several "
                    "sports gives one per sport: {nfl: demo.yaml, fpl: fpl_draft.yaml}")
    seasons: list[SeasonName] | dict[str, list[SeasonName]] | None = Field(
        None, description="a study over real seasons: one league per season x seed (x candidate), each in "
                          "runs/<sport>-<season>/ (a field batch: runs/<agent>/<sport>-<season>/); a list plays "
                          "the base's sport ([2022, 2023, 2024]), a mapping lists seasons per sport ({nfl: [2023, "
                          "2024], fpl: [2024-25]}, one base per sport; a field batch: one sport); unset: the base's "
                          "own season")
    agents: list[dict[str, Any]] | None = Field(None, description="replace the base teams: [{name, agent}, ...]")
    seeds: list[Annotated[int, Field(ge=0)]] = Field(min_length=1)  # a league's seed is >= 0: refused up front
    design: Literal["rotate", "random", "field"] = "rotate"
    field: FieldSpec | None = Field(None, description="design: field only: seat, reference and candidates")
    workers: int = Field(1, ge=1, le=32, description="local: worker processes; dask: workers of the embedded "
                                                       "LocalCluster (ignored with a scheduler address)")
    executor: Literal["local", "dask"] = Field("local", description="local: a process pool on this machine; dask: "
                                                                    "one task per league on a Dask cluster")
    scheduler: str | None = Field(None, description="executor: dask only: the address of an existing Dask "
                                                    "scheduler (tcp://host:8786); unset: an embedded LocalCluster")
    runner: Literal["notebook", "direct"] = Field(
        "notebook", description="notebook: each season is notebooks/02_simulate_season.ipynb executed by papermill "
                                "(its executed copy, notebooks/seed-N.ipynb, shows the draft board, standings and "
                                "trades); direct: the worker calls the season itself, without a kernel (about 4-5 s "
                                "of CPU less per season, for large bot batches; the same run directories byte for "
                                "byte, and what the season printed in notebooks/seed-N.log); local executor only")
    out: Path = Path("outputs/batches/batch")
    kernel: str = "python3"
    cell_timeout_s: int = Field(3600, gt=0)
    analysis: bool | list[str] = Field(True, description="true: every analysis notebook over the finished runs; "
                                                      "false: none; a list: those notebooks, e.g. [03_standings]")
    overrides: dict[str, Any] = Field(default_factory=dict,
                                      description="config changes for every seed, merged into the base: mappings "
                                                  "merge key by key at every depth (`llm: {budget_usd: 5}` keeps "
                                                  "the base's other llm settings), lists and values replace "
                                                  "(e.g. a masked twin: {information: {masking: players_and_teams}})")
    seed_overrides: dict[int, dict[str, Any]] = Field(default_factory=dict,
                                                      description="per-seed config changes, merged like overrides "
                                                                  "(after them)")

    @field_validator("field", mode="before")
    @classmethod
    def _field_mapping(cls, value: Any) -> Any:
        """Say the shape, not pydantic's class name."""
        if value is not None and not isinstance(value, (dict, FieldSpec)):
            raise ValueError("expected a mapping with seat, reference, candidates")
        return value

    @field_validator("analysis")
    @classmethod
    def _known_notebooks(cls, value: bool | list[str]) -> bool | list[str]:
        if isinstance(value, list):
            unknown = [n for n in value if n not in ANALYSIS_NOTEBOOKS]
            if unknown or not value or len(set(value)) != len(value):
                raise ValueError(f"{', '.join(map(repr, unknown)) or 'a notebook listed twice or none'}: expected "
                                 f"true, false or a list of analysis notebooks from {', '.join(ANALYSIS_NOTEBOOKS)}")
        return value

    @field_validator("seasons", mode="before")
    @classmethod
    def _no_flags(cls, value: Any) -> Any:
        """``true`` would read as season 1: say what it is."""
        lists = value.items() if isinstance(value, dict) else [("seasons", value)] if isinstance(value, list) else []
        for where, seasons in lists:
            for i, x in enumerate(seasons if isinstance(seasons, list) else []):
                if isinstance(x, bool):
                    at = where if where == "seasons" else f"seasons.{where}"
                    raise ValueError(f"{at}[{i}]: {x} is no season; give a year (2024) or the sport's name for one "
                                     "(2024-25)")
        return value

    @field_validator("seasons")
    @classmethod
    def _seasons_listed(cls, value: Any) -> Any:
        lists = value.items() if isinstance(value, dict) else [("seasons", value)] if value is not None else []
        for where, seasons in lists:
            at = where if where == "seasons" else f"seasons.{where}"
            if not seasons:
                raise ValueError(f"{at}: lists no season; list at least one (e.g. [2023, 2024]) or remove it")
            twice = sorted({str(s) for s in seasons if [str(x) for x in seasons].count(str(s)) > 1})
            if twice:
                raise ValueError(f"{at}: season {', '.join(twice)} is listed twice; list each season once")
        if isinstance(value, dict) and not value:
            raise ValueError("seasons: an empty mapping; list seasons per sport ({nfl: [2023, 2024]}) or remove it")
        return value

    @property
    def analysis_notebooks(self) -> tuple[str, ...]:
        """The notebooks ``analysis`` asks for, in :data:`ANALYSIS_NOTEBOOKS` order."""
        if self.analysis is True:
            return ANALYSIS_NOTEBOOKS
        return tuple(n for n in ANALYSIS_NOTEBOOKS if n in (self.analysis or ()))

    @model_validator(mode="after")
    def _unique_seeds(self) -> "BatchSpec":
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds: a seed is listed twice")
        stray = sorted(set(self.seed_overrides) - set(self.seeds))
        if stray:
            raise ValueError(f"seed_overrides: seed(s) {', '.join(map(str, stray))} not in seeds {self.seeds}; "
                             "add them to seeds or remove their overrides")
        for key, where in (("seed", "seeds"), ("name", "name")) + ((("season", "seasons"),) if self.seasons else ()):
            if key in self.overrides:
                raise ValueError(f"overrides: sets `{key}`, which the batch sets from its `{where}`; set it there")
        unknown = sorted(set(self.overrides) - set(League.model_fields))
        if unknown:
            raise ValueError(f"overrides: unknown config key(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(k for k in League.model_fields if k not in ('seed', 'name'))}")
        seasoned = sorted(s for s, o in self.seed_overrides.items() if self.seasons and "season" in o)
        if seasoned:  # a study's season is its stratum: an override would play another season under its label
            raise ValueError(f"seed_overrides: seed(s) {', '.join(map(str, seasoned))} set `season`, which the batch "
                             "sets from seasons; list the season in seasons instead")
        seeded = sorted(s for s, o in self.seed_overrides.items() if "seed" in o)
        if seeded:  # each run's seed is its key in seeds; an override would only mislabel configs/seed-N.yaml
            raise ValueError(f"seed_overrides: seed(s) {', '.join(map(str, seeded))} set `seed`, which the batch "
                             "sets from seeds; list the seed you want in seeds instead")
        return self

    @model_validator(mode="after")
    def _base_per_sport(self) -> "BatchSpec":
        """One base per sport the study plays: a per-sport base without seasons per sport could not say which base
        a run starts from."""
        if isinstance(self.base, dict):
            if not self.base:
                raise ValueError("base: an empty mapping; give a league file, or one per sport {nfl: demo.yaml}")
            if not isinstance(self.seasons, dict):
                raise ValueError("base: one league file per sport needs seasons per sport ({nfl: [2023, 2024], fpl: "
                                 "[2024-25]}); give one base file, or list seasons per sport")
            missing = sorted(set(self.seasons) - set(self.base))
            unused = sorted(set(self.base) - set(self.seasons))
            if missing or unused:
                raise ValueError(f"base: {'no league file for ' + ', '.join(missing) if missing else ''}"
                                 f"{'; ' if missing and unused else ''}"
                                 f"{'a league file for ' + ', '.join(unused) + ', whose seasons are not listed' if unused else ''}"
                                 "; give one base per sport of seasons")
        elif isinstance(self.seasons, dict) and len(self.seasons) > 1:
            raise ValueError(f"base: seasons lists {len(self.seasons)} sports ({', '.join(self.seasons)}) but base is "
                             "one league file; give one per sport: base: {" + ", ".join(
                                 f"{k}: <{k} league>.yaml" for k in self.seasons) + "}")
        return self

    @model_validator(mode="after")
    def _direct_needs_local(self) -> "BatchSpec":
        """A direct season runs in its worker's own process (its output and signals are the process's): a Dask
        worker runs tasks in threads, and a cancelled task's season could not be stopped there."""
        if self.runner == "direct" and self.executor != "local":
            raise ValueError("runner: direct runs each season inside a local worker process; with executor: dask "
                             "use runner: notebook (the default)")
        return self

    @model_validator(mode="after")
    def _scheduler_needs_dask(self) -> "BatchSpec":
        if self.scheduler is not None and self.executor != "dask":
            raise ValueError(f"scheduler: set to {self.scheduler} but executor is local; use executor: dask "
                             "(--executor dask) to run on that scheduler, or remove scheduler")
        return self

    @model_validator(mode="after")
    def _field_design(self) -> "BatchSpec":
        """A field batch keeps the base league's teams (only the seat's agent changes), so nothing may replace them."""
        if self.design == "field" and self.field is None:
            raise ValueError("field: design: field needs a field section (seat, reference, candidates); add it, or "
                             "use design: rotate")
        if self.field is not None and self.design != "field":
            raise ValueError(f"field: only a design: field batch uses it (design is {self.design}); set design: field "
                             "or remove field")
        if self.design != "field":
            return self
        if isinstance(self.seasons, dict) and len(self.seasons) > 1:  # the seat is a team of one base league
            raise ValueError("seasons: a field batch plays one base league, so one sport; list its seasons ([2023, "
                             "2024]), and run a field batch per sport")
        if len(self.seeds) < 2:
            raise ValueError("seeds: a field batch needs at least 2 seeds to compare candidates (paired by seed)")
        if self.agents is not None:
            raise ValueError("agents: a field batch keeps the base league's teams and replaces only the agent of "
                             "field.seat (listed in field.candidates); remove agents and put the league in base")
        for key, changes in (("overrides", [self.overrides]), ("seed_overrides", self.seed_overrides.values())):
            if any("teams" in c for c in changes):
                raise ValueError(f"{key}: sets `teams`, which a field batch keeps from base (only field.seat's "
                                 "agent changes); change the teams in the base file")
            if any(isinstance(c.get("draft"), dict) and "order" in c["draft"] for c in changes):
                raise ValueError(f"{key}: sets `draft.order`, which a field batch sets to rotate (the seat's draft "
                                 "slot must move with the seed, or every candidate is judged from one slot); "
                                 "remove it")
        return self
