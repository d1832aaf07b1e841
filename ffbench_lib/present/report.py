"""The one-page report (``ffbench report RUNS --out report.html``): the parts notebook ``11_report`` shows, and
the page built from it. The notebook runs under papermill and nbconvert turns it into HTML without code cells;
every figure is an embedded PNG (the standings replay an animated GIF) and the template loads nothing
from the network, so the page opens offline.

Every text taken from a run (agent names, rationales) is scrubbed of credentials and HTML-escaped here.
"""
from __future__ import annotations

import base64
import html
import io
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ffbench_lib.sport import sport
from ffbench_lib.analysis import anonymity, metrics, ratings
from ffbench_lib.core import stats
from ffbench_lib.present import plots
from ffbench_lib.core.secrets import scrub_text

NOTEBOOK = "11_report.ipynb"
#: the leaderboard's win-rate column (metrics.agent_win_rate, as the win-rate figure)
WIN_RATE_COLUMN = f"{metrics.WIN_RATE_LABEL} (mean over runs)"
#: trade rationales quoted per agent card, and how much of each
QUOTES, QUOTE_CHARS = 3, 400
#: the standings replay in the page: frames of the 7-inch bump chart at this dpi (700 px wide), weeks per second,
#: seconds the final standings stay before it loops (a 17-week season: about 0.3-0.5 MB)
GIF_DPI, GIF_FPS, GIF_HOLD_S = 100, 1.5, 2.0
#: nbconvert's lab template with its network loads (require.js, MathJax, Mermaid, the widget manager) removed
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
#: a resource the browser would fetch from the network: script/img/iframe src, link href, CSS url()/@import
_NETWORK = re.compile(r"""<(?:script|img|iframe|source|video|audio|embed)\b[^>]*\bsrc\s*=\s*["']?\s*(?:https?:)?//"""
                      r"""|<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?//"""
                      r"""|url\(\s*["']?\s*(?:https?:)?//|@import\s+["']\s*(?:https?:)?//""", re.I)


def esc(text) -> str:
    """Text from a run, safe in the page: credentials (known, or shaped like a key) masked, HTML escaped."""
    return html.escape(scrub_text(str(text)))


def person_mark(agent: str) -> str:
    """What marks a person's team beside its name (a person is no model): "(a person)", or for a seat played on
    autopilot "(autopilot: answered by the adp bot)"; "" for every other agent."""
    bot = metrics.autopilot_bot(agent)
    if bot:
        return f" (autopilot: answered by the {bot} bot)"
    return " (a person)" if metrics.is_human(agent) else ""


@dataclass
class Report:
    """What every section reads: the runs' tables and the figures' shared labels, colours and ranking."""
    data: metrics.Runs
    info: pd.DataFrame
    board: pd.DataFrame
    palette: dict
    sample: str
    not_ranked: dict


def load(runs) -> Report:
    with warnings.catch_warnings():  # the header and the caveats say which runs were left out, in prose
        warnings.filterwarnings("ignore", message=r"\d+ run\(s\) excluded")
        data = metrics.load_runs(runs)
    info = metrics.agent_info(data)
    board = ratings.leaderboard(data)
    # the one palette, in the leaderboard's order (as plots.runs_palette): every figure draws the agents in it
    palette = plots.agent_palette(data["standings"]["agent"], order=board["agent"])
    return Report(data, info, board, palette, metrics.describe_sample(data), stats.not_ranked(info))


def _html(text: str):
    from IPython.display import HTML

    return HTML(text)


#: the page's figures: rendered at this dpi, shown centred at the page's width up to FIGURE_MAX_PX (sharp there)
FIGURE_DPI, FIGURE_MAX_PX = 150, 1100
#: a figure with nothing to draw (plots' one-line note) is no taller than this: shown at its own size
NOTE_MAX_IN = 1.5


def png(fig):
    """A figure as an embedded base64 PNG with its title as alternative text (closed afterwards: the report
    holds many), centred at the page's width; a one-line note (a figure with nothing to draw) at its own size."""
    import matplotlib.pyplot as plt

    title = next((t for ax in fig.axes if (t := ax.get_title())), "figure")
    note = fig.get_figheight() <= NOTE_MAX_IN
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110 if note else FIGURE_DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return _html(f'<img alt="{esc(title)}" class="{"ffb-line" if note else "ffb-fig"}" '
                 f'src="data:image/png;base64,{data}"/>')


