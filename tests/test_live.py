"""Live play (``ffbench live``) and the refusal of weeks without results.

The replay test plays 2024 as if it were live, from data directories cut after successive weeks
(``ffbench_lib.testing.snapshots``), and checks that the finished run directory equals a normal run of the same
config and seed on the full data. The cuts come from a synthetic world of 2023-2025 (2025 under way): one season of
history before 2024 is all a live run needs, and each cut is prepared afresh (about 2 s of CPU, 4 s with the
default world's three seasons of history)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ffbench_lib.cli import main
from ffbench_lib.data.base import DataError
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.prepare import last_played_week, played_through
from ffbench_lib.testing.fake_openai import FakeOpenAIServer
from ffbench_lib.testing.snapshots import cut_data_dir

from conftest import built_once
from engine_helpers import digests

BOTS = [("VORP-1", "vorp"), ("ADP-1", "adp"), ("Form-1", "recent_form"), ("Random-1", "random"),
        ("VORP-2", "vorp"), ("Random-2", "random"), ("Form-2", "recent_form"), ("ADP-2", "adp")]
#: run.json keys a live run adds or holds otherwise: its reruns, its data updates, the data it finished on
LIVE_BOOKKEEPING = ("resumes", "live", "data_fingerprint")


def live_league(path: Path, llm_base: str | None = None, llm_seats: tuple[int, ...] = (0, 3), weeks: int = 4) -> Path:
    """A short full league: K, DST, IR, FAAB waivers, a trade week (2) and a two-round playoff (weeks 3 and 4) in
    4 weeks (each live step prepares a cut of the data and plays a week: the fewest weeks that have them all);
    with ``llm_base``, the teams of ``llm_seats`` are LLM teams on that server; ``weeks``: the same league over a
    longer season (the playoff in its last two weeks). Scoring and positions key the prepared season, so every
    variant on a cut reads the one preparation of that cut."""
    teams = [{"name": n, "agent": {"kind": "bot", "strategy": s}} for n, s in BOTS]
    if llm_base:
        for i in llm_seats:
            teams[i] = {"name": f"M{i}", "agent": {"kind": "llm", "model": f"openai/fake-model-{i}",
                                                   "api_base": llm_base, "timeout_s": 5.0, "max_tokens": 2000}}
    d = {"name": "live4", "season": 2024, "weeks": weeks, "seed": 2, "schedule": "round_robin", "scoring": "half_ppr",
         "roster": {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1, "K": 1, "DST": 1, "BENCH": 6, "IR": 1},
         "trades": {"weeks": [2]}, "waivers": {"enabled": True, "mode": "faab", "budget": 100},
         "playoffs": {"enabled": True, "teams": 4, "round_weeks": [1, 1]}, "teams": teams,
         **({"llm": {"backoff_s": 0.01}} if llm_base else {})}
    path.write_text(yaml.safe_dump(d, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The synthetic world of 2023-2025, 2025 played through week 6 (written once per test run): 2024 is a
    finished season with one season of history, 2025 a season under way. The data of this module's runs."""
    from ffbench_lib.testing.synthetic import write_world

    return built_once(tmp_path_factory, "synthetic-world-2023-2025-live",
                      lambda folder: write_world(folder, seasons=range(2023, 2026), last_played=6))


@pytest.fixture(scope="module")
def cut(world, tmp_path_factory):
    """``cut(k)``: ``world`` with 2024 played through week k and the injury reports through week k + 1
    (``cut(k, injuries=k)``: before week k + 1's report is out); made once per module, each prepared once (in the
    test run's shared cache, FFBENCH_CACHE_DIR) and found there by its fingerprint by every later test and step, as
    a user's cache would be."""
    root, made = tmp_path_factory.mktemp("cuts"), {}

    def make(k: int, injuries: int | None = None) -> Path:
        if (k, injuries) not in made:
            name = f"2024-week{k}" + ("" if injuries is None else f"-injuries{injuries}")
            made[k, injuries] = cut_data_dir(world, 2024, k, root / name, injuries_through=injuries)
        return made[k, injuries]
    return make


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FFBENCH_LLM_CACHE", str(tmp_path / "llm-cache"))
    (tmp_path / "llm-cache").mkdir()
    return monkeypatch


