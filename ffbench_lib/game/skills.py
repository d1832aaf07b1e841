"""Exam skills: how one frozen decision state (an exam's, :mod:`ffbench_lib.runs.exam`) is scored against what
really happened, whoever answers it. A skill registers itself (:func:`skill`), names the decision kind it asks,
draws its states from a played season (:meth:`Skill.draw`: the view an agent saw, and the truth to score by, kept
apart) and scores an answer exactly (:meth:`Skill.score`): the engine's own rules apply the answer (the decision
kind's ``resolve``: a bad answer is repaired as in a season, and says so), and the same oracle as the season
metric gives the best possible, so an exam's regret of a state is the season's regret of that team-week.

A state's truth never reaches an agent: :meth:`Skill.view` is the state's view alone.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Iterable

from ffbench_lib.game.decisions import REGISTRY, roster_from_rules
from ffbench_lib.game.rules.lineup import BENCH, substituted
from ffbench_lib.game.rules.roster import unmet_starters
from ffbench_lib.sport.lineup import hindsight_points

#: skill name -> its one instance
SKILLS: dict[str, "Skill"] = {}


def skill(cls: type["Skill"]) -> type["Skill"]:
    """Register a skill under its ``name``."""
    if cls.name in SKILLS:
        raise ValueError(f"skill {cls.name!r} is registered twice")
    SKILLS[cls.name] = cls()
    return cls


@dataclass(frozen=True)
class Scored:
    """One answer to one state: what the rules applied, by whom, and its score against the best possible."""

    applied: Any
    decided_by: str
    problems: tuple[str, ...]
    score: float
    best_possible: float
    extra: dict[str, Any]

    @property
    def regret(self) -> float:
        return round(self.best_possible - self.score, 2)


class Skill:
    """One skill: the decision kind it asks, how states are drawn from a season, how an answer scores."""

    name: ClassVar[str]
    kind: ClassVar[str]
    #: the decision kinds whose views a draw reads (its own kind, and for IR the week's waiver view)
    reads: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def kinds(cls) -> tuple[str, ...]:
        return (cls.kind, *cls.reads)

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        """Up to ``n`` states of one team-season from its decision ``records`` (the views as the agent saw them,
        in order) and the season's ``truth``: each ``{"week", "view", "truth"}``."""
        raise NotImplementedError

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        """``answer`` to ``state``, judged on the view it answered (:func:`shown`): with ``protected``, as a team
        shown protected numbers (a draft board or free-agent list cut by the protected value)."""
        raise NotImplementedError


def shown(state: dict, protected: bool) -> dict:
    """The view of ``state`` a candidate answers: its protected view where the season would have cut a list for a
    team shown protected numbers (``protected``), else the state's own."""
    return state.get("protected_view", state["view"]) if protected else state["view"]


def drawn(records: list[dict], kind: str, n: int, rng: random.Random,
          key: Callable[[dict], str] | None = None) -> list[dict]:
    """Up to ``n`` of a team-season's ``kind`` decisions, spread over the season as :func:`stratified` spreads
    weeks (a team may meet two offers in one week), and over the strata ``key`` names a view's."""
    mine = [r for r in records if r["decision"] == kind]
    by = (lambda i: key(mine[i]["view"])) if key else None
    return [mine[i] for i in stratified(list(range(len(mine))), n, rng, by)]


def stratified(weeks: list[int], n: int, rng: random.Random, key: Callable[[int], str] | None = None) -> list[int]:
    """``n`` of ``weeks`` (sorted), one drawn from each of ``n`` consecutive, near-equal bins: early, middle and
    late weeks alike (all of them when there are no more than ``n``). With ``key`` (a week's stratum: position
    scarcity), every stratum the weeks hold is then drawn where ``n`` allows: a stratum the draw missed replaces
    the draw of a bin that holds it, among the bins whose stratum is drawn twice or more (the week drawn again
    from that bin's weeks of the missing stratum), so a team-season's few states cover a short roster and a full
    one whenever it met both."""
    weeks = sorted(weeks)
    if len(weeks) <= n:
        return weeks
    bounds = [round(i * len(weeks) / n) for i in range(n + 1)]
    bins = [weeks[bounds[i]: bounds[i + 1]] for i in range(n)]
    out = [b[rng.randrange(len(b))] for b in bins]
    if key is None:
        return out
    for stratum in sorted({key(w) for w in weeks}):
        drawn_now = [key(w) for w in out]
        if stratum in drawn_now:
            continue
        room = [i for i, b in enumerate(bins) if drawn_now.count(drawn_now[i]) > 1 and any(key(w) == stratum
                                                                                           for w in b)]
        if room:
            i = room[rng.randrange(len(room))]
            pick = [w for w in bins[i] if key(w) == stratum]
            out[i] = pick[rng.randrange(len(pick))]
    return out


