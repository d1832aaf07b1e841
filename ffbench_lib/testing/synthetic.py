"""A synthetic NFL world: seeded, generated (never copied from real data), in the nflverse on-disk layout.

``write_world(root)`` writes what ``../shared/data`` holds for the open source, so the whole pipeline (prepare,
views, rules, every decision kind, resume, masking, batches, analysis, report) runs without licensed data:

==============================================  ====================================================
``nflverse/stats_player_week_{s}.csv.gz``        player-weeks (current release columns, kicking too), the
                                                 file's own ``fantasy_points_ppr`` from nflverse's rule
``nflverse/stats_team_week_{s}.csv``             team-weeks: the defensive and return numbers DST rows use
``nflverse/games_synthetic.csv``                 schedules: 18 weeks, 17 games a team, one bye (weeks 5-14)
``nflverse/injuries_{s}.csv``                    the official report: Out for every game missed injured,
                                                 Questionable or Doubtful around it
``nflverse/roster_{s}.csv``                      the season's rosters, rookies with their draft pick
``nflverse/db_playerids_synthetic.csv``          the id crosswalk (names, positions, draft year and pick)
``projections/preseason_adp_2021_2024.csv``      a preseason ADP per season (``source`` fantasypros_adp), a
                                                 noisy consensus of the season's expected points
==============================================  ====================================================

The world is one league history: players keep their ids, age, improve or decline, retire, change teams between
seasons (and a few during one), and rookies arrive through a draft. Team games are coherent: passing TDs are the
receivers' TDs, passing yards their yards, a team's score is its touchdowns, kicks and safeties, and a defense's
points allowed is the other team's score. Ids are ``00-9xxxxxx`` (gsis-shaped, never a real player's).
"""
from __future__ import annotations

import datetime as dt
import gzip
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ffbench_lib.data.base import name_key
from ffbench_lib.data.defense import NICKNAMES as DEFENSE_NICKNAMES
from ffbench_lib.core.atomic import atomic_path, write_csv, write_text
from ffbench_lib.sport import sport

NFL = sport("nfl")
TEAMS = tuple(sorted(NFL.team_codes))
#: nickname per team code (files that name a defense by team: ADP's "KC Chiefs" resolves through it); the readers'
#: table inverted, its first nickname of a team winning ("Commanders", not "Redskins")
NICKNAMES = {code: nick for nick, code in reversed(list(DEFENSE_NICKNAMES.items()))}
#: a team's depth chart: position -> players carried (the first of each is the starter)
DEPTH = {"QB": 2, "RB": 3, "WR": 4, "TE": 2, "K": 1}
#: share of the team's carries and targets by depth-chart slot (QB, RB1.., WR1.., TE1..)
CARRY_SHARE = {"QB": (0.11, 0.0), "RB": (0.55, 0.27, 0.05), "WR": (0.02, 0.0, 0.0, 0.0), "TE": (0.0, 0.0)}
TARGET_SHARE = {"QB": (0.0, 0.0), "RB": (0.09, 0.05, 0.01), "WR": (0.25, 0.19, 0.12, 0.05), "TE": (0.16, 0.05)}
#: field-goal distance bands (nflverse column suffixes), how often a kick is from each, and how often it is good
FG_BANDS = (("0_19", 0.02, 0.99), ("20_29", 0.24, 0.97), ("30_39", 0.28, 0.91), ("40_49", 0.28, 0.82),
            ("50_59", 0.17, 0.68), ("60_", 0.01, 0.35))
WEEKS, BYE_WEEKS = 18, range(5, 15)
#: the file that says a data folder is this generator's (never real data)
MARK = "SYNTHETIC.md"
FIRST = ("Avery", "Blake", "Cade", "Dorian", "Ellis", "Flynn", "Gage", "Hollis", "Ira", "Jonah", "Kellan", "Lazlo",
         "Marlon", "Nico", "Orrin", "Pax", "Quill", "Rowan", "Soren", "Tobin", "Ulric", "Vance", "Wyatt", "Xander",
         "Yates", "Zane", "Alden", "Bram", "Corwin", "Dax", "Emrys", "Fenton", "Griff", "Hale", "Idris", "Jory",
         "Kenji", "Lorcan", "Milo", "Nash", "Oren", "Piers", "Ronan", "Silas", "Tate", "Uriel", "Vaughn", "Wren")
