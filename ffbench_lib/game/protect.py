"""Protected numbers (``information.numbers: protected``): the numbers a masked agent's cards show are generalised so
that every card, read alone, matches at least :data:`K` real players of the season (k-anonymity of a card over the
season's player table), and the cards show no team: it is not k-anonymity of a whole run, since a player's cards
in several prompts can be intersected (``ffbench masking audit`` measures that too; docs/memory.md).

Masking (:mod:`~ffbench_lib.game.masking`) hides names; the numbers stay exact, and of the 50 players with the best
ADP of 2024 every one is unique in the season's table by his draft card alone. Protection applies before the
pseudonyms, in the same wrapper (:class:`~ffbench_lib.agents.masked.MaskedAgent`), so bots keep the exact numbers
(they are the noise-free control of the masked-vs-unmasked ablation) and phases, logs and tables stay exact; only
which players a protected team's lists hold is the firewall's (those lists are the legal set: see below).

**The generalisation.** Mondrian partitioning (LeFevre et al., 2006), per position, of every card's numeric
quasi-identifiers: a group of at least ``2K`` players is split at the median of the dimension with the widest range
(relative to the position's whole range, times a weight), both halves keeping at least ``K`` players; ties in the
split dimension are broken by a keyed hash of the run seed and the player id. Every card of a class then shows, per
field, the class's range as a string (``180-210``: the lowest value rounded down, the highest rounded up; ``or -``
appended when some members have none) or, when all members agree, the value itself. All members of a class show one
card, so each card is consistent with at least ``K`` players (more: others whose values fall in the ranges).

* draft cards and the shortlist detail: one partition of the draft pool (the preseason card's and the detail's fields
  together, so linking a pseudonym's card and detail narrows nothing);
* week cards (lineups, waivers, IR, trades): one partition per week over the players known before that week (their
  preseason fields and the season to date), built from ``Firewall.week(w)`` alone: no future data moves it.

Beyond the values. A protected team's draft board and free-agent lists are cut by the protected value (a range's
midpoint, then the keyed hash: :meth:`Protector.ranked`, used by the firewall for :attr:`Firewall.protected_teams
<ffbench_lib.game.views.Firewall.protected_teams>`), never by the exact projection, so that a card's presence on a
list says no more than the card (cut by the exact projection, 169 of 1,440 board cards named their player); the
legal set is that list. The player's real team and this week's opponent are withheld (:data:`WITHHELD`): as team
pseudonyms, a prompt's cards of one team match a few real teams, often one (13 of 25 teams from one draft prompt),
the opponents shown identify every team by week 2, and with the teams known most cards name their player. ``recent``
(the last three games, which no prompt shows) is left out; positional strengths (sums of exact projections, a single
QB's projection for a one-QB slot) are a team's own recomputed from its protected cards, the league's average
rounded to multiples of :data:`STRENGTH_STEP`; a team's points for are rounded to :data:`POINTS_STEP`; a number in another team's
rationale reads ``#`` (a bot's quotes a sum of exact projections); and the season's year, which says which season's
table to look a card up in, is withheld (``season`` reads :data:`SEASON_HIDDEN`). The system prompt says what the
cards show instead. A bye is shown as its team's bye class (:func:`bye_classes`: consecutive bye weeks of at least
:data:`TEAMS_PER_BYE` teams), the same on every card of a team, and classes are formed within one bye class.
Injury statuses and zero flags (bye, out) stay exact where at least K players of a position share them this week
(they change what a lineup scores); where fewer do, they are shown as the class's ``Out or Questionable``,
``bye or out`` (both score nothing), and only then ``bye or -``, so that week cards too match K players each (a
kicker on bye in a week with two byes would otherwise be one of two).

:func:`parse_tables` and :func:`consistent` are the audit's half (``ffbench masking audit``): they read the tables a
prompt shows back into cells and count the real players a shown row fits.
"""
from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Iterable

import numpy as np

from ffbench_lib.game.render import fmt

