"""What protected numbers (``information.numbers: protected``) cost and what they hide, on the real data:

1. the projection's correlation with actual season points, with exact and with protected inputs (the shown
   projection as its range's midpoint; and the built-in projection's formula recomputed from the protected
   previous seasons);
2. bot seasons of the demo league with bots seeing exact numbers (the design) and protected ones (ranges as
   midpoints), over a few seeds;
3. team identities: how many of the 32 NFL teams an adversary who knows the real schedule identifies from the byes
   and the opponents shown after weeks 1, 2 and 4 (colour refinement of the schedule graph);
4. the leak itself: of the 50 best-ADP players, how many are unique in the season's table by their draft card.

    FFBENCH_DATA_DIR=/work/shared/data python benchmarks/protect_numbers.py [--seeds 3] [--seasons 2023,2024]
"""
from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ffbench_lib.agents.base import Agent
from ffbench_lib.config.league import Information
from ffbench_lib.config.load import load_config
from ffbench_lib.data import projections
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.game.protect import Protector, bye_classes, cell_text, columns, consistent, midpoint
from ffbench_lib.game.render import DETAIL
from ffbench_lib.game.views import Firewall
from ffbench_lib.runs.runner import Engine, build_agents

LEAGUE = Path(__file__).resolve().parents[1] / "params" / "demo.yaml"


def _league(season: int, **info):
    lg = load_config(LEAGUE).model_copy(update={"season": season})
    return lg.model_copy(update={"information": Information(**info)}) if info else lg


def correlation(season: int) -> dict[str, float]:
    lg = _league(season, masking="players_and_teams", numbers="protected")
    prep = prepared_for(lg)
    fw = Firewall(prep, lg)
    pr = Protector(fw, lg.seed, as_numbers=True)
    pool = list(fw.catalog.pool_ids)
    exact = dict(zip(pool, fw.shortlist_detail(pool)))
    shown = {p: pr.card(exact[p], None) for p in pool}
    actual = prep.weekly.groupby("player_id")["fantasy_points"].sum().reindex(pool).fillna(0.0)

    def r(values: dict) -> float:
        return float(np.corrcoef(pd.Series(values).reindex(pool).fillna(0.0), actual)[0, 1])

    def builtin(c: dict) -> float:  # projections.preseason's formula on a card's previous seasons
        g1, p1 = float(c["prev_g"] or 0), float(c["prev_pts"] or 0)
        g2, p2 = float(c["prev2_g"] or 0) * projections.OLDER_SEASON_WEIGHT, float(c["prev2_pts"] or 0) * projections.OLDER_SEASON_WEIGHT
        ev = g1 + g2
        base = baseline.get(c["pos"], 0.0)
        ppg = ((p1 + p2) + projections.PRIOR_GAMES * base) / (ev + projections.PRIOR_GAMES)
        games = 10.0 if g1 == 0 else float(np.clip(0.5 * min(g1, 17) + 0.5 * projections.TYPICAL_GAMES, 4, 17))
        return ppg * games

    vets = [p for p in pool if exact[p]["prev_g"]]
    baseline = {pos: float(np.median([exact[p]["prev_pts"] / exact[p]["prev_g"] for p in vets
                                      if exact[p]["pos"] == pos and exact[p]["prev_g"] >= 4] or [0.0]))
                for pos in {exact[p]["pos"] for p in pool}}
    return {"proj_exact": r({p: exact[p]["proj"] for p in pool}),
            "proj_protected": r({p: midpoint(shown[p]["proj"]) for p in pool}),
            "builtin_exact": r({p: builtin(exact[p]) for p in vets}),
            "builtin_protected": r({p: builtin({**shown[p], "pos": exact[p]["pos"]}) for p in vets})}


class ProtectedBot(Agent):
    """A bot shown protected numbers (ranges as their midpoints): the alternative to bots seeing exact ones."""

    masked_views = False

    def __init__(self, bot: Agent, protector: Protector):
        super().__init__(bot.team, bot.seed)
        self.bot, self.protector = bot, protector
        self.agent_id = bot.agent_id

    async def decide(self, kind: str, view: dict):
        return await self.bot.decide(kind, self.protector.view(view))


def bot_points(seed: int, protected: bool) -> dict[str, float]:
    """Mean season points per bot, shown exact numbers or what a protected seat is shown (ranges as midpoints,
    boards and free-agent lists cut by the protected value, no team or opponent)."""
    lg = _league(2024, masking="players_and_teams", numbers="protected").model_copy(update={"seed": seed})
    prep = prepared_for(lg)
    agents = build_agents(lg, seed)
    with tempfile.TemporaryDirectory() as tmp:
        eng = Engine(lg, prep, Path(tmp) / "run", agents=agents, progress=False)
        if protected:
            pr = Protector(eng.fw, seed, as_numbers=True)
            eng.seats = {t: ProtectedBot(a, pr) for t, a in eng.seats.items()}
            eng.fw.protected_teams = frozenset(eng.seats)
        asyncio.run(eng.run())
        st = pd.read_parquet(Path(tmp) / "run" / "standings.parquet")
    last = st[st["week"] == st["week"].max()]
    return last.groupby("agent")["points_for"].mean().to_dict()


