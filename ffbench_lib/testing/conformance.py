"""The conformance kit for decision kinds: what a kind needs beyond its module, and which piece is missing.

A kind is registered in one module (``game/decisions/<kind>.py``: view, answer model, legality, prompt fields,
``view_schema``, ``tables``), but playing it takes pieces elsewhere: a prompt template per prompt version, a policy
in every bot strategy, an answer from the fake LLM server, a form on the desk, the columns of the tables it is
recorded in. :func:`check_kind` names each missing piece and the file to add it in (an empty list: complete);
``tests/test_conformance.py`` runs it on every registered kind, so a kind is checked the day it is registered.
Given views the kind was asked with, it also checks them against the schema (:func:`view_problems`), renders
their prompts, and judges the bots' and the fake server's answers to them.
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pydantic import TypeAdapter, ValidationError

from ffbench_lib.agents.bots import BOTS, make_bot
from ffbench_lib.agents.prompts import DEFAULT_VERSION, PROMPTS, template
from ffbench_lib.config.league import LLMSettings
from ffbench_lib.game.decisions import REGISTRY, Decision
from ffbench_lib.game.render import LEGACY
from ffbench_lib.game.views import canonical_json
from ffbench_lib.records.tables import COLUMNS
from ffbench_lib.testing import fake_openai

#: the prompt versions a league may choose (the config's choices): each needs a template of every kind
PROMPT_VERSIONS: tuple[str, ...] = typing.get_args(LLMSettings.model_fields["prompt_version"].annotation)
#: the package root, for paths as a contributor types them
ROOT = Path(__file__).resolve().parents[2]
#: what the fake server's policy answers a decision it does not know
UNKNOWN_REPLY = {"rationale": "unknown decision"}


@dataclass
class KindReport:
    """``problems``: pieces a contributor must add (empty: the kind is complete); ``notes``: choices that stand
    (no form of its own: the desk's GenericForm; no template in the frozen legacy prompt version)."""

    kind: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_kind(kind: str, views: Iterable[dict] = ()) -> list[str]:
    """The problems a contributor must fix for ``kind`` to be complete, each naming the piece and its file."""
    return inspect_kind(kind, views).problems


def inspect_kind(kind: str, views: Iterable[dict] = ()) -> KindReport:
    """Every check of :func:`check_kind`, with the notes; ``views``: views ``kind`` was asked with (optional)."""
    report = KindReport(kind)
    cls = REGISTRY.get(kind)
    if cls is None:
        report.problems.append(f"{kind!r} is not a registered decision kind: add a module "
                               f"ffbench_lib/game/decisions/{kind}.py with a @register class whose kind = {kind!r}")
        return report
    module = _path(inspect.getfile(cls))
    for check in (_methods, _templates, _bots, _fake_server, _form, _tables, _schema):
        check(cls, module, report)
    problems = {p: None for p in report.problems}  # one sentence per problem, however many views show it
    for view in views:
        problems.update(dict.fromkeys(_view_checks(cls, view)))
    report.problems = list(problems)
    return report


def view_problems(kind: str, view: Any) -> list[str]:
    """Why ``view`` (as logged: its JSON) does not match ``kind``'s ``view_schema``: a key missing or unknown, a
    value of another type; empty: it matches."""
    try:
        _adapter(REGISTRY[kind].view_schema).validate_json(canonical_json(view))
    except ValidationError as e:
        return [f"view.{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    return []


# ----------------------------------------------------------------------------------------------- checks
def _path(file: str) -> str:
    try:
        return str(Path(file).resolve().relative_to(ROOT))
    except ValueError:  # a kind defined outside the package (a test's)
        return file


def _methods(cls: type[Decision], module: str, report: KindReport) -> None:
    for name in ("view", "resolve", "prompt_fields"):
        if getattr(cls, name).__func__ is getattr(Decision, name).__func__:
            report.problems.append(f"{cls.__name__} does not define {name}(): add it in {module}")


def _templates(cls: type[Decision], module: str, report: KindReport) -> None:
    for version in PROMPT_VERSIONS:
        path = f"ffbench_lib/prompts/{version}/{cls.template}.txt"
        if (PROMPTS / version / f"{cls.template}.txt").exists():
            continue
        if version == LEGACY:
            report.notes.append(f"no {path}: prompt version {version} is frozen (it only replays old caches), so "
                                f"the config must refuse {cls.kind} for LLM teams under it (config/league.py)")
        else:
            report.problems.append(f"no prompt template for prompt version {version}: add {path} (its $fields are "
                                   f"what {cls.__name__}.prompt_fields returns)")


def _bots(cls: type[Decision], module: str, report: KindReport) -> None:
    for strategy, bot in BOTS.items():
        policy = getattr(bot, cls.kind, None)
        if not inspect.iscoroutinefunction(policy):
            report.problems.append(
                f"bot strategy {strategy!r} has no policy for {cls.kind}: add `async def {cls.kind}(self, view)` "
                f"to {getattr(bot, '__name__', bot)} in ffbench_lib/agents/bots.py (or to _Bot, which every "
                "strategy inherits; the random bot's is uniform over the legal actions)")


def _fake_server(cls: type[Decision], module: str, report: KindReport) -> None:
    """The fake server's policy asked with a bare ``DECISION:`` line: its unknown-decision reply means it has no
    branch for the kind. A branch may fail on the bare prompt (it reads tables the prompt lacks): that still
    answers; the answers themselves are judged on real prompts (``views``) and by the fake-server seasons."""
    fix = (f"the fake LLM server does not answer {cls.kind}: add a branch for it to policy() in "
           "ffbench_lib/testing/fake_openai.py (read the ids in the prompt's tables, answer like a sensible manager)")
    try:
        reply = fake_openai.policy(f"DECISION: {cls.kind}\n")
    except Exception:  # noqa: BLE001 - the branch exists and read a table the bare prompt does not have
        return
    if reply == UNKNOWN_REPLY:
        report.problems.append(fix)


def form_kinds() -> dict[str, str]:
    """kind -> the name of the form registered for it on the desk (``@form`` in ``play/forms``; imported here,
    not at the top, because the forms load ipywidgets)."""
    from ffbench_lib.play.forms import FORMS

    return {kind: cls.__name__ for kind, cls in FORMS.items()}


def _form(cls: type[Decision], module: str, report: KindReport) -> None:
    if cls.kind not in form_kinds():
        report.notes.append(f"no form of its own: the desk shows GenericForm (the answer as JSON); for a better one "
                            f"add a Form subclass with kinds = ({cls.kind!r},) in ffbench_lib/play/forms/ and import "
                            "its module in ffbench_lib/play/forms/__init__.py")


def _tables(cls: type[Decision], module: str, report: KindReport) -> None:
    for table in cls.tables:
        if table not in COLUMNS:
            report.problems.append(f"{cls.__name__}.tables names {table!r}, which has no columns: add them to "
                                   "COLUMNS in ffbench_lib/records/tables.py (and a line to the run directory's docs)")


def _schema(cls: type[Decision], module: str, report: KindReport) -> None:
    fix = (f"declare the view's keys as a TypedDict decorated with @with_config(VIEW) next to {cls.__name__} in "
           f"{module} (shared pieces in ffbench_lib/game/decisions/_view_parts.py) and set view_schema to it")
    if cls.view_schema is None:
        report.problems.append(f"{cls.__name__} has no view schema: {fix}")
        return
    try:
        schema = _adapter(cls.view_schema).json_schema()
    except Exception as e:  # noqa: BLE001 - any reason the schema cannot be built is the contributor's to fix
        report.problems.append(f"{cls.__name__}.view_schema cannot be built ({type(e).__name__}: {e}): {fix}")
        return
    objects = [schema, *schema.get("$defs", {}).values()]
    lenient = sorted(o.get("title", "?") for o in objects if "properties" in o and o.get("additionalProperties")
                     is not False)
    if lenient:
        report.problems.append(f"{cls.__name__}.view_schema lets unknown keys through ({', '.join(lenient)}): "
                               f"decorate each with @with_config(VIEW) ({module})")


def _view_checks(cls: type[Decision], view: dict) -> list[str]:
    """One view the kind was asked with: the schema; then (a view that matches it) its prompt in every version
    with a template, and the fake server's (the default version's prompt) and every bot's answers to it."""
    if cls.view_schema is not None:
        found = view_problems(cls.kind, view)
        if found:  # the view is wrong: what is built from it would only echo that
            return [f"a {cls.kind} view does not match {cls.view_schema.__name__}: {p}" for p in found]
    found, prompt = [], None
    for version in PROMPT_VERSIONS:
        path = f"ffbench_lib/prompts/{version}/{cls.template}.txt"
        if not (PROMPTS / version / f"{cls.template}.txt").exists():
            continue
        try:
            fields = cls.prompt_fields(view, version)
        except Exception as e:  # noqa: BLE001 - the contributor's to fix, whatever it is
            found.append(f"{cls.__name__}.prompt_fields fails on a {cls.kind} view ({type(e).__name__}: {e}): "
                         f"fix it in {_path(inspect.getfile(cls))}")
            continue
        try:
            text = template(version, cls.template).substitute(**fields)
        except (KeyError, ValueError) as e:
            found.append(f"{path} names a field {cls.__name__}.prompt_fields does not give ({type(e).__name__}: "
                         f"{e}): match its $fields to prompt_fields")
            continue
        if version == DEFAULT_VERSION:
            prompt = text
    if prompt is not None:
        reply = fake_openai.policy(prompt)
        try:
            cls.Answer.model_validate(reply)
        except ValidationError as e:
            found.append(f"the fake LLM server answers a {cls.kind} prompt with {json.dumps(reply)[:120]}, not a "
                         f"{cls.Answer.__name__} ({e.error_count()} error(s)): fix its branch in "
                         "ffbench_lib/testing/fake_openai.py")
    for strategy in BOTS:
        bot = make_bot(strategy, view["team"], 0)
        if not inspect.iscoroutinefunction(getattr(bot, cls.kind, None)):
            continue  # named by _bots
        illegal = cls.validate(asyncio.run(bot.decide(cls.kind, view)), view)
        if illegal:
            found.append(f"bot strategy {strategy!r} answers a {cls.kind} view illegally ({'; '.join(illegal)}): "
                         f"its policy in ffbench_lib/agents/bots.py must choose among the legal actions")
    return found


@functools.cache
def _adapter(schema: type) -> TypeAdapter:
    """One validator per schema (building one takes milliseconds; a season logs thousands of views)."""
    return TypeAdapter(schema)


def main(argv: list[str] | None = None) -> int:
    """``python -m ffbench_lib.testing.conformance [KIND ...]``: each kind's missing pieces and notes (every
    registered kind when none is named); exit 1 when a piece is missing."""
    import sys

    kinds = (sys.argv[1:] if argv is None else argv) or sorted(REGISTRY)
    missing = False
    for kind in kinds:
        report = inspect_kind(kind)
        missing |= bool(report.problems)
        print(f"{kind}: {'complete' if not report.problems else f'{len(report.problems)} missing'}")
        for line in report.problems:
            print(f"  missing: {line}")
        for line in report.notes:
            print(f"  note: {line}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
