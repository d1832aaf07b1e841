"""Reading a league file: YAML to a validated :class:`~ffbench_lib.config.league.League`, and back (the
``config.yaml`` of a run), with the command line's overrides (``--set``, ``--model``/``--teams``) applied first."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import ValidationError

from ffbench_lib.config.errors import ConfigError, field_path, format_validation_error
from ffbench_lib.config.league import League
from ffbench_lib.core import yamlsafe


def parse_config(data: Any, source: str | None = None, lines: dict[str, int] | None = None) -> League:
    """Validate an already-parsed mapping; raise :class:`ConfigError` with named-field messages (and their line
    numbers when ``lines`` maps key paths to them)."""
    if not isinstance(data, dict):
        raise ConfigError([f"(top level): expected a mapping of keys to values, got {type(data).__name__}"], source)
    try:
        return League.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, lines), source) from None


# ------------------------------------------------------------------------------------------------- YAML

def load_yaml(path: str | os.PathLike[str], what: str = "league config", lines: dict[str, int] | None = None) -> Any:
    """Parse one YAML file with :func:`ffbench_lib.core.yamlsafe.load_yaml` (limits, no duplicate keys); the one
    loader for league and batch files. Raises :class:`ConfigError` naming the file and line. ``lines``, if given,
    is filled with the line of every key path (for validation messages)."""
    p = Path(path)
    if not p.is_file():
        example = "params/batch_demo.yaml" if "batch" in what else "params/demo.yaml"
        raise ConfigError([f"file not found: {p} (give the path to a YAML file such as {example})"], what=what)
    try:
        return yamlsafe.load_yaml(p, what, lines)
    except yamlsafe.YAMLFileError as exc:
        raise ConfigError([exc.problem], exc.source, what) from None


def load_config(path: str | os.PathLike[str], settings_overrides: "Iterable[str] | None" = None,
                **overrides: Any) -> League:
    """Read and validate a league YAML file. ``overrides`` replace top-level keys (e.g. ``seed=3``);
    ``settings_overrides`` are ``KEY=VALUE`` texts (``--set``, :func:`apply_overrides`)."""
    p = Path(path)
    lines: dict[str, int] = {}
    data = load_yaml(p, lines=lines)
    if isinstance(data, dict) and "teams" not in data and "skills" in data and "base" in data:
        raise ConfigError(["this is an exam spec (it has base/skills, no teams); build its suite with "
                           f"`ffbench exam build {p} --out DIR`"], str(p))
    if isinstance(data, dict) and "teams" not in data and "candidates" in data:
        raise ConfigError(["this is an exam candidates file (it has candidates, no teams); run an exam with "
                           f"`ffbench exam run SUITE {p} --out DIR`"], str(p))
    if isinstance(data, dict) and "teams" not in data and ("base" in data or "seeds" in data):
        raise ConfigError(["this is a batch file (it has base/seeds, no teams); run it with "
                           f"`ffbench batch {p}`"], str(p))
    if isinstance(data, dict):
        data = {**data, **{k: v for k, v in overrides.items() if v is not None}}
        if settings_overrides:
            data = apply_overrides(data, settings_overrides)
            for text in settings_overrides:  # an error in an override names it, not the file's line
                key = text.partition("=")[0].strip()
                for known in [k for k in lines if k == key or k.startswith((f"{key}.", f"{key}["))]:
                    del lines[known]
                lines[key] = f"--set {text.strip()}"  # type: ignore[assignment]
    return parse_config(data, str(p), lines)


def dump_config(league: League) -> str:
    """The fully resolved config as YAML (written into every run directory)."""
    return yaml.safe_dump(league.model_dump(mode="json"), sort_keys=False)


# ------------------------------------------------------------------------------------------- overrides

_KEY_PART = re.compile(r"([A-Za-z_][\w-]*)|\[(\d+)\]")


def _key_parts(key: str) -> list[str | int]:
    """``teams[0].agent.model`` -> ``["teams", 0, "agent", "model"]``; ConfigError for anything else."""
    parts: list[str | int] = []
    for i, seg in enumerate(key.split(".")):
        pos, found = 0, []
        for m in _KEY_PART.finditer(seg):
            if m.start() != pos:
                break
            found.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
            pos = m.end()
        if not seg or pos != len(seg) or isinstance(found[0], int):  # each segment starts with a name
            raise ConfigError([f"--set {key}: not a config key (write it as in the YAML, e.g. "
                               "draft.shortlist_size or teams[0].agent.model)"])
        parts += found
    return parts


def _unshared(obj: Any) -> Any:
    """A copy in which no two places share a mapping or list: a YAML alias (``agent: *local``) is one object in the
    parsed data, and a ``--set`` of one team must not change the others."""
    if isinstance(obj, dict):
        return {k: _unshared(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_unshared(v) for v in obj]
    return obj


def apply_overrides(data: dict[str, Any], assignments: Iterable[str]) -> dict[str, Any]:
    """``data`` (a parsed league file) with each ``KEY=VALUE`` applied: KEY a dotted path as the YAML nests it
    (``llm.max_reasks``, ``teams[2].agent.model``), VALUE read as YAML (``3``, ``true``, ``openai/x``,
    ``{kind: bot, strategy: adp}``). The result is validated like the file, so a wrong key or value is named."""
    out = _unshared(data)
    for text in assignments:
        key, eq, raw = text.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError([f"--set {text!r}: expected KEY=VALUE, e.g. --set llm.max_reasks=1"])
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            raise ConfigError([f"--set {key}: the value {raw!r} is not valid YAML"]) from None
        parts = _key_parts(key)
        here: Any = out
        for j, part in enumerate(parts[:-1]):
            nxt = parts[j + 1]
            if isinstance(part, int):
                if not isinstance(here, list) or part >= len(here):
                    n = len(here) if isinstance(here, list) else 0
                    raise ConfigError([f"--set {key}: {field_path(tuple(parts[:j + 1]))} does not exist (the file has "
                                       f"{n} entries there, counted from 0)"])
                if not isinstance(here[part], (dict, list)):
                    here[part] = {}
                here = here[part]
            else:
                if not isinstance(here, dict):
                    raise ConfigError([f"--set {key}: {field_path(tuple(parts[:j]))} is not a section"])
                if not isinstance(here.get(part), (dict, list)):
                    here[part] = [] if isinstance(nxt, int) else {}
                here = here[part]
        last = parts[-1]
        if isinstance(last, int):
            if not isinstance(here, list) or last >= len(here):
                raise ConfigError([f"--set {key}: {field_path(tuple(parts))} does not exist"])
        elif not isinstance(here, dict):
            raise ConfigError([f"--set {key}: {field_path(tuple(parts[:-1]))} is not a section"])
        here[last] = value
    return out


def team_numbers(text: str, n_teams: int) -> list[int]:
    """``--teams 1-3,5`` -> 0-based indexes ``[0, 1, 2, 4]`` (teams counted from 1 as the file lists them)."""
    out: list[int] = []
    for part in text.split(","):
        a, dash, b = part.strip().partition("-")
        try:
            lo, hi = int(a), int(b) if dash else int(a)
        except ValueError:
            raise ConfigError([f"--teams {text}: expected team numbers such as 1-3 or 1,4 (counted from 1)"]) from None
        if not 1 <= lo <= hi <= n_teams:
            raise ConfigError([f"--teams {text}: the league has teams 1..{n_teams}"])
        out += [i for i in range(lo - 1, hi) if i not in out]
    return out


def model_overrides(data: dict[str, Any], model: str, teams: str | None = None,
                    api_base: str | None = None) -> list[str]:
    """The ``--set`` assignments that give ``model`` to the teams named by ``teams`` (default: every LLM team of
    the file, else every team): an LLM team keeps its other settings, any other team becomes an LLM team."""
    rows = data.get("teams") if isinstance(data.get("teams"), list) else []
    if teams:
        picked = team_numbers(teams, len(rows))
    else:
        picked = [i for i, t in enumerate(rows) if isinstance(t, dict) and isinstance(t.get("agent"), dict)
                  and t["agent"].get("kind") == "llm"] or list(range(len(rows)))
    out = []
    for i in picked:
        agent = rows[i].get("agent") if isinstance(rows[i], dict) else None
        if isinstance(agent, dict) and agent.get("kind") == "llm":
            out.append(f"teams[{i}].agent.model={yaml.safe_dump(model, default_flow_style=True).strip()}")
            if api_base is not None:
                out.append(f"teams[{i}].agent.api_base={api_base}")
        else:
            new = {"kind": "llm", "model": model, **({"api_base": api_base} if api_base else {})}
            out.append(f"teams[{i}].agent={yaml.safe_dump(new, default_flow_style=True).strip()}")
    return out
