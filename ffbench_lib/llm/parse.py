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
    if last:
        found, i = None, 0
        while i < len(body):
            if body[i] != "{":
                i += 1
                continue
            try:
                obj, end = decoder.raw_decode(body, i)
            except json.JSONDecodeError:
                i += 1
                continue
            except RecursionError:
                return None, _too_deep()
            if isinstance(obj, dict):
                if depth(obj) > MAX_DEPTH:
                    return None, _too_deep()
                found = obj
            i = max(end, i + 1)
        if found is not None:
            return found, None
        candidates = []
    for cand in candidates:
        for i, ch in enumerate(cand):
            if ch != "{":
                continue
            try:
                obj, _ = decoder.raw_decode(cand, i)
            except json.JSONDecodeError:
                continue
            except RecursionError:
                return None, _too_deep()
            if isinstance(obj, dict):
                if depth(obj) > MAX_DEPTH:
                    return None, _too_deep()
                return obj, None
    if "{" in body and body.count("{") > body.count("}"):
        return None, ("the JSON object is incomplete or malformed (cut off?); reply with one shorter, complete, "
                      "valid JSON object")
    return None, "no JSON object found in the answer; reply with exactly one JSON object"


def _too_deep() -> str:
    return f"the JSON is nested more than {MAX_DEPTH} levels deep; reply with one flat JSON object as in the schema"