def ffbench(monkeypatch, capsys, data: Path, *args) -> tuple[int, str, str]:
    """``ffbench ARGS`` in this process (importing litellm per subprocess is slow) on data directory ``data``."""
    monkeypatch.setenv("FFBENCH_DATA_DIR", str(data))
    capsys.readouterr()
    rc = main([*map(str, args), "--quiet"] if args[0] in ("run", "live") else list(map(str, args)))
    out, err = capsys.readouterr()
    return rc, out, err


def meta(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


def commitments(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "live.jsonl").read_text().splitlines()]


def check_commitments(run: Path, weeks: int, results_in_data: set[int] = frozenset()) -> None:
    """Every week has one live.jsonl line, flagged ``results_in_data`` for exactly the weeks given, that hashes a
    prefix of the final decisions.jsonl holding its week's lineups and nothing of a later week."""
    lines, log = commitments(run), (run / "decisions.jsonl").read_bytes()
    assert [x["week"] for x in lines] == list(range(1, weeks + 1))
    assert {x["week"] for x in lines if x["results_in_data"]} == set(results_in_data)
    for x in lines:
        head = log[: x["bytes"]]
        assert hashlib.sha256(head).hexdigest() == x["decisions_sha256"]
        decided = [json.loads(r) for r in head.splitlines()]
        assert {d["team"] for d in decided if d["decision"] == "set_lineup" and d["week"] == x["week"]} == \
            {t["name"] for t in yaml.safe_load((run / "config.yaml").read_text())["teams"]}
        assert not any(d["week"] and d["week"] > x["week"] for d in decided)
        assert pd.Timestamp(x["decided_at"]).tzname() == "UTC"


def same_as_normal(live: Path, normal: Path, volatile: tuple[str, ...] = ()) -> None:
    a, b = digests(normal), digests(live)
    assert set(b) - set(a) == {"live.jsonl"} and set(a) <= set(b)
    for name in set(a) - {"run.json", *volatile}:
        assert a[name] == b[name], name
    ma, mb = meta(normal), meta(live)
    assert {k: v for k, v in ma.items() if k not in LIVE_BOOKKEEPING} == \
        {k: v for k, v in mb.items() if k not in LIVE_BOOKKEEPING}


def test_live_replay_of_2024_equals_a_normal_run(tmp_path, env, capsys, cut, world):
    """2024 replayed live from data cut after weeks 0..4 (draft, waivers, IR, a trade week, a two-round playoff,
    K and DST scored from the final scores): each step plays what the data has, decides the next week, commits to
    it and waits; the finished run equals a normal run on the full data, file by file.

    Before weeks 2 (a trade week) and 4 (the final) the data first lacks the week's injury report (results through
    week k, reports through week k only): the run waits for it without deciding anything or writing a line. Before,
    it decided the week at once, without the report a normal run's lineups see."""
    config, live = live_league(tmp_path / "live4.yaml"), tmp_path / "live"
    for k in range(4):
        if k in (1, 3):
            before = {n: (live / n).read_bytes() for n in ("decisions.jsonl", "live.jsonl")}  # week k scored only
            rc, out, err = ffbench(env, capsys, cut(k, injuries=k), "live", config, "--out", live)
            assert rc == 0, err
            m = meta(live)
            assert (m["status"], m["phase"], m["live"]["waiting_for_week"], m["live"]["waiting_for"]) == (
                "waiting_for_week", f"week:{k}", k + 1, "injury_report")
            assert {n: (live / n).read_bytes() for n in before} == before  # nothing decided, no line
            assert f"week {k + 1}'s injury report is not in the data yet" in out and "Friday" in out
            assert f"ffbench data download --seasons 2024 --out {cut(k, injuries=k)}" in out
        rc, out, err = ffbench(env, capsys, cut(k), "live", config, "--out", live)
        assert rc == 0, err
        m = meta(live)
        assert (m["status"], m["phase"], m["live"]["waiting_for_week"], m["live"]["waiting_for"]) == (
            "waiting_for_week", f"decided:{k + 1}", k + 1, "results")
        assert json.dumps(commitments(live)[-1]) in out and "ffbench data download --seasons 2024" in out
    rc, out, err = ffbench(env, capsys, cut(4), "live", config, "--out", live)
    assert rc == 0 and "champion:" in out, err
    assert meta(live)["status"] == "complete" and "waiting_for_week" not in meta(live)["live"]
    assert [u["played_weeks"] for u in meta(live)["live"]["data_updates"]] == [1, 1, 2, 3, 3, 4]
    rc, _, err = ffbench(env, capsys, world, "run", config, "--out", tmp_path / "normal")
    assert rc == 0, err
    same_as_normal(live, tmp_path / "normal")
    check_commitments(live, 4)
    for table in ("trade_steps", "waiver_claims", "ir_moves", "playoffs"):  # every kind of decision was replayed
        assert len(pd.read_parquet(live / f"{table}.parquet")), table


