"""The decision registry on real views (the 2024 season, drafted in the test): per kind, a legal answer passes and
each kind of illegal answer gets its specific problem and the documented repair; every bot policy answers every
kind legally; every kind renders its v2 prompt with every player of the view and the answer schema."""
from __future__ import annotations

import asyncio
import copy
import dataclasses

import pytest

from ffbench_lib.agents import bots
from ffbench_lib.agents.prompts import messages
from ffbench_lib.config.league import Waivers
from ffbench_lib.game.decisions import KINDS, REGISTRY, market_from_view
from ffbench_lib.game.decisions import waiver_claims
from ffbench_lib.game.rules import draft as draft_rules
from ffbench_lib.game.rules.lineup import best_lineup, start_value, validate_and_repair
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.game.rules.schedule import make_schedule
from ffbench_lib.game.rules.trades import OfferSpace
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall

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
        self.rolling_fw = Firewall(prepared, self.league.model_copy(update={
            "waivers": self.league.waivers.model_copy(update={"mode": "rolling"})}))
        self.ir_fw = Firewall(prepared, self.league.model_copy(update={
            "roster": self.league.roster.model_copy(update={"IR": 1})}))
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

    # views as the phases build them: each kind's own view builder, through the firewall
    def draft_view(self):
        state, pick, rnd = self.mid_draft
        return REGISTRY["draft_shortlist"].view(self.fw, state, self.qb_team, pick=pick, rnd=rnd)

    def queue_view(self, picks_before=3):
        state, pick, rnd = self.mid_draft
        return REGISTRY["draft_queue"].view(self.fw, state, self.qb_team, pick=pick, rnd=rnd, picks_before=picks_before)

    def pick_view(self, shortlist):
        state, _, _ = self.mid_draft
        return REGISTRY["draft_pick"].view(self.fw, state, self.qb_team, base=self.draft_view(), shortlist=shortlist)

    def lineup_view(self, team):
        return REGISTRY["set_lineup"].view(self.fw, self.state, team, week=W)

    def trade_view(self, team, locked=()):
        return REGISTRY["propose_trade"].view(self.fw, self.state, team, week=W, locked=set(locked))

    def offer_view(self, kind, me, other, you_give, you_get):
        return REGISTRY[kind].view(self.fw, self.state, me, week=W, offer={"you_give": list(you_give),
                                   "you_get": list(you_get)}, counterparty=other, history=None, locked=set())

    def ir_view(self, team):
        """IR moves as the ir phase asks them, in the same league with one IR slot (nobody on IR yet)."""
        state = copy.deepcopy(self.state)
        state.extras["ir"] = {t: [] for t in self.teams}
        return REGISTRY["ir_moves"].view(self.ir_fw, state, team, week=W)

    def waiver_view(self, team, mode, state=None):
        """Waiver claims (``faab``: the league's mode; ``rolling``: the same league with rolling priority) or
        free-agent adds (``free_agents``) as the waivers phase asks them: the week's pool, its best players
        per position, the team's budget left or place in the order."""
        state = state or self.state
        fw = self.rolling_fw if mode == "rolling" else self.fw
        best = waiver_claims.best_free_agents(fw, waiver_claims.pool(fw, state, W), W)
        if mode == "free_agents":
            return REGISTRY["free_agent_adds"].view(fw, state, team, week=W, best=best)
        return REGISTRY["waiver_claims"].view(fw, state, team, week=W, best=best,
                                              budget_left=BUDGET_LEFT if mode == "faab" else None,
                                              priority=3 if mode == "rolling" else None)


def with_an_unprojected_wr(prepared):
    """The season with one WR who has not played before week W and whom no weekly projection lists (a
    practice-squad player: the real data has many, the synthetic world none), so that ``with_dud`` finds a
    worthless bench WR; the least projected one, and only in-season, so the draft is unchanged."""
    w, pl = prepared.weekly, prepared.players
    played = set(w.loc[w["week"] < W, "player_id"])
    cand = pl[(pl["position"] == "WR") & ~pl["player_id"].isin(played)]
    pid = cand.sort_values(["proj_points_builtin", "player_id"])["player_id"].iloc[0]
    wp = prepared.weekly_projections
    keep = (wp["player_id"] != pid) | (wp["week"] == 1)  # week 1 is the preseason the draft ranks by
    return dataclasses.replace(prepared, weekly_projections=wp[keep].reset_index(drop=True))


