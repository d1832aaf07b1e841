"""Figures (seaborn/matplotlib). Every function returns the Figure; :func:`save` writes PNG and SVG."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg") if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")) else None
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import animation  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ffbench_lib.core.atomic import atomic_path  # noqa: E402
from ffbench_lib.config.league import FLEX_SLOTS, Roster  # noqa: E402
from ffbench_lib.sport import SPORTS, sport  # noqa: E402
from ffbench_lib.analysis.field_labels import short  # noqa: E402

_SPORT = sport("nfl")
#: one colour per known position of every sport (the NFL's first), in each sport's order (its colours; flex slots
#: have their own)
POSITION_COLORS = {p: s.colors[p] for s in SPORTS.values() for p in s.positions if p in s.colors}


def save(fig: plt.Figure, folder: str | Path, name: str) -> None:
    """Write ``name.png`` (150 dpi) and ``name.svg`` atomically into ``folder`` (returns nothing, so a notebook
    cell ending with it shows the figure only)."""
    for ext in ("png", "svg"):
        target = Path(folder) / f"{name}.{ext}"
        with atomic_path(target) as tmp:
            # no date, fixed ids: the same figure gives the same bytes (SVG carries a timestamp and random ids)
            with plt.rc_context({"svg.hashsalt": "ffbench"}):
                fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight",
                            metadata={"Date": None} if ext == "svg" else {"Software": None})


def season_points_by_position(weekly: pd.DataFrame, top: dict[str, int] | None = None,
                              weeks: int = 17, roster: Roster | None = None, teams: int = 12) -> plt.Figure:
    """Distribution of season points of the top players per position (the players a league would roster).
    ``top`` defaults to twice the starters a ``teams``-team league with ``roster`` (default: the default
    roster) starts at each position: its starters and as many backups."""
    roster = roster or Roster()
    top = top or {pos: 2 * teams * roster.starting(pos) for pos in roster.positions}
    w = weekly[weekly["week"] <= weeks]
    season = w.groupby(["player_id", "position"], as_index=False)["fantasy_points"].sum()
    season = pd.concat([g.nlargest(top.get(pos, 30), "fantasy_points") for pos, g in season.groupby("position")])
    order = [p for p in POSITION_COLORS if p in set(season["position"])]
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.boxplot(data=season, x="position", y="fantasy_points", hue="position", order=order,
                palette=POSITION_COLORS, legend=False, ax=ax)
    sns.stripplot(data=season, x="position", y="fantasy_points", order=order, color="0.25",
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
                    hue_order=[p for p in POSITION_COLORS if p in set(df["position"])], s=18, alpha=0.75, ax=ax)
    hi = float(max(df["projected"].max(), df["actual"].max()))
    ax.plot([0, hi], [0, hi], color="0.5", lw=1, ls="--", label="projected = actual")
    ax.set(xlabel=f"preseason projection ({column})", ylabel="actual season points",
           title="Preseason projection vs actual")
    ax.legend(loc="upper left", frameon=False)
    sns.despine(fig)
    return fig


# --------------------------------------------------------------------------------------------- analysis
SLOT_ORDER = [*POSITION_COLORS, *FLEX_SLOTS]
SLOT_COLORS = {**POSITION_COLORS, **{slot: _SPORT.colors[slot] for slot in FLEX_SLOTS}}


def _rotate_x(ax: plt.Axes) -> None:
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", rotation_mode="anchor")


class Palette(dict):
    """agent -> colour, iterated in the agents' figure order (``ranked``: True when that order is the leaderboard's,
    :func:`runs_palette`; then every figure draws its agents in it)."""
    ranked: bool = False


def agent_palette(agents, order=None) -> Palette:
    """The one palette, keyed by agent: the same colour for an agent in every figure and in the standings replay
    (sorted names -> tab10/tab20, so the colour never depends on ``order``). ``order`` (e.g.
    :func:`ratings.agent_order`): the order every figure draws the agents in (the rest after it, by name)."""
    names = sorted(set(agents))
    colors = dict(zip(names, sns.color_palette("tab10" if len(names) <= 10 else "tab20", len(names)).as_hex()))
    first = [a for a in dict.fromkeys([] if order is None else list(order)) if a in colors]
    out = Palette((a, colors[a]) for a in first + [a for a in names if a not in first])
    out.ranked = order is not None
    return out


def runs_palette(runs) -> Palette:
    """The palette of :func:`load_runs` tables, its order the leaderboard's (:func:`ratings.agent_order`): every
    figure of a notebook or report then shows the agents in one order and one colour each."""
    from ffbench_lib.analysis.ratings import agent_order

    return agent_palette(runs["standings"]["agent"], order=agent_order(runs))


def ordered(agents, palette: dict | None, fallback) -> list:
    """``agents`` in the palette's order when it is the leaderboard's (:func:`runs_palette`), else in
    ``fallback`` (the figure's own sort: a list of the same agents)."""
    if palette is None or not getattr(palette, "ranked", False):
        return list(fallback)
    present = list(dict.fromkeys(agents))
    return [a for a in palette if a in present] + [a for a in present if a not in palette]


def _rows(df: pd.DataFrame, agents: list) -> pd.DataFrame:
    """The rows of ``df`` (one per agent) in the order of ``agents``."""
    return df.set_index("agent", drop=False).loc[list(agents)].reset_index(drop=True)


def _wrap(text: str, width: int = 40) -> str:
    """A long axis-label part on lines of at most ``width`` characters (a label longer than its axis sticks out)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False))


DAGGER = "\u2020"
HATCH = "///"


def agent_labels(info: pd.DataFrame | None, draft: bool = False) -> dict[str, str]:
    """Labels per agent from :func:`metrics.agent_info`: ``season model (drafted by X)`` where another model
    drafted its teams, and a dagger where the engine made more than the threshold of its decisions (season
    decisions; ``draft=True``: draft decisions)."""
    if info is None or info.empty:
        return {}
    out = {}
    for r in info.itertuples(index=False):
        by = ", ".join(short(a) for a in r.drafted_by.split(", ")) if r.drafted_by else ""
        label = short(r.agent) + (f" (drafted by {by})" if by else "")
        out[r.agent] = label + (f" {DAGGER}" if (r.draft_flagged if draft else r.flagged) else "")
    return out


def flagged_agents(info: pd.DataFrame | None, draft: bool = False) -> set[str]:
    if info is None or info.empty:
        return set()
    return set(info.loc[info["draft_flagged" if draft else "flagged"], "agent"])


def fallback_note(ax: plt.Axes, flagged: set[str], what: str = "lineups and trades",
                  notes: list[str] | None = None, **legend) -> None:
    """Add the dagger's meaning (only when an agent is flagged) and any ``notes`` to the axes' legend."""
    from matplotlib.patches import Patch

    from ffbench_lib.analysis.metrics import MAX_FALLBACK_RATE

    handles, labels = ax.get_legend_handles_labels()
    if flagged:
        handles.append(Patch(facecolor="white", edgecolor="0.3", hatch=HATCH))
        labels.append(f"{DAGGER} >{MAX_FALLBACK_RATE:.0%} engine fallbacks ({what}):\nmostly the engine's results")
    for note in notes or []:
        handles.append(Patch(visible=False))
        labels.append(note)
    if flagged or notes:
        ax.legend(handles, labels, **({"frameon": False, "fontsize": 8} | legend))


def _label(labels: dict[str, str], agent: str) -> str:
    return labels.get(agent, short(agent))


def interval_text(ci: pd.DataFrame, sample: str | None = None) -> tuple[str, str, dict[str, str]]:
    """What an interval figure says about its evidence (``ci`` as :func:`stats.agent_means` returns): the sample
    (``sample``, e.g. :func:`metrics.describe_sample`, else "N runs"), the interval's method
    (:func:`stats.ci_label`; from ``ci_method``, else the rule for each agent's n) and, when agents have different
    n, " (n=k)" per agent for its label."""
    from ffbench_lib.core.stats import ci_label, ci_method

    n = int(ci["runs"].max()) if len(ci) else 0
    methods = ci["ci_method"] if "ci_method" in ci else ci["runs"].map(ci_method)
    per_agent = {a: f" (n={k})" for a, k in zip(ci["agent"], ci["runs"])} if ci["runs"].nunique() > 1 else {}
    return sample or f"{n} run{'s' if n != 1 else ''}", ci_label(methods), per_agent


def points_by_position(slot_points: pd.DataFrame, info: pd.DataFrame | None = None, palette: dict | None = None,
                       sample: str | None = None) -> plt.Figure:
    """Stacked bars: mean season points per team of each agent from each lineup slot (starters only: the bench
    scores nothing), each label with its n (team-seasons); ``palette`` (:func:`runs_palette`) orders the agents,
    ``sample`` names the runs."""
    cols = [c for c in SLOT_ORDER if c in slot_points.columns]
    # a slot's mean over the runs whose league has it; stacked as 0 for an agent that never had the slot
    mean = slot_points.groupby("agent")[cols].mean().fillna(0.0)
    mean = mean.loc[ordered(mean.index, palette, mean.sum(axis=1).sort_values(ascending=False).index)]
    n_teams = slot_points.groupby("agent").size()
    labels, flagged = agent_labels(info), flagged_agents(info)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(mean) + 2), 4.5))
    bottom = pd.Series(0.0, index=mean.index)
    for c in cols:
        ax.bar([f"{_label(labels, a)} (n={int(n_teams.get(a, 0))})" for a in mean.index], mean[c], bottom=bottom,
               color=SLOT_COLORS[c], label=c, hatch=[HATCH if a in flagged else "" for a in mean.index],
               edgecolor="white", linewidth=0.5)
        bottom += mean[c]
    n_runs = slot_points["run_id"].nunique() if "run_id" in slot_points else 0
    where = sample or f"{n_runs} run{'s' if n_runs != 1 else ''}"
    ax.set(ylabel="points per team-season (mean)", xlabel=_wrap(f"n = team-seasons over {where}; means, no interval",
                                                                 90),
           title="Season points by lineup slot (starters)")
    ax.legend(title="slot", bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False)
    fallback_note(ax, flagged & set(mean.index), title="slot", bbox_to_anchor=(1.01, 1), loc="upper left")
    _rotate_x(ax)
    sns.despine(fig)
    return fig


def draft_performance(draft: pd.DataFrame, info: pd.DataFrame | None = None, sample: str | None = None,
                      palette: dict | None = None) -> plt.Figure:
    """Grouped bars per drafting agent (:func:`metrics.draft_summary`): drafted players' previous-season,
    projected and actual points. Where another model played the season, the label says so; players without a
    projection are left out of the projected bar (counted in a note), never counted as 0. Means only: no
    interval (seaborn's default percentile-bootstrap errorbars are turned off); ``sample`` names the runs."""
    m = draft.groupby("agent")[["prev_points", "proj_points", "actual_points"]].mean()
    m = m.loc[ordered(m.index, palette, m.sort_values("actual_points", ascending=False).index)]
    played = draft.groupby("agent")["season_agent"].agg(lambda x: sorted(set(x)))
    flagged = flagged_agents(info, draft=True)
    names = {}
    for a in m.index:
        others = [short(s) for s in played.get(a, []) if s != a]
        names[a] = (short(a) + (f" (season: {', '.join(others)})" if others else "")
                    + (f" {DAGGER}" if a in flagged else ""))
    long = m.reset_index().melt(id_vars="agent", var_name="measure", value_name="points")
    long["label"] = long["agent"].map(names)
    long["measure"] = long["measure"].map({"prev_points": "previous season", "proj_points": "projected",
                                           "actual_points": "actual"})
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(m) + 2), 4.5))
    sns.barplot(data=long, x="label", y="points", hue="measure", palette=["#9aa5b1", "#4C72B0", "#55A868"],
                errorbar=None, ax=ax)
    n = draft["run_id"].nunique() if "run_id" in draft else 0
    where = sample or f"{n} run{'s' if n != 1 else ''}"
    # three short lines (the sample on one of its own): a label longer than the axis sticks out of the figure
    ax.set(xlabel="", ylabel=f"drafted roster's points per team-season\n{_wrap(f'mean over {where}', 46)}\n"
                             "(no interval)",
           title="Draft: what each agent drafted (draft-time rosters)")
    _rotate_x(ax)
    order = [t.get_text() for t in ax.get_xticklabels()]
    hatched = {i for i, t in enumerate(order) if t.endswith(DAGGER)}
    for bar in ax.patches:
        if hatched and round(bar.get_x() + bar.get_width() / 2) in hatched and bar.get_height() > 0:
            bar.set_hatch(HATCH)
            bar.set_edgecolor("white")
    ax.legend(frameon=False, title="", bbox_to_anchor=(1.01, 1), loc="upper left")
    missing = int(draft["unprojected"].sum()) if "unprojected" in draft else 0
    notes = [f"{missing} drafted player{'s' if missing != 1 else ''} without a\npreseason projection: left out of\n"
             "'projected' (not counted as 0)"] if missing else []
    fallback_note(ax, flagged & set(m.index), "draft decisions", notes, bbox_to_anchor=(1.01, 1), loc="upper left")
    sns.despine(fig)
    return fig


