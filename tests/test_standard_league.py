"""The full league of issue 12, end to end on real 2024 data: ``params/standard_10.yaml`` (K, DST, IR, FAAB waivers, a
4-team playoff) played by bots and by LLM teams through litellm against the local fake server, and the information
rule for kicker and defense views."""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from ffbench_lib.analysis import metrics
from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.game.views import canonical_json

from conftest import built_once
from engine_helpers import REPO, run_engine
from test_firewall import decisions, perturb

STANDARD = REPO / "params" / "standard_10.yaml"


@pytest.fixture(scope="module")
def standard(data_dir):
    """The league and its prepared season, from this test run's shared cache (prepared once, whichever xdist
    worker asks first; test_masking's LLM league reads the same one)."""
    league = load_config(STANDARD, data={"dir": str(data_dir)})
    prepared = prepared_for(league, cache_root=os.environ["FFBENCH_CACHE_DIR"])
    return league, prepared


@pytest.fixture(scope="module")
def bot_season(standard, tmp_path_factory):
    """The whole standard_10 season of bots, played once per test run (both xdist workers read the same one):
    read it, never write into it."""
    league, prepared = standard
    out = built_once(tmp_path_factory, "standard10-bot-season", lambda folder: run_engine(
        league, prepared, folder / "run")) / "run"
    return league, metrics.load_runs([out]), out


def test_the_prepared_season_has_kickers_and_defenses(standard):
    league, prepared = standard
    players = prepared.players.set_index("player_id")
    assert {"K", "DST"} <= set(players.loc[players["in_draft_pool"], "position"])
    dst = players[players["position"] == "DST"]
    assert len(dst) == 32 and all(pid == f"DST:{team}" for pid, team in zip(dst.index, dst["team"]))
    # everyone has a built-in preseason projection from 2023 (kickers and defenses included)
    pool = players[players["in_draft_pool"] & players["position"].isin(["K", "DST"])]
    assert (pool["proj_points_builtin"] > 0).mean() > 0.9


def test_every_slot_is_filled_legally_every_week(bot_season):
    league, runs, _ = bot_season
    lineups, rosters = runs["lineups"], runs["rosters"]
    slots = league.roster.slot_counts()
    held = rosters.groupby(["week", "team"])["player_id"].agg(set)
    for (week, team), g in lineups.groupby(["week", "team"]):
        assert g["slot"].value_counts().to_dict() == slots, (week, team)
        assert g["player_id"].notna().all(), (week, team)  # nobody left a slot empty, K and DST included
        assert all(league.roster.eligible(s, p) for s, p in zip(g["slot"], g["position"])), (week, team)
        assert set(g["player_id"]) <= held[(week, team)], (week, team)  # active players of its own roster
    assert lineups["week"].nunique() == league.weeks
    assert set(lineups.loc[lineups["slot"] == "DST", "player_id"].str.slice(0, 4)) == {"DST:"}
    # a kicker's and a defense's points are their real ones (scored under the league's rules)
    assert lineups.loc[lineups["slot"] == "K", "points"].sum() > 0
    assert lineups.loc[lineups["slot"] == "DST", "points"].min() < 0 < lineups.loc[lineups["slot"] == "DST", "points"].max()


def test_the_playoffs_crown_one_champion(bot_season):
    league, runs, _ = bot_season
    final = metrics.final_standings(runs)
    assert final["champion"].sum() == 1
    champ = final[final["champion"]].iloc[0]
    assert 1 <= champ["playoff_seed"] <= league.playoffs.teams
    assert runs["standings"]["week"].max() == league.regular_weeks  # standings are the regular season's
    po = runs["playoffs"]
    assert sorted(po["week"].unique()) == [15, 16, 17]
    won = po[(po["team"] == champ["team"]) & po["result"].isin(["W", "L"])]
    assert len(won) == 2 and (won["result"] == "W").all()


def test_ir_and_waivers_work_together(bot_season):
    _, runs, _ = bot_season
    ir = runs["ir_moves"]
    assert (ir["move"] == "to_ir").sum() > 0
    tx = runs["transactions"]
    assert (tx["kind"].isin(["waiver", "free_agent"]) & tx["drop"].isna()).sum() > 0  # a freed spot was used