LAST = ("Ashby", "Brightwater", "Calloway", "Dunmore", "Everly", "Fairbanks", "Galloway", "Hartwell", "Ingram",
        "Jessup", "Kettering", "Lockhart", "Marwood", "Northcott", "Oakley", "Pendleton", "Quarles", "Radcliffe",
        "Stanton", "Thackeray", "Underhill", "Vickery", "Whitlock", "Yardley", "Ainsworth", "Blackwood", "Crowley",
        "Davenport", "Ellwood", "Fenwick", "Greaves", "Holloway", "Islington", "Jarrow", "Kingsley", "Langford",
        "Merriweather", "Norwood", "Ormsby", "Prescott", "Quimby", "Rutherford", "Sedgwick", "Thorne", "Upton",
        "Vance", "Wetherby", "Yelverton")
OUT_INJURIES = ("Hamstring", "Knee", "Ankle", "Concussion", "Shoulder", "Foot", "Groin", "Ribs", "Calf")
PRACTICE = {"Out": "Did Not Participate In Practice", "Doubtful": "Did Not Participate In Practice",
            "Questionable": "Limited Participation in Practice"}


@dataclass
class Player:
    """One player across the world's seasons; ``talent`` scales his production (1 is a typical starter)."""
    pid: str
    name: str
    position: str
    team: str
    talent: float
    age: int
    draft_year: int
    draft_number: float
    seasons: list[int] = field(default_factory=list)


class World:
    """The generator's state: players, rosters and the random stream (one seed, one world)."""

    def __init__(self, seed: int, first_season: int):
        self.rng = np.random.default_rng(seed)
        self.players: list[Player] = []
        self.names: set[str] = set()
        self.first_season = first_season
        self.rosters: dict[str, dict[str, list[Player]]] = {}

    def _name(self) -> str:
        """A new name, unique as the joins see it (``name_key``); about one in eight is spelled the ways real
        names are (initials, a suffix, an apostrophe, a hyphen), which name matching and masking must handle."""
        while True:
            first, last = str(self.rng.choice(FIRST)), str(self.rng.choice(LAST))
            style = self.rng.integers(0, 40)
            if style == 0:
                first = f"{first[0]}.{self.rng.choice(FIRST)[0]}."
            elif style == 1:
                last = f"{last} {self.rng.choice(['Jr.', 'Sr.', 'II', 'III'])}"
            elif style == 2:
                first = f"{first[0]}'{first[1:].capitalize()}"
            elif style == 3:
                last = f"{last}-{self.rng.choice(LAST)}"
            elif style == 4:
                last = f"O'{last}"
            name = f"{first} {last}"
            if name_key(name) not in self.names:
                self.names.add(name_key(name))
                return name

    def new_player(self, position: str, team: str, talent: float, age: int, draft_year: int,
                   draft_number: float) -> Player:
        p = Player(f"00-9{len(self.players):06d}", self._name(), position, team, float(talent), age, draft_year,
                   draft_number)
        self.players.append(p)
        return p

    def _talent(self, slot: int) -> float:
        return float(np.clip(self.rng.normal(1.15 - 0.25 * slot, 0.18), 0.25, 1.9))

    def first_rosters(self) -> None:
        s = self.first_season
        for team in TEAMS:
            self.rosters[team] = {pos: [self.new_player(pos, team, self._talent(i), int(self.rng.integers(22, 33)),
                                                        s - int(self.rng.integers(1, 9)), float("nan"))
                                        for i in range(n)] for pos, n in DEPTH.items()}

    def offseason(self, season: int) -> list[Player]:
        """Age, retire, move and draft for ``season``; returns its rookies (drafted, pick order)."""
        rng = self.rng
        free: dict[str, list[Player]] = {pos: [] for pos in DEPTH}
        for team, depth in self.rosters.items():
            for pos, players in depth.items():
                keep = []
                for p in players:
                    p.age += 1
                    p.talent = float(np.clip(p.talent + rng.normal(0.04 if p.age < 27 else -0.05, 0.12), 0.2, 2.0))
                    career = p.age - (5 if pos == "K" else 0)  # kickers play longer
                    if rng.random() < (0.03 if career < 30 else min(0.1 + 0.08 * (career - 30), 0.6)) / p.talent:
                        continue  # retired (the good ones stay longer)
                    if rng.random() < 0.12:
                        free[pos].append(p)  # moves in free agency
                        continue
                    keep.append(p)
                depth[pos] = keep
        rookies = []
        pick = 0
        for rnd in range(7):
            for team in TEAMS:
                pick += 1
                if rng.random() < 0.45:  # a fantasy position (the others pick linemen, defenders)
                    pos = str(rng.choice(list(DEPTH), p=[0.15, 0.27, 0.33, 0.17, 0.08]))
                    talent = float(np.clip(rng.normal(1.05 - 0.1 * rnd, 0.25), 0.2, 1.9))
                    rookies.append(self.new_player(pos, team, talent, 21 + int(rng.integers(0, 3)), season,
                                                   float(pick)))
        for r in rookies:
            self.rosters[r.team][r.position].append(r)
        for pos, players in free.items():  # free agents sign where a depth chart is short, else anywhere
            for p in players:
                short = [t for t in TEAMS if len(self.rosters[t][pos]) < DEPTH[pos]]
                p.team = str(rng.choice(short)) if short else str(rng.choice(TEAMS))
                self.rosters[p.team][pos].append(p)
        for team in TEAMS:  # best first; too many: the weakest is cut; too few: an undrafted player is signed
            for pos, n in DEPTH.items():
                players = sorted(self.rosters[team][pos], key=lambda p: -p.talent)[:n]
                while len(players) < n:
                    players.append(self.new_player(pos, team, self._talent(len(players) + 1), 23, season, float("nan")))
                self.rosters[team][pos] = players
        return rookies