@pytest.fixture(scope="module")
def world(prepared_2024):
    return World(with_an_unprojected_wr(prepared_2024))


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


# ------------------------------------------------------------------------------------------------------ trades
def legal_offer(world, view, me, partners, size=None):
    """The first legal offer of ``me`` to ``partners`` (the rules' own enumeration)."""
    return next(OfferSpace(market_from_view(view), me, partners, size).legal())


def first_of(world, team, pos):
    return sorted(p for p in world.state.rosters[team] if world.pos(p) == pos)


def count(world, team, pos):
    return len(first_of(world, team, pos))


def test_propose_validation(world):
    a, b, c = world.teams[2], world.teams[3], world.teams[4]
    view = world.trade_view(a)
    offer = legal_offer(world, view, a, [b])
    legal = {"action": "propose", "to_team": b, "give": list(offer.a_gives), "get": list(offer.b_gives)}
    out = resolve("propose_trade", legal, view)
    assert (out.decided_by, out.problems, out.value) == ("agent", [], offer)
    assert out.applied == {"you_give": list(offer.a_gives), "you_get": list(offer.b_gives), "to_team": b}
    out = resolve("propose_trade", {"action": "pass"}, view)
    assert (out.applied, out.decided_by, out.problems, out.value) == ("pass", "agent", [], None)

    mine, theirs = world.state.rosters[a], world.state.rosters[b]
    t = list(offer.b_gives)
    qb_team = world.qb_team
    held = [world.pos(p) for p in mine]
    my_qb = first_of(world, a, "QB")[0]
    their_wr = next(p for p in world.state.rosters[qb_team] if world.pos(p) != "QB"  # one a may take: only QB caps
                    and held.count(world.pos(p)) < world.roster.caps.get(world.pos(p), world.roster.size))
    cases = [
        ({**legal, "to_team": "Nobody"}, "unknown trade partner 'Nobody'; choose one of "
                                         f"{sorted(t for t in world.state.rosters if t != a)}"),
        ({**legal, "to_team": a}, f"unknown trade partner {a!r}"),
        ({**legal, "give": ["00-nobody"]}, f"00-nobody is not on {a}'s roster"),
        ({**legal, "get": [world.state.rosters[c][0]]}, f"{world.state.rosters[c][0]} is not on {b}'s roster"),
        ({**legal, "give": mine[:2], "get": theirs[:1]}, "unequal player counts (2 for 1); both sides must move "
                                                        "the same number"),
        ({**legal, "give": mine[:3], "get": theirs[:3]}, "3 players per side; allowed 1..2"),
        ({**legal, "give": [mine[0], mine[0]], "get": theirs[:2]}, "a player is listed twice"),
        ({**legal, "give": "not ids", "get": {"a": 1}}, "'give' and 'get' must be lists of player ids"),
        ({"action": "propose", "to_team": qb_team, "give": [my_qb], "get": [their_wr]},
         f"{qb_team} would hold 4 QB"),
        ({"action": "trade"}, "action must be 'propose' or 'pass' (got 'trade')"),
        ({}, "action must be 'propose' or 'pass' (got None)"),
        (None, "action must be 'propose' or 'pass' (got None)"),
        ([legal], "action must be 'propose' or 'pass' (got None)"),
    ]
    for answer, problem in cases:
        out = resolve("propose_trade", answer, view)
        assert (out.applied, out.decided_by, out.value) == ("pass", "fallback", None), answer
        assert len(out.problems) == 1 and out.problems[0].startswith(problem), (answer, out.problems)
    # a player traded earlier this week is locked
    locked = world.trade_view(a, locked={t[0]})
    assert resolve("propose_trade", legal, locked).problems == [f"{t[0]} was already traded this week"]
    # a trade that leaves a team unable to field a lineup: every TE of the proposer for non-TEs
    tes = first_of(world, a, "TE")
    other_pos = next(p for p in ("WR", "RB") if count(world, a, p) + len(tes) <= world.roster.caps[p])
    gets = [p for p in first_of(world, b, other_pos)][: len(tes)]
    assert count(world, b, "TE") + len(tes) <= world.roster.caps["TE"]
    out = resolve("propose_trade", {**legal, "give": tes, "get": gets}, view)
    assert out.problems == [f"{a} could not field a legal lineup afterwards"] and out.applied == "pass"


def offer_case(world):
    """A legal 1-for-1 offer from team 2 to team 3 and the views of each step."""
    a, b = world.teams[2], world.teams[3]
    offer = legal_offer(world, world.trade_view(a), a, [b], size=1)
    respond = world.offer_view("respond_to_offer", b, a, offer.b_gives, offer.a_gives)
    return a, b, offer, respond


