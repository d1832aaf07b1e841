"""Prompts: versioned template files (``prompts/<version>/*.txt``) filled with compact tables rendered from a
view. Each decision type names its template and fills it (``prompt_fields`` in :mod:`ffbench_lib.game.decisions`);
the system prompt is shared.

``v2`` (the default) names the league's real scoring and point values, shows FLEX only when the roster has a
FLEX slot, and quotes untrusted text (a counterparty's rationale) as one JSON string in a labelled field, so it
cannot start a line of its own, open a code fence or close a delimiter. ``v1`` renders exactly as it always did
(its PPR wording, ``<<<...>>>`` delimiters): keep it only to replay caches recorded with it."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template

from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.render import flex, league_rules_text, scoring_name, scoring_values, season_label, slots, sport_text

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
DEFAULT_VERSION = "v2"


@lru_cache(maxsize=64)
def template(version: str, name: str) -> Template:
    path = PROMPTS / version / f"{name}.txt"
    if not path.exists():
        raise FileNotFoundError(f"prompt template {path} missing (prompt_version {version!r})")
    return Template(path.read_text(encoding="utf-8"))


def system_prompt(view: dict, version: str = DEFAULT_VERSION) -> str:
    rules = view["rules"]
    flex_rule, _, _ = flex(rules)
    return template(version, "system").substitute(
        team=view["team"], teams=rules["teams"], season=season_label(rules), slots=slots(rules),
        flex="/".join(rules["flex_positions"]), bench=rules["bench"],
        caps=", ".join(f"{k} {v}" for k, v in sorted(rules["caps"].items())),
        scoring=", ".join(f"{k} {v:+g}" for k, v in sorted(rules["scoring"].items())),
        scoring_name=scoring_name(rules["scoring"], rules.get("scoring_tiers")),
        scoring_values=scoring_values(rules["scoring"]), flex_rule=flex_rule, **league_rules_text(rules),
        **sport_text(rules))


def user_prompt(decision: str, view: dict, version: str = DEFAULT_VERSION) -> str:
    kind = REGISTRY[decision]
    return template(version, kind.template).substitute(**kind.prompt_fields(view, version))


def messages(decision: str, view: dict, version: str = DEFAULT_VERSION) -> list[dict[str, str]]:
    return [{"role": "system", "content": system_prompt(view, version)},
            {"role": "user", "content": user_prompt(decision, view, version)}]


def fold_system(msgs: list[dict[str, str]]) -> list[dict[str, str]]:
    """``system_in_user``: the system text goes in front of the first user message (some chat templates
    silently drop the system role)."""
    system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system")
    rest = [dict(m) for m in msgs if m["role"] != "system"]
    first = next((m for m in rest if m["role"] == "user"), None)
    if system and first is not None:
        first["content"] = f"{system}\n\n{first['content']}"
    return rest


def fitted(decision: str, view: dict, level: int, version: str = DEFAULT_VERSION,
           system_in_user: bool = False) -> tuple[list[dict[str, str]], list[str]]:
    """The messages of ``decision`` for ``view`` shortened to ``level`` (:mod:`.fit`), the model told what was
    shortened, the system text folded in with ``system_in_user``; and what was shortened."""
    from ffbench_lib.agents import fit

    short, notes = fit.shorten(view, level)
    msgs = messages(decision, short, version)
    if notes:
        msgs = [dict(m) for m in msgs]
        user = next(m for m in msgs if m["role"] == "user")
        user["content"] += "\n\n" + fit.note(notes)
    return (fold_system(msgs) if system_in_user else msgs), notes

