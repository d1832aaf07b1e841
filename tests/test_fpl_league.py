"""A Premier League draft league under FPL rules, played end to end on the real 2024-25 season (issue #28):
``params/fpl_draft.yaml``'s ten bots over 38 gameweeks. Every final lineup is a legal formation after the
automatic substitutions, which follow the rules exactly (checked here from the logged lineups and the minutes,
independently of the engine's code); a team-week's points are its final starters' FPL points; the information
rule holds when the future is perturbed; a killed season resumes byte for byte."""
from __future__ import annotations

import dataclasses
import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from ffbench_lib.config.load import load_config
from ffbench_lib.data import fpl
from ffbench_lib.game.views import canonical_json
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.runs.runner import SimulatedCrash

from engine_helpers import REPO, run_engine, same_run

PRESET = REPO / "params" / "fpl_draft.yaml"


def preset(**updates):
    league = load_config(PRESET)
    return league.model_copy(update=updates) if updates else league


@pytest.fixture(scope="module")
def season(prepared_fpl, tmp_path_factory):
    """(league, run) of the preset's whole season, played once for the module."""
    league = preset()
    out = tmp_path_factory.mktemp("fpl") / "run"
    run_engine(league, prepared_fpl, out)
    return league, RunDir(out)


def formation(positions) -> dict[str, int]:
    positions = list(positions)
    return {p: positions.count(p) for p in ("GK", "DEF", "MID", "FWD")}


def legal(counts: dict[str, int]) -> bool:
    """FPL's formation, written out here rather than read from the config: 11 starters, 1 GK, 3-5 DEF, 2-5 MID,
    1-3 FWD."""
    return (sum(counts.values()) == 11 and counts["GK"] == 1 and 3 <= counts["DEF"] <= 5 and 2 <= counts["MID"] <= 5
            and 1 <= counts["FWD"] <= 3)


def test_the_season_completes_with_legal_lineups_and_points_that_add_up(season, prepared_fpl):
    league, run = season
    teams = [t.name for t in league.teams]
    assert league.weeks == 38 and len(teams) == 10 and league.season == 2024
    lineups, standings = run.table("lineups"), run.table("standings")
    # one row per final starter per gameweek, the NFL table's columns, ids fpl:<code>
    assert list(lineups.columns) == ["week", "team", "agent", "slot", "player_id", "position", "points", "decided_by"]
    assert lineups.groupby(["week", "team"]).size().eq(11).all() and lineups["week"].nunique() == 38
    assert lineups["player_id"].str.fullmatch(r"fpl:\d+").all()
    for (week, team), g in lineups.groupby(["week", "team"]):
        assert legal(formation(g["position"])), (week, team, formation(g["position"]))
    # each starter's points are his FPL points of the gameweek (both matches of a double gameweek, 0 in a blank)
    actual = prepared_fpl.weekly.set_index(["week", "player_id"])["fantasy_points"]
    expect = [actual.get((w, p), 0.0) for w, p in zip(lineups["week"], lineups["player_id"])]
    assert np.allclose(lineups["points"], expect)
    assert (prepared_fpl.weekly["fixtures"] == 2).any()  # 2024-25 has double gameweeks
    # a team-week's points are the sum of its final starters'
    matchups = run.table("matchups")
    sums = lineups.groupby(["week", "team"])["points"].sum().round(2)
    assert len(matchups) == 38 * 10
    for row in matchups.itertuples():
        assert sums[(row.week, row.team)] == pytest.approx(row.points_for)
        assert sums[(row.week, row.opponent)] == pytest.approx(row.points_against)
    last = standings[standings["week"] == 38]
    assert (last["wins"] + last["losses"] + last["ties"]).eq(38).all()
    # squads stay 2 GK, 5 DEF, 5 MID, 3 FWD all season, through waivers
    rosters = run.table("rosters")
    squads = rosters.groupby(["week", "team"])["position"].agg(lambda s: tuple(sorted(s.value_counts().items())))
    assert set(squads) == {(("DEF", 5), ("FWD", 3), ("GK", 2), ("MID", 5))}
    assert len(run.table("transactions")) > 0


def _played(prepared) -> dict[int, set[str]]:
    w = prepared.weekly
    on = w[w["minutes"] > 0]
    return {int(k): set(g) for k, g in on.groupby("week")["player_id"]}