def test_kicker_and_defense_views_before_week_w_are_byte_identical(standard, bot_season, tmp_path):
    """The real season is the shared bot season (same league, data and seed); the perturbed one is played
    through week w + 1 only, the first week whose views may (and must) differ."""
    from ffbench_lib.runs.runner import SimulatedCrash

    league, prepared = standard
    week = 4  # IR moves from week 1, waivers from week 2, the first trade window in week 4: all compared
    fake = perturb(prepared, week)
    assert not fake.weekly[fake.weekly["position"] == "DST"].equals(prepared.weekly[prepared.weekly["position"] == "DST"])
    with pytest.raises(SimulatedCrash):
        run_engine(league, fake, tmp_path / "perturbed", crash_after=f"week:{week + 1}")
    real, pert = decisions(bot_season[2]), decisions(tmp_path / "perturbed")
    a = [r for r in real if r["week"] is None or r["week"] <= week]
    b = [r for r in pert if r["week"] is None or r["week"] <= week]
    assert len(a) == len(b)
    shown = {c["pos"] for r in a if r["decision"] == "set_lineup" for c in r["view"]["players"]}
    assert {"K", "DST"} <= shown  # the views compared hold kicker and defense cards
    assert {"ir_moves", "waiver_claims", "propose_trade"} <= {r["decision"] for r in a}
    for ra, rb in zip(a, b):
        assert canonical_json(ra["view"]) == canonical_json(rb["view"]), (ra["decision"], ra["week"], ra["team"])
        assert ra["raw_answer"] == rb["raw_answer"]
    later = [(x, y) for x, y in zip(real, pert) if x["week"] is not None and x["week"] > week]
    assert later and {x["week"] for x, _ in later} == {week + 1}
    assert any(canonical_json(x["view"]) != canonical_json(y["view"]) for x, y in later)


LLM_SEATS = (0, 5)