#: every card must match at least this many real players of the season's table
K = 5
#: a bye is shown as its team's bye class: consecutive bye weeks holding at least this many NFL teams
TEAMS_PER_BYE = 10
#: what ``season`` reads in a protected view (the year would say which season's table to look a card up in)
SEASON_HIDDEN = "(year withheld)"
#: card fields a protected card withholds, and what they read: the player's real team and this week's opponent (as
#: pseudonyms, a prompt's cards of one team pseudonym match few real teams, and the opponents shown name every team
#: by week 2)
WITHHELD = ("team", "opp")
WITHHELD_TEXT = "?"
#: positional strengths are shown to this step (a one-QB slot's strength is that QB's exact projection); a team's own
#: are then recomputed from its protected cards (:meth:`Protector._team_strength`), which say no more than the cards
STRENGTH_STEP = 5.0
STRENGTH_KEYS = frozenset({"my_strength", "strength", "league_avg_strength"})
#: a team's strength beside the cards it is computed from, in a view: (roster key, strength key)
TEAM_STRENGTHS = (("my_roster", "my_strength"), ("roster", "strength"))
#: a team's points (its record's points for, a playoff round's so far) are shown to this step: they are sums of its
#: starters' exact points, a constraint on who started
POINTS_STEP = 10.0
POINTS_KEYS = frozenset({"points_for", "you", "opponent"})
#: the preseason quasi-identifiers (a draft card's and the shortlist detail's numbers)
PRESEASON_FIELDS = ("adp", "proj", "prev_pts", "prev_g", "prev_ppg", "prev2_pts", "prev2_g", "prev2_ppg",
                    "proj_builtin", "proj_sportsdataio", "proj_fantasypros", "rookie", "nfl_draft_pick")
#: a week card's quasi-identifiers: its preseason fields and the season to date (``price``/``owned``: FPL's market)
WEEK_FIELDS = ("adp", "proj", "prev_pts", "prev_g", "std_g", "std_pts", "std_ppg", "last3_avg", "proj_week",
               "price", "owned")
#: a week card's zero flags (bye, out): what a lineup scores, shown exact wherever a class shares them
FLAGS = "zero_flags"
#: a week card's fields classes are formed within (not split on): flags and injury status (see :func:`generalise`)
WEEK_EXACT = (FLAGS, "injury")
#: a split's preference per field (a field's relative range is multiplied by it): the numbers agents lean on most
WEIGHTS = {"proj": 4.0, "adp": 4.0, "proj_week": 4.0, "prev_pts": 2.0, "std_pts": 2.0}
#: the spread a dimension counts when some members of a group have a value and some none
MISSING_SPREAD = 0.5
#: the weight of a field WEIGHTS does not name
DEFAULT_WEIGHT = 1.0
#: decimals a range of a field is shown with (others: whole numbers)
DECIMALS = {"price": 1}
#: lists the firewall orders by an exact number, and the number: ordered by its protected value instead
ORDERED_BY = {"available": "proj", "free_agents": "proj_week"}
#: free text from another team a view quotes (a bot's "projected weekly gain +3.2" is a sum of exact projections)
UNTRUSTED_TEXT = frozenset({"their_rationale_untrusted"})
#: a number in such text (not a part of an id such as ``00-0035208`` or of ``1-for-1``), and what it reads instead
TEXT_NUMBER = re.compile(r"(?<![\w.-])[-+]?\d+(?:[.,]\d+)*(?![\w-])")
NUMBER_WITHHELD = "#"
RANGE = re.compile(r"^(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)$")


def natural(s: str) -> tuple:
    """Sort key putting ``9-11`` before ``12-14`` (and ``RB-999`` before ``RB-1000``)."""
    return tuple(int(p) if i % 2 else p for i, p in enumerate(re.split(r"(\d+)", s)))


def _keyed(seed: int, key: str) -> str:
    return hashlib.sha256(f"ffbench-protect|{seed}|{key}".encode()).hexdigest()


def midpoint(x: Any) -> float | None:
    """A shown number as a number: a range's midpoint (``"180-210"`` -> 195.0), a value as it is, None for none."""
    if x is None or isinstance(x, bool):
        return None if x is None else float(x)
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        m = RANGE.match(x.removesuffix(" or -"))
        if m:
            return (float(m.group(1)) + float(m.group(2))) / 2
        try:
            return float(x.removesuffix(" or -"))
        except ValueError:
            return None
    return None


# ------------------------------------------------------------------------------------------------ partition
def _matrix(cards: list[dict], fields: tuple[str, ...]) -> np.ndarray:
    """Cards as a float matrix over ``fields`` (booleans 0/1, missing NaN)."""
    out = np.full((len(cards), len(fields)), np.nan)
    for i, c in enumerate(cards):
        for j, f in enumerate(fields):
            v = c.get(f)
            if v is not None and not isinstance(v, str):
                out[i, j] = float(v)
    return out