def _schedule(rng: np.random.Generator, season: int) -> tuple[list[dict], dict[str, int]]:
    """18 weeks; each team plays 17 and rests once in weeks 5-14 (an even number of teams each week)."""
    counts = rng.permutation([4, 4, 4, 4, 4, 4, 2, 2, 2, 2])
    order = list(rng.permutation(TEAMS))
    bye, i = {}, 0
    for week, n in zip(BYE_WEEKS, counts):
        for team in order[i:i + int(n)]:
            bye[team] = week
        i += int(n)
    sept = dt.date(season, 9, 5)
    first_thursday = sept + dt.timedelta(days=(3 - sept.weekday()) % 7)
    rows = []
    for week in range(1, WEEKS + 1):
        playing = [t for t in rng.permutation(TEAMS) if bye.get(t) != week]
        day = first_thursday + dt.timedelta(days=7 * (week - 1) + 3)  # the Sunday after
        for away, home in zip(playing[::2], playing[1::2]):
            rows.append({"game_id": f"{season}_{week:02d}_{away}_{home}", "season": season, "game_type": "REG",
                         "week": week, "gameday": day.isoformat(), "away_team": away, "away_score": None,
                         "home_team": home, "home_score": None})
    return rows, bye


def _split(rng, total: int, shares: np.ndarray) -> np.ndarray:
    return rng.multinomial(total, shares / shares.sum()) if total and shares.sum() else np.zeros(len(shares), int)