def start_sit_regret(ci: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                     sample: str | None = None) -> plt.Figure:
    """Bars with CIs: points per season left on the bench against the hindsight-optimal lineup (lower is better);
    the axis names the sample (``sample``, :func:`metrics.describe_sample`) and the interval's method."""
    ci = _rows(ci, ordered(ci["agent"], palette, ci.sort_values("mean")["agent"]))
    labels, flagged = agent_labels(info), flagged_agents(info)
    where, method, n_of = interval_text(ci, sample)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(ci) + 2), 4.5))
    ax.bar([_label(labels, a) + n_of.get(a, "") for a in ci["agent"]], ci["mean"],
           color=[palette[a] for a in ci["agent"]],
           yerr=[ci["mean"] - ci["ci_low"].fillna(ci["mean"]), ci["ci_high"].fillna(ci["mean"]) - ci["mean"]],
           capsize=4, hatch=[HATCH if a in flagged else "" for a in ci["agent"]], edgecolor="white")
    over = f"mean over {where}, {method}"  # on the x axis: a long y label wraps to three lines
    ax.set(ylabel="points left on the table per season",
           xlabel=over if len(over) <= 80 else f"mean over {where},\n{method}",
           title="Start/sit: points left on the table (lower is better)")
    _rotate_x(ax)
    fallback_note(ax, flagged & set(ci["agent"]), "lineups and trades")
    sns.despine(fig)
    return fig


