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


# --------------------------------------------------------------------------------------------- analysis
SLOT_ORDER = ["QB", "RB", "WR", "TE", "FLEX"]
SLOT_COLORS = {**POSITION_COLORS, "FLEX": "#DD8452"}


def _rotate_x(ax: plt.Axes) -> None:
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", rotation_mode="anchor")


def agent_palette(agents) -> dict[str, str]:
    """The same colour for an agent in every figure of a report (sorted names -> tab10/tab20)."""
    names = sorted(set(agents))
    colors = sns.color_palette("tab10" if len(names) <= 10 else "tab20", len(names)).as_hex()
    return dict(zip(names, colors))


def short(agent: str) -> str:
    """Axis label for an agent id: drop the 'llm:'/'bot:' kind and a provider prefix."""
    return agent.split(":", 1)[-1].split("/")[-1]


def points_by_position(slot_points: pd.DataFrame) -> plt.Figure:
    """Stacked bars: mean season points per agent from each starting slot."""
    cols = [c for c in SLOT_ORDER if c in slot_points.columns]
    mean = slot_points.groupby("agent")[cols].mean()
    mean = mean.loc[mean.sum(axis=1).sort_values(ascending=False).index]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(mean) + 2), 4.5))
    bottom = pd.Series(0.0, index=mean.index)
    for c in cols:
        ax.bar([short(a) for a in mean.index], mean[c], bottom=bottom, color=SLOT_COLORS[c], label=c)
        bottom += mean[c]
    ax.set(ylabel="points per season (mean over runs)", title="Where the points came from: starting slots")
    ax.legend(title="slot", bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False)
    _rotate_x(ax)
    sns.despine(fig)
    return fig


def draft_performance(draft: pd.DataFrame) -> plt.Figure:
    """Grouped bars per agent: drafted players' previous-season, projected and actual points."""
    m = draft.groupby("agent")[["prev_points", "proj_points", "actual_points"]].mean()
    m = m.sort_values("actual_points", ascending=False)
    long = m.reset_index().melt(id_vars="agent", var_name="measure", value_name="points")
    long["agent"] = long["agent"].map(short)
    long["measure"] = long["measure"].map({"prev_points": "previous season", "proj_points": "projected",
                                           "actual_points": "actual"})
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(m) + 2), 4.5))
    sns.barplot(data=long, x="agent", y="points", hue="measure", palette=["#9aa5b1", "#4C72B0", "#55A868"], ax=ax)
    ax.set(xlabel="", ylabel="points of the drafted roster (mean per season)", title="Draft: what each agent drafted")
    _rotate_x(ax)
    ax.legend(frameon=False, title="")
    sns.despine(fig)
    return fig


def start_sit_regret(ci: pd.DataFrame, palette: dict[str, str]) -> plt.Figure:
    """Bars with CIs: points per season left on the bench against the hindsight-optimal lineup (lower is better)."""
    ci = ci.sort_values("mean")
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(ci) + 2), 4.5))
    ax.bar([short(a) for a in ci["agent"]], ci["mean"], color=[palette[a] for a in ci["agent"]],
           yerr=[ci["mean"] - ci["ci_low"].fillna(ci["mean"]), ci["ci_high"].fillna(ci["mean"]) - ci["mean"]],
           capsize=4)
    ax.set(ylabel="points left on the table per season", title="Start/sit: points left on the table (lower is better)")
    _rotate_x(ax)
    sns.despine(fig)
    return fig


def trade_value_bars(summary: pd.DataFrame) -> plt.Figure:
    """Trade value per agent (agent-made trades, remaining-season points), green positive / red negative,
    labelled with the number of trades."""
    s = summary.sort_values("value_all_weeks", ascending=False)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(s) + 2), 4.5))
    colors = ["#2ca02c" if v >= 0 else "#d62728" for v in s["value_all_weeks"]]
    bars = ax.bar([short(a) for a in s["agent"]], s["value_all_weeks"], color=colors)
    for bar, n in zip(bars, s["trades"]):
        y = bar.get_height()
        ax.annotate(f"{int(n)} trade{'s' if n != 1 else ''}", (bar.get_x() + bar.get_width() / 2, y),
                    ha="center", va="bottom" if y >= 0 else "top", fontsize=8,
                    xytext=(0, 3 if y >= 0 else -3), textcoords="offset points")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set(ylabel="points gained minus given (rest of season)", title="Trades: value gained per agent")
    _rotate_x(ax)
    sns.despine(fig)
    return fig


def win_rate_ci(ci: pd.DataFrame, palette: dict[str, str]) -> plt.Figure:
    ci = ci.sort_values("mean")
    fig, ax = plt.subplots(figsize=(6.5, max(3, 0.45 * len(ci) + 1.5)))
    y = range(len(ci))
    ax.errorbar(ci["mean"], list(y), xerr=[ci["mean"] - ci["ci_low"].fillna(ci["mean"]),
                                           ci["ci_high"].fillna(ci["mean"]) - ci["mean"]],
                fmt="none", ecolor="0.4", capsize=4)
    ax.scatter(ci["mean"], list(y), c=[palette[a] for a in ci["agent"]], s=60, zorder=3)
    ax.set_yticks(list(y), [f"{short(a)} (n={n})" for a, n in zip(ci["agent"], ci["runs"])])
    ax.axvline(0.5, color="0.7", ls="--", lw=1)
    ax.set(xlabel="win rate (mean over seasons, 95% bootstrap CI)", xlim=(0, 1), title="Win rate")
    sns.despine(fig)
    return fig


def standings_by_week(weekly: pd.DataFrame, palette: dict[str, str]) -> plt.Figure:
    """Rank of every team after each week of one run, coloured by agent."""
    final = weekly[weekly["week"] == weekly["week"].max()].sort_values("rank")
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for team in final["team"]:
        g = weekly[weekly["team"] == team].sort_values("week")
        agent = g["agent"].iloc[0]
        ax.plot(g["week"], g["rank"], marker="o", ms=3, color=palette[agent], label=f"{team} ({short(agent)})")
    ax.invert_yaxis()
    ax.set(xlabel="week", ylabel="rank", title="Standings week by week")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False, fontsize=8)
    sns.despine(fig)
    return fig
