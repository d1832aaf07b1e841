"""A full 10-LLM season against the local OpenAI-compatible server adding a fixed latency to every call:
wall time concurrent (lineups gathered, on-deck draft shortlists) vs strictly sequential, calls per season,
and prompt tokens per decision type and per season counted with litellm's tokenizers (the fake server's own
usage counts 4 characters a token, which undercounts these id-heavy tables).

    python benchmarks/llm_season.py [--latency 0.2] [--tokens-only] [--waivers]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config
from ffbench_lib.llm.tokens import count_tokens
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import Engine
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.fake_openai import FakeOpenAIServer


def league(api_base: str, cache: Path, sequential: bool, waivers: bool = False) -> League:
    d = load_config(Path("params/demo.yaml")).model_dump(mode="json")
    d["teams"] = [{"name": f"M{i}", "agent": {"kind": "llm", "model": f"openai/model-{i}", "api_base": api_base,
                                              "timeout_s": 30, "max_tokens": 4000, "max_concurrency": 10}}
                  for i in range(10)]
    d["llm"] = {"cache_dir": str(cache), "sequential": sequential}
    d["draft"]["on_deck"] = not sequential
    d["waivers"] = {"enabled": waivers}
    return League.model_validate(d)


#: litellm model id -> the tokenizer litellm uses for it (all bundled with litellm; nothing is downloaded)
TOKENIZERS = {"gpt-4o": "o200k (OpenAI gpt-4o/gpt-5)", "gpt-4": "cl100k (also used for Llama/unknown models)",
              "claude-opus-4-5": "Anthropic (bundled, older Claude tokenizer)", "deepseek/deepseek-chat": "DeepSeek V3 (bundled)"}


def token_report(calls: list[dict]) -> None:
    """First-ask prompt tokens per decision type (mean / max) and per season and model, per tokenizer."""
    first = [c for c in calls if c["reask"] == 0 and c["model"] == calls[0]["model"]]
    chars = sum(sum(len(m["content"]) for m in c["messages"]) for c in first)
    print(f"\nprompt tokens of one model's first asks ({len(first)} calls, {chars:,} characters):")
    print("| decision | calls | " + " | ".join(TOKENIZERS.values()) + " |")
    decisions = sorted({c["decision"] for c in first})
    counts = {m: [count_tokens(m, c["messages"]) for c in first] for m in TOKENIZERS}
    for d in decisions:
        idx = [i for i, c in enumerate(first) if c["decision"] == d]
        cells = [f"{sum(counts[m][i] for i in idx) / len(idx):,.0f} / {max(counts[m][i] for i in idx):,}"
                 for m in TOKENIZERS]
        print(f"| {d} | {len(idx)} | " + " | ".join(cells) + " |")
    print("| season total | " + f"{len(first)} | " + " | ".join(f"{sum(counts[m]):,}" for m in TOKENIZERS) + " |")
    print("| characters per token | | " + " | ".join(f"{chars / sum(counts[m]):.2f}" for m in TOKENIZERS) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--tokens-only", action="store_true", help="one concurrent season, no latency, token counts")
    ap.add_argument("--waivers", action="store_true", help="with waivers and free agents (FAAB)")
    args = ap.parse_args()
    if args.tokens_only:
        with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as srv:
            lg = league(srv.api_base, Path(tmp) / "cache", sequential=False, waivers=args.waivers)
            asyncio.run(Engine(lg, prepared_for(lg), Path(tmp) / "run", progress=False).run())
            token_report(RunDir(Path(tmp) / "run").llm_calls())
        return
    results = {}
    for mode in ("concurrent", "sequential"):
        with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=args.latency) as srv:
            lg = league(srv.api_base, Path(tmp) / "cache", sequential=mode == "sequential", waivers=args.waivers)
            prepared = prepared_for(lg)
            t = time.perf_counter()
            asyncio.run(Engine(lg, prepared, Path(tmp) / "run", progress=False).run())
            wall = time.perf_counter() - t
            calls = RunDir(Path(tmp) / "run").llm_calls()
            results[mode] = {"wall_s": round(wall, 1), "requests": srv.requests, "calls": len(calls),
                             "calls_list": calls,
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
    token_report(c["calls_list"])


if __name__ == "__main__":
    main()