def test_substitutions_follow_the_rules(season, prepared_fpl):
    """From each logged lineup (starters and bench order) and who played: every substitute played and came off
    the bench, in bench order, for a starter who did not play; each non-playing starter in team-sheet order
    (goalkeeper, defenders, midfielders, forwards) took the
    first bench player who played and keeps the formation legal; no substitution was left undone."""
    league, run = season
    played = _played(prepared_fpl)
    position = dict(zip(prepared_fpl.players["player_id"], prepared_fpl.players["position"]))
    final = {k: list(g["player_id"]) for k, g in run.table("lineups").groupby(["week", "team"])}
    subs = 0
    for d in run.decisions():
        if d["decision"] != "set_lineup":
            continue
        # the team sheet: by position, and within one as listed (its own slots before FLEX)
        order = {"GK": 0, "DEF": 1, "MID": 2, "FWD": 3}
        listed = [p for slot in ("GK", "DEF", "MID", "FWD", "FLEX") for p in d["applied"]["lineup"].get(slot, [])]
        starting = sorted(listed, key=lambda p: order[position[p]])
        bench = d["applied"]["bench"]
        assert sorted(starting + bench) == sorted(c["id"] for c in d["view"]["players"])
        ok = played.get(d["week"], set())
        xi, used = list(starting), set()
        for out in starting:  # the rule, written out: lineup order, then bench order, first legal one
            if out in ok:
                continue
            for cand in bench:
                trial = [cand if p == out else p for p in xi]
                if cand not in used and cand in ok and legal(formation(position[p] for p in trial)):
                    xi, used = trial, used | {cand}
                    subs += 1
                    break
        assert sorted(final[(d["week"], d["team"])]) == sorted(xi), (d["week"], d["team"])  # exactly these 11
        # nothing left undone: no unused bench player who played could replace a starter who did not, legally
        for out in (p for p in xi if p not in ok):
            for cand in (b for b in bench if b in ok and b not in used):
                assert not legal(formation(position[p] for p in (cand if q == out else q for q in xi)))
    lineups = run.table("lineups")
    assert subs == int((lineups["decided_by"] == "auto_sub").sum()) > 100


def test_the_brute_force_agrees_on_every_team_week(season, prepared_fpl):
    """The hindsight check of the engine's best formation: over every legal XI of a week's squad (a brute force
    over all 11-player subsets that fit the formation), none beats the best lineup by actual points that the
    analysis reports, and the engine's final XI is one of the legal ones."""
    from ffbench_lib.game.rules.lineup import best_lineup
    from ffbench_lib.sport.lineup import lineup_value

    league, run = season
    actual = prepared_fpl.weekly.set_index(["week", "player_id"])["fantasy_points"]
    rosters = run.table("rosters")
    for (week, team), g in list(rosters.groupby(["week", "team"]))[::37]:  # a spread of team-weeks
        pos = dict(zip(g["player_id"], g["position"]))
        pts = {p: float(actual.get((week, p), 0.0)) for p in pos}
        best = max(sum(pts[p] for p in xi) for xi in combinations(sorted(pos), 11)
                   if legal(formation(pos[p] for p in xi)))
        assert lineup_value(best_lineup(pos, pts, league.roster), pts) == pytest.approx(best)


def perturb(prepared, from_week: int, seed: int = 0):
    """The season with every outcome from ``from_week`` on changed: points scaled and shifted, a fifth of the
    player-gameweeks removed, a third of those left not played (minutes 0), the in-season projections rebuilt
    from the changed rows, and the later gameweeks' prices and ownership changed."""
    rng = np.random.default_rng(seed)
    w = prepared.weekly.copy()
    future = w["week"] >= from_week
    w.loc[future, "fantasy_points"] = w.loc[future, "fantasy_points"] * 1.7 + 3
    w.loc[future & (rng.random(len(w)) < 0.33), "minutes"] = 0.0
    w = w[~(future & (rng.random(len(w)) < 0.2))].reset_index(drop=True)
    pl = prepared.players
    pre = pl.set_index("player_id")["proj_points"] / 38
    club = dict(zip(pl.loc[pl["in_draft_pool"], "player_id"], pl.loc[pl["in_draft_pool"], "team"]))
    wp = fpl.weekly_projection(w, pre, fpl.fixtures_per_club(prepared.schedule), club, 38)
    market = prepared.weekly_projections[["week", "player_id", "value", "selected"]].copy()
    later = market["week"] > from_week  # the market of later gameweeks moves too (week w's is published before w)
    market.loc[later, ["value", "selected"]] = market.loc[later, ["value", "selected"]] * 1.1 + 5
    wp = wp.merge(market, on=["week", "player_id"], how="left")
    wp.insert(0, "season", prepared.season)
    wp = wp[wp["player_id"].isin(pl["player_id"])].sort_values(["week", "player_id"]).reset_index(drop=True)
    return dataclasses.replace(prepared, weekly=w, weekly_projections=wp)