@pytest.mark.slow
def test_live_replay_with_llm_teams_equals_a_normal_run(tmp_path, env, capsys, cut, world):
    """The same with two LLM teams on the local fake server (separate replay caches, so both runs ask it)."""
    with FakeOpenAIServer() as srv:
        config, live = live_league(tmp_path / "llm4.yaml", srv.api_base), tmp_path / "live"
        for k in (0, 2, 4):  # a step may bring several weeks at once
            rc, _, err = ffbench(env, capsys, cut(k), "live", config, "--out", live)
            assert rc == 0, err
        env.setenv("FFBENCH_LLM_CACHE", str(tmp_path / "llm-cache-normal"))
        (tmp_path / "llm-cache-normal").mkdir()
        rc, _, err = ffbench(env, capsys, world, "run", config, "--out", tmp_path / "normal")
        assert rc == 0, err
    volatile = ("checkpoint.json", "llm_calls.jsonl", "llm_summary.parquet")  # latencies, call order
    same_as_normal(live, tmp_path / "normal", volatile)
    cp = [json.loads((d / "checkpoint.json").read_text()) for d in (live, tmp_path / "normal")]
    for c in cp:
        del c["log_bytes"]["llm_calls.jsonl"]
    assert cp[0] == cp[1]
    check_commitments(live, 4, results_in_data={2, 4})  # weeks 2 and 4 came with their results (3 without)


