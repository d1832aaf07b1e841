"""The standings replay widget (ipywidgets): a bump chart of ranks week by week with a week slider and a play
button, the standings after that week, and the week's matchups (in a playoff week: its bracket games, the
standings staying the regular season's final ones), lineups, trades and waiver moves. Boxes wrap as whole boxes
on a narrow window and tables never wrap a name. Where widgets cannot render (an executed notebook, nbconvert) it
shows the season's bump chart as a PNG; :meth:`StandingsReplay.save` writes it as a GIF or MP4. Reads a run
directory only."""
from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd

from ffbench_lib.present import plots
from ffbench_lib.records.load import RunFiles

#: on tables inside the widget: names stay on one line (a box that does not fit moves below, whole)
TABLE_STYLE = "border-collapse:collapse;white-space:nowrap;font-size:12px;line-height:1.5"
CELL_STYLE = "padding:1px 8px;border-bottom:1px solid #e0e0e0"  # the widget's HTML gets no notebook table CSS
CHART_PX = 560  # the chart's width in the widget (rendered at twice that for sharp high-DPI screens)


def html_table(df: pd.DataFrame) -> str:
    """A DataFrame as an HTML table whose cells never wrap (empty cells for missing values)."""
    html = df.to_html(index=False, border=0, na_rep="").replace("<table", f'<table style="{TABLE_STYLE}"', 1)
    return html.replace("<th>", f'<th style="{CELL_STYLE}">').replace("<td>", f'<td style="{CELL_STYLE}">')


