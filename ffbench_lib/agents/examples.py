"""Worked examples for a prompt variant (``prompt: {examples: N}``): up to N earlier decisions of the same kind,
each shown as the prompt it had and the answer it got, before the decision at hand (few-shot).

The examples come from a made-up season, never a real one: the synthetic NFL world
(:mod:`ffbench_lib.testing.synthetic`, seed 0) played by ``vorp`` bots in the standard 10-team league (IR, FAAB
waivers, trades) and in a queue draft. The answers are that sound baseline's, not the best ones: they show the
format and a reasonable decision, and their players do not exist in any real league. The file
(``prompts/examples/nfl.jsonl``) is written by ``python -m ffbench_lib.agents.examples`` and is byte-identical
on every machine; other sports have none yet (refused in validation).
"""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "prompts" / "examples"
PER_KIND = 3  # examples kept per decision kind
#: the line that opens every example's prompt, so the model (and the fake server) tell it from the decision
HEADER = ("EXAMPLE (a made-up league and season, with rules of its own; its players are not in yours): a decision "
          "and the answer it got.")


def sports() -> set[str]:
    """The sports that have examples."""
    return {p.stem for p in FOLDER.glob("*.jsonl")}


@lru_cache(maxsize=8)
def load(sport: str) -> dict[str, list[dict]]:
    """Each decision kind's examples (``{"view", "answer"}``) for ``sport``."""
    out: dict[str, list[dict]] = {}
    with open(FOLDER / f"{sport}.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.setdefault(r["decision"], []).append(r)
    return out


def turns(decision: str, sport: str, n: int, render) -> list[dict[str, str]]:
    """The first ``n`` examples of ``decision`` as user and assistant turns; ``render(view)`` is the user text
    the decision at hand gets (the same template, version and mode)."""
    out: list[dict[str, str]] = []
    for ex in load(sport).get(decision, [])[:n]:
        out += [{"role": "user", "content": f"{HEADER}\n\n{render(ex['view'])}"},
                {"role": "assistant", "content": json.dumps(ex["answer"], sort_keys=True)}]
    return out


def with_examples(msgs: list[dict], decision: str, view: dict, n: int, render) -> list[dict]:
    """``msgs`` (system first) with ``n`` examples of ``decision`` after the system message."""
    if n <= 0:
        return msgs
    ex = turns(decision, view["rules"].get("sport", "nfl"), n, render)
    head = 1 if msgs and msgs[0]["role"] == "system" else 0
    return [*msgs[:head], *ex, *msgs[head:]]


# ------------------------------------------------------------------------------------------------- building
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
