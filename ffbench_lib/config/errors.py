"""A config that cannot be used, said as a user can act on it: :class:`ConfigError` (one line per problem) and the
formatting of pydantic's errors into ``path: what is wrong (got value)`` lines, with the YAML line when known."""
from __future__ import annotations

import re
import reprlib
from typing import Any

from pydantic import ValidationError

from ffbench_lib.core.secrets import credential_paths


class ConfigError(ValueError):
    """A config file that cannot be used; ``str()`` is the user-facing message (one line per problem)."""

    def __init__(self, problems: list[str], source: str | None = None, what: str = "league config"):
        self.problems = problems
        self.source = source
        head = f"invalid {what}{f' {source}' if source else ''}:"
        super().__init__("\n".join([head, *(f"  {p}" for p in problems)]))


def field_path(loc: tuple[Any, ...]) -> str:
    out, prev = "", None
    for part in loc:
        tag = prev == "agent" and part in ("bot", "llm", "human", "python")  # the agent union's tag, not a key
        prev = part
        if isinstance(part, int):
            out += f"[{part}]"
        elif tag or str(part).startswith(("function-", "literal[")):
            continue  # discriminator tags and validator wrappers are not part of the user's path
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _explain(err: dict[str, Any], model_fields: dict[str, Any] | None = None) -> str:
    path = field_path(err["loc"])
    typ, msg, value = err["type"], err["msg"], err.get("input")
    if typ == "missing":
        return f"{path}: field required"
    if typ == "field_problem":  # a section-wide rule about one of its keys
        return f"{field_path((*err['loc'], err['ctx']['field']))}: {err['ctx']['problem']}"
    if typ == "extra_forbidden":
        return f"{path}: unknown key (check the spelling against the config reference in docs/configuration.md)"
    if typ in ("union_tag_invalid", "union_tag_not_found"):
        tags = [t.strip() for t in str((err.get("ctx") or {}).get("expected_tags", "")).split(",") if t.strip()]
        allowed = " or ".join([", ".join(tags[:-1]), tags[-1]] if len(tags) > 1 else tags)
        return f"{path}.kind: got {value.get('kind') if isinstance(value, dict) else value!r}; allowed: {allowed}"
    msg = msg.removeprefix("Value error, ")
    field = path.rsplit(".", 1)[-1].lower()
    if isinstance(value, (dict, list)) and typ == "value_error":
        # a rule over a whole section: its message (ours) names the field and value and echoes no input; the
        # section itself is noise
        return msg if not err["loc"] else f"{path}: {msg}"
    if (any(word in field for word in ("key", "secret", "token")) and not field.endswith("tokens")) or (
            credential_paths(value)):
        return f"{path}: {msg} (value hidden)"  # never echo something that may be a credential
    return f"{path}: {msg} (got {short_value(value)})"


_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxdict, _repr.maxlist, _repr.maxlevel = 60, 60, 4, 6, 2


def short_value(value: Any) -> str:
    """A value as the user wrote it, cut short: a mapping or list shows a few entries, never pages of config."""
    return _repr.repr(value)


def _err_path(err: dict[str, Any]) -> str:
    if err["type"] == "field_problem":
        return field_path((*err["loc"], err["ctx"]["field"]))
    return field_path(err["loc"])


def line_of(path: str, lines: dict[str, int] | None) -> int | str | None:
    """The line of ``path`` (``teams[3].agent.model``) in the file, else of the nearest section holding it; a
    ``--set`` override's text where one set it."""
    while lines and path:
        if path in lines:
            return lines[path]
        path = re.sub(r"(\.[^.\[]+|\[\d+\])$", "", path) if re.search(r"(\.[^.\[]+|\[\d+\])$", path) else ""
    return None


def format_validation_error(exc: ValidationError, lines: dict[str, int] | None = None) -> list[str]:
    """One message per problem; with ``lines`` (from :func:`load_yaml`), each names the line it is on."""
    out = []
    for e in exc.errors():
        msg, line = _explain(e), line_of(_err_path(e), lines)
        out.append(f"{line}: {msg}" if isinstance(line, str) else f"line {line}: {msg}" if line else msg)
    return out