def test_llm_teams_play_kickers_defenses_ir_and_playoffs(standard, tmp_path):
    """Two LLM teams through litellm against the local fake server (some answers illegal on purpose): they
    draft and start kickers and defenses, make IR moves and play the playoffs (two regular weeks, a trade
    window, two one-week rounds)."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    league, prepared = standard
    with FakeOpenAIServer(fault_rate=0.1, faults=("illegal",), seed=7) as srv:
        d = league.model_dump(mode="json")
        d.update(weeks=4, trades={"weeks": [2], "max_players_per_side": 2},
                 playoffs={"enabled": True, "teams": 4, "round_weeks": [1, 1]},
                 llm={"cache_dir": str(tmp_path / "cache"), "max_fallback_rate": None})
        for i in LLM_SEATS:
            d["teams"][i] = {"name": f"LLM-{i}", "agent": {"kind": "llm", "model": f"openai/fake-{i}",
                                                           "api_base": srv.api_base, "timeout_s": 30}}
        lg = League.model_validate(d)
        run_engine(lg, prepared, tmp_path / "run")
    runs = metrics.load_runs([tmp_path / "run"])
    llm = {f"LLM-{i}" for i in LLM_SEATS}
    picks = runs["draft_picks"]
    mine = picks[picks["team"].isin(llm)]
    assert mine["team"].nunique() == len(llm)
    assert set(mine.groupby("team")["position"].agg(lambda p: {"K", "DST"} <= set(p))) == {True}
    lu = runs["lineups"]
    kd = lu[lu["team"].isin(llm) & lu["slot"].isin(["K", "DST"])]
    assert kd["player_id"].notna().all() and (kd["decided_by"] == "agent").mean() > 0.8
    dec = runs["decisions"]
    ir = dec[(dec["decision"] == "ir_moves") & dec["team"].isin(llm)]
    assert len(ir) > 0 and (ir["decided_by"] == "agent").any()
    assert runs["playoffs"]["week"].min() == 3 and metrics.final_standings(runs)["champion"].sum() == 1
    calls = [json.loads(line) for line in (tmp_path / "run" / "llm_calls.jsonl").open()]
    assert any("DST" in m["content"] and "points allowed" in m["content"] for c in calls for m in c["messages"])


def test_points_held_on_ir_count_and_ir_drops_are_no_pickups(bot_season):
    _, runs, _ = bot_season
    ir = runs["ir_players"]
    assert len(ir) > 0
    held = metrics.player_week_points(runs).set_index(["week", "team", "player_id"])["points"]
    assert all(held[(w, t, p)] == pts for w, t, p, pts in ir[["week", "team", "player_id", "points"]].itertuples(index=False))
    returns = runs["transactions"][runs["transactions"]["kind"] == "ir_return"]
    assert len(returns) > 0 and returns["add"].isna().all()
    assert set(metrics.waiver_pickups(runs)["kind"]) <= {"waiver", "free_agent"}


@pytest.mark.parametrize("scoring, message", [
    ("ffbench_v1", "scoring: no rule scores a K stat, so every K would score 0"),
    ({"preset": "ffbench_v1", "weights": {"pat_made": 1.0}}, "scoring: no rule scores a DST stat"),
])
def test_a_position_that_cannot_score_is_refused(scoring, message):
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.config.load import parse_config

    d = load_config(STANDARD).model_dump(mode="json")
    d["scoring"] = scoring
    with pytest.raises(ConfigError) as e:
        parse_config(d)
    assert any(p.startswith(message) for p in e.value.problems), e.value.problems


@pytest.mark.slow
def test_position_notebook_shows_kickers_and_defenses(standard, bot_season, tmp_path):
    """The analysis notebook of points by position, on the standard league: K and DST are columns of its table and
    bars of its figure, next to the skill positions and FLEX. A team's K points are its started kickers' real
    ones: more than zero for every team that started a kicker in a week he played; zero for a team whose started
    kickers never played (the draft pool holds last season's players, so a kicker who retired can be drafted)."""
    from ffbench_lib.runs.notebooks import execute

    _, prepared = standard
    _, runs, out = bot_season
    nb = execute("04_positions.ipynb", tmp_path / "04.ipynb", {"runs": [str(out)], "out": str(tmp_path / "a")},
                 timeout_s=600)
    cells = json.loads(nb.read_text())["cells"]
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    slots = pd.read_csv(tmp_path / "a" / "points_by_slot.csv")
    assert {"QB", "RB", "WR", "TE", "K", "DST", "FLEX"} <= set(slots.columns)
    assert slots["DST"].notna().all() and slots["K"].notna().all()
    w = prepared.weekly
    played = set(zip(w.loc[w["position"] == "K", "week"], w.loc[w["position"] == "K", "player_id"]))
    k = runs["lineups"][runs["lineups"]["slot"] == "K"]
    kicked = set(k.loc[[(wk, p) in played for wk, p in zip(k["week"], k["player_id"])], "team"])
    by_team = slots.set_index("team")["K"]
    assert len(kicked) > len(by_team) / 2, sorted(set(by_team.index) - kicked)  # not a vacuous check
    assert (by_team[sorted(kicked)] > 0).all(), by_team
    assert (by_team.drop(sorted(kicked)) == 0).all(), by_team
    assert by_team.to_dict() == pytest.approx(k.groupby("team")["points"].sum().round(2).to_dict())
    assert (tmp_path / "a" / "points_by_position.png").stat().st_size > 10_000
    from ffbench_lib.present import plots

    fig = plots.points_by_position(slots)  # the figure the notebook saved: one stacked bar part per slot
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["QB", "RB", "WR", "TE", "K", "DST", "FLEX"]


def test_slots_a_league_lacks_are_missing_not_zero_when_runs_are_pooled(bot_season, prepared_2024, tmp_path):
    from engine_helpers import demo_league

    _, _, out = bot_season
    run_engine(demo_league(weeks=2), prepared_2024, tmp_path / "plain")
    slots = metrics.points_by_slot(metrics.load_runs([out, tmp_path / "plain"]))
    assert list(slots.columns) == ["run_id", "team", "agent", "QB", "RB", "WR", "TE", "K", "DST", "FLEX"]
    plain = slots[slots["run_id"].str.contains("plain")]
    assert plain["K"].isna().all() and plain["DST"].isna().all() and plain["QB"].notna().all()
    std = slots[~slots["run_id"].str.contains("plain")]
    assert std["K"].notna().all() and (std["K"] == std["K"].round(2)).all()
    from ffbench_lib.present import plots

    fig = plots.points_by_position(slots)  # stacked bars: an agent's missing slot adds nothing, hides nothing
    assert all(abs(b.get_height()) < 1e6 for b in fig.axes[0].patches) and len(fig.axes[0].patches) > 0


def test_replay_widget_names_ir_moves(bot_season):
    from ffbench_lib.present.widgets import StandingsReplay

    _, runs, out = bot_season
    ir = runs["ir_moves"]
    week = int(ir.loc[ir["move"] == "from_ir", "week"].iloc[0])
    w = StandingsReplay(out)
    w.slider.value = week
    moves = w.frames(week)["waivers"]
    mine = ir[ir["week"] == week]
    assert set(mine["player_name"]) <= set(moves["player"])
    assert ">NaN<" not in w.waivers.value and ">None<" not in w.waivers.value
    assert {"to IR", "back from IR"} & set(moves["kind"])


@pytest.mark.parametrize("through", [15, 16])
def test_an_unfinished_bracket_crowns_nobody(bot_season, through):
    """A run stopped in the playoffs (its tables are written on a stop) has no champion yet, whatever rounds its
    playoffs table happens to hold."""
    _, runs, _ = bot_season
    cut = {**runs, "playoffs": runs["playoffs"][runs["playoffs"]["week"] <= through]}
    assert metrics.final_standings(cut).empty and metrics.champions(cut).empty
    assert metrics.final_standings(runs)["champion"].sum() == 1


def test_lineup_prompts_say_where_a_team_stands_in_the_playoffs(bot_season):
    from ffbench_lib.agents.prompts import messages

    league, runs, out = bot_season
    views = {(r["week"], r["team"]): r["view"] for r in decisions(out) if r["decision"] == "set_lineup"}
    final = runs["playoffs"][runs["playoffs"]["week"] == 17]
    a, b = final["team"]
    text = messages("set_lineup", views[(17, a)])[1]["content"]
    pa = runs["playoffs"]
    so_far = pa[(pa["week"] == 16) & (pa["team"] == a)].iloc[0]
    assert "PLAYOFFS, the final: win or go home. This round adds the points of 2 weeks; this is week 2." in text
    assert f"Round points so far: you {so_far['points_for']:.2f}, opponent {so_far['points_against']:.2f}." in text
    out_team = sorted(set(league.teams[i].name for i in range(10)) - set(pa["team"]))[0]
    assert "PLAYOFFS, round 1 of 2: you are not in the bracket" in messages("set_lineup", views[(15, out_team)])[1]["content"]
    system = messages("set_lineup", views[(15, a)])[0]["content"]
    assert "After week 14 the top 4 teams by record (then points for) play a knockout bracket" in system
    assert "Injured reserve: 1 IR slot(s)" in system and "35+: -4" in system
    regular = messages("set_lineup", views[(14, a)])[1]["content"]
    assert "PLAYOFFS" not in regular


def test_a_prepared_season_made_for_another_league_is_refused(standard, prepared_2024, tmp_path):
    """Playing the standard league on a season prepared without kickers and defenses (or under other scoring)
    would crash in the draft or score wrongly: the engine refuses it at once, naming the difference."""
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.runs.runner import Engine

    league, _ = standard
    with pytest.raises(ConfigError, match=r"no K/DST players .*; other scoring rules than the league's"):
        Engine(league, prepared_2024, tmp_path / "a", progress=False)
    from engine_helpers import demo_league

    half = demo_league().model_copy(update={"scoring": league.scoring})  # half-PPR on a PPR-prepared season
    with pytest.raises(ConfigError, match="other scoring rules than the league's"):
        Engine(half, prepared_2024, tmp_path / "b", progress=False)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_ir_asks_only_teams_with_a_decision_to_make(bot_season):
    _, _, out = bot_season
    asks = [r for r in decisions(out) if r["decision"] == "ir_moves"]
    assert asks
    for r in asks:
        v = r["view"]
        assert any(c["injury"] == "Out" for c in v["my_roster"]) or any(c["injury"] != "Out" for c in v["ir"])


def test_a_large_league_leaves_every_team_a_defense(standard, tmp_path):
    """24 teams and 32 team defenses with a cap of 2: teams that already start a defense may not take one the
    others' starting slots still need, so the draft ends with every team holding one (it crashed before)."""
    league, prepared = standard
    d = league.model_dump(mode="json")
    strategies = ["vorp", "adp", "recent_form", "random"]
    d.update(weeks=2, trades={"weeks": [2]}, playoffs={"enabled": False},
             teams=[{"name": f"T{i}", "agent": {"kind": "bot", "strategy": strategies[i % 4]}} for i in range(24)])
    run_engine(League.model_validate(d), prepared, tmp_path / "run")
    picks = pd.read_parquet(tmp_path / "run" / "draft_picks.parquet")
    per_team = picks[picks["position"] == "DST"].groupby("team").size()
    assert len(per_team) == 24 and per_team.sum() <= 32 and (picks["decided_by"] == "agent").all()


def test_supply_limits_the_legal_positions():
    from ffbench_lib.game.rules.draft import legal_positions

    roster = load_config(STANDARD).roster
    mine = ["QB", "RB", "RB", "WR", "WR", "TE", "K", "DST"]
    assert "DST" in legal_positions(mine, roster)  # no supply given: the roster rules alone
    assert "DST" in legal_positions(mine, roster, {"DST": 6}, {"DST": 5})  # one to spare
    assert "DST" not in legal_positions(mine, roster, {"DST": 5}, {"DST": 5})  # the others need all five
    assert "DST" in legal_positions(mine[:-1], roster, {"DST": 5}, {"DST": 5})  # its own starter: always
    assert "K" not in legal_positions(mine[:-2], roster, {"K": 0}, {})  # none left


def test_more_starting_defenses_than_nfl_teams_is_refused():
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.config.load import parse_config

    d = load_config(STANDARD).model_dump(mode="json")
    d["teams"] = [{"name": f"T{i}", "agent": {"kind": "bot", "strategy": "adp"}} for i in range(34)]
    with pytest.raises(ConfigError) as e:
        parse_config(d)
    assert "roster.DST: 34 teams × 1 starting DST need 34, but there are only 32" in str(e.value)


@pytest.mark.parametrize("patch, message", [
    ({"trades": {"weeks": [4, 15]}}, "trades.weeks: week 15 is in the playoffs (the regular season ends in week 14)"),
    ({"waivers": {"enabled": False}}, "roster.IR: an IR move frees a roster spot that only waivers"),
    ({"scoring": {"preset": "half_ppr", "weights": {"points_allowed": -0.1},
                  "tiers": {"points_allowed": [[0, 10], [None, 0]]}}}, "scoring: points_allowed has both a weight and tiers"),
    ({"roster": {"K": 0}}, "roster.K: 0 starting slots and no flex slot takes K, so a K could never start"),
])
def test_league_rules_that_would_mislead_are_refused(patch, message):
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.config.load import parse_config

    d = load_config(STANDARD).model_dump(mode="json")
    for key, value in patch.items():
        d[key] = {**d[key], **value} if isinstance(d.get(key), dict) and key != "scoring" else value
    with pytest.raises(ConfigError) as e:
        parse_config(d)
    assert any(p.startswith(message) for p in e.value.problems), e.value.problems


def test_superflex_without_flex_needs_no_flex_positions():
    from ffbench_lib.config.load import parse_config

    d = load_config(STANDARD).model_dump(mode="json")
    d["roster"] = {**d["roster"], "FLEX": 0, "SUPERFLEX": 2, "superflex_positions": ["QB"], "QB": 0}
    assert parse_config(d).roster.flex_slots() == {"SUPERFLEX": ("QB",)}
