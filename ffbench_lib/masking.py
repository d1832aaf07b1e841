"""Masked mode (``information.masking``): agents see stable per-run pseudonyms instead of real players and NFL
teams, so a model cannot draw on what it remembers of a season by name; statistics, projections, byes,
opponents and injury statuses are unchanged.

The engine asks every agent with ``Masker.view(view)`` and maps the answer back with ``Masker.answer``
(:meth:`ffbench_lib.engine.Engine.ask`); phases, the recorder, ``decisions.jsonl``, tables and metrics keep real
ids and names. Masking is value-based: every string of a view (dict keys too) that is a real player id or name
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

Free text other agents wrote (a trade rationale shown to the other side) is scrubbed too: a real player's full
name (and, masking teams, a team code) anywhere in it becomes its pseudonym, so one model cannot pass a name it
guessed to another.

Lists a view orders by real id (rosters, locked players) are put in pseudonym order: a gsis id grows with the
year a player entered the league, so the real order would hint at who is who.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

from .config import ConfigError, League
from .views import Firewall

#: Codes some sources use for a franchise whose nflverse code differs (same pseudonym for both).
TEAM_ALIASES = {"LAR": "LA", "JAC": "JAX", "LVR": "LV", "OAK": "LV", "WSH": "WAS", "ARZ": "ARI", "BLT": "BAL",
                "CLV": "CLE", "HST": "HOU", "SD": "LAC", "STL": "LA"}
#: Every string a pseudonym can be: a player (``RB-041``, ``DST-07``), a team (``T07``), a defense's name.
PSEUDONYM = re.compile(r"[A-Z]{1,3}-\d{2,}|T\d{2,}(?: D/ST)?")
#: Real player ids (gsis, SportsData.io, team defenses): a view holding one without a pseudonym is a bug.
REAL_ID = re.compile(r"00-\d{7}|sdio:\d+|DST:[A-Z]{2,3}")
#: View keys whose lists the firewall sorts by real id: shown in pseudonym order instead.
ID_ORDERED = frozenset({"players", "my_roster", "roster", "locked_players"})
MODES = ("players", "players_and_teams")
#: A run of capitalised words in free text (a name such as "Ja'Marr Chase", "A.J. Brown", "Amon-Ra St. Brown Jr.")
NAME_RUN = re.compile(r"[A-Z][\w'.\-]*(?:\s+(?:[A-Z][\w'.\-]*|Jr\.?|Sr\.?|II|III|IV|V))+")
#: An upper-case word that may be an NFL team code in free text
CODE_WORD = re.compile(r"\b[A-Z]{2,3}\b")


class MaskingError(RuntimeError):
    """A view held a real player (id or name) without a pseudonym: it would have leaked."""


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
        for code in (*k.team.values(), *k.opponent, *(o for o in k.opponent.values() if o)):
            teams.setdefault(code, w)
    return players, teams


class Masker:
    """Pseudonyms of one run (league seed and mode) over the players and teams knowable in its weeks."""

    def __init__(self, fw: Firewall, league: League):
        self.mode = league.information.masking
        if self.mode not in MODES:
            raise ValueError(f"no masking in mode {self.mode!r}")
        seed, cat = league.seed, fw.catalog
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
            if pos == "DST":
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
        # free text: full names (two words or more) of masked players; one name shared by two players names neither
        self._text_names = {n: next(iter(f)) if len(f) == 1 else f"{sorted(f)[0].split('-')[0]}-player"
                            for n, f in by_name.items() if len(n.split()) > 1}
        self._codes = frozenset(codes) if teams_too else frozenset()
        self._real_names = {pid: cat.name[pid] for pid in self.players}
        self._back = {fake: team for team, fake in self.teams.items()} if teams_too else {}
        self._back.update({self.player_names[p]: cat.name[p] for p in self.players})  # a defense's name
        self._back.update({fake: pid for pid, fake in self.players.items()})  # ids win over names
        # real strings no pseudonym covers: seen in a view, they raise instead of leaking
        self._unmasked = {p for p in cat.position if p not in self.players and (teams_too or cat.position[p] != "DST")}
        self._unmasked_names = ({cat.name[p] for p in self._unmasked} | {n for n, f in by_name.items() if len(f) > 1}
                                ) - set(fwd)
        self._check_team_names(league)

    def _canon(self, code: str) -> str:
        return TEAM_ALIASES.get(code, code)

    def _check_team_names(self, league: League) -> None:
        """A fantasy team named like a pseudonym, a player, or (masking teams) an NFL team would be masked or
        mapped back as one (a trade sent to a player): refused, naming the team."""
        problems = []
        for i, team in enumerate(league.teams):
            name = team.name
            if (PSEUDONYM.fullmatch(name) or name in self._fwd or name in self._unmasked_names
                    or self._text(name) != name):  # "Josh Allen Fans" would be shown as "QB-041 Fans"
                what = "a pseudonym" if PSEUDONYM.fullmatch(name) else "a real player or NFL team of the season"
                problems.append(f"teams[{i}].name: {name!r} reads as {what}, which information.masking: "
                                f"{self.mode} would mask or map back; rename the team")
        if problems:
            raise ConfigError(problems)

    # ------------------------------------------------------------------------------------------ views
    def view(self, view: Any) -> Any:
        """The view as the agent sees it: every real player (and team) string replaced, nothing else changed."""
        return self._mask(view, None)

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
                    items = [m for _, m in sorted(zip(ids, items), key=lambda x: self._fwd.get(x[0], x[0]))]
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
        if " " in s:  # free text: no exact id or name, but it may mention one
            s = self._text(s)
        if s in self._unmasked or s in self._unmasked_names or (
                REAL_ID.fullmatch(s) and (self.mode == "players_and_teams" or not s.startswith("DST:"))):
            raise MaskingError(f"a view holds {s!r}, a real player with no pseudonym in this run (known only "
                               "after the league's weeks?): refusing to show it")
        return s

    def _text(self, s: str) -> str:
        """Free text with every real full name (longest first within a run of capitalised words) and, masking
        teams, every team code replaced by its pseudonym."""
        def names(m: re.Match) -> str:
            words = m.group(0).split()
            out, i = [], 0
            while i < len(words):
                for j in range(len(words), i + 1, -1):  # the longest span of two or more words that is a name
                    fake = self._text_names.get(" ".join(words[i:j]))
                    if fake is not None:
                        out.append(fake)
                        i = j
                        break
                else:
                    out.append(words[i])
                    i += 1
            return " ".join(out)

        s = NAME_RUN.sub(names, s)
        if self.mode == "players_and_teams":
            s = CODE_WORD.sub(lambda m: self._fwd.get(m.group(0), m.group(0)) if m.group(0) in self._codes
                              else m.group(0), s)
        return s

    # ---------------------------------------------------------------------------------------- answers
    def answer(self, answer: Any) -> Any:
        """The agent's answer with every pseudonym (a whole string, keys too) mapped back to the real id or
        team; free text (a rationale, the model's raw text under ``_llm``) stays as the agent wrote it."""
        if isinstance(answer, dict):
            return {self._back.get(k, k) if isinstance(k, str) else k: v if k == "_llm" else self.answer(v)
                    for k, v in answer.items()}
        if isinstance(answer, list):
            return [self.answer(v) for v in answer]
        if isinstance(answer, str):
            return self._back.get(answer, answer)
        return answer

    # ---------------------------------------------------------------------------------------- record
    def mapping(self) -> dict[str, Any]:
        """``masking.json``: the mode and every pseudonym with the real player or team it stands for."""
        return {"mode": self.mode,
                "players": {fake: {"player_id": pid, "player_name": self._real_names[pid]}
                            for pid, fake in sorted(self.players.items(), key=lambda kv: kv[1])},
                "teams": ({fake: team for team, fake in sorted(self.teams.items(), key=lambda kv: kv[1])}
                          if self.mode == "players_and_teams" else {})}
