"""Robust extraction of one JSON object from a model's text: reasoning blocks, code fences and prose around
the JSON are tolerated; anything else is an error message the model can act on. Nesting is bounded
(``MAX_DEPTH``): a deeply nested answer is an invalid answer, never a RecursionError in the run."""
from __future__ import annotations

import json
import re
from typing import Any

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
MAX_DEPTH = 32  # an ffbench answer needs 3 levels


def depth(obj: Any) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in (x.values() if isinstance(x, dict) else x))
    return deepest


def parse_json(text: str | None, last: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) on success, else (None, what is wrong). ``last``: the answer's last top-level JSON object
    (a prompt that asks for reasoning first and the answer at the end), not its first."""
    if text is None or not text.strip():
        return None, "the answer was empty; reply with one JSON object"
    body = _REASONING.sub("", text).strip()
    # an unclosed reasoning block (truncated output) leaves nothing usable before the JSON
    body = re.sub(r"^<(think|thinking|reasoning)>.*", "", body, flags=re.S | re.I) if body.lower().startswith(
        ("<think", "<reasoning")) else body
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    decoder = json.JSONDecoder()
    try:
        if last:  # every top-level object of the whole answer, the last kept
            found = None
            for found in _objects(body, decoder, top_level=True):
                pass
            if found is not None:
                return found, None
        else:  # the first object of the first fenced block that has one, else of the answer
            for cand in candidates:
                obj = next(_objects(cand, decoder), None)
                if obj is not None:
                    return obj, None
    except _TooDeep:
        return None, _too_deep()
    if "{" in body and body.count("{") > body.count("}"):
        return None, ("the JSON object is incomplete or malformed (cut off?); reply with one shorter, complete, "
                      "valid JSON object")
    return None, "no JSON object found in the answer; reply with exactly one JSON object"


class _TooDeep(Exception):
    """An object nested past :data:`MAX_DEPTH` (or deep enough to exhaust the decoder's recursion)."""


def _objects(text: str, decoder: json.JSONDecoder, top_level: bool = False):
    """The JSON objects that start at a ``{`` of ``text``, in order: from every ``{`` (a failed decode moves one
    character on), or with ``top_level`` only those not inside an object already decoded."""
    i = 0
    while i < len(text):
        if text[i] != "{":
            i += 1
            continue
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        except RecursionError:
            raise _TooDeep from None
        if isinstance(obj, dict):
            if depth(obj) > MAX_DEPTH:
                raise _TooDeep
            yield obj
        i = max(end, i + 1) if top_level else i + 1


def _too_deep() -> str:
    return f"the JSON is nested more than {MAX_DEPTH} levels deep; reply with one flat JSON object as in the schema"