#: the height of a figure that has nothing to draw: its title and its sentence, no screen of white space
NOTE_LINE_IN = 0.24


def _no_bars(ax: plt.Axes, text: str, title: str) -> None:
    """A sentence where a bar chart would have no bars (never empty axes), the figure shrunk to its title and
    that sentence (a report or notebook shows it as a one-line note, not a screen of white space)."""
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=11, color="0.3", transform=ax.transAxes)
    ax.set_axis_off()
    ax.set_title(title, fontsize=11)
    fig = ax.figure
    fig.set_size_inches(fig.get_figwidth(), NOTE_LINE_IN * (text.count("\n") + 3))


def _ci_bars(ax: plt.Axes, s: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None,
             notes: list[str]) -> set[str]:
    """One bar per agent (``s``: agent, runs, mean, ci_low, ci_high) with its CI, hatched if flagged, its n in the
    label where agents' n differ, and a note over each bar; returns the flagged agents."""
    labels, flagged = agent_labels(info), flagged_agents(info)
    n_of = interval_text(s)[2]
    bars = ax.bar([_label(labels, a) + n_of.get(a, "") for a in s["agent"]], s["mean"],
                  color=[palette[a] for a in s["agent"]],
                  yerr=[s["mean"] - s["ci_low"].fillna(s["mean"]), s["ci_high"].fillna(s["mean"]) - s["mean"]],
                  capsize=4, hatch=[HATCH if a in flagged else "" for a in s["agent"]], edgecolor="white")
    for bar, text, hi in zip(bars, notes, s["ci_high"].fillna(s["mean"])):
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, max(hi, 0)),
                    ha="center", va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")
    return flagged


def trade_value_bars(ci: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                     sample: str | None = None) -> plt.Figure:
    """Trade value per agent and run with a CI over runs, its method and ``sample`` named on the axis (``ci`` =
    :func:`stats.agent_means` of :func:`metrics.trade_value_per_run` plus its ``trades`` total), coloured by
    agent, labelled with the number of agent-made trades; says "no trades" instead of drawing empty axes."""
    n_runs = int(ci["runs"].max()) if len(ci) else 0
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(ci) + 2), 4.5))
    total = int(ci["trades"].sum()) if len(ci) else 0
    internal = int(ci["own_team_trades"].sum()) if "own_team_trades" in ci and len(ci) else 0
    if total == 0 or total == internal:
        runs_txt = f"{n_runs} run{'s' if n_runs != 1 else ''}"
        text = (f"no trades (agent-made) in {runs_txt}" if total == 0 else
                f"no trades between different agents in {runs_txt}:\nall {total} were between two teams of one "
                "agent\n(they net to 0 for it)")
        _no_bars(ax, text, "Trades: value gained per agent")
        return fig
    s = _rows(ci, ordered(ci["agent"], palette, ci.sort_values("mean", ascending=False)["agent"]))
    own = s["own_team_trades"] if "own_team_trades" in s else pd.Series(0, index=s.index)
    flagged = _ci_bars(ax, s, palette, info, [f"{int(n)} trade{'s' if n != 1 else ''}" + (
        f"\n({int(k)} own-team)" if k else "") for n, k in zip(s["trades"], own)])
    ax.axhline(0, color="0.3", lw=0.8)
    where, method, _ = interval_text(s, sample)
    ax.set(ylabel=f"points gained minus given per run\n(weeks after each trade; mean over {where}, {method})",
           title="Trades: value gained per agent (agent-made trades only)")
    _rotate_x(ax)
    fallback_note(ax, flagged & set(s["agent"]), "lineups and trades")
    sns.despine(fig)
    return fig


