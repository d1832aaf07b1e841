"""Figures (seaborn/matplotlib). Every function returns the Figure; :func:`save` writes PNG and SVG."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg") if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")) else None
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .atomic import atomic_path  # noqa: E402

POSITION_COLORS = {"QB": "#4C72B0", "RB": "#55A868", "WR": "#C44E52", "TE": "#8172B3"}


def save(fig: plt.Figure, folder: str | Path, name: str) -> list[Path]:
    """Write ``name.png`` (150 dpi) and ``name.svg`` atomically into ``folder``."""
    paths = []
    for ext in ("png", "svg"):
        target = Path(folder) / f"{name}.{ext}"
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight")
        paths.append(target)
    return paths


def season_points_by_position(weekly: pd.DataFrame, top: dict[str, int] | None = None,
                              weeks: int = 17) -> plt.Figure:
    """Distribution of season points of the top players per position (the players a league would roster)."""
    top = top or {"QB": 24, "RB": 48, "WR": 60, "TE": 20}
    w = weekly[weekly["week"] <= weeks]
    season = w.groupby(["player_id", "position"], as_index=False)["fantasy_points"].sum()
    season = pd.concat([g.nlargest(top.get(pos, 30), "fantasy_points") for pos, g in season.groupby("position")])
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.boxplot(data=season, x="position", y="fantasy_points", hue="position", order=list(POSITION_COLORS),
                palette=POSITION_COLORS, legend=False, ax=ax)
    sns.stripplot(data=season, x="position", y="fantasy_points", order=list(POSITION_COLORS), color="0.25",
                  size=2.5, alpha=0.6, ax=ax)
    ax.set(xlabel="", ylabel=f"season points (weeks 1-{weeks})",
           title="Season points of the top players at each position")
    sns.despine(fig)
    return fig


def projected_vs_actual(players: pd.DataFrame, actual: pd.Series, column: str = "proj_points") -> plt.Figure:
    """Preseason projection against actual season points, one dot per draft-pool player, by position."""
    p = players[players["in_draft_pool"]].set_index("player_id")
    df = pd.DataFrame({"projected": p[column], "actual": actual.reindex(p.index).fillna(0.0),
                       "position": p["position"]}).dropna()
    df = df[df["projected"] > 20]
    fig, ax = plt.subplots(figsize=(6, 5.5))
    sns.scatterplot(data=df, x="projected", y="actual", hue="position", palette=POSITION_COLORS,
                    hue_order=list(POSITION_COLORS), s=18, alpha=0.75, ax=ax)
    hi = float(max(df["projected"].max(), df["actual"].max()))
    ax.plot([0, hi], [0, hi], color="0.5", lw=1, ls="--", label="projected = actual")
    ax.set(xlabel=f"preseason projection ({column})", ylabel="actual season points",
           title="Preseason projection vs actual")
    ax.legend(loc="upper left", frameon=False)
    sns.despine(fig)
    return fig