def _table(df: pd.DataFrame) -> str:
    return scrub_text(df.to_html(index=False, escape=True, na_rep="", border=0, classes="ffb"))


STYLE = """<style>
table.ffb {border-collapse: collapse; font-size: 13px; margin: 6px 0 14px 0}
table.ffb th, table.ffb td, .jp-RenderedHTMLCommon table.ffb th, .jp-RenderedHTMLCommon table.ffb td {
  padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left}  /* beats the lab template's right */
table.ffb td:not(:last-child) {white-space: nowrap}  /* names never wrap; the last column (a note) may */
.ffb-card {border: 1px solid #ccc; border-radius: 6px; padding: 8px 14px; margin: 12px 0}
.ffb-card blockquote {border-left: 3px solid #bbb; margin: 4px 0 8px 0; padding: 2px 10px; color: #333}
.ffb-note {color: #555; font-size: 13px}
/* figures centred at the page's width (nbconvert drops an img's style attribute; the lab template left-aligns
   images at their natural size); a one-line note and the replay centred at their own size */
.jp-RenderedHTMLCommon > img.ffb-fig, img.ffb-fig {display: block; margin: 8px auto 1em auto; width: 100%;
  max-width: FIGURE_MAX_PXpx}
.jp-RenderedHTMLCommon > img.ffb-line, img.ffb-line {display: block; margin: 8px auto 1em auto; max-width: 100%}
</style>""".replace("FIGURE_MAX_PX", str(FIGURE_MAX_PX))


def competition(meta) -> str:
    """What the runs' seasons are seasons of: their sport's competition (``NFL``), or sports named together."""
    names = sorted(set(meta["sport"])) if "sport" in meta else ["nfl"]
    return " or ".join(sport(n).title for n in names)


def header(r: Report):
    d, meta = r.data, r.data["meta"]
    parts = [STYLE,
             f"<p><b>{esc(metrics.describe_runs(d))}</b>; agents: {esc(', '.join(sorted(r.palette)))}.</p>",
             f"<p class='ffb-note'>A run is one league on one seed of one {esc(competition(meta))} season: seeds of "
             "one season are not seasons. Figures and intervals name their sample and method.</p>"]
    if meta["imported_from"].notna().any():
        parts.append("<p class='ffb-note'><b>Imported runs</b> (earlier FantasyFootballBench): each team was drafted "
                     "by the model in its label and played by another model; draft results are the drafting model's, "
                     "the season the season model's. Those logs have no bench, token or cost data.</p>")
    return _html("\n".join(parts))


def fallback_runs(r: Report) -> dict[str, list[str]]:
    """agent -> the runs in which more than :data:`metrics.MAX_FALLBACK_RATE` of its season or draft decisions
    were the engine's (a model outage, answers it could not read): marked beside its row."""
    d = r.data["decisions"]
    out: dict[str, list[str]] = {}
    if d.empty:
        return out
    for run_id, g in d.groupby("run_id"):
        one = {"decisions": g}
        for draft in (False, True):
            fr = metrics.fallback_rates(one, draft=draft)
            for a in fr.loc[fr["flagged"], "agent"]:
                if run_id not in out.setdefault(a, []):
                    out[a].append(run_id)
    return out


def _runs_text(marks: list[str], n_runs) -> str:
    if not marks:
        return ""
    return f"all {len(marks)}" if len(marks) == n_runs else f"{len(marks)}: " + ", ".join(
        m.split("@")[-1] for m in marks)