@pytest.mark.parametrize("week", [1, 9])
def test_views_before_gameweek_w_are_byte_identical(prepared_fpl, tmp_path, week):
    """Perturb every outcome from gameweek w on: every view of the draft and of gameweeks up to w (which hold
    gameweeks < w) is byte-identical, and so is every answer; a later view is not."""
    league = preset(weeks=week + 1, trades=preset().trades.model_copy(update={"weeks": [week]}))
    run_engine(league, prepared_fpl, tmp_path / "real")
    run_engine(league, perturb(prepared_fpl, week), tmp_path / "perturbed")
    real, fake = RunDir(tmp_path / "real").decisions(), RunDir(tmp_path / "perturbed").decisions()
    a = [r for r in real if r["week"] is None or r["week"] <= week]
    b = [r for r in fake if r["week"] is None or r["week"] <= week]
    assert len(a) == len(b) > 150
    assert {"set_lineup", "propose_trade"} <= {r["decision"] for r in a}
    for ra, rb in zip(a, b):
        assert canonical_json(ra["view"]) == canonical_json(rb["view"]), (ra["decision"], ra["week"], ra["team"])
        assert ra["raw_answer"] == rb["raw_answer"]
    later = [(x, y) for x, y in zip(real, fake) if x["week"] is not None and x["week"] > week]
    assert later and any(canonical_json(x["view"]) != canonical_json(y["view"]) for x, y in later)


def test_a_killed_season_resumes_byte_identically(prepared_fpl, tmp_path):
    """Killed in the draft (after round 7) and after gameweek 3, each time resumed by a new engine: the files equal an
    uninterrupted season's, byte for byte."""
    league = preset(weeks=5)
    run_engine(league, prepared_fpl, tmp_path / "whole")
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_fpl, tmp_path / "run", crash_after="draft:7")
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_fpl, tmp_path / "run", resume=True, crash_after="week:3")
    run_engine(league, prepared_fpl, tmp_path / "run", resume=True)
    resumes = same_run(tmp_path / "whole", tmp_path / "run")
    assert [r["from_phase"] for r in resumes] == ["draft:7", "week:3"]


def test_the_prepared_season_knows_only_what_a_manager_may(prepared_fpl):
    """Gameweek 1's market is the ADP; projections come from earlier seasons and the fixture list (a blank
    gameweek projects 0, a double more); no end-of-season snapshot and no injury report."""
    p = prepared_fpl
    assert p.manifest["points_parity"]["rows"] == p.manifest["points_parity"]["matching"] == 27283
    assert p.manifest["unavailable"] == ["injury_report"] and p.injuries.empty and p.byes.empty
    pool = p.players[p.players["in_draft_pool"]]
    assert pool["adp"].notna().all() and pool["adp"].min() == 1 and pool["adp"].is_unique
    assert p.players.loc[~p.players["in_draft_pool"], "adp"].isna().all()
    # each gameweek's market is that gameweek's file's (published before its deadline)
    rows = p.weekly.set_index(["week", "player_id"])[["value", "selected"]]
    market = p.weekly_projections.dropna(subset=["value"]).set_index(["week", "player_id"])[["value", "selected"]]
    both = market.index.intersection(rows.index)
    assert len(both) > 10000 and market.loc[both].equals(rows.loc[both])
    fixtures = fpl.fixtures_per_club(p.schedule)
    clubs = p.weekly.groupby("player_id")["team"].nunique()
    stayed = p.players[p.players["player_id"].map(clubs).eq(1)]  # one club all season (no transfer)
    wp = p.weekly_projections.merge(stayed[["player_id", "team"]], on="player_id")
    blank = [(w, c) for w in range(1, 39) for c in set(p.players["team"].dropna()) if c not in fixtures.get(w, {})]
    assert blank  # 2024-25 has blank gameweeks (FA Cup clashes)
    for w, club in blank:
        rows = wp[(wp["week"] == w) & (wp["team"] == club)]
        assert len(rows) and (rows["proj_points_builtin"] == 0).all(), (w, club)
    double = [(w, c) for w, n in fixtures.items() for c, k in n.items() if k == 2]
    assert double
    (w, club), = double[:1]
    rows = wp[(wp["week"] == w) & (wp["team"] == club)].set_index("player_id")["proj_points_builtin"]
    rate = wp[(wp["week"] == w - 1) & wp["player_id"].isin(rows.index)].set_index("player_id")["proj_points_builtin"]
    assert (rows > 0).any() and (rows >= rate.reindex(rows.index).fillna(0) - 1e-9).mean() > 0.5