def test_live_stops_at_the_first_week_without_results_and_waits(tmp_path, env, capsys, cut, world):
    """A 17-week league on data through week 3: weeks 1-3 played (each with a line flagged results_in_data), week 4
    decided and committed, status waiting_for_week, exit 0; a rerun without new data stays waiting with nothing
    decided twice; a damaged decided checkpoint is refused."""
    config, run = live_league(tmp_path / "live17.yaml", weeks=17), tmp_path / "run"
    rc, out, err = ffbench(env, capsys, cut(3), "live", config, "--out", run)
    assert rc == 0, err
    m = meta(run)
    assert (m["status"], m["phase"], m["live"]) == ("waiting_for_week", "decided:4",
                                                    {"waiting_for_week": 4, "waiting_for": "results", "played_weeks": 3})
    lines = commitments(run)
    assert [(x["week"], x["results_in_data"]) for x in lines] == [(w, True) for w in range(1, 4)] + [(4, False)]
    line = lines[-1:]
    assert json.dumps(line[0]) in out and not any(json.dumps(x) in out for x in lines[:-1])
    # replayed in 2026, so decided long after the week's first game (its earliest gameday): said, not hidden
    sched = NflverseDir(world).schedule(2024)
    first = str(pd.to_datetime(sched.loc[sched["week"] == 4, "gameday"]).min().date())
    assert (line[0]["first_game_day"], line[0]["decided_after_first_game_day"]) == (first, True)
    assert f"week 4 was decided after the day of its first game ({first}" in err
    assert f"ffbench data download --seasons 2024 --out {cut(3)}" in out
    assert f"ffbench live {config} --seed 2 --out {run}" in out and "results through week 3" in out
    saved = json.loads((run / "checkpoint.json").read_text())
    assert set(saved["decided"]) == set(m["agents"])  # the week's lineups, decided and not scored
    assert max(r["week"] for r in saved["tables"]["lineups"]) == 3
    before = {n: (run / n).read_bytes() for n in ("decisions.jsonl", "checkpoint.json", "live.jsonl")}

    rc, out2, err = ffbench(env, capsys, cut(3), "live", config, "--out", run)
    assert rc == 0, err
    assert {n: (run / n).read_bytes() for n in before} == before
    assert meta(run)["status"] == "waiting_for_week" and json.dumps(line[0]) in out2

    rc, _, err = ffbench(env, capsys, cut(3), "run", config, "--out", run, "--resume")
    assert rc == 2 and "results through week 3 only" in err

    # as if killed between the decided checkpoint and the commitment
    (run / "live.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines[:-1]))
    rc, _, err = ffbench(env, capsys, cut(3), "live", config, "--out", run)
    keys = ("week", "decisions_sha256", "bytes", "results_in_data")
    assert rc == 0 and [{k: x[k] for k in keys} for x in commitments(run)] == [{k: x[k] for k in keys} for x in lines]

    cp = json.loads(before["checkpoint.json"])
    team = next(iter(cp["decided"]))
    cp["decided"][team][0][1] = next(p for t, ids in cp["rosters"].items() if t != team for p in ids)
    (run / "checkpoint.json").write_text(json.dumps(cp))
    rc, _, err = ffbench(env, capsys, cut(3), "live", config, "--out", run)
    assert rc == 2 and "not on its active roster" in err and "Traceback" not in err


def test_run_and_validate_refuse_weeks_without_results(tmp_path, env, capsys, cut):
    """Weeks beyond the data's played weeks are refused by `validate` and `run` with the last played week and the
    fixes, exit 2, no traceback, no run directory. Before, data cut after week 6 passed `validate` (and `run`
    stopped with "the stats file is incomplete: replace it"), and an 18-week league on SportsData.io's 17 weeks
    was played to the end, week 18 as 0-0 ties, and reported complete."""
    config = live_league(tmp_path / "live17.yaml", weeks=17)
    expected = ("error: season 2024 has results through week 3 only, but the league plays 17 weeks; set `weeks: 3` "
                "in the league config to play the weeks that are done, or play the season as it goes with "
                "`ffbench live CONFIG --out DIR`\n")
    rc, _, err = ffbench(env, capsys, cut(3), "validate", config)
    assert (rc, err) == (2, expected)
    rc, _, err = ffbench(env, capsys, cut(3), "run", config, "--out", tmp_path / "run")
    assert (rc, err) == (2, expected)
    assert not (tmp_path / "run" / "run.json").exists()
    rc, _, err = ffbench(env, capsys, cut(0), "validate", config)
    assert rc == 2 and "has no results yet (week 1 is not played)" in err and "weeks: 0" not in err


def test_a_league_longer_than_the_sources_season_is_refused(tmp_path, env, capsys, real_data_dir):
    """An 18-week league on SportsData.io's 17 weeks (real data: the synthetic world has no SportsData.io files) is
    refused by validate, run and live alike (was played to the end, week 18 as 0-0 ties); validate --live too.
    The data: the real files with SportsData.io's 2024 season only (links, nothing copied), so the history run and
    live read before refusing comes from nflverse's files, not from SportsData.io's 18 weekly files of each earlier
    season (about 4 s of CPU less)."""
    data_dir = tmp_path / "data"
    (data_dir / "sportsdataio").mkdir(parents=True)
    for name in ("nflverse", "projections"):
        (data_dir / name).symlink_to(real_data_dir / name)
    for name in ("2024", "other"):
        (data_dir / "sportsdataio" / name).symlink_to(real_data_dir / "sportsdataio" / name)
    sdio = tmp_path / "sdio18.yaml"
    sdio.write_text(yaml.safe_dump({"name": "sdio18", "season": 2024, "weeks": 18, "data": {"source": "sportsdataio"},
                                    "teams": [{"name": n, "agent": {"kind": "bot", "strategy": "adp"}} for n in "AB"]}))
    expected = ("error: season 2024 has 17 weeks in this data, but the league plays 18; set `weeks: 17` (or fewer) in "
                "the league config\n")
    for command in (["validate", sdio], ["run", sdio, "--out", tmp_path / "sdio"], ["live", sdio, "--out",
                                                                                   tmp_path / "sdio"]):
        assert ffbench(env, capsys, data_dir, *command)[::2] == (2, expected)
    assert not (tmp_path / "sdio" / "run.json").exists()
    assert ffbench(env, capsys, data_dir, "validate", sdio, "--live")[::2] == (2, expected)


def test_every_week_a_live_run_decides_gets_a_line_before_it_is_scored(tmp_path, env, capsys, cut):
    """Weeks decided with their results already in the data get a line too, flagged ``results_in_data`` (never a
    prior commitment): the weeks played on the first run, a week whose run was killed after its decided checkpoint
    but before its line and rerun on data that has its results, and weeks caught up several at once. Before, all of
    these were scored with no line."""
    from ffbench_lib.runs.runner import SimulatedCrash
    from ffbench_lib.runs.season import run_season

    config, live = live_league(tmp_path / "live4.yaml"), tmp_path / "live"
    env.setenv("FFBENCH_DATA_DIR", str(cut(1)))
    with pytest.raises(SimulatedCrash):  # killed between week 2's decided checkpoint and its line
        run_season(config, out=live, resume=True, progress=False, live=True, crash_after="decided:2")
    assert [(x["week"], x["results_in_data"]) for x in commitments(live)] == [(1, True)]
    rc, out, err = ffbench(env, capsys, cut(3), "live", config, "--out", live)  # weeks 2 and 3 are in the data
    assert rc == 0, err
    assert (meta(live)["phase"], [(x["week"], x["results_in_data"]) for x in commitments(live)]) == (
        "decided:4", [(1, True), (2, True), (3, True), (4, False)])
    rc, out, err = ffbench(env, capsys, cut(4), "live", config, "--out", live)
    assert rc == 0 and meta(live)["status"] == "complete", err
    check_commitments(live, 4, results_in_data={1, 2, 3})


def test_a_budget_stop_scores_the_decided_week_first(tmp_path, env, capsys, cut):
    """A live run waiting at decided:1 is continued, with week 1's results, under a budget already spent: week 1 is
    scored (scoring asks nobody), then the run stops at the budget before deciding week 2 (exit 3). Before, it
    stopped at decided:1 with week 1 unscored."""
    with FakeOpenAIServer() as srv:  # one LLM team and a 10-round draft (the same prepared cuts)
        d = yaml.safe_load(live_league(tmp_path / "llm4.yaml", srv.api_base, llm_seats=(0,)).read_text())
        d["roster"].update(BENCH=1)
        del d["roster"]["IR"]
        for t in d["teams"]:
            if t["agent"]["kind"] == "llm":
                t["agent"].update(input_cost_per_token=1e-6, output_cost_per_token=1e-6)
        config, live = tmp_path / "priced.yaml", tmp_path / "live"
        config.write_text(yaml.safe_dump(d, sort_keys=False))
        rc, _, err = ffbench(env, capsys, cut(0), "live", config, "--out", live)
        assert rc == 0 and meta(live)["phase"] == "decided:1", err
        spent = json.loads((live / "checkpoint.json").read_text())["llm_cost_usd"]
        assert spent > 0
        d["llm"]["budget_usd"] = spent / 2
        config.write_text(yaml.safe_dump(d, sort_keys=False))
        rc, _, err = ffbench(env, capsys, cut(1), "live", config, "--out", live)
    assert rc == 3 and "stopped at phase week:1" in err
    m = meta(live)
    assert (m["status"], m["phase"]) == ("stopped_budget", "week:1")
    assert sorted(pd.read_parquet(live / "standings.parquet")["week"].unique()) == [1]
    assert max(json.loads(x)["week"] or 0 for x in (live / "decisions.jsonl").read_text().splitlines()) == 1
    assert [x["week"] for x in commitments(live)] == [1]


def test_validate_live_skips_the_played_weeks_check(tmp_path, env, capsys, cut, world):
    """`ffbench validate --live` checks a league before `ffbench live`: weeks without results yet pass, and it says
    that check was skipped and how far the data is; a league longer than the season is still refused. Before,
    validate refused every league that live can play."""
    config = live_league(tmp_path / "live17.yaml", weeks=17)
    rc, out, err = ffbench(env, capsys, cut(3), "validate", config, "--live")
    assert rc == 0 and out.startswith(f"ok: {config}: "), err
    assert ("live: weeks without results are not refused (`ffbench live` waits for them): season 2024 has results "
            "through week 3 of the league's 17 weeks") in out
    rc, out, err = ffbench(env, capsys, world, "validate", config, "--live")
    assert rc == 0 and "season 2024 has results through week 18 of the league's 17 weeks" in out
    # a league longer than the season is still refused: test_a_league_longer_than_the_sources_season_is_refused


def test_played_weeks_rule(data_dir):
    """A week is played when every team of its games has stats rows (and, for nflverse team defenses, every game
    its final score); a later week with results after one without is a damaged file, never a week of zeros."""
    src = NflverseDir(data_dir)
    rows, games = src.weekly(2024), src.schedule(2024)
    assert played_through(rows, games, True, "nflverse", 2024) == 18
    no_scores = games.assign(**{c: games[c].where(games["week"] < 13) for c in ("home_score", "away_score")})
    assert played_through(rows, no_scores, False, "nflverse", 2024) == 18  # 2025's games file is like this
    assert played_through(rows, no_scores, True, "nflverse", 2024) == 12
    assert played_through(rows[rows["week"] <= 9], games, False, "nflverse", 2024) == 9
    partial = rows[(rows["week"] <= 9) | ((rows["week"] == 10) & (rows["team"] == "KC"))]
    assert played_through(partial, games, False, "nflverse", 2024) == 9  # week 10 under way
    with pytest.raises(DataError, match="no rows for any team in week 5, which the schedule has, though later"):
        played_through(rows[rows["week"] != 5], games, False, "nflverse", 2024)
    team = games.loc[games["week"] == 5, "home_team"].iloc[0]  # a team that plays in week 5 (KC: a bye there)
    with pytest.raises(DataError, match=f"no rows for {team} in week 5"):
        played_through(rows[(rows["week"] != 5) | (rows["team"] != team)], games, False, "nflverse", 2024)
    with pytest.raises(DataError, match="week 5 lacks final scores"):
        played_through(rows, games.assign(home_score=games["home_score"].where(games["week"] != 5)), True,
                       "nflverse", 2024)


def test_the_season_under_way_is_played_through_its_last_week_with_results(world):
    """A season under way (the synthetic world's 2025, results through week 6) is played through week 6."""
    assert last_played_week(NflverseDir(world), 2025) == 6
    assert last_played_week(NflverseDir(world), 2024) == 18


def test_the_real_2025_files_are_played_through_week_18(real_data_dir):
    assert last_played_week(NflverseDir(real_data_dir), 2025) == 18  # stats through 18, scores missing from 13 on


def test_prepared_cut_season_records_its_played_weeks(cut, tmp_path, monkeypatch):
    """A season under way keeps only its played weeks' rows and says how far it is; a finished one's manifest
    has no such key (unchanged). The cut the live runs above prepared (their league's, from the shared cache)."""
    from ffbench_lib.config.load import load_config
    from ffbench_lib.data.prepare import prepared_for

    monkeypatch.setenv("FFBENCH_DATA_DIR", str(cut(3)))
    p = prepared_for(load_config(live_league(tmp_path / "live4.yaml")))
    assert p.manifest["played_weeks"] == 3 and p.played_weeks == 3
    assert sorted(p.weekly["week"].unique()) == [1, 2, 3]
    assert p.schedule["week"].max() == 18 and p.injuries["week"].max() == 4  # next week's report is out
