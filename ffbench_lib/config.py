"""League configuration: pydantic models of the YAML in ``params/`` and one loader.

Every league parameter lives in one file. Validation errors are turned into one message per problem that
names the field path, the bad value and what is allowed (``teams[3].agent.model: field required``),
so a user can fix the file without reading a traceback.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import scoring

SKILL_POSITIONS = ("QB", "RB", "WR", "TE")
BOT_STRATEGIES = ("random", "adp", "vorp", "recent_form")
DATA_SOURCES = ("nflverse", "sportsdataio")
PROJECTION_SOURCES = ("builtin", "sportsdataio", "fantasypros")
SEASONS = (2021, 2022, 2023, 2024, 2025)


class ConfigError(ValueError):
    """A config file that cannot be used; ``str()`` is the user-facing message (one line per problem)."""

    def __init__(self, problems: list[str], source: str | None = None):
        self.problems = problems
        self.source = source
        head = f"invalid league config{f' {source}' if source else ''}:"
        super().__init__("\n".join([head, *(f"  {p}" for p in problems)]))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BotAgent(_Strict):
    kind: Literal["bot"]
    strategy: Literal["random", "adp", "vorp", "recent_form"]


class LLMAgent(_Strict):
    """An LLM reached through litellm. Keys come from the provider's usual environment variables."""

    kind: Literal["llm"]
    model: str = Field(min_length=1, description="litellm model id, e.g. openai/gpt-5 or anthropic/claude-sonnet-4-5")
    api_base: str | None = None
    api_key_env: str | None = Field(None, description="name of the environment variable holding the key")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int = Field(16000, gt=0, description="output-token limit; reasoning models need large ones")
    timeout_s: float = Field(120, gt=0)
    max_concurrency: int = Field(4, gt=0, description="concurrent calls to this provider")
    reasoning_effort: str | None = None
    input_cost_per_token: float | None = Field(None, ge=0, description="price for models litellm does not know")
    output_cost_per_token: float | None = Field(None, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict, description="further litellm.completion arguments")

    @field_validator("api_key_env")
    @classmethod
    def _env_name_not_key(cls, v: str | None) -> str | None:
        if v is not None and (v.startswith("sk-") or len(v) > 64):
            raise ValueError("give the NAME of an environment variable holding the key, never the key itself")
        return v


AgentSpec = Annotated[Union[BotAgent, LLMAgent], Field(discriminator="kind")]


class Team(_Strict):
    name: str = Field(min_length=1, max_length=40)
    agent: AgentSpec


class Scoring(_Strict):
    preset: Literal["ppr", "half_ppr", "standard", "ffbench_v1"] | None = "ppr"
    weights: dict[str, float] = Field(default_factory=dict)

    @field_validator("weights")
    @classmethod
    def _known_stats(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k in v if k not in scoring.SCORABLE_STATS]
        if bad:
            raise ValueError(f"unknown stat {bad[0]!r}; allowed: {', '.join(scoring.SCORABLE_STATS)}")
        return v

    def resolved(self) -> dict[str, float]:
        return scoring.resolve_weights(self.preset, self.weights)


class Roster(_Strict):
    QB: int = Field(1, ge=0, le=3)
    RB: int = Field(2, ge=0, le=4)
    WR: int = Field(2, ge=0, le=5)
    TE: int = Field(1, ge=0, le=3)
    FLEX: int = Field(1, ge=0, le=3)
    BENCH: int = Field(5, ge=0, le=10)
    flex_positions: tuple[Literal["RB", "WR", "TE"], ...] = ("RB", "WR", "TE")
    caps: dict[Literal["QB", "RB", "WR", "TE"], int] = Field(
        default_factory=lambda: {"QB": 3, "RB": 6, "WR": 6, "TE": 3},
        description="most players of a position one team may hold",
    )

    @property
    def size(self) -> int:
        return self.QB + self.RB + self.WR + self.TE + self.FLEX + self.BENCH

    @property
    def starters(self) -> int:
        return self.size - self.BENCH

    @model_validator(mode="after")
    def _caps_fit(self) -> "Roster":
        for pos in SKILL_POSITIONS:
            need = getattr(self, pos)
            cap = self.caps.get(pos, self.size)
            if cap < need:
                raise ValueError(f"caps.{pos}={cap} is below the {need} starting {pos} slot(s); raise the cap")
        if self.size < 1:
            raise ValueError("the roster has no slots")
        return self


class DataConfig(_Strict):
    source: Literal["nflverse", "sportsdataio"] = "nflverse"
    dir: Path | None = Field(None, description="data directory; default $FFBENCH_DATA_DIR")
    projections: Literal["builtin", "sportsdataio", "fantasypros"] = "builtin"
    prepared_dir: Path | None = Field(None, description="where prepared seasons are cached; default outputs/prepared")

    def resolved_dir(self) -> Path:
        if self.dir is not None:
            return self.dir
        env = os.environ.get("FFBENCH_DATA_DIR")
        if not env:
            raise ConfigError(["data.dir: not set and FFBENCH_DATA_DIR is empty; set one of them to the data "
                               "directory (see README, 'Data')"])
        return Path(env)