def _refined(nodes: list[str], colour: dict[str, str], edges: list[list[tuple[str, str]]]) -> dict[str, str]:
    """Colour refinement (1-WL) over the weeks' opponent edges (week-labelled), canonical colours (hashes)."""
    import hashlib

    opps = [{a: b for a, b in week} | {b: a for a, b in week} for week in edges]
    col = dict(colour)
    for _ in range(len(nodes)):
        new = {n: hashlib.sha1(repr((col[n], [col.get(o.get(n), "bye") if o.get(n) else "bye" for o in opps])
                                    ).encode()).hexdigest() for n in nodes}
        done = len(set(new.values())) == len(set(col.values()))
        col = new
        if done:
            break
    return col


def refine(nodes: list[str], colour: dict[str, object], edges: list[list[tuple[str, str]]]) -> int:
    """Teams an adversary who knows the real schedule identifies from the pseudonymous one: colour refinement of
    the schedule graph (nodes coloured by what their cards show of the bye), then each team individualised in turn:
    a team is identified when the refined picture with it singled out matches no other team's (the
    individualisation-refinement test of graph isomorphism)."""
    base = {n: str(colour[n]) for n in nodes}
    sig = {}
    for n in nodes:
        col = _refined(nodes, {**base, n: "*" + base[n]}, edges)
        sig[n] = (col[n], tuple(sorted(col.values())))
    counts = pd.Series(list(sig.values())).value_counts()
    return int(sum(counts[sig[n]] == 1 for n in nodes))


def team_identity(season: int) -> dict[str, dict[int, int]]:
    lg = _league(season)
    prep = prepared_for(lg)
    byes = dict(zip(prep.byes["team"], prep.byes["bye_week"].astype(int)))
    teams = sorted(byes)
    sched = prep.schedule
    classes = bye_classes(byes.values())
    out = {}
    for name, colour in (("exact byes", {t: byes[t] for t in teams}),
                         ("protected (bye classes)", {t: classes[byes[t]] for t in teams}),
                         ("no byes shown", {t: 0 for t in teams})):
        out[name] = {0: refine(teams, colour, [])}
        for w in (1, 2, 4, 8):
            edges = [list(zip(sched.loc[sched["week"] == x, "home_team"], sched.loc[sched["week"] == x, "away_team"]))
                     for x in range(1, w + 1)]
            out[name][w] = refine(teams, colour, edges)
    return out


def unique_top50(season: int) -> dict[str, int]:
    out = {}
    for numbers in ("exact", "protected"):
        lg = _league(season, masking="players_and_teams", numbers=numbers)
        prep = prepared_for(lg)
        fw = Firewall(prep, lg)
        pr = Protector(fw, lg.seed)
        pool = list(fw.catalog.pool_ids)
        exact = dict(zip(pool, fw.shortlist_detail(pool)))
        table = columns(exact.values())
        top = sorted((p for p in pool if fw.adp[p] is not None and fw.adp[p] == fw.adp[p]), key=lambda p: fw.adp[p])[:50]
        ks = []
        for p in top:
            c = exact[p] if numbers == "exact" else pr.card(exact[p], None)
            ks.append(int(consistent({h: cell_text(c.get(f)) for h, f in DETAIL}, table).sum()))
        out[numbers] = {"unique": sum(k == 1 for k in ks), "smallest_k": min(ks), "median_k": float(np.median(ks))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seasons", default="2023,2024")
    args = ap.parse_args()
    for season in map(int, args.seasons.split(",")):
        print(f"== {season}")
        print("top-50 ADP draft cards (detail):", unique_top50(season))
        c = correlation(season)
        print("correlation with actual season points: " + ", ".join(f"{k} {v:.4f}" for k, v in c.items()))
        print(f"  drop: shown projection {c['proj_exact'] - c['proj_protected']:.4f}, built-in formula "
              f"{c['builtin_exact'] - c['builtin_protected']:.4f}")
        for name, counts in team_identity(season).items():
            print(f"teams identified of 32, {name}: " + ", ".join(f"after week {w}: {n}" if w else f"draft: {n}"
                                                                  for w, n in counts.items()))
    rows = []
    for seed in range(1, args.seeds + 1):
        for protected in (False, True):
            for agent, pts in bot_points(seed, protected).items():
                rows.append({"seed": seed, "numbers": "protected" if protected else "exact", "agent": agent,
                             "points_for": pts})
    df = pd.DataFrame(rows)
    print("bot season points (2024 demo league, mean per team), exact vs protected:")
    print(df.pivot_table(index="agent", columns="numbers", values="points_for", aggfunc="mean").round(1).to_string())
    print(df.pivot_table(index=["seed", "agent"], columns="numbers", values="points_for").round(1).to_string())


if __name__ == "__main__":
    main()
