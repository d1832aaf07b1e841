"""Baseline bots. They see exactly the views an LLM sees and answer in the same shapes, deterministically for a
seed (randomness comes from :meth:`Agent.rng`, keyed by the decision).

* ``random``      - uniform over the legal actions of each decision (OpenSpiel's uniform random policy): pass
                    is one action among every legal offer, accept and reject two among every legal counter;
* ``adp``         - drafts by ADP, starts by this week's projection, declines every trade;
* ``vorp``        - drafts by value over replacement (the last starter the league will take), starters before
                    depth, starts by
                    projection, proposes and accepts trades that raise its projected starting value;
* ``recent_form`` - drafts by projection, starts by the average of its last three games.

Every bot chooses only among the legal actions the rules enumerate (:mod:`ffbench_lib.game.rules`), so no bot answer
is ever repaired (``decided_by`` is always ``agent``); the engine still judges every answer.

The hindsight oracle is not an agent: it lives in :mod:`ffbench_lib.analysis.metrics` and needs actual points.
"""
from __future__ import annotations

import bisect
import math
from typing import Callable

import numpy as np

from ffbench_lib.config.league import Roster, flex_slots
from ffbench_lib.game.decisions import market_from_view as trade_market
from ffbench_lib.game.decisions import roster_from_rules
from ffbench_lib.game.rules.draft import legal_players
from ffbench_lib.game.rules.lineup import best_lineup, random_lineup, start_value
from ffbench_lib.sport.lineup import LineupValuer
from ffbench_lib.game.rules.roster import unmet_starters
from ffbench_lib.game.rules.trades import Offer, OfferSpace
from ffbench_lib.game.decisions.waiver_claims import legal_swaps
from ffbench_lib.game.decisions.ir_moves import OUT, IRMoves, ir_eligible, legal_moves
from ffbench_lib.agents.base import Agent, Answer
from ffbench_lib.sport import sport



def roster_rules(view: dict) -> Roster:
    """The league's roster rules from a view."""
    return roster_from_rules(view["rules"])


def _available(view: dict) -> list[dict]:
    return legal_players((p for ps in view["available"].values() for p in ps), view["legal_positions"])


#: rejection draws before :func:`uniform_action` lists the legal set instead (only when it is a tiny share)
MAX_DRAWS = 2000


def uniform_action(rng: np.random.Generator, fixed: list[Answer], space: OfferSpace,
                   answer: Callable[[Offer], Answer]) -> Answer:
    """An action drawn uniformly from ``fixed`` (always legal: pass, accept, reject, withdraw) plus the legal
    offers of ``space``. Draws index the whole space and redraw on an illegal offer, which is exactly uniform
    over the legal set; after ``MAX_DRAWS`` misses the legal offers are listed and one index drawn (also
    exact), so a fixed action gets only its own share, and all of it when no legal offer exists."""
    total = len(fixed) + len(space)
    for _ in range(MAX_DRAWS):
        i = int(rng.integers(total))
        if i < len(fixed):
            return fixed[i]
        offer = space[i - len(fixed)]
        if space.is_legal(offer):
            return answer(offer)
    actions = fixed + [answer(o) for o in space.legal()]
    return actions[int(rng.integers(len(actions)))]


def _adp_key(p: dict) -> tuple:
    return (p["adp"] if p["adp"] is not None else math.inf, -(p["proj"] or 0.0), p["id"])


def _proj_key(p: dict) -> tuple:
    return (-(p["proj"] or 0.0), p["id"])


def _weekly_value(p: dict, how: str) -> float:
    if how == "recent" and not p["zero_flags"] and p.get("last3_avg") is not None:
        return float(p["last3_avg"])
    return start_value(p)


def _lineup(view: dict, how: str) -> dict[str, list[str | None]]:
    players = view["players"]
    positions = {p["id"]: p["pos"] for p in players}
    values = {p["id"]: _weekly_value(p, how) for p in players}
    return best_lineup(positions, values, roster_rules(view))


def _bench(view: dict, lineup: dict[str, list[str | None]], order) -> list[str]:
    """The players of a lineup view who do not start, in the ``order`` given to them in id order."""
    starting = {p for ids in lineup.values() for p in ids}
    return order(sorted(p["id"] for p in view["players"] if p["id"] not in starting))


#: the vorp bot proposes a 1-for-1 trade only if it raises its projected starting value by more than this
TRADE_GAIN = 0.5