@pytest.mark.parametrize("kind, actor, actions, counter, default", [
    ("respond_to_offer", "receiver", ["accept", "reject"], "counter", "reject"),
    ("reply_to_counter", "proposer", ["accept", "withdraw"], "final_counter", "withdraw"),
    ("final_decision", "receiver", ["accept", "reject"], None, "reject"),
])
def test_trade_reply_validation(world, kind, actor, actions, counter, default):
    a, b, offer, _ = offer_case(world)
    me, other = (b, a) if actor == "receiver" else (a, b)
    you_give, you_get = (offer.b_gives, offer.a_gives) if actor == "receiver" else (offer.a_gives, offer.b_gives)
    view = world.offer_view(kind, me, other, you_give, you_get)
    assert view["offer"]["from_team"] == other and [c["id"] for c in view["offer"]["you_give"]] == list(you_give)
    for action in actions:
        out = resolve(kind, {"action": action}, view)
        assert (out.applied, out.decided_by, out.problems, out.value) == (action, "agent", [], (action, None))
    allowed = sorted(actions + ([counter] if counter else []))
    cases = [({"action": "propose"}, f"action must be one of {allowed} (got 'propose')"),
             ({"action": "maybe"}, f"action must be one of {allowed} (got 'maybe')"),
             (None, f"action must be one of {allowed} (got None)"), ("accept", f"action must be one of {allowed}")]
    if counter:
        new = legal_offer(world, view, me, [other], size=1)
        good = {"action": counter, "give": list(new.a_gives), "get": list(new.b_gives)}
        out = resolve(kind, good, view)
        assert (out.decided_by, out.problems, out.value[0]) == ("agent", [], counter)
        assert out.applied == {"you_give": list(new.a_gives), "you_get": list(new.b_gives)}
        # offers are stored proposer -> receiver whoever counters
        stored = out.value[1]
        assert (stored.a, stored.b) == (a, b)
        assert set(stored.a_gives) | set(stored.b_gives) == set(new.a_gives) | set(new.b_gives)
        two = world.state.rosters
        cases += [({**good, "give": two[me][:2], "get": two[other][:2]},
                   "a counter must keep the size of the offer (1 per side)"),
                  ({**good, "give": ["00-nobody"]}, f"00-nobody is not on {me}'s roster"),
                  ({**good, "get": good["give"]}, f"{good['give'][0]} is not on {other}'s roster"),
                  ({"action": counter}, "'give' and 'get' must be lists of player ids")]
    else:
        cases.append(({"action": "counter", "give": list(you_give), "get": list(you_get)},
                      f"action must be one of {allowed} (got 'counter')"))
    for answer, problem in cases:
        out = resolve(kind, answer, view)
        assert (out.applied, out.decided_by, out.value) == (default, "fallback", (default, None)), answer
        assert len(out.problems) == 1 and out.problems[0].startswith(problem), (answer, out.problems)
        assert REGISTRY[kind].validate(answer, view) == out.problems


# ----------------------------------------------------------------------------------------------------- waivers
def same_position_claim(world, view):
    """A legal claim: the best free agent at a position, for the team's least projected player there."""
    team = view["team"]
    for pos in ("WR", "RB", "TE", "QB"):
        fas, mine = free(view, pos), first_of(world, team, pos)
        if fas and mine:
            return {"add": fas[0], "drop": mine[-1]}
    raise AssertionError("no free agent at any position")


