"""A league's specification: the pydantic models of the YAML in ``params/`` and the rules that tie its sections
together (roster slots and caps, trade weeks within the season, masking against team names...).

Every league parameter lives in one file; :mod:`.load` reads it and :mod:`.errors` turns a validation error into
one message per problem that names the field path, the bad value and what is allowed
(``teams[3].agent.model: field required``), so a user can fix the file without reading a traceback.
"""
from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Union

from pydantic import (AnyHttpUrl, BaseModel, BeforeValidator, ConfigDict, Field, Strict, StringConstraints, TypeAdapter, ValidationError,
                      ValidationInfo,
                      field_validator, model_serializer, model_validator)
from pydantic_core import PydanticCustomError

from ffbench_lib.config.errors import ConfigError, short_value
from ffbench_lib.core.paths import find_data_dir
from ffbench_lib.core.secrets import credential_paths
from ffbench_lib.sport import SPORTS, Sport, scoring
from ffbench_lib.sport import sport as get_sport

BOT_STRATEGIES = ("random", "adp", "vorp", "recent_form")
DATA_SOURCES = ("nflverse", "sportsdataio", "fpl")
PROJECTION_SOURCES = ("builtin", "sportsdataio", "fantasypros")
#: The sport whose positions a :class:`Roster` validates and whose stat groups :class:`Scoring` keeps: a roster
#: or scoring section is validated before (and without) its league, so both read the default sport; a second
#: sport would pass the league's sport down (pydantic validation context).
DEFAULT_SPORT = "nfl"
_SPORT = get_sport(DEFAULT_SPORT)


#: A model's knowledge cutoff as providers publish it: a month (``2024-06``) or a day (``2024-06-30``).
def _cutoff(v: Any) -> str:
    text = v.isoformat() if isinstance(v, date) else v
    ok = isinstance(text, str) and re.fullmatch(r"(19|20)\d\d-\d\d(-\d\d)?", text)
    try:  # a real month or day (2024-02-31 is not one)
        ok = ok and bool(date.fromisoformat(text if len(text) == 10 else f"{text}-01"))
    except ValueError:
        ok = False
    if not ok:
        raise ValueError("expected a month YYYY-MM or a day YYYY-MM-DD, as the provider publishes it (e.g. 2024-06)")
    return text


KnowledgeCutoff = Annotated[str, BeforeValidator(_cutoff)]

