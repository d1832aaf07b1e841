"""Masked mode (``information.masking``): agents see stable per-run pseudonyms instead of real players and NFL
teams, so a model cannot draw on what it remembers of a season by name; statistics, projections, byes,
opponents and injury statuses are unchanged.

An agent that reads names is asked through :class:`ffbench_lib.agents.masked.MaskedAgent`, which shows it
``Masker.view(view)`` and maps its answer back with ``Masker.answer``; phases, the recorder, ``decisions.jsonl``,
tables and metrics keep real ids and names. Masking is value-based: every string of a view (dict keys too) that is a real player id or name
(or, with ``players_and_teams``, an NFL team code or a team defense's name) is replaced; a player card's name
follows its id, so two players of one name stay apart. A view holding a real id or name with no pseudonym is a
bug and raises :class:`MaskingError`, never leaks.

Pseudonyms are a function of the run seed and of what is knowable when they are first needed: players are
``RB-041`` (position, number), numbered per position in the order (first week known, keyed hash of seed and
id), so the draft pool is a seeded permutation (never projection or ADP order) and a player who first plays
in week 9 is numbered after everyone known earlier, from the knowledge of week 10 alone: perturbing the
future moves no earlier pseudonym. NFL teams are ``T01``..``T32`` by keyed hash.

Team defenses: with ``players_and_teams`` the defense of team ``T07`` is ``DST-07`` named ``T07 D/ST``. With
``players`` they keep their real id and name (``DST:KC``, ``KC D/ST``): a defense is its NFL team, which that
mode shows on every card, so a pseudonym would hide nothing.

Free text other agents wrote (a trade rationale shown to the other side) is scrubbed too, so one model cannot pass
a name it guessed to another: word by word, longest match first, whatever the case, dots, apostrophes (curly
too), hyphens, a possessive or a suffix (``JOSH ALLEN's``, ``AJ Brown``, ``Patrick Mahomes`` for ``Patrick Mahomes
II``), every full player name (two words or more) and real player id becomes its pseudonym; masking teams, so do
NFL team codes (aliases such as ``JAC`` too, upper case as written), full names, cities and nicknames (``Kansas
City Chiefs``, ``the Chiefs``; a one-word city or nickname only capitalised: "bills" stays). A name two players
(or two teams: ``New York``) share becomes ``[player]`` (``[team]``), and so does a player with no pseudonym.
A first or last name alone (``Mahomes``, ``Saquon``) is NOT scrubbed: one word names too many other things.

An answer's strings that are pseudonyms map back to real ids. A real player id or name (or, masking teams, an NFL
team code) an agent answers with was never in its view: it becomes ``unmasked:<string>``, which no view holds, so
the engine repairs that part of the answer (``decided_by: fallback``) and the problem says why.

Lists a view orders by real id (rosters, locked players) are put in pseudonym order (natural: ``RB-999`` before
``RB-1000``): a gsis id grows with the year a player entered the league, so the real order would hint at who is who.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from ffbench_lib.config.league import PSEUDONYM, League
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.sport import SPORTS
from ffbench_lib.game.protect import Protector, natural
from ffbench_lib.game.seat import StopRun
from ffbench_lib.game.views import Firewall

#: Real player ids of every sport (NFL gsis, SportsData.io, team defenses; FPL codes): a view holding one without
#: a pseudonym is a bug.
REAL_ID = re.compile("|".join(s.real_id_pattern for s in SPORTS.values()))
#: View keys whose lists the firewall sorts by real id: shown in pseudonym order instead.
ID_ORDERED = frozenset({"players", "my_roster", "roster", "locked_players"})
MODES = ("players", "players_and_teams")
#: Free text as real ids and words: a word starts with a letter or digit and holds apostrophes and dots
#: ("Ja'Marr", "A.J.", "Allen's."); spaces, hyphens and other punctuation separate words ("Amon-Ra" is two).
TOKEN = re.compile(rf"(?P<id>{REAL_ID.pattern})|\w[\w'\u2019\u2018\u02bc.]*")


def _defense_position(spec) -> str | None:
    """The sport's team-level position (the NFL's team defenses), None for a sport without one."""
    team_level = spec.positions_scoring("defense")
    return team_level[0] if team_level else None
#: A word's tail kept after a replacement: a possessive and trailing dots ("Allen's" -> "QB-003's").
TAIL = re.compile(r"(?:['\u2019\u2018\u02bc][sS]?)?\.*$")
#: What may stand between two words of one name: spaces or a hyphen.
GAP = re.compile(r"[\s-]+")
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})
PLAYER, TEAM = "[player]", "[team]"  # a name two players (teams) share, or a player with no pseudonym
#: Prefix of a real id or name found in an answer: no view holds such a string, so that part is repaired.
UNMASKED = "unmasked:"



def _norm(word: str) -> str:
    """A word as names are compared: no tail, accents, dots or apostrophes, lower case ("A.J." -> "aj")."""
    core = word[:TAIL.search(word).start()] or word
    core = "".join(c for c in unicodedata.normalize("NFKD", core) if not unicodedata.combining(c))
    return re.sub(r"['\u2019\u2018\u02bc.]", "", core).casefold()


def _key(name: str) -> tuple[tuple[str, ...], bool]:
    """A name's words as free text is matched by, without a final suffix (``Patrick Mahomes II``: ``patrick
    mahomes``), and whether it had one."""
    words = [_norm(m.group(0)) for m in TOKEN.finditer(name)]
    suffixed = len(words) > 2 and words[-1] in SUFFIXES
    return tuple(words[:-1] if suffixed else words), suffixed


class MaskingError(StopRun, RuntimeError):
    """A view held a real player (id or name) without a pseudonym: it would have leaked (the run stops)."""


def _keyed(seed: int, kind: str, key: str) -> str:
    return hashlib.sha256(f"ffbench-mask|{seed}|{kind}|{key}".encode()).hexdigest()


def _first_seen(fw: Firewall, weeks: int) -> tuple[dict[str, int], dict[str, int]]:
    """The first week whose knowledge holds each player, and each NFL team code (0: the preseason byes and
    teams): all a pseudonym's number may depend on besides the seed."""
    players: dict[str, int] = {}
    teams = dict.fromkeys([*fw.catalog.byes, *fw.catalog.team.values()], 0)
    for w in range(1, weeks + 1):
        k = fw.week(w)
        for pid in k.known_players():
            players.setdefault(pid, w)
        for code in (*k.team.values(), *k.opponent, *(c for o in k.opponent.values() if o for c in o.split("+"))):
            teams.setdefault(code, w)
    return players, teams


