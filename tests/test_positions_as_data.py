"""Positions and slots are data: the league config's roster section is the only source of positions, slots,
flex eligibility and caps (issue 11), and the sport module (``ffbench_lib/sport/``) the only one of the sport's
facts (issue 26): no position, team code, player-id pattern or injury status is written in code outside it (team
codes, ids and statuses also in the NFL data readers, which read source formats)."""
import re
import ast
import io
import tokenize
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import yaml

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League, Roster
from ffbench_lib.config.load import dump_config, load_config, parse_config
from ffbench_lib.game.rules.draft import legal_positions
from ffbench_lib.game.rules.lineup import OUT_VALUE, best_lineup, legal_lineups, random_lineup, slot_counts, start_value, validate_and_repair
from ffbench_lib.game.rules.roster import draft_pick_problem, unmet_starters
from ffbench_lib.sport import SPORTS, sport

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ffbench_lib"
KNOWN_POSITIONS = sport("nfl").positions
#: today's positions plus the ones issue 12 adds: none may appear as a literal in code
POSITION_WORDS = {*KNOWN_POSITIONS, "QB", "RB", "WR", "TE", "K", "DST"}
#: the one home of every sport fact
SPORT_DIR = PACKAGE / "sport"
#: the NFL data readers: they read source formats (nflverse and SportsData.io team codes, gsis ids), so they may
#: name team codes and ids; base.py holds the nflverse id crosswalk reader
NFL_READERS = {PACKAGE / "data" / f for f in ("nflverse.py", "sportsdataio.py", "defense.py", "projection_files.py",
                                             "schema.py", "base.py")}
#: the synthetic NFL world writes the nflverse source format (its team codes, statuses, depth chart by position),
#: as the readers read it: a generator of one sport's files, exempt from both scans like the sport module
SYNTHETIC_WRITERS = {PACKAGE / "testing" / "synthetic.py"}
#: every sport's team codes and aliases and injury statuses (and a few more the tests know), exact as written
TEAM_WORDS = {c for s in SPORTS.values() for c in (*s.teams, *s.team_aliases)} | {"KC", "SF", "LAR", "JAC"}
STATUS_WORDS = {st for s in SPORTS.values() for st in s.injury_statuses} | {"Out", "Questionable", "Doubtful"}
ID_PATTERNS = [s.player_id_pattern for s in SPORTS.values()] + [r"00-\d{7}"]
TEAMS = [{"name": n, "agent": {"kind": "bot", "strategy": "adp"}} for n in ("a", "b")]


def position_literals(source: str) -> list[tuple[int, str]]:
    """(line, token) of every position written as code: a string literal equal to a position ('QB', "DST"),
    an attribute (``roster.QB``) or a keyword/name (``QB=1``). Comments and docstrings are not code."""
    out = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.STRING:
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue  # an f-string: not a plain literal
            if isinstance(value, str) and value in POSITION_WORDS:
                out.append((tok.start[0], tok.string))
        elif tok.type == tokenize.NAME and tok.string in POSITION_WORDS:
            after_dot = i > 0 and tokens[i - 1].string == "."
            if tok.string != "K" or after_dot:  # a bare K may be a maths constant; roster.K is a position
                out.append((tok.start[0], tok.string))
    return out


def test_the_literal_scanner_sees_code_not_prose():
    src = ('"""A docstring naming QB and RB."""\n'
           "# a comment: 'WR'\n"
           "x = ('QB', \"TE\")\n"
           "y = roster.DST + f'{pos}K'\n"
           "z = dict(WR=1)\n"
           "K = 3\n")
    assert position_literals(src) == [(3, "'QB'"), (3, '"TE"'), (4, "DST"), (5, "WR")]


