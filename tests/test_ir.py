"""Injured reserve (``roster.IR``): the ``ir_moves`` legality on real views, a bot season whose IR moves free
spots that drop-less waiver claims fill, lineups from active players only, resume, edited checkpoints, LLM
teams against the local server, and leagues without IR unchanged."""
from __future__ import annotations

import asyncio
import copy
import json
import re

import pandas as pd
import pytest

from ffbench_lib.agents import bots
from ffbench_lib.agents.prompts import messages
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import Waivers
from ffbench_lib.config.load import parse_config
from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.decisions import waiver_claims
from ffbench_lib.game.decisions.ir_moves import has_legal_move, legal_moves
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.game.rules import draft as draft_rules
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.game.rules.schedule import make_schedule
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall

from engine_helpers import demo_league, run_engine, same_run

IR = REGISTRY["ir_moves"]
NONE = {"to_ir": [], "from_ir": []}


def ir_league(ir=1, weeks=17, seed=2, waivers=True, **update):
    lg = demo_league(seed=seed, weeks=weeks, **update)
    return lg.model_copy(update={"roster": lg.roster.model_copy(update={"IR": ir}),
                                 "waivers": Waivers(enabled=waivers, mode="faab"),
                                 "trades": lg.trades.model_copy(update={"weeks": [w for w in lg.trades.weeks
                                                                                  if w <= weeks]})})


def table(run, name):
    return pd.read_parquet(run / f"{name}.parquet")


def decisions(run):
    return [json.loads(x) for x in open(run / "decisions.jsonl")]


# ------------------------------------------------------------------------------------------- legality on real views
class World:
    """A demo league with one IR slot on the real 2024 season, drafted by preseason projection, and a week in
    which one of its teams holds a player ruled Out with a backup at his position."""

    def __init__(self, prepared):
        self.league = ir_league(ir=1)
        self.fw = Firewall(prepared, self.league)
        teams = [t.name for t in self.league.teams]
        self.state = LeagueState(teams=teams, agent_ids={t: "test" for t in teams}, draft_order=teams,
                                 schedule=make_schedule(teams, self.league.weeks, "random", 1),
                                 extras={"ir": {t: [] for t in teams}})
        for _, _, team in draft_rules.snake(teams, self.league.roster.size):
            legal = draft_rules.legal_positions([self.pos(p) for p in self.state.rosters[team]], self.league.roster)
            self.state.rosters[team].append(next(p for p in self.fw.available_ids(self.state) if self.pos(p) in legal))
        self.week, self.team, self.out = next(self._injured())

    def pos(self, pid):
        return self.fw.position[pid]

    def _injured(self):
        for w in range(2, self.league.weeks + 1):
            status = self.fw.week(w).status
            for team, ids in self.state.rosters.items():
                for p in ids:
                    backups = [q for q in ids if q != p and self.pos(q) == self.pos(p)]
                    if status.get(p) == "Out" and backups:
                        yield w, team, p

    def view(self, state=None, team=None):
        return IR.view(self.fw, state or self.state, team or self.team, week=self.week)

    def with_ir(self, *players):
        state = copy.deepcopy(self.state)
        state.extras["ir"][self.team] = list(players)
        return state


@pytest.fixture(scope="module")
def world(prepared_2024):
    return World(prepared_2024)


def test_a_player_ruled_out_may_go_to_ir_and_nobody_else(world):
    view = world.view()
    assert view["ir_slots"] == 1 and view["ir"] == [] and len(view["my_roster"]) == view["active_spots"]
    out = IR.resolve({"to_ir": [world.out], "from_ir": []}, view)
    assert (out.decided_by, out.problems, out.applied) == ("agent", [], {"to_ir": [world.out], "from_ir": []})
    healthy = next(c for c in view["my_roster"] if c["injury"] is None)["id"]
    out = IR.resolve({"to_ir": [healthy], "from_ir": []}, view)
    assert out.decided_by == "fallback" and out.applied == NONE
    assert out.problems == [f"to_ir 1: {healthy} is not listed Out on this week's injury report (status None)"]
    other = next(p for t in world.state.teams if t != world.team for p in world.state.rosters[t])
    out = IR.resolve({"to_ir": [other, world.out], "from_ir": []}, view)  # the legal move is kept
    assert out.applied == {"to_ir": [world.out], "from_ir": []} and out.decided_by == "fallback"
    assert out.problems == [f"to_ir 1: {other!r} is not one of your active players"]
    assert {"to_ir": [world.out], "from_ir": []} in legal_moves(view) and has_legal_move(view)
    assert all(m["from_ir"] == [] for m in legal_moves(view))  # nothing on IR: nothing to bring back
    for answer in (None, "to_ir", {"moves": []}, [world.out]):
        out = IR.resolve(answer, view)
        assert (out.applied, out.decided_by) == (NONE, "fallback"), answer