def leaderboard(r: Report):
    """The ranking table: rating and interval, runs, head-to-head record, fallback shares and marks."""
    b, bad = r.board, fallback_runs(r)
    labels = plots.agent_labels(r.info)  # "season model (drafted by X)" where another model drafted its teams
    rows = []
    for x in b.itertuples(index=False):
        ci = (f"{x.ci_low:.0f} to {x.ci_high:.0f}" if pd.notna(x.ci_low) else "no interval")
        marks = bad.get(x.agent, [])
        rows.append({"rank": "" if pd.isna(x.rank) else int(x.rank),
                     "agent": labels.get(x.agent, plots.short(x.agent)).removesuffix(f" {plots.DAGGER}")
                     + person_mark(x.agent) + (f" {plots.DAGGER}" if x.agent in r.not_ranked else ""),
                     "rating": "" if pd.isna(x.rating) else f"{x.rating:.0f}",
                     "95% interval": ci, "method": x.ci_method if pd.notna(x.rating) else "",
                     "runs": int(x.n_runs or 0) if pd.notna(x.n_runs) else 0,
                     WIN_RATE_COLUMN: "" if pd.isna(x.win_rate) else f"{x.win_rate:.3f}",
                     "season fallbacks": f"{x.fallback_rate:.0%}", "draft fallbacks": f"{x.draft_fallback_rate:.0%}",
                     f"runs with >{metrics.MAX_FALLBACK_RATE:.0%} fallbacks": _runs_text(marks, x.n_runs),
                     "note": x.note or ""})
    note = b.attrs.get("note", "")
    text = ["<h2>Leaderboard</h2>",
            "<p class='ffb-note'>Bradley-Terry rating from every weekly head-to-head matchup (1500 = the average "
            "agent, +400 = 10:1 odds of winning a week); the interval is over runs (jackknife t-interval below 20 "
            f"runs, BCa bootstrap from 20). {esc(WIN_RATE_COLUMN)}: the {esc(metrics.WIN_RATE_RULE)}, the mean of "
            f"its runs' rates, as the win-rate figure shows it. {plots.DAGGER}: more than {metrics.MAX_FALLBACK_RATE:.0%} of its "
            "decisions were engine fallbacks: shown, never ranked. The last columns name the runs in which the "
            "engine made most of an agent's decisions.</p>", _table(pd.DataFrame(rows))]
    if note:
        text.append(f"<p class='ffb-note'>{esc(note)}</p>")
    return _html("\n".join(text))


def figures(r: Report) -> list:
    """The analysis notebooks' figures, in the blog's order."""
    d, info, pal, sample = r.data, r.info, r.palette, r.sample
    wr = stats.agent_means(metrics.agent_win_rate(d), "win_rate")
    ss = stats.agent_means(metrics.per_agent(metrics.start_sit_season(d), "left_on_table"), "left_on_table")
    per_run = metrics.trade_value_per_run(d)
    tv = stats.agent_means(per_run, "value_all_weeks") if len(per_run) else pd.DataFrame(
        columns=["agent", "runs", "mean", "ci_low", "ci_high", "ci_method"])
    tv = tv.merge(per_run.groupby("agent", as_index=False)[["trades", "own_team_trades"]].sum(), on="agent",
                  how="left")
    first = d["meta"].iloc[0]
    return [plots.leaderboard_figure(r.board, pal, info, sample),
            plots.win_rate_ci(wr, pal, info, sample=sample),
            plots.standings_by_week(metrics.weekly_standings(d, first["run_id"]), pal, info,
                                    run_label=Path(first["path"]).name, n_runs=len(d["meta"])),
            plots.points_by_position(metrics.points_by_slot(d), info, pal, sample=sample),
            plots.draft_performance(metrics.draft_summary(d), info, sample=sample, palette=pal),
            plots.start_sit_regret(ss, pal, info, sample=sample),
            plots.trade_value_bars(tv, pal, info, sample=sample),
            plots.cost_vs_rating(r.board, pal, info)]


def figures_heading():
    return _html("<h2>Figures</h2><p class='ffb-note'>The analysis notebooks' figures (03-08), each naming its "
                 "sample and interval method; hatched marks and a dagger: mostly engine fallbacks.</p>")