def sport_literals(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every string literal in code that is a team code or alias, an injury status, a player-id
    pattern (as regex text) or a player id of that pattern (``"00-0000000"``). Comments, docstrings and f-strings
    are not literals."""
    docs = {(n.lineno, n.col_offset) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING or tok.start in docs:
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            continue  # an f-string: not a plain literal
        if isinstance(value, str) and (value in TEAM_WORDS or value in STATUS_WORDS or any(
                pat in value or re.search(pat, value) for pat in ID_PATTERNS)):
            out.append((tok.start[0], tok.string))
    return out


def test_the_sport_literal_scanner_sees_code_not_prose():
    src = ('"""A docstring naming KC, Out and 00-0033873."""\n'
           "# a comment: 'SF' 'Out'\n"
           "x = ('KC', \"Out\", 'Kansas City')\n"
           "y = re.compile(r'00-\\d{7}|sdio:\\d+')\n"
           "z = '00-0000000' + f'{team}'\n")
    assert sport_literals(src) == [(3, "'KC'"), (3, '"Out"'), (4, "r'00-\\d{7}|sdio:\\d+'"), (5, "'00-0000000'")]


def test_no_sport_fact_literal_outside_the_sport_module():
    """Team codes, player-id patterns and injury statuses come from the sport (``league.sport_spec`` or
    ``sport("nfl")``); only the sport module and the NFL data readers (source formats) name them."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(SPORT_DIR) or path in NFL_READERS | SYNTHETIC_WRITERS:
            continue
        for line, tok in sport_literals(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(REPO)}:{line}: {tok}")
    assert not found, "sport facts in code (read them from the Sport spec):\n" + "\n".join(found)


def test_no_position_literal_outside_the_sport_module():
    """Positions come from the league's roster (or the sport's ``positions`` where no league exists)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(SPORT_DIR) or path in SYNTHETIC_WRITERS:
            continue
        for line, tok in position_literals(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(REPO)}:{line}: {tok}")
    assert not found, "position literals in code (take them from the league's Roster):\n" + "\n".join(found)


# ------------------------------------------------------------------------------------------------ Roster API

def test_default_roster_api():
    r = Roster()
    assert r.slots == {"QB": 1, "RB": 2, "WR": 2, "TE": 1}
    assert r.positions == ("QB", "RB", "WR", "TE") == KNOWN_POSITIONS[:4]
    assert (r.starting("RB"), r.starting("K"), r.FLEX, r.BENCH, r.size, r.starters) == (2, 0, 1, 5, 12, 7)
    assert r.slot_counts() == {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1} == slot_counts(r)
    assert r.flex_positions == ("RB", "WR", "TE")
    assert r.caps == {"QB": 3, "RB": 6, "WR": 6, "TE": 3}


def test_roster_yaml_stays_flat_and_round_trips():
    r = Roster.model_validate({"WR": 3, "QB": 2, "TE": 0, "FLEX": 2, "BENCH": 3, "flex_positions": ["WR", "RB"],
                               "caps": {"QB": 3, "WR": 6}})
    dumped = r.model_dump(mode="json")
    # positions in KNOWN_POSITIONS order whatever the file's order, then the other keys, as before issue 11
    assert dumped == {"QB": 2, "RB": 2, "WR": 3, "TE": 0, "FLEX": 2, "BENCH": 3, "flex_positions": ["WR", "RB"],
                      "caps": {"QB": 3, "WR": 6}}
    assert Roster.model_validate(dumped) == r
    assert Roster.model_validate(r.model_dump()) == r  # python mode too (tuples)
    assert Roster(QB=2, RB=2, WR=3, TE=0, FLEX=2, BENCH=3, flex_positions=("WR", "RB"),
                  caps={"QB": 3, "WR": 6}) == r  # keyword construction, as bots and tests use it


def test_dump_config_is_flat_for_every_params_file():
    for f in sorted((REPO / "params").glob("*.yaml")):
        if f.name.startswith(("batch_", "exam_")):  # batch specs and exam specs or candidates: no leagues
            continue
        lg = load_config(f)
        roster = yaml.safe_load(dump_config(lg))["roster"]
        known = lg.sport_spec.positions
        positions = [p for p in known if p in lg.roster.positions]  # the positions first, in the sport's order
        assert list(roster)[:len(positions) + 1] == [*positions, "FLEX"], f
        assert "slots" not in roster
        assert parse_config(yaml.safe_load(dump_config(lg))) == lg


def test_config_differences_names_a_changed_slot():
    from ffbench_lib.config.diff import config_differences

    a = parse_config({"teams": TEAMS})
    b = parse_config({"teams": TEAMS, "roster": {"WR": 3}})
    assert config_differences(dump_config(a), b) == {"roster.WR": [2, 3]}
    assert config_differences(dump_config(a), a) == {}


def problems(roster: dict) -> list[str]:
    with pytest.raises(ConfigError) as e:
        parse_config({"teams": TEAMS, "roster": roster})
    return e.value.problems


@pytest.mark.parametrize("roster, expected", [
    ({"KR": 1}, "roster.KR: unknown position; the positions are QB, RB, WR, TE, K, DST (a roster also takes FLEX, "
                "BENCH, IR, flex_positions and caps)"),
    ({"SUPERFLEX": 1, "superflex_positions": ["QB", "RB"]},
     "roster: superflex_positions must include every flex position (SUPERFLEX is the wider slot)"),
    ({"SUPERFLEX": 1, "superflex_positions": ["QB", "K"]},
     "roster.superflex_positions[1]: 'K' is not a position of this league; the league's positions are QB, RB, WR, TE"),
    ({"qb": 1}, "roster.qb: unknown key (check the spelling against the config reference in docs/configuration.md)"),
    ({"slots": {"QB": 1}}, "roster.slots: unknown key; give each position's starting slots as its own key"),
    ({"QB": 9}, "roster.QB: Input should be less than or equal to 3 (got 9)"),
    ({"WR": -1}, "roster.WR: Input should be greater than or equal to 0 (got -1)"),
    ({"RB": "two"}, "roster.RB: Input should be a valid integer (got 'two')"),
    ({"flex_positions": ["RB", "K"]}, "roster.flex_positions[1]: 'K' is not a position of this league; the "
                                      "league's positions are QB, RB, WR, TE"),
    ({"flex_positions": ["RB", "RB"]}, "roster.flex_positions[1]: 'RB' is listed twice; list each position once"),
    ({"caps": {"QB": 3, "DST": 2}}, "roster.caps.DST: not a position of this league; the league's positions are "
                                    "QB, RB, WR, TE"),
    # caps messages as before issue 11
    ({"QB": 2, "caps": {"QB": 1}}, "roster: caps.QB=1 is below the 2 starting QB slot(s); raise the cap"),
    ({"FLEX": 3, "caps": {"QB": 3, "RB": 2, "WR": 2, "TE": 1}},
     "roster: FLEX=3 cannot be filled: the caps of RB/WR/TE leave 0 player(s) beyond their own starting slots; "
     "raise a cap or lower FLEX"),
    ({"BENCH": 10, "caps": {"QB": 2, "RB": 4, "WR": 4, "TE": 2}},
     "roster: the caps allow 12 players in all, fewer than the roster's 17 slots; raise a cap or lower BENCH"),
    ({"QB": 0, "RB": 0, "WR": 0, "TE": 0, "FLEX": 0, "BENCH": 0}, "roster: the roster has no slots"),
])
def test_roster_errors_name_the_field(roster, expected):
    out = problems(roster)
    assert len(out) == 1 and out[0].startswith(expected), out


def test_roster_errors_in_a_file_are_one_clean_line(tmp_path):
    f = tmp_path / "league.yaml"
    f.write_text(yaml.safe_dump({"teams": TEAMS, "roster": {"DEF": 1}}))
    with pytest.raises(ConfigError) as e:
        load_config(f)
    assert re.match(r"line \d+: roster\.DEF: unknown position", str(e.value).splitlines()[1].strip())


# ------------------------------------------------------------------------------ superflex and empty slots

SUPERFLEX = {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1, "BENCH": 5, "flex_positions": ["QB", "RB", "WR", "TE"]}


def test_superflex_validates_and_counts():
    lg = parse_config({"teams": TEAMS, "roster": SUPERFLEX})
    r = lg.roster
    assert r.flex_positions == ("QB", "RB", "WR", "TE")
    assert r.slot_counts() == {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1}
    assert yaml.safe_load(dump_config(lg))["roster"]["flex_positions"] == ["QB", "RB", "WR", "TE"]


def test_superflex_starts_a_second_qb_at_flex():
    r = Roster.model_validate(SUPERFLEX)
    pos = {"q1": "QB", "q2": "QB", "r1": "RB", "r2": "RB", "r3": "RB", "w1": "WR", "w2": "WR", "t1": "TE"}
    vals = {"q1": 25.0, "q2": 20.0, "r1": 15.0, "r2": 12.0, "r3": 8.0, "w1": 14.0, "w2": 11.0, "t1": 7.0}
    lineup = best_lineup(pos, vals, r)
    assert lineup["QB"] == ["q1"] and lineup["FLEX"] == ["q2"]
    # the same lineup is among the legal ones, and the best by brute force
    best = max(legal_lineups(pos, r), key=lambda lu: sum(vals[p] for ids in lu.values() for p in ids))
    assert {s: sorted(ids) for s, ids in lineup.items()} == best
    ok = validate_and_repair({"QB": ["q2"], "FLEX": ["q1"]}, pos, vals, r)
    assert ok.slots["FLEX"] == ["q1"] and not any("not eligible" in p for p in ok.problems)
    # a QB at FLEX is illegal in the default league
    bad = validate_and_repair({"FLEX": ["q1"]}, pos, vals, Roster())
    assert any("q1 is a QB, not eligible" in p for p in bad.problems)


def test_superflex_draft_counts_a_spare_qb_toward_flex():
    r = Roster.model_validate({**SUPERFLEX, "BENCH": 0})  # 7 picks, 7 starters
    assert unmet_starters(["QB", "QB"], r) == 5  # the second QB fills FLEX
    no_qb_flex = Roster.model_validate({**SUPERFLEX, "BENCH": 0, "flex_positions": ["RB", "WR"]})
    assert unmet_starters(["QB", "QB"], no_qb_flex) == 6
    # a second QB is a legal pick only where he can start (superflex); elsewhere he leaves too few picks
    assert draft_pick_problem(["QB"], "QB", r) is None
    assert "too few picks" in draft_pick_problem(["QB"], "QB", no_qb_flex)
    assert legal_positions(["QB", "QB", "RB", "RB", "WR", "WR"], r) == ["TE"]


def test_zero_slot_position_stays_a_position():
    """TE: 0 removes the TE slot but not the position: TEs may be drafted (cap) and start at FLEX."""
    r = Roster.model_validate({"TE": 0, "FLEX": 1, "BENCH": 2})
    assert r.positions == ("QB", "RB", "WR", "TE") and r.slots["TE"] == 0 and r.starting("TE") == 0
    assert r.slot_counts() == {"QB": 1, "RB": 2, "WR": 2, "FLEX": 1}
    assert r.size == 8 and r.starters == 6
    assert "TE" in legal_positions([], r)
    pos = {"q": "QB", "r1": "RB", "r2": "RB", "w1": "WR", "w2": "WR", "t": "TE"}
    vals = {"q": 1.0, "r1": 1.0, "r2": 1.0, "w1": 1.0, "w2": 1.0, "t": 9.0}
    assert best_lineup(pos, vals, r) == {"QB": ["q"], "RB": ["r1", "r2"], "WR": ["w1", "w2"], "FLEX": ["t"]}
    draws = random_lineup(pos, r, np.random.default_rng(0))
    assert set(draws) == {"QB", "RB", "WR", "FLEX"} and draws["FLEX"] == ["t"]


def test_no_flex_league_has_no_flex_slot():
    r = Roster.model_validate({"QB": 2, "RB": 2, "WR": 3, "TE": 1, "FLEX": 0, "BENCH": 6,
                               "caps": {"QB": 4, "RB": 6, "WR": 6, "TE": 3}})
    assert r.slot_counts() == {"QB": 2, "RB": 2, "WR": 3, "TE": 1}
    assert all("FLEX" not in lu for lu in legal_lineups({"a": "QB", "b": "QB", "c": "RB", "d": "RB", "e": "WR",
                                                         "f": "WR", "g": "WR", "h": "TE"}, r))


# ------------------------------------------------------------------------------------------- start_value

@pytest.mark.parametrize("card, value", [
    ({"proj_week": 12.5, "zero_flags": []}, 12.5),
    ({"proj_week": None, "zero_flags": []}, 0.0),
    ({"zero_flags": []}, 0.0),
    ({"proj_week": 30.0, "zero_flags": ["bye"]}, OUT_VALUE),
    ({"proj_week": 30.0, "zero_flags": ["out"]}, OUT_VALUE),
])
def test_start_value(card, value):
    assert start_value(card) == value


def test_start_value_benches_a_flagged_player_below_a_zero_projection():
    """-1, not 0: a player on bye loses to a healthy player projected 0 and wins only an empty slot."""
    r = Roster.model_validate({"QB": 1, "RB": 1, "WR": 1, "TE": 1, "FLEX": 0, "BENCH": 2})
    cards = {"q": ("QB", 20.0, ["bye"]), "q2": ("QB", 0.0, []), "r": ("RB", 5.0, ["out"]), "w": ("WR", 5.0, []),
             "t": ("TE", 1.0, [])}
    pos = {p: c[0] for p, c in cards.items()}
    vals = {p: start_value({"proj_week": c[1], "zero_flags": c[2]}) for p, c in cards.items()}
    assert best_lineup(pos, vals, r) == {"QB": ["q2"], "RB": ["r"], "WR": ["w"], "TE": ["t"]}


def test_legal_lineups_count_matches_combinatorics():
    """A sanity check of the data-driven slot loop: 3 RB for 2 RB slots + FLEX from the one left or 2 WR."""
    r = Roster.model_validate({"QB": 0, "RB": 2, "WR": 1, "TE": 0, "FLEX": 1, "BENCH": 3, "flex_positions": ["RB", "WR"],
                               "caps": {"RB": 3, "WR": 3}})
    pos = {"r1": "RB", "r2": "RB", "r3": "RB", "w1": "WR", "w2": "WR"}
    n = sum(1 for _ in legal_lineups(pos, r))
    # RB pair (3 ways) x WR (2 ways) x FLEX from the 2 players left
    assert n == len(list(combinations("abc", 2))) * 2 * 2


def test_league_default_roster_is_the_default():
    assert League.model_validate({"teams": TEAMS}).roster == Roster()
