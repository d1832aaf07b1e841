"""The hardened YAML loader of every config file (leagues, batches): size, alias and expansion limits, no
duplicate keys, and the line of every key path (so a validation message can name its line).

It raises :class:`YAMLFileError` (one problem, the file); ``ffbench_lib.config`` turns it into its
``ConfigError``. Imports nothing of ffbench.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

#: Limits for config files: they are small, so anything bigger is a mistake or an attack (alias bombs).
MAX_YAML_BYTES = 1_000_000
MAX_YAML_ALIASES = 100
MAX_YAML_NODES = 100_000  # nodes after expanding every alias
_MERGE_TAG = "tag:yaml.org,2002:merge"


class YAMLFileError(ValueError):
    """A YAML file that cannot be read: ``problem`` (one line, the fix) and ``source`` (the file, if read)."""

    def __init__(self, problem: str, source: str | None = None):
        self.problem, self.source = problem, source
        super().__init__(f"{source}: {problem}" if source else problem)


class _LimitedLoader(yaml.SafeLoader):
    """SafeLoader that counts aliases and refuses duplicate keys (with their line numbers)."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.aliases = 0
        self._checked: set[int] = set()

    def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's signature
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_YAML_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_YAML_ALIASES} aliases (*name); "
                                                  "write the values out", self.peek_event().start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # noqa: ANN001
        if isinstance(node, yaml.MappingNode) and id(node) not in self._checked:
            self._checked.add(id(node))
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:  # also twice on one line: {kind: bot, strategy: vorp, strategy: adp}
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {key!r} (first at line {seen[key]}); keep one",
                            key_node.start_mark)
                    seen[key] = key_node.start_mark.line + 1
                except TypeError:
                    continue  # unhashable key: PyYAML reports it itself
        return super().construct_mapping(node, deep)


def _expanded_nodes(node: yaml.Node, memo: dict[int, int]) -> int:
    """Number of nodes once every alias is expanded (shared nodes counted once per use)."""
    if id(node) in memo:
        return memo[id(node)]
    n = 1
    if isinstance(node, yaml.SequenceNode):
        n += sum(_expanded_nodes(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        n += sum(_expanded_nodes(k, memo) + _expanded_nodes(v, memo) for k, v in node.value)
    memo[id(node)] = min(n, MAX_YAML_NODES + 1)
    return memo[id(node)]


def _node_lines(node: yaml.Node, path: str = "", out: dict[str, int] | None = None) -> dict[str, int]:
    """``{"draft.shortlist_size": 7, "teams[0].agent": 12, ...}``: the line (1-based) of every key and list item,
    spelt as config error messages spell paths."""
    out = {} if out is None else out
    if len(out) > MAX_YAML_NODES:
        return out
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.tag == _MERGE_TAG or not isinstance(k, yaml.ScalarNode):
                continue
            where = f"{path}.{k.value}" if path else str(k.value)
            out.setdefault(where, k.start_mark.line + 1)
            _node_lines(v, where, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            out.setdefault(f"{path}[{i}]", v.start_mark.line + 1)
            _node_lines(v, f"{path}[{i}]", out)
    return out


def load_yaml(path: str | os.PathLike[str], what: str = "YAML file", lines: dict[str, int] | None = None) -> Any:
    """Parse one YAML file with limits (size, aliases, expansion) and no duplicate keys. Raises
    :class:`YAMLFileError` naming the file and line. ``lines``, if given, is filled with the line of every key
    path."""
    p = Path(path)
    if not p.is_file():
        raise YAMLFileError(f"file not found: {p}")
    size = p.stat().st_size
    if size > MAX_YAML_BYTES:
        raise YAMLFileError(f"file is {size:,} bytes; a {what} is at most {MAX_YAML_BYTES:,}", str(p))
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YAMLFileError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at line {line}); save the file as UTF-8",
                            str(p)) from None
    loader = _LimitedLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_nodes(node, {}) > MAX_YAML_NODES:
            raise YAMLFileError(f"the file expands to more than {MAX_YAML_NODES:,} values through aliases "
                                "(*name); write the values out", str(p))
        if node is not None and lines is not None:
            lines.update(_node_lines(node))
        return loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise YAMLFileError(f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}", str(p)) from None
    except RecursionError:
        raise YAMLFileError("not valid YAML: nested too deeply", str(p)) from None
    finally:
        loader.dispose()