def spare_healthy(world):
    """A healthy player of the injured player's team whose absence, with the injured player's, still leaves a
    lineup (so he may sit on IR in these cases)."""
    cards = world.view()["my_roster"]
    return next(c for c in cards if c["injury"] is None and c["id"] != world.out and can_field_lineup(
        [d["pos"] for d in cards if d["id"] not in (c["id"], world.out)], world.league.roster))


def test_ir_needs_a_free_slot_and_a_return_needs_a_legal_roster(world):
    healthy = spare_healthy(world)
    full = world.with_ir(healthy["id"])  # the slot is taken (by a player no longer Out: he may stay)
    view = world.view(full)
    assert [c["id"] for c in view["ir"]] == [healthy["id"]] and len(view["my_roster"]) == view["active_spots"] - 1
    out = IR.resolve({"to_ir": [world.out], "from_ir": []}, view)
    assert out.problems == ["the moves together: 2 players on IR; the league has 1 IR slot(s)"] and out.applied == NONE
    # back into the open spot without a drop, or with one (a release); with the slot freed, another may go in
    assert IR.validate({"to_ir": [], "from_ir": [{"player": healthy["id"], "drop": None}]}, view) == []
    swap = {"to_ir": [world.out], "from_ir": [{"player": healthy["id"], "drop": None}]}
    assert IR.validate(swap, view) == []  # judged together: one leaves the slot, the other takes it
    # a full active roster: a return needs a drop
    state = world.with_ir(healthy["id"])
    spare = next(p for p in sorted(state.drafted()) if p not in state.rosters[world.team]
                 and world.pos(p) == healthy["pos"])
    state.rosters = {t: [p for p in ids if p != spare] for t, ids in state.rosters.items()}
    state.rosters[world.team].append(spare)
    view = world.view(state)
    assert len(view["my_roster"]) == view["active_spots"]
    back = {"player": healthy["id"], "drop": None}
    out = IR.resolve({"to_ir": [], "from_ir": [back]}, view)
    assert out.problems == [f"the moves together: {view['active_spots'] + 1} active players; at most "
                            f"{view['active_spots']}: name a player to drop for each player brought back to a full "
                            "roster"]
    assert IR.validate({"to_ir": [], "from_ir": [{**back, "drop": spare}]}, view) == []
    assert IR.validate({"to_ir": [], "from_ir": [{**back, "drop": "00-nobody"}]}, view) == [
        "from_ir 1: drop '00-nobody' is not one of your active players"]
    assert IR.validate({"to_ir": [], "from_ir": [{"player": world.out, "drop": spare}]}, view) == [
        f"from_ir 1: {world.out!r} is not on your IR"]
    moves = legal_moves(view)
    assert {"to_ir": [], "from_ir": [{**back, "drop": spare}]} in moves
    assert {"to_ir": [], "from_ir": [back]} not in moves


def test_a_positions_last_active_player_cannot_go_to_ir(world):
    """The active roster must still field a lineup: a team's only player of a starting position stays."""
    view = world.view()
    pos = world.pos(world.out)
    assert world.league.roster.starting(pos) >= 1
    view["my_roster"] = [c for c in view["my_roster"] if c["pos"] != pos or c["id"] == world.out]
    assert IR.validate({"to_ir": [world.out], "from_ir": []}, view) == [
        "the moves together: the active roster could not field a legal lineup afterwards"]
    assert {"to_ir": [world.out], "from_ir": []} not in legal_moves(view)