def _ros_entry(card: dict) -> tuple[float, str, str]:
    """A card as :class:`LineupValuer` takes it: (-per-game projection, id, position)."""
    return (-float(card.get("proj_week") or 0.0), card["id"], card["pos"])


def _ros_value(cards: list[dict], roster: Roster, valuer: LineupValuer | None = None) -> float:
    """Projected weekly starting value of a roster (per-game projections, bye/injury of this week ignored)."""
    valuer = valuer or LineupValuer(roster.slot_counts(), roster.slot_positions(), roster.most)
    return valuer.value(sorted(_ros_entry(c) for c in {c["id"]: c for c in cards}.values()))  # one card an id


def _swapped(order: list[tuple[float, str, str]], out_id: str, entry: tuple[float, str, str]
             ) -> list[tuple[float, str, str]]:
    """A sorted roster (:func:`_ros_entry` entries) with one player out and another in, still sorted."""
    new = [e for e in order if e[1] != out_id]
    bisect.insort(new, entry)
    return new


def _swap(cards: list[dict], out_ids: list[str], in_cards: list[dict]) -> list[dict]:
    return [c for c in cards if c["id"] not in out_ids] + in_cards


class _Bot(Agent):
    strategy = "bot"
    lineup_by = "proj"
    #: Bots see real views in masked mode: they decide by numbers alone, and pseudonyms (in another order than
    #: real ids) would only change their id tie-breaks and random draws: noise in a masked-vs-unmasked comparison.
    masked_views = False

    def __init__(self, team: str, seed: int):
        super().__init__(team, seed)
        self.agent_id = f"bot:{self.strategy}"

    async def decide(self, kind: str, view: dict) -> Answer:
        """Each kind is answered by the bot's policy of that name (a method)."""
        policy = getattr(self, kind, None)
        if policy is None:
            raise NotImplementedError(f"bot {self.strategy!r} has no policy for decision {kind!r}")
        return await policy(view)

    # draft: a ranking of the legal available players, shortlist its head, pick the best of the shortlist (queue
    # mode: queue the ranking's head)
    def rank(self, view: dict, players: list[dict]) -> list[dict]:
        return sorted(players, key=_proj_key)

    def ranking_head(self, view: dict, key: str) -> Answer:
        """The ranking's head as the answer's ``key`` list (``shortlist`` or ``queue``), ``{key}_size`` long."""
        ranked = self.rank(view, _available(view))[: view[f"{key}_size"]]
        return {key: [p["id"] for p in ranked], "rationale": f"{self.strategy} ranking"}

    async def draft_shortlist(self, view: dict) -> Answer:
        return self.ranking_head(view, "shortlist")

    async def draft_queue(self, view: dict) -> Answer:
        return self.ranking_head(view, "queue")

    async def draft_pick(self, view: dict) -> Answer:
        best = self.rank(view, legal_players(view["shortlist_detail"], view["legal_positions"]))[0]
        return {"player_id": best["id"], "rationale": f"best of the shortlist by {self.strategy}"}

    async def set_lineup(self, view: dict) -> Answer:
        lineup = _lineup(view, self.lineup_by)
        answer: Answer = {"lineup": lineup, "rationale": f"start by {self.lineup_by}"}
        if roster_rules(view).auto_subs:  # an ordered bench: the best substitute comes on first
            values = {p["id"]: _weekly_value(p, self.lineup_by) for p in view["players"]}
            answer["bench"] = _bench(view, lineup, lambda ids: sorted(ids, key=lambda p: (-values[p], p)))
        return answer

    # waivers and free agents: claim nobody unless a subclass knows better
    async def waiver_claims(self, view: dict) -> Answer:
        return {"claims": [], "rationale": "no waiver claims"}

    async def free_agent_adds(self, view: dict) -> Answer:
        return await self.waiver_claims(view)

    async def ir_moves(self, view: dict) -> Answer:
        return ir_policy(view)

    # trades: decline everything unless a subclass knows better
    async def propose_trade(self, view: dict) -> Answer:
        return {"action": "pass", "rationale": "no trades"}

    async def respond_to_offer(self, view: dict) -> Answer:
        return {"action": "reject", "rationale": "no trades"}

    async def reply_to_counter(self, view: dict) -> Answer:
        return {"action": "withdraw", "rationale": "no trades"}

    async def final_decision(self, view: dict) -> Answer:
        return {"action": "reject", "rationale": "no trades"}


def _free_cards(view: dict) -> list[dict]:
    return [c for cards in view["free_agents"].values() for c in cards]