def test_waiver_claim_validation(world):
    team = world.teams[2]
    view = world.waiver_view(team, "faab")
    assert (view["mode"], view["budget_left"], view["max_claims"]) == ("faab", BUDGET_LEFT, 3)
    claim = {**same_position_claim(world, view), "bid": 10}
    out = resolve("waiver_claims", {"claims": [claim]}, view)
    assert (out.applied, out.decided_by, out.problems) == ([claim], "agent", [])
    out = resolve("waiver_claims", {"claims": []}, view)
    assert (out.applied, out.decided_by, out.problems) == ([], "agent", [])

    rostered = world.state.rosters[world.teams[5]][0]
    wr_fa, rb_fa, qb_fa = free(view, "WR")[0], free(view, "RB")[0], free(view, "QB")[0]
    qb_view = world.waiver_view(world.qb_team, "faab")
    qb_wr = first_of(world, world.qb_team, "WR")[0]
    cases = [  # (claim, problem of claim 1)
        ({**claim, "add": "00-nobody"}, "'00-nobody' is not an available free agent"),
        ({**claim, "add": rostered}, f"{rostered!r} is not an available free agent"),
        ({**claim, "drop": rostered}, f"{rostered!r} is not on your roster"),
        ({**claim, "drop": claim["add"]}, f"{claim['add']!r} is not on your roster"),
        ({**claim, "bid": BUDGET_LEFT + 1}, f"bid {BUDGET_LEFT + 1} is outside 0..{BUDGET_LEFT} (the budget left)"),
        ({**claim, "bid": -1}, f"bid -1 is outside 0..{BUDGET_LEFT} (the budget left)"),
        ({**claim, "bid": 2.5}, "bid 2.5 must be a whole number of dollars"),
        ({**claim, "bid": "10"}, "bid '10' must be a whole number of dollars"),
        ({**claim, "bid": True}, "bid True must be a whole number of dollars"),
        ({"add": claim["add"], "drop": claim["drop"]}, "bid None must be a whole number of dollars"),
        ("add him", "not an object with 'add' and 'drop'"),
    ]
    for bad, problem in cases:
        out = resolve("waiver_claims", {"claims": [bad]}, view)
        assert (out.applied, out.decided_by) == ([], "fallback"), bad
        assert out.problems == [f"claim 1: {problem}"], (bad, out.problems)
    # a cap: the team holding 3 QBs claims a QB for a WR
    out = resolve("waiver_claims", {"claims": [{"add": qb_fa, "drop": qb_wr, "bid": 1}]}, qb_view)
    assert out.applied == [] and out.problems[0].startswith(f"claim 1: adding {qb_fa} for {qb_wr}: ")
    assert "cap of 3" in out.problems[0]
    # a roster that could not field a lineup: the only TE dropped (the league starts one TE)
    lone = next(t for t in world.teams if count(world, t, "TE") == 1)
    lone_view = world.waiver_view(lone, "faab")
    add = next(fa for fa, pos in ((wr_fa, "WR"), (rb_fa, "RB")) if count(world, lone, pos) < world.roster.caps[pos])
    te = first_of(world, lone, "TE")[0]
    out = resolve("waiver_claims", {"claims": [{"add": add, "drop": te, "bid": 0}]}, lone_view)
    assert out.problems == [f"claim 1: adding {add} for {te} leaves a roster that cannot field a legal lineup"]
    # the legal claims are kept, each illegal one dropped and named (the decision is marked fallback)
    other = {"add": free(view, "WR")[1], "drop": first_of(world, team, "WR")[-2], "bid": 5}
    out = resolve("waiver_claims", {"claims": [claim, {**claim, "drop": other["drop"]}, other]}, view)
    assert (out.applied, out.decided_by) == ([claim, other], "fallback")
    assert out.problems == [f"claim 2: {claim['add']} is claimed twice"]
    # too many: the first max_claims are judged and kept; several claims may name the same drop (a claim whose
    # drop already left when it is processed is skipped then, so a team can rank alternatives)
    four = [claim, other, {**other, "add": free(view, "WR")[2]}, {**other, "add": free(view, "WR")[3]}]
    out = resolve("waiver_claims", {"claims": four}, view)
    assert (out.applied, out.decided_by) == (four[:3], "fallback")
    assert out.problems == ["4 claims; at most 3: the first 3 kept"]
    # unreadable answers claim nobody
    for answer in [None, "claims", {"claims": "all"}, {"claim": [claim]}, [claim]]:
        out = resolve("waiver_claims", answer, view)
        assert (out.applied, out.decided_by) == ([], "fallback"), answer
        assert out.problems == ["no 'claims' list in the answer (an empty list claims nobody)"]


@pytest.mark.parametrize("kind, mode", [("waiver_claims", "rolling"), ("free_agent_adds", "free_agents")])
def test_claims_without_bids(world, kind, mode):
    """Rolling waivers and free-agent adds take no bid: a bid given is ignored (recorded as none), a missing
    bid is fine; the other rules are the FAAB claims'."""
    view = world.waiver_view(world.teams[2], mode)
    assert view["mode"] == mode and view["budget_left"] is None
    claim = same_position_claim(world, view)
    for given in [claim, {**claim, "bid": 1000}, {**claim, "bid": "lots"}]:
        out = resolve(kind, {"claims": [given]}, view)
        assert (out.applied, out.decided_by, out.problems) == ([{**claim, "bid": None}], "agent", []), given
    out = resolve(kind, {"claims": [{**claim, "drop": "00-nobody"}]}, view)
    assert out.problems == ["claim 1: '00-nobody' is not on your roster"] and out.decided_by == "fallback"