def scarcity(view: dict) -> str:
    """A week's position-scarcity stratum: ``short`` when the players who will play (no bye, not ruled Out) cannot
    fill every starting slot, else ``full``; a draft board's: ``scarce`` when the team still needs a starter at a
    position of which the league has drafted half its starters or more, else ``open``."""
    roster = roster_from_rules(view["rules"])
    if view["decision"] == "draft":
        teams = view["rules"]["teams"]
        return "scarce" if any(view["drafted_by_position"].get(p, 0) * 2 >= teams * roster.starting(p)
                               for p in view["thin_positions"]) else "open"
    cards = view.get("players") or view["my_roster"]
    playing = [c["pos"] for c in cards if not c.get("zero_flags")]
    return "short" if unmet_starters(playing, roster) else "full"


@skill
class StartSit(Skill):
    """Start/sit: set a lineup from the roster as it stood that week. Score: the points the lineup's starters scored
    (an FPL bench's automatic substitutions applied, as the season scores them); best possible: the hindsight-
    optimal legal lineup of the same roster (:func:`~ffbench_lib.sport.lineup.hindsight_points`)."""

    name = "start_sit"
    kind = "set_lineup"

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        by_week = {r["week"]: r for r in records if r["decision"] == self.kind}
        out = []
        for w in stratified(list(by_week), n, rng, lambda w: scarcity(by_week[w]["view"])):
            view = by_week[w]["view"]
            ids = [p["id"] for p in view["players"]]
            played = truth.played(w)
            out.append({"week": w, "view": view, "truth": {
                "points": {p: float(truth.points(w).get(p, 0.0)) for p in ids},
                **({"played": sorted(p for p in ids if p in played)} if played is not None else {})}})
        return out

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        view, truth = state["view"], state["truth"]
        roster = roster_from_rules(view["rules"])
        positions = {p["id"]: p["pos"] for p in view["players"]}
        points = truth["points"]
        out = REGISTRY[self.kind].resolve(answer, view)
        decided = [list(s) for s in out.value.starters()] + [[BENCH, pid, by] for pid, by in out.value.bench]
        if roster.auto_subs:  # as the season scores a formation: a starter who did not play makes way
            decided = substituted(decided, positions, {p: True for p in truth.get("played", ())}, roster)
        started = [pid for slot, pid, _ in decided if pid is not None and slot != BENCH]
        score = round(float(sum(points.get(p, 0.0) for p in started)), 2)
        best = round(hindsight_points(positions, points, roster.slot_counts(), roster.slot_positions(),
                                      roster.most), 2)
        return Scored(out.applied, out.decided_by, tuple(out.problems), score, best,
                      {"roster": sorted(positions), "started": sorted(started)})


def points_from(truth: Any, ids: Iterable[str], w: int) -> dict[str, dict[str, float]]:
    """Each week's real points of ``ids`` from week ``w`` to the season's end, keyed by the week (as a state's
    truth stores them)."""
    ids = list(ids)
    return {str(x): {p: float(truth.points(x).get(p, 0.0)) for p in ids} for x in range(w, truth.weeks + 1)}


def rest_of_season(ids: Iterable[str], positions: dict[str, str], weeks: Iterable[dict[str, float]], roster) -> float:
    """A roster's rest-of-season value, the exams' one rule for a move: the summed points of its hindsight-optimal
    lineup each remaining week (``weeks``: each week's points), no other move made."""
    held = {p: positions[p] for p in ids}
    counts, slots = roster.slot_counts(), roster.slot_positions()
    return round(sum(hindsight_points(held, pts, counts, slots, roster.most) for pts in weeks), 2)


