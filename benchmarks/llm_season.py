"""A full 10-LLM season against the local OpenAI-compatible server adding a fixed latency to every call:
wall time concurrent (lineups gathered, on-deck draft shortlists) vs strictly sequential, calls per season,
and prompt tokens per season per model (the server counts a token as 4 characters).

    python benchmarks/llm_season.py [--latency 0.2]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from ffbench_lib.config import League, load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.engine import Engine
from ffbench_lib.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer


def league(api_base: str, cache: Path, sequential: bool) -> League:
    d = load_config(Path("params/demo.yaml")).model_dump(mode="json")
    d["teams"] = [{"name": f"M{i}", "agent": {"kind": "llm", "model": f"openai/model-{i}", "api_base": api_base,
                                              "timeout_s": 30, "max_tokens": 4000, "max_concurrency": 10}}
                  for i in range(10)]
    d["llm"] = {"cache_dir": str(cache), "sequential": sequential}
    d["draft"]["on_deck"] = not sequential
    return League.model_validate(d)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    args = ap.parse_args()
    results = {}
    for mode in ("concurrent", "sequential"):
        with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=args.latency) as srv:
            lg = league(srv.api_base, Path(tmp) / "cache", sequential=mode == "sequential")
            prepared = prepared_for(lg)
            t = time.perf_counter()
            asyncio.run(Engine(lg, prepared, Path(tmp) / "run", progress=False).run())
            wall = time.perf_counter() - t
            calls = RunDir(Path(tmp) / "run").llm_calls()
            results[mode] = {"wall_s": round(wall, 1), "requests": srv.requests, "calls": len(calls),
                             "prompt_tokens": sum(c["prompt_tokens"] or 0 for c in calls),
                             "per_model": {}}
            for c in calls:
                results[mode]["per_model"].setdefault(c["model"], 0)
                results[mode]["per_model"][c["model"]] += c["prompt_tokens"] or 0
    c, s = results["concurrent"], results["sequential"]
    print(f"latency per call: {args.latency * 1000:.0f} ms")
    print(f"concurrent: {c['wall_s']} s   sequential: {s['wall_s']} s   speed-up: {s['wall_s'] / c['wall_s']:.2f}x")
    print(f"calls per season: {c['calls']} (requests {c['requests']}); prompt tokens per season: {c['prompt_tokens']:,}")
    print("prompt tokens per model:", json.dumps(c["per_model"]))


if __name__ == "__main__":
    main()