# -------------------------------------------------------------------------------------------------- bot policies
def every_kind(world):
    """(kind, view) pairs covering every registered kind on real views (draft_pick is built from a shortlist)."""
    a, b, offer, respond = offer_case(world)
    out = [("draft_shortlist", world.draft_view()), ("draft_queue", world.queue_view())]
    out += [("set_lineup", world.lineup_view(t)) for t in world.teams[:4]]
    out += [("propose_trade", world.trade_view(t)) for t in (a, world.qb_team)]
    out += [("respond_to_offer", respond),
            ("reply_to_counter", world.offer_view("reply_to_counter", a, b, offer.a_gives, offer.b_gives)),
            ("final_decision", world.offer_view("final_decision", b, a, offer.b_gives, offer.a_gives))]
    out += [("ir_moves", world.ir_view(t)) for t in world.teams[:2]]
    for team in (world.teams[2], world.qb_team):
        out += [("waiver_claims", world.waiver_view(team, "faab")),
                ("waiver_claims", world.waiver_view(team, "rolling")),
                ("free_agent_adds", world.waiver_view(team, "free_agents"))]
    return out


def ask(strategy, kind, view, seed=0):
    return asyncio.run(bots.make_bot(strategy, view["team"], seed).decide(kind, view))


@pytest.mark.parametrize("strategy", list(bots.BOTS))
def test_every_bot_answers_every_kind_legally(world, strategy):
    seen = set()
    for kind, view in every_kind(world):
        answer = ask(strategy, kind, view)
        REGISTRY[kind].Answer.model_validate(answer)  # the documented shape accepts it
        out = resolve(kind, answer, view)
        assert (out.decided_by, out.problems) == ("agent", []), (kind, view["team"], answer)
        seen.add(kind)
        if kind == "draft_shortlist":
            pick_view = world.pick_view(out.applied)
            pick = ask(strategy, "draft_pick", pick_view)
            REGISTRY["draft_pick"].Answer.model_validate(pick)
            out = resolve("draft_pick", pick, pick_view)
            assert (out.decided_by, out.problems, out.applied) == ("agent", [], pick["player_id"])
            seen.add("draft_pick")
    assert seen == set(KINDS)


def ros(card, how):
    """A rest-of-season points-per-game estimate as the waiver policies define it: the mean of this week's
    projection (``recent``: the last three games' average; nothing when on bye or out) and the season's
    points per game."""
    first = card.get("last3_avg") if how == "recent" else (None if card["zero_flags"] else card.get("proj_week"))
    vals = [float(v) for v in (first, card.get("std_ppg")) if v is not None]
    return sum(vals) / len(vals) if vals else 0.0


def with_dud(world, team, pos="WR"):
    """The league with ``team``'s least projected ``pos`` replaced by a known player who has never played
    and has no projection: a bench spot any decent free agent clearly beats."""
    k = world.fw.week(W)
    dud = next(p for p in sorted(k.known_players() - world.state.drafted())
               if world.pos(p) == pos and not k.games.get(p) and not k.projection.get(p))
    victim = min(first_of(world, team, pos), key=lambda p: (world.fw.preseason_proj.get(p, 0.0), p))
    state = copy.deepcopy(world.state)
    state.rosters[team] = [dud if p == victim else p for p in state.rosters[team]]
    return state, dud


def starters_by(view, how, roster):
    value = {c["id"]: ros(c, how) for c in view["my_roster"]}
    lineup = best_lineup({c["id"]: c["pos"] for c in view["my_roster"]}, value, roster)
    return {p for ids in lineup.values() for p in ids}