def mondrian(x: np.ndarray, order: list[str], k: int = K, weights: np.ndarray | None = None) -> list[np.ndarray]:
    """Row indices of ``x`` in classes of at least ``k`` rows (all in one class when there are fewer than ``k``):
    split at the median of the widest weighted dimension (relative to its range over all rows) while both halves
    keep ``k``; ``order`` (a key per row) breaks ties. A missing value sorts below every number."""
    n, d = x.shape
    weights = np.ones(d) if weights is None else weights
    filled = x.copy()
    lo, hi = np.nanmin(np.where(np.isnan(x), np.inf, x), axis=0), np.nanmax(np.where(np.isnan(x), -np.inf, x), axis=0)
    span = np.where(np.isfinite(hi - lo) & (hi > lo), hi - lo, 1.0)
    for j in range(d):  # a missing value: one span below the lowest (sorted first, counted as a spread)
        base = lo[j] if np.isfinite(lo[j]) else 0.0
        filled[np.isnan(x[:, j]), j] = base - span[j]
    rank = np.argsort(np.argsort(np.array(order, dtype=object), kind="stable"), kind="stable")
    out: list[np.ndarray] = []
    todo = [np.arange(n)]
    while todo:
        rows = todo.pop()
        if len(rows) < 2 * k:
            out.append(rows)
            continue
        sub, raw = filled[rows], x[rows]
        have = ~np.isnan(raw)
        some = have.any(axis=0)
        lo_s = np.where(some, np.nanmin(np.where(have, raw, np.inf), axis=0), 0.0)
        hi_s = np.where(some, np.nanmax(np.where(have, raw, -np.inf), axis=0), 0.0)
        mixed = some & ~have.all(axis=0)  # some members have a value, some none: a spread too
        spread = ((hi_s - lo_s) / span + MISSING_SPREAD * mixed) * weights
        j = int(np.argmax(spread))  # the first widest
        if spread[j] <= 0:  # the members agree on every dimension: one class
            out.append(rows)
            continue
        srt = rows[np.lexsort((rank[rows], filled[rows, j]))]
        half = len(srt) // 2
        todo += [srt[:half], srt[half:]]
    return sorted(out, key=lambda r: min(r))


