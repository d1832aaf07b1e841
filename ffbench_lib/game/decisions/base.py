"""What every decision type declares, and the registry.

A decision type is a class registered with :func:`register`: its ``kind`` (the name agents are asked with and
logs carry), its prompt ``template``, a pydantic ``Answer`` model (the answer's documented shape),
its ``view_schema`` (the view's keys, checked against every logged view), the run ``tables`` it is recorded
in, ``validate(answer, view)`` - the one place its legality lives: the engine judges with it and the LLM agent
re-asks with its problems - and ``resolve(answer, view)``: the legal part of the answer plus the repair of the
rest, with who decided. A decision is judged against the view the team saw: the view holds everything
legality depends on (rosters, caps, slots, the offer, players taken), so a bot, the LLM agent and the engine
reach the same verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

from pydantic import BaseModel, ConfigDict

from ffbench_lib.config.league import FLEX_SLOTS, Roster
from ffbench_lib.game.rules.trades import Market

if TYPE_CHECKING:
    from ffbench_lib.game.state import LeagueState
    from ffbench_lib.game.views import Firewall

Answer = dict[str, Any]


class AnswerModel(BaseModel):
    """Answers are read leniently (extra keys such as ``_llm`` are kept); ``validate`` judges them."""

    model_config = ConfigDict(extra="allow")
    rationale: str | None = None


@dataclass
class Outcome:
    """What the engine applies: ``applied`` as logged, ``value`` for the engine (an id, an offer, a lineup),
    ``decided_by`` ``agent`` or ``fallback``, and every problem found (a note about a kept answer included)."""

    applied: Any
    decided_by: str
    problems: list[str] = field(default_factory=list)
    value: Any = None


class Decision:
    kind: ClassVar[str]
    template: ClassVar[str]
    Answer: ClassVar[type[AnswerModel]] = AnswerModel
    #: the view's keys and types: a TypedDict decorated with ``_view_parts.VIEW`` (no unknown key), next to the kind
    view_schema: ClassVar[type | None] = None
    #: the run tables (besides ``decisions.jsonl``) the kind's outcomes are recorded in, each with its columns in the
    #: recorder and its line in the run directory's docs (:func:`ffbench_lib.testing.conformance.check_kind`)
    tables: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def view(cls, fw: "Firewall", state: "LeagueState", team: str, **where: Any) -> dict:  # pragma: no cover
        """The view this kind is asked with, built through the information firewall (``where``: the week, the
        pick, the offer on the table...)."""
        raise NotImplementedError

    @classmethod
    def validate(cls, answer: Any, view: dict) -> list[str]:
        """Problems with ``answer`` given ``view`` (empty: legal as it stands)."""
        return cls.resolve(answer, view).problems

    @classmethod
    def resolve(cls, answer: Any, view: dict) -> Outcome:  # pragma: no cover - every kind defines it
        raise NotImplementedError

    @classmethod
    def prompt_fields(cls, view: dict, version: str) -> dict[str, Any]:  # pragma: no cover
        """The values the kind's template substitutes."""
        raise NotImplementedError


REGISTRY: dict[str, type[Decision]] = {}


def register(cls: type[Decision]) -> type[Decision]:
    if cls.kind in REGISTRY:
        raise ValueError(f"decision kind {cls.kind!r} registered twice")
    cls.template = getattr(cls, "template", None) or cls.kind
    REGISTRY[cls.kind] = cls
    return cls


def roster_from_rules(rules: Mapping[str, Any]) -> Roster:
    """The league's roster rules from a view's ``rules``: starting slots, FLEX and SUPERFLEX, bench, flex
    positions, caps (a position without starting slots is known from its cap or its flex eligibility).
    Built once per distinct rules (every bot decision asks; a Roster is immutable)."""
    key = (tuple(rules["roster_slots"].items()), rules["bench"], rules.get("ir_slots", 0),
           tuple((k, tuple(rules[k])) for k in FLEX_SLOTS.values() if k in rules), tuple(rules["caps"].items()),
           tuple(rules.get("most_starters", {}).items()), rules.get("auto_subs", False), rules.get("sport"))
    try:
        hash(key)
    except TypeError:  # not the plain numbers a view holds: build it uncached (pydantic names the problem)
        return _roster.__wrapped__(key)
    return _roster(key)


@lru_cache(maxsize=64)
def _roster(key: tuple) -> Roster:
    roster_slots, bench, ir, eligible, caps = dict(key[0]), key[1], key[2], dict(key[3]), dict(key[4])
    most, auto_subs, sport = dict(key[5]), key[6], key[7]
    flex = {slot: roster_slots.get(slot, 0) for slot in FLEX_SLOTS}
    slots = {pos: n for pos, n in roster_slots.items() if pos not in FLEX_SLOTS}
    for pos in [*caps, *(p for ps in eligible.values() for p in ps)]:
        slots.setdefault(pos, 0)
    other = {**({"most": most} if most else {}), **({"auto_subs": True} if auto_subs else {}),
             **({"sport": sport} if sport else {})}
    return Roster(**slots, **flex, BENCH=bench, IR=ir, **eligible, caps=caps, **other)


def market_from_view(view: dict) -> Market:
    """The trade rules' inputs as a trade view shows them (the teams it sees, positions, caps, locked players)."""
    teams = [{"team": view["team"], "roster": view["my_roster"]}, *view["other_teams"]]
    return Market(rosters={t["team"]: [c["id"] for c in t["roster"]] for t in teams},
                  positions={c["id"]: c["pos"] for t in teams for c in t["roster"]},
                  roster=roster_from_rules(view["rules"]), max_per_side=view["max_players_per_side"],
                  locked=frozenset(view["locked_players"]))