def _ros_per_game(card: dict, how: str) -> float:
    """A rest-of-season points-per-game estimate from what a view shows: this week's projection (unless on
    bye or out) and the season's points per game; ``recent`` uses the last three games instead of the
    projection."""
    first = card.get("last3_avg") if how == "recent" else (None if card["zero_flags"] else card.get("proj_week"))
    vals = [float(v) for v in (first, card.get("std_ppg")) if v is not None]
    return sum(vals) / len(vals) if vals else 0.0


def upgrade_swaps(view: dict, how: str, margin: float) -> list[tuple[float, str, str | None]]:
    """Every legal (gain, add, drop) swap of a free agent for a bench player (one not in the best lineup by
    rest-of-season value, or no drop into an open spot, worth 0) that gains at least ``margin``, best first.
    A free agent who does not beat the weakest droppable player by the margin beats none, so his pairs are not
    enumerated (float subtraction is monotone: the same swaps, and the sort fixes their order)."""
    mine, free = view["my_roster"], _free_cards(view)
    value = {c["id"]: _ros_per_game(c, how) for c in mine + free}
    roster = roster_rules(view)
    positions = {c["id"]: c["pos"] for c in mine + free}
    starters = {p for ids in best_lineup({c["id"]: c["pos"] for c in mine}, value, roster).values() for p in ids}
    droppable = [value[c["id"]] for c in mine if c["id"] not in starters] + ([0.0] if len(mine) < roster.size else [])
    floor = min(droppable, default=math.inf)
    return sorted(((value[a] - value.get(d, 0.0), a, d) for a, d in legal_swaps(
        [c["id"] for c in mine], positions, [c["id"] for c in free if value[c["id"]] - floor >= margin], roster)
                   if d not in starters and value[a] - value.get(d, 0.0) >= margin),
                  key=lambda x: (-x[0], x[1], x[2] or ""))


def upgrade_claims(view: dict, how: str, margin: float = 1.0) -> Answer:
    """Replace bench players with free agents worth at least ``margin`` points a game more
    (:func:`upgrade_swaps`), best gains first, each player added or dropped once; a FAAB bid
    that spends the season's budget on about 25 points a game of gains (less as the season runs out), within the
    budget left. Only legal swaps are considered; an open active spot (IR leagues) is filled without a drop
    (an empty spot is worth 0)."""
    mine, roster = view["my_roster"], roster_rules(view)
    swaps = upgrade_swaps(view, how, margin)
    claims, used = [], set()
    open_spots = roster.size - len(mine)
    budget = view.get("budget_left") or 0
    for gain, add, drop in swaps:
        if add in used or drop in used or len(claims) == view["max_claims"] or (drop is None and open_spots <= 0):
            continue
        used.add(add)
        if drop is None:
            open_spots -= 1
        else:
            used.add(drop)
        # a full season's budget buys about 25 points a game of upgrades; later in the season, less
        bid = int(round(gain * view["budget"] / 25 * view["weeks_left"] / view["rules"]["weeks"]))
        claims.append({"add": add, "drop": drop, "bid": max(0, min(budget, bid))})
    if view["mode"] != "faab":
        claims = [{"add": c["add"], "drop": c["drop"]} for c in claims]
    return {"claims": claims, "rationale": f"bench upgrades by {how} value" if claims else "no free agent beats my bench"}


def _back_from_injury(card: dict, week: int) -> bool:
    """Not ruled Out, and either on the injury report (Questionable, Doubtful: practising again) or played last
    week. A player off the report who did not play is as likely on the NFL's reserve list (which takes him off
    the report) as healthy, so he waits until he plays."""
    played_last = any(int(w) == week - 1 for w, _ in card.get("recent") or [])
    return card.get("injury") != OUT and (card.get("injury") is not None or played_last)