@skill
class TradeAcceptance(Skill):
    """Trade acceptance: accept or reject an offer another team made (a counter counts as not accepting: the exam
    holds the roster fixed). Score: the rest-of-season value of the roster the answer leaves, the summed points of
    its hindsight-optimal lineup each week from the trade's week to the season's end, no other move made; best
    possible: the better of accepting and keeping."""

    name = "trade_acceptance"
    kind = "respond_to_offer"

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        out = []
        for r in drawn(records, self.kind, n, rng, scarcity):
            view, w = r["view"], r["week"]
            ids = [c["id"] for c in view["my_roster"]] + [c["id"] for c in view["offer"]["you_get"]]
            out.append({"week": w, "view": view, "truth": {"weeks": points_from(truth, ids, w)}})
        return out

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        view, truth = state["view"], state["truth"]
        roster = roster_from_rules(view["rules"])
        mine = [c["id"] for c in view["my_roster"]]
        give = {c["id"] for c in view["offer"]["you_give"]}
        get = [c["id"] for c in view["offer"]["you_get"]]
        positions = {c["id"]: c["pos"] for c in (*view["my_roster"], *view["offer"]["you_get"])}
        weeks = list(truth["weeks"].values())
        keep = rest_of_season(mine, positions, weeks, roster)
        accept = rest_of_season([p for p in mine if p not in give] + get, positions, weeks, roster)
        out = REGISTRY[self.kind].resolve(answer, view)
        action = out.value[0]
        return Scored(out.applied, out.decided_by, tuple(out.problems), accept if action == "accept" else keep,
                      max(keep, accept), {"action": action, "accept_value": accept, "keep_value": keep})


@skill
class WaiverChoice(Skill):
    """Waiver choice: claims on the free agents shown; the exam holds the roster and has no other claimant, so the
    top legal claim is the move (a bid is not scored). Score: the rest-of-season value
    (:func:`rest_of_season`) of the roster it leaves (no claim: the roster as it is); best possible: the best over
    every legal single move the view allows (add a shown free agent, drop a roster player) and no move, each
    valued once when the state is drawn."""

    name = "waiver_choice"
    kind = "waiver_claims"

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        from ffbench_lib.game.decisions.waiver_claims import legal_swaps

        out = []
        for r in drawn(records, self.kind, n, rng, scarcity):
            view, w = r["view"], r["week"]
            roster = roster_from_rules(view["rules"])
            mine = [c["id"] for c in view["my_roster"]]
            both = [view["free_agents"], *([r["protected_view"]["free_agents"]] if "protected_view" in r else [])]
            free = list(dict.fromkeys(c["id"] for lists in both for cs in lists.values() for c in cs))
            positions = {c["id"]: c["pos"] for c in view["my_roster"]}
            positions.update({c["id"]: c["pos"] for lists in both for cs in lists.values() for c in cs})
            weeks = list(points_from(truth, positions, w).values())
            values = {_move(None, None): rest_of_season(mine, positions, weeks, roster)}
            for add, drop in legal_swaps(mine, positions, free, roster):
                values[_move(add, drop)] = rest_of_season([p for p in mine if p != drop] + [add], positions, weeks,
                                                          roster)
            out.append({"week": w, "view": view, "truth": {"values": values},
                        **({"protected_view": r["protected_view"]} if "protected_view" in r else {})})
        return out

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        """The best possible is over the moves the answered view allows (a protected list shows other players)."""
        view = shown(state, protected)
        values = state["truth"]["values"]
        out = REGISTRY[self.kind].resolve(answer, view)
        top = out.value[0] if out.value else None
        move = _move(top["add"], top["drop"]) if top else _move(None, None)
        listed = {c["id"] for cs in view["free_agents"].values() for c in cs}
        best = max(v for m, v in values.items() if m.split("|")[0] in listed or m == _move(None, None))
        return Scored(out.applied, out.decided_by, tuple(out.problems), values[move], best,
                      {"add": top["add"] if top else None, "drop": top["drop"] if top else None,
                       "keep_value": values[_move(None, None)]})


def _move(add: str | None, drop: str | None) -> str:
    """A waiver move as a truth key: ``add|drop`` (``|`` alone: no move)."""
    return f"{add or ''}|{drop or ''}"


