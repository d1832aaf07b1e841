"""Worked examples for a prompt variant (``prompt: {examples: N}``): up to N earlier decisions of the same kind,
each shown as the prompt it had and the answer it got, before the decision at hand (few-shot).

The examples come from a made-up season, never a real one: the synthetic NFL world
(:mod:`ffbench_lib.testing.synthetic`, seed 0) played by ``vorp`` bots in the standard 10-team league (IR, FAAB
waivers, trades) and in a queue draft. The answers are that sound baseline's, not the best ones: they show the
format and a reasonable decision, and their players do not exist in any real league. The file
(``prompts/examples/nfl.jsonl``) is written by ``python -m ffbench_lib.testing.examples`` and is
byte-identical on every machine; other sports have none yet (refused in validation).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "prompts" / "examples"
#: the line that opens every example's prompt, so the model (and the fake server) tell it from the decision
HEADER = ("EXAMPLE (a made-up league and season, with rules of its own; its players are not in yours): a decision "
          "and the answer it got.")


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