def animation(r: Report):
    """The season's standings replay as an animated bump chart, one frame per week: a GIF embedded in the page
    (it loops; nothing to load). A batch shows its first run, the one the standings-by-week figure draws."""
    meta = r.data["meta"]
    first = meta.iloc[0]
    name = Path(first["path"]).name
    title = f"{name} ({int(first['season'])})" if pd.notna(first.get("season")) else name
    with tempfile.TemporaryDirectory() as tmp:
        gif = plots.save_bump_animation(metrics.weekly_standings(r.data, first["run_id"]), Path(tmp) / "replay.gif",
                                        fps=GIF_FPS, dpi=GIF_DPI, colors=r.palette, title=title, hold_s=GIF_HOLD_S)
        data = base64.b64encode(gif.read_bytes()).decode("ascii")
    which = ("" if len(meta) == 1 else f" It shows the first of the {len(meta)} runs ({esc(name)}), the run the "
             "standings-by-week figure draws; every run's season differs (ffbench's StandingsReplay shows any "
             "run, week by week).")
    return _html("<h2>Standings replay</h2>"
                 f"<p class='ffb-note'>Rank of every team after each week of the regular season (rank 1 on top), "
                 f"{GIF_FPS:g} weeks a second; the final standings stay {GIF_HOLD_S:g} s, then it loops.{which}</p>"
                 f'<img id="ffb-animation" alt="standings replay of {esc(title)}: ranks week by week" '
                 f'class="ffb-line" src="data:image/gif;base64,{data}"/>')


def _quotes(r: Report, agent: str) -> list[str]:
    """Up to :data:`QUOTES` of the agent's own trade rationales (its steps of trades that were made first)."""
    steps = r.data.get("trade_steps", pd.DataFrame())
    if steps is None or steps.empty or "rationale" not in steps:
        return []
    mine = steps[(steps["agent"] == agent) & (steps["decided_by"] == "agent") & steps["rationale"].notna()
                 & (steps["action"] != "pass")
                 & (steps["rationale"].astype(str).str.len() > 0)]
    made = set(zip(r.data["trades"]["run_id"], r.data["trades"]["negotiation"])) if len(r.data["trades"]) else set()
    mine = mine.assign(made=[(a, b) in made for a, b in zip(mine["run_id"], mine["negotiation"])])
    mine = mine.sort_values(["made", "run_id", "week", "step"], ascending=[False, True, True, True])
    out = []
    for x in mine.drop_duplicates("rationale").head(QUOTES).itertuples(index=False):
        text = str(x.rationale)
        text = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS].rsplit(" ", 1)[0] + " ..."
        out.append(f"<blockquote>week {int(x.week)}, {esc(x.action)}{' (trade made)' if x.made else ''}: "
                   f"&ldquo;{esc(text)}&rdquo;</blockquote>")
    return out