def ir_policy(view: dict) -> Answer:
    """Every bot's IR policy: move players ruled Out to IR while a slot is free (the best by preseason
    projection first); bring back IR players who look healthy (:func:`_back_from_injury`), into an open spot,
    into the spot of a player going to IR, or else for the weakest active player by rest-of-season value when
    the returning one is worth more (otherwise he stays on IR). Each step is kept only if the whole answer stays
    legal."""
    value = {c["id"]: _ros_per_game(c, "proj") for c in view["my_roster"] + view["ir"]}
    answer: dict = {"to_ir": [], "from_ir": []}

    def legal(cand: dict) -> bool:
        return IRMoves.resolve(cand, view).problems == []

    outs = [c["id"] for c in sorted((c for c in view["my_roster"] if ir_eligible(c)),
                                    key=lambda c: (-(c.get("proj") or 0.0), c["id"]))]
    healthy = [c["id"] for c in sorted((c for c in view["ir"] if _back_from_injury(c, view["week"])),
                                       key=lambda c: (-value[c["id"]], c["id"]))]
    for p in outs:
        cand = {**answer, "to_ir": [*answer["to_ir"], p]}
        answer = cand if legal(cand) else answer
    for h in healthy:
        gone = set(answer["to_ir"]) | {b["drop"] for b in answer["from_ir"]}
        weakest = sorted((c["id"] for c in view["my_roster"] if c["id"] not in gone), key=lambda p: (value[p], p))
        tries = [({}, None), *(({"to_ir": [p]}, None) for p in outs if p not in answer["to_ir"]),
                 *(({}, d) for d in weakest if value[d] < value[h])]
        for extra, drop in tries:
            cand = {"to_ir": [*answer["to_ir"], *extra.get("to_ir", [])],
                    "from_ir": [*answer["from_ir"], {"player": h, "drop": drop}]}
            if legal(cand):
                answer = cand
                break
    moved = bool(answer["to_ir"] or answer["from_ir"])
    return {**answer, "rationale": "injured players to IR, healthy ones back" if moved else "no IR moves"}


class ADPBot(_Bot):
    strategy = "adp"

    def rank(self, view, players):
        return sorted(players, key=_adp_key)


class RecentFormBot(_Bot):
    strategy = "recent_form"
    lineup_by = "recent"

    async def waiver_claims(self, view: dict) -> Answer:
        return upgrade_claims(view, "recent")