class StandingsReplay:
    def __init__(self, run_dir: str | Path, interval_ms: int = 900, team: str | None = None,
                 colors: dict[str, str] | None = None):
        """``team``: the team whose lineup is shown first (default: the first by name); ``colors``: agent ->
        colour (a notebook's :func:`plots.runs_palette`, so the replay matches its figures; default
        :func:`plots.agent_palette` of this run's agents, the same colours for the same agents)."""
        self.colors = colors
        import ipywidgets as w

        run = RunFiles(run_dir)
        self.standings = run.table("standings")
        self.matchups = run.table("matchups")
        self.lineups = run.table("lineups")
        self.trades = run.table("trades")
        picks = run.table("draft_picks")
        tx = run.table("transactions") if run.file("transactions.parquet").exists() else pd.DataFrame()
        self.moves = tx
        self.playoffs = run.table("playoffs") if run.file("playoffs.parquet").exists() else pd.DataFrame()
        self.ir_moves = run.table("ir_moves") if run.file("ir_moves.parquet").exists() else pd.DataFrame()
        self.names = dict(zip(picks["player_id"], picks["player_name"]))
        for pid, name in (("add", "add_name"), ("drop", "drop_name")):  # with waivers, not every player was drafted
            if name in tx:
                self.names.update({p: n for p, n in zip(tx[pid], tx[name]) if isinstance(n, str)})
        # imported runs of the earlier benchmark: another model drafted the team; shown next to the season's
        drafter = picks.drop_duplicates("team").set_index("team")["agent"]
        season = self.standings.drop_duplicates("team").set_index("team")["agent"]
        self.drafted_by = drafter if (drafter.reindex(season.index) != season).any() else None
        weeks = int(max(self.standings["week"].max(), self.playoffs["week"].max() if len(self.playoffs) else 0))
        meta = run.meta()
        self.title = f"{meta.run_id} ({meta.season})"
        self._bump: plots.BumpChart | None = None  # drawn on first use; one PNG per week, kept
        self._pngs: dict[int, bytes] = {}
        self.slider = w.IntSlider(value=1, min=1, max=weeks, description="week", continuous_update=False)
        self.play = w.Play(value=1, min=1, max=weeks, interval=interval_ms, description="play")
        w.jslink((self.play, "value"), (self.slider, "value"))
        self.caption = w.HTML()
        self.chart = w.Image(format="png", layout=w.Layout(width=f"{CHART_PX}px", flex="0 0 auto"))
        teams = sorted(self.standings["team"].unique())
        if team is not None and team not in teams:
            raise ValueError(f"team: {team!r} is not a team of this run ({', '.join(teams)})")
        self.team = w.Dropdown(options=teams, value=teams[0] if team is None else team, description="lineup of")
        self.table = w.HTML()
        self.games = w.HTML()
        self.games_title = w.HTML("<b>Matchups</b>")
        self.lineup = w.HTML()
        self.deals = w.HTML()
        self.waivers = w.HTML()
        for control in (self.slider, self.team):
            control.observe(lambda _: self.render(), names="value")

        def box(*children):  # keeps its natural width: it moves to the next row rather than being squeezed
            return w.VBox(list(children), layout=w.Layout(flex="0 0 auto", margin="0 24px 12px 0",
                                                          overflow="visible"))

        def row(*children):
            return w.HBox(list(children), layout=w.Layout(flex_flow="row wrap", align_items="flex-start",
                                                          width="100%"))

        controls = w.HBox([self.play, self.slider, self.caption], layout=w.Layout(align_items="center"))
        self.widget = w.VBox([controls,
                              row(box(self.chart), box(w.HTML("<b>Standings</b>"), self.table)),
                              row(box(self.games_title, self.games),
                                  box(w.HTML("<b>Trades this week</b>"), self.deals,
                                      w.HTML("<b>Waiver moves this week</b>"), self.waivers),
                                  box(self.team, self.lineup))])
        self.render()

    def frames(self, week: int) -> dict:
        st = self.standings[self.standings["week"] == min(week, self.standings["week"].max())].sort_values("rank")
        po = self.playoffs[self.playoffs["week"] == week] if len(self.playoffs) else self.playoffs
        if len(po):  # a playoff week: one row per game (the higher seed's side) and per bye
            po = po[po["opponent"].isna() | (po["playoff_seed"] < po["opponent_seed"])]
            m = po[["round", "playoff_seed", "team", "points_for", "points_against", "opponent", "opponent_seed",
                    "round_points_for", "round_points_against", "result"]]
        else:
            m = self.matchups[(self.matchups["week"] == week)]
            m = m[m["team"] < m["opponent"]][["team", "points_for", "points_against", "opponent"]]
        lu = self.lineups[(self.lineups["week"] == week) & (self.lineups["team"] == self.team.value)]
        lu = lu.assign(player=lu["player_id"].map(self.names).fillna(lu["player_id"]))
        tr = self.trades[self.trades["week"] == week] if not self.trades.empty else self.trades
        if len(tr):
            def named(ids):
                return ", ".join(self.names.get(p, p) for p in ids)
            tr = tr.assign(proposer_gives=tr["proposer_gives"].map(named), receiver_gives=tr["receiver_gives"].map(named))
        mv = self.moves[self.moves["week"] == week] if not self.moves.empty else self.moves
        if len(mv):
            mv = mv.assign(added=mv["add"].map(self.names).fillna(mv["add"]),
                           dropped=mv["drop"].map(self.names).fillna(mv["drop"]))[["team", "kind", "added", "dropped",
                                                                                     "bid"]]
            mv = mv.fillna({"added": "", "dropped": ""})  # a drop for an IR return adds nobody
        ir = self.ir_moves[self.ir_moves["week"] == week] if not self.ir_moves.empty else self.ir_moves
        if len(ir):  # moves onto and off injured reserve (a drop to make room is an ir_return transaction above)
            ir = pd.DataFrame({"team": ir["team"], "kind": ir["move"].map({"to_ir": "to IR", "from_ir": "back from IR"}),
                               "added": "", "dropped": "", "bid": None, "player": ir["player_name"]})
            mv = pd.concat([mv.assign(player="") if len(mv) else None, ir]).fillna("")
        cols = ["rank", "team", "agent", "wins", "losses", "ties", "points_for"]
        if self.drafted_by is not None:
            st = st.assign(drafted_by=st["team"].map(self.drafted_by))
            cols.insert(3, "drafted_by")
        return {"standings": st[cols],
                "matchups": m, "playoff_round": int(po["round"].iloc[0]) if len(po) else None,
                "lineup": lu[["slot", "player", "points", "decided_by"]],
                "trades": tr[["proposer", "receiver", "proposer_gives", "receiver_gives"]] if len(tr) else tr,
                "waivers": mv}

    def render(self) -> None:
        week = self.slider.value
        f = self.frames(week)
        self.chart.value = self.png(week)
        self.table.value = html_table(f["standings"])
        self.games.value = html_table(f["matchups"])
        rnd = f["playoff_round"]
        self.games_title.value = f"<b>Playoffs, round {rnd}</b>" if rnd else "<b>Matchups</b>"
        last = int(self.standings["week"].max())
        self.caption.value = (f"&nbsp; week {week} of {self.slider.max}"
                              + (f": playoffs, round {rnd} (standings: regular season's final)" if rnd
                                 else " (final)" if week == last else ""))
        self.lineup.value = html_table(f["lineup"])
        self.deals.value = html_table(f["trades"]) if len(f["trades"]) else "<i>none</i>"
        self.waivers.value = html_table(f["waivers"]) if len(f["waivers"]) else "<i>none</i>"

    @property
    def bump(self) -> plots.BumpChart:
        """The bump chart of the regular season's standings (the ranks the standings table shows)."""
        if self._bump is None:
            self._bump = plots.BumpChart(self.standings, self.colors, title=self.title)
        return self._bump

    def png(self, week: int | None = None) -> bytes:
        """The bump chart up to ``week`` (default: the whole season) as PNG bytes."""
        week = int(self.standings["week"].max()) if week is None else min(week, int(self.standings["week"].max()))
        if week not in self._pngs:
            self._pngs[week] = self.bump.png(week, dpi=round(2 * CHART_PX / self.bump.fig.get_figwidth()))
        return self._pngs[week]

    def save(self, path: str | Path, fps: float = 1.5, dpi: int = 100) -> Path:
        """Write the replay's bump chart as an animation, one frame per week: ``.gif``, or ``.mp4`` (needs
        ffmpeg: :func:`plots.ffmpeg_path`)."""
        return plots.save_bump_animation(self.standings, path, fps=fps, dpi=dpi, colors=self.colors,
                                         title=self.title)

    def summary(self) -> str:
        last = int(self.standings["week"].max())
        top = self.standings[self.standings["week"] == last].sort_values("rank").iloc[0]
        teams = self.standings["team"].nunique()
        return (f"Standings replay of {self.title}: {teams} teams, weeks 1-{self.slider.max}; "
                f"rank 1 after week {last}: {top['team']} ({top['agent']})")

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        """The live widget where a kernel's widgets render, else (executed notebooks, nbconvert, GitHub) the
        season's bump chart as a PNG (shown at half its pixels: sharp on high-DPI screens) and a one-line summary."""
        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = self.summary()
        return bundle, {"image/png": {"width": CHART_PX}}


def standings_replay(run_dir: str | Path) -> StandingsReplay:
    return StandingsReplay(run_dir)