#: Flags and counts are strict: YAML gives real booleans and whole numbers, so a quoted "true", a 2.0 or true
#: for a count is a mistake, not a value.
Flag = Annotated[bool, Strict()]
Count = Annotated[int, Strict()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BotAgent(_Strict):
    kind: Literal["bot"]
    strategy: Literal["random", "adp", "vorp", "recent_form"]

    @property
    def agent_id(self) -> str:
        """How tables, metrics and figures name this agent (every team it plays)."""
        return f"bot:{self.strategy}"


_HTTP_URL = TypeAdapter(AnyHttpUrl)

#: litellm arguments ffbench sets from its own fields: never in ``extra``
EXTRA_OWN_FIELDS = {
    "model": "use model", "messages": "the prompts come from the prompt templates",
    "api_key": "give the NAME of an environment variable in api_key_env; never put a key in a config file",
    "api_base": "use api_base", "base_url": "use api_base", "timeout": "use timeout_s",
    "num_retries": "use llm.retries", "response_format": "ffbench asks for JSON itself where the model supports it",
    "max_tokens": "use max_tokens", "temperature": "use temperature", "reasoning_effort": "use reasoning_effort",
}


#: the prompt templates shipped with ffbench (package data), one folder per prompt version
PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"


class PromptStrategy(_Strict):
    """A prompt variant, as configuration (``ffbench_lib.agents.prompts``): how much reasoning the model is asked
    to write before its answer, and a folder of its own templates; recorded in config.yaml, in every ledger line
    and (through the prompt text) in the replay cache's keys, and named in the agent id."""

    version: Literal["v1", "v2"] | None = Field(None, description="this team's prompt version (unset: the league's "
                                                             "llm.prompt_version)")
    reasoning: Literal["none", "brief", "full"] = Field(
        "brief", description="none: no rationale; brief: a short rationale in the answer (the templates' own); "
                             "full: reason step by step in plain text, then the JSON answer")
    dir: Path | None = Field(None, description="a folder of templates replacing the prompt version's files of the "
                                               "same name (system.txt, set_lineup.txt, ...); the others stay")
    examples: Count = Field(0, ge=0, le=3, description="worked examples before the decision: up to this many "
                                                      "earlier decisions of its kind from a made-up season, each "
                                                      "the prompt it had and a baseline bot's answer")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if not self.examples:  # a variant without examples dumps (config.yaml, ledger) as it always did
            out.pop("examples", None)
        if self.version is None:
            out.pop("version", None)
        return out

    @field_validator("dir")
    @classmethod
    def _templates(cls, v: Path | None) -> Path | None:
        if v is None:
            return v
        import string

        if not v.is_dir():
            raise ValueError(f"{v}: no such folder of prompt templates")
        known = {f.name for f in (PROMPTS_DIR / "v2").glob("*.txt")}
        for f in sorted(v.glob("*.txt")):
            if f.name not in known:
                raise ValueError(f"{f.name}: no template of that name (the templates: {', '.join(sorted(known))})")
            allowed = set(string.Template((PROMPTS_DIR / "v2" / f.name).read_text(encoding="utf-8")).get_identifiers())
            extra = set(string.Template(f.read_text(encoding="utf-8")).get_identifiers()) - allowed
            if extra:
                raise ValueError(f"{f.name}: ${', $'.join(sorted(extra))} is filled by no view (the placeholders "
                                 f"of {f.name}: ${', $'.join(sorted(allowed))})")
        return v.resolve()

    @property
    def label(self) -> str:
        """What the agent id adds (empty for the templates as they are)."""
        parts = ([f"version={self.version}"] if self.version else []) + (
            [f"reasoning={self.reasoning}"] if self.reasoning != "brief" else []) + (
            [f"prompts={self.dir.name}"] if self.dir is not None else []) + (
            [f"examples={self.examples}"] if self.examples else [])
        return f"[{','.join(parts)}]" if parts else ""


class LLMAgent(_Strict):
    """An LLM reached through litellm. Keys come from the provider's usual environment variables."""

    kind: Literal["llm"]
    model: str = Field(min_length=1, description="litellm model id, e.g. openai/gpt-5 or anthropic/claude-sonnet-4-5")
    api_base: str | None = None
    api_key_env: str | None = Field(None, description="name of the environment variable holding the key")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: Count = Field(16000, gt=0, description="output-token limit; reasoning models need large ones")
    timeout_s: float = Field(120, gt=0)
    max_concurrency: Count = Field(4, gt=0, description="concurrent calls to this provider")
    reasoning_effort: str | None = None
    input_cost_per_token: float | None = Field(None, ge=0, description="price for models litellm does not know")
    output_cost_per_token: float | None = Field(None, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict, description="further litellm.completion arguments")
    max_prompt_tokens: Count | None = Field(None, gt=0, description="prompt budget (litellm's tokenizer): longer "
                                          "prompts are shortened (other teams' tables, histories, old re-asks)")
    system_in_user: Flag = Field(False, description="fold the system text into the first user message (chat "
                                 "templates that drop the system role, e.g. llama.cpp's gemma)")
    knowledge_cutoff: KnowledgeCutoff | None = Field(None, description="the model's training-data cutoff (YYYY-MM "
                                                     "or YYYY-MM-DD): ffbench warns when the season ended before it")
    prompt: PromptStrategy | None = Field(None, description="a prompt variant (reasoning, own templates); unset: "
                                                            "the prompt version's templates as they are")
    mode: Literal["tables", "tools"] = Field("tables", description="tables: every table in the prompt; tools: a "
                                             "short prompt and function-calling tools that read the rest")
    max_tool_rounds: Count = Field(3, gt=0, description="tools mode: rounds of tool calls before the answer is due")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if self.knowledge_cutoff is None:  # configs without it dump (config.yaml) as they always did
            out.pop("knowledge_cutoff", None)
        if self.prompt is None:
            out.pop("prompt", None)
        if self.mode == "tables":  # a table-prompt team's config.yaml reads as it always did
            out.pop("mode", None)
            out.pop("max_tool_rounds", None)
        return out

    @property
    def agent_id(self) -> str:
        """How tables, metrics and figures name this agent: one model is one agent, whatever its settings, except a
        prompt variant (``prompt``) or tools mode: ``llm:openai/gpt-4o[tools,reasoning=full]``, so variants are
        compared, not pooled."""
        parts = (["tools"] if self.mode == "tools" else []) + (
            [self.prompt.label[1:-1]] if self.prompt is not None and self.prompt.label else [])
        return f"llm:{self.model}{'[' + ','.join(parts) + ']' if parts else ''}"

    def prompt_version(self, league_version: str) -> str:
        """The prompt version this team's prompts use: its variant's ``version``, else the league's."""
        return self.prompt.version if self.prompt is not None and self.prompt.version else league_version

    @property
    def endpoint(self) -> str:
        """The provider endpoint whose ``max_concurrency`` this agent shares with every other agent calling it:
        one limit per endpoint (:mod:`ffbench_lib.llm.limits`); ``http://h/v1/`` and ``http://h/v1`` are one."""
        return f"{self.model.split('/', 1)[0]}@{(self.api_base or '').rstrip('/') or 'default'}"

    @field_validator("api_base")
    @classmethod
    def _api_base_url(cls, v: str | None) -> str | None:
        """An address no request can be sent to fails before reaching any server, on every call: refused here."""
        if v is None:
            return v
        try:
            url = _HTTP_URL.validate_python(v)
        except ValidationError:
            url = None
        if url is None or not url.host or v != v.strip():
            raise ValueError("expected the server's http(s) address, e.g. http://127.0.0.1:8080/v1")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _env_name_not_key(cls, v: str | None) -> str | None:
        if v is not None and (v.startswith("sk-") or len(v) > 64):
            raise ValueError("give the NAME of an environment variable holding the key, never the key itself")
        return v

    @field_validator("extra")
    @classmethod
    def _extra_safe(cls, v: dict[str, Any]) -> dict[str, Any]:
        """No credential (it would be written to config.yaml, the ledger and the cache) and no argument
        ffbench sets itself (a duplicate breaks every call)."""
        problems = [f"{k!r} is set by ffbench; {EXTRA_OWN_FIELDS[k]}" for k in v if k in EXTRA_OWN_FIELDS]
        headers = v.get("extra_headers")
        if headers is not None and not isinstance(headers, dict):
            problems.append("extra_headers must be a mapping of header names to values")
        problems += [f"{where} looks like a credential (value hidden): give the NAME of an environment variable "
                     "in api_key_env; never put a key in a config file"
                     for where, _ in credential_paths({k: x for k, x in v.items() if k not in EXTRA_OWN_FIELDS})]
        if problems:
            raise ValueError("; ".join(problems))
        return v


#: in a human seat's name: the seat was played on autopilot by the bot named after it (ffbench_lib.play.session)
AUTOPILOT = "-autopilot-"


class HumanAgent(_Strict):
    """A person playing a team from a notebook (:mod:`ffbench_lib.play.session`); batches and ``ffbench run`` refuse it."""

    kind: Literal["human"]
    name: str = Field("you", min_length=1, max_length=40, pattern=r"^[\w .-]+$",
                      description="how tables and metrics name this player (agent id human:<name>)")

    @field_validator("name")
    @classmethod
    def _not_autopilot(cls, v: str) -> str:
        if AUTOPILOT in v:  # start_play names autopilot seats so; a person's name must not read as one
            raise ValueError(f"{AUTOPILOT!r} marks seats a bot played on autopilot; choose another name")
        return v

    @property
    def agent_id(self) -> str:
        return f"human:{self.name}"


class PythonAgent(_Strict):
    """An agent of your own (:mod:`ffbench_lib.agents.plugin`): ``entry`` names a factory, called as
    ``factory(team, seed, **options)``, that returns any object with ``async decide(kind, view)``. With ``model``
    (an LLM as an ``llm`` team names one), the object's own model calls go through ffbench's client: replay
    cache, budget, provider limits, retries and the ledger."""

    kind: Literal["python"]
    entry: str = Field(description="package.module:factory, importable where the season runs (its folder on "
                                   "PYTHONPATH)")
    name: str | None = Field(None, pattern=r"^[\w.-]{1,40}$",
                             description="how tables and metrics name it (agent id python:<name>); default the "
                                         "entry (python:package.module.factory)")
    options: dict[str, Any] = Field(default_factory=dict, description="keyword arguments of the factory")
    model: LLMAgent | None = Field(None, description="the LLM the agent's own calls use (as an llm team's fields)")
    timeout_s: float = Field(300, gt=0, description="longest one decision may take (then it is repaired, as a "
                                                    "failed answer)")
    max_calls_per_decision: Count = Field(20, ge=1, description="model calls one decision may make")

    @field_validator("entry")
    @classmethod
    def _entry_names_a_factory(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*", v):
            raise ValueError("expected package.module:factory (a module's dotted name, a colon, the factory's "
                             "name), e.g. my_agents:make_agent")
        return v

    @field_validator("model", mode="before")
    @classmethod
    def _model_is_llm(cls, v: Any) -> Any:
        return {"kind": "llm", **v} if isinstance(v, dict) and "kind" not in v else v

    @field_validator("options")
    @classmethod
    def _options_safe(cls, v: dict[str, Any]) -> dict[str, Any]:
        found = credential_paths(v)
        if found:
            raise ValueError(f"{found[0][0]} looks like a credential (value hidden): read keys from the environment "
                             "in your agent; never put a key in a config file")
        return v

    @property
    def agent_id(self) -> str:
        return f"python:{self.name or self.entry.replace(':', '.')}"

    @property
    def llm(self) -> LLMAgent | None:
        """The LLM whose calls this agent makes through ffbench's client (its endpoint's limit, its key)."""
        return self.model


AgentSpec = Annotated[Union[BotAgent, LLMAgent, HumanAgent, PythonAgent], Field(discriminator="kind")]


class Team(_Strict):
    # stripped first, so a blank name (' ') is refused rather than shown as nothing
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
    agent: AgentSpec


class Scoring(_Strict):
    """A preset, explicit per-unit weights over it, and tiered rules (``points_allowed: [[0, 10], ..., [null, -4]]``);
    see :mod:`ffbench_lib.sport.scoring`."""

    preset: Literal["ppr", "half_ppr", "standard", "ffbench_v1", "fpl"] | None = "ppr"
    weights: dict[str, float] = Field(default_factory=dict)
    tiers: dict[str, Any] = Field(default_factory=dict, description="stat -> [[upto, points], ...], ascending "
                                  "inclusive upper bounds, the last null; scores only rows that have the stat")

    @field_validator("weights")
    @classmethod
    def _known_stats(cls, v: dict[str, float]) -> dict[str, float]:
        for stat, w in v.items():
            problem = scoring.weight_problem(stat, w)
            if problem:
                raise ValueError(problem)
        return v

    @field_validator("tiers")
    @classmethod
    def _valid_tiers(cls, v: dict[str, Any]) -> dict[str, Any]:
        for stat, t in v.items():
            problem = scoring.tiers_problem(stat, t)
            if problem:
                raise _field_problem(stat, problem)
        return v

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if not out.get("tiers"):  # a league without tiers dumps as it always did
            out.pop("tiers", None)
        return out

    def resolved(self, positions: tuple[str, ...] | None = None) -> dict[str, float]:
        """Weights (None: the preset's offensive rules and every explicit weight, as before K/DST; else the
        preset's K/DST rules too, and only the stats of ``positions``)."""
        return scoring.resolve_weights(self.preset, self.weights,
                                       None if positions is None else _SPORT.stat_groups(positions))

    def resolved_tiers(self, positions: tuple[str, ...] | None = None) -> dict[str, list]:
        return scoring.resolve_tiers(self.preset, self.tiers,
                                     None if positions is None else _SPORT.stat_groups(positions))


#: The positions, their default and most slots, default caps and flex eligibility are the sport's
#: (:class:`ffbench_lib.sport.Sport`); a position is in a league when its roster names it or has default slots.
#: The flex slots, narrow to wide, and the roster key naming the positions each takes (views' ``rules`` too).
FLEX_SLOTS = {"FLEX": "flex_positions", "SUPERFLEX": "superflex_positions"}


def flex_slots(rules: dict) -> dict[str, list[str]]:
    """The flex slots a view's ``rules`` have (narrow to wide) and the positions each takes."""
    return {slot: rules[key] for slot, key in FLEX_SLOTS.items() if rules["roster_slots"].get(slot)}


_NOT_POSITIONS = ("FLEX", "SUPERFLEX", "BENCH", "IR")


@lru_cache(maxsize=None)
def _slot_count(pos: str, sport: str = DEFAULT_SPORT) -> TypeAdapter:
    """The validator of one position's starting slots (built once: bots build a Roster for every decision)."""
    spec = get_sport(sport)
    return TypeAdapter(Annotated[int, Strict(), Field(ge=0, le=spec.max_flex if pos == "FLEX" else
                                                      spec.max_slots.get(pos))])


def _field_problem(field: str, problem: str) -> PydanticCustomError:
    """An error a section-wide rule raises about one of its keys; :func:`_explain` shows it at ``section.field``."""
    return PydanticCustomError("field_problem", "{field}: {problem}", {"field": field, "problem": problem})


class Roster(_Strict):
    """Starting slots per position, FLEX, BENCH, IR, flex eligibility and caps: the only source of positions.

    The YAML is flat (``QB: 1, RB: 2, ..., FLEX: 1, BENCH: 5, IR: 1``): every upper-case key other than FLEX,
    BENCH and IR is a position's starting slots. It is read into :attr:`slots` and dumped flat again, so config.yaml keeps
    its shape. The positions are the league's sport's (the Premier League's ``GK, DEF, MID, FWD``). A formation is
    the slots as the least and ``most`` as the most starters of each position (FPL: ``GK: 1, DEF: 3, MID: 2, FWD: 1,
    FLEX: 4`` with ``most: {GK: 1, DEF: 5, MID: 5, FWD: 3}``, the sport's default roster), and ``auto_subs`` an
    ordered bench whose players come on for starters who did not play."""

    slots: dict[str, Count] = Field(default_factory=lambda: dict(_SPORT.default_slots),
                                  description="starting slots per position, in the sport's position order")
    FLEX: Count = Field(1, ge=0, le=10, description="slots any of flex_positions may fill (at most the sport's "
                        "max_flex: 3 in the NFL)")
    SUPERFLEX: Count = Field(0, ge=0, le=2, description="slots any of superflex_positions may fill (filled after FLEX)")
    BENCH: Count = Field(5, ge=0, le=10)
    IR: Count = Field(0, ge=0, le=4, description="injured-reserve slots: a player ruled Out may be moved there, "
                      "freeing his roster spot; he cannot start from IR")
    flex_positions: tuple[str, ...] = _SPORT.flex_slots["FLEX"]
    superflex_positions: tuple[str, ...] = _SPORT.flex_slots["SUPERFLEX"]
    caps: dict[str, Count] = Field(default_factory=dict, description="most players of a position one team may hold")
    most: dict[str, Count] = Field(default_factory=dict, description="most starters of a position (its slots "
                                   "are the least): a formation, e.g. soccer's 3-5 defenders; none: no limit "
                                   "beyond the slots the position may fill")
    auto_subs: Flag = Field(False, description="the bench is in the order the manager sets, and a starter who did "
                            "not play is replaced by the first bench player who did and keeps the lineup legal")
    sport: str = Field(DEFAULT_SPORT, description="the sport whose positions these are (the league's)")

    @model_validator(mode="before")
    @classmethod
    def _read_flat(cls, data: Any) -> Any:
        """Split the flat YAML mapping into per-position slots and the rest; default caps for the positions."""
        if not isinstance(data, dict):
            return data
        if "slots" in data:
            raise _field_problem("slots", "unknown key; give each position's starting slots as its own key, "
                                 "e.g. QB: 1")
        name = data.get("sport", DEFAULT_SPORT)
        spec = get_sport(name) if isinstance(name, str) and name in SPORTS else _SPORT
        rest = {k: v for k, v in data.items() if not (isinstance(k, str) and k.isupper() and k not in _NOT_POSITIONS)}
        given = {k: v for k, v in data.items() if k not in rest}
        known, defaults = spec.positions, spec.default_slots
        for pos, n in given.items():
            if pos not in known:
                raise _field_problem(pos, f"unknown position; the positions are {', '.join(known)} "
                                     "(a roster also takes FLEX, BENCH, IR, flex_positions and caps)")
            try:
                given[pos] = _slot_count(pos, spec.name).validate_python(n)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise _field_problem(pos, f"{err['msg']} (got {short_value(n)})") from None
        if "FLEX" in rest:
            try:
                _slot_count("FLEX", spec.name).validate_python(rest["FLEX"])
            except ValidationError as exc:
                raise _field_problem("FLEX", f"{exc.errors()[0]['msg']} (got {short_value(rest['FLEX'])})") from None
        slots = {p: given.get(p, defaults.get(p)) for p in known if p in given or p in defaults}
        rest["slots"] = slots
        rest.setdefault("caps", {p: spec.default_caps[p] for p in slots if p in spec.default_caps})
        for slot, key in FLEX_SLOTS.items():
            rest.setdefault(key, tuple(p for p in spec.flex_slots.get(slot, ()) if p in slots))
        return rest

    @model_serializer(mode="wrap")
    def _dump_flat(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if not out.get("SUPERFLEX"):  # a roster without the slot dumps as it always did
            out.pop("SUPERFLEX", None)
            out.pop("superflex_positions", None)
        if not out.get("IR"):
            out.pop("IR", None)
        for key, plain in (("most", {}), ("auto_subs", False), ("sport", DEFAULT_SPORT)):
            if out.get(key) == plain:  # likewise a roster without a formation, an ordered bench or another sport
                out.pop(key, None)
        return {**out.pop("slots"), **out}

    @field_validator("sport")
    @classmethod
    def _roster_sport(cls, v: str) -> str:
        if v not in SPORTS:
            raise ValueError(f"unknown sport; the sports are {', '.join(SPORTS)}")
        return v

    @property
    def spec(self) -> Sport:
        return get_sport(self.sport)

    def ranges(self) -> dict[str, tuple[int, int]]:
        """Least and most starters of each position that can start (a formation): its slots, and at most its
        :attr:`most`, else its slots plus every flex slot that takes it."""
        flex = self.flex_slots()
        out = {}
        for pos, n in self.slots.items():
            reach = n + sum(getattr(self, slot) for slot, ps in flex.items() if pos in ps)  # slots that take it
            hi = min(self.most.get(pos, reach), reach)
            if hi > 0:
                out[pos] = (n, hi)
        return out

    @property
    def positions(self) -> tuple[str, ...]:
        """The league's positions (those with 0 starting slots included)."""
        return tuple(self.slots)

    @property
    def holdable(self) -> tuple[str, ...]:
        """The positions a team may hold at all (a cap of 0 rules a position out): the only ones boards show."""
        return tuple(p for p in self.positions if self.caps.get(p, 1) > 0)

    def starting(self, pos: str) -> int:
        """Starting slots of ``pos`` (0 for a position the league does not have)."""
        return self.slots.get(pos, 0)

    def slot_counts(self) -> dict[str, int]:
        """Starting slots in display order, then the flex slots (FLEX, SUPERFLEX); slots with no players left out,
        e.g. {'QB': 1, 'RB': 2, 'WR': 2, 'TE': 1, 'FLEX': 1}."""
        counts = {p: n for p, n in self.slots.items() if n > 0}
        return {**counts, **{slot: n for slot, n in (("FLEX", self.FLEX), ("SUPERFLEX", self.SUPERFLEX)) if n > 0}}

    def flex_slots(self) -> dict[str, tuple[str, ...]]:
        """The flex slots this roster has and the positions each takes, in filling order (FLEX, then the wider
        SUPERFLEX): filling narrow before wide is optimal because FLEX's positions are within SUPERFLEX's."""
        return {slot: getattr(self, key) for slot, key in FLEX_SLOTS.items() if getattr(self, slot) > 0}

    def slot_positions(self) -> dict[str, frozenset[str]]:
        """Each starting slot (:meth:`slot_counts` order) and the positions that may fill it."""
        flex = self.flex_slots()
        return {slot: frozenset(flex.get(slot, (slot,))) for slot in self.slot_counts()}

    def eligible(self, slot: str, pos: str) -> bool:
        """Whether a ``pos`` player may fill starting slot ``slot``."""
        return pos == slot or pos in self.flex_slots().get(slot, ())

    @property
    def size(self) -> int:
        """Active roster spots (starters and bench; the draft's rounds). IR slots come on top."""
        return sum(self.slots.values()) + self.FLEX + self.SUPERFLEX + self.BENCH

    @property
    def held(self) -> int:
        """Most players a team may hold: its active spots plus its IR slots."""
        return self.size + self.IR

    @property
    def starters(self) -> int:
        return self.size - self.BENCH

    @model_validator(mode="after")
    def _caps_fit(self) -> "Roster":
        allowed = f"the league's positions are {', '.join(self.positions)}"
        for i, pos in enumerate(self.flex_positions):
            if pos not in self.slots:
                raise _field_problem(f"flex_positions[{i}]", f"{pos!r} is not a position of this league; {allowed}")
            if pos in self.flex_positions[:i]:
                raise _field_problem(f"flex_positions[{i}]", f"{pos!r} is listed twice; list each position once")
        for i, pos in enumerate(self.superflex_positions):
            if pos not in self.slots:
                raise _field_problem(f"superflex_positions[{i}]", f"{pos!r} is not a position of this league; {allowed}")
            if pos in self.superflex_positions[:i]:
                raise _field_problem(f"superflex_positions[{i}]", f"{pos!r} is listed twice; list each position once")
        if self.SUPERFLEX and self.FLEX and not set(self.flex_positions) <= set(self.superflex_positions):
            raise ValueError("superflex_positions must include every flex position (SUPERFLEX is the wider slot)")
        for pos in self.caps:
            if pos not in self.slots:
                raise _field_problem(f"caps.{pos}", f"not a position of this league; {allowed}")
        flexible = {p for ps in self.flex_slots().values() for p in ps}
        for pos, most in self.most.items():
            if pos not in self.slots:
                raise _field_problem(f"most.{pos}", f"not a position of this league; {allowed}")
            if most < self.slots[pos]:
                raise _field_problem(f"most.{pos}", f"{most} is below the {self.slots[pos]} starting {pos} slot(s); "
                                     "the slots are the least that start")
            reach = self.slots[pos] + sum(getattr(self, slot) for slot, ps in self.flex_slots().items() if pos in ps)
            if most > reach:
                raise _field_problem(f"most.{pos}", f"{most} is more than the {reach} slot(s) a {pos} may fill (its "
                                     f"own and the flex slots that list it); lower most.{pos} or add {pos} to a flex "
                                     "slot's positions")
        if self.most:
            room = sum(min(self.most.get(p, self.size), self.caps.get(p, self.size)) - self.starting(p)
                       for p in {q for ps in self.flex_slots().values() for q in ps})
            if self.FLEX + self.SUPERFLEX > room:
                raise _field_problem("most", f"the flex slots need {self.FLEX + self.SUPERFLEX} starters beyond the "
                                     f"positions' own slots, but most (and caps) leave room for {room}; raise most "
                                     "or lower FLEX")
        for pos, need in self.slots.items():
            # a position a league opts into (K, DST) that could never start: drafted for nothing
            if need == 0 and pos not in self.spec.default_slots and pos not in flexible and self.caps.get(pos, 1) > 0:
                raise _field_problem(pos, f"0 starting slots and no flex slot takes {pos}, so a {pos} could never "
                                     f"start; give it a slot, add it to a flex slot's positions, or set caps.{pos}: 0")
            cap = self.caps.get(pos, self.size)
            if cap < need:
                raise ValueError(f"caps.{pos}={cap} is below the {need} starting {pos} slot(s); raise the cap")
        if self.size < 1:
            raise ValueError("the roster has no slots")
        if self.starters < 1:
            raise ValueError("the roster has no starting slots, so every game would end 0-0; give a position or "
                             "FLEX at least one slot")
        if self.FLEX and not self.flex_positions:
            raise ValueError(f"FLEX={self.FLEX} but flex_positions is empty; name the positions FLEX may take or set "
                             "FLEX: 0")
        if self.SUPERFLEX and not self.superflex_positions:
            raise ValueError(f"SUPERFLEX={self.SUPERFLEX} but superflex_positions is empty; name the positions it may "
                             "take or set SUPERFLEX: 0")
        # The draft must be able to fill every slot under the caps: FLEX from the flex positions' spare caps,
        # the whole roster from all caps together.
        spare = sum(self.caps.get(p, self.size) - self.starting(p) for p in self.flex_positions)
        if self.FLEX > spare:
            raise ValueError(f"FLEX={self.FLEX} cannot be filled: the caps of {'/'.join(self.flex_positions)} leave "
                             f"{spare} player(s) beyond their own starting slots; raise a cap or lower FLEX")
        wide = sum(self.caps.get(p, self.size) - self.starting(p) for p in self.superflex_positions)
        if self.SUPERFLEX and self.FLEX + self.SUPERFLEX > wide:
            raise ValueError(f"SUPERFLEX={self.SUPERFLEX} cannot be filled: the caps of "
                             f"{'/'.join(self.superflex_positions)} leave {wide} player(s) beyond their own starting "
                             "slots for FLEX and SUPERFLEX; raise a cap or lower SUPERFLEX")
        total = sum(self.caps.get(p, self.size) for p in self.positions)
        if total < self.size:
            raise ValueError(f"the caps allow {total} players in all, fewer than the roster's {self.size} "
                             "slots; raise a cap or lower BENCH")
        return self


class DataConfig(_Strict):
    source: Literal["nflverse", "sportsdataio", "fpl"] = Field("nflverse", description="nflverse or sportsdataio "
                                                              "(NFL), fpl (Premier League)")
    dir: Path | None = Field(None, description="data directory; default $FFBENCH_DATA_DIR")
    projections: Literal["builtin", "sportsdataio", "fantasypros"] = "builtin"
    prepared_dir: Path | None = Field(None, description="where prepared seasons are cached; default outputs/prepared")
    allow_missing_history: Flag = Field(False, description="run a season whose previous season's stats are "
                                        "missing (veterans then have no history: prev_points 0, projections from "
                                        "rookie priors and ADP only); recorded in the prepared manifest")

    def resolved_dir(self) -> Path:
        if self.dir is not None:
            return self.dir
        found = find_data_dir()
        if found is None:
            raise ConfigError(["data.dir: not set and FFBENCH_DATA_DIR is empty; set one of them to the data "
                               "directory (see docs/data.md)"])
        return found


class Draft(_Strict):
    order: Literal["random", "fixed", "rotate"] = "rotate"
    mode: Literal["shortlist", "queue"] = Field(
        "shortlist", description="shortlist: every pick is a shortlist then a pick from it (one team at a time); "
                                 "queue: at the start of each round every team names a ranked queue at once, the "
                                 "round's picks are resolved from the queues in snake order, and only a team whose "
                                 "queue ran dry is asked again")
    queue_size: Count = Field(12, ge=1, le=40, description="draft.mode: queue only: the longest queue a team names "
                                                            "(below the number of teams, late picks' queues may run "
                                                            "dry and are asked again one at a time: slower, not "
                                                            "wrong)")
    shortlist_size: Count = Field(5, ge=1, le=15)
    on_deck: Flag = Field(True, description="the next team names its shortlist while the team on the clock "
                                            "picks (as in a real draft room); false: strictly one at a time; "
                                            "ignored with mode: queue (each round's queues are asked at once)")
    show_per_position: Count = Field(10, ge=1, le=40)

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if self.mode == "shortlist" and self.queue_size == type(self).model_fields["queue_size"].default:
            # a shortlist draft dumps (config.yaml) as it always did
            out.pop("mode", None)
            out.pop("queue_size", None)
        return out


class Trades(_Strict):
    weeks: list[Count] = Field(default_factory=lambda: [4, 7, 10])
    max_players_per_side: Count = Field(2, ge=1, le=4)


class Waivers(_Strict):
    """Waivers and free agency (off by default: leagues configured before it play exactly as they did)."""

    enabled: Flag = Field(False, description="after each week's games: waiver claims, then free-agent adds")
    mode: Literal["faab", "rolling"] = Field("faab", description="faab (free agent acquisition budget): blind bids from a season budget, ties to "
                                             "the worse record; rolling: priority order, a winner moves to the end")
    budget: Count = Field(100, ge=0, le=10000, description="FAAB dollars per team for the season")
    max_claims: Count = Field(3, ge=1, le=10, description="claims (and free-agent adds) per team and week")
    free_agents: Flag = Field(True,
                              description="after waivers clear, first-come free-agent adds (worse record first)")
    show_per_position: Count = Field(8, ge=1, le=40, description="free agents shown per position in a view")


class Playoffs(_Strict):
    """A bracket in the last weeks that decides the champion (off by default: leagues configured before it play
    every week as a regular-season week). Seeds: regular-season record, then points for; with a field that is not
    a power of two the top seeds get first-round byes. Non-playoff teams still set lineups (their points count in
    the season's totals, not in a game)."""

    enabled: Flag = Field(False, description="the last weeks are playoff rounds instead of regular-season games")
    teams: Count = Field(4, ge=2, le=16, description="teams that qualify (the top seeds)")
    round_weeks: list[Count] = Field(default_factory=lambda: [1, 2], description="weeks each round lasts, first "
                                     "round first (a two-week round sums both weeks); the rounds fill the last "
                                     "sum(round_weeks) weeks of the season; default: one week per round and a "
                                     "two-week final")

    @model_validator(mode="before")
    @classmethod
    def _default_rounds(cls, data: Any) -> Any:
        """Without ``round_weeks``, one week per round and a two-week final for the field's number of rounds."""
        if isinstance(data, dict) and "round_weeks" not in data and type(data.get("teams", 4)) is int and \
                2 <= data.get("teams", 4) <= 16:
            rounds = (data.get("teams", 4) - 1).bit_length()
            data = {**data, "round_weeks": [1] * (rounds - 1) + [2]}
        return data

    @field_validator("round_weeks")
    @classmethod
    def _weeks_per_round(cls, v: list[int]) -> list[int]:
        if any(n not in (1, 2) for n in v):
            raise ValueError("each round lasts 1 or 2 weeks")
        return v

    @property
    def rounds(self) -> int:
        """Rounds the bracket needs: ceil(log2(teams))."""
        return (self.teams - 1).bit_length()


def limit_clash(agents: Iterable[tuple[str, Any]]) -> tuple[str, str] | None:
    """The first of ``(who, agent)`` whose LLM endpoint another one gave another ``max_concurrency``, and why:
    an endpoint's calls share one limit (a batch or a cluster holds it for every league), so a second limit would
    be silently unused locally and refused by a Dask scheduler mid-batch. One rule for a league and a batch."""
    first: dict[str, tuple[int, str]] = {}
    for who, agent in agents:
        agent = agent.model if agent.kind == "python" else agent  # a plug-in's model shares its endpoint's limit
        if agent is None or agent.kind != "llm":
            continue
        limit, by = first.setdefault(agent.endpoint, (agent.max_concurrency, who))
        if limit != agent.max_concurrency:
            return who, (f"{agent.max_concurrency} for {who}, but {limit} for {by} on the same endpoint "
                         f"({agent.endpoint}), whose calls share one limit; give them the same max_concurrency")
    return None


def _is_sport_team(name: str, spec: Sport) -> bool:
    """Whether ``name`` holds one of the sport's teams as masked mode's free-text scrubbing finds one (so
    ``validate`` refuses what a masked run would): a code or alias as written (``KC Wolves``, ``JAC``), a full name
    or two-word city in any case, a one-word city or nickname capitalised (``Chiefs Kingdom``; "chiefs" is an
    ordinary word)."""
    teams = {w.casefold() for full in spec.teams.values()
             for w in (full, *(full.rsplit(" ", 1) if spec.team_name_parts else ()))}
    words = [re.sub(r"(?:['\u2019\u2018\u02bc][sS]?)?\.*$", "", w)  # a possessive, trailing dots
             for w in re.findall(r"\w[\w'\u2019\u2018\u02bc.]*", name)]
    return any(w in spec.team_codes or w in spec.team_aliases or any(
        " ".join(words[i:j]).casefold() in teams and (j - i > 1 or w[:1].isupper()) for j in range(i + 1, i + 4))
        for i, w in enumerate(words))


#: Every string a masked run's pseudonym can be: a player (``RB-041``, ``DST-07``), an NFL team (``T07``), a team
#: defense's name (``T07 D/ST``); a fantasy team must not be named like one (:mod:`ffbench_lib.game.masking`).
PSEUDONYM = re.compile(r"[A-Z]{1,3}-\d{2,}|T\d{2,}(?: D/ST)?")


def _masking_off(v: Any) -> Any:
    return "off" if v is False else v  # YAML 1.1 reads an unquoted `masking: off` as false


class Information(_Strict):
    """What agents may learn beyond the data a view holds (#13: rankings that measure skill, not memory)."""

    masking: Annotated[Literal["off", "players", "players_and_teams"], BeforeValidator(_masking_off)] = Field(
        "off", description="players: every player is a stable pseudonym per run (RB-041); players_and_teams: NFL "
        "teams too (T07); statistics, projections, byes, opponents and injury statuses are unchanged")
    numbers: Literal["exact", "protected"] = Field(
        "exact", description="protected (needs masking: players_and_teams): a masked agent's cards show ranges "
        "(180-210) instead of exact numbers, so that every card matches at least 5 real players of the season "
        "(each card read alone; a player's cards read together can still narrow him: docs/memory.md, "
        "ffbench_lib/game/protect.py), its boards are cut by those ranges, and the season's year and each player's "
        "NFL team and opponent are withheld; bots keep the exact numbers")

    @model_validator(mode="after")
    def _protected_needs_masking(self) -> "Information":
        if self.numbers == "protected" and self.masking != "players_and_teams":
            fix = ("set information.masking: players_and_teams" if self.masking == "players" else
                   "set information.masking: players_and_teams (protected numbers hide who a masked player is)")
            why = (": with real NFL teams on every card, a team and a position leave a handful of players, whatever "
                   "the numbers show" if self.masking == "players" else "")
            raise _field_problem("numbers", f"protected needs masking players_and_teams, not "
                                 f"{self.masking}{why}; {fix}, or numbers: exact")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if self.numbers == "exact":  # leagues without protection dump (config.yaml) as they always did
            out.pop("numbers", None)
        return out


class LLMSettings(_Strict):
    """How LLM calls are made for the whole league (per-model parameters live in each team's agent)."""

    max_reasks: Count = Field(2, ge=0, le=5, description="re-asks with the specific error after an invalid answer")
    retries: Count = Field(4, ge=0, le=10, description="retries on rate limits, 5xx, timeouts, connection errors")
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles on every retry")
    budget_usd: float | None = Field(None, gt=0, description="stop cleanly at the next checkpoint past this spend")
    cache_dir: Path | None = Field(None, description="replay cache; default outputs/llm_cache")
    replay_only: Flag = Field(False, description="never call a provider; a cache miss stops the run")
    prompt_version: Literal["v1", "v2"] = Field("v2", description="templates in ffbench_lib/prompts/<version>; "
                                                             "v1 only to replay caches recorded with it")
    sequential: Flag = Field(False, description="ask one agent at a time (for timing comparisons only)")
    max_fallback_rate: float | None = Field(0.25, ge=0, le=1, description="stop the run when an LLM team's share "
                                            "of engine-repaired decisions exceeds this (null: never)")
    fallback_min_decisions: Count = Field(20, ge=1,
                                          description="decisions a team makes before max_fallback_rate applies")


class League(_Strict):
    """One league = one season of one set of teams; the seed picks draft order, schedule and bot randomness."""

    name: str = "league"
    sport: str = Field(DEFAULT_SPORT, description="the sport played: its positions, teams, seasons, injury "
                       "statuses and scoring presets (ffbench_lib/sport/): nfl or fpl (the Premier League, FPL rules)")
    season: int = Field(2024, description="season played (the year it starts in; a season named by two years as "
                        "its sport's data names it, e.g. 2024-25, is read as its first)")
    weeks: Count = Field(17, ge=1, description="weeks (a soccer league's gameweeks) played, at most the sport's")
    seed: int = Field(0, ge=0)
    schedule: Literal["random", "round_robin"] = "random"
    teams: list[Team] = Field(min_length=2)
    roster: Roster = Field(default_factory=Roster)
    scoring: Scoring = Field(default_factory=Scoring)
    draft: Draft = Field(default_factory=Draft)
    trades: Trades = Field(default_factory=Trades)
    waivers: Waivers = Field(default_factory=Waivers)
    playoffs: Playoffs = Field(default_factory=Playoffs)
    information: Information = Field(default_factory=Information)
    data: DataConfig = Field(default_factory=DataConfig)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        if not self.playoffs.enabled:  # a league without playoffs dumps (config.yaml) as it always did
            out.pop("playoffs", None)
        if self.information == Information():  # likewise a league without masking
            out.pop("information", None)
        if self.sport == DEFAULT_SPORT:  # and a league of the default sport (run ids and digests stay as they were)
            out.pop("sport", None)
        else:  # another sport's season as its data names it (2024-25), and its roster without the sport again
            out["season"] = self.sport_spec.season_name(self.season)
            out["roster"].pop("sport", None)
        return out

    @field_validator("sport", mode="before")
    @classmethod
    def _sport_known(cls, v: Any) -> Any:
        if isinstance(v, str) and v not in SPORTS:
            raise ValueError(f"unknown sport; the sports are {', '.join(SPORTS)}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _sport_defaults(cls, data: Any) -> Any:
        """A league of another sport than the default: its roster reads the sport's positions, and without a roster,
        data source or weeks of its own it gets the sport's; its season may be named as the sport names it."""
        name = data.get("sport", DEFAULT_SPORT) if isinstance(data, dict) else DEFAULT_SPORT
        if not isinstance(name, str) or name == DEFAULT_SPORT or name not in SPORTS:
            return data  # the default sport, or one the field's own validator refuses
        spec = get_sport(name)
        data = dict(data)
        roster = data.get("roster", {})
        if isinstance(roster, dict):  # the keys a league gives, over the sport's roster
            data["roster"] = {**spec.default_roster, **roster, "sport": spec.name}
        source = data.get("data", {})
        if isinstance(source, dict) and "source" not in source:
            data["data"] = {**source, "source": spec.sources[0]}
        data.setdefault("weeks", spec.max_weeks)
        data.setdefault("scoring", spec.scoring_presets[0])
        data.setdefault("season", spec.seasons[-2] if len(spec.seasons) > 1 else spec.seasons[-1])
        year = spec.season_year(data["season"])
        if year is not None:
            data["season"] = year
        return data

    @field_validator("weeks")
    @classmethod
    def _weeks_of_sport(cls, v: int, info: ValidationInfo) -> int:
        if "sport" in info.data and v > get_sport(info.data["sport"]).max_weeks:
            spec = get_sport(info.data["sport"])
            raise ValueError(f"Input should be less than or equal to {spec.max_weeks} ({spec.title} seasons have "
                             f"{spec.max_weeks} {spec.calendar_unit}s)")
        return v

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # YAML `seed: true` would otherwise be seed 1
            raise ValueError("expected a whole number, not true/false")
        return v

    @field_validator("scoring", mode="before")
    @classmethod
    def _preset_shorthand(cls, v: Any) -> Any:
        return {"preset": v} if isinstance(v, str) else v

    @field_validator("season")
    @classmethod
    def _season_known(cls, v: int, info: ValidationInfo) -> int:
        if "sport" not in info.data:  # the sport's own error says why
            return v
        spec = get_sport(info.data["sport"])
        if v not in spec.seasons:
            raise ValueError(f"no data for season {spec.season_name(v)}; allowed: "
                             f"{', '.join(spec.season_name(y) for y in spec.seasons)}")
        return v

    @model_validator(mode="after")
    def _league_consistent(self) -> "League":
        names = [t.name for t in self.teams]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"teams: duplicate team name {dup[0]!r}; names must be unique")
        if len(self.teams) % 2:
            raise ValueError(f"teams: {len(self.teams)} teams; an even number is needed for weekly matchups")
        clash = limit_clash((f"team {t.name!r}", t.agent) for t in self.teams)
        if clash:
            i = next(i for i, t in enumerate(self.teams) if f"team {t.name!r}" == clash[0])
            raise _field_problem(f"teams[{i}].agent.max_concurrency", clash[1])
        seen: dict[str, tuple[int, Any]] = {}
        for i, t in enumerate(self.teams):  # one agent id is one agent: plug-ins set up apart need names apart
            if t.agent.kind == "python":
                j, other = seen.setdefault(t.agent.agent_id, (i, t.agent))
                if other != t.agent:
                    raise _field_problem(f"teams[{i}].agent.name", f"{t.agent.agent_id} also names teams[{j}]'s "
                                         "plug-in, set up otherwise (entry, options or model): tables would pool "
                                         "them as one agent; give each its own name")
        po = self.playoffs
        if po.enabled:
            if po.teams > len(self.teams):
                raise ValueError(f"playoffs.teams: {po.teams} playoff teams in a league of {len(self.teams)}; "
                                 "lower playoffs.teams")
            if len(po.round_weeks) != po.rounds:
                raise ValueError(f"playoffs.round_weeks: {po.teams} playoff teams play {po.rounds} round(s), so give "
                                 f"{po.rounds} entries (got {len(po.round_weeks)})")
            if sum(po.round_weeks) >= self.weeks:
                raise ValueError(f"playoffs.round_weeks: {sum(po.round_weeks)} playoff weeks leave no regular season "
                                 f"in {self.weeks} weeks; raise weeks or shorten the rounds")
        bad = [w for w in self.trades.weeks if not 1 <= w <= self.weeks]
        if bad:
            raise ValueError(f"trades.weeks: week {bad[0]} is outside 1..{self.weeks}; give trade weeks within the "
                             f"season (e.g. trades.weeks: [{max(1, self.weeks // 2)}], or [] for none) or raise weeks")
        late = [w for w in self.trades.weeks if w > self.regular_weeks]
        if late:  # the trade deadline: an eliminated team could otherwise hand its players to a contender
            raise ValueError(f"trades.weeks: week {late[0]} is in the playoffs (the regular season ends in week "
                             f"{self.regular_weeks}); trades happen in the regular season")
        if self.roster.IR and not self.waivers.enabled:
            raise ValueError("roster.IR: an IR move frees a roster spot that only waivers and free agents can fill; "
                             "set waivers.enabled: true or IR: 0")
        spec = self.sport_spec
        if self.data.source not in spec.sources:
            raise _field_problem("data.source", f"{self.data.source!r} holds no {spec.title} data; the sources of "
                                 f"sport {spec.name} are {', '.join(spec.sources)}")
        if (self.scoring.preset is not None or spec.position_rules) and self.scoring.preset not in \
                spec.scoring_presets or (spec.position_rules and (self.scoring.weights or self.scoring.tiers)):
            fix = ("custom weights and tiers are not available for it yet" if spec.position_rules and
                   self.scoring.preset in spec.scoring_presets else f"the presets are {', '.join(spec.scoring_presets)}")
            raise _field_problem("scoring.preset", f"sport {spec.name} scores by its own presets; {fix}")
        if self.roster.auto_subs and not spec.has_minutes:
            raise _field_problem("roster.auto_subs", f"automatic substitutions need to know who played, and "
                                 f"{spec.title} data has no minutes; set auto_subs: false")
        if spec.position_rules is not None and self.data.projections != "builtin":
            raise _field_problem("data.projections", f"sport {spec.name} has the built-in projections only; use "
                                 "builtin")
        if spec.position_rules is None:
            self._scoring_consistent(spec)
        for i, t in enumerate(self.teams):
            strategy = getattr(t.agent, "prompt", None)
            if strategy is not None and strategy.examples:
                sports = {p.stem for p in (PROMPTS_DIR / "examples").glob("*.jsonl")}  # agents/examples.py
                if spec.name not in sports or t.agent.prompt_version(self.llm.prompt_version) == "v1":
                    raise _field_problem(f"teams[{i}].agent.prompt.examples", f"worked examples exist for "
                                         f"{', '.join(sorted(sports))} with prompt_version v2 only; set examples: 0")
            if t.agent.kind == "llm" and t.agent.mode == "tools" and t.agent.prompt_version(self.llm.prompt_version) == "v1":
                raise _field_problem(f"teams[{i}].agent.mode", "prompt_version v1 has no tools prompts (it only "
                                     "replays old caches); use prompt_version v2 or mode: tables")
        v1 = any(t.agent.kind == "llm" and t.agent.prompt_version(self.llm.prompt_version) == "v1" for t in self.teams)
        if self.waivers.enabled and v1:
            raise ValueError("waivers.enabled: prompt_version v1 has no waiver prompts (it only replays old "
                             "caches); use prompt_version v2 or turn waivers off")
        if self.roster.IR and v1:
            raise ValueError("roster.IR: prompt_version v1 has no IR prompts (it only replays old caches); use "
                             "prompt_version v2 or set roster.IR to 0")
        if self.sport != DEFAULT_SPORT and v1:
            raise _field_problem("llm.prompt_version", f"v1 has no {spec.title} prompts (it only replays old "
                                 "caches); use v2")
        return self

    def _scoring_consistent(self, spec: Sport) -> None:
        """A league scored by its weights (the NFL): every rule scores a stat of its positions, and each position
        has one."""
        both = sorted(set(self.scoring.weights) & set(self.scoring.tiers))
        if both:
            raise ValueError(f"scoring: {both[0]} has both a weight and tiers, which would both count; keep one")
        for pos, supply in spec.position_supply.items():
            need = len(self.teams) * self.roster.starting(pos)
            if need > supply:
                raise _field_problem(f"roster.{pos}", f"{len(self.teams)} teams × {self.roster.starting(pos)} starting "
                                     f"{pos} need {need}, but there are only {supply}; lower the {pos} slots or the "
                                     "number of teams")
        groups = set(spec.stat_groups(self.roster.positions))
        for where, given in (("weights", self.scoring.weights), ("tiers", self.scoring.tiers)):
            for stat in given:  # an explicit rule the league would silently ignore
                if not set(scoring.STAT_GROUPS.get(stat, ())) & groups:
                    owners = [p for p, g in spec.position_stat_groups.items()
                              if set(g) & set(scoring.STAT_GROUPS[stat])]
                    raise _field_problem(f"scoring.{where}.{stat}", f"a {'/'.join(owners)} stat, but the roster has no "
                                         f"{'/'.join(owners)}; add the position to the roster or remove the rule")
        weights, tiers = self.scoring_weights, self.scoring_tiers
        for pos in self.roster.positions:  # e.g. K under ffbench_v1, which has no kicking rules: every kick 0 points
            stats = {s for g in spec.position_stat_groups.get(pos, ()) for s in scoring.GROUPS[g]}
            if not any(weights.get(s) for s in stats) and not stats & set(tiers):
                raise ValueError(f"scoring: no rule scores a {pos} stat, so every {pos} would score 0; use a preset "
                                 f"with {pos} rules (ppr, half_ppr, standard) or give scoring.weights for them")

    @model_validator(mode="after")
    def _names_not_masked(self) -> "League":
        """Masked mode: a team named like a pseudonym or (masking teams) an NFL team would be masked or mapped
        back as one (a trade sent to T07). Refused from the name alone; a name that reads as a player needs the
        season's data (the run refuses it, :class:`ffbench_lib.game.masking.Masker`)."""
        mode = self.information.masking
        if mode == "off":
            return self
        for i, team in enumerate(self.teams):
            if team.agent.kind == "human":  # masking is for models' memories; a person would search pseudonyms
                raise _field_problem("information.masking", f"team {team.name} is played by a person, who would see "
                                     "pseudonyms instead of players; set information.masking: off to play it")
            what = ("a pseudonym" if PSEUDONYM.fullmatch(team.name) else
                    f"an {self.sport_spec.title} team"
                    if mode == "players_and_teams" and _is_sport_team(team.name, self.sport_spec) else None)
            if what:
                raise _field_problem(f"teams[{i}].name", f"{team.name!r} reads as {what}, which information.masking: "
                                     f"{mode} would mask or map back; rename the team")
        return self

    @property
    def sport_spec(self) -> Sport:
        """The facts of the league's sport (:mod:`ffbench_lib.sport`)."""
        return get_sport(self.sport)

    @property
    def scoring_weights(self) -> dict[str, float]:
        """Per-unit weights of the stats of this league's positions (a league without K/DST: the offensive ones;
        ``{}`` in a sport scored by position: :attr:`position_rules`)."""
        if self.sport_spec.position_rules is not None:
            return {}
        return self.scoring.resolved(self.roster.positions)

    @property
    def scoring_tiers(self) -> dict[str, list]:
        """Tiered rules of the stats of this league's positions (``{}`` for a league without them)."""
        if self.sport_spec.position_rules is not None:
            return {}
        return self.scoring.resolved_tiers(self.roster.positions)

    @property
    def position_rules(self) -> dict[str, scoring.Rules] | None:
        """Each position's scoring rules in a sport scored by position (FPL, this season's), else None."""
        rules = self.sport_spec.position_rules
        return None if rules is None else dict(rules(self.season))

    @property
    def regular_weeks(self) -> int:
        """Weeks of the regular season (every week when there are no playoffs)."""
        return self.weeks - (sum(self.playoffs.round_weeks) if self.playoffs.enabled else 0)

    def playoff_rounds(self) -> list[list[int]]:
        """The weeks of each playoff round, first round first (empty without playoffs): the one place the bracket's
        calendar is laid out."""
        if not self.playoffs.enabled:
            return []
        out, week = [], self.regular_weeks
        for n in self.playoffs.round_weeks:
            out.append(list(range(week + 1, week + n + 1)))
            week += n
        return out

    def playoff_round(self, week: int) -> int | None:
        """The playoff round (1 = first) that ``week`` belongs to, or None for a regular-season week."""
        return next((rnd for rnd, weeks in enumerate(self.playoff_rounds(), start=1) if week in weeks), None)