def pickup_points_bars(ci: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                       sample: str | None = None) -> plt.Figure:
    """Points a team started from its waiver and free-agent pickups per run, per agent with a CI over runs (its
    method and ``sample`` named on the axis; ``ci`` = :func:`stats.agent_means` of
    :func:`metrics.waiver_value_per_run` plus its ``pickups`` total), coloured by agent, labelled with the number of pickups; says so instead of drawing empty axes."""
    n_runs = int(ci["runs"].max()) if len(ci) else 0
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(ci) + 2), 4.5))
    total = int(ci["pickups"].sum()) if len(ci) else 0
    if total == 0:
        _no_bars(ax, f"no waiver or free-agent pickups in {n_runs} run{'s' if n_runs != 1 else ''}",
                 "Waivers: points started from pickups per agent")
        return fig
    s = _rows(ci, ordered(ci["agent"], palette, ci.sort_values("mean", ascending=False)["agent"]))
    flagged = _ci_bars(ax, s, palette, info, [f"{int(n)} pickup{'s' if n != 1 else ''}" for n in s["pickups"]])
    where, method, _ = interval_text(s, sample)
    ax.set(ylabel=f"points started from pickups per team\n(mean over {where}, {method})",
           title="Waivers: points started from pickups per agent")
    _rotate_x(ax)
    fallback_note(ax, flagged & set(s["agent"]), "lineups, trades and waivers")
    sns.despine(fig)
    return fig


def win_rate_ci(ci: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                seasons: list[int] | None = None, sample: str | None = None) -> plt.Figure:
    """Win rate per agent (:func:`metrics.agent_win_rate`: games against other agents), mean over runs with a
    CI; the axis names the rule, the interval's method and the sample (``sample``, else
    :func:`metrics.describe_sample` of ``seasons``, the season of each run)."""
    from ffbench_lib.analysis.metrics import WIN_RATE_LABEL, describe_sample

    # drawn bottom to top: the first agent of the order (the best by default) on top
    ci = _rows(ci, ordered(ci["agent"], palette, ci.sort_values("mean", ascending=False)["agent"])[::-1])
    labels, flagged = agent_labels(info), flagged_agents(info)
    fig, ax = plt.subplots(figsize=(6.5, max(3, 0.45 * len(ci) + 1.5)))
    y = range(len(ci))
    ax.errorbar(ci["mean"], list(y), xerr=[ci["mean"] - ci["ci_low"].fillna(ci["mean"]),
                                           ci["ci_high"].fillna(ci["mean"]) - ci["mean"]],
                fmt="none", ecolor="0.4", capsize=4)
    ax.scatter(ci["mean"], list(y), c=[palette[a] for a in ci["agent"]], s=60, zorder=3)
    for yy, a, m in zip(y, ci["agent"], ci["mean"]):
        if a in flagged:
            ax.scatter([m], [yy], s=140, facecolors="none", edgecolors="0.2", hatch=HATCH, zorder=4)
    ax.set_yticks(list(y), [f"{_label(labels, a)} (n={n})" for a, n in zip(ci["agent"], ci["runs"])])
    ax.axvline(0.5, color="0.7", ls="--", lw=1)
    where, method, _ = interval_text(ci, sample or (describe_sample(seasons) if seasons else None))
    ax.set(xlabel=f"{WIN_RATE_LABEL} over {where}\n(mean, {method}; games between two teams of one agent "
                  "left out)", xlim=(0, 1), title=f"{WIN_RATE_LABEL[0].upper()}{WIN_RATE_LABEL[1:]}")
    fallback_note(ax, flagged & set(ci["agent"]), "lineups and trades", bbox_to_anchor=(0.5, -0.16),
                  loc="upper center")
    sns.despine(fig)
    return fig


LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def standings_by_week(weekly: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                      run_label: str | None = None, n_runs: int = 1) -> plt.Figure:
    """Rank of every team after each week of ONE run (the title says which, and of how many), coloured by agent;
    an agent's several teams differ by line style and marker; every rank is labelled, 1 = top."""
    final = weekly[weekly["week"] == weekly["week"].max()].sort_values("rank")
    flagged = flagged_agents(info)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    agent_of = final.set_index("team")["agent"]
    for team in final["team"]:
        g = weekly[weekly["team"] == team].sort_values("week")
        agent = g["agent"].iloc[0]
        # an agent's k-th team by name: the same line style and marker as in the replay (BumpChart)
        k = sorted(agent_of.index[agent_of == agent]).index(team)
        drafted = g["draft_agent"].iloc[0] if "draft_agent" in g and pd.notna(g["draft_agent"].iloc[0]) else agent
        who = short(agent) + (f" (drafted by {short(drafted)})" if drafted != agent else "")
        who += f" {DAGGER}" if agent in flagged else ""
        ax.plot(g["week"], g["rank"], marker=MARKERS[k % len(MARKERS)], ms=4, ls=LINESTYLES[k % len(LINESTYLES)],
                color=palette[agent], label=f"{team}: {who}")
    n = int(weekly["rank"].max())
    ax.set_yticks(range(1, n + 1), [f"{r} (top)" if r == 1 else str(r) for r in range(1, n + 1)])
    ax.set_ylim(n + 0.5, 0.5)
    where = f"run {run_label}" if run_label else "one run"
    more = f" (1 of {n_runs} runs)" if n_runs > 1 else ""
    ax.set(xlabel="week", ylabel="rank after the week", title=f"Standings week by week: {where}{more}")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", frameon=False, fontsize=8)
    fallback_note(ax, flagged & set(final["agent"]), "lineups and trades", bbox_to_anchor=(1.01, 1), loc="upper left")
    sns.despine(fig)
    return fig


# ------------------------------------------------------------------------------------- ratings and cost
def _rating_marks(board: pd.DataFrame, info: pd.DataFrame | None) -> tuple[dict[str, str], set[str]]:
    """Labels and the not-ranked set for :func:`ratings.leaderboard` rows: a flagged agent (season or draft
    decisions mostly engine fallbacks) gets a dagger and its fallback share."""
    from ffbench_lib.core.stats import not_ranked

    labels = agent_labels(info)
    unranked = set(board.loc[~board["ranked"].astype(bool), "agent"])
    why = not_ranked(board)
    out = {}
    for r in board.itertuples(index=False):
        label = labels.get(r.agent, short(r.agent)).removesuffix(f" {DAGGER}")
        out[r.agent] = label + (f" {DAGGER} ({why[r.agent]})" if r.agent in why else "")
    return out, unranked


