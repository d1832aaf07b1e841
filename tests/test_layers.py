"""The folders of ffbench_lib are its layers: every import (at module level, inside a function or under
TYPE_CHECKING) goes from a layer to one it may read, and no chain of imports comes back to where it started.

There is no allow-list: the table below is the architecture (docs/architecture.md draws it), and a new edge that
breaks it is a design question, not an exception to record."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ffbench_lib"

#: layer -> the layers it may import (besides itself). Everything reads ``core``; the rest is one-way.
MAY_IMPORT: dict[str, set[str]] = {
    "core": set(),
    "sport": {"core"},
    "config": {"core", "sport"},
    "records": {"core", "sport", "config"},
    "data": {"core", "sport", "config"},
    "llm": {"core"},
    "game": {"core", "sport", "config", "records", "data.prepared"},
    "agents": {"core", "sport", "config", "records", "data.prepared", "llm", "game"},
    "runs": {"core", "sport", "config", "records", "data", "llm", "game", "agents"},
    "analysis": {"core", "sport", "config", "records"},
    "present": {"core", "sport", "config", "records", "analysis", "runs.notebooks"},  # the report runs notebook 11
    "play": {"core", "sport", "config", "records", "data", "llm", "game", "agents", "runs", "analysis", "present"},
    "testing": {"core", "sport", "config", "records", "data", "llm", "game", "agents", "runs", "analysis", "present",
                "play"},  # test support (the fake LLM server, conformance of every kind): reads every layer
    "cli": {"core", "sport", "config", "records", "data", "llm", "game", "agents", "runs", "analysis", "present",
            "play"},
}
#: a dotted key in MAY_IMPORT (``data.prepared``) grants one module of a layer, not the whole layer


def _modules() -> dict[str, Path]:
    mods = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return mods


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every ffbench_lib module ``name`` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names)
    out = set()
    for target in found:
        while target and target not in MODULES:  # `import ffbench_lib.x.y` of a name inside a module
            target = target.rpartition(".")[0]
        if target.startswith("ffbench_lib") and target != name:
            out.add(target)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # the package itself: its version, nothing else
    if parts[1] in ("cli", "__main__"):
        return "cli"
    return parts[1]


def _allowed(src: str, dst: str) -> bool:
    a, b = layer(src), layer(dst)
    if a == b:
        return True
    grants = MAY_IMPORT[a]
    return b in grants or any(dst == f"ffbench_lib.{g}" for g in grants if "." in g)


def test_every_module_is_in_a_known_layer():
    unknown = sorted({layer(m) for m in MODULES} - set(MAY_IMPORT))
    assert not unknown, f"folders with no row in MAY_IMPORT: {unknown}; add the layer to the table and the docs"


@pytest.mark.parametrize("src", sorted(MODULES))
def test_imports_follow_the_layers(src):
    wrong = sorted(dst for dst in GRAPH[src] if not _allowed(src, dst))
    assert not wrong, (f"{src} ({layer(src)}) imports {wrong}; {layer(src)} may import "
                       f"{sorted(MAY_IMPORT[layer(src)])}")


def test_no_import_cycle():
    """No cycle at all, counting imports inside functions: so none is hidden in a function to dodge one."""
    try:
        graphlib.TopologicalSorter(GRAPH).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_the_scan_sees_every_kind_of_import(tmp_path):
    """The scanner itself: a relative, an in-function and a TYPE_CHECKING import are all edges (so the checks
    above can fail)."""
    src = ("from typing import TYPE_CHECKING\nfrom .state import LeagueState\n"
           "if TYPE_CHECKING:\n    from ..runs.rundir import RunDir\n"
           "def f():\n    import ffbench_lib.llm.client\n")
    p = tmp_path / "probe.py"
    p.write_text(src)
    got = _imports("ffbench_lib.game.probe", p)
    assert got == {"ffbench_lib.game.state", "ffbench_lib.runs.rundir", "ffbench_lib.llm.client"}
    assert not _allowed("ffbench_lib.game.probe", "ffbench_lib.runs.rundir")
    assert not _allowed("ffbench_lib.analysis.metrics", "ffbench_lib.game.rules.lineup")
    assert _allowed("ffbench_lib.game.views", "ffbench_lib.data.prepared")
    assert not _allowed("ffbench_lib.game.views", "ffbench_lib.data.prepare")