class Draft(_Strict):
    order: Literal["random", "fixed", "rotate"] = "rotate"
    shortlist_size: int = Field(5, ge=1, le=15)
    on_deck: bool = Field(True, description="the next team names its shortlist while the team on the clock "
                                            "picks (as in a real draft room); false: strictly one at a time")
    show_per_position: int = Field(10, ge=1, le=40)


class Trades(_Strict):
    weeks: list[int] = Field(default_factory=lambda: [4, 7, 10])
    max_players_per_side: int = Field(2, ge=1, le=4)


class LLMSettings(_Strict):
    """How LLM calls are made for the whole league (per-model parameters live in each team's agent)."""

    max_reasks: int = Field(2, ge=0, le=5, description="re-asks with the specific error after an invalid answer")
    retries: int = Field(4, ge=0, le=10, description="retries on rate limits, 5xx, timeouts, connection errors")
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles on every retry")
    budget_usd: float | None = Field(None, gt=0, description="stop cleanly at the next checkpoint past this spend")
    cache_dir: Path | None = Field(None, description="replay cache; default outputs/llm_cache")
    replay_only: bool = Field(False, description="never call a provider; a cache miss stops the run")
    prompt_version: str = "v1"
    sequential: bool = Field(False, description="ask one agent at a time (for timing comparisons only)")


class League(_Strict):
    """One league = one season of one set of teams; the seed picks draft order, schedule and bot randomness."""

    name: str = "league"
    season: int = Field(2024, description="NFL season played")
    weeks: int = Field(17, ge=1, le=18)
    seed: int = 0
    schedule: Literal["random", "round_robin"] = "random"
    teams: list[Team] = Field(min_length=2)
    roster: Roster = Field(default_factory=Roster)
    scoring: Scoring = Field(default_factory=Scoring)
    draft: Draft = Field(default_factory=Draft)
    trades: Trades = Field(default_factory=Trades)
    data: DataConfig = Field(default_factory=DataConfig)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @field_validator("scoring", mode="before")
    @classmethod
    def _preset_shorthand(cls, v: Any) -> Any:
        return {"preset": v} if isinstance(v, str) else v

    @field_validator("season")
    @classmethod
    def _season_known(cls, v: int) -> int:
        if v not in SEASONS:
            raise ValueError(f"no data for season {v}; allowed: {', '.join(map(str, SEASONS))}")
        return v

    @model_validator(mode="after")
    def _league_consistent(self) -> "League":
        names = [t.name for t in self.teams]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"teams: duplicate team name {dup[0]!r}; names must be unique")
        if len(self.teams) % 2:
            raise ValueError(f"teams: {len(self.teams)} teams; an even number is needed for weekly matchups")
        bad = [w for w in self.trades.weeks if not 1 <= w <= self.weeks]
        if bad:
            raise ValueError(f"trades.weeks: week {bad[0]} is outside 1..{self.weeks}")
        return self

    @property
    def scoring_weights(self) -> dict[str, float]:
        return self.scoring.resolved()


# ----------------------------------------------------------------------------------------------- errors

def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("bot", "llm") or str(part).startswith(("function-", "literal[")):
            continue  # discriminator tags and validator wrappers are not part of the user's path
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _explain(err: dict[str, Any], model_fields: dict[str, Any] | None = None) -> str:
    path = _loc(err["loc"])
    typ, msg, value = err["type"], err["msg"], err.get("input")
    if typ == "missing":
        return f"{path}: field required"
    if typ == "extra_forbidden":
        return f"{path}: unknown key (check the spelling against the config reference in README.md)"
    if typ in ("union_tag_invalid", "union_tag_not_found"):
        return f"{path}.kind: got {value.get('kind') if isinstance(value, dict) else value!r}; allowed: 'bot' or 'llm'"
    msg = msg.removeprefix("Value error, ")
    if any(word in path.lower() for word in ("key", "secret", "token")) and "max_tokens" not in path:
        return f"{path}: {msg} (value hidden)"  # never echo something that may be a credential
    return f"{path}: {msg} (got {value!r})"


def format_validation_error(exc: ValidationError) -> list[str]:
    return [_explain(e) for e in exc.errors()]


def parse_config(data: Any, source: str | None = None) -> League:
    """Validate an already-parsed mapping; raise :class:`ConfigError` with named-field messages."""
    if not isinstance(data, dict):
        raise ConfigError([f"(top level): expected a mapping of keys to values, got {type(data).__name__}"], source)
    try:
        return League.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), source) from None


def load_config(path: str | os.PathLike[str], **overrides: Any) -> League:
    """Read and validate a league YAML file. ``overrides`` replace top-level keys (e.g. ``seed=3``)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError([f"file not found: {p} (give the path to a YAML file such as params/demo.yaml)"])
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError([f"not valid YAML{where}: {getattr(exc, 'problem', exc)}"], str(p)) from None
    if isinstance(data, dict):
        data = {**data, **{k: v for k, v in overrides.items() if v is not None}}
    return parse_config(data, str(p))


def dump_config(league: League) -> str:
    """The fully resolved config as YAML (written into every run directory)."""
    return yaml.safe_dump(league.model_dump(mode="json"), sort_keys=False)
