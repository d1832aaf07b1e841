"""Writes the worked examples of prompt variants (``prompt: {examples: N}``, :mod:`ffbench_lib.agents.examples`):
the synthetic NFL world (seed 0) played by ``vorp`` bots in the standard 10-team league and a queue draft.
``python -m ffbench_lib.testing.examples [OUT]`` rewrites ``ffbench_lib/prompts/examples/nfl.jsonl``; the same
bytes on every machine (``tests/test_prompt_strategies.py`` rebuilds it)."""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from ffbench_lib.agents.examples import FOLDER

PER_KIND = 3  # examples kept per decision kind


def _pick(records: list[dict]) -> list[dict]:
    """Per kind, up to :data:`PER_KIND` decisions the bot made itself, spread over the season."""
    by: dict[str, list[dict]] = {}
    for r in records:
        if r["decided_by"] == "agent" and not r.get("reason") and isinstance(r.get("raw_answer"), dict):
            by.setdefault(r["decision"], []).append(r)
    out = []
    for kind in sorted(by):
        rs = by[kind]
        step = max(1, len(rs) // PER_KIND)
        for r in rs[::step][:PER_KIND]:
            out.append({"decision": kind, "view": r["view"], "answer": r["raw_answer"]})
    return out


def build(out: Path = FOLDER / "nfl.jsonl") -> dict[str, int]:
    """Play the made-up seasons and write the examples; returns the count per kind."""
    from ffbench_lib.config.league import League
    from ffbench_lib.config.load import load_config
    from ffbench_lib.data.prepare import prepared_for
    from ffbench_lib.runs.rundir import RunDir
    from ffbench_lib.runs.runner import Engine
    from ffbench_lib.testing.synthetic import write_world

    repo = Path(__file__).resolve().parents[2]
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        world = write_world(Path(tmp) / "world", seed=0)
        d = load_config(repo / "params" / "standard_10.yaml").model_dump(mode="json")
        d["teams"] = [{"name": f"Team-{i + 1}", "agent": {"kind": "bot", "strategy": "vorp"}} for i in range(10)]
        d["data"]["dir"] = str(world)
        queue = {**d, "weeks": 1, "draft": {**d["draft"], "mode": "queue"}, "playoffs": {"enabled": False},
                 "trades": {**d["trades"], "weeks": []}}
        for i, league in enumerate([League.model_validate(d), League.model_validate(queue)]):
            run = Path(tmp) / f"run{i}"
            prepared = prepared_for(league, cache_root=Path(tmp) / "prepared")
            asyncio.run(Engine(league, prepared, run, progress=False).run())
            records += list(RunDir(run).decisions())
    picked = _pick(records)
    seen: set[str] = set()
    lines = []
    for ex in picked:  # a kind both leagues had keeps the first league's
        key = json.dumps([ex["decision"], ex["view"]], sort_keys=True)
        if key not in seen:
            seen.add(key)
            lines.append(json.dumps(ex, sort_keys=True))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts: dict[str, int] = {}
    for ex in picked:
        counts[ex["decision"]] = counts.get(ex["decision"], 0) + 1
    return counts


if __name__ == "__main__":
    print(json.dumps(build(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER / "nfl.jsonl"), indent=1))
