"""LLM teams in a Premier League league (FPL rules) through the real litellm path, against the local fake
OpenAI server: the prompts name the sport, the formation, the bench order and the scoring; the answers (every
starter listed under his position, a bench order) are kept as given; and masked, no prompt names a real player
or club of the season (issue #28)."""
from __future__ import annotations

import json

import pytest

from ffbench_lib.config.league import League
from ffbench_lib.config.load import load_config
from ffbench_lib.testing.fake_openai import FakeOpenAIServer

from engine_helpers import REPO, run_engine
from test_masking import words

WEEKS = 2


def fpl_llm_league(api_base: str, cache, mode: str) -> League:
    """params/fpl_llm.yaml, short: two LLM teams (fake models) on the fake server, the rest bots."""
    d = load_config(REPO / "params" / "fpl_llm.yaml").model_dump(mode="json")
    d.update(weeks=WEEKS, trades={"weeks": [2], "max_players_per_side": 2}, information={"masking": mode},
             llm={"cache_dir": str(cache), "max_fallback_rate": 0.2, "sequential": True})
    for i, team in enumerate(d["teams"]):
        team["agent"] = ({"kind": "llm", "model": f"openai/fake-{i}", "api_base": api_base, "timeout_s": 30}
                         if i < 2 else {"kind": "bot", "strategy": "adp"})
    return League.model_validate(d)


@pytest.fixture(scope="module")
def runs(prepared_fpl, tmp_path_factory):
    root = tmp_path_factory.mktemp("fplllm")
    out = {}
    for mode in ("off", "players_and_teams"):
        with FakeOpenAIServer(fault_rate=0.1, faults=("illegal", "hallucinated"), seed=5,
                              fault_decisions=("set_lineup",)) as srv:
            run_engine(fpl_llm_league(srv.api_base, root / f"cache-{mode}", mode), prepared_fpl, root / mode)
        out[mode] = root / mode
    return out


def calls(run) -> list[dict]:
    return [json.loads(line) for line in (run / "llm_calls.jsonl").open(encoding="utf-8")]


def decisions(run) -> list[dict]:
    return [json.loads(line) for line in (run / "decisions.jsonl").open(encoding="utf-8")]


def test_prompts_name_the_sport_formation_bench_and_scoring(runs):
    cs = calls(runs["off"])
    system = cs[0]["messages"][0]["content"]
    assert "real 2024-25 Premier League season" in system and "Premier League gameweek" in system
    assert "GK 1, DEF 3-5, MID 2-5, FWD 1-3" in system and "in an order you set" in system
    assert "goals scored GK/DEF +6, MID +5, FWD +4" in system and "saves +1 per 3 (GK)" in system
    lineup = next(c for c in cs if c["decision"] == "set_lineup")["messages"][-1]["content"]
    assert "FORMATION: 11 players" in lineup and "BENCH ORDER: all 4 players" in lineup and '"bench": [' in lineup


def test_llm_lineups_are_kept_with_their_bench_order(runs):
    for mode, run in runs.items():
        meta = json.loads((run / "run.json").read_text())
        assert meta["status"] == "complete", mode
        llm = [d for d in decisions(run) if d["agent"].startswith("llm:") and d["decision"] == "set_lineup"]
        assert len(llm) == 2 * WEEKS
        kept = [d for d in llm if d["decided_by"] == "agent"]
        assert len(kept) >= WEEKS, mode  # most lineups as the model gave them (a few faults are repaired)
        for d in kept:  # listed by position (5 defenders under DEF...) and applied as slots, bench as ordered
            answer = d["raw_answer"]
            assert set(answer["lineup"]) == {"GK", "DEF", "MID", "FWD"} and len(answer["bench"]) == 4
            assert d["applied"]["bench"] == answer["bench"] if mode == "off" else len(d["applied"]["bench"]) == 4
            assert sum(map(len, d["applied"]["lineup"].values())) == 11


def test_no_masked_prompt_names_a_real_player_or_club(runs, prepared_fpl):
    text = "\n".join(m["content"] for c in calls(runs["players_and_teams"]) for m in c["messages"])
    pl = prepared_fpl.players
    players = set(pl["player_id"]) | set(pl["player_name"])
    clubs = set(prepared_fpl.schedule["home_team"])
    from ffbench_lib.sport.fpl import CLUBS
    assert [s for s in players if s in text] == []
    assert words(text, clubs | set(CLUBS.values())) == set()
    assert "GK-0" in text and "MID-0" in text and "T01" in text
    plain = "\n".join(m["content"] for c in calls(runs["off"]) for m in c["messages"])
    assert len([s for s in players if s in plain]) > 200 and len(words(plain, clubs)) >= 15


def test_a_double_gameweek_shows_both_opponents_masked_too(prepared_fpl):
    """Gameweek 24 of 2024-25: Everton play twice. A card shows both opponents, and masking clubs maps each."""
    from ffbench_lib.game.masking import Masker
    from ffbench_lib.game.views import Firewall

    league = fpl_llm_league("http://127.0.0.1:9/v1", "unused", "players_and_teams").model_copy(update={"weeks": 25})
    fw = Firewall(prepared_fpl, league)
    pool = prepared_fpl.players
    everton = pool.loc[pool["in_draft_pool"] & (pool["team"] == "EVE"), "player_id"].iloc[0]
    card = fw.player_week(everton, 24)
    assert card["team"] == "EVE" and card["opp"].count("+") == 1 and "LIV" in card["opp"].split("+")
    masked = Masker(fw, league).view({"players": [dict(card)]})["players"][0]
    a, b = masked["opp"].split("+")
    assert a.startswith("T") and b.startswith("T") and a != b and masked["team"].startswith("T")


def test_masking_clubs_scrubs_club_names_not_ordinary_words(prepared_fpl):
    """A club is masked by its code and whole name ("Man City", "Arsenal"), never by one word of a two-word name
    ("City", "Man", "West" are ordinary words): free text keeps them."""
    from ffbench_lib.game.masking import Masker
    from ffbench_lib.game.views import Firewall

    league = fpl_llm_league("http://127.0.0.1:9/v1", "unused", "players_and_teams").model_copy(update={"weeks": 2})
    m = Masker(Firewall(prepared_fpl, league), league)
    text = m.view({"note": "Man of the match: the West side of the City beat Man City and Arsenal, MCI too"})["note"]
    assert "Man of the match: the West side of the City beat " in text
    assert "Man City" not in text and "Arsenal" not in text and "MCI" not in text and text.count("T") >= 3
