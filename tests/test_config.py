import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import League
from ffbench_lib.config.load import dump_config, load_config, parse_config
from ffbench_lib.sport import sport

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "params" / "demo.yaml"


def demo() -> dict:
    return yaml.safe_load(DEMO.read_text())


def problems(data) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config(data)
    return exc.value.problems


def test_every_params_file_is_valid_and_has_its_data(data_dir, monkeypatch):
    from ffbench_lib.data.prepare import check_inputs

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))
    files = sorted((REPO / "params").glob("*.yaml"))
    assert DEMO in files
    leagues = {f.stem: load_config(f) for f in files if not f.name.startswith(("batch_", "exam_"))}  # no leagues
    for league in leagues.values():
        if league.data.source != "fpl":  # the Premier League's presets: test_every_fpl_params_file_has_its_data
            check_inputs(league)  # every file the league reads is there, K and DST stats included
    for name in ("demo", "league", "waivers", "local_llm", "ffbench_v1"):
        assert leagues[name].roster.size == 12 and len(leagues[name].teams) == 10, name
    # the presets are the leagues docs/leagues.md describes
    std, sf = leagues["standard_10"], leagues["superflex_12"]
    assert std.roster.slot_counts() == {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "K": 1, "DST": 1, "FLEX": 1}
    assert (std.roster.BENCH, std.roster.IR, len(std.teams), std.scoring.preset) == (6, 1, 10, "half_ppr")
    assert std.waivers.enabled and std.waivers.mode == "faab" and std.playoffs.enabled
    assert (std.playoffs.teams, std.regular_weeks, [std.playoff_round(w) for w in (15, 16, 17)]) == (4, 14, [1, 2, 2])
    assert sf.roster.SUPERFLEX == 1 and "QB" in sf.roster.superflex_positions and len(sf.teams) == 12
    v1 = leagues["ffbench_v1"]
    assert v1.scoring.preset == "ffbench_v1" and not v1.waivers.enabled and not v1.playoffs.enabled
    assert v1.roster.positions == ("QB", "RB", "WR", "TE") and v1.trades.weeks == [1, 3, 5, 7, 9]


def test_every_fpl_params_file_has_its_data(fpl_data_dir, monkeypatch):
    """The Premier League presets on the real fpl/ folder: every season file they read is there and played."""
    from ffbench_lib.data.prepare import check_inputs

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(fpl_data_dir.parent))
    leagues = [load_config(f) for f in sorted((REPO / "params").glob("fpl_*.yaml"))]
    assert [lg.name for lg in leagues] == ["fpl-draft", "fpl_llm"]
    for league in leagues:
        assert (league.sport, league.season, league.weeks, len(league.teams)) == ("fpl", 2024, 38, 10)
        assert check_inputs(league) == 38


def test_defaults_are_the_product_league():
    lg = load_config(DEMO)
    r = lg.roster
    assert (r.slots, r.FLEX, r.BENCH) == ({"QB": 1, "RB": 2, "WR": 2, "TE": 1}, 1, 5)
    assert r.flex_positions == ("RB", "WR", "TE")
    assert lg.scoring_weights["receptions"] == 1.0
    assert parse_config(yaml.safe_load(dump_config(lg))) == lg  # the resolved dump round-trips


def test_missing_model_names_the_field():
    d = demo()
    d["teams"][3]["agent"] = {"kind": "llm"}
    assert problems(d) == ["teams[3].agent.model: field required"]


def test_unknown_keys_are_errors():
    d = demo()
    d["roster"]["SUPERFLX"] = 1
    d["sead"] = 3
    out = problems(d)
    assert "sead: unknown key (check the spelling against the config reference in docs/configuration.md)" in out
    assert any(p.startswith("roster.SUPERFLX: unknown position; the positions are QB, RB, WR, TE, K, DST") for p in out)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["teams"][0]["agent"].update(strategy="smart"),
     "teams[0].agent.strategy: Input should be 'random', 'adp', 'vorp' or 'recent_form' (got 'smart')"),
    (lambda d: d["teams"][1].update(agent={"kind": "robot"}),
     "teams[1].agent.kind: got 'robot'; allowed: 'bot', 'llm', 'human' or 'python'"),
    (lambda d: d.update(scoring="full_ppr"),
     "scoring.preset: Input should be 'ppr', 'half_ppr', 'standard', 'ffbench_v1' or 'fpl' (got 'full_ppr')"),
    (lambda d: d.update(scoring={"weights": {"passing_td": 6}}), "scoring.weights: unknown stat 'passing_td'"),
    (lambda d: d.update(season=2019), "season: no data for season 2019; allowed: 2021, 2022, 2023, 2024, 2025 (got 2019)"),
    (lambda d: d.update(weeks=19), "weeks: Input should be less than or equal to 18 (NFL seasons have 18 weeks) (got 19)"),
    (lambda d: d["trades"].update(weeks=[4, 20]), "trades.weeks: week 20 is outside 1..17"),
    (lambda d: d["teams"].pop(), "teams: 9 teams; an even number is needed for weekly matchups"),
    (lambda d: d["teams"][1].update(name="VORP-1"), "duplicate team name 'VORP-1'"),
    (lambda d: d["teams"][0].update(name=" "), "teams[0].name: String should have at least 1 character (got ' ')"),
    (lambda d: d["teams"][0].update(name="  "), "teams[0].name: String should have at least 1 character (got '  ')"),
    (lambda d: d.update(seed=True), "seed: expected a whole number, not true/false (got True)"),
    (lambda d: d["roster"].update(caps={"QB": 0}), "roster: caps.QB=0 is below the 1 starting QB slot(s)"),
    (lambda d: d["data"].update(source="espn"), "data.source: Input should be 'nflverse', 'sportsdataio' or 'fpl' (got 'espn')"),
    (lambda d: d["draft"].update(order="snake"), "draft.order: Input should be 'random', 'fixed' or 'rotate' (got 'snake')"),
    (lambda d: d["teams"][2].update(agent={"kind": "llm", "model": "x", "api_key_env": "sk-live-123"}),
     "teams[2].agent.api_key_env: give the NAME of an environment variable"),
    (lambda d: d["teams"][2].update(agent={"kind": "llm", "model": "x", "temperature": 5}),
     "teams[2].agent.temperature: Input should be less than or equal to 2 (got 5)"),
])
def test_error_messages_name_field_value_and_fix(mutate, expected):
    d = demo()
    mutate(d)
    out = problems(d)
    assert any(expected in p for p in out), out