@skill
class DraftPick(Skill):
    """Draft pick: name the players you would take from the board (a shortlist); the pick is its first legal entry.
    Score: the pick's season points above his position's replacement level (the season of the player ranked
    teams x starting slots + 1 at the position, flex aside); best possible: the best such value on the board at a
    position the team may draft. The caveat (:data:`DRAFT_CAVEAT`) goes wherever the result is shown."""

    name = "draft_pick"
    kind = "draft_shortlist"

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        mine = [r for r in records if r["decision"] == self.kind]
        by_round: dict[int, dict] = {}
        for r in mine:  # a round's first ask (asked on deck, before the previous pick: that pick's board)
            by_round.setdefault(r["view"]["round"], r)
        out = []
        par = truth.above_replacement()
        for rnd in stratified(list(by_round), n, rng, lambda rnd: scarcity(by_round[rnd]["view"])):
            r = by_round[rnd]
            view = r["view"]
            boards = [view, *([r["protected_view"]] if "protected_view" in r else [])]
            ids = list(dict.fromkeys(c["id"] for v in boards for cs in v["available"].values() for c in cs))
            gone = truth.drafted_before(r["pick"])
            out.append({"week": None, "round": rnd, "view": view, "truth": {
                "par": {p: par.get(p, 0.0) for p in ids}, "taken_before_turn": sorted(p for p in ids if p in gone)},
                **({"protected_view": r["protected_view"]} if "protected_view" in r else {})})
        return out

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        """Judged as the season judges a shortlist at the team's turn: players the view showed on deck but others
        drafted before the turn are dropped (not the answer's mistake); a shortlist left empty is the repair (a
        season would ask again, with the board then), marked."""
        from types import SimpleNamespace

        from ffbench_lib.game.phases.draft import judge_shortlist

        view, par = shown(state, protected), state["truth"]["par"]
        taken = set(state["truth"].get("taken_before_turn", ()))
        out, notes = judge_shortlist(SimpleNamespace(drafted=lambda: taken), view, answer)
        if out is None:  # every shortlisted player went before the turn: the repair on the board then
            out, notes = judge_shortlist(SimpleNamespace(drafted=lambda: taken), view, None)
            notes = ["every shortlisted player was drafted before the turn (a season asks again)"] + notes
            out = replace(out, decided_by="fallback")
        legal = set(view["legal_positions"])
        cards = [c for cs in view["available"].values() for c in cs if c["id"] not in taken]
        pick = out.value[0] if out.value else None
        best = max((par[c["id"]] for c in cards if c["pos"] in legal), default=0.0)
        return Scored(out.applied, out.decided_by, tuple(notes + list(out.problems)), round(par.get(pick, 0.0), 2),
                      round(best, 2), {"pick": pick})


#: what a draft pick's score leaves out, said wherever the result is shown
DRAFT_CAVEAT = ("a pick's value to one roster also depends on the rest of the roster and on later picks; points "
                "above replacement rank the bots as full seasons do, a roster-fit rule did not (the issue's pilot), "
                "and a pick barely correlates with another pick's outcome, so an exam saves little over seasons here")


@skill
class IRChoice(Skill):
    """IR choice (leagues with IR slots and waivers): move players ruled Out to IR and bring IR players back (with a
    drop when the roster is full). The exam holds every other move but the two an IR move exists for, each by one
    rule: a spot a player moved to IR frees (and no player back from IR takes) is filled with the free agent shown
    that week (the team's waiver view) who adds the most rest-of-season value, one spot at a time (a spot a drop
    opens stays open: a waiver move is not the IR decision's); a player on IR comes
    back the first later week he plays, into an open spot, else in place of the latest such free agent, else for
    the active player who scores least from then on when that player scores less than he does (the drop a season's
    IR answer would name), within the caps. Score: the summed points of the hindsight-optimal lineup of the active
    roster each week from this one to the season's end; best possible: the best over every legal answer, each
    valued when the state is drawn."""

    name = "ir_choice"
    kind = "ir_moves"
    reads = ("waiver_claims",)

    def draw(self, records: list[dict], truth: Any, n: int, rng: random.Random) -> list[dict]:
        waivers = {r["week"]: r for r in records if r["decision"] == "waiver_claims"}
        out = []
        for r in drawn([r for r in records if r["week"] in waivers], self.kind, n, rng, scarcity):  # week 1: none
            view, w = r["view"], r["week"]
            lists = {"values": waivers[w]["view"]["free_agents"]}
            if "protected_view" in waivers[w]:  # a protected team's spot is filled from its own (cut) list
                lists["protected_values"] = waivers[w]["protected_view"]["free_agents"]
            out.append({"week": w, "view": view, "truth": {
                k: ir_values(view, [c for cs in fa.values() for c in cs], truth, w) for k, fa in lists.items()}})
        return out

    def score(self, state: dict, answer: Any, protected: bool = False) -> Scored:
        truth = state["truth"]
        values = truth["protected_values"] if protected and "protected_values" in truth else truth["values"]
        out = REGISTRY[self.kind].resolve(answer, state["view"])
        key = ir_key(out.value)
        return Scored(out.applied, out.decided_by, tuple(out.problems), values[key], max(values.values()),
                      {"to_ir": sorted(out.value["to_ir"]), "from_ir": out.value["from_ir"],
                       "keep_value": values[ir_key({"to_ir": [], "from_ir": []})]})


