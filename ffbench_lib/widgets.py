"""The standings replay widget (ipywidgets): a week slider with a play button, the standings after that week,
and the week's matchups (in a playoff week: its bracket games, the standings staying the regular season's final
ones), lineups, trades and waiver moves. Reads a run directory only."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .rundir import RunDir


class StandingsReplay:
    def __init__(self, run_dir: str | Path, interval_ms: int = 900):
        import ipywidgets as w

        run = RunDir(run_dir)
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
        self.slider = w.IntSlider(value=1, min=1, max=weeks, description="week", continuous_update=False)
        self.play = w.Play(value=1, min=1, max=weeks, interval=interval_ms, description="play")
        w.jslink((self.play, "value"), (self.slider, "value"))
        self.team = w.Dropdown(options=sorted(self.standings["team"].unique()), description="lineup of")
        self.table = w.HTML()
        self.games = w.HTML()
        self.games_title = w.HTML("<b>Matchups</b>")
        self.lineup = w.HTML()
        self.deals = w.HTML()
        self.waivers = w.HTML()
        for control in (self.slider, self.team):
            control.observe(lambda _: self.render(), names="value")
        self.widget = w.VBox([w.HBox([self.play, self.slider]),
                              w.HBox([w.VBox([w.HTML("<b>Standings</b>"), self.table]),
                                      w.VBox([self.games_title, self.games,
                                              w.HTML("<b>Trades this week</b>"), self.deals,
                                              w.HTML("<b>Waiver moves this week</b>"), self.waivers]),
                                      w.VBox([self.team, self.lineup])])])
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
        f = self.frames(self.slider.value)
        self.table.value = f["standings"].to_html(index=False)
        self.games.value = f["matchups"].to_html(index=False)
        rnd = f["playoff_round"]
        self.games_title.value = f"<b>Playoffs, round {rnd}</b>" if rnd else "<b>Matchups</b>"
        self.lineup.value = f["lineup"].to_html(index=False)
        self.deals.value = f["trades"].to_html(index=False) if len(f["trades"]) else "<i>none</i>"
        self.waivers.value = f["waivers"].to_html(index=False) if len(f["waivers"]) else "<i>none</i>"

    def _ipython_display_(self) -> None:  # pragma: no cover - display hook in notebooks
        from IPython.display import display

        display(self.widget)


def standings_replay(run_dir: str | Path) -> StandingsReplay:
    return StandingsReplay(run_dir)