def test_a_claim_may_name_no_drop_only_into_an_open_spot(world):
    roster = world.league.roster
    mine = world.state.active(world.team)
    free = waiver_claims.pool(world.fw, world.state, world.week)
    add = next(p for p in free if world.pos(p) == world.pos(world.out))
    assert waiver_claims.swap_problem(mine, world.fw.position, free, add, None, roster) == "None is not on your roster"
    opened = [p for p in mine if p != world.out]  # after the player went to IR
    assert waiver_claims.swap_problem(opened, world.fw.position, free, add, None, roster) is None
    some = [add, *free[:40]]
    assert (add, None) in list(waiver_claims.legal_swaps(opened, world.fw.position, some, roster))
    assert not any(d is None for _, d in waiver_claims.legal_swaps(mine, world.fw.position, some, roster))


@pytest.mark.parametrize("strategy", list(bots.BOTS))
def test_every_bot_answers_ir_moves_legally(world, strategy):
    healthy = spare_healthy(world)
    views = [world.view(), world.view(world.with_ir(healthy["id"])), world.view(world.with_ir(world.out))]
    views += [world.view(team=t) for t in world.state.teams]
    for view in views:
        answer = asyncio.run(bots.make_bot(strategy, view["team"], 0).decide("ir_moves", view))
        IR.Answer.model_validate(answer)
        out = IR.resolve(answer, view)
        assert (out.decided_by, out.problems) == ("agent", []), (view["team"], answer)
    if strategy != "random":  # a player ruled Out goes to the free slot
        answer = asyncio.run(bots.make_bot(strategy, world.team, 0).decide("ir_moves", views[0]))
        outs = {c["id"] for c in views[0]["my_roster"] if c["injury"] == "Out"}
        assert len(answer["to_ir"]) == 1 and set(answer["to_ir"]) <= outs


def test_ir_prompt_shows_both_tables_and_the_schema(world):
    view = world.view(world.with_ir(world.out))
    user = messages("ir_moves", view, "v2")[1]["content"]
    assert "DECISION: ir_moves" in user and "INJURED RESERVE: 1 IR slot(s), 0 free" in user
    assert all(c["id"] in user for c in view["my_roster"] + view["ir"])
    assert '"to_ir"' in user and '"from_ir"' in user and user.index(world.out) > user.index("YOUR IR")
    lineup = REGISTRY["set_lineup"].view(world.fw, world.with_ir(world.out), world.team, week=world.week)
    assert [c["id"] for c in lineup["ir"]] == [world.out] and world.out not in {c["id"] for c in lineup["players"]}
    text = messages("set_lineup", lineup, "v2")[1]["content"]
    assert "ON INJURED RESERVE (cannot start)" in text and world.out in text


# --------------------------------------------------------------------------------------------------- a bot season
@pytest.fixture(scope="module")
def season(prepared_2024, tmp_path_factory):
    """A 17-week season of the demo bots with one IR slot and FAAB waivers."""
    lg = ir_league(ir=1)
    out = tmp_path_factory.mktemp("ir") / "run"
    run_engine(lg, prepared_2024, out)
    return lg, out


def test_a_bot_season_moves_players_to_ir_and_fills_the_spots(season):
    lg, run = season
    moves, tx = table(run, "ir_moves"), table(run, "transactions")
    assert (moves["move"] == "to_ir").sum() >= 10 and (moves["move"] == "from_ir").sum() >= 5
    assert (moves.loc[moves["move"] == "to_ir", "status"] == "Out").all()  # only players ruled Out go in
    assert (moves["decided_by"] == "agent").all() and set(moves["agent"]) > {"bot:random"}
    dropless = tx[tx["drop"].isna()]
    assert len(dropless) >= 3 and set(dropless["kind"]) <= {"waiver", "free_agent"}
    assert set(tx["kind"]) >= {"ir_return"} and tx.loc[tx["kind"] == "ir_return", "add"].isna().all()
    ir_decisions = [d for d in decisions(run) if d["decision"] == "ir_moves"]
    assert len({d["week"] for d in ir_decisions}) >= 3  # asked week after week, not once (which weeks: the data's)
    for d in ir_decisions:  # judged again on the logged view: what was applied, no repair
        out = IR.resolve(d["raw_answer"], d["view"])
        assert (out.decided_by, json.loads(json.dumps(out.applied))) == ("agent", d["applied"])