class Masker:
    """Pseudonyms of one run (league seed and mode) over the players and teams knowable in its weeks."""

    def __init__(self, fw: Firewall, league: League):
        self.mode = league.information.masking
        if self.mode not in MODES:
            raise ValueError(f"no masking in mode {self.mode!r}")
        seed, cat = league.seed, fw.catalog
        self.spec = league.sport_spec
        DEFENSE_POSITION = _defense_position(self.spec)
        self._defense = DEFENSE_POSITION
        teams_too = self.mode == "players_and_teams"
        first_seen, codes = _first_seen(fw, league.weeks)
        team_seen: dict[str, int] = {}  # a franchise under two codes (LA, LAR) is one team
        for code, w in sorted(codes.items(), key=lambda kv: kv[1]):
            team_seen.setdefault(self._canon(code), w)
        order = sorted(team_seen, key=lambda t: (team_seen[t], _keyed(seed, "team", t)))
        #: canonical NFL team -> T07
        self.teams = {t: f"T{i:02d}" for i, t in enumerate(order, start=1)}
        #: real player id -> pseudonym id; real player id -> pseudonym name
        self.players: dict[str, str] = {}
        self.player_names: dict[str, str] = {}
        counts: dict[str, int] = {}
        for pid in sorted(first_seen, key=lambda p: (first_seen[p], _keyed(seed, "player", p))):
            pos = cat.position[pid]
            if pos == DEFENSE_POSITION:
                if not teams_too:
                    continue  # players mode: a defense is its (shown) NFL team
                number = self.teams[self._canon(cat.team.get(pid) or pid.split(":", 1)[-1])][1:]
                self.players[pid], self.player_names[pid] = f"DST-{number}", f"T{number} D/ST"
                continue
            counts[pos] = counts.get(pos, 0) + 1
            self.players[pid] = self.player_names[pid] = f"{pos}-{counts[pos]:03d}"
        fwd: dict[str, str] = dict(self.players)
        by_name: dict[str, set[str]] = {}
        for pid in self.players:
            by_name.setdefault(cat.name[pid], set()).add(self.player_names[pid])
        for name, fakes in by_name.items():
            if len(fakes) == 1:  # a name two players share is masked through its card's id (or refused)
                fwd[name] = next(iter(fakes))
        if teams_too:
            fwd.update({code: self.teams[self._canon(code)] for code in codes})
        self._fwd = fwd
        self._text_index(cat, teams_too)
        self._real_names = {pid: cat.name[pid] for pid in self.players}
        self._back = {fake: team for team, fake in self.teams.items()} if teams_too else {}
        self._back.update({self.player_names[p]: cat.name[p] for p in self.players})  # a defense's name
        self._back.update({fake: pid for pid, fake in self.players.items()})  # ids win over names
        # real strings no pseudonym covers: seen in a view, they raise instead of leaking
        self._unmasked = {p for p in cat.position if p not in self.players and (teams_too or cat.position[p] != DEFENSE_POSITION)}
        self._unmasked_names = ({cat.name[p] for p in self._unmasked} | {n for n, f in by_name.items() if len(f) > 1}
                                ) - set(fwd)
        # an answer's real strings (never in its view): real ids, player names, and masking teams NFL team codes
        self._real = ({p for p in cat.position if teams_too or cat.position[p] != DEFENSE_POSITION}
                      | {cat.name[p] for p in cat.position if teams_too or cat.position[p] != DEFENSE_POSITION}
                      | (set(codes) | self.spec.team_codes | set(self.spec.team_aliases) if teams_too else set())
                      ) - set(self._back)
        self._check_team_names(league)
        #: protected numbers (``information.numbers``): applied before the pseudonyms (:mod:`.protect`)
        self.protect = None
        if league.information.numbers == "protected":  # the firewall's own when it is this league's (one partition)
            self.protect = fw.protector if fw.protector is not None and fw.league.seed == seed else Protector(fw, seed)

    def _canon(self, code: str) -> str:
        return self.spec.team_aliases.get(code, code)

    def _text_index(self, cat, teams_too: bool) -> None:
        """What free text is scrubbed of: normalised word tuples -> replacement (players: full names; masking teams:
        full names, cities, nicknames), and team codes as written."""
        found: dict[tuple[str, ...], set[str]] = {}
        self._suffixed: set[tuple[str, ...]] = set()
        for pid, pos in cat.position.items():
            if pos == self._defense and not teams_too:
                continue  # players mode: a defense keeps its (team's) name
            key, suffixed = _key(cat.name[pid])
            if len(key) > 1:  # a one-word name would hit ordinary words
                found.setdefault(key, set()).add(self.player_names.get(pid, PLAYER))
                if suffixed:
                    self._suffixed.add(key)
        self._codes: dict[str, str] = {}
        if teams_too:
            for code, full in self.spec.teams.items():
                fake = self.teams.get(code, TEAM)
                parts = full.rsplit(" ", 1) if self.spec.team_name_parts else []
                for part in (full, *parts):  # full name, city, nickname (where a part names the team alone)
                    found.setdefault(_key(part)[0], set()).add(fake)
            self._codes = {c: self.teams.get(self._canon(c), TEAM)
                           for c in (*self.spec.team_codes, *self.spec.team_aliases, *self.teams)}
        teams = set(self.teams.values()) | {TEAM}
        self._words = {k: next(iter(f)) if len(f) == 1 else TEAM if f <= teams else PLAYER for k, f in found.items()}
        self._longest = max(map(len, self._words), default=1)

    def _check_team_names(self, league: League) -> None:
        """A fantasy team named like a pseudonym, a player, or (masking teams) an NFL team would be masked or
        mapped back as one (a trade sent to a player): refused, naming the team."""
        problems = []
        for i, team in enumerate(league.teams):
            name = team.name
            if (PSEUDONYM.fullmatch(name) or name in self._fwd or name in self._unmasked_names
                    or self._text(name) != name):  # "Josh Allen Fans" would be shown as "QB-041 Fans"
                what = ("a pseudonym" if PSEUDONYM.fullmatch(name) else
                        f"a real player or {self.spec.title} team of the season")
                problems.append(f"teams[{i}].name: {name!r} reads as {what}, which information.masking: "
                                f"{self.mode} would mask or map back; rename the team")
        if problems:
            raise ConfigError(problems)

    # ------------------------------------------------------------------------------------------ views
    def view(self, view: Any) -> Any:
        """The view as the agent sees it: every real player (and team) string replaced, nothing else changed (with
        protected numbers, the numbers too: :meth:`Protector.view <ffbench_lib.game.protect.Protector.view>`)."""
        return self._mask(self.protect.view(view) if self.protect is not None else view, None)

    def _mask(self, obj: Any, key: str | None) -> Any:
        if isinstance(obj, dict):
            pid = obj.get("id")
            card = isinstance(pid, str) and pid in self.players  # its name follows its id (shared names)
            return {self._string(k) if isinstance(k, str) else k:
                    self.player_names[pid] if card and k == "name" else self._mask(v, k) for k, v in obj.items()}
        if isinstance(obj, list):
            items = [self._mask(v, None) for v in obj]
            if key in ID_ORDERED and len(obj) > 1:
                ids = [v.get("id") if isinstance(v, dict) else v for v in obj]
                if all(isinstance(i, str) for i in ids) and ids == sorted(ids):
                    items = [m for _, m in sorted(zip(ids, items), key=lambda x: natural(self._fwd.get(x[0], x[0])))]
            return items
        if isinstance(obj, tuple):
            return tuple(self._mask(v, None) for v in obj)
        if isinstance(obj, str):
            return self._string(obj)
        return obj

    def _string(self, s: str) -> str:
        fake = self._fwd.get(s)
        if fake is not None:
            return fake
        if "+" in s and " " not in s and all(part in self._fwd for part in s.split("+")):
            return "+".join(self._fwd[part] for part in s.split("+"))  # two opponents in a week ("ARS+CHE")
        if " " in s:  # free text: no exact id or name, but it may mention one
            s = self._text(s)
        if s in self._unmasked or s in self._unmasked_names or (
                REAL_ID.fullmatch(s) and (self.mode == "players_and_teams" or not s.startswith("DST:"))):
            raise MaskingError(f"a view holds {s!r}, a real player with no pseudonym in this run (known only "
                               "after the league's weeks?): refusing to show it")
        return s

    def _text(self, s: str) -> str:
        """Free text with every real player id, full player name and, masking teams, NFL team (code, full name,
        city, nickname) replaced: words left to right, the longest name first, in linear time."""
        toks = list(TOKEN.finditer(s))
        out, done, i = [], 0, 0
        while i < len(toks):
            m, rep, n = toks[i], None, 1
            if m.group("id"):
                rid = m.group("id")
                rep = rid if rid.startswith("DST:") and self.mode == "players" else self._fwd.get(rid, PLAYER)
            else:
                words = [_norm(m.group(0))]
                while len(words) <= self._longest and i + len(words) < len(toks):  # one more for a suffix
                    nxt, prev = toks[i + len(words)], toks[i + len(words) - 1]
                    if nxt.group("id") or not GAP.fullmatch(s[prev.end():nxt.start()]):
                        break
                    words.append(_norm(nxt.group(0)))
                for n in range(min(len(words), self._longest), 0, -1):
                    key = tuple(words[:n])
                    rep = self._words.get(key)
                    if n == 1:  # one word: a team code as written, or a capitalised city or nickname
                        core = m.group(0)[:TAIL.search(m.group(0)).start()]
                        rep = self._codes.get(core) or (rep if core[:1].isupper() else None)
                    if rep is not None:
                        if n < len(words) and key in self._suffixed and words[n] in SUFFIXES:
                            n += 1  # "Patrick Mahomes II" as the catalog spells it
                        break
            if rep is None:
                i += 1
                continue
            last = toks[i + n - 1]
            tail = "" if last.group("id") else last.group(0)[TAIL.search(last.group(0)).start():]
            if n > 1 and _norm(last.group(0)) in SUFFIXES:
                tail = tail.rstrip(".")  # "Odell Beckham Jr. is": the dot is the suffix's
            out += [s[done:m.start()], rep + tail]
            done, i = last.end(), i + n
        return "".join([*out, s[done:]])

    # ---------------------------------------------------------------------------------------- answers
    def answer(self, answer: Any) -> tuple[Any, list[str]]:
        """The agent's answer with every pseudonym (a whole string, keys too) mapped back to the real id or team,
        and the problems: a real player id or name (or, masking teams, an NFL team code) was never in the agent's
        view, so it becomes ``unmasked:<string>``, which no view holds (that part is repaired); free text (a
        rationale, the model's raw text under ``_llm``) stays as the agent wrote it."""
        found: list[str] = []

        def back(obj: Any, key: Any = None) -> Any:
            if isinstance(obj, dict):
                return {back(k): v if k == "_llm" else back(v, k) for k, v in obj.items()}
            if isinstance(obj, list):
                return [back(v, key) for v in obj]
            if not isinstance(obj, str) or key == "rationale":
                return obj
            if obj in self._back:
                return self._back[obj]
            if obj in self._real or (REAL_ID.fullmatch(obj)
                                     and not (obj.startswith("DST:") and self.mode == "players")):
                found.append(obj)
                return UNMASKED + obj
            return obj

        out = back(answer)
        problems = [f"masked mode: the answer named {', '.join(map(repr, dict.fromkeys(found)))}, a real player"
                    f"{f' or {self.spec.title} team' if self.mode == 'players_and_teams' else ''} rather than a "
                    "pseudonym of the view "
                    f"(only pseudonyms are accepted), so it was read as {UNMASKED}<name>, which is not in the view"
                    ] if found else []
        return out, problems

    # ---------------------------------------------------------------------------------------- record
    def mapping(self) -> dict[str, Any]:
        """``masking.json``: the mode and every pseudonym with the real player or team it stands for."""
        return {"mode": self.mode, **({"numbers": "protected"} if self.protect is not None else {}),
                "players": {fake: {"player_id": pid, "player_name": self._real_names[pid]}
                            for pid, fake in sorted(self.players.items(), key=lambda kv: natural(kv[1]))},
                "teams": ({fake: team for team, fake in sorted(self.teams.items(), key=lambda kv: natural(kv[1]))}
                          if self.mode == "players_and_teams" else {})}
