"""Read-only view parts, shared by every view that shows them and encoded to JSON once (issue #27).

A player's card of a week, or the league's rules, is the same in every view that week: views hold one shared
:class:`FrozenDict` (its lists :class:`FrozenList`) instead of a copy each. They are a ``dict`` and a ``list``
to every reader (``isinstance``, pydantic's strict mode, ``json``), but any change raises :class:`TypeError`
(a shared part changed in place would silently change other views and what the log says they showed); copy one
to change it (``dict(card)``, ``{**card, ...}``, ``list(x)``: plain copies), and ``copy``/``deepcopy``/pickle
give plain ones too.

:func:`encode` is ``json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)`` with the compact or the
default separators, byte for byte: a frozen part is encoded by ``json`` itself the first time and its text kept
(its content cannot change); plain dicts with ``str`` keys and plain lists are joined around their parts'
encodings as ``json`` joins them (keys sorted, each key encoded by ``json``'s own string encoder); anything
else (a scalar, a dict with a non-``str`` key, a subclass) is handed to ``json`` whole.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any, NoReturn

#: the encoders of json.dumps(sort_keys=True, ensure_ascii=False, default=str): compact, and the default spacing
_ENCODERS = (json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":")),
             json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str))
_SEPARATORS = ((",", ":"), (", ", ": "))
COMPACT, SPACED = 0, 1


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"this {type(self).__name__} is a view part shared by other views and read-only: change a "
                    f"copy of it (dict(x) or list(x)), never the part itself")


class FrozenDict(dict):
    """A read-only dict (see the module docstring); its two encodings are kept once made."""

    __slots__ = ("_json",)
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return thaw(self)

    def __reduce__(self) -> tuple:
        return dict, (thaw(self),)


class FrozenList(list):
    """A read-only list (see the module docstring); its two encodings are kept once made."""

    __slots__ = ("_json",)
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        return thaw(self)

    def __reduce__(self) -> tuple:
        return list, (thaw(self),)


def freeze(obj: Any) -> Any:
    """A read-only copy of nested dicts, lists and tuples (tuples become lists, as JSON shows them)."""
    if isinstance(obj, dict):
        out = FrozenDict(obj)
        for k in [k for k, v in obj.items() if isinstance(v, _NESTED)]:  # most values are scalars: copied as they are
            dict.__setitem__(out, k, freeze(obj[k]))
        return out
    if isinstance(obj, (list, tuple)):
        return FrozenList([freeze(v) if isinstance(v, _NESTED) else v for v in obj])
    return obj


_NESTED = (dict, list, tuple)


def thaw(obj: Any) -> Any:
    """A plain, mutable deep copy of nested dicts and lists (frozen or not); the leaves are shared."""
    if isinstance(obj, dict):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v) for v in obj]
    return obj


def encoded(obj: dict, compact: str, spaced: str) -> FrozenDict:
    """A read-only shallow copy of ``obj`` that encodes as ``compact`` and ``spaced``: texts the caller made of this
    very content (:func:`encode_both`: the view whose hash a decision line holds; the line then writes the view
    without encoding it again). Built just to be encoded at once, while ``obj`` cannot have changed."""
    out = FrozenDict(obj)
    out._json = [compact, spaced]
    return out


def encode(obj: Any, spacing: int = COMPACT) -> str:
    """``json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)``, compact (``COMPACT``) or with the
    default separators (``SPACED``), reusing the kept encodings of frozen parts."""
    t = type(obj)
    if t is FrozenDict or t is FrozenList:
        pair = getattr(obj, "_json", None)
        if pair is None:
            pair = obj._json = [None, None]  # a slot: not part of the content, which cannot change
        if pair[spacing] is None:
            # the spaced text from the kept compact one when it can be (a string pass, not a second encoding)
            spaced = spaced_json(pair[COMPACT]) if spacing == SPACED and pair[COMPACT] is not None else None
            pair[spacing] = spaced if spaced is not None else _ENCODERS[spacing].encode(obj)
        return pair[spacing]
    leaf = _LEAVES.get(t)
    if leaf is not None:
        return leaf(obj)
    if t is list or t is tuple:
        return "[" + _SEPARATORS[spacing][0].join([leaf(v) if (leaf := _LEAVES.get(type(v))) else encode(v, spacing)
                                                   for v in obj]) + "]"
    if t is dict and all(type(k) is str for k in obj):
        item, key = _SEPARATORS[spacing]
        return "{" + item.join([encode_basestring(k) + key + (leaf(v) if (leaf := _LEAVES.get(type(v := obj[k])))
                                                              else encode(v, spacing)) for k in sorted(obj)]) + "}"
    return _ENCODERS[spacing].encode(obj)


def encode_both(obj: Any) -> tuple[str, str]:
    """``(encode(obj, COMPACT), encode(obj, SPACED))`` in one walk: a decision's view is hashed compact and logged
    spaced. The same parts, joins and fallbacks as :func:`encode`, so each text is that function's, byte for byte."""
    t = type(obj)
    if t is FrozenDict or t is FrozenList:
        return encode(obj, COMPACT), encode(obj, SPACED)
    leaf = _LEAVES.get(t)
    if leaf is not None:
        text = leaf(obj)
        return text, text
    if t is list or t is tuple:
        try:  # a list of frozen parts already encoded both ways (players, cards): their kept texts as they are
            pairs = [v._json if type(v) is FrozenDict or type(v) is FrozenList else None for v in obj]
            return "[" + ",".join([p[0] for p in pairs]) + "]", "[" + ", ".join([p[1] for p in pairs]) + "]"
        except (AttributeError, TypeError):  # another item, an unencoded part (or half of one): part by part
            pass
        pairs = [(text, text) if (leaf := _LEAVES.get(type(v))) and (text := leaf(v)) is not None else encode_both(v)
                 for v in obj]
        return "[" + ",".join([p[0] for p in pairs]) + "]", "[" + ", ".join([p[1] for p in pairs]) + "]"
    if t is dict and all(type(k) is str for k in obj):
        keys = sorted(obj)
        pairs = [(text, text) if (leaf := _LEAVES.get(type(v := obj[k]))) and (text := leaf(v)) is not None
                 else encode_both(v) for k in keys]
        names = [encode_basestring(k) for k in keys]
        return ("{" + ",".join([n + ":" + p[0] for n, p in zip(names, pairs)]) + "}",
                "{" + ", ".join([n + ": " + p[1] for n, p in zip(names, pairs)]) + "}")
    return _ENCODERS[COMPACT].encode(obj), _ENCODERS[SPACED].encode(obj)


