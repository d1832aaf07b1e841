"""Keeping API keys out of everything ffbench writes or prints.

Keys reach litellm only as call arguments or the provider's own environment variables; nothing that holds
them is logged. As a second line, every writer (``atomic``: text, JSON, parquet, CSV; the run logs; executed
notebooks; the CLI's error output) passes its content through :func:`scrub`, which masks

* every value registered as a credential: the client registers each key it resolves (whatever its variable is
  called, e.g. a team's ``api_key_env: LOCAL_LLM_AUTH``), and :func:`register_league` registers every team's
  ``api_key_env`` in processes that only read a config (the notebook runner);
* credentials in an LLM team's ``extra`` (config validation rejects them: defence in depth);
* the value of every environment variable whose name looks like a credential (``OPENAI_API_KEY``,
  ``HF_TOKEN``, ...: the provider variables litellm reads).

Registered values shorter than 8 characters, and name-matched environment values shorter than 16 or holding spaces,
are never masked: masking them would corrupt ordinary text.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|JWT)", re.I)
MASK = "***"
MIN_LEN = 8
ENV_MIN_LEN = 16
_REGISTERED: set[str] = set()


def register(value: str | None) -> None:
    """Mask ``value`` in everything written from now on (in this process)."""
    if value and len(value) >= MIN_LEN:
        _REGISTERED.add(value)


def register_env(name: str | None) -> None:
    """Register the value of environment variable ``name`` (if set)."""
    if name:
        register(os.environ.get(name))


def register_league(league: Any) -> None:
    """Register the key named by every LLM team's ``api_key_env`` and any credential in its ``extra``
    (a :class:`config.League`)."""
    for team in getattr(league, "teams", []):
        register_env(getattr(team.agent, "api_key_env", None))
        register_credentials(getattr(team.agent, "extra", None))


#: a config key that names a credential (``api_key``, ``X-Api-Token``, ``Authorization``, ...); token COUNTS
#: (``max_tokens``, ``budget_tokens``) and OpenAI's ``prompt_cache_key`` are ordinary settings
_CREDENTIAL_KEY = re.compile(r"key|token(?!s)|secret|passw|authori[sz]ation|credential|cookie|jwt", re.I)
_NOT_CREDENTIAL_KEYS = {"prompt_cache_key"}
#: a value that looks like a key, whatever it is called
_CREDENTIAL_VALUE = re.compile(r"\s*(sk-|sk_|bearer\s|basic\s|hf_|ghp_|github_pat_|gsk_|xai-|AIza)", re.I)


def credential_paths(obj: Any, path: str = "") -> list[tuple[str, Any]]:
    """``(path, value)`` of everything inside ``obj`` (nested mappings and lists, e.g. an LLM team's ``extra``)
    stored under a credential-like key or looking like a key itself."""
    found: list[tuple[str, Any]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            where = f"{path}.{k}" if path else str(k)
            if _CREDENTIAL_KEY.search(str(k)) and str(k).lower() not in _NOT_CREDENTIAL_KEYS:
                found.append((where, v))
            else:
                found += credential_paths(v, where)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            found += credential_paths(v, f"{path}[{i}]")
    elif isinstance(obj, str) and _CREDENTIAL_VALUE.match(obj):
        found.append((path, obj))
    return found


def register_credentials(obj: Any) -> None:
    """Register every string found by :func:`credential_paths` (a key that slipped past config validation)."""
    for _, value in credential_paths(obj):
        for s in ([value] if isinstance(value, str) else _strings(value)):
            register(s)
            if s.lower().startswith(("bearer ", "basic ")):
                register(s.split(None, 1)[1].strip())  # the bare key may appear too


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, (list, tuple)):
        return [s for v in obj for s in _strings(v)]
    return [str(obj)] if isinstance(obj, (int, float)) and not isinstance(obj, bool) else []


def _key_like(value: str) -> bool:
    """An environment value that may be a key: long and without spaces. Only names are known here, so a short
    or plain value (``MY_API_KEY=complete``) is not masked: that would corrupt ordinary words in every file.
    The keys a run really uses are registered, and masked from 8 characters on."""
    return len(value) >= ENV_MIN_LEN and not any(c.isspace() for c in value)


def secret_values() -> list[str]:
    """Every credential value and the forms it takes inside JSON text, longest first."""
    raw = _REGISTERED | {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and _key_like(v)}
    forms = set(raw)
    for v in raw:  # a key with quotes, backslashes or non-ASCII characters is escaped inside JSON
        forms.add(json.dumps(v)[1:-1])
        forms.add(json.dumps(v, ensure_ascii=False)[1:-1])
    return sorted(forms, key=lambda s: (-len(s), s))


def _scrub(text: str, values: list[str]) -> str:
    for v in values:
        if v in text:
            text = text.replace(v, MASK)
    return text


def scrub(text: str) -> str:
    return _scrub(text, secret_values())


#: a key by its shape alone (a provider's prefix and a long token), for free text nobody registered: what a person
#: types, what a report quotes
_KEY_SHAPED = re.compile(r"(?i:bearer\s+)[A-Za-z0-9._~+/=-]{16,}"
                         r"|\b(?:sk-|sk_|hf_|ghp_|github_pat_|gsk_|xai-|AIza)[A-Za-z0-9_-]{16,}")


def scrub_text(text: str) -> str:
    """Free text with the known credentials and anything shaped like a key masked."""
    return _KEY_SHAPED.sub(MASK, scrub(text))


def scrub_obj(obj: Any, values: list[str] | None = None) -> Any:
    """``obj`` with every string in it scrubbed (dict keys and values, lists, tuples, numpy object arrays);
    the very same object when nothing in it needed masking."""
    values = secret_values() if values is None else values
    if not values:
        return obj
    if isinstance(obj, str):
        return _scrub(obj, values)
    if isinstance(obj, dict):
        items = [(scrub_obj(k, values), scrub_obj(v, values)) for k, v in obj.items()]
        same = all(a is k and b is v for (a, b), (k, v) in zip(items, obj.items()))
        return obj if same else dict(items)
    if isinstance(obj, (list, tuple)) or (type(obj).__name__ == "ndarray" and getattr(obj, "dtype", None) == object):
        items = [scrub_obj(v, values) for v in obj]
        if all(a is b for a, b in zip(items, obj)):
            return obj
        if isinstance(obj, (list, tuple)):
            return type(obj)(items)
        out = obj.copy().reshape(-1)
        for i, v in enumerate(items):  # parquet list cells read back as 1-D object arrays
            out[i] = v
        return out.reshape(obj.shape)
    return obj


def scrub_frame(df):
    """A DataFrame with every string cell scrubbed, including strings inside list cells; the same object
    when nothing needed masking (so clean tables are written exactly as before)."""
    values = secret_values()
    if not values:
        return df
    out = None
    for col in df.columns:
        s = df[col]
        if s.dtype != object and str(s.dtype) not in ("string", "str"):
            continue
        old = s.tolist()
        cleaned = [scrub_obj(v, values) for v in old]
        if any(a is not b for a, b in zip(old, cleaned)):
            out = df.copy() if out is None else out
            out[col] = _series(cleaned, s)
    return df if out is None else out


def _series(values: list[Any], like):
    import pandas as pd

    return pd.Series(values, index=like.index, dtype=like.dtype, name=like.name)


def scrub_file(path: str | os.PathLike[str]) -> None:
    """Mask credentials inside a file written by someone else (papermill's executed notebook)."""
    p = Path(path)
    if not p.is_file():
        return
    text = p.read_text(encoding="utf-8", errors="surrogateescape")
    clean = scrub(text)
    if clean != text:
        from .atomic import atomic_path

        with atomic_path(p) as tmp:
            tmp.write_bytes(clean.encode("utf-8", errors="surrogateescape"))