def test_secret_values_never_echoed_back():
    d = demo()
    d["teams"][2]["agent"] = {"kind": "llm", "model": "x", "api_key_env": "sk-" + "a" * 40}
    (msg,) = problems(d)
    assert "sk-aaaa" not in msg and msg.endswith("(value hidden)")


def test_yaml_syntax_error_has_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("season: 2024\nteams: [\n  {name: a\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line \d+"):
        load_config(f)


def test_cli_exits_2_without_traceback(tmp_path):
    d = demo()
    d["teams"][3]["agent"] = {"kind": "llm"}
    f = tmp_path / "league.yaml"
    f.write_text(yaml.safe_dump(d))
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(f)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "teams[3].agent.model: field required" in r.stderr
    assert "Traceback" not in r.stderr
    ok = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(DEMO)], capture_output=True, text=True)
    assert ok.returncode == 0 and "10 teams" in ok.stdout


def test_overrides_replace_top_level_keys():
    assert load_config(DEMO, seed=42).seed == 42
    assert isinstance(load_config(DEMO), League)


def test_team_names_are_stripped():
    d = demo()
    d["teams"][0]["name"] = "  Sharks "
    assert parse_config(d).teams[0].name == "Sharks"


def test_token_counts_are_shown_and_credentials_hidden_in_messages(tmp_path):
    # a field named like a count of tokens is no credential: its bad value is shown; a key-like value is hidden
    # wherever it stands
    from ffbench_lib.config.errors import ConfigError
    from ffbench_lib.config.load import parse_config

    team = {"name": "a", "agent": {"kind": "llm", "model": "openai/x", "max_prompt_tokens": -5}}
    bot = {"name": "b", "agent": {"kind": "bot", "strategy": "adp"}}
    with pytest.raises(ConfigError) as err:
        parse_config({"teams": [team, bot]})
    assert "teams[0].agent.max_prompt_tokens" in str(err.value) and "-5" in str(err.value)
    team = {"name": "a", "agent": {"kind": "llm", "model": "openai/x", "extra": "sk-live-0123456789abcdef"}}
    with pytest.raises(ConfigError) as err:
        parse_config({"teams": [team, bot]})
    assert "teams[0].agent.extra" in str(err.value) and "sk-live" not in str(err.value)


def _config_keys(model, prefix=""):
    """Every key a league file may hold: ``section.key`` paths of the pydantic models (agents by kind)."""
    import typing

    from pydantic import BaseModel

    out = []
    for name, field in model.model_fields.items():
        if model.__name__ == "Roster" and name == "slots":
            out += [f"{prefix}{pos}" for pos in sport("nfl").positions]  # the flat per-position keys
            continue
        out.append(f"{prefix}{name}")
        args = typing.get_args(field.annotation) or (field.annotation,)
        for arg in (a for t in args for a in (typing.get_args(t) or (t,))):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out += _config_keys(arg, f"{prefix}{name}.")
    return out


def test_the_config_reference_names_every_key():
    """A user reads the docs' configuration reference to write a league file: every key the models accept is
    named there."""
    text = (REPO / "docs" / "configuration.md").read_text()
    section = text[text.index("## League file"):text.index("## Batch spec")]
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", section))
    missing = sorted({k for k in _config_keys(League) if k.rsplit(".", 1)[-1] not in words})
    assert missing == [], f"docs/configuration.md does not name {missing}"


def test_one_endpoint_has_one_concurrency_limit():
    """Teams calling one provider endpoint share its leases (a batch or a cluster holds them for everyone), so
    two limits for it would leave one of them silently unused."""
    d = demo()
    base = "http://127.0.0.1:9/v1"
    d["teams"][1]["agent"] = {"kind": "llm", "model": "openai/a", "api_base": base, "max_concurrency": 2}
    d["teams"][4]["agent"] = {"kind": "llm", "model": "openai/b", "api_base": base, "max_concurrency": 3}
    names = [d["teams"][i]["name"] for i in (1, 4)]
    assert problems(d) == [f"teams[4].agent.max_concurrency: 3 for team {names[1]!r}, but 2 for team {names[0]!r} "
                           f"on the same endpoint (openai@{base}), whose calls share one limit; give them the same "
                           "max_concurrency"]
    d["teams"][4]["agent"]["api_base"] = "http://127.0.0.1:10/v1"  # another endpoint: its own limit
    parse_config(d)
    d["teams"][4]["agent"].update(api_base=base, max_concurrency=2)
    parse_config(d)