def spaced_json(compact: str) -> str | None:
    """Compact JSON text (``separators=(",", ":")``) with ``json.dumps``' default separators (``", "``, ``": "``),
    as a log line holds it, without encoding the object again; None when the text has an escaped quote (then
    encode it).
    Outside strings compact JSON has a comma or colon only as a separator, and its strings are what lies between
    unescaped quotes; it never holds a NUL (``json.dumps`` escapes control characters), the join marker here."""
    if '\\"' in compact or "\0" in compact:
        return None
    parts = compact.split('"')
    parts[0::2] = "\0".join(parts[0::2]).replace(",", ", ").replace(":", ": ").split("\0")
    return '"'.join(parts)


def _float(x: float) -> str:
    """A float as ``json``'s encoder writes it (allow_nan: NaN and the infinities by name, else ``repr``)."""
    if x != x:
        return "NaN"
    if x in (_INF, -_INF):
        return "Infinity" if x > 0 else "-Infinity"
    return float.__repr__(x)


_INF = float("inf")
#: the exact scalar types, each as ``json``'s C encoder writes it (a subclass goes to ``json`` itself)
_LEAVES = {str: encode_basestring, int: int.__repr__, float: _float, bool: lambda b: "true" if b else "false",
           type(None): lambda _: "null"}