def model_cards(r: Report):
    """Per agent: season, draft, start/sit, trades with its own rationales quoted, reliability and cost."""
    d = r.data
    st = metrics.standings(d)
    ds = metrics.draft_summary(d)
    dq = metrics.draft_quality(d)
    ss = metrics.start_sit_season(d)
    ts = metrics.trade_summary(d).set_index("agent")
    rel = metrics.reliability(d)
    usage = metrics.llm_usage(d).set_index("agent")
    board = r.board.set_index("agent")
    drafted_by = dict(zip(r.info["agent"], r.info["drafted_by"]))
    cards = ["<h2>Agents</h2>"]
    for agent in board.index:
        b, s = board.loc[agent], st[st["agent"] == agent]
        mark = f" {plots.DAGGER} not ranked: {esc(r.not_ranked[agent])}" if agent in r.not_ranked else ""
        lines = [f"<div class='ffb-card'><h3>{esc(plots.short(agent) + person_mark(agent))}{mark}</h3>",
                 f"<p class='ffb-note'>{esc(agent)}; {int(s['run_id'].nunique())} run(s), {len(s)} team-season(s)"
                 + (f"; its teams were drafted by {esc(by)}" if (by := drafted_by.get(agent)) else "") + "</p>",
                 f"<p><b>Season</b>: {s['wins'].mean():.1f}-{s['losses'].mean():.1f} (mean W-L per team-season), "
                 f"{s['points_for'].mean():.1f} points for, mean final rank {s['rank'].mean():.1f}.</p>"]
        mine = ds[ds["agent"] == agent]
        if len(mine):
            best = dq[dq["agent"] == agent].sort_values("actual_points", ascending=False).drop_duplicates(
                "player_id").head(3)  # a player this agent drafted in several runs is named once
            picks = ", ".join(f"{esc(p.player_name)} ({esc(p.position)}, round {int(p['round'])}, "
                              f"{p.actual_points:.0f} pts)" for _, p in best.iterrows())
            lines.append(f"<p><b>Draft</b> (the teams it drafted): drafted rosters scored "
                         f"{mine['actual_points'].mean():.0f} points (projected {mine['proj_points'].mean():.0f}, "
                         "previous season "
                         f"{mine['prev_points'].mean():.0f}); best picks: {picks}.</p>")
        sit = ss[ss["agent"] == agent]
        if len(sit):
            lines.append(f"<p><b>Start/sit</b>: {sit['left_on_table'].mean():.1f} points per season left on the "
                         f"bench against the hindsight-best lineup ({sit['pct_of_optimal'].mean():.1%} of "
                         "optimal).</p>")
        if agent in ts.index:
            t = ts.loc[agent]
            lines.append(f"<p><b>Trades</b>: {int(t['trades'])} made by the agent ({int(t['fallback_trades'])} by "
                         f"the engine), value {t['value_all_weeks']:+.1f} points over the weeks after them.</p>")
        lines += _quotes(r, agent)
        mine_rel = rel[rel["agent"] == agent]
        if len(mine_rel):
            worst = ", ".join(f"{esc(x.decision)} {x.fallback_rate:.0%}" for x in mine_rel.itertuples()
                              if x.fallback_rate > 0)
            lines.append(f"<p><b>Reliability</b>: {int(mine_rel['decisions'].sum())} decisions, "
                         f"{int(mine_rel['fallbacks'].sum())} engine fallbacks"
                         + (f" ({worst})" if worst else "") + ".</p>")
        free = "a person: no LLM calls" if metrics.is_human(agent) else "a bot"
        cost = (f"free ({free})" if b.get("free") is True or not metrics.makes_calls(agent) else
                f"${b['cost_usd']:.2f} in all, ${b['cost_per_team_season']:.2f} per team-season"
                if b.get("cost_known") is True or b.get("cost_known") == 1 else "unknown (calls without a price, or "
                "no ledger)")
        if agent in usage.index:
            u = usage.loc[agent]
            cost += (f"; {int(u['calls'])} calls, {u['invalid_rate']:.1%} invalid answers, "
                     f"{int(u['prompt_tokens'])} prompt and {int(u['completion_tokens'])} completion tokens")
        lines.append(f"<p><b>Cost</b>: {cost}.</p></div>")
        cards.append("\n".join(lines))
    return _html("\n".join(cards))


def reliability(r: Report):
    """Fallback shares per decision type, and the LLM ledger where the runs have one."""
    rel, usage = metrics.reliability(r.data), metrics.llm_usage(r.data)
    parts = ["<h2>Reliability and cost</h2>"]
    if rel.empty:
        parts.append("<p>No decisions logged.</p>")
    else:
        pv = rel.pivot_table(index="agent", columns="decision", values="fallback_rate").round(3)
        pv = pv.rename_axis(columns=None).reset_index()  # no "decision" label over the agent column
        pv["agent"] = pv["agent"].map(plots.short)
        parts += ["<p class='ffb-note'>Share of each decision type the engine had to make (fallbacks).</p>",
                  _table(pv)]
    if usage.empty:
        parts.append("<p>No token or cost data in these runs (bots and people only, or imported runs, which did "
                     "not log them).</p>")
    else:
        u = usage.assign(agent=usage["agent"].map(plots.short)).round(4)
        parts += ["<p class='ffb-note'>LLM ledger (llm_summary): calls, invalid answers, tokens and cost.</p>",
                  _table(u)]
    cost = ratings.costs(r.data).assign(agent=lambda x: x["agent"].map(plots.short)).round(4)
    cost = cost.round({"points_per_team_season": 1, "points_per_week": 2, "points_per_dollar": 1})
    parts += ["<p class='ffb-note'>Points and cost per agent (USD from the ledger; bots and people are "
              "free).</p>",
              _table(cost)]
    return _html("\n".join(parts))


