"""The sport is one module (issue 26): every fact of a sport (the NFL, the Premier League under FPL rules) is a
field of its ``Sport`` spec, a league names its sport, and an unknown one is a config error naming ``sport`` and
the choices."""
import ast
import dataclasses
import re
import typing
from pathlib import Path

import pytest
import yaml

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League, Scoring
from ffbench_lib.config.load import dump_config, load_config, parse_config
from ffbench_lib.core import yamlsafe
from ffbench_lib.sport import SPORTS, Sport, UnknownSport, register, scoring, sport

PACKAGE = Path(__file__).resolve().parents[1] / "ffbench_lib"
TEAMS = [{"name": n, "agent": {"kind": "bot", "strategy": "adp"}} for n in ("a", "b")]


#: spec fields a sport may leave empty, and when: none of its positions is in fixed supply, no source spells a
#: team otherwise, no other id system, no cancelled game, no rookie draft to bucket by, the Roster model's own
#: defaults, no input it never has, scoring by a league's weights (not by position), no FLEX-free default
MAY_BE_EMPTY = {"position_supply", "team_aliases", "other_id_patterns", "cancelled_games", "rookie_fallback_ppg",
                "rookie_bucket_picks", "default_roster", "never_available", "position_rules", "has_minutes"}


@pytest.mark.parametrize("name", sorted(SPORTS))
def test_the_spec_is_complete(name):
    s = sport(name)
    assert s.name == name
    for f in dataclasses.fields(Sport):
        value = getattr(s, f.name)
        if f.name in MAY_BE_EMPTY or (f.name == "injury_statuses" and "injury_report" in s.never_available):
            continue
        assert value is not None and (value or isinstance(value, (int, float))), f"{name}: {f.name} is empty"
    if s.position_rules is None:  # scored by stat groups: every position scores some
        assert all(s.position_stat_groups[p] for p in s.positions)
    else:
        assert set(s.position_rules(s.seasons[-1])) == set(s.positions) and not s.stat_groups(s.positions)
    assert s.sources and (s.injury_statuses or "injury_report" in s.never_available)
    positions = set(s.positions)
    assert len(positions) == len(s.positions)
    assert set(s.default_slots) <= positions and set(s.max_slots) == positions == set(s.default_caps)
    assert set(s.position_stat_groups) == positions
    assert all(set(g) <= set(scoring.GROUPS) for g in s.position_stat_groups.values())
    assert set(s.position_aliases.values()) <= positions and not set(s.position_aliases) & positions
    assert set(s.position_supply) <= positions
    wide = ()
    for slot, eligible in s.flex_slots.items():  # narrow to wide: each slot's positions within the next one's
        assert set(eligible) <= positions and set(wide) <= set(eligible), slot
        wide = eligible
    assert set(s.team_aliases.values()) <= s.team_codes and not set(s.team_aliases) & s.team_codes
    assert all(full.split()[-1] for full in s.teams.values())  # city, then nickname
    assert re.fullmatch(s.player_id_pattern, s.made_up_id(0)) and s.is_player_id(s.made_up_id(9999999))
    assert re.fullmatch(s.real_id_pattern, s.made_up_id(1))
    assert s.out_status in s.injury_statuses or "injury_report" in s.never_available
    assert all(t in s.team_codes and 1 <= w <= s.max_weeks for games in s.cancelled_games.values() for t, w in games)
    assert set(s.scoring_presets) <= set(scoring.PRESETS) or s.position_rules is not None
    assert list(s.seasons) == sorted(s.seasons) and s.season_name(s.seasons[0])
    assert all(s.season_year(s.season_name(y)) == y for y in s.seasons)
    assert set(s.rookie_fallback_ppg) <= positions
    assert all(len(v) == len(s.rookie_bucket_picks) + 1 for v in s.rookie_fallback_ppg.values())
    assert set(s.bot_flex_share) <= positions and 0 < s.bot_flex_share_unlisted <= 1
    assert positions | set(s.flex_slots) <= set(s.colors)
    assert s.stat_groups(s.positions) == tuple(g for g in scoring.GROUPS
                                               if any(g in gs for gs in s.position_stat_groups.values()))


def test_nfl_facts():
    nfl = sport("nfl")
    assert nfl.positions == ("QB", "RB", "WR", "TE", "K", "DST") and nfl.calendar_unit == "week"
    team_level = nfl.positions_scoring("defense")
    assert team_level == ("DST",) and nfl.position_supply == {"DST": len(nfl.teams)} == {"DST": 32}
    assert nfl.teams["KC"] == "Kansas City Chiefs" and nfl.team_aliases["LAR"] == "LA"
    assert nfl.real_id_pattern == r"00-\d{7}|sdio:\d+|DST:[A-Z]{2,3}" and nfl.made_up_id(0) == "00-0000000"
    assert nfl.season_name(2024) == "2024" and 2024 in nfl.seasons


def test_the_spec_is_read_only():
    nfl = sport("nfl")
    with pytest.raises(dataclasses.FrozenInstanceError):
        nfl.positions = ()
    with pytest.raises(TypeError):
        nfl.default_slots["QB"] = 9
    with pytest.raises(ValueError, match="registered twice"):
        register(dataclasses.replace(nfl))


def test_the_config_choices_are_the_registry():
    """The sports and the scoring presets a config accepts are the registered ones."""
    for name in SPORTS:
        assert parse_config({"teams": TEAMS, "sport": name}).sport_spec is sport(name)
    presets = typing.get_args(typing.get_args(Scoring.model_fields["preset"].annotation)[0])
    assert set(presets) == {p for s in SPORTS.values() for p in s.scoring_presets}