def _shown(values: list[Any], field: str) -> Any:
    """What every card of a class shows for ``field``: the value all members share, else their range."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(v == present[0] for v in present) and len(present) == len(values):
        return present[0]
    if isinstance(present[0], (str, bool)):  # a category (a bye class): its values
        text = " or ".join(sorted({str(v) for v in present}, key=natural))
    else:
        nums = [float(v) for v in present]
        places = DECIMALS.get(field, 0)
        scale = 10 ** places
        low, high = math.floor(min(nums) * scale) / scale, math.ceil(max(nums) * scale) / scale
        text = f"{low:.{places}f}" if low == high else f"{low:.{places}f}-{high:.{places}f}"
    return text if len(present) == len(values) else f"{text} or -"


def _shown_flags(values: list[Any]) -> Any:
    """A class's zero flags: the flags all members share (a list, as a card has them), else the members' flags as
    ``bye or -`` (a player without flags is ``-``, last): a flag fewer than K players of a position have this week
    (a kicker on bye) would otherwise single out its players and the flag-less members of their class."""
    keys = {tuple(v or ()) for v in values}
    if len(keys) == 1:
        return values[0]
    return " or ".join(sorted((fmt(list(k)) for k in keys), key=lambda t: (t == "-", t)))


def bye_classes(byes: Iterable[int], teams: int = TEAMS_PER_BYE) -> dict[int, str]:
    """bye week -> what every card of a team with that bye shows: consecutive bye weeks grouped until the group
    holds at least ``teams`` teams (a short last group joins the one before), as a range (``"5-6"``)."""
    weeks = sorted(b for b in byes if b is not None)
    groups: list[list[int]] = []
    for b in weeks:
        if groups and (len(groups[-1]) < teams or b == groups[-1][-1]):
            groups[-1].append(b)
        else:
            groups.append([b])
    if len(groups) > 1 and len(groups[-1]) < teams:
        last = groups.pop()
        groups[-1] += last
    return {b: (f"{g[0]}" if g[0] == g[-1] else f"{g[0]}-{g[-1]}") for g in groups for b in g}


def _exact_parts(field: str, v: Any) -> tuple:
    """A card's group key parts for an ``exact`` field: its value, and for the zero flags first whether it has any
    (so that a kicker on bye and one ruled out, both scoring nothing, share a class before flagged and unflagged do)."""
    if field == FLAGS:
        return bool(v), tuple(v or ())
    return (tuple(v) if isinstance(v, list) else v,)


def generalise(cards: dict[str, dict], fields: tuple[str, ...], seed: int, k: int = K,
               byes: dict[int, str] | None = None, exact: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """player -> the shown value of each of ``fields`` his card has, per class of a Mondrian partition of
    ``cards`` (player -> card) within groups of one position, one shown bye (with ``byes``, :func:`bye_classes`:
    the team's bye class, the same on every card of a team) and one value of each ``exact`` field (a week's flags
    and injury status, which change what a lineup scores). A group smaller than ``k`` joins the largest group that
    shares the most of its key, or with none that large the small groups sharing it pool together (given up in the
    order bye, the last ``exact`` field: an injury status is then shown as its members' ``Doubtful or Questionable``,
    which flags: ``bye or out``, and whether any: ``bye or -``)."""
    groups: dict[tuple, list[str]] = {}
    for pid, c in cards.items():
        bye = c.get("bye")
        key = (c["pos"], *(part for f in exact for part in _exact_parts(f, c.get(f))),
               "" if byes is None or bye is None else byes.get(bye, str(bye)))
        groups.setdefault(key, []).append(pid)
    for level in range(len(next(iter(groups), ())) - 1, 0, -1):  # the shared prefix: all but the bye, ..., the position
        for prefix in sorted({g[:level] for g, ids in groups.items() if len(ids) < k}, key=str):
            near = sorted((g for g in groups if g[:level] == prefix), key=lambda g: (-len(groups[g]), str(g)))
            small = [g for g in near if len(groups[g]) < k]
            target = near[0]  # the largest group sharing the prefix; with none of k, the small ones pool together
            for g in small:
                if g != target:
                    groups[target] = groups[target] + groups.pop(g)
    out: dict[str, dict[str, Any]] = {}
    for key, ids in sorted(groups.items(), key=lambda kv: str(kv[0])):
        ids = sorted(ids)
        rows = [cards[p] for p in ids]
        have = tuple(f for f in fields if any(f in c for c in rows))
        x = _matrix(rows, have) if have else np.zeros((len(ids), 0))
        weights = np.array([WEIGHTS.get(f, DEFAULT_WEIGHT) for f in have])
        for cls in mondrian(x, [_keyed(seed, p) for p in ids], k, weights):
            members = [ids[i] for i in cls]
            shown = {f: _shown([cards[p].get(f) for p in members], f) for f in have}
            if byes is not None:  # the team's bye class ("or -" where a player without a team joined it)
                shown["bye"] = _shown([byes.get(b, str(b)) if b is not None else None
                                       for b in (cards[p].get("bye") for p in members)], "bye")
            for f in exact:
                shown[f] = _shown_flags([cards[p].get(f) for p in members]) if f == FLAGS else _shown(
                    [cards[p].get(f) for p in members], f)
            out.update({p: shown for p in members})
    return out


# ------------------------------------------------------------------------------------------------ the views
class Protector:
    """Protected numbers for one run (its firewall and seed): :meth:`view` is the view as a protected agent sees it
    (before pseudonyms); ``as_numbers`` shows a range as its midpoint (a float: what a bot could compute with)."""

    def __init__(self, fw, seed: int, k: int = K, as_numbers: bool = False):
        self.fw, self.seed, self.k, self.as_numbers = fw, seed, k, as_numbers
        self._preseason: dict[str, dict[str, Any]] | None = None
        self._weeks: dict[int, dict[str, dict[str, Any]]] = {}
        self._slots: dict[str, int] = {}  # the view's roster slots, while :meth:`view` walks it
        #: bye week -> its class (published with the schedule, before the season)
        self.byes = bye_classes(fw.catalog.byes.values())

    # the partitions: of the draft pool, and of each week's known players
    def preseason(self) -> dict[str, dict[str, Any]]:
        if self._preseason is None:
            pool = self.fw.catalog.pool_ids
            cards = dict(zip(pool, self.fw.shortlist_detail(list(pool))))
            self._preseason = generalise(cards, PRESEASON_FIELDS, self.seed, self.k, self.byes)
        return self._preseason

    def week(self, w: int) -> dict[str, dict[str, Any]]:
        if w not in self._weeks:
            known = sorted(self.fw.week(w).known_players())
            cards = {p: self.fw.player_week(p, w) for p in known}
            self._weeks[w] = generalise(cards, WEEK_FIELDS, self.seed, self.k, self.byes, WEEK_EXACT)
        return self._weeks[w]

    def card(self, card: dict, week: int | None) -> dict:
        pid = card["id"]
        if "std_g" in card:
            if week is None:
                raise ValueError(f"a week card of {pid} in a view without a week")
            shown = self.week(week).get(pid)
        else:
            shown = self.preseason().get(pid)
        if shown is None:  # a preseason card of a player outside the draft pool: his week-1 class
            shown = self.week(week or 1).get(pid)
        if shown is None:  # never shown exact: the view stops the run (MaskingError) instead
            raise ValueError(f"no protected class holds {pid} (week {week})")
        out = dict(card)
        for f, v in shown.items():
            if f in out:
                out[f] = midpoint(v) if self.as_numbers and isinstance(v, str) else v
        if "recent" in out:
            out["recent"] = []
        for f in WITHHELD:  # a team pseudonym groups a prompt's cards of one real team (see the module's docstring)
            if f in out:
                out[f] = WITHHELD_TEXT
        return out

    def _order(self, pid: str, shown: Any) -> tuple:
        """A list's order by a protected value (the best midpoint first, none last), ties in the keyed order."""
        v = midpoint(shown)
        return (-(v if v is not None else -math.inf), _keyed(self.seed, pid))

    def _sort_key(self, card: dict, field: str) -> tuple:
        return self._order(card["id"], card.get(field))

    def ranked(self, ids: Iterable[str], field: str, week: int | None) -> list[str]:
        """``ids`` ordered as a protected board lists them: by ``field`` as their preseason (``week`` None) or
        week-``week`` cards show it (:meth:`_order`). A board cut from this order holds whole classes and a keyed
        draw from the last one, never a cut by an exact number."""
        shown = self.preseason() if week is None else self.week(week)
        return sorted(ids, key=lambda p: self._order(p, shown[p].get(field)))

    def view(self, view: Any) -> Any:
        """``view`` with every card's numbers protected, boards ordered by the protected value, strengths rounded
        and the season's year withheld."""
        week = view.get("week") if isinstance(view, dict) else None
        self._slots = (view.get("rules") or {}).get("roster_slots", {}) if isinstance(view, dict) else {}
        out = self._walk(view, week, None)
        if isinstance(out, dict):
            if "season" in out:
                out["season"] = SEASON_HIDDEN
            if isinstance(out.get("rules"), dict) and "season" in out["rules"]:
                out["rules"] = {**out["rules"], "season": SEASON_HIDDEN, "protected": self.k}  # the prompt says so
        return out

    def _walk(self, obj: Any, week: int | None, key: str | None) -> Any:
        if isinstance(obj, dict):
            if isinstance(obj.get("id"), str) and obj["id"] in self.fw.position and "pos" in obj and "adp" in obj:
                return self.card(obj, week)
            if key in STRENGTH_KEYS:
                return {pos: self._strength(v) for pos, v in obj.items()}
            out = {k: self._walk(v, week, k) for k, v in obj.items()}
            for roster, strength in TEAM_STRENGTHS:
                if isinstance(out.get(strength), dict) and isinstance(out.get(roster), list):
                    out[strength] = self._team_strength(out[roster], out[strength])
            if key in ("record", "my_record", "round_points_so_far"):
                out = {k: self._rounded(v, POINTS_STEP) if k in POINTS_KEYS else v for k, v in out.items()}
            if key in ORDERED_BY:  # a board: position -> cards, each list ordered by the protected value
                field = ORDERED_BY[key]
                out = {pos: sorted(cards, key=lambda c: self._sort_key(c, field)) if isinstance(cards, list) else cards
                       for pos, cards in out.items()}
            return out
        if isinstance(obj, list):
            return [self._walk(v, week, None) for v in obj]
        if key in UNTRUSTED_TEXT and isinstance(obj, str):
            return TEXT_NUMBER.sub(NUMBER_WITHHELD, obj)
        return obj

    @staticmethod
    def _rounded(v: Any, step: float) -> Any:
        return float(round(v / step) * step) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    def _strength(self, v: Any) -> Any:
        return self._rounded(v, STRENGTH_STEP)

    def _team_strength(self, cards: list[dict], shown: dict) -> dict:
        """A team's positional strengths as its protected cards give them: per position, the summed midpoints of
        this week's projection of its best starters there (the firewall's rule on the numbers the view shows)."""
        out = {}
        for pos in shown:
            vals = sorted((midpoint(c.get("proj_week")) or 0.0 for c in cards if c.get("pos") == pos), reverse=True)
            out[pos] = round(float(sum(vals[: max(1, int(self._slots.get(pos, 0) or 0))])), 1)
        return out


