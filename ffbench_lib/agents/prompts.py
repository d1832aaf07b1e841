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

from ffbench_lib.agents.examples import with_examples
from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.render import flex, league_rules_text, scoring_name, scoring_values, season_label, slots, sport_text

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
DEFAULT_VERSION = "v2"


#: the system prompt's answer-format line each ``reasoning`` setting says instead (``brief``: the templates' own)
REASONING = {
    "brief": 'Always include a short "rationale" string.',
    "none": 'Give "rationale" as an empty string (""): answer with the decision alone.',
    "full": ('Before the JSON object, think the decision through step by step in plain text; then end your reply '
             'with the one JSON object (its "rationale" a short summary of your reasoning).'),
}


@lru_cache(maxsize=64)
def template(version: str, name: str, folder: str | None = None) -> Template:
    """The template ``name`` of ``version``, or the file of that name in a strategy's own ``folder`` when it has
    one (the others stay the version's)."""
    own = Path(folder) / f"{name}.txt" if folder else None
    path = own if own is not None and own.is_file() else PROMPTS / version / f"{name}.txt"
    if not path.exists():
        raise FileNotFoundError(f"prompt template {path} missing (prompt_version {version!r})")
    return Template(path.read_text(encoding="utf-8"))


def _folder(strategy) -> str | None:
    return str(strategy.dir) if strategy is not None and strategy.dir is not None else None


def system_prompt(view: dict, version: str = DEFAULT_VERSION, strategy=None, name: str = "system") -> str:
    """The rules as the model is told them: ``system`` (the table prompts) or ``tools_system`` (tools mode: the
    point values left to the ``league_rules`` tool)."""
    rules = view["rules"]
    flex_rule, _, _ = flex(rules)
    scoring_brief = ("by position, per match" if "position_scoring" in rules else
                     scoring_name(rules["scoring"], rules.get("scoring_tiers")))
    text = template(version, name, _folder(strategy)).substitute(scoring_brief=scoring_brief,
        team=view["team"], teams=rules["teams"], season=season_label(rules), slots=slots(rules),
        flex="/".join(rules["flex_positions"]), bench=rules["bench"],
        caps=", ".join(f"{k} {v}" for k, v in sorted(rules["caps"].items())),
        scoring=", ".join(f"{k} {v:+g}" for k, v in sorted(rules["scoring"].items())),
        scoring_name=scoring_name(rules["scoring"], rules.get("scoring_tiers")),
        scoring_values=scoring_values(rules["scoring"]), flex_rule=flex_rule, **league_rules_text(rules),
        **sport_text(rules))
    reasoning = strategy.reasoning if strategy is not None else "brief"
    return text if reasoning == "brief" else text.replace(REASONING["brief"], REASONING[reasoning])


def user_prompt(decision: str, view: dict, version: str = DEFAULT_VERSION, strategy=None, prefix: str = "") -> str:
    """The decision's template filled from ``view``; ``prefix`` ``tools_``: its tools-mode template where it has
    one (a shorter text for a brief view), else the table template."""
    kind = REGISTRY[decision]
    name = kind.template
    if prefix and (PROMPTS / version / f"{prefix}{name}.txt").is_file():
        name = prefix + name
    return template(version, name, _folder(strategy)).substitute(**kind.prompt_fields(view, version))


def messages(decision: str, view: dict, version: str = DEFAULT_VERSION, strategy=None) -> list[dict[str, str]]:
    """The system and user messages of ``decision`` for ``view``: ``version``'s templates, as a team's prompt
    ``strategy`` changes them (``reasoning``, a folder of its own templates, worked ``examples`` between the two;
    None: the version's as they are)."""
    msgs = [{"role": "system", "content": system_prompt(view, version, strategy)},
            {"role": "user", "content": user_prompt(decision, view, version, strategy)}]
    n = strategy.examples if strategy is not None else 0
    return with_examples(msgs, decision, view, n, lambda v: user_prompt(decision, v, version, strategy)) if n else msgs


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
           system_in_user: bool = False, strategy=None) -> tuple[list[dict[str, str]], list[str]]:
    """The messages of ``decision`` for ``view`` shortened to ``level`` (:mod:`.fit`), the model told what was
    shortened, the system text folded in with ``system_in_user``; and what was shortened."""
    from ffbench_lib.agents import fit

    short, notes = fit.shorten(view, level)
    msgs = messages(decision, short, version, strategy)
    if notes:
        msgs = [dict(m) for m in msgs]
        user = next(m for m in msgs if m["role"] == "user")
        user["content"] += "\n\n" + fit.note(notes)
    return (fold_system(msgs) if system_in_user else msgs), notes

