"""Small helpers for engine tests: scripted agents (real Agent subclasses, not mocks) and file comparison."""
from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from ffbench_lib.agents.bots import ADPBot
from ffbench_lib.config.load import load_config
from ffbench_lib.runs.runner import Engine, build_agents

REPO = Path(__file__).resolve().parents[1]


def demo_league(**updates):
    league = load_config(REPO / "params" / "demo.yaml")
    return league.model_copy(update=updates) if updates else league


def run_engine(league, prepared, out, agents=None, **kw):
    engine = Engine(league, prepared, out, agents=agents, progress=False)
    return asyncio.run(engine.run(**kw)), engine


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(folder).iterdir()) if p.is_file()}


class ScriptedAgent(ADPBot):
    """An ADP bot whose answers for chosen decisions come from a script (callables of the view)."""

    def __init__(self, team, seed, script=None):
        super().__init__(team, seed)
        self.agent_id = "scripted"
        self.script = script or {}
        self.seen: list[tuple[str, dict]] = []

    async def decide(self, kind, view):
        self.seen.append((kind, view))
        if kind in self.script:
            return self.script[kind](view)
        return await super().decide(kind, view)


def agents_with(league, replacements: dict):
    agents = build_agents(league, league.seed)
    agents.update(replacements)
    return agents


def same_run(whole: Path, resumed: Path) -> list[dict]:
    """Assert that ``resumed`` holds byte for byte the files of ``whole``, except that its run.json also lists
    its resumes; returns that list (for the caller to check)."""
    import json

    a, b = digests(whole), digests(resumed)
    assert {k: v for k, v in a.items() if k != "run.json"} == {k: v for k, v in b.items() if k != "run.json"}
    meta_a, meta_b = (json.loads((Path(d) / "run.json").read_text()) for d in (whole, resumed))
    resumes = meta_b.pop("resumes", [])
    assert "resumes" not in meta_a and meta_a == meta_b
    return resumes


def data_copy(tmp_path: Path, data_dir: Path, drop: tuple[str, ...] = ()) -> Path:
    """A data directory of read-only symlinks to the real nflverse files, minus ``drop`` (to be replaced)."""
    root = tmp_path / "data"
    (root / "nflverse").mkdir(parents=True)
    for src in (data_dir / "nflverse").iterdir():
        if src.name not in drop:
            (root / "nflverse" / src.name).symlink_to(src)
    return root