# ------------------------------------------------------------------------------------------------ the audit's half
#: a prompt table's header as :func:`ffbench_lib.game.render.table` writes it
HEADER = re.compile(r"^id \| name \| pos \|")
#: columns that are not quasi-identifiers: pseudonyms (the id, name, NFL team and opponent)
NOT_COUNTED = frozenset({"id", "name", "team", "opp"})
#: what a table's header names each column of a card by (``flags`` is the card's ``zero_flags``)
CARD_FIELD = {"flags": "zero_flags"}


def parse_tables(text: str) -> list[dict[str, str]]:
    """Every row of every player table in ``text`` (a prompt) as header -> cell (as written)."""
    rows: list[dict[str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if HEADER.match(lines[i]):
            head = lines[i].split(" | ")
            i += 1
            while i < len(lines) and len(cells := lines[i].split(" | ")) == len(head):
                rows.append(dict(zip(head, cells)))
                i += 1
            continue
        i += 1
    return rows


#: a card value as a prompt table writes it
cell_text = fmt


class Column:
    """One field of every candidate card, as the audit compares it: numbers (NaN: not a number), the text a prompt
    table writes for it, and which have none."""

    def __init__(self, values: list[Any]):
        self.nums = np.array([float(v) if _number(v) else np.nan for v in values], dtype=float)
        self.text = np.array([cell_text(v) for v in values], dtype=object)
        self.none = np.array([v is None or v == [] or v == () for v in values], dtype=bool)


def _number(v: Any) -> bool:
    return v is not None and not isinstance(v, (str, bool, list, tuple))


def _option(shown: str, col: Column) -> np.ndarray:
    """Which candidates one shown option (a range, a number, a word) is consistent with."""
    m = RANGE.match(shown)
    with np.errstate(invalid="ignore"):
        if m:
            return (col.nums >= float(m.group(1))) & (col.nums <= float(m.group(2)))
        try:
            x = float(shown)
        except ValueError:
            return col.text == shown
        return np.abs(col.nums - x) <= 0.05 + 1e-9  # a table writes a float to one decimal


def fits(shown: str, col: Column) -> np.ndarray:
    """Which candidates a shown cell is consistent with: equal as written, in the range it shows (or in one of
    ``a or b``), or none when it shows ``-``."""
    if shown == "-":
        return col.none.copy()
    options = shown.split(" or ")
    fit = col.none.copy() if "-" in options else np.zeros(len(col.none), dtype=bool)
    for opt in options:
        if opt != "-":
            fit |= _option(opt, col)
    return fit


def consistent(row: dict[str, str], table: dict[str, Column], team: set[str] | None = None) -> np.ndarray:
    """Which real players of ``table`` (field -> :class:`Column`, ``pos`` included) the shown ``row`` fits, column
    by column (the pseudonyms aside). With ``team`` (the codes of the real NFL team the row's pseudonym stands for) the
    candidates must play for it too: an adversary who identified the teams."""
    n = len(next(iter(table.values())).none) if table else 0
    fit = np.ones(n, dtype=bool)
    for col, shown in row.items():
        field = CARD_FIELD.get(col, col)
        if col in NOT_COUNTED or field not in table:
            continue
        fit &= fits(shown, table[field])
    if team is not None and "team" in table:
        fit &= np.isin(table["team"].text, list(team))
    return fit


def columns(cards: Iterable[dict]) -> dict[str, Column]:
    """Cards as field -> :class:`Column` (what :func:`consistent` reads)."""
    cards = list(cards)
    fields = dict.fromkeys(f for c in cards for f in c)
    return {f: Column([c.get(f) for c in cards]) for f in fields}