def _team_game(rng, depth: dict[str, list[Player]], out: set[str], defense: float) -> tuple[list[dict], dict]:
    """One team's player lines and team numbers in one game; ``out``: ids of its players who miss it."""
    slots = []  # (player, carry share, target share) of those who play; a backup takes an absent starter's role
    for pos, players in depth.items():
        active = [p for p in players if p.pid not in out]
        for i, p in enumerate(active):
            if pos == "K":
                continue
            slots.append((p, CARRY_SHARE[pos][min(i, len(CARRY_SHARE[pos]) - 1)] * p.talent ** 0.5,
                          TARGET_SHARE[pos][min(i, len(TARGET_SHARE[pos]) - 1)] * p.talent ** 0.7))
    qbs = [p for p in depth["QB"] if p.pid not in out]
    qb = qbs[0] if qbs else depth["QB"][-1]
    if not qbs:
        slots.append((qb, CARRY_SHARE["QB"][0], 0.0))
    lines = {p.pid: {"player": p, "completions": 0, "attempts": 0, "passing_yards": 0, "passing_tds": 0,
                     "passing_interceptions": 0, "sacks_suffered": 0, "sack_fumbles_lost": 0,
                     "passing_2pt_conversions": 0, "carries": 0, "rushing_yards": 0, "rushing_tds": 0,
                     "rushing_fumbles_lost": 0, "rushing_2pt_conversions": 0, "receptions": 0, "targets": 0,
                     "receiving_yards": 0, "receiving_tds": 0, "receiving_fumbles_lost": 0,
                     "receiving_2pt_conversions": 0, "special_teams_tds": 0} for p, _, _ in slots}
    who = [p.pid for p, _, _ in slots]
    skill = float(np.clip(qb.talent / defense, 0.45, 1.6))
    targets = _split(rng, int(rng.poisson(33)), np.array([t for _, _, t in slots]))
    carries = _split(rng, int(rng.poisson(26)), np.array([c for _, c, _ in slots]))
    catches = rng.binomial(targets, np.clip(0.58 + 0.05 * skill, 0.4, 0.8))
    for pid, t, c, n in zip(who, targets, catches, carries):
        line = lines[pid]
        line["targets"], line["receptions"], line["carries"] = int(t), int(c), int(n)
        line["receiving_yards"] = int(round(rng.gamma(4.0, 2.7 * skill ** 0.5) * c)) if c else 0
        line["rushing_yards"] = int(round(rng.normal(4.3 * n, 2.5 * n ** 0.5))) if n else 0
        line["rushing_fumbles_lost"] = int(rng.binomial(n, 0.006))
        line["receiving_fumbles_lost"] = int(rng.binomial(c, 0.004))
    ql = lines[qb.pid]
    ql["attempts"], ql["completions"] = int(targets.sum() + rng.poisson(1.5)), int(catches.sum())
    ql["passing_yards"] = int(sum(lines[p]["receiving_yards"] for p in who))
    ql["passing_interceptions"] = int(rng.poisson(0.9 / skill ** 0.5))
    ql["sacks_suffered"] = int(rng.poisson(2.3))
    ql["sack_fumbles_lost"] = int(rng.binomial(ql["sacks_suffered"], 0.07))
    pass_tds = int(rng.poisson(1.45 * skill)) if catches.sum() else 0
    for _ in range(pass_tds):
        ql["passing_tds"] += 1
        lines[who[rng.choice(len(who), p=catches / catches.sum())]]["receiving_tds"] += 1
    rush_tds = int(rng.poisson(0.85 * skill ** 0.5)) if carries.sum() else 0
    for _ in range(rush_tds):
        lines[who[rng.choice(len(who), p=carries / carries.sum())]]["rushing_tds"] += 1
    if rng.random() < 0.03:
        lines[who[rng.choice(len(who), p=np.array([t for _, _, t in slots]) / sum(t for _, _, t in slots))]][
            "special_teams_tds"] += 1
    tds = pass_tds + rush_tds + sum(l["special_teams_tds"] for l in lines.values())
    two = int(rng.binomial(tds, 0.06))
    for _ in range(two):
        if rng.random() < 0.5 and catches.sum():
            ql["passing_2pt_conversions"] += 1
            lines[who[rng.choice(len(who), p=catches / catches.sum())]]["receiving_2pt_conversions"] += 1
        else:
            lines[who[rng.choice(len(who), p=carries / carries.sum())] if carries.sum() else qb.pid][
                "rushing_2pt_conversions"] += 1
    kickers = [p for p in depth["K"] if p.pid not in out]
    kick = {f"fg_{kind}_{b}": 0 for kind in ("made", "missed") for b, _, _ in FG_BANDS}
    kick.update(pat_made=int(rng.binomial(tds - two, 0.95)), fg_blocked=int(rng.random() < 0.02))
    kick["pat_missed"] = tds - two - kick["pat_made"]
    kick["pat_blocked"] = int(kick["pat_missed"] > 0 and rng.random() < 0.3)
    for b, share, good in FG_BANDS:
        n = int(rng.poisson(1.9 * share))
        made = int(rng.binomial(n, good))
        kick[f"fg_made_{b}"], kick[f"fg_missed_{b}"] = made, n - made
    fg_made = sum(kick[f"fg_made_{b}"] for b, _, _ in FG_BANDS)
    out_lines = [l for l in lines.values() if any(v for k, v in l.items() if k != "player")]
    if kickers:
        out_lines.append({"player": kickers[0], **kick})
    team = {"points_offense": 6 * tds + 2 * two + kick["pat_made"] + 3 * fg_made, "fg_blocked": kick["fg_blocked"],
            "pat_blocked": kick["pat_blocked"], "special_teams_tds": tds - pass_tds - rush_tds}
    return out_lines, team