def ir_key(answer: dict) -> str:
    """An IR answer as a truth key: the players to IR, sorted, then each player back with his drop, sorted."""
    back = sorted(f"{b['player']}>{b.get('drop') or ''}" for b in answer["from_ir"])
    return ",".join(sorted(answer["to_ir"])) + "|" + ",".join(back)


def ir_answers(view: dict) -> list[dict]:
    """Every legal IR answer of a view: each set of eligible players to IR with each choice, per IR player, of
    staying or coming back (into an open spot or for a named drop), those the rules accept as they are."""
    from itertools import combinations, product

    from ffbench_lib.game.decisions.ir_moves import ir_eligible

    outs = [c["id"] for c in view["my_roster"] if ir_eligible(c)]
    active = [c["id"] for c in view["my_roster"]]
    choices = [[None, *({"player": c["id"], "drop": d} for d in [None, *active])] for c in view["ir"]]
    found = []
    for k in range(len(outs) + 1):
        for to_ir in combinations(outs, k):
            for backs in product(*choices):
                cand = {"to_ir": list(to_ir), "from_ir": [b for b in backs if b is not None]}
                if not REGISTRY["ir_moves"].resolve(cand, view).problems:
                    found.append(cand)
    none = {"to_ir": [], "from_ir": []}  # what the rules fall back to, legal or not (a roster that cannot field)
    return found if none in found else [none, *found]


def ir_values(view: dict, free: list[dict], truth: Any, w: int) -> dict[str, float]:
    """:func:`ir_key` -> the rest-of-season value of every legal answer (:class:`IRChoice`'s rule)."""
    from ffbench_lib.game.rules.roster import within_caps

    roster = roster_from_rules(view["rules"])
    counts, slots = roster.slot_counts(), roster.slot_positions()
    cards = [*view["my_roster"], *view["ir"], *free]
    positions = {c["id"]: c["pos"] for c in cards}
    later = range(w, truth.weeks + 1)
    points = {int(x): pts for x, pts in points_from(truth, positions, w).items()}
    plays = {x: truth.plays(x) for x in later}

    def weekly(active: list[str], x: int) -> float:
        return hindsight_points({p: positions[p] for p in active}, points[x], counts, slots, roster.most)

    values: dict[str, float] = {}
    for ans in ir_answers(view):
        gone = set(ans["to_ir"]) | {b["drop"] for b in ans["from_ir"] if b["drop"]}
        back = [b["player"] for b in ans["from_ir"]]
        active = [c["id"] for c in view["my_roster"] if c["id"] not in gone] + back
        on_ir = [c["id"] for c in view["ir"] if c["id"] not in back] + list(ans["to_ir"])
        fills: list[str] = []
        for _ in range(len(ans["to_ir"]) - len(back)):  # each spot a move to IR frees (a drop's stays open)
            options = [f["id"] for f in free if f["id"] not in fills
                       and within_caps([positions[p] for p in (*active, *fills, f["id"])], roster) is None]
            if not options:
                break
            fills.append(max(options, key=lambda f: (sum(weekly([*active, *fills, f], x) for x in later), f)))
        total, returned = 0.0, []
        for x in later:
            for p in on_ir if x > w else ():  # back the first later week he plays
                if p in returned or p not in plays[x]:
                    continue
                held = [*active, *fills, *returned]

                def fits(leaving: str | None) -> bool:
                    return within_caps([positions[q] for q in held if q != leaving] + [positions[p]], roster) is None
                if len(held) < view["active_spots"] and fits(None):
                    returned.append(p)
                elif fills and fits(fills[-1]):  # for the latest free agent the rule added
                    fills.pop()
                    returned.append(p)
                else:  # for the active player worth least from here (the drop a season's IR answer names)
                    rest = {q: sum(points[y][q] for y in later if y >= x) for q in active}
                    drops = sorted((q for q in active if fits(q)), key=lambda q: (rest[q], q))
                    if drops and rest[drops[0]] < sum(points[y][p] for y in later if y >= x):
                        active = [q for q in active if q != drops[0]]
                        returned.append(p)
            total += weekly([*active, *fills, *returned], x)
        values[ir_key(ans)] = round(total, 2)
    return values