def caveats(r: Report, alpha: float = 0.05):
    """What the statistics allow: the tests' verdicts (with the smallest p these runs can reach) and who is
    not ranked, and why."""
    st = metrics.standings(r.data)
    out = ["<h2>Caveats</h2><ul>"]
    per_run = {"win_rate": metrics.agent_win_rate(r.data)[["run_id", "agent", "win_rate"]],  # the one win rate
               "points_for": metrics.per_agent(st, "points_for")}
    meta = r.data["meta"]
    sports = list(dict.fromkeys(meta["sport"])) if "sport" in meta else []
    for name, col in ((metrics.WIN_RATE_LABEL, "win_rate"), ("points for", "points_for")):
        # points of two sports share no scale: tested per sport (a win rate pools)
        groups = ([(name, per_run[col], r.sample)] if col == "win_rate" or len(sports) < 2 else
                  [(f"{name} ({sp})", per_run[col][per_run[col]["run_id"].isin(meta.loc[meta["sport"] == sp, "run_id"])],
                    metrics.describe_sample(list(meta.loc[meta["sport"] == sp, "season"]))) for sp in sports])
        for label, df, sample in groups:
            fried = stats.friedman(df, col, exclude=r.not_ranked)
            pairs = stats.pairwise_wilcoxon(df, col, alpha, exclude=r.not_ranked)
            out.append(f"<li>{esc(stats.verdict(label, fried, pairs, alpha, sample=sample, flagged=r.not_ranked))}"
                       "</li>")
    if r.not_ranked:
        out.append(f"<li>Not ranked ({plots.DAGGER}): "
                   + "; ".join(f"{esc(plots.short(a))} ({esc(v)})" for a, v in sorted(r.not_ranked.items()))
                   + ": their results are mostly the engine's, not the model's play.</li>")
    out += _people(r)
    one = r.board.loc[r.board["n_runs"].fillna(0) == 1, "agent"]
    if len(one):
        out.append(f"<li>Rated from one run, no interval: {esc(', '.join(map(plots.short, one)))}.</li>")
    if len(r.data["excluded"]):
        out.append(f"<li>{esc(metrics.describe_runs(r.data))}</li>")
    masked = anonymity.audit_caveat(r.data["meta"]["path"]) if "path" in r.data["meta"] else None
    if masked:  # masked runs: what the numbers their prompts showed still reveal (ffbench masking audit)
        out.append(f"<li>{esc(masked)}</li>")
    out.append("</ul>")
    return _html("\n".join(out))


def seasons(r: Report, alpha: float = 0.05):
    """A study over seasons (runs of 2 or more seasons or sports): each agent's win rate per season beside the
    pooled one, the pair tests blocked by season and the season-by-agent interaction verdict, and the figure;
    nothing for runs of one season."""
    from ffbench_lib.analysis import seasons as by_season

    if not by_season.is_study(r.data):
        return _html("")
    table = by_season.season_table(r.data, "win_rate")
    wide = table.pivot_table(index="agent", columns="stratum", values="mean", sort=False)
    wide = wide[[c for c in dict.fromkeys(table["stratum"]) if c in wide]]
    wide.columns.name = None
    rank = table[table["stratum"].str.startswith("pooled")].groupby("agent")["mean_rank"].mean()
    wide = wide.assign(**{"mean rank in its runs": rank}).reindex(
        [a for a in r.board["agent"] if a in wide.index]).round(3)
    wide.index = [f"{plots.short(a)}{person_mark(a)}" for a in wide.index]
    out = ["<h2>By season</h2>",
           f"<p>{esc(r.sample)}: a season is a stratum (its seeds replay the same real weeks). Win rate "
           f"({esc(metrics.WIN_RATE_RULE)}) per season and pooled over all runs; mean rank: the agent's place "
           "within its runs (1 = best), averaged.</p>", _table(wide.rename_axis("agent").reset_index()), "<ul>"]
    values = ["win_rate"] + (["points_for"] if r.data["meta"]["sport"].nunique() == 1 else [])
    for value in values:
        out.append(f"<li>{esc(by_season.verdict(r.data, value, alpha, exclude=r.not_ranked))}</li>")
    out.append("</ul>")
    out.append(png(plots.by_season(table, r.palette, r.info, "win_rate")).data)
    return _html("\n".join(out))