def _defense(rng, strength: float) -> dict:
    recov = int(rng.poisson(0.6))
    return {"def_sacks": int(rng.poisson(2.4 * strength)), "def_interceptions": int(rng.poisson(0.8 * strength)),
            "fumble_recovery_opp": recov, "fumble_recovery_tds": int(rng.binomial(recov, 0.08)),
            "def_tds": int(rng.poisson(0.08 * strength)), "def_safeties": int(rng.random() < 0.03)}


def _ppr(df: pd.DataFrame) -> pd.Series:
    """nflverse's own PPR points, as its stats_player files compute them (written beside the stats)."""
    fl = df["rushing_fumbles_lost"] + df["receiving_fumbles_lost"] + df["sack_fumbles_lost"]
    two = df["passing_2pt_conversions"] + df["rushing_2pt_conversions"] + df["receiving_2pt_conversions"]
    pts = (0.04 * df["passing_yards"] + 4 * df["passing_tds"] - 2 * df["passing_interceptions"]
           + 0.1 * (df["rushing_yards"] + df["receiving_yards"]) + 6 * (df["rushing_tds"] + df["receiving_tds"]
           + df["special_teams_tds"]) + df["receptions"] - 2 * fl + 2 * two)
    return pts.round(2)


def _season(world: World, season: int, last_played: int | None) -> dict[str, pd.DataFrame]:
    rng = world.rng
    games, byes = _schedule(rng, season)
    adp = _adp(world, season, byes)  # before the season: rosters as of the preseason
    strength = {t: float(np.clip(rng.normal(1.0, 0.15), 0.6, 1.4)) for t in TEAMS}
    # injuries: (player id) -> weeks missed; a few players change teams at week 9
    missed: dict[str, set[int]] = {}
    for depth in world.rosters.values():
        for players in depth.values():
            for p in players:
                if rng.random() < 0.34 and p.position != "K":  # a kicker who misses a game is replaced: never out
                    # a fifth of injuries happen before the season (the week-1 report already rules them Out)
                    start = 1 if rng.random() < 0.2 else int(rng.integers(1, WEEKS + 1))
                    length = int(min(rng.geometric(0.35), 12))
                    missed[p.pid] = set(range(start, min(start + length, WEEKS + 1)))
    backups = [p for d in world.rosters.values() for ps in d.values() for p in ps[1:]]
    movers = [backups[i] for i in rng.choice(len(backups), size=4, replace=False)]
    player_rows, team_rows, report = [], [], []
    for week in range(1, WEEKS + 1):
        if 5 <= week <= 15:  # a team signs a player who was in no preseason roster (his first game is today)
            for team in TEAMS:
                if rng.random() < 0.05:
                    pos = str(rng.choice(["QB", "RB", "WR", "WR", "TE"]))
                    depth = world.rosters[team][pos]
                    talent = float(np.clip(rng.normal(0.75, 0.3), 0.2, 1.6))
                    depth.pop()  # released: he plays no more this season
                    depth.append(world.new_player(pos, team, talent, 24, season - int(rng.integers(0, 3)), float("nan")))
                    depth.sort(key=lambda p: -p.talent)
        if week == 9:
            for p in movers:  # traded: a depth slot on a team that has room for one more
                if p not in world.rosters[p.team][p.position]:
                    continue  # released before the trade
                world.rosters[p.team][p.position].remove(p)
                p.team = str(rng.choice([t for t in TEAMS if t != p.team]))
                world.rosters[p.team][p.position].append(p)
        for g in (g for g in games if g["week"] == week):
            results = {}
            for side, opp in ((g["home_team"], g["away_team"]), (g["away_team"], g["home_team"])):
                out = {p.pid for pos in world.rosters[side].values() for p in pos if week in missed.get(p.pid, ())}
                lines, team = _team_game(rng, world.rosters[side], out, strength[opp])
                results[side] = (lines, team, _defense(rng, strength[side]), opp, out)
            for side, (lines, team, dfn, opp, out) in results.items():
                score = team["points_offense"] + 6 * (dfn["def_tds"] + dfn["fumble_recovery_tds"]) \
                    + 2 * dfn["def_safeties"]
                g["home_score" if side == g["home_team"] else "away_score"] = score
                team_rows.append({"season": season, "week": week, "team": side, "season_type": "REG",
                                  "opponent_team": opp, **dfn, "special_teams_tds": team["special_teams_tds"],
                                  "fg_blocked": team["fg_blocked"], "pat_blocked": team["pat_blocked"]})
                for line in lines:
                    p = line.pop("player")
                    player_rows.append({"player_id": p.pid, "player_name": _short(p.name),
                                        "player_display_name": p.name, "position": p.position,
                                        "position_group": p.position, "season": season, "week": week,
                                        "season_type": "REG", "game_id": g["game_id"], "team": side,
                                        "opponent_team": opp, **line})
                for pos in world.rosters[side].values():
                    for p in pos:
                        status = _report_status(rng, p.pid, week, missed)
                        if status:
                            report.append({"season": season, "game_type": "REG", "team": side, "week": week,
                                           "gsis_id": p.pid, "position": p.position, "full_name": p.name,
                                           "first_name": p.name.split(" ", 1)[0], "last_name": p.name.split(" ", 1)[1],
                                           "report_primary_injury": OUT_INJURIES[int(p.pid[-2:]) % len(OUT_INJURIES)],
                                           "report_status": status, "practice_status": PRACTICE[status],
                                           "date_modified": f"{g['gameday']}T12:00:00Z"})
    weekly = pd.DataFrame(player_rows)
    stat_cols = [c for c in weekly.columns if c not in ("player_id", "player_name", "player_display_name", "position",
                                                       "position_group", "season", "week", "season_type", "game_id",
                                                       "team", "opponent_team")]
    weekly[stat_cols] = weekly[stat_cols].fillna(0).astype(int)
    kick_cols = [c for c in stat_cols if c.startswith(("fg_", "pat_"))]
    weekly.loc[weekly["position"] != "K", kick_cols] = 0
    weekly["fantasy_points_ppr"] = _ppr(weekly)
    weekly["fantasy_points"] = (weekly["fantasy_points_ppr"] - weekly["receptions"]).round(2)
    games = pd.DataFrame(games).astype({"home_score": "Int64", "away_score": "Int64"})
    if last_played is not None:  # the season under way: later weeks have no results yet
        weekly = weekly[weekly["week"] <= last_played]
        team_rows = [r for r in team_rows if r["week"] <= last_played]
        games.loc[games["week"] > last_played, ["home_score", "away_score"]] = pd.NA
        report = [r for r in report if r["week"] <= last_played + 1]
    return {"weekly": weekly.sort_values(["week", "player_id"], kind="stable").reset_index(drop=True),
            "team": pd.DataFrame(team_rows), "games": games, "injuries": pd.DataFrame(report), "adp": adp}