@pytest.mark.parametrize("mode", ["faab", "rolling", "free_agents"])
@pytest.mark.parametrize("strategy, how", [("vorp", "proj"), ("recent_form", "recent")])
def test_upgrade_policies_claim_clear_upgrades_and_never_drop_a_starter(world, strategy, how, mode):
    kind = "free_agent_adds" if mode == "free_agents" else "waiver_claims"
    team = world.teams[2]
    state, dud = with_dud(world, team)
    view = world.waiver_view(team, mode, state)
    free_cards = [c for cards in view["free_agents"].values() for c in cards]
    value = {c["id"]: ros(c, how) for c in view["my_roster"] + free_cards}
    assert value[dud] == 0.0 and max(value[c["id"]] for c in view["free_agents"]["WR"]) >= 1.0
    claims = ask(strategy, kind, view)["claims"]
    assert claims and resolve(kind, {"claims": claims}, view).problems == []
    # the worthless bench player goes, unless every claim went to a bench player worth as little (by recent form,
    # players who have not played yet are worth 0 too; ties go by id)
    bench = {c["id"] for c in view["my_roster"]} - starters_by(view, how, world.roster)
    worthless = {p for p in bench if value[p] <= value[dud]}
    drops = {c["drop"] for c in claims}
    assert dud in drops or (len(claims) == view["max_claims"] and drops <= worthless), (dud, claims, worthless)
    for c in claims:
        assert value[c["add"]] >= value[c["drop"]] + 1.0, c  # a clear upgrade, by a point a game at least
        assert ("bid" in c) == (mode == "faab") and 0 <= c.get("bid", 0) <= BUDGET_LEFT
    # on the real rosters of every team too: claims are legal and never drop a starter
    for t in world.teams:
        view = world.waiver_view(t, mode)
        claims = ask(strategy, kind, view)["claims"]
        assert resolve(kind, {"claims": claims}, view).problems == []
        assert not {c["drop"] for c in claims} & starters_by(view, how, world.roster), t


@pytest.mark.parametrize("mode", ["faab", "rolling", "free_agents"])
def test_adp_never_claims(world, mode):
    kind = "free_agent_adds" if mode == "free_agents" else "waiver_claims"
    state, _ = with_dud(world, world.teams[2])
    views = [world.waiver_view(t, mode) for t in world.teams] + [world.waiver_view(world.teams[2], mode, state)]
    for view in views:
        answer = ask("adp", kind, view)
        assert answer["claims"] == [] and resolve(kind, answer, view).decided_by == "agent"


# ------------------------------------------------------------------------------------------------------ prompts
#: the view tables each kind's prompt shows (every player in them must be in the prompt)
TABLES = {"draft_shortlist": ("roster", "available"), "draft_pick": ("roster", "shortlist_detail"),
          "draft_queue": ("roster", "available", "picks_so_far"),
          "set_lineup": ("players",), "waiver_claims": ("my_roster", "free_agents"),
          "free_agent_adds": ("my_roster", "free_agents"), "ir_moves": ("my_roster", "ir")}
TRADE_TABLES = ("my_roster", "other_teams", "offer")


def player_ids(x):
    """Every player id in a view part (cards are dicts with an id and a position)."""
    if isinstance(x, dict):
        own = [x["id"]] if "id" in x and "pos" in x else []
        return own + [p for v in x.values() for p in player_ids(v)]
    if isinstance(x, list):
        return [p for v in x for p in player_ids(v)]
    return []


def test_every_kind_renders_its_v2_prompt(world):
    cases = every_kind(world)
    board = [c for cards in world.draft_view()["available"].values() for c in cards]
    cases.append(("draft_pick", world.pick_view([c["id"] for c in board[:5]])))
    assert {k for k, _ in cases} == set(KINDS)
    for kind, view in cases:
        system, user = (m["content"] for m in messages(kind, view, "v2"))
        assert view["team"] in system and f"DECISION: {kind}" in user
        ids = player_ids([view[t] for t in TABLES.get(kind, TRADE_TABLES) if t in view])
        assert len(ids) >= 8, kind
        missing = [p for p in ids if p not in user]
        assert missing == [], (kind, missing)
        # the answer schema: every required field of the answer model, quoted
        required = [n for n, f in REGISTRY[kind].Answer.model_fields.items() if f.is_required()]
        assert required and all(f'"{n}"' in user for n in required), (kind, required)
        assert "Answer schema" in user or "Answer with exactly one JSON object" in user
        if kind == "set_lineup":
            assert all(f'"{slot}": [<id>' in user for slot in view["rules"]["roster_slots"])
        if kind in ("waiver_claims", "free_agent_adds"):
            assert '"add": "<free agent id>"' in user and '"drop": "<your player id>"' in user
            assert ('"bid"' in user) == (view["mode"] == "faab"), view["mode"]
            assert (f"{BUDGET_LEFT} of 100 dollars left" in user) == (view["mode"] == "faab")
        if "offer" in view:
            assert f'Team "{view["offer"]["from_team"]}"' in user