def exam_section(results, alpha: float = 0.05):
    """An exam's results (``ffbench exam run``'s folder) beside the seasons: per skill each candidate's mean regret
    on the same states with its clustered interval, the rule each skill is scored by, the pairs that differ (Holm
    within a skill) and those that answered alike, and the figure; nothing without results."""
    from ffbench_lib.analysis import exams

    if not results:
        return _html("")
    df = exams.load_results(results)
    table = exams.skill_table(df)
    pairs = exams.pair_tests(df, alpha)
    out = ["<h2>Exams: the same states for every candidate</h2>",
           f"<p>Suite {esc(df['suite'].iloc[0])}: {df['state_id'].nunique()} states from "
           f"{df['team_season'].nunique()} team-seasons ({esc(', '.join(sorted(df['season'].unique())))}), each "
           "answered by every candidate, so a difference is the candidates', not their rosters'. Per skill and sport "
           "(their regrets share no scale); intervals: 95% t, clustered by team-season and by real week (or real "
           "season for a skill scored over one).</p><ul>"]
    out += [f"<li>{esc(exams.SKILL_RULES.get(k, k))}</li>" for k in sorted(df["skill"].unique())]
    out.append("</ul>")
    out.append(_table(table[["skill", "sport", "agent", "states", "score", "regret", "low", "high", "repaired"]]))
    notes = sorted({f"{r.skill} ({r.sport}): {r.note}" for r in table.itertuples() if isinstance(r.note, str)})
    if notes:
        out.append(f"<p>{esc('; '.join(notes))}.</p>")
    found = [f"{r.a} vs {r.b} ({r.skill}, {r.sport}: {r.diff:+.2f} per state, p_holm {r.p_holm:.3g})"
             for r in pairs.itertuples() if r.significant]
    alike = [f"{r.a} and {r.b} ({r.skill}, {r.sport})" for r in pairs.itertuples() if r.identical == 1.0]
    out.append(f"<p>Pairs that differ at alpha {alpha} (Holm within a skill and sport): "
               f"{esc('; '.join(found)) if found else 'none'}.</p>")
    if alike:
        out.append(f"<p>The same answer on every state: {esc('; '.join(alike))}.</p>")
    cut = table[table["protected"] > 0]
    if len(cut):  # protected numbers: a masked candidate answered cut boards, a bot the exact ones
        out.append(f"<p>Protected numbers: {esc(', '.join(sorted(set(cut['agent']))))} answered cut draft boards and "
                   "waiver lists (as a protected season's team), judged against the best of what they were shown; "
                   "pairs compare only the states both answered as the same view.</p>")
    out.append(png(plots.exam_regret(table)).data)
    return _html("\n".join(out))


def _people(r: Report) -> list[str]:
    """A caveat per person's team: a person replaying a past season may remember it (no model-like result); a
    seat played on autopilot is a bot's answers, not a person's."""
    st, meta = r.data["standings"], r.data["meta"]
    out = []
    for agent in sorted(a for a in r.board["agent"] if metrics.is_human(a)):
        name = esc(plots.short(agent))
        bot = metrics.autopilot_bot(agent)
        if bot:
            out.append(f"<li>{name} was played on autopilot: the {esc(bot)} bot gave every answer, not a person."
                       "</li>")
            continue
        seasons = sorted({int(x) for x in meta.loc[meta["run_id"].isin(st.loc[st["agent"] == agent, "run_id"]),
                                                    "season"].dropna()})
        which = f"the {', '.join(map(str, seasons))} season{'s' if len(seasons) > 1 else ''}" if seasons else \
            "a past season"
        out.append(f"<li>{name} is a person playing {which} after it happened: a person may remember how it went "
                   "(breakouts, injuries, who won), so the result is not comparable with how a model did without that "
                   "caveat.</li>")
    return out


