r"""Keeping API keys out of everything ffbench writes or prints.

Keys reach litellm only as call arguments or the provider's own environment variables; nothing that holds
them is logged. As a second line, every writer (``atomic``: text, JSON, parquet, CSV; the run logs; executed
notebooks; the CLI's error output) passes its content through :func:`scrub`, which masks

* every value registered as a credential: the client registers each key it resolves (whatever its variable is
  called, e.g. a team's ``api_key_env: LOCAL_LLM_AUTH``), and :func:`register_league` registers every team's
  ``api_key_env`` in processes that only read a config (the notebook runner);
* credentials in an LLM team's ``extra`` (config validation rejects them: defence in depth);
* the value of every environment variable whose name looks like a credential (``OPENAI_API_KEY``,
  ``HF_TOKEN``, ...: the provider variables litellm reads).

Each is masked in any encoding a writer or a model may spell it in (a model can echo the key it was sent): as
JSON escapes, also doubly escaped inside a JSON-dumped ledger line (``\\u0071``), URL percent-encoding, HTML
numeric entities, ``\x`` escapes, hex, and base64 at any alignment: nothing written decodes to a key. Only the
span that decodes to the key is masked, so the surrounding JSON stays readable. A text without any such escape
costs one substring search per form (the fast path of every line written).

Registered values shorter than 8 characters, and name-matched environment values shorter than 16 or holding spaces,
are never masked: masking them would corrupt ordinary text.
"""
from __future__ import annotations

import base64
import functools
import html
import json
import os
import re
import urllib.parse
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
        agent = team.agent
        if getattr(agent, "kind", None) == "python":  # a plug-in: its own model's key
            agent = agent.model
        register_env(getattr(agent, "api_key_env", None))
        register_credentials(getattr(agent, "extra", None))


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
    """Every credential value and the forms it takes written out (JSON-escaped, hex, base64 at each alignment),
    longest first. Every writer asks before each write, so the answer is kept for as long as the registry and the
    environment are the ones it was computed from (the key is their whole content: a changed, added or removed
    variable is a new key, never a stale mask)."""
    key = (frozenset(_REGISTERED), _environ_items())
    cached = _last_values
    if cached and cached[0] == key:
        return list(cached[1])
    raw = _REGISTERED | {v for k in os.environ if _secret_name(k) and _key_like(v := os.environ.get(k, ""))}
    values = _forms(frozenset(raw)) if raw else ()
    _last_values[:] = [key, values]
    return list(values)


#: ``[key, forms]`` of the last :func:`secret_values` call (key: the registry and the environment's items)
_last_values: list[Any] = []


def _environ_items() -> tuple:
    """The environment's items as stored (``os.environ``'s undecoded mapping, which every change through
    ``os.environ`` updates): cheap to build and compare, unlike decoding every name and value."""
    data = getattr(os.environ, "_data", None)
    return tuple(data.items()) if isinstance(data, dict) else tuple(os.environ.items())


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


@functools.lru_cache(maxsize=64)
def _forms(raw: frozenset[str]) -> tuple[str, ...]:
    forms = set(raw)
    for v in raw:  # a key with quotes, backslashes or non-ASCII characters is escaped inside JSON
        forms.add(json.dumps(v)[1:-1])
        forms.add(json.dumps(v, ensure_ascii=False)[1:-1])
        b = v.encode("utf-8")
        forms.update((b.hex(), b.hex().upper()))
        forms.update(_base64_cores(b))
    return tuple(sorted(forms, key=lambda s: (-len(s), s)))


def _base64_cores(b: bytes) -> set[str]:
    """The characters of ``b``'s base64 that only ``b`` determines, with ``b`` at each of the three byte
    alignments inside a longer encoded blob (standard and URL-safe alphabets): any base64 text holding ``b``
    holds one of them."""
    cores = set()
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + b).decode("ascii")
        core = enc[-(-8 * k // 6): 8 * (k + len(b)) // 6]
        cores.update((core, core.translate(_URLSAFE)))
    return cores


_URLSAFE = str.maketrans("+/", "-_")


def _scrub(text: str, values: list[str] | tuple[str, ...]) -> str:
    for v in values:
        if v in text:
            text = text.replace(v, MASK)
    return _scrub_encoded(text, values) if values else text


#: one escaped character (or a run of percent-encoded bytes): JSON ``\uXXXX`` (a surrogate pair as one),
#: ``\"``-style and ``\xXX`` escapes, URL percent-encoding, HTML entities
_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}"
                     r"|\\x[0-9a-fA-F]{2}|\\[\"\\/bfnrt]|(?:%[0-9a-fA-F]{2})+"
                     r"|&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z]{2,8};")
_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SPECIAL = frozenset("\"\\&<>'\b\f\n\r\t")  # characters JSON or HTML escape by name