def _short(name: str) -> str:
    first, last = name.split(" ", 1)
    return f"{first[0]}.{last}"


def _report_status(rng, pid: str, week: int, missed: dict[str, set[int]]) -> str | None:
    weeks = missed.get(pid, ())
    if week in weeks:
        return "Out" if len(weeks) > 1 or rng.random() < 0.7 else "Doubtful"
    if week - 1 in weeks or week + 1 in weeks:
        return "Questionable"
    return "Questionable" if rng.random() < 0.01 else None


def _adp(world: World, season: int, byes: dict[str, int]) -> pd.DataFrame:
    """A consensus ADP: expected points (talent and depth slot) with noise, ranked; defenses by team name."""
    rng = world.rng
    rows = []
    weight = {"QB": 16.0, "RB": 14.0, "WR": 13.0, "TE": 9.0, "K": 7.5}
    for team, depth in world.rosters.items():
        for pos, players in depth.items():
            for i, p in enumerate(players):
                value = weight[pos] * p.talent * (1.0 if i == 0 else 0.55 if pos in ("RB", "WR") and i < 3 else 0.2)
                rows.append((value * rng.lognormal(0, 0.2), p.name, team, pos))
        rows.append((7.0 * rng.lognormal(0, 0.25), f"{team} {NICKNAMES[team]}", "DST", "DST"))
    rows.sort(key=lambda r: -r[0])
    out = []
    for rank, (_, name, team, pos) in enumerate(rows[:260], start=1):
        bye = byes[team] if team in byes else byes[name.split()[0]]
        out.append({"season": season, "source": "fantasypros_adp", "snapshot_date": f"{season}-08-25", "rank": rank,
                    "player_name": name, "team": team, "position": pos, "pos_rank": pd.NA, "bye": bye,
                    "adp": float(rank), "adp_ppr": pd.NA})
    return pd.DataFrame(out)


