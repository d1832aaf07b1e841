"""How well each preseason projection source predicts actual season points."""
from __future__ import annotations

import pandas as pd

from ffbench_lib.data.projections import accuracy
from ffbench_lib.data.prepared import PreparedSeason

SOURCES = ("builtin", "sportsdataio", "fantasypros")


def actual_season_points(prepared: PreparedSeason, weeks: int = 17) -> pd.Series:
    w = prepared.weekly
    return w[w["week"] <= weeks].groupby("player_id")["fantasy_points"].sum()


def projection_report(prepared: PreparedSeason, weeks: int = 17, top_adp: int = 200) -> pd.DataFrame:
    """One row per (source, player set): n, Pearson, Spearman, MAE against actual points in weeks 1..``weeks``.

    Player sets: ``own`` - every draft-pool player the source projects (actual 0 if he never played);
    ``common`` - players with ADP <= ``top_adp`` whom every available source projects, so sources compare
    on the same players. ADP is scored by Spearman only (a rank, not points).
    """
    p = prepared.players.set_index("player_id")
    p = p[p["in_draft_pool"]]
    actual = actual_season_points(prepared, weeks).reindex(p.index).fillna(0.0)
    avail = [s for s in SOURCES if p[f"proj_points_{s}"].notna().any()]
    common = p[(p["adp"] <= top_adp)].dropna(subset=[f"proj_points_{s}" for s in avail]).index
    rows = []
    for s in avail:
        proj = p[f"proj_points_{s}"]
        rows.append({"season": prepared.season, "source": s, "players": "own", **accuracy(proj.dropna(), actual)})
        rows.append({"season": prepared.season, "source": s, "players": "common",
                     **accuracy(proj.reindex(common), actual.reindex(common))})
    adp = -p["adp"].reindex(common)
    acc = accuracy(adp, actual.reindex(common))
    rows.append({"season": prepared.season, "source": "adp (rank)", "players": "common", "n": acc["n"],
                 "pearson": float("nan"), "spearman": acc["spearman"], "mae": float("nan")})
    return pd.DataFrame(rows)