class VORPBot(_Bot):
    strategy = "vorp"

    MAJOR_FLEX = 0.25  # a position filling at least this share of a flex slot is drafted as a flex starter

    @staticmethod
    def flex_shares(pos: str, rules: dict) -> dict[str, float]:
        """The share of each flex slot ``pos`` fills. FLEX: the league's sport's ``bot_flex_share``, a bot default
        rather than a rule: the share of FLEX slots each position fills in a typical league (an unlisted flex
        position, a superflex QB: its ``bot_flex_share_unlisted``, a major one). A wider slot (SUPERFLEX) goes to the positions it adds over FLEX (the
        quarterback, a major flex position there), split evenly; one that adds none is shared like FLEX."""
        out = {}
        for slot, eligible in flex_slots(rules).items():
            added = [p for p in eligible if p not in rules["flex_positions"]]
            spec = sport(rules.get("sport", "nfl"))  # the league's sport's typical shares
            out[slot] = ((1 / len(added) if pos in added else 0.0) if added
                         else spec.bot_flex_share.get(pos, spec.bot_flex_share_unlisted if pos in eligible else 0.0))
        return out

    def replacement(self, view: dict) -> dict[str, float]:
        """Projection of the last starter the league will still take at each position (classic VBD): rank
        ``teams x starting slots - already drafted`` among the available players, extrapolated linearly
        past the end of the list the view shows."""
        rules = view["rules"]
        out = {}
        for pos, shown in view["available"].items():
            vals = [p["proj"] or 0.0 for p in shown]
            need = rules["teams"] * (rules["roster_slots"].get(pos, 0) + sum(
                rules["roster_slots"][slot] * share for slot, share in self.flex_shares(pos, rules).items()))
            r = max(0, round(need) - view["drafted_by_position"].get(pos, 0))
            if not vals:
                out[pos] = 0.0
            elif r < len(vals):
                out[pos] = vals[r]
            else:
                slope = (vals[0] - vals[-1]) / max(1, len(vals) - 1)
                out[pos] = max(0.0, vals[-1] - slope * (r - len(vals) + 1))
        return out

    def rank(self, view, players):
        repl = self.replacement(view)
        rules = view["rules"]["roster_slots"]
        counts = view["roster_summary"]["counts"]
        held = [pos for pos, n in counts.items() for _ in range(n)]
        roster, unmet = roster_rules(view), view["roster_summary"]["unfilled_starters"]
        # a major flex position whose next player would fill an open flex slot
        flex_open = {pos for pos in counts if max(self.flex_shares(pos, view["rules"]).values(), default=0.0)
                     >= self.MAJOR_FLEX and unmet_starters([*held, pos], roster) < unmet}

        def value(p: dict) -> float:
            v = (p["proj"] or 0.0) - repl.get(p["pos"], 0.0)
            starter_open = counts.get(p["pos"], 0) < rules.get(p["pos"], 0)
            flexible = p["pos"] in flex_open
            return v if (starter_open or flexible) else 0.5 * v  # depth is worth less than a starter

        return sorted(players, key=lambda p: (-value(p), p["id"]))

    async def waiver_claims(self, view: dict) -> Answer:
        return upgrade_claims(view, "proj")

    def _gain(self, mine: list[dict], give: list[str], get: list[dict], roster: Roster) -> float:
        return _ros_value(_swap(mine, give, get), roster) - _ros_value(mine, roster)

    async def propose_trade(self, view: dict) -> Answer:
        roster = roster_rules(view)
        valuer = LineupValuer(roster.slot_counts(), roster.slot_positions(), roster.most)
        mine = view["my_roster"]
        # each roster sorted once; a 1-for-1 swap takes one entry out and puts one in (the same order a full
        # sort would give, so the same lineups and values)
        my_order = sorted(_ros_entry(c) for c in mine)
        my_base = valuer.value(my_order)
        # a player can only raise my starting value if he beats my weakest starter he could replace
        val = {c["id"]: float(c.get("proj_week") or 0.0) for c in mine}
        lineup = best_lineup({c["id"]: c["pos"] for c in mine}, val, roster)
        floor: dict[str, float] = {}
        for slot, ids in lineup.items():
            for pos in roster.flex_slots().get(slot, (slot,)):
                v = min((val.get(i, 0.0) if i else 0.0) for i in ids) if ids else 0.0
                floor[pos] = min(floor.get(pos, float("inf")), v)
        market = trade_market(view)
        best: tuple[float, str, str, str] | None = None
        for other in view["other_teams"]:
            theirs = other["roster"]
            their_order = sorted(_ros_entry(c) for c in theirs)
            their_base = valuer.value(their_order)
            for t in theirs:
                if float(t.get("proj_week") or 0.0) <= floor.get(t["pos"], 0.0):
                    continue
                t_entry = _ros_entry(t)
                # giving away a player who would not start beside t leaves the very same lineup (same value)
                with_t, starters = valuer.lineup(_swapped(my_order, "", t_entry))
                for g in mine:
                    if g["pos"] == t["pos"]:
                        continue  # a same-position swap cannot help both sides' starting value
                    after = valuer.value(_swapped(my_order, g["id"], t_entry)) if g["id"] in starters else with_t
                    my_gain = after - my_base
                    if my_gain <= TRADE_GAIN:
                        continue
                    cand = (my_gain, other["team"], g["id"], t["id"])
                    if best is not None and cand <= best:
                        continue  # it could not be the best: their side is not valued (the same pick, fewer lineups)
                    their_gain = valuer.value(_swapped(their_order, t["id"], _ros_entry(g))) - their_base
                    if their_gain >= 0 and market.problem(
                            Offer(view["team"], other["team"], (g["id"],), (t["id"],))) is None:
                        best = cand
        if best is None:
            return {"action": "pass",
                    "rationale": "no legal 1-for-1 trade raises my starting value without hurting theirs"}
        gain, team, give, get = best
        return {"action": "propose", "to_team": team, "give": [give], "get": [get],
                "rationale": f"raises my projected starting value by {gain:.1f} per week and does not lower yours"}

    def _judge(self, view: dict) -> Answer:
        roster = roster_rules(view)
        offer = view["offer"]
        gain = self._gain(view["my_roster"], [p["id"] for p in offer["you_give"]], offer["you_get"], roster)
        return {"action": "accept" if gain > 0 else "reject", "rationale": f"projected weekly gain {gain:+.1f}"}

    async def respond_to_offer(self, view):
        return self._judge(view)

    async def reply_to_counter(self, view):
        a = self._judge(view)
        return a if a["action"] == "accept" else {"action": "withdraw", "rationale": a["rationale"]}

    async def final_decision(self, view):
        return self._judge(view)