def test_a_league_of_another_sport_gets_its_defaults_and_season_names():
    lg = parse_config({"teams": TEAMS, "sport": "fpl", "season": "2024-25"})
    assert lg.season == 2024 and lg.weeks == 38 and lg.data.source == "fpl" and lg.scoring.preset == "fpl"
    assert lg.roster.positions == ("GK", "DEF", "MID", "FWD") and lg.roster.auto_subs and lg.roster.size == 15
    assert lg.roster.ranges() == {"GK": (1, 1), "DEF": (3, 5), "MID": (2, 5), "FWD": (1, 3)}
    dumped = yaml.safe_load(dump_config(lg))
    assert dumped["season"] == "2024-25" and "sport" not in dumped["roster"] and parse_config(dumped) == lg
    for bad, problem in (({"weeks": 39}, "weeks: Input should be less than or equal to 38"),
                         ({"season": "2019-20"}, "season: no data for season 2019-20"),
                         ({"data": {"source": "nflverse"}}, "data.source: 'nflverse' holds no Premier League data"),
                         ({"scoring": "ppr"}, "scoring.preset: sport fpl scores by its own presets"),
                         ({"scoring": {"preset": "fpl", "weights": {"receptions": 1}}}, "custom weights"),
                         ({"roster": {"QB": 1}}, "roster.QB: unknown position; the positions are GK, DEF, MID, FWD")):
        with pytest.raises(ConfigError) as e:
            parse_config({"teams": TEAMS, "sport": "fpl", **bad})
        assert any(problem in p for p in e.value.problems), (bad, e.value.problems)
    # a partial roster lays its keys over the sport's: still a 15-man squad with a formation and an ordered bench
    lg = parse_config({"teams": TEAMS, "sport": "fpl", "roster": {"DEF": 4, "FLEX": 3}})  # a 4-at-the-back XI
    assert lg.roster.size == 15 and lg.roster.ranges()["DEF"] == (4, 5) and lg.roster.auto_subs
    for bad, problem in (({"sport": ["fpl"]}, "sport: Input should be a valid string"),
                         ({"sport": "fpl", "roster": {"most": {"GK": 2, "DEF": 5, "MID": 5, "FWD": 3}}},
                          "roster.most.GK: 2 is more than the 1 slot(s) a GK may fill"),
                         ({"sport": "fpl", "roster": {"flex_positions": ["DEF", "MID"]}},
                          "roster.most.FWD: 3 is more than the 1 slot(s) a FWD may fill"),
                         ({"sport": "fpl", "roster": {"most": {"DEF": 2}}}, "roster.most.DEF: 2 is below the 3")):
        with pytest.raises(ConfigError) as e:
            parse_config({"teams": TEAMS, **bad})
        assert any(problem in p for p in e.value.problems), (bad, e.value.problems)
    with pytest.raises(ConfigError, match="roster.auto_subs: automatic substitutions need to know who played"):
        parse_config({"teams": TEAMS, "roster": {"auto_subs": True}})
    with pytest.raises(ConfigError, match="scoring.preset: sport nfl scores by its own presets"):
        parse_config({"teams": TEAMS, "scoring": "fpl"})


def test_a_league_names_its_sport():
    lg = parse_config({"teams": TEAMS})
    assert lg.sport == "nfl" and lg.sport_spec is sport("nfl")
    assert parse_config({"teams": TEAMS, "sport": "nfl"}) == lg
    # the default sport dumps as configs always did (config.yaml, run ids and digests unchanged) and round-trips
    dumped = yaml.safe_load(dump_config(lg))
    assert "sport" not in dumped and parse_config(dumped) == lg


def test_an_unknown_sport_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as e:
        parse_config({"teams": TEAMS, "sport": "nba"})
    assert e.value.problems == ["sport: unknown sport; the sports are nfl, fpl (got 'nba')"]
    f = tmp_path / "league.yaml"
    f.write_text(yaml.safe_dump({"name": "x", "sport": "curling", "teams": TEAMS}, sort_keys=False))
    with pytest.raises(ConfigError) as e:
        load_config(f)
    assert e.value.problems == ["line 2: sport: unknown sport; the sports are nfl, fpl (got 'curling')"]
    with pytest.raises(UnknownSport, match=r"unknown sport 'nba'; the sports are nfl, fpl"):
        sport("nba")


def test_seasons_are_the_sports():
    with pytest.raises(ConfigError) as e:
        parse_config({"teams": TEAMS, "season": 2019})
    assert e.value.problems == [f"season: no data for season 2019; allowed: "
                                f"{', '.join(map(str, sport('nfl').seasons))} (got 2019)"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_the_yaml_loader_is_core_and_config_reads_no_data():
    assert not {m for m in _imports(PACKAGE / "core" / "yamlsafe.py") if m.startswith("ffbench_lib")}
    assert not {m for m in _imports(PACKAGE / "config" / "league.py") if m.startswith("ffbench_lib.data")}
    for path in (PACKAGE / "sport").glob("*.py"):
        assert all(m.startswith(("ffbench_lib.sport", "ffbench_lib.core")) for m in _imports(path)
                   if m.startswith("ffbench_lib")), path


def test_the_core_yaml_loader_names_file_and_line(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("a: 1\nb: 2\na: 3\n")
    with pytest.raises(yamlsafe.YAMLFileError) as e:
        yamlsafe.load_yaml(f)
    assert e.value.source == str(f) and "duplicate key 'a' (first at line 1)" in e.value.problem
    assert "line 3" in e.value.problem
    lines: dict[str, int] = {}
    f.write_text("a: 1\nb:\n  - c: 2\n")
    assert yamlsafe.load_yaml(f, lines=lines) == {"a": 1, "b": [{"c": 2}]}
    assert lines == {"a": 1, "b": 2, "b[0]": 3, "b[0].c": 3}