def leaderboard_figure(board: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                       sample: str = "", confidence: float = 0.95) -> plt.Figure:
    """Bradley-Terry rating per agent with its interval over runs (``board`` = :func:`ratings.leaderboard`),
    ranked agents from the top, then, below a line, the agents not ranked (mostly engine fallbacks: hatched,
    dagger, fallback share; or no games against other agents; or another group that never met the ranked agents:
    named, not drawn on their scale). The axis names the interval method and ``sample``
    (:func:`metrics.describe_sample`); each label shows the agent's runs ("n=1, no interval" for one run)."""
    from ffbench_lib.core.stats import ci_label

    labels, unranked = _rating_marks(board, info)
    rows = board.reset_index(drop=True)
    n = len(rows)
    fig, ax = plt.subplots(figsize=(7.5, max(3, 0.45 * n + 1.8)))
    y = list(range(n))[::-1]  # first row on top
    for yy, r in zip(y, rows.itertuples(index=False)):
        other = pd.notna(getattr(r, "component", pd.NA)) and r.component != 1  # another group: another scale
        if pd.isna(r.rating) or other:
            text = ("not comparable: never met the ranked agents" if other else "no games against other agents")
            ax.annotate(text, (0, yy), xycoords=("axes fraction", "data"), va="center", fontsize=8, color="0.4")
            continue
        lo, hi = (r.ci_low, r.ci_high) if pd.notna(r.ci_low) else (r.rating, r.rating)
        ax.errorbar([r.rating], [yy], xerr=[[r.rating - lo], [hi - r.rating]], fmt="none", ecolor="0.4", capsize=4)
        ax.scatter([r.rating], [yy], color=palette.get(r.agent, "0.5"), s=60, zorder=3)
        if r.agent in unranked:
            ax.scatter([r.rating], [yy], s=160, facecolors="none", edgecolors="0.2", hatch=HATCH, zorder=4)
    ticks = [(f"{int(r.rank)}. " if pd.notna(r.rank) else "") + f"{labels[r.agent]} (n={int(r.n_runs or 0)}"
             + (", no interval)" if int(r.n_runs or 0) == 1 else ")") for r in rows.itertuples(index=False)]
    ax.set_yticks(y, ticks)
    n_ranked = int(rows["ranked"].sum())
    if 0 < n_ranked < n:
        ax.axhline(y[n_ranked - 1] - 0.5, color="0.3", lw=1, ls="--")
        ax.annotate("not ranked", (1, y[n_ranked - 1] - 0.5), xycoords=("axes fraction", "data"), ha="right",
                    va="top", fontsize=8, color="0.3", xytext=(0, -2), textcoords="offset points")
    ax.axvline(1500, color="0.8", lw=1, ls=":")
    methods = rows.loc[rows["rating"].notna(), "ci_method"]
    where = f" of {sample}" if sample else ""
    ax.set(xlabel=f"rating (Bradley-Terry on weekly head-to-head results{where}; mean 1500, +400 = 10:1 odds)\n"
                  f"{ci_label(methods, confidence, over='runs')}; n = runs each agent played",
           title="Leaderboard: ratings across leagues")
    flagged = set(rows.loc[rows["flagged"] | rows["draft_flagged"], "agent"])
    fallback_note(ax, flagged, "season or draft decisions", bbox_to_anchor=(0.5, -0.22), loc="upper center")
    sns.despine(fig)
    return fig


def cost_vs_rating(board: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
                   confidence: float = 0.95) -> plt.Figure:
    """Rating (with its interval) against ledger cost per team-season on a log axis (``board`` =
    :func:`ratings.leaderboard`). Free agents (bots and people, $0 known) stand at a separate 'free' position on
    the left; agents whose cost is unknown (unpriced calls, no ledger) are listed in a note, never placed at $0. Without
    any LLM cost data it says so instead of drawing empty axes."""
    import textwrap

    import numpy as np

    from ffbench_lib.core.stats import ci_label

    title = "Cost vs rating"
    labels, unranked = _rating_marks(board, info)
    other = board["component"].notna() & (board["component"] != 1) if "component" in board else board["rating"].isna()
    rated = board[board["rating"].notna() & ~other]  # one scale: the ranked group (ratings.leaderboard)
    priced = rated[rated["cost_known"].astype(bool) & ~rated["free"].astype(bool)
                   & rated["cost_per_team_season"].notna()]  # NaN: seasons of different lengths
    unknown = board[~board["cost_known"].astype(bool)]
    unknown_txt = textwrap.fill("cost unknown (calls without a price, or no ledger), not placed at $0: "
                                + ", ".join(labels[a] for a in unknown["agent"]), 60) if len(unknown) else ""
    if other.any():
        unknown_txt = "\n".join(filter(None, [unknown_txt, textwrap.fill(
            "not comparable (never met the ranked agents), not drawn: "
            + ", ".join(labels[a] for a in board.loc[other, "agent"]), 60)]))
    fig, ax = plt.subplots(figsize=(7.5, 5))
    if priced.empty:
        text = "no LLM cost data in these runs" + (" (only bots and people: free)" if unknown.empty else "")
        _no_bars(ax, text + (f"\n{unknown_txt}" if unknown_txt else ""), title)
        return fig
    lo_cost, hi_cost = priced["cost_per_team_season"].min(), priced["cost_per_team_season"].max()
    first = 10.0 ** np.floor(np.log10(lo_cost))  # the first decade tick, at or below the cheapest agent
    free_x = first / 10
    free = rated[rated["cost_known"].astype(bool) & rated["free"].astype(bool)]
    shown = pd.concat([free.assign(x=free_x), priced.assign(x=priced["cost_per_team_season"])])
    for i, r in enumerate(shown.sort_values("rating").itertuples(index=False)):
        lo, hi = (r.ci_low, r.ci_high) if pd.notna(r.ci_low) else (r.rating, r.rating)
        ax.errorbar([r.x], [r.rating], yerr=[[r.rating - lo], [hi - r.rating]], fmt="none", ecolor="0.5", capsize=3)
        ax.scatter([r.x], [r.rating], color=palette.get(r.agent, "0.5"), s=60, zorder=3)
        if r.agent in unranked:
            ax.scatter([r.x], [r.rating], s=160, facecolors="none", edgecolors="0.2", hatch=HATCH, zorder=4)
        ax.annotate(labels[r.agent], (r.x, r.rating), fontsize=8, xytext=(7, 9 * (i % 3) - 9),
                    textcoords="offset points", va="center")  # staggered: agents of one price share a point
    ax.set_xscale("log")
    ax.set_xlim(free_x / 2.5, hi_cost * 4)
    ax.axvline(np.sqrt(free_x * first), color="0.6", lw=1, ls="--")
    decades = [10.0 ** k for k in range(int(np.log10(first)), int(np.ceil(np.log10(hi_cost))) + 1)]
    ax.set_xticks([free_x, *decades], ["free", *(f"${d:g}" for d in decades)])
    ax.minorticks_off()
    ax.set(xlabel="cost per team-season (USD from the ledger, log scale; bots and people are free)",
           ylabel=f"rating\n{ci_label(rated['ci_method'], confidence, over='runs')}", title=title)
    flagged = set(board.loc[board["flagged"] | board["draft_flagged"], "agent"])
    fallback_note(ax, flagged & set(shown["agent"]), "season or draft decisions", [unknown_txt] if unknown_txt else [],
                  bbox_to_anchor=(0.5, -0.15), loc="upper center")
    sns.despine(fig)
    return fig