# ------------------------------------------------------------------------------------------------ the page
def offline_problems(page: str) -> list[str]:
    """Every place the page would load something from the network (it must open offline)."""
    return [page[m.start():m.start() + 120].split(">")[0] for m in _NETWORK.finditer(page)]


def to_html(notebook: str | Path) -> str:
    """The executed notebook as one page: outputs only (no code, no prompts), figures embedded."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, template_file="ffbench.html.j2",
                            extra_loaders=[jinja2.DictLoader({"ffbench.html.j2": TEMPLATE})])
    nb = nbformat.read(str(notebook), as_version=4)
    nb.metadata["title"] = "ffbench report"
    page, _ = exporter.from_notebook_node(nb)
    return page


def _stage(text: str, progress: bool, start: float) -> None:
    """One line per stage on stderr (the build takes about 20 s for a small batch: never silent that long)."""
    import sys
    import time

    if progress:
        print(f"report: {text} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)


def build(runs, out: str | Path, progress: bool | None = None, exam: str | Path | None = None) -> Path:
    """Execute notebook 11 on ``runs`` and write the page to ``out``. Bad runs are refused before the kernel
    starts (FileNotFoundError naming them); a page that would need the network is never written. The notebook
    runs in a temporary folder beside ``out``, always removed: when it fails, its executed copy (with the
    traceback) is kept as ``<out>.failed.ipynb``, which the error names. ``progress``: a line per stage and
    papermill's bar of the notebook's cells on stderr (default: when stderr is a terminal, so a person waiting
    sees it and a log or pipe keeps its one-line errors)."""
    import sys
    import time

    progress = sys.stderr.isatty() if progress is None else progress
    from ffbench_lib.core.atomic import write_text
    from ffbench_lib.runs.notebooks import NotebookError, execute

    from ffbench_lib.records.load import RunFiles

    if exam is not None:
        from ffbench_lib.analysis.exams import load_results

        load_results(exam)  # refused (ValueError naming the file) before the kernel starts
    paths = [str(p.resolve()) for p in metrics.expand_paths(runs)]
    if not any(RunFiles(p).meta().status == "complete" for p in paths):
        raise FileNotFoundError(f"no complete runs in {runs!r} ({len(paths)} run folder(s), none finished): "
                                "finish or resume them first")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    failed = out.with_name(f"{out.name}.failed.ipynb")
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out.parent))
    nb = work / NOTEBOOK
    start = time.monotonic()
    _stage(f"{len(paths)} run folder(s); executing notebooks/{NOTEBOOK} (kernel start, then its cells)", progress,
           start)
    try:
        try:
            execute(NOTEBOOK, nb, {"runs": paths, "out": str(out.resolve()),
                                   "exam": str(Path(exam).resolve()) if exam else None}, timeout_s=900,
                    progress_bar=progress)
        except NotebookError as exc:
            if nb.exists():
                shutil.move(nb, failed)
            raise NotebookError(str(exc).replace(str(nb), str(failed))) from None
        _stage("notebook executed; converting it to one HTML page", progress, start)
        page = to_html(nb)
        bad = offline_problems(page)
        if bad:  # a bug (nbconvert changed its template): keep the executed notebook to look at
            shutil.move(nb, failed)
            raise RuntimeError(f"the report would load from the network ({bad[0]}); executed notebook: {failed}")
        write_text(out, page)
        _stage(f"page written ({len(page) / 1e6:.1f} MB)", progress, start)
        failed.unlink(missing_ok=True)  # an earlier failure's copy no longer describes this page
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def embedded_gifs(page: str) -> list[bytes]:
    """The GIFs the page embeds as data: URIs (the standings replay), decoded."""
    return [base64.b64decode(b64, validate=True)
            for b64 in re.findall(r'<img[^>]*src="data:image/gif;base64,([^"]+)"', page)]


def embedded_images(page: str) -> int:
    """How many images the page embeds as data: URIs (each checked to decode)."""
    found = re.findall(r'<img[^>]*src="data:image/png;base64,([^"]+)"', page)
    for b64 in found:
        base64.b64decode(b64, validate=True)
    return len(found)
