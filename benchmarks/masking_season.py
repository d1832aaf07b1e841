"""What masked mode costs: a full 10-LLM season of the demo league against the local OpenAI-compatible server (no
latency, so the engine's own time shows), unmasked and with ``information.masking: players_and_teams``: wall
time per season and prompt tokens per season (litellm's gpt-4o tokenizer; pseudonyms such as ``RB-041`` replace
names and ids).

    python benchmarks/masking_season.py [--repeat 2]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from ffbench_lib.config.league import League
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import Engine
from ffbench_lib.llm.tokens import count_tokens
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from llm_season import league


def one_season(masking: str) -> tuple[float, int]:
    """Wall seconds of one season and its first asks' prompt tokens (one model's)."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as srv:
        d = league(srv.api_base, Path(tmp) / "cache", sequential=False).model_dump(mode="json")
        d["information"] = {"masking": masking}
        lg = League.model_validate(d)
        prepared = prepared_for(lg)
        t = time.perf_counter()
        asyncio.run(Engine(lg, prepared, Path(tmp) / "run", progress=False).run())
        wall = time.perf_counter() - t
        calls = RunDir(Path(tmp) / "run").llm_calls()
        first = [c for c in calls if c["reask"] == 0 and c["model"] == calls[0]["model"]]
        return wall, sum(count_tokens("gpt-4o", c["messages"]) for c in first)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    one_season("off")  # warm-up (imports, litellm's first calls), not counted
    rows = {}
    for mode in ("off", "players_and_teams"):
        runs = [one_season(mode) for _ in range(args.repeat)]
        rows[mode] = (statistics.median(w for w, _ in runs), runs[0][1])
    for mode, (wall, tokens) in rows.items():
        print(f"masking {mode:>17}: {wall:6.1f} s per season (median of {args.repeat}), "
              f"{tokens:,} prompt tokens per model and season")
    off, masked = rows["off"], rows["players_and_teams"]
    print(f"masked / unmasked: time {masked[0] / off[0]:.2f}x, prompt tokens {masked[1] / off[1]:.3f}x")


if __name__ == "__main__":
    main()