def test_the_analysis_reads_an_fpl_run(season):
    """Metrics, a figure and the report's words on the season: positions GK/DEF/MID/FWD and FLEX, 38 gameweeks,
    the season named 2024-25, the hindsight lineup within the formation, no bot marked as engine-played."""
    import matplotlib

    matplotlib.use("Agg")
    from ffbench_lib.analysis import metrics
    from ffbench_lib.present import plots, report

    _, run = season
    runs = metrics.load_runs(run.path)
    slots = metrics.points_by_slot(runs)
    assert list(slots.columns[3:]) == ["GK", "DEF", "MID", "FWD", "FLEX"]
    assert metrics.describe_sample(runs) == "1 run (a seed of the 2024-25 season)"
    assert report.competition(runs["meta"]) == "Premier League"
    sit = metrics.start_sit(runs)
    assert len(sit) == 380 and (sit["optimal_points"] >= sit["started_points"] - 1e-9).all()
    info = metrics.agent_info(runs)
    assert not plots.flagged_agents(info)  # every bot decision is its own (a bench order included)
    fig = plots.points_by_position(slots, info, plots.runs_palette(runs))
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["GK", "DEF", "MID", "FWD", "FLEX"]


def test_the_cli_validates_and_prepares_an_fpl_league(fpl_data_dir, tmp_path, capsys):
    """``ffbench validate`` and ``ffbench data prepare --config`` name the season as the data does and take an
    FPL league's own reader; a season the config does not play is refused with the fix, no traceback."""
    from ffbench_lib.cli import main

    assert main(["validate", str(PRESET)]) == 0
    assert "season 2024-25, 38 weeks, roster of 15" in capsys.readouterr().out
    out = tmp_path / "prepared"
    assert main(["data", "prepare", "--config", str(PRESET), "--season", "2024-25", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "27,283 of 27,283 player-fixture rows match" in said and "AM rows (not players) left out: 322" in said
    assert (out / "manifest.json").exists() and (out / "weekly.parquet").exists()
    assert main(["data", "prepare", "--config", str(PRESET), "--season", "2023", "--out", str(out)]) == 2
    assert "--season 2023-24: " in capsys.readouterr().err


def test_a_postponed_match_is_no_blank_known_in_advance(prepared_fpl):
    """2024-25's Everton v Liverpool (gameweek 15) was postponed on the day, by a storm, and played in gameweek 24:
    gameweek 15's fixture list still shows it (unplayed, no score), so no view knows the postponement before it
    happened; gameweek 24 shows Everton's two matches. A match only ever in its final gameweek is listed once."""
    from ffbench_lib.game.views import Firewall

    s = prepared_fpl.schedule
    eve = s[(s["home_team"] == "EVE") | (s["away_team"] == "EVE")]
    gw15 = eve[eve["week"] == 15]
    assert len(gw15) == 1 and not gw15["played"].iloc[0] and gw15["home_score"].isna().all()
    assert len(eve[eve["week"] == 24]) == 2 and eve[eve["week"] == 24]["played"].all()
    assert s["played"].sum() == 380 and s.loc[s["played"], "game_id"].is_unique
    fw = Firewall(prepared_fpl, preset())
    everton = prepared_fpl.players.loc[prepared_fpl.players["in_draft_pool"] & (prepared_fpl.players["team"] == "EVE"),
                                       "player_id"].iloc[0]
    card = fw.player_week(everton, 15)
    assert card["opp"] == "LIV" and card["zero_flags"] == [] and card["proj_week"] > 0
    assert "+" in fw.player_week(everton, 24)["opp"]


def test_the_games_to_date_count_appearances(prepared_fpl):
    """A gameweek file lists a club's whole squad: a 0-minute listing is no game, so std_g counts the gameweeks a
    player played, as prev_g does."""
    from ffbench_lib.game.views import Firewall

    w = prepared_fpl.weekly
    early = w[w["week"] < 10]
    played = early[early["minutes"] > 0].groupby("player_id")["week"].nunique()
    listed = early.groupby("player_id")["week"].nunique()
    never = sorted(set(listed.index) - set(played.index))
    assert never  # squad players listed without a minute
    k = Firewall(prepared_fpl, preset()).week(10)
    assert all(k.games[p] == 0 for p in never) and all(k.games[p] == n for p, n in played.items())


def test_a_missing_gameweek_file_is_an_error_not_a_scoreless_week(fpl_data_dir, tmp_path):
    """A season whose gameweek 17 file is missing (its matches played, later files there) would score every player
    0 that week: preparing it is a DataError naming the gameweek and the file."""
    from ffbench_lib.data.errors import DataError

    root = tmp_path / "fpl"
    for season in ("2022-23", "2023-24"):
        (root / season).mkdir(parents=True)
        for f in (fpl_data_dir / season).iterdir():
            (root / season / f.name).symlink_to(f)
    cut = root / "2024-25"
    (cut / "gws").mkdir(parents=True)
    for f in (fpl_data_dir / "2024-25").iterdir():
        if f.name != "gws":
            (cut / f.name).symlink_to(f)
    for f in (fpl_data_dir / "2024-25" / "gws").iterdir():
        if f.name != "gw17.csv":
            (cut / "gws" / f.name).symlink_to(f)
    with pytest.raises(DataError, match=r"gameweek 17 has no rows for .* \(gws/gw17.csv is missing or incomplete\)"):
        fpl.prepare_season(2024, tmp_path, 38)
    (cut / "gws" / "gw38.csv").unlink()  # the season under way: gameweek 17 was the last one played
    for gw in range(18, 38):
        (cut / "gws" / f"gw{gw}.csv").unlink()
    assert fpl.played_through(fpl.player_gameweeks(cut, fpl.season_rules(2024)), fpl.fixtures(cut), "2024-25") == 16


@pytest.mark.slow
def test_the_analysis_notebooks_run_on_an_fpl_run(season, tmp_path):
    """The positions and start/sit notebooks, executed as a batch executes them, on the 38-gameweek season."""
    from ffbench_lib.runs.notebooks import execute

    _, run = season
    for name in ("04_positions", "06_start_sit"):
        nb = execute(f"{name}.ipynb", tmp_path / f"{name}.ipynb", {"runs": str(run.path), "out": str(tmp_path)},
                     timeout_s=600)
        cells = json.loads(nb.read_text())["cells"]
        assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"], name
    assert (tmp_path / "points_by_position.png").stat().st_size > 10_000
    slots = pd.read_csv(tmp_path / "points_by_slot.csv")
    assert {"GK", "DEF", "MID", "FWD", "FLEX"} <= set(slots.columns)


def test_the_season_under_way_plays_its_gameweeks_then_waits_live(fpl_data_dir, tmp_path, capsys):
    """2025-26 has results through gameweek 29: ``ffbench live`` plays those, decides the 30th and waits for its
    results (exit 0); ``ffbench run`` of all 38 is refused, naming ``weeks: 29`` and ``ffbench live``."""
    import yaml

    from ffbench_lib.cli import main

    d = yaml.safe_load(PRESET.read_text())
    d.update(season="2025-26", name="fpl-live", trades={"weeks": [10], "max_players_per_side": 2})
    cfg = tmp_path / "live.yaml"
    cfg.write_text(yaml.safe_dump(d, sort_keys=False))
    assert main(["run", str(cfg), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "season 2025-26 has results through week 29 only" in err and "ffbench live" in err
    assert main(["live", str(cfg), "--out", str(tmp_path / "live"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "week 30 of 2025-26 is decided" in out and "fpl/2025-26" in out
    meta = json.loads((tmp_path / "live" / "run.json").read_text())
    assert (meta["status"], meta["phase"], meta["live"]["played_weeks"]) == ("waiting_for_week", "decided:30", 29)
    lineups = pd.read_parquet(tmp_path / "live" / "lineups.parquet")
    assert sorted(lineups["week"].unique()) == list(range(1, 30))
