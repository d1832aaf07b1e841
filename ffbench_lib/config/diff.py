"""Which config keys differ between a stored run's config and a league, and which of them a resume may change:
one rule for resuming a run, a batch reusing one, and the contamination study pairing masked and unmasked runs."""
from __future__ import annotations

import re
from typing import Any

import yaml

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import parse_config

#: Config keys a resume may change: how calls are made and paid for, never what shapes an answer or the game.
RESUMABLE = ("llm.budget_usd", "llm.max_fallback_rate", "llm.fallback_min_decisions", "llm.replay_only", "llm.cache_dir", "llm.retries", "llm.backoff_s", "data.dir",
             "data.prepared_dir", "teams[].agent.api_base", "teams[].agent.api_key_env", "teams[].agent.timeout_s",
             "teams[].agent.max_concurrency")


def config_differences(stored: Any, league: League | dict[str, Any],
                       include_resumable: bool = True) -> dict[str, list[Any]]:
    """Config keys whose value differs between a run's stored config (config.yaml text or its parsed mapping) and
    ``league``, as [stored, now]; without :data:`RESUMABLE` keys when ``include_resumable`` is False. One rule for
    resuming a run and for a batch reusing one."""
    raw = yaml.safe_load(stored) if isinstance(stored, str) else stored
    try:
        before = parse_config(raw).model_dump(mode="json")
    except ConfigError:
        before = raw if isinstance(raw, dict) else {}
    now = league.model_dump(mode="json") if isinstance(league, League) else league
    diff = _diff(_flatten(before), _flatten(now))
    if include_resumable:
        return diff
    return {k: v for k, v in diff.items() if re.sub(r"\[\d+\]", "[]", k) not in RESUMABLE}


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """A config as ``{"llm.budget_usd": 2.0, "teams[3].agent.model": ...}`` (lists of mappings indexed)."""
    if isinstance(obj, dict) and obj:
        return {k: v for key, val in obj.items()
                for k, v in _flatten(val, f"{prefix}.{key}" if prefix else str(key)).items()}
    if isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        return {k: v for i, val in enumerate(obj) for k, v in _flatten(val, f"{prefix}[{i}]").items()}
    return {prefix: obj}


def _diff(before: dict[str, Any], now: dict[str, Any]) -> dict[str, list[Any]]:
    return {k: [before.get(k), now.get(k)] for k in dict.fromkeys([*before, *now])
            if k not in before or k not in now or before[k] != now[k]}
