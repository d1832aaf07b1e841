"""``draft.mode: queue`` against today's shortlist-then-pick draft, side by side.

1. Speed: a full 10-LLM season (the demo league, every team a model) against the local fake OpenAI server adding a
   fixed latency to every call, in both draft modes: wall time, calls, and the critical path (the longest chain of
   requests the server saw one after another: calls that had to wait for each other), in the draft and in all.
2. Draft quality on bots: the demo league of mixed bots (vorp, adp, recent_form, random) over many seeds in both
   modes: per team the drafted preseason projection and the season's points, the queue-minus-shortlist difference
   per seed (mean over its teams and per strategy) with a 95% t interval over seeds (scipy.stats).

    python benchmarks/draft_queue.py [--latency 0.2] [--seeds 10] [--skip-llm] [--skip-bots] [--waivers]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_season import league as llm_league  # noqa: E402  the 10-LLM league of benchmarks/llm_season.py

from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config  # noqa: E402
from ffbench_lib.data.prepare import prepared_for  # noqa: E402
from ffbench_lib.runs.runner import Engine  # noqa: E402
from ffbench_lib.runs.rundir import RunDir  # noqa: E402
from ffbench_lib.testing.fake_openai import FakeOpenAIServer, critical_path  # noqa: E402

MODES = ("shortlist", "queue")
DRAFT = ("draft_shortlist", "draft_pick", "draft_queue")


def with_mode(league: League, mode: str, seed: int | None = None) -> League:
    d = league.model_dump(mode="json")
    d["draft"]["mode"] = mode
    if seed is not None:
        d["seed"] = seed
    return League.model_validate(d)


def speed(latency: float, waivers: bool = False) -> pd.DataFrame:
    rows = []
    for mode in MODES:
        with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=latency) as srv:
            lg = with_mode(llm_league(srv.api_base, Path(tmp) / "cache", sequential=False, waivers=waivers), mode)
            prepared = prepared_for(lg)
            t = time.perf_counter()
            asyncio.run(Engine(lg, prepared, Path(tmp) / "run", progress=False).run())
            wall = time.perf_counter() - t
            spans = list(srv.spans)
            draft_spans = [s for s in spans if s[2] in DRAFT]
            chain, draft_chain = critical_path(spans), critical_path(draft_spans)
            draft_wall = max(s[1] for s in draft_spans) - min(s[0] for s in draft_spans)
            dry = sum(bool(d.get("queue_dry")) for d in RunDir(Path(tmp) / "run").decisions())
        rows.append({"draft mode": mode, "calls": len(spans), "draft calls": len(draft_spans),
                     "critical path": len(chain), "in the draft": len(draft_chain),
                     "wall s": round(wall, 1), "draft wall s": round(draft_wall, 1), "dry queues": dry,
                     "critical path x latency s": round(len(chain) * latency, 1)})
    return pd.DataFrame(rows)


def quality(seeds: int) -> tuple[pd.DataFrame, float]:
    base = load_config(Path(__file__).resolve().parents[1] / "params" / "demo.yaml")
    prepared = prepared_for(base)
    strategy = {t.name: t.agent.strategy for t in base.teams}
    per_team = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            for mode in MODES:
                out = Path(tmp) / f"{mode}-{seed}"
                asyncio.run(Engine(with_mode(base, mode, seed), prepared, out, progress=False).run())
                run = RunDir(out)
                drafted = run.table("draft_picks").groupby("team")["proj_points"].sum()
                st = run.table("standings")
                points = st[st["week"] == st["week"].max()].set_index("team")["points_for"]
                for team in drafted.index:
                    per_team.append({"seed": seed, "mode": mode, "team": team, "strategy": strategy[team],
                                     "drafted_proj": drafted[team], "season_points": points[team]})
    df = pd.DataFrame(per_team)
    wide = df.pivot_table(index=["seed", "team", "strategy"], columns="mode",
                          values=["drafted_proj", "season_points"]).reset_index()
    out = []
    for group, g in [("all teams", wide), *((s, wide[wide["strategy"] == s]) for s in sorted(set(strategy.values())))]:
        for metric in ("drafted_proj", "season_points"):
            per_seed = (g[(metric, "queue")] - g[(metric, "shortlist")]).groupby(g["seed"]).mean()
            mean = float(per_seed.mean())
            lo, hi = stats.t.interval(0.95, len(per_seed) - 1, loc=mean, scale=stats.sem(per_seed)) \
                if per_seed.std() > 0 else (mean, mean)
            out.append({"teams": group, "metric": metric,
                        "shortlist mean": round(float(g[(metric, "shortlist")].mean()), 1),
                        "queue mean": round(float(g[(metric, "queue")].mean()), 1), "queue - shortlist": round(mean, 2),
                        "95% CI": f"[{lo:.2f}, {hi:.2f}]", "seeds": len(per_seed)})
    changed = float(np.mean(~np.isclose(wide[("drafted_proj", "queue")], wide[("drafted_proj", "shortlist")])))
    return pd.DataFrame(out), changed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the fake server adds to every call")
    ap.add_argument("--seeds", type=int, default=10, help="bot seasons per draft mode")
    ap.add_argument("--skip-llm", action="store_true", help="no 10-LLM seasons (speed)")
    ap.add_argument("--waivers", action="store_true", help="the LLM seasons with waivers and free agents (FAAB)")
    ap.add_argument("--skip-bots", action="store_true", help="no bot seasons (draft quality)")
    args = ap.parse_args()
    if not args.skip_llm:
        print(f"10-LLM season{' with waivers' if args.waivers else ''}, fake server, {args.latency * 1000:.0f} ms "
              "per call:")
        print(speed(args.latency, args.waivers).to_string(index=False))
    if not args.skip_bots:
        table, changed = quality(args.seeds)
        print(f"\nmixed bots (params/demo.yaml), {args.seeds} seeds per mode (drafted_proj: preseason projection of "
              "a team's picks; season_points: its points for); the difference of a seed is the mean over its teams:")
        print(table.to_string(index=False))
        print(f"teams whose drafted projection differs between the modes: {changed:.0%}")


if __name__ == "__main__":
    main()
