"""The decision registry on real views (the 2024 season, drafted in the test): per kind, a legal answer passes and
each kind of illegal answer gets its specific problem and the documented repair; every bot policy answers every
kind legally; every kind renders its v2 prompt with every player of the view and the answer schema."""
from __future__ import annotations

import asyncio
import copy
import json

import pytest

from ffbench_lib.agents import bots
from ffbench_lib.agents.prompts import messages
from ffbench_lib.config import Waivers
from ffbench_lib.decisions import KINDS, REGISTRY
from ffbench_lib.rules import draft as draft_rules
from ffbench_lib.rules.lineup import best_lineup, start_value, validate_and_repair
from ffbench_lib.rules.roster import can_field_lineup, within_caps
from ffbench_lib.rules.schedule import make_schedule
from ffbench_lib.rules.trades import Offer, OfferSpace
from ffbench_lib.state import LeagueState
from ffbench_lib.views import Firewall

from engine_helpers import demo_league

W = 6  # the week views are built for (five weeks played: recent form and season stats exist)
BUDGET_LEFT = 60


# ----------------------------------------------------------------------------------------------- a real league
class World:
    """A drafted demo league on the real 2024 season and its firewall. Team 0 drafts QBs first (it holds the cap of
    3), team 1 TEs first; everyone else takes the best legal player by preseason projection."""

    def __init__(self, prepared):
        self.league = demo_league(waivers=Waivers(enabled=True, mode="faab", budget=100, max_claims=3))
        self.fw = Firewall(prepared, self.league)
        self.teams = [t.name for t in self.league.teams]
        self.state = LeagueState(teams=self.teams, agent_ids={t: "test" for t in self.teams},
                                 draft_order=list(self.teams),
                                 schedule=make_schedule(self.teams, self.league.weeks, "random", 1))
        self.qb_team, self.te_team = self.teams[0], self.teams[1]
        favourite = {self.qb_team: "QB", self.te_team: "TE"}
        self.mid_draft = None
        for pick, rnd, team in draft_rules.snake(self.teams, self.league.roster.size):
            if rnd == 4 and team == self.qb_team:  # the QB team on the clock with its 3 QBs: QB no longer legal
                self.mid_draft = (copy.deepcopy(self.state), pick, rnd)
            legal = self.legal_positions(self.state, team)
            avail = [p for p in self.fw.available_ids(self.state) if self.pos(p) in legal]
            fav = [p for p in avail if self.pos(p) == favourite.get(team)]
            self.state.rosters[team].append((fav or avail)[0])
        self.roster = self.league.roster

    def pos(self, pid: str) -> str:
        return self.fw.position[pid]

    def legal_positions(self, state, team):
        return draft_rules.legal_positions([self.pos(p) for p in state.rosters[team]], self.league.roster)

    # views as the phases build them
    def draft_view(self):
        state, pick, rnd = self.mid_draft
        view = self.fw.draft_view(state, self.qb_team, pick, rnd)
        view["legal_positions"] = self.legal_positions(state, self.qb_team)
        return view

    def pick_view(self, shortlist):
        return {**self.draft_view(), "decision": "draft_pick", "shortlist_detail": self.fw.shortlist_detail(shortlist)}

    def lineup_view(self, team):
        return self.fw.lineup_view(self.state, team, W)

    def trade_view(self, team, step="propose", offer=None, counterparty=None, locked=()):
        return self.fw.trade_view(self.state, team, W, offer=offer, counterparty=counterparty, step=step,
                                  locked=set(locked))

    def offer_view(self, kind, me, other, you_give, you_get):
        return self.trade_view(me, step=kind, offer={"you_give": list(you_give), "you_get": list(you_get)},
                               counterparty=other)

    def waiver_view(self, team, mode, state=None):
        state = state or self.state
        best = self.fw.best_free_agents(self.fw.free_agents(state, W), W)
        return self.fw.waiver_view(state, team, W, mode, best, budget_left=BUDGET_LEFT if mode == "faab" else None,
                                   priority=3 if mode == "rolling" else None)


@pytest.fixture(scope="module")
def world(prepared_2024):
    return World(prepared_2024)


def by_pos(cards, pos):
    return [c["id"] for c in cards if c["pos"] == pos]


def free(view, pos):
    return [c["id"] for c in view["free_agents"][pos]]


def resolve(kind, answer, view):
    return REGISTRY[kind].resolve(answer, view)


def test_the_league_is_drafted_legally(world):
    assert world.mid_draft is not None
    for team, ids in world.state.rosters.items():
        positions = [world.pos(p) for p in ids]
        assert len(ids) == world.roster.size and within_caps(positions, world.roster) is None
        assert can_field_lineup(positions, world.roster)
    assert [world.pos(p) for p in world.state.rosters[world.qb_team]].count("QB") == world.roster.caps["QB"]
    assert "QB" not in world.draft_view()["legal_positions"]


