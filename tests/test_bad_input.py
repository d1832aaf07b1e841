"""Bad input gets one clear message: the real CLI on each bad file or option exits non-zero, prints no
traceback, names the field or file, and writes nothing to ``--out``.

Bad data files are modified copies of small parts of the real data, written to tmp_path; unchanged files are
symlinked read-only from the data directory (never copied into the repo).
"""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ffbench_lib import cli

from engine_helpers import data_copy

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "params" / "demo.yaml"
BATCH = REPO / "params" / "batch_demo.yaml"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch, data_dir):
    """Prepared-season caches go to tmp_path, never into the repo."""
    monkeypatch.setenv("FFBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data_dir))


def ffbench(*args: str) -> tuple[int, str, str]:
    """``ffbench ARGS`` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def refused(*args: str, expect: list[str]) -> str:
    code, _, err = ffbench(*args)
    assert code not in (0, None), err
    assert "Traceback" not in err
    for text in expect:
        assert text in err, err
    return err


def league_file(tmp_path: Path, name: str = "league.yaml", **changes) -> Path:
    d = yaml.safe_load(DEMO.read_text())
    for key, value in changes.items():
        d[key] = value
    f = tmp_path / name
    f.write_text(yaml.safe_dump(d, sort_keys=False))
    return f


# ------------------------------------------------------------------------------------------ YAML parsing

def test_alias_bomb_is_refused_quickly_by_the_real_cli(tmp_path):
    f = tmp_path / "bomb.yaml"
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    f.write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-m", "ffbench_lib", "validate", str(f)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "expands to more than 100,000 values through aliases" in r.stderr and "bomb.yaml" in r.stderr


def test_too_many_aliases_and_too_big_files_are_refused(tmp_path):
    f = tmp_path / "aliases.yaml"
    f.write_text("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n")
    refused("validate", f, expect=["more than 100 aliases", "line 2"])
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * 1_100_000 + "\n")
    refused("validate", big, expect=["big.yaml", "at most 1,000,000"])


def test_duplicate_keys_are_refused_with_line_numbers(tmp_path):
    f = tmp_path / "dup.yaml"
    f.write_text(DEMO.read_text().replace("seed: 1\n", "seed: 1\nseed: 2\n"))
    refused("validate", f, expect=["duplicate key 'seed' (first at line 5)", "line 6"])
    nested = tmp_path / "nested.yaml"
    nested.write_text(DEMO.read_text().replace("  QB: 1\n", "  QB: 1\n  QB: 2\n"))
    refused("validate", nested, expect=["duplicate key 'QB'"])
    one_line = tmp_path / "one_line.yaml"  # twice in one flow mapping: the last would silently win
    one_line.write_text(DEMO.read_text().replace("strategy: vorp}", "strategy: vorp, strategy: adp}", 1))
    refused("validate", one_line, expect=["duplicate key 'strategy' (first at line", "keep one"])


def test_anchors_and_merge_keys_still_work(tmp_path):
    f = tmp_path / "anchors.yaml"
    text = DEMO.read_text().replace("  - {name: VORP-1, agent: {kind: bot, strategy: vorp}}",
                                    "  - {name: VORP-1, agent: &v {kind: bot, strategy: vorp}}")
    text = text.replace("  - {name: VORP-2, agent: {kind: bot, strategy: vorp}}", "  - {name: VORP-2, agent: *v}")
    f.write_text(text)
    code, out, err = ffbench("validate", f)
    assert code == 0, err


def test_non_utf8_config(tmp_path):
    f = tmp_path / "latin1.yaml"
    f.write_bytes(DEMO.read_bytes().replace(b"name: demo", b"name: d\xe9mo"))
    refused("validate", f, expect=["latin1.yaml", "not UTF-8", "line 2"])


def test_malformed_batch_yaml_and_batch_out_that_is_a_file(tmp_path):
    f = tmp_path / "batch.yaml"
    f.write_text(f"name: x\nbase: {DEMO}\nseeds: [0, 1\n")
    refused("batch", f, expect=["invalid batch file", "not valid YAML at line"])
    taken = tmp_path / "taken"
    taken.write_text("a file")
    f.write_text(f"name: x\nbase: {DEMO}\nseeds: [0]\nout: {taken}\nanalysis: false\n")
    refused("batch", f, expect=[f"out: {taken} cannot be a folder"])
    assert taken.read_text() == "a file"


def test_bad_field_batch_names_the_field_and_writes_nothing(tmp_path):
    f = tmp_path / "field.yaml"
    f.write_text(f"name: x\nbase: {DEMO}\ndesign: field\nseeds: [0, 1]\nout: {tmp_path / 'out'}\nfield:\n"
                 "  seat: Nobody\n  candidates: [{kind: bot, strategy: adp}, {kind: bot, strategy: vorp}]\n")
    refused("batch", f, expect=["field.seat: no team 'Nobody' in base demo.yaml; use one of: VORP-1, ADP-1"])
    f.write_text(f.read_text().replace("seat: Nobody", "seat: ADP-1").replace("strategy: vorp", "strategy: adp"))
    refused("batch", f, expect=["field.candidates[1]: bot:adp is also candidates[0]", "keep one"])
    f.write_text(f.read_text().replace("seeds: [0, 1]", "seeds: [0]"))
    refused("batch", f, expect=["seeds: a field batch needs at least 2 seeds to compare candidates (paired by seed)"])
    assert not (tmp_path / "out").exists()


def test_league_and_batch_files_are_told_apart(tmp_path):
    refused("batch", DEMO, expect=["this is a league file", "ffbench run"])
    refused("run", BATCH, "--out", tmp_path / "run", expect=["this is a batch file", "ffbench batch"])
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------------------- config values

def test_odd_team_count_names_the_field_without_dumping_the_config(tmp_path):
    d = yaml.safe_load(DEMO.read_text())
    d["teams"].append({"name": "Extra", "agent": {"kind": "bot", "strategy": "adp"}})
    err = refused("validate", league_file(tmp_path, teams=d["teams"]), expect=["teams: 11 teams"])
    assert "VORP-1" not in err and "{'name'" not in err and len(err) < 300


def test_nan_scoring_weight_is_refused(tmp_path):
    f = league_file(tmp_path, scoring={"preset": "ppr", "weights": {"receptions": float("nan")}})
    refused("validate", f, expect=["scoring.weights: receptions must be a finite number", "(got nan)"])


def test_roster_the_draft_cannot_fill_is_refused(tmp_path):
    roster = {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 3, "BENCH": 0,
              "caps": {"QB": 1, "RB": 2, "WR": 2, "TE": 1}}
    f = league_file(tmp_path, roster=roster)
    refused("validate", f, expect=["roster: FLEX=3 cannot be filled", "raise a cap"])
    refused("run", f, "--out", tmp_path / "run", "--quiet", expect=["FLEX=3 cannot be filled"])
    assert not (tmp_path / "run").exists()
    small = league_file(tmp_path, "small.yaml", roster={"BENCH": 10, "caps": {"QB": 2, "RB": 4, "WR": 4, "TE": 2}})
    refused("validate", small, expect=["the caps allow 12 players in all, fewer than the roster's 17 slots"])


@pytest.mark.parametrize("args, expect", [
    (["--seed", "-1"], "argument --seed: must be 0 or more (got -1)"),
    (["--seed", "x"], "argument --seed: expected a whole number"),
])
def test_bad_seed(tmp_path, args, expect):
    refused("run", DEMO, "--out", tmp_path / "run", *args, expect=[expect])
    assert not (tmp_path / "run").exists()


def test_seed_in_the_config_must_not_be_negative(tmp_path):
    refused("validate", league_file(tmp_path, seed=-3), expect=["seed: Input should be greater than or equal to 0"])


def test_out_that_is_a_file_or_inside_one(tmp_path):
    f = tmp_path / "taken.txt"
    f.write_text("keep me")
    refused("run", DEMO, "--out", f, expect=["argument --out", "is a file"])
    refused("run", DEMO, "--out", f / "run", expect=["argument --out", "is a file"])
    refused("data", "prepare", "--season", "2024", "--out", f, expect=["argument --out", "is a file"])
    assert f.read_text() == "keep me"


def test_out_that_cannot_be_written(tmp_path):
    """/sys refuses new files even to root (a chmod-ed folder would not stop root)."""
    refused("run", DEMO, "--out", "/sys/ffbench-run", expect=["argument --out", "/sys is not writable"])
    assert not Path("/sys/ffbench-run").exists()


def test_bad_worker_count():
    refused("batch", BATCH, "--workers", "-3", expect=["argument --workers: must be 1..32 (got -3)"])
    refused("batch", BATCH, "--workers", "0", expect=["argument --workers"])


# ------------------------------------------------------------------------------------- data availability

def test_season_without_previous_season_is_refused_unless_allowed(tmp_path, data_dir):
    f = league_file(tmp_path, season=2021)
    msg = ["season 2021 needs the 2020 weekly stats", "data.allow_missing_history: true"]
    refused("validate", f, expect=msg)
    refused("run", f, "--out", tmp_path / "run", "--quiet", expect=msg)
    assert not (tmp_path / "run").exists()
    d = yaml.safe_load(f.read_text())
    d["data"]["allow_missing_history"] = True
    f.write_text(yaml.safe_dump(d))
    code, out, err = ffbench("validate", f)
    assert code == 0, err


def test_missing_history_override_is_recorded(data_dir, tmp_path):
    from ffbench_lib.data.prepare import prepare_season

    root = data_copy(tmp_path, data_dir, drop=("stats_player_week_2021.csv.gz", "player_stats_week_2021.csv"))
    p = prepare_season(2022, "nflverse", root, allow_missing_history=True)
    assert p.manifest["missing_history"] == [2021]
    assert (p.players["prev_points"] == 0).all()


def test_season_2025_validate_and_run_agree_on_the_missing_team_stats(tmp_path):
    """2025 runs without its injury report (tests/test_season_2025.py), but team defenses need its team stats."""
    d = yaml.safe_load(DEMO.read_text())
    f = league_file(tmp_path, season=2025, roster={**d["roster"], "DST": 1, "caps": {**d["roster"]["caps"], "DST": 2}})
    msg = ["stats_team_week_2025.csv missing", "remove DST from the roster"]
    a = refused("validate", f, expect=msg)
    b = refused("run", f, "--out", tmp_path / "run", "--quiet", expect=msg)
    assert a == b
    assert not (tmp_path / "run").exists()


WEEKLY_24 = ("stats_player_week_2024.csv.gz", "player_stats_week_2024.csv")


def _weekly_table(data_dir: Path) -> pd.DataFrame:
    """The 2024 weekly stats (the current-release file, which every data folder has)."""
    return pd.read_csv(data_dir / "nflverse" / WEEKLY_24[0], low_memory=False)


def _bad_weekly_missing(col):
    def make(root, data_dir):
        _weekly_table(data_dir).drop(columns=[col]).to_csv(root / "nflverse" / WEEKLY_24[0], index=False)
    return make


def _truncated_gz(root, data_dir):
    raw = (data_dir / "nflverse" / WEEKLY_24[0]).read_bytes()
    (root / "nflverse" / WEEKLY_24[0]).write_bytes(raw[: len(raw) // 3])


def _corrupt_gz(root, data_dir):
    raw = bytearray(gzip.compress(_weekly_table(data_dir).head(2000).to_csv(index=False).encode()))
    raw[len(raw) // 2: len(raw) // 2 + 64] = b"\xff" * 64
    (root / "nflverse" / WEEKLY_24[0]).write_bytes(bytes(raw))


def _truncated_csv(root, data_dir):
    text = _weekly_table(data_dir).to_csv(index=False)  # a plain csv, under the legacy name it may have
    (root / "nflverse" / WEEKLY_24[1]).write_text(text[: len(text) // 2])


def _binary_injuries(root, data_dir):
    (root / "nflverse" / "injuries_2024.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)


def _garbage_injury_weeks(root, data_dir):
    inj = pd.read_csv(data_dir / "nflverse" / "injuries_2024.csv").head(500)
    inj["week"] = "soon"
    inj.to_csv(root / "nflverse" / "injuries_2024.csv", index=False)


def _crosswalk(data_dir: Path) -> str:
    return sorted(p.name for p in (data_dir / "nflverse").glob("db_playerids*.csv"))[-1]


def _wrong_crosswalk(root, data_dir):
    pd.DataFrame({"foo": [1], "bar": [2]}).to_csv(root / "nflverse" / _crosswalk(data_dir), index=False)


def _no_previous_season(root, data_dir):
    pass  # the 2023 files are simply left out


def _games(data_dir: Path) -> str:
    return sorted(p.name for p in (data_dir / "nflverse").glob("games*.csv"))[-1]


def _games_2024(drop):
    """The schedule file without the 2024 regular-season games ``drop`` selects (by week, then row number)."""
    def make(root, data_dir):
        g = pd.read_csv(data_dir / "nflverse" / _games(data_dir), low_memory=False)
        reg24 = g[(g["season"] == 2024) & (g["game_type"] == "REG")]
        g.drop(drop(reg24).index).to_csv(root / "nflverse" / _games(data_dir), index=False)
    return make


def _weekly_2024(change):
    """The 2024 weekly stats after ``change``, which edits or adds rows."""
    def make(root, data_dir):
        change(_weekly_table(data_dir)).to_csv(root / "nflverse" / WEEKLY_24[0], index=False)
    return make


def _set_cell(col, value):
    def change(w):
        w = w.astype({col: object})
        w.loc[w.index[10], col] = value
        return w
    return change


@pytest.mark.parametrize("make, drop, expect", [
    (_truncated_gz, WEEKLY_24[:1], ["stats_player_week_2024.csv.gz", "truncated or corrupt"]),
    (_corrupt_gz, WEEKLY_24[:1], ["stats_player_week_2024.csv.gz", "truncated or corrupt"]),
    (_truncated_csv, WEEKLY_24, ["player_stats_week_2024.csv", "truncated"]),
    (_bad_weekly_missing("player_id"), WEEKLY_24, [f"{WEEKLY_24[0]} lacks column(s) player_id"]),
    (_bad_weekly_missing("receptions"), WEEKLY_24, [f"{WEEKLY_24[0]} lacks column(s) receptions"]),
    (_no_previous_season, ("stats_player_week_2023.csv.gz", "player_stats_week_2023.csv"),
     ["season 2024 needs the 2023 weekly stats"]),
    (_binary_injuries, ("injuries_2024.csv",), ["injuries_2024.csv", "cannot read"]),
    (_garbage_injury_weeks, ("injuries_2024.csv",), ["injuries_2024.csv column 'week' is not numeric"]),
    (_wrong_crosswalk, ("db_playerids*",), ["{crosswalk} lacks column(s) gsis_id"]),
    (_games_2024(lambda g: g[g["week"] == 5]), ("games*",), ["{games}: no games in week(s) 5 of weeks 1..18"]),
    (_games_2024(lambda g: g[g["week"] == 5].head(1)), ("games*",),
     ["{games}: 2 team(s) idle in other than exactly one week (the bye)"]),
    (_weekly_2024(lambda w: pd.concat([w, w[w["week"] == 5].head(3)])), WEEKLY_24,
     [f"{WEEKLY_24[0]}: 3 row(s) repeat a player-week (one row per player and week), e.g. player "]),
    (_weekly_2024(_set_cell("week", -3)), WEEKLY_24, ["regular-season row(s) have a week outside 1..18", "week -3"]),
    (_weekly_2024(_set_cell("receptions", -50)), WEEKLY_24,
     ["column receptions is negative in 1 row(s) (a count cannot be)", "receptions=-50"]),
    (_weekly_2024(_set_cell("receptions", "abc")), WEEKLY_24,
     ["column receptions has 1 non-numeric or missing value(s)", "receptions='abc'"]),
], ids=["truncated-gz", "corrupt-gz", "truncated-csv", "no-player_id", "no-receptions", "no-previous-season",
        "binary-injuries", "garbage-injury-weeks", "wrong-crosswalk", "schedule-without-week-5",
        "schedule-without-a-game", "repeated-player-weeks", "negative-week", "negative-receptions",
        "non-numeric-receptions"])
def test_bad_data_files_are_refused_by_validate_and_run(tmp_path, data_dir, monkeypatch, make, drop, expect):
    names = {"crosswalk": _crosswalk(data_dir), "games": _games(data_dir)}
    drop = tuple(names["crosswalk" if d.startswith("db_") else "games"] if d.endswith("*") else d for d in drop)
    expect = [e.format(**names) for e in expect]
    root = data_copy(tmp_path, data_dir, drop)
    make(root, data_dir)
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(root))
    a = refused("validate", DEMO, expect=expect)
    b = refused("run", DEMO, "--out", tmp_path / "run", "--quiet", expect=expect)
    assert a == b  # validate and run agree, word for word
    assert not (tmp_path / "run").exists()


def test_a_stat_the_scoring_counts_must_have_values(data_dir):
    """Past the column check (a source may carry the column empty): PPR without receptions is an error."""
    from ffbench_lib.data.base import DataError
    from ffbench_lib.data.prepare import _scored
    from ffbench_lib.data.nflverse import NflverseDir

    weekly = NflverseDir(data_dir).weekly(2024).assign(receptions=float("nan"))
    with pytest.raises(DataError, match="no values for receptions"):
        _scored(weekly, {"receptions": 1.0, "receiving_yards": 0.1}, "nflverse weekly stats 2024")
    assert _scored(weekly, {"receptions": 0.0, "receiving_yards": 0.1})["fantasy_points"].notna().all()


# ------------------------------------------------------------------------------------------- download

def test_download_error_keeps_the_whole_reason(tmp_path):
    from ffbench_lib.data.base import DataError
    from ffbench_lib.data.download import download

    reason = ("HTTPSConnectionPool(host='github.com', port=443): Max retries exceeded with url: "
              "/nflverse/nflverse-data/releases/download/stats_player/stats_player_week_2024.parquet "
              "(Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f>: "
              "Failed to resolve 'github.com' ([Errno -3] Temporary failure in name resolution)\"))")

    class Offline:
        def player_stats(self, season):
            try:
                raise OSError("[Errno -3] Temporary failure in name resolution")
            except OSError as cause:
                raise ConnectionError(reason) from cause

    with pytest.raises(DataError) as exc:
        download([2024], tmp_path, fetcher=Offline())
    msg = str(exc.value)
    assert reason in msg and "cause: OSError: [Errno -3]" in msg
    assert msg.endswith("Files written so far are complete and are kept.")