def _roster_rows(world: World, season: int) -> list[dict]:
    rows = []
    for team, depth in world.rosters.items():
        for pos, players in depth.items():
            for p in players:
                rows.append({"season": season, "team": team, "position": pos, "full_name": p.name,
                             "gsis_id": p.pid, "fantasy_data_id": pd.NA, "years_exp": season - p.draft_year,
                             "rookie_year": p.draft_year, "draft_club": team if p.draft_year == season and
                             not np.isnan(p.draft_number) else pd.NA,
                             "draft_number": p.draft_number})
    return rows


def write_world(root: str | Path, seed: int = 0, seasons: range = range(2021, 2025),
                last_played: int | None = None) -> Path:
    """Write the world's files under ``root`` (see the module docstring) and return ``root``.
    ``last_played``: the last season is under way, with results through that week only (no rosters file, as for
    nflverse's newest season). The same seed writes the same bytes."""
    root = Path(root)
    nv, proj = root / "nflverse", root / "projections"
    nv.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    world = World(seed, seasons[0])
    world.first_rosters()
    games, adp = [], []
    for season in seasons:
        if season != seasons[0]:
            world.offseason(season)
        for depth in world.rosters.values():
            for players in depth.values():
                for p in players:
                    p.seasons.append(season)
        roster = pd.DataFrame(_roster_rows(world, season))
        under_way = last_played is not None and season == seasons[-1]
        tables = _season(world, season, last_played if under_way else None)
        adp.append(tables["adp"])
        games.append(tables["games"])
        _write_csv(tables["weekly"], nv / f"stats_player_week_{season}.csv.gz")
        _write_csv(tables["team"], nv / f"stats_team_week_{season}.csv")
        _write_csv(tables["injuries"], nv / f"injuries_{season}.csv")
        if not under_way:
            _write_csv(roster, nv / f"roster_{season}.csv")
    _write_csv(pd.concat(games, ignore_index=True), nv / "games_synthetic.csv")
    cw = pd.DataFrame([{"gsis_id": p.pid, "fantasy_data_id": pd.NA, "name": p.name, "merge_name": p.name.lower(),
                        "position": "PK" if p.position == "K" else p.position, "team": p.team,
                        "draft_year": p.draft_year, "draft_ovr": p.draft_number} for p in world.players])
    _write_csv(cw, nv / "db_playerids_synthetic.csv")
    _write_csv(pd.concat(adp, ignore_index=True), proj / "preseason_adp_2021_2024.csv")
    write_text(root / MARK, f"Synthetic NFL world written by ffbench_lib.testing.synthetic (seed {seed}, "
                                    f"seasons {seasons[0]}-{seasons[-1]}): generated, not real data.\n")
    return root


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """Atomic, and the same bytes for the same frame (gzip without a time or file name in its header)."""
    if path.suffix != ".gz":
        write_csv(path, df, lineterminator="\n")
        return
    with atomic_path(path) as tmp:
        tmp.write_bytes(gzip.compress(df.to_csv(index=False, lineterminator="\n").encode(), mtime=0))