class RandomBot(_Bot):
    """Uniform over the legal actions of every decision, each from a generator keyed by the decision."""

    strategy = "random"

    async def draft_shortlist(self, view):
        """Uniform over full-size shortlists of the legal players the view shows."""
        avail = _available(view)
        rng = self.rng(f"shortlist:{view['pick']}")
        k = min(view["shortlist_size"], len(avail))
        idx = rng.choice(len(avail), size=k, replace=False)
        return {"shortlist": [avail[i]["id"] for i in sorted(idx)], "rationale": "random"}

    async def draft_queue(self, view):
        """Uniform over every legal queue: each ordered list of 1..``queue_size`` distinct legal players the view
        shows is equally likely (its length drawn in proportion to how many queues have it, then an ordered
        sample)."""
        avail = _available(view)
        rng = self.rng(f"queue:{view['pick']}:{view['picks_before']}")
        lengths = range(1, min(view["queue_size"], len(avail)) + 1)
        counts = [math.perm(len(avail), k) for k in lengths]
        k = lengths[int(rng.choice(len(counts), p=[c / sum(counts) for c in counts]))]
        idx = rng.choice(len(avail), size=k, replace=False)
        return {"queue": [avail[i]["id"] for i in idx], "rationale": "random"}

    async def draft_pick(self, view):
        cands = legal_players(view["shortlist_detail"], view["legal_positions"])
        return {"player_id": cands[int(self.rng(f"pick:{view['pick']}").integers(len(cands)))]["id"],
                "rationale": "random"}

    async def set_lineup(self, view):
        positions = {p["id"]: p["pos"] for p in view["players"]}
        roster = roster_rules(view)
        lineup = random_lineup(positions, roster, self.rng(f"lineup:{view['week']}"))
        answer = {"lineup": lineup, "rationale": "random legal lineup"}
        if roster.auto_subs:  # an ordered bench: any order of the players left
            rng = self.rng(f"bench:{view['week']}")
            answer["bench"] = _bench(view, lineup, lambda ids: [ids[i] for i in rng.permutation(len(ids))])
        return answer

    async def propose_trade(self, view):
        space = OfferSpace(trade_market(view), view["team"], [t["team"] for t in view["other_teams"]])
        return uniform_action(self.rng(f"trade:{view['week']}"), [{"action": "pass", "rationale": "random"}],
                              space, lambda o: {"action": "propose", "to_team": o.b, "give": list(o.a_gives),
                                                "get": list(o.b_gives), "rationale": "random"})

    def _reply(self, view: dict, fixed: tuple[str, ...], counter: str | None) -> Answer:
        offer = view["offer"]
        rng = self.rng(f"{view['decision']}:{view['week']}:{offer['from_team']}")
        space = OfferSpace(trade_market(view), view["team"], [offer["from_team"]] if counter else [],
                           size=len(offer["you_give"]))
        return uniform_action(rng, [{"action": a, "rationale": "random"} for a in fixed], space,
                              lambda o: {"action": counter, "give": list(o.a_gives), "get": list(o.b_gives),
                                         "rationale": "random"})

    async def waiver_claims(self, view):
        """Uniform over claiming nobody and every legal single claim (a FAAB bid uniform over 0..budget left)."""
        mine, free = view["my_roster"], _free_cards(view)
        positions = {c["id"]: c["pos"] for c in mine + free}
        actions = [None, *legal_swaps([c["id"] for c in mine], positions, [c["id"] for c in free], roster_rules(view))]
        rng = self.rng(f"{view['decision']}:{view['week']}")
        pick = actions[int(rng.integers(len(actions)))]
        if pick is None:
            return {"claims": [], "rationale": "random"}
        claim = {"add": pick[0], "drop": pick[1]}
        if view["mode"] == "faab":
            claim["bid"] = int(rng.integers(view["budget_left"] + 1))
        return {"claims": [claim], "rationale": "random"}

    async def ir_moves(self, view):
        """Uniform over moving nobody and every legal single IR move."""
        actions = [{"to_ir": [], "from_ir": []}, *legal_moves(view)]
        return {**actions[int(self.rng(f"ir:{view['week']}").integers(len(actions)))], "rationale": "random"}

    async def respond_to_offer(self, view):
        return self._reply(view, ("accept", "reject"), "counter")

    async def reply_to_counter(self, view):
        return self._reply(view, ("accept", "withdraw"), "final_counter")

    async def final_decision(self, view):
        return self._reply(view, ("accept", "reject"), None)


BOTS: dict[str, Callable[[str, int], Agent]] = {
    "random": RandomBot, "adp": ADPBot, "vorp": VORPBot, "recent_form": RecentFormBot,
}


def make_bot(strategy: str, team: str, seed: int) -> Agent:
    if strategy == "oracle":
        raise ValueError("the hindsight oracle uses actual points and exists for metrics only; it cannot play")
    if strategy not in BOTS:
        raise ValueError(f"unknown bot strategy {strategy!r}; allowed: {', '.join(BOTS)}")
    return BOTS[strategy](team, seed)