@functools.lru_cache(maxsize=64)
def _spotters(values: tuple[str, ...]) -> tuple[frozenset[str], bool, tuple[tuple[str, re.Pattern[str]], ...]]:
    r"""The characters of ``values`` and the escapes that can spell one of them, by lead character (looked for
    first: a text without it is not scanned): ``\u0071`` but not ``\u2014`` for an ASCII key, ``\"`` only for a
    key holding a quote. A text with none of them cannot hold an encoded key. ``wide``: a key holds a non-ASCII
    character (so a percent-encoded byte above 0x7F may be part of one)."""
    chars = frozenset("".join(values))
    wide = any(ord(c) > 0x7F for c in chars)
    backslash = ["u[0-9a-fA-F]{4}" if wide else "u00[0-7][0-9a-fA-F]",
                 "x[0-9a-fA-F]{2}", "/"]
    amp = ["#[xX]?[0-9a-fA-F]{1,7};?"]
    if chars & _SPECIAL:
        backslash.append(r"[\"\\bfnrt]")
        amp.append("[A-Za-z]{2,8};")
    return chars, wide, (("\\", re.compile(r"\\(?:%s)" % "|".join(backslash))), ("%", re.compile("%[0-9a-fA-F]{2}")),
                   ("&", re.compile("&(?:%s)" % "|".join(amp))))


def _spelled(s: str) -> str:
    """The character (or, for a byte of a multi-byte character, a stand-in) an escape found by
    :func:`_spotters` stands for."""
    if s[0] == "%":
        return chr(int(s[1:], 16))
    if s[0] == "&":
        return html.unescape(s if s.endswith(";") else s + ";")
    return chr(int(s[2:], 16)) if s[1] in "ux" else _JSON_SIMPLE.get(s[1], s[1])


#: a token: a run without whitespace or unescaped quote (a JSON string's content, a word of free text)
_TOKEN = re.compile(r"(?:\\\S|[^\s\"\\])+")
#: how far back of an escape a token is looked for (an encoded key is far shorter)
_WINDOW = 2048


def _unescape(m: re.Match[str]) -> str:
    s = m.group(0)
    if s[0] == "%":
        return urllib.parse.unquote(s)
    if s[0] == "&":
        return html.unescape(s)
    if s[1] == "u":
        return (chr(int(s[2:6], 16)) if len(s) == 6 else
                (chr(int(s[2:6], 16)) + chr(int(s[8:12], 16))).encode("utf-16", "surrogatepass").decode("utf-16"))
    if s[1] == "x":
        return chr(int(s[2:4], 16))
    return _JSON_SIMPLE.get(s[1], s[1])


def _decode(token: str) -> tuple[str, list[tuple[int, int]]]:
    """``token`` with every layer of escapes decoded (``\\\\u0071`` inside a JSON-dumped line is two), and for
    each decoded character the span of ``token`` it came from."""
    text, spans = token, [(i, i + 1) for i in range(len(token))]
    for _ in range(6):
        out: list[str] = []
        new: list[tuple[int, int]] = []
        at = 0
        for m in _ESCAPE.finditer(text):
            out.append(text[at:m.start()])
            new += spans[at:m.start()]
            dec = _unescape(m)
            out.append(dec)
            new += [(spans[m.start()][0], spans[m.end() - 1][1])] * len(dec)
            at = m.end()
        if not at:
            break
        out.append(text[at:])
        text, spans = "".join(out), new + spans[at:]
    return text, spans


def _scrub_encoded(text: str, values: list[str] | tuple[str, ...]) -> str:
    """Mask what decodes to a credential: the part of every token with escapes (JSON, doubly JSON-escaped, URL,
    HTML, ``\\x``) that spells one once decoded. A model may echo the key it was sent in any of them, and
    ``json.loads`` of the line (or a browser) turns it back into the key."""
    chars, wide, spotters = _spotters(tuple(values))
    found = [m.start() for lead, rx in spotters if lead in text for m in rx.finditer(text)
             if (c := _spelled(m.group(0))) in chars or (wide and c > "\x7f")]
    if not found:
        return text
    sig = sorted(found)
    cuts: list[tuple[int, int]] = []
    done = -1
    for pos in sig:
        if pos < done:
            continue  # inside a token already looked at
        start = max(0, pos - _WINDOW)
        lo = max(text.rfind(c, start, pos) for c in " \t\n\r\"")
        lo = lo + 1 if lo >= 0 else start
        for tok in _TOKEN.finditer(text, lo):
            if tok.end() > pos:
                break
        else:
            continue
        done = tok.end()
        if tok.start() > pos:
            continue
        dec, spans = _decode(tok.group(0))
        for v in values:
            i = dec.find(v)
            while i >= 0:
                cuts.append((tok.start() + spans[i][0], tok.start() + spans[i + len(v) - 1][1]))
                i = dec.find(v, i + 1)
    if not cuts:
        return text
    out, at = [], 0
    for a, b in sorted(cuts):
        if b <= at:
            continue
        out += [text[at:max(a, at)], MASK if a >= at else ""]
        at = b
    return "".join(out) + text[at:]


def scrub(text: str) -> str:
    """``text`` with every credential masked, in any form a writer or a model may spell it (see
    :func:`_scrub_encoded`): nothing written holds a form that decodes to a key."""
    values = secret_values()
    return _scrub(text, values) if values else text


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