# ------------------------------------------------------------------------------ standings replay (bump chart)
class ExportError(ValueError):
    """An animation cannot be written as asked (unknown file type, no ffmpeg for MP4): one line saying the fix."""


class BumpChart:
    """A bump chart whose lines can be drawn up to any week: the replay widget's picture, every frame of the
    animation, and (at the last week) the static figure. One Figure, outside pyplot (a notebook shows only what a
    cell returns, never a stray frame)."""

    def __init__(self, standings: pd.DataFrame, colors: dict[str, str] | None = None, title: str = "",
                 width: float = 7.0):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.ranks = standings.pivot_table(index="week", columns="team", values="rank", aggfunc="first")
        self.weeks = [int(w) for w in self.ranks.index]
        teams = list(self.ranks.columns)
        # coloured by agent with the one palette (as every figure): an agent's teams differ by line style and marker
        agent = (standings.drop_duplicates("team").set_index("team")["agent"].to_dict() if "agent" in standings
                 else {t: t for t in teams})
        own = agent_palette(agent.values())  # an agent the given palette lacks: its own colour; its order kept
        colors = {**(colors or {}), **{a: c for a, c in own.items() if a not in (colors or {})}}
        style: dict[str, int] = {}
        for team in teams:
            style[team] = sum(agent[t] == agent[team] for t in style)
        n = int(self.ranks.max().max()) if len(self.ranks) else len(teams)
        self.title = title
        rows = -(-len(set(agent.values())) // 5) if "agent" in standings else 0  # the agent legend
        self.fig = Figure(figsize=(width, 1.3 + 0.32 * max(n, 4) + (0.35 + 0.18 * rows if rows else 0)))
        FigureCanvasAgg(self.fig)
        ax = self.ax = self.fig.add_subplot()
        self.lines, self.labels = {}, {}
        for team in teams:
            k = style[team]
            self.lines[team], = ax.plot([], [], marker=MARKERS[k % len(MARKERS)], ms=4, lw=2.2,
                                        ls=LINESTYLES[k % len(LINESTYLES)], color=colors[agent[team]], label=team,
                                        solid_capstyle="round")
            self.labels[team] = ax.annotate(team, (0, 0), xytext=(7, 0), textcoords="offset points", va="center",
                                            fontsize=9, color=colors[agent[team]], fontweight="bold",
                                            annotation_clip=False)
        first, last = (self.weeks[0], self.weeks[-1]) if self.weeks else (1, 1)
        ax.set_xlim(first - 0.3, last + 0.3)
        ax.set_xticks(self.weeks)
        ax.set_yticks(range(1, n + 1), [f"{r} (top)" if r == 1 else str(r) for r in range(1, n + 1)])
        ax.set_ylim(n + 0.6, 0.4)  # rank 1 on top
        ax.set(xlabel="week", ylabel="rank after the week")
        ax.grid(axis="y", color="0.92", lw=0.8)
        sns.despine(ax=ax)
        # which colour is which agent (a team's name need not say it), one row under the axis
        from matplotlib.lines import Line2D

        shown = list(dict.fromkeys(a for a in colors if a in set(agent.values())))
        if len(shown) > 1 or "agent" in standings:
            self.fig.legend([Line2D([], [], color=colors[a], lw=2.2) for a in shown], [short(str(a)) for a in shown],
                            loc="lower center", ncol=min(len(shown), 5), frameon=False, fontsize=8,
                            bbox_to_anchor=(0.5, 0.0), title="agent", title_fontsize=8)
        # room on the right for the longest team name, measured once: frames keep one layout (no jitter)
        self.draw(last)
        text_px = max((t.get_window_extent().width for t in self.labels.values()), default=0)
        fig_px = self.fig.get_figwidth() * self.fig.dpi
        rows = -(-len(shown) // 5) if self.fig.legends else 0  # the agent legend's rows under the axis
        self.fig.subplots_adjust(left=0.62 / width, right=max(0.5, 1 - (text_px + 14) / fig_px), top=0.9,
                                 bottom=(0.7 + (0.35 + 0.18 * rows if rows else 0)) / self.fig.get_figheight())

    def draw(self, week: int) -> list:
        """Lines up to ``week`` (the last week at or before it that has standings), each labelled at its head."""
        shown = self.ranks[self.ranks.index <= week]
        for team, line in self.lines.items():
            s = shown[team].dropna()
            line.set_data(s.index, s.values)
            self.labels[team].set_visible(len(s) > 0)
            if len(s):
                self.labels[team].xy = (s.index[-1], s.iloc[-1])
        at = int(shown.index[-1]) if len(shown) else week
        head = f"{self.title}: " if self.title else ""
        self.ax.set_title(f"{head}standings after week {at}" + (" (final)" if at == self.weeks[-1] else ""),
                          loc="left", fontsize=11)
        return [*self.lines.values(), *self.labels.values()]

    def png(self, week: int, dpi: int = 100) -> bytes:
        import io

        self.draw(week)
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
        return buf.getvalue()


def bump_chart(standings: pd.DataFrame, week: int | None = None, colors: dict[str, str] | None = None,
               title: str = "") -> plt.Figure:
    """Rank of every team week by week (``standings``: week, team, agent, rank, as the run's standings table), one
    line per team labelled at its right end, coloured by agent (``colors``: :func:`agent_palette`), rank 1 on top;
    ``week``: drawn up to that week (a replay frame), default the whole season."""
    bump = BumpChart(standings, colors, title)
    bump.draw(week if week is not None else bump.weeks[-1])
    return bump.fig


def ffmpeg_path() -> str:
    """The ffmpeg that MP4 export uses: the binary the imageio-ffmpeg package ships in its wheel (or the one
    ``IMAGEIO_FFMPEG_EXE`` names), else one on PATH; none: one line saying how to get it."""
    import os
    import shutil

    try:
        import imageio_ffmpeg

        exe = imageio_ffmpeg.get_ffmpeg_exe()  # its own binary, else the system's; RuntimeError if neither
    except (ImportError, RuntimeError):
        exe = shutil.which("ffmpeg")
    if exe and os.path.isfile(exe) and os.access(exe, os.X_OK):
        return exe
    if os.environ.get("IMAGEIO_FFMPEG_EXE"):
        raise ExportError(f"MP4 export: IMAGEIO_FFMPEG_EXE={os.environ['IMAGEIO_FFMPEG_EXE']} is not an ffmpeg "
                          "program: fix or unset it (or save a .gif, which needs nothing more)")
    raise ExportError("MP4 export needs ffmpeg, which is not installed: `pip install imageio-ffmpeg` or "
                      "`apt-get install ffmpeg` (or save a .gif, which needs nothing more)")


class _GifWriter(animation.PillowWriter):
    """Pillow's GIF writer that can repeat its last frame without drawing the figure again."""

    def repeat_last(self, n: int) -> None:
        self._frames.extend(self._frames[-1:] * n)


def save_bump_animation(standings: pd.DataFrame, path: str | Path, fps: float = 1.5, dpi: int = 100,
                        colors: dict[str, str] | None = None, title: str = "", hold_s: float = 2.0) -> Path:
    """Write the bump chart as an animation, one frame per week: ``.gif`` (Pillow) or ``.mp4`` (ffmpeg,
    see :func:`ffmpeg_path`), atomically. The final standings stay ``hold_s`` seconds longer (a looping GIF would
    otherwise flash them); in a GIF that is one longer frame (Pillow merges repeated frames). Returns the path."""
    import os

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gif":
        writer = _GifWriter(fps=fps)
    elif suffix == ".mp4":
        exe = ffmpeg_path()
        writer = animation.FFMpegWriter(fps=fps, codec="h264", extra_args=["-pix_fmt", "yuv420p"])
    else:
        raise ExportError(f"{path}: the replay is exported as .gif or .mp4, not {suffix or 'a file without suffix'}")
    bump = BumpChart(standings, colors, title)
    hold = round(hold_s * fps)  # extra frames of the final standings
    with atomic_path(path) as tmp:
        staged = tmp.with_name(tmp.name + suffix)  # the writers pick the format by the file's suffix
        try:
            # the writer driven frame by frame: each frame drawn once (FuncAnimation.save draws each twice)
            with plt.rc_context({"animation.ffmpeg_path": exe} if suffix == ".mp4" else {}), \
                    writer.saving(bump.fig, staged, dpi):
                for week in bump.weeks:
                    bump.draw(week)
                    writer.grab_frame()
                if isinstance(writer, _GifWriter):
                    writer.repeat_last(hold)  # the same picture: not drawn again
                else:
                    for _ in range(hold):
                        writer.grab_frame()
            os.replace(staged, tmp)
        finally:
            staged.unlink(missing_ok=True)
    return path


def contamination_figure(seeds: pd.DataFrame, changes: pd.DataFrame, value: str = "points",
           tolerance: float | None = None) -> plt.Figure:
    """Left: per agent, mean unmasked and masked ``value`` with 95% CIs (:func:`ffbench_lib.core.stats.mean_ci`, named). Right: the
    paired change per
    seed (dots), its mean with CI and the band of changes that do not matter (+-``tolerance`` of the unmasked
    mean, as :func:`contamination.verdict` uses it; default its ``TOLERANCE``); a model the probe says remembers the season is marked (probe: remembers)."""
    from ffbench_lib.analysis import contamination
    from ffbench_lib.core import stats

    tolerance = contamination.TOLERANCE if tolerance is None else tolerance
    long = pd.concat([seeds.assign(condition=c, v=seeds[f"{value}_{c}"]) for c in ("unmasked", "masked")])
    ci = contamination.stats_by_condition(seeds, value)
    order = list(changes["agent"])
    remembers = set(changes.loc[changes.get("probe_remembers", pd.Series(dtype=object)).eq(True), "agent"]) \
        if "probe_remembers" in changes else set()
    labels = {a: short(a) + (" (probe: remembers)" if a in remembers else "") for a in order}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, max(3.5, 0.5 * len(order) + 1.8)), sharey=True)
    colors = {"unmasked": "#4C72B0", "masked": "#C44E52"}
    for i, cond in enumerate(("unmasked", "masked")):
        c = ci[ci["condition"] == cond].set_index("agent").reindex(order)
        y = np.arange(len(order)) + (i - 0.5) * 0.3
        ax1.errorbar(c["mean"], y, xerr=[c["mean"] - c["ci_low"].fillna(c["mean"]),
                                         c["ci_high"].fillna(c["mean"]) - c["mean"]],
                     fmt="o", color=colors[cond], capsize=3, label=cond)
    sns.stripplot(data=long.assign(label=long["agent"].map(labels)), x="v", y="label", hue="condition",
                  order=[labels[a] for a in order], palette=colors, dodge=True, size=3, alpha=0.35, legend=False,
                  ax=ax1)
    n = int(changes["n"].max()) if len(changes) else 0
    what = "season points (regular season)" if value == "points" else "win share"
    ax1.set(xlabel=f"{what}: mean over {n} seeds, {stats.ci_label(ci['ci_method'])}", ylabel="",
            title="Unmasked vs masked")
    ax1.legend(frameon=False, loc="lower right")
    palette = agent_palette(order)
    sns.stripplot(data=seeds.assign(label=seeds["agent"].map(labels)), x=f"{value}_diff", y="label",
                  order=[labels[a] for a in order], hue="agent", palette=palette, size=4, alpha=0.6, legend=False,
                  ax=ax2)
    c = changes.set_index("agent").reindex(order)
    y = np.arange(len(order))
    for yy, base in zip(y, c[f"{value}_unmasked"].abs() * tolerance):
        ax2.fill_betweenx([yy - 0.35, yy + 0.35], -base, base, color="0.9", lw=0,
                          label=f"within \u00b1{tolerance:.0%} of unmasked" if yy == 0 else None)
    ax2.errorbar(c["mean_diff"], y, xerr=[c["mean_diff"] - c["ci_low"].fillna(c["mean_diff"]),
                                          c["ci_high"].fillna(c["mean_diff"]) - c["mean_diff"]],
                 fmt="D", color="0.15", capsize=4,
                 label=f"mean change over {n} paired seeds, {stats.ci_label(changes['ci_method'])}")
    ax2.axvline(0, color="0.5", lw=1, ls="--")
    ax2.set(xlabel=f"masked - unmasked {what}, per seed (dots)", ylabel="",
            title="Change under masking (left of 0: worse without real names)")
    ax2.legend(frameon=False, fontsize=8, bbox_to_anchor=(0.5, -0.18), loc="upper center", ncol=2)
    sns.despine(fig)
    fig.tight_layout()
    return fig