def test_lineups_start_active_players_only_and_rosters_stay_legal(season):
    lg, run = season
    roster = lg.roster
    lineups, rosters, on_ir = table(run, "lineups"), table(run, "rosters"), table(run, "ir_players")
    assert not on_ir.empty and on_ir.groupby(["week", "team"]).size().max() <= roster.IR
    ir_keys = set(zip(on_ir["week"], on_ir["team"], on_ir["player_id"]))
    assert not ir_keys & set(zip(lineups["week"], lineups["team"], lineups["player_id"]))
    assert not ir_keys & set(zip(rosters["week"], rosters["team"], rosters["player_id"]))
    assert lineups["player_id"].notna().all()  # every slot filled, every week
    for (week, team), g in rosters.groupby(["week", "team"]):  # the active roster as the week kicked off
        assert len(g) <= roster.size and within_caps(list(g["position"]), roster) is None, (week, team)
        assert can_field_lineup(list(g["position"]), roster), (week, team)
        started = set(lineups.loc[(lineups["week"] == week) & (lineups["team"] == team), "player_id"])
        assert started <= set(g["player_id"]), (week, team)
    held = pd.concat([rosters, on_ir])
    assert not held.duplicated(["week", "player_id"]).any()  # nobody on two teams, IR included
    assert (held.groupby(["week", "team"]).size() <= roster.held).all()
    cp = json.loads((run / "checkpoint.json").read_text())
    assert set(cp["extras"]) == {"ir", "waivers"}
    assert all(len(ids) <= roster.IR and set(ids) <= set(cp["rosters"][t]) for t, ids in cp["extras"]["ir"].items())


def test_ir_players_are_never_offered_in_trades(season):
    _, run = season
    ir_week = {(r.week, r.team): set() for r in table(run, "ir_players").itertuples()}
    for r in table(run, "ir_players").itertuples():
        ir_week[(r.week, r.team)].add(r.player_id)
    for d in decisions(run):
        if d["decision"] == "propose_trade":
            shown = {c["id"] for c in d["view"]["my_roster"]}
            assert not shown & ir_week.get((d["week"], d["team"]), set())


def test_ir_league_resumes_byte_identical(prepared_2024, tmp_path):
    lg = ir_league(ir=1, weeks=5)
    run_engine(lg, prepared_2024, tmp_path / "whole")
    assert not table(tmp_path / "whole", "ir_moves").empty
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp_path / "run", crash_after="week:3")
    run_engine(lg, prepared_2024, tmp_path / "run", resume=True)
    same_run(tmp_path / "whole", tmp_path / "run")


def _first(cp, move):
    return next(r for r in cp["tables"]["ir_moves"] if r["move"] == move)


@pytest.mark.parametrize("edit,message", [
    (lambda cp: cp["extras"]["ir"].update({cp["teams"][0]: cp["rosters"][cp["teams"][0]][:1]}),
     "saved IR lists are not what the recorded IR moves lead to"),
    (lambda cp: cp["extras"].pop("ir"), "players; at phase week:4 every team holds 12"),  # IR players count
    (lambda cp: cp["extras"].update({"ir": ["x"]}), "active players; at most 12"),
    (lambda cp: _first(cp, "to_ir").update({"move": "from_ir"}), "does not follow from the ones before"),
    (lambda cp: cp["tables"]["ir_moves"].remove(_first(cp, "to_ir")), "ir: "),
])
def test_a_checkpoint_with_edited_ir_is_refused(prepared_2024, tmp_path, edit, message):
    from ffbench_lib.runs.rundir import CheckpointError

    lg = ir_league(ir=1, weeks=5)
    with pytest.raises(SimulatedCrash):
        run_engine(lg, prepared_2024, tmp_path / "run", crash_after="week:4")
    path = tmp_path / "run" / "checkpoint.json"
    cp = json.loads(path.read_text())
    assert cp["tables"]["ir_moves"], "the first four weeks move nobody to IR: choose another seed"
    edit(cp)
    path.write_text(json.dumps(cp))
    with pytest.raises(CheckpointError, match=re.escape(message)):
        run_engine(lg, prepared_2024, tmp_path / "run", resume=True)