# --------------------------------------------------------------------------------------------- draft_shortlist
def test_shortlist_validation(world):
    view = world.draft_view()
    board = [c for cards in view["available"].values() for c in cards]
    rbs, wrs, qbs = by_pos(board, "RB"), by_pos(board, "WR"), by_pos(board, "QB")
    legal = rbs[:3] + wrs[:2]
    out = resolve("draft_shortlist", {"shortlist": legal}, view)
    assert (out.applied, out.decided_by, out.problems) == (legal, "agent", [])
    # partly illegal: the legal ids are kept (the agent decided), each illegal one named
    out = resolve("draft_shortlist", {"shortlist": [rbs[0], "00-nobody", qbs[0], rbs[0], wrs[0]]}, view)
    assert out.applied == [rbs[0], wrs[0]] and out.decided_by == "agent"
    assert out.problems == ["00-nobody is not an available player",
                            f"{qbs[0]} is a QB; legal positions now: {view['legal_positions']}",
                            f"{rbs[0]} listed twice"]
    out = resolve("draft_shortlist", {"shortlist": rbs[:4] + wrs[:4]}, view)
    assert out.applied == rbs[:4] + wrs[:1] and out.problems == ["8 players for a shortlist of 5; the first 5 kept"]
    # nothing usable: the best legal players on the board by preseason projection, decided by the fallback
    best = [c["id"] for c in sorted((c for c in board if c["pos"] in view["legal_positions"]),
                                    key=lambda c: (-(c["proj"] or 0), c["id"]))][:5]
    for answer, problem in [({"shortlist": [qbs[0]]}, f"{qbs[0]} is a QB"), ({"shortlist": []}, "empty shortlist"),
                            ({"player_id": rbs[0]}, "no 'shortlist' list"), (None, "no 'shortlist' list"),
                            (["not", "a dict"], "no 'shortlist' list"), ({"shortlist": "x"}, "no 'shortlist' list")]:
        out = resolve("draft_shortlist", answer, view)
        assert (out.applied, out.decided_by) == (best, "fallback"), answer
        assert out.problems and out.problems[0].startswith(problem), (answer, out.problems)
        assert REGISTRY["draft_shortlist"].validate(answer, view) == out.problems


# -------------------------------------------------------------------------------------------------- draft_pick
def test_pick_validation(world):
    board = [c for cards in world.draft_view()["available"].values() for c in cards]
    rb, wr, qb = by_pos(board, "RB")[0], by_pos(board, "WR")[0], by_pos(board, "QB")[0]
    view = world.pick_view([wr, qb, rb])
    out = resolve("draft_pick", {"player_id": wr}, view)
    assert (out.applied, out.decided_by, out.problems) == (wr, "agent", [])
    proj = {c["id"]: c["proj"] for c in view["shortlist_detail"]}
    best_legal = max((wr, rb), key=lambda p: (proj[p], p))  # the repair: best shortlisted legal player
    for answer, problem in [({"player_id": qb}, f"{qb} is at an illegal position"),
                            ({"player_id": "00-nobody"}, f"00-nobody is not on the shortlist {[wr, qb, rb]}"),
                            ({"player_id": by_pos(board, "RB")[1]}, "is not on the shortlist"),
                            ({"pick": rb}, "no 'player_id' in the answer"), (None, "no 'player_id' in the answer"),
                            ("rb", "no 'player_id' in the answer")]:
        out = resolve("draft_pick", answer, view)
        assert (out.applied, out.decided_by) == (best_legal, "fallback"), answer
        assert len(out.problems) == 1 and problem in out.problems[0], (answer, out.problems)


# -------------------------------------------------------------------------------------------------- set_lineup
def test_lineup_validation(world):
    team = world.teams[3]
    view = world.lineup_view(team)
    cards = view["players"]
    positions = {c["id"]: c["pos"] for c in cards}
    legal = best_lineup(positions, {c["id"]: c["proj_week"] or 0.0 for c in cards}, world.roster)
    out = resolve("set_lineup", {"lineup": legal}, view)
    assert (out.applied, out.decided_by, out.problems) == (legal, "agent", [])
    qb, rb = legal["QB"][0], legal["RB"][0]
    bench = [p for p in positions if p not in {x for ids in legal.values() for x in ids}]
    # (lineup, problems, decided_by): an entry the agent got wrong is repaired (fallback); an extra player or an
    # unknown slot is only ignored, every slot still holding the agent's choice
    cases = [
        ({**legal, "QB": ["00-nobody"]}, ["QB: 00-nobody is not on the roster"], "fallback"),
        ({**legal, "QB": [rb]}, [f"QB: {rb} is a RB, not eligible"], "fallback"),
        ({**legal, "TE": [qb]}, [f"TE: {qb} is already in the lineup"], "fallback"),
        ({**legal, "WR": legal["WR"][:1]}, ["WR: 1 slot(s) left empty"], "fallback"),
        ({**legal, "FLEX": {"id": qb}}, ["FLEX: expected a list of player ids"], "fallback"),
        ({**legal, "RB": legal["RB"] + bench[:1]}, ["RB: 3 players for 2 slot(s); extra ignored"], "agent"),
        ({**legal, "K": [qb]}, ["unknown slot(s) ['K']; slots are ['QB', 'RB', 'WR', 'TE', 'FLEX']"], "agent"),
    ]
    for lineup, problems, by in cases:
        out = resolve("set_lineup", {"lineup": lineup}, view)
        assert (out.problems, out.decided_by) == (problems, by), lineup
        assert_legal_lineup(out.applied, positions, world)
        kept = {s: [p for p in ids if p in lineup.get(s, [])] for s, ids in out.applied.items()}
        assert all(kept[s] == [p for p in legal[s] if p in lineup.get(s, [])] for s in legal)  # legal entries kept
    for answer in [None, "QB first", {"lineup": ["a", "b"]}, {"starters": legal}]:
        out = resolve("set_lineup", answer, view)
        assert out.decided_by == "fallback" and out.problems[0].startswith("lineup is not a mapping"), answer
        assert_legal_lineup(out.applied, positions, world)
        # the repair: the best players by start value (this week's projection, zero when on bye or out)
        assert out.applied == best_lineup(positions, {c["id"]: start_value(c) for c in cards}, world.roster)


def assert_legal_lineup(lineup, positions, world):
    assert validate_and_repair(lineup, positions, {}, world.roster).problems == []