def by_season(table: pd.DataFrame, palette: dict[str, str], info: pd.DataFrame | None = None,
              value: str = "win_rate") -> plt.Figure:
    """A study's agents season by season (:func:`ffbench_lib.analysis.seasons.season_table`): each agent's mean
    ``value`` per season with its interval over that season's runs (n per season in the axis label), then the
    pooled mean over the sport's runs (one panel per sport: a line never joins two sports' seasons, and points of
    two sports share no scale). Lines that cross are a ranking that changes with the season."""
    from ffbench_lib.analysis.metrics import WIN_RATE_LABEL
    from ffbench_lib.core.stats import ci_label

    per = table[~table["stratum"].str.startswith("pooled")]
    sports = list(dict.fromkeys(s.split("-", 1)[0] for s in per["stratum"]))
    panels = [[s] for s in sports]  # a line never joins two sports' seasons
    labels, flagged = agent_labels(info), flagged_agents(info)
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.5, 2.2 * per["stratum"].nunique() + 3), 4.2),
                             squeeze=False, sharey=value == "win_rate",
                             gridspec_kw={"width_ratios": [per["stratum"].str.startswith(f"{s}-").sum() + 1
                                                           for s in sports]})
    agents = ordered(per["agent"].unique(), palette, per.groupby("agent")["mean"].mean().sort_values()[::-1].index)
    for ax, group in zip(axes[0], panels):
        rows = per[per["stratum"].str.split("-", n=1).str[0].isin(group)]
        order = list(dict.fromkeys(rows["stratum"]))
        name = "pooled" if len(sports) == 1 or not (table["stratum"] == f"pooled {group[0]}").any() \
            else f"pooled {group[0]}"  # a win rate pools over both sports: drawn in each panel
        pooled = table[table["stratum"] == name] if len(order) > 1 or name == "pooled" and len(sports) > 1 \
            else table.iloc[:0]  # one season of one sport: its own mean is the pool
        ticks = order + ([("pooled\n(all sports)" if name == "pooled" and len(sports) > 1 else "pooled")]
                         if len(pooled) else [])

        def bars(ax, x, m, fmt, **kw):
            ax.errorbar(x, m["mean"], yerr=[m["mean"] - m["ci_low"].fillna(m["mean"]),
                                            m["ci_high"].fillna(m["mean"]) - m["mean"]], fmt=fmt, capsize=3, ms=5,
                        **kw)

        for k, a in enumerate(agents):
            mine = rows[rows["agent"] == a].set_index("stratum").reindex(order)
            shift = (k - (len(agents) - 1) / 2) * 0.06
            bars(ax, [i + shift for i in range(len(order))], mine, "o-" if a not in flagged else "o:",
                 color=palette[a], label=_label(labels, a))
            if len(pooled):  # apart from the seasons' line: the pool is no further season
                bars(ax, [len(order) + shift], pooled[pooled["agent"] == a], "D", color=palette[a])
        runs = rows.groupby("stratum")["runs"].max().reindex(order)
        ax.set_xticks(range(len(ticks)), [f"{s}\n(n={int(runs[s])})" if s in runs else s for s in ticks])
        ax.set(xlim=(-0.5, len(ticks) - 0.5), xlabel="",
               ylabel=WIN_RATE_LABEL if value == "win_rate" else value.replace("_", " "),
               title=f"By season{'' if len(sports) == 1 else f' ({group[0]})'}")
    method = ci_label(per["ci_method"].dropna().unique(), over="a season's runs")
    fig.supxlabel(f"mean per season ({method}) and pooled (diamonds: its interval treats runs as independent, "
                  "which seeds of one season are not); crossing lines: the ranking changes with the season", fontsize=9)
    axes[0][-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    sns.despine(fig)
    fig.tight_layout()
    return fig


def exam_regret(table: pd.DataFrame) -> plt.Figure:
    """An exam's candidates skill by skill and sport by sport (:func:`ffbench_lib.analysis.exams.skill_table`):
    each candidate's mean regret per state with its interval clustered by team-season and by real week (or season),
    best at the top (one panel per skill and sport: their regrets share no scale; a panel without an interval says
    why in its title)."""
    panels = list(dict.fromkeys(zip(table["skill"], table["sport"])))
    cols = min(len(panels), 3)
    rows_n = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols + 1, (0.45 * table["agent"].nunique() + 1.4) * rows_n),
                             squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (skill, sport) in zip(axes.flat, panels):
        rows = table[(table["skill"] == skill) & (table["sport"] == sport)].reset_index(drop=True)
        y = np.arange(len(rows))[::-1]
        ax.errorbar(rows["regret"], y, xerr=[rows["regret"] - rows["low"].fillna(rows["regret"]),
                                             rows["high"].fillna(rows["regret"]) - rows["regret"]],
                    fmt="o", capsize=3, color="0.25")
        ax.set_yticks(y, rows["agent"])
        none = rows["low"].isna().all()
        ax.set(xlabel="mean regret per state", title=f"{skill.replace('_', ' ')}, {sport} (n={int(rows['states'].max())})"
                                                       + ("\nno interval: one real season" if none else ""))
    fig.supxlabel("points below the best possible; 95% t-intervals clustered two ways (team-season, and real week or "
                  "season); the same states for every candidate", fontsize=9)
    sns.despine(fig)
    fig.tight_layout()
    return fig