# --------------------------------------------------------------------------------------------- LLM teams, config
def test_llm_teams_make_ir_moves_through_litellm(prepared_2024, tmp_path):
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer
    from test_llm import llm_league

    with FakeOpenAIServer(fault_rate=0.5, faults=("illegal",), fault_decisions=("ir_moves",), seed=3) as srv:
        lg = llm_league(srv.api_base, tmp_path / "cache", n_llm=8, weeks=5)
        lg = lg.model_copy(update={"roster": lg.roster.model_copy(update={"IR": 2}),
                                   "waivers": Waivers(enabled=True, mode="faab")})
        run_engine(lg, prepared_2024, tmp_path / "run")
    recs = [r for r in decisions(tmp_path / "run") if r["decision"] == "ir_moves" and r["agent"].startswith("llm:")]
    assert recs and all(r["raw_answer"]["_llm"]["prompt_version"] == "v2" for r in recs)
    assert any(r["applied"]["to_ir"] and r["decided_by"] == "agent" for r in recs)
    moves, tx = table(tmp_path / "run", "ir_moves"), table(tmp_path / "run", "transactions")
    llm = moves["agent"].str.startswith("llm:")
    assert (moves.loc[llm, "move"] == "to_ir").sum() >= 2
    assert tx.loc[tx["agent"].str.startswith("llm:"), "drop"].isna().any()  # a freed spot filled, no drop
    calls = [json.loads(x) for x in open(tmp_path / "run" / "llm_calls.jsonl")]
    asked = [c for c in calls if c["decision"] == "ir_moves"]
    assert asked and all("YOUR IR" in c["messages"][1]["content"] for c in asked)
    reasked = [c for c in asked if c["reask"] > 0]  # an illegal answer is re-asked with its problems
    assert reasked and "Your previous answer was invalid: to_ir 1:" in reasked[0]["messages"][-1]["content"]
    waiver = [c["messages"][1]["content"] for c in calls if c["decision"] == "waiver_claims"]
    assert any("open roster spot" in text for text in waiver)


def test_v1_prompts_with_ir_and_llm_teams_is_a_config_error():
    d = demo_league().model_dump(mode="json")
    d["roster"]["IR"] = 1
    d["llm"] = {"prompt_version": "v1"}
    d["teams"][0]["agent"] = {"kind": "llm", "model": "openai/x"}
    with pytest.raises(ConfigError, match=r"roster\.IR: an IR move frees a roster spot that only waivers"):
        parse_config(d, "test")  # IR needs waivers ...
    d["waivers"] = {"enabled": True}
    with pytest.raises(ConfigError, match=r"prompt_version v1 has no (IR|waiver) prompts"):
        parse_config(d, "test")  # ... and v1 has prompts for neither
    d["roster"]["IR"], d["waivers"] = 0, {"enabled": False}
    parse_config(d, "test")


def test_a_league_without_ir_is_unchanged(prepared_2024, tmp_path):
    """No IR slots: no ``ir`` state, phase, view key or rule; the new tables are written empty with columns."""
    lg = ir_league(ir=0, weeks=3)
    run_engine(lg, prepared_2024, tmp_path / "run")
    cp = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    assert set(cp["extras"]) == {"waivers"}
    for name in ("ir_moves", "ir_players"):
        t = table(tmp_path / "run", name)
        assert t.empty and len(t.columns) >= 6
    recs = decisions(tmp_path / "run")
    assert "ir_moves" not in {r["decision"] for r in recs}
    assert not any("ir" in r["view"] for r in recs if r["decision"] == "set_lineup")
    assert not any(c["drop"] is None for r in recs if r["decision"] == "waiver_claims" for c in r["applied"])
    assert not re.search(r"^\s*IR:", (tmp_path / "run" / "config.yaml").read_text(), re.M)


def test_ir_views_hold_nothing_of_the_future(prepared_2024, tmp_path):
    """The firewall with IR: perturbing every actual stat from week 8 on leaves every view (IR moves, claims into
    open spots, lineups with their IR lists) of weeks up to 8 byte-identical."""
    from ffbench_lib.game.views import canonical_json
    from test_firewall import perturb

    lg = ir_league(ir=1, weeks=10, seed=4)
    run_engine(lg, prepared_2024, tmp_path / "real")
    run_engine(lg, perturb(prepared_2024, 8), tmp_path / "perturbed")
    real, fake = decisions(tmp_path / "real"), decisions(tmp_path / "perturbed")
    a = [r for r in real if r["week"] is None or r["week"] <= 8]
    b = [r for r in fake if r["week"] is None or r["week"] <= 8]
    assert len(a) == len(b) and sum(r["decision"] == "ir_moves" for r in a) >= 5
    for ra, rb in zip(a, b):
        assert canonical_json(ra["view"]) == canonical_json(rb["view"]), (ra["decision"], ra["week"], ra["team"])
        assert ra["raw_answer"] == rb["raw_answer"]
