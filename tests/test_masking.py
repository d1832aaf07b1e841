"""Masked mode (``information.masking``): agents see per-run pseudonyms, everything else is unchanged; no rendered
prompt holds a real player or team; the future still moves nothing before it; answers map back to real ids."""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re

import pandas as pd
import pytest

from ffbench_lib.agents.bots import _weekly_value
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import Information, League
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import SimulatedCrash, build_agents
from ffbench_lib.game.masking import PSEUDONYM, Masker, MaskingError, natural
from ffbench_lib.game.rules.lineup import start_value
from ffbench_lib.game.views import Firewall, canonical_json

from engine_helpers import REPO, ScriptedAgent, demo_league, run_engine, same_run
from test_firewall import decisions, late_arrivals, perturb

NFL_TEAM_NAMES = (
    "Arizona Cardinals", "Atlanta Falcons", "Baltimore Ravens", "Buffalo Bills", "Carolina Panthers", "Chicago Bears",
    "Cincinnati Bengals", "Cleveland Browns", "Dallas Cowboys", "Denver Broncos", "Detroit Lions", "Green Bay Packers",
    "Houston Texans", "Indianapolis Colts", "Jacksonville Jaguars", "Kansas City Chiefs", "Las Vegas Raiders",
    "Los Angeles Chargers", "Los Angeles Rams", "Miami Dolphins", "Minnesota Vikings", "New England Patriots",
    "New Orleans Saints", "New York Giants", "New York Jets", "Philadelphia Eagles", "Pittsburgh Steelers",
    "San Francisco 49ers", "Seattle Seahawks", "Tampa Bay Buccaneers", "Tennessee Titans", "Washington Commanders")
TEAM_WORDS = {w for n in NFL_TEAM_NAMES for w in (n, n.rsplit(" ", 1)[1])}  # "Kansas City Chiefs", "Chiefs"
PERTURB_WEEK = 3
DEMO_WEEKS = 5  # the demo seasons of demo_runs: the draft, lineups and the week-4 trade window (every bot decision)


def masked(league: League, mode: str = "players_and_teams") -> League:
    return league.model_copy(update={"information": Information(masking=mode)})


def words(text: str, tokens) -> set[str]:
    """The ``tokens`` that occur in ``text`` as whole tokens (case-sensitive: ``NO`` but not ``NOT`` or ``No``)."""
    pattern = re.compile(r"(?<![A-Za-z0-9])(%s)(?![A-Za-z0-9])" % "|".join(
        map(re.escape, sorted(tokens, key=len, reverse=True))))
    return set(pattern.findall(text))


def real_strings(prepared, mode: str) -> tuple[set[str], set[str]]:
    """Every real player id and name of the season a masked prompt must not hold (with ``players`` the team
    defenses keep their team's name), and every NFL team code (``players_and_teams`` only)."""
    pl = prepared.players
    if mode == "players":
        pl = pl[pl["position"] != "DST"]
    teams = set(prepared.players["team"].dropna()) | set(prepared.schedule["home_team"]) if mode != "players" else set()
    return set(pl["player_id"]) | set(pl["player_name"]), teams


# ------------------------------------------------------------------------------------------------- bots
@pytest.fixture(scope="module")
def demo_runs(prepared_2024, tmp_path_factory):
    """The demo season (bots, DEMO_WEEKS long) with the same seed unmasked and masked; the masked one is also the
    uninterrupted run a crashed and resumed one must equal."""
    root = tmp_path_factory.mktemp("mask")
    league = demo_league(weeks=DEMO_WEEKS)
    run_engine(league, prepared_2024, root / "off")
    run_engine(masked(league), prepared_2024, root / "masked")
    return league, root / "off", root / "masked"


def test_masked_and_unmasked_demo_seasons_complete_with_real_ids_in_every_output(demo_runs, prepared_2024):
    league, off, on = demo_runs
    real_ids = set(prepared_2024.players["player_id"])
    for run in (off, on):
        assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert not (off / "masking.json").exists() and "information" not in (off / "config.yaml").read_text()
    assert "masking: players_and_teams" in (on / "config.yaml").read_text()
    mapping = json.loads((on / "masking.json").read_text())
    assert mapping["mode"] == "players_and_teams" and len(mapping["teams"]) == 32
    assert all(PSEUDONYM.fullmatch(k) and v["player_id"] in real_ids for k, v in mapping["players"].items())
    picks = pd.read_parquet(on / "draft_picks.parquet")
    assert set(picks["player_id"]) <= real_ids and len(picks) == 120
    names = prepared_2024.players.set_index("player_id")["player_name"]
    assert (picks["player_name"] == picks["player_id"].map(names)).all()  # tables show real names
    assert set(pd.read_parquet(on / "lineups.parquet")["player_id"].dropna()) <= real_ids
    recs = decisions(on)
    assert {r["decided_by"] for r in recs} == {"agent"}  # bots (they see real views): never repaired
    text = "\n".join(canonical_json([r["view"], r["raw_answer"], r["applied"]]) for r in recs)
    assert not re.search(r"\b(QB|RB|WR|TE)-\d{3}\b|\bT\d\d\b", text)  # decisions.jsonl: real ids and teams only


def tied(bot, view, a: dict, b: dict) -> bool:
    """Whether ``bot`` ranks players ``a`` and ``b`` alike but for their ids (its last tie-break): the order of the
    two flips when their ids are swapped."""
    order = [[p["name"] for p in bot.rank(view, [{**a, "id": i}, {**b, "id": j}])] for i, j in (("1", "2"), ("2", "1"))]
    return a["id"] == b["id"] or order[0] != order[1]


async def _ask_all(bots, masker, recs):
    return [masker.answer(await bots[r["team"]].decide(r["decision"], masker.view(r["view"])))[0] for r in recs]


def test_a_bot_only_masked_season_is_byte_identical_to_the_unmasked_one(demo_runs):
    """Bots see real views (Agent.masked_views): masking a bot-only league changes nothing but config.yaml and
    masking.json, so a masked-vs-unmasked comparison holds no noise from bots' id tie-breaks and random draws."""
    from engine_helpers import digests

    _, off, on = demo_runs
    a, b = digests(off), digests(on)
    assert set(b) - set(a) == {"masking.json"} and {"decisions.jsonl", "checkpoint.json", "lineups.parquet"} <= set(a)
    assert {k: v for k, v in a.items() if k != "config.yaml"} == {k: v for k, v in b.items() if k not in (
        "config.yaml", "masking.json")}


def test_bots_decide_as_well_on_masked_views(demo_runs, prepared_2024):
    """Losslessness, decision by decision: every deterministic bot, asked with the masked view of each decision of
    the unmasked season, answers (mapped back to real ids) as well as it did unmasked: the same projections
    shortlisted and picked, lineups of the same value, the same trade verdicts (ties aside: bots break them by
    id, and pseudonyms are by design not in real-id order). Runs show bots real views; this checks they need not."""
    league, off, _ = demo_runs
    lg = masked(league)
    masker = Masker(Firewall(prepared_2024, lg), lg)
    bots = build_agents(lg, lg.seed)
    recs = [r for r in decisions(off) if r["agent"] != "bot:random"]  # random: uniform draws in list order
    answers = asyncio.run(_ask_all(bots, masker, recs))
    checked = set()
    for r, ans in zip(recs, answers):
        real, kind, view = r["raw_answer"], r["decision"], r["view"]
        if kind in ("draft_shortlist", "draft_pick"):
            cards = {c["id"]: c for cs in (view.get("available") or {}).values() for c in cs}
            cards.update({c["id"]: c for c in view.get("shortlist_detail", [])})
            ids = (lambda a: a["shortlist"]) if kind == "draft_shortlist" else (lambda a: [a["player_id"]])
            bot = bots[r["team"]]
            assert len(ids(ans)) == len(ids(real)) and all(
                tied(bot, view, cards[x], cards[y]) for x, y in zip(ids(ans), ids(real))), (kind, r["pick"], r["team"])
        elif kind == "set_lineup":
            cards = {c["id"]: c for c in view["players"]}
            how = "recent" if r["agent"] == "bot:recent_form" else "proj"
            value = lambda a: {s: sorted(_weekly_value(cards[p], how) for p in ids if p)  # noqa: E731
                               for s, ids in a["lineup"].items()}
            assert value(ans) == value(real), (r["week"], r["team"])
            assert sum(start_value(cards[p]) for ids in ans["lineup"].values() for p in ids if p) > 0
        else:  # trade steps: the same action for the same projected gain (bots write the gain in the rationale)
            assert (ans["action"], ans["rationale"]) == (real["action"], real["rationale"]), (kind, r["week"])
        checked.add(kind)
    assert {"draft_shortlist", "draft_pick", "set_lineup", "propose_trade", "respond_to_offer"} <= checked


def test_a_masked_run_resumes_byte_identical(demo_runs, prepared_2024, tmp_path):
    league, _, whole = demo_runs
    league = masked(league)
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "crashed", crash_after="week:2")
    run_engine(league, prepared_2024, tmp_path / "crashed", resume=True)
    same_run(whole, tmp_path / "crashed")  # masking.json included


@pytest.mark.parametrize("week", [1, 6])
def test_masked_views_before_week_w_are_byte_identical(prepared_2024, tmp_path, week):
    """The perturbation test of test_firewall in masked mode: each run masks with its own data's pseudonyms, and
    every masked view before week w (waiver pools with players who first play mid-season included) is the same.
    The league stops a week after w (the perturbed data still holds the whole season)."""
    from ffbench_lib.config.league import Waivers

    league = masked(demo_league(seed=4, weeks=week + 1).model_copy(
        update={"waivers": Waivers(enabled=True, mode="faab")}))
    fake = perturb(prepared_2024, week)
    run_engine(league, prepared_2024, tmp_path / "real")
    run_engine(league, fake, tmp_path / "perturbed")
    views = []
    for prep, run in ((prepared_2024, "real"), (fake, "perturbed")):
        m = Masker(Firewall(prep, league), league)
        views.append([(canonical_json(m.view(r["view"])), r["raw_answer"]) for r in decisions(tmp_path / run)
                      if r["week"] is None or r["week"] <= week])
    assert len(views[0]) == len(views[1]) > 240
    assert views[0] == views[1]
    if week > 1:
        assert any("free_agents" in v for v, _ in views[0])


# --------------------------------------------------------------------------------------------- the masker
def test_pseudonyms_are_seeded_and_not_in_projection_order(prepared_2024):
    league = masked(demo_league())
    fw = Firewall(prepared_2024, league)
    a, b = Masker(fw, league), Masker(fw, league)
    other = Masker(fw, league.model_copy(update={"seed": league.seed + 1}))
    assert a.mapping() == b.mapping() and a.players != other.players and a.teams != other.teams
    assert sorted(a.teams.values()) == [f"T{i:02d}" for i in range(1, 33)]
    qbs = [p for p in fw.catalog.pool("QB")]  # best projection first
    numbers = [int(a.players[p].split("-")[1]) for p in qbs]
    assert numbers != sorted(numbers) and sorted(numbers) == list(range(1, len(qbs) + 1))
    for pid in fw.catalog.pool("DST"):  # the defense of T07 is DST-07, named T07 D/ST
        team = a.teams[fw.catalog.team[pid]]
        assert a.players[pid] == f"DST-{team[1:]}" and a.player_names[pid] == f"{team} D/ST"
    assert len(set(a.players.values())) == len(a.players)  # one pseudonym per player
    # players mode: defenses and NFL teams keep their real names
    p = Masker(fw, masked(league, "players"))
    assert not any(pid.startswith("DST:") for pid in p.players) and p.view({"team": "KC", "id": "DST:KC"}) == {
        "team": "KC", "id": "DST:KC"}


def test_a_late_arrival_is_numbered_from_earlier_weeks_only(prepared_2024):
    """A player first known in week w gets his pseudonym after the draft pool, from the knowledge up to week w:
    the same pseudonyms come out of a season cut before week w."""
    league = masked(demo_league())
    full = Masker(Firewall(prepared_2024, league), league)
    first_late = min(w for w in late_arrivals(prepared_2024).values() if w < league.weeks)
    for w in (2, 9, first_late + 1):  # the last: a week the first late arrival is known in
        cut = dataclasses.replace(prepared_2024, weekly=prepared_2024.weekly[prepared_2024.weekly["week"] < w])
        fw = Firewall(cut, league)
        part = Masker(fw, league)
        known = fw.week(w).known_players()
        assert {p: full.players[p] for p in known} == {p: part.players[p] for p in known}
        assert part.teams == full.teams
    catalog = Firewall(prepared_2024, league).catalog
    late = [full.players[p].split("-") for p in full.players if p not in catalog.preseason_ids]
    assert late
    for pos in {pos for pos, _ in late}:  # each position's late arrivals are numbered after its draft pool
        assert min(int(n) for p, n in late if p == pos) == len(catalog.pool(pos)) + 1, pos


def until_a_late_arrival(prepared) -> int:
    """A league length that ends before the season's last late arrival first plays: that player is in the catalog
    but has no pseudonym (the synthetic season's late arrivals all play by week 16)."""
    return max(late_arrivals(prepared).values()) - 1


def test_views_are_masked_by_value_and_answers_mapped_back(prepared_2024):
    league = masked(demo_league(weeks=until_a_late_arrival(prepared_2024)))
    fw = Firewall(prepared_2024, league)
    m = Masker(fw, league)
    rb, wr = fw.catalog.pool("RB")[0], fw.catalog.pool("WR")[0]
    card = fw.player_card(rb)
    view = {"team": "ADP-1", "my_roster": [fw.player_card(p) for p in sorted([rb, wr])], "locked_players": [],
            "by_player": {rb: 1}, "opp": card["team"], "note": "free text with " + card["name"]}
    out = m.view(view)
    assert out["my_roster"][0]["name"] == out["my_roster"][0]["id"] and out["by_player"] == {m.players[rb]: 1}
    assert out["opp"] == m.teams[card["team"]] and out["team"] == "ADP-1"
    assert out["note"] == "free text with " + m.players[rb]  # free text (a rationale) is scrubbed too
    assert [c["id"] for c in out["my_roster"]] == sorted(c["id"] for c in out["my_roster"])  # pseudonym order
    assert {k: v for k, v in out["my_roster"][0].items() if k not in ("id", "name", "team")} == {
        k: v for k, v in next(c for c in view["my_roster"] if m.players[c["id"]] == out["my_roster"][0]["id"]).items()
        if k not in ("id", "name", "team")}  # every number as it was
    answer = {"lineup": {"RB": [m.players[rb]], "WR": [m.players[wr], "WR-999"]},
              "claims": [{"add": m.players[wr], "drop": None, "bid": 3}], "rationale": m.players[rb] + " is good",
              "_llm": {"raw_text": m.players[rb]}}
    assert m.answer(answer) == ({"lineup": {"RB": [rb], "WR": [wr, "WR-999"]}, "claims": [{"add": wr, "drop": None,
                                "bid": 3}], "rationale": answer["rationale"], "_llm": {"raw_text": m.players[rb]}}, [])
    late = next(p for p in fw.catalog.position if p not in m.players)  # first plays after the league's weeks?
    with pytest.raises(MaskingError, match="no pseudonym"):
        m.view({"players": [{"id": late}]})


def test_the_masked_agent_wrapper_masks_readers_only_and_a_view_it_cannot_mask_stops_the_run(prepared_2024):
    """MaskedAgent (agents.masked): a name reader sees pseudonyms and its answer maps back, a real id in it is a
    problem of the answer; bots are not wrapped, nothing twice; a view that would leak raises out of the loop's
    ask (the run stops) while the agent's own error is still a repaired answer."""
    from ffbench_lib.agents.masked import MaskedAgent, masked as mask_seats
    from ffbench_lib.game.loop import SeasonLoop

    league = masked(demo_league(weeks=until_a_late_arrival(prepared_2024)), "players")
    loop = SeasonLoop(league, prepared_2024, {})
    m = Masker(loop.fw, league)
    rb, wr = loop.catalog.pool("RB")[0], loop.catalog.pool("WR")[0]

    class Reader(ScriptedAgent):
        masked_views = True

    reader, bot_team = Reader("ADP-1", 1, {"set_lineup": lambda v: {"lineup": {"RB": [v["my_roster"][0]["id"]],
                                                                               "WR": [wr]}}}), "VORP-1"
    bots = build_agents(league, league.seed)
    seats = mask_seats({**bots, "ADP-1": reader}, m)
    assert isinstance(seats["ADP-1"], MaskedAgent) and seats[bot_team] is bots[bot_team]
    assert seats["ADP-1"].agent_id == "scripted" and mask_seats(seats, m)["ADP-1"] is seats["ADP-1"]
    loop.seats = seats
    view = {"my_roster": [loop.fw.player_card(rb)]}
    answer, problems = asyncio.run(loop.ask("ADP-1", "set_lineup", view))
    assert reader.seen[-1][1]["my_roster"][0]["id"] == m.players[rb]  # it saw the pseudonym
    assert answer["lineup"] == {"RB": [rb], "WR": ["unmasked:" + wr]}
    assert len(problems) == 1 and "only pseudonyms are accepted" in problems[0]
    late = next(p for p in loop.catalog.position if p not in m.players)
    with pytest.raises(MaskingError, match="no pseudonym"):
        asyncio.run(loop.ask("ADP-1", "set_lineup", {"players": [{"id": late}]}))
    reader.script["set_lineup"] = lambda v: 1 / 0
    assert asyncio.run(loop.ask("ADP-1", "set_lineup", view)) == (
        None, ["agent error: ZeroDivisionError: division by zero"])


def test_free_text_from_another_model_loses_real_names_and_teams(prepared_2024):
    """A trade rationale travels to the other side's prompt: a real full name or team code a model wrote (or
    guessed) reaches the other model as its pseudonym, never by name."""
    league = masked(demo_league())
    fw = Firewall(prepared_2024, league)
    m = Masker(fw, league)
    qb, wr = fw.catalog.pool("QB")[0], fw.catalog.pool("WR")[0]
    name_qb, name_wr, team = fw.catalog.name[qb], fw.catalog.name[wr], fw.catalog.team[qb]
    text = f"Take {name_wr} and I get {name_qb}; {team} has a great offense. Trust me, Mahomes fans."
    out = m.view({"negotiation": [{"their_rationale_untrusted": text}]})["negotiation"][0]["their_rationale_untrusted"]
    assert out == (f"Take {m.players[wr]} and I get {m.players[qb]}; {m.teams[m._canon(team)]} has a great offense. "
                   "Trust me, Mahomes fans.")
    assert not words(out, {name_qb, name_wr, team})


@pytest.mark.parametrize("name, mode, refused", [
    ("RB-041", "players", True), ("T07", "players", True), ("KC", "players_and_teams", True),
    ("KC", "players", False), ("{qb}", "players", True), ("{qb_last} Fans", "players_and_teams", False),
    ("{wr} Fans", "players", True)])
def test_team_names_that_read_as_pseudonyms_or_real_names_are_refused(prepared_2024, name, mode, refused):
    """A team named as a player of the season (the best QB; the best WR and "Fans") is refused; a last name alone
    is not."""
    d = demo_league().model_dump(mode="json")
    pool, names = Firewall(prepared_2024, demo_league()).catalog.pool, prepared_2024.players.set_index("player_id")["player_name"]
    qb, wr = names[pool("QB")[0]], names[pool("WR")[0]]
    name = name.format(qb=qb, qb_last=qb.split()[-1], wr=wr)
    d["teams"][3]["name"] = name
    league = masked(League.model_validate(d), mode)
    if not refused:
        Masker(Firewall(prepared_2024, league), league)
        return
    with pytest.raises(ConfigError, match=re.escape(f"teams[3].name: {name!r} reads as")):
        Masker(Firewall(prepared_2024, league), league)


# --------------------------------------------------------------------------------------------------- LLMs
LLM_SEATS = (5, 8)  # with these faults and seats every mode meets re-asks and IR moves (other seats may not)


def llm_league(data_dir, api_base, cache, mode: str, weeks: int = PERTURB_WEEK + 1) -> League:
    """A short standard league (K, DST, IR, FAAB waivers, trades) with four LLM teams on the fake server; it ends
    a week after PERTURB_WEEK (the first week whose prompts the perturbed stats reach)."""
    league = load_config(REPO / "params" / "standard_10.yaml", data={"dir": str(data_dir)})
    d = league.model_dump(mode="json")
    d.update(weeks=weeks, trades={"weeks": [PERTURB_WEEK - 1, PERTURB_WEEK], "max_players_per_side": 2},
             playoffs={"enabled": False},
             information={"masking": mode}, llm={"cache_dir": str(cache), "max_fallback_rate": 0.1,
                                                  "sequential": True})  # one request at a time: same faults
    for i in LLM_SEATS:
        d["teams"][i] = {"name": f"LLM-{i}", "agent": {"kind": "llm", "model": f"openai/fake-{i}",
                                                       "api_base": api_base, "timeout_s": 30}}
    return League.model_validate(d)


@pytest.fixture(scope="module")
def llm_runs(data_dir, tmp_path_factory):
    """The short standard league played by two LLM teams (some answers illegal or hallucinated, so re-asks are
    rendered too): masked both ways, unmasked, and masked on a season perturbed from week PERTURB_WEEK on."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    root = tmp_path_factory.mktemp("maskllm")
    base = load_config(REPO / "params" / "standard_10.yaml", data={"dir": str(data_dir)})
    prepared = prepared_for(base, cache_root=os.environ["FFBENCH_CACHE_DIR"])  # test_standard_league's too
    runs = {}
    for name, mode, prep in (("players_and_teams", "players_and_teams", prepared), ("players", "players", prepared),
                             ("off", "off", prepared),
                             ("perturbed", "players_and_teams", perturb(prepared, PERTURB_WEEK))):
        with FakeOpenAIServer(fault_rate=0.1, faults=("illegal", "hallucinated"), seed=3,
                              fault_decisions=("set_lineup", "waiver_claims", "ir_moves")) as srv:
            run_engine(llm_league(data_dir, srv.api_base, root / f"cache-{name}", mode), prep, root / name)
        runs[name] = root / name
    return prepared, runs


def prompts(run) -> list[dict]:
    return [json.loads(line) for line in (run / "llm_calls.jsonl").open(encoding="utf-8")]


@pytest.mark.parametrize("mode", ["players_and_teams", "players"])
def test_no_rendered_prompt_of_a_masked_season_holds_a_real_name(llm_runs, mode):
    prepared, runs = llm_runs
    calls = prompts(runs[mode])
    text = "\n".join(m["content"] for c in calls for m in c["messages"])  # system prompts and re-asks included
    assert {c["decision"] for c in calls} >= {"draft_shortlist", "draft_pick", "set_lineup", "waiver_claims",
                                              "free_agent_adds", "ir_moves", "propose_trade", "respond_to_offer"}
    assert any(c["reask"] for c in calls) and "K-0" in text and ("DST-" in text) == (mode == "players_and_teams")
    players, teams = real_strings(prepared, mode)
    assert [s for s in players if s in text] == []
    assert words(text, teams | TEAM_WORDS) == set()  # players mode: no NFL team code to hide (teams is empty)
    # sanity: the same scan finds them in the unmasked season's prompts
    plain = "\n".join(m["content"] for c in prompts(runs["off"]) for m in c["messages"])
    assert len([s for s in players if s in plain]) > 200
    if mode == "players_and_teams":
        assert len(words(plain, teams)) >= 30


def test_masked_llm_league_completes_with_few_fallbacks(llm_runs, data_dir, tmp_path):
    _, runs = llm_runs
    league = llm_league(data_dir, "http://unused", tmp_path, "off")
    seats = sum(t.agent.kind == "llm" for t in league.teams)
    for name in ("players_and_teams", "players", "off"):
        assert json.loads((runs[name] / "run.json").read_text())["status"] == "complete"
        llm = [r for r in decisions(runs[name]) if r["agent"].startswith("llm:")]
        rate = sum(r["decided_by"] == "fallback" for r in llm) / len(llm)
        # every pick and every lineup of the LLM seats is among them, and more (waivers, IR, trades)
        picks, lineups = (sum(r["decision"] == kind for r in llm) for kind in ("draft_pick", "set_lineup"))
        assert picks == seats * league.roster.size and lineups == seats * league.weeks, (name, picks, lineups)
        assert len(llm) > picks + lineups and rate < 0.05, (name, rate)
    assert not (runs["off"] / "masking.json").exists()


def test_masked_answers_map_back_to_the_same_real_players(llm_runs):
    """What the model answered in pseudonyms is what the engine applied in real ids, decision by decision."""
    prepared, runs = llm_runs
    run = runs["players_and_teams"]
    back = {k: v["player_id"] for k, v in json.loads((run / "masking.json").read_text())["players"].items()}
    real_ids = set(prepared.players["player_id"])
    last = {}
    for c in prompts(run):  # the last call of each decision holds the answer the agent returned
        last[(c["team"], c["decision"], c["week"], c["pick"])] = c
    checked = set()
    for r in decisions(run):
        if not r["agent"].startswith("llm:") or r["decided_by"] != "agent" or r["decision"] in ONE_OF_SEVERAL:
            continue
        parsed = last[(r["team"], r["decision"], r["week"], r["pick"])]["parsed"]
        fake = {k: v for k, v in parsed.items() if k != "rationale"}
        real = {k: v for k, v in r["raw_answer"].items() if k not in ("rationale", "_llm")}
        assert _map(fake, back) == real, r["decision"]
        assert all(p in real_ids for p in re.findall(r"00-\d{7}|DST:[A-Z]+", json.dumps(r["applied"])))
        checked.add(r["decision"])
    assert {"draft_pick", "set_lineup", "waiver_claims", "propose_trade"} <= checked


ONE_OF_SEVERAL = ("respond_to_offer", "reply_to_counter", "final_decision")  # a team may get several a week


def _map(obj, back):
    if isinstance(obj, dict):
        return {k: _map(v, back) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_map(v, back) for v in obj]
    return back.get(obj, obj) if isinstance(obj, str) else obj


def test_masked_prompts_before_week_w_are_byte_identical(llm_runs):
    """The perturbation test on the rendered prompts of the masked LLM season: every prompt of the draft and of
    weeks up to PERTURB_WEEK is the same when every actual stat from that week on is different."""
    _, runs = llm_runs

    def before(run):
        calls = [c for c in prompts(run) if c["week"] is None or c["week"] <= PERTURB_WEEK]
        return sorted(canonical_json([c["team"], c["decision"], c["week"], c["pick"], c["reask"], c["messages"]])
                      for c in calls)

    a, b = before(runs["players_and_teams"]), before(runs["perturbed"])
    assert len(a) > 75 and a == b
    later = lambda run: sorted(canonical_json(c["messages"]) for c in prompts(run) if (c["week"] or 0) > PERTURB_WEEK)  # noqa: E731
    assert later(runs["players_and_teams"]) != later(runs["perturbed"])


# ------------------------------------------------------------------------------------ review fixes (#13)
HOSTILE = ("I want Patrick Mahomes, Josh Allen's arm, JOSH ALLEN, Ja\u2019Marr Chase, AJ Brown, id {id}, "
           "Kansas City Chiefs, the Chiefs, JAC, WSH, Justin Jefferson.")
#: real-looking full names in the forms free text mangles (a suffix, an apostrophe, dots, a hyphen), given to the
#: best-projected players of a position (the synthetic season's own names are plain "First Last")
FAMOUS = {("QB", 0): "Patrick Mahomes II", ("QB", 1): "Josh Allen", ("WR", 0): "Ja'Marr Chase",
          ("WR", 1): "A.J. Brown", ("WR", 2): "Justin Jefferson", ("WR", 3): "Amon-Ra St. Brown"}


@pytest.fixture(scope="module")
def famous_2024(prepared_2024):
    """The season with FAMOUS's names on its players (the ids stay the season's own)."""
    pool = Firewall(prepared_2024, demo_league()).catalog.pool
    pl = prepared_2024.players.copy()
    for (pos, rank), name in FAMOUS.items():
        pl.loc[pl["player_id"] == pool(pos)[rank], "player_name"] = name
    return dataclasses.replace(prepared_2024, players=pl)


def _ids(fw, *names):
    by_name = {n: p for p, n in fw.catalog.name.items()}
    return [by_name[n] for n in names]


def test_free_text_is_scrubbed_of_every_form_of_a_full_name(famous_2024):
    """Case, possessive, punctuation, curly apostrophes, a missing suffix or dots, real ids, team full names,
    nicknames and alias codes: all become pseudonyms; a first or last name alone survives (documented)."""
    league = masked(demo_league())
    fw = Firewall(famous_2024, league)
    m = Masker(fw, league)
    ids = _ids(fw, "Patrick Mahomes II", "Josh Allen", "Ja'Marr Chase", "A.J. Brown", "Justin Jefferson")
    mahomes, allen, chase, brown, jj = (m.players[p] for p in ids)
    hostile = HOSTILE.format(id=ids[0])
    kc, jax, was = (m.teams[t] for t in ("KC", "JAX", "WAS"))
    out = m.view({"their_rationale_untrusted": hostile + " Mahomes and Saquon, New York, Amon-Ra St. Brown's."})
    assert out["their_rationale_untrusted"] == (
        f"I want {mahomes}, {allen}'s arm, {allen}, {chase}, {brown}, id {mahomes}, {kc}, the {kc}, {jax}, {was}, "
        f"{jj}. Mahomes and Saquon, [team], {m.players[_ids(fw, 'Amon-Ra St. Brown')[0]]}'s.")
    # players mode: the same names go, NFL teams stay (every card shows them)
    p = Masker(fw, masked(league, "players"))
    assert p.view({"t": hostile})["t"] == (f"I want {p.players[_ids(fw, 'Patrick Mahomes II')[0]]}, "
                                           f"{p.players[_ids(fw, 'Josh Allen')[0]]}'s arm, "
                                           f"{p.players[_ids(fw, 'Josh Allen')[0]]}, "
                                           f"{p.players[_ids(fw, 'Ja' + chr(39) + 'Marr Chase')[0]]}, "
                                           f"{p.players[_ids(fw, 'A.J. Brown')[0]]}, id "
                                           f"{p.players[_ids(fw, 'Patrick Mahomes II')[0]]}, Kansas City Chiefs, the "
                                           f"Chiefs, JAC, WSH, {p.players[_ids(fw, 'Justin Jefferson')[0]]}.")


def test_a_name_two_players_share_once_normalised_becomes_a_placeholder(famous_2024):
    """Two players whose names read alike (here another receiver renamed "Justin Jefferson Jr.") are neither's
    pseudonym."""
    pl = famous_2024.players.copy()
    other = Firewall(famous_2024, demo_league()).catalog.pool("WR")[len(FAMOUS)]
    pl.loc[pl["player_id"] == other, "player_name"] = "Justin Jefferson Jr."
    twin = dataclasses.replace(famous_2024, players=pl)
    league = masked(demo_league(), "players")
    m = Masker(Firewall(twin, league), league)
    assert m.view({"t": "JUSTIN JEFFERSON and Justin Jefferson Jr. are fine"})["t"] == "[player] and [player] are fine"


def test_a_masked_llm_answering_with_real_ids_is_repaired_and_told_why(prepared_2024, tmp_path):
    """A model that knows the real ids (and answers with them instead of the pseudonyms of its view) does not
    get them applied as its own choice: every such decision is repaired (fallback) and its reason says why."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    class RealIds(FakeOpenAIServer):
        """The scripted model, answering with the real id of every pseudonym it picks (from masking.json)."""
        run_dir = tmp_path / "run"

        def respond(self, body, auth="", attempt_id=None):
            status, payload, delay = super().respond(body, auth, attempt_id)
            if status == 200:
                mapping = json.loads((self.run_dir / "masking.json").read_text())["players"]
                msg = payload["choices"][0]["message"]
                msg["content"] = re.sub(r"\b[A-Z]{1,3}-\d{2,}\b",
                                        lambda x: mapping.get(x.group(0), {}).get("player_id", x.group(0)),
                                        msg["content"])
            return status, payload, delay

    d = demo_league(weeks=1).model_dump(mode="json")
    with RealIds() as srv:
        d["teams"][0] = {"name": "LLM-0", "agent": {"kind": "llm", "model": "openai/fake-0", "api_base": srv.api_base,
                                                    "timeout_s": 30}}
        d.update(trades={"weeks": []}, information={"masking": "players"}, llm={"cache_dir": str(tmp_path / "cache"),
                                                          "max_fallback_rate": None, "max_reasks": 0})
        run_engine(League.model_validate(d), prepared_2024, RealIds.run_dir)
    calls = prompts(RealIds.run_dir)
    assert sum(bool(re.search(r"00-\d{7}", json.dumps(c["parsed"]))) for c in calls) > 10  # it did answer real ids
    llm = [r for r in decisions(RealIds.run_dir) if r["team"] == "LLM-0" and r["decision"] in (
        "draft_shortlist", "draft_pick", "set_lineup")]
    assert len(llm) > 10 and {r["decided_by"] for r in llm} == {"fallback"}
    assert all("masked mode: the answer named '00-" in r["reason"] and "only pseudonyms are accepted" in r["reason"]
               for r in llm)
    real_ids = set(prepared_2024.players["player_id"])
    picks = pd.read_parquet(RealIds.run_dir / "draft_picks.parquet")
    assert set(picks["player_id"]) <= real_ids  # repaired to real players of the shortlist


@pytest.mark.parametrize("name, mode, what", [
    ("RB-041", "players", "a pseudonym"), ("T07", "players", "a pseudonym"), ("T07 D/ST", "players", "a pseudonym"),
    ("KC", "players_and_teams", "an NFL team"), ("JAC", "players_and_teams", "an NFL team"),
    ("kansas city chiefs", "players_and_teams", "an NFL team"), ("Chiefs Kingdom", "players_and_teams", "an NFL team"),
    ("KC Wolves", "players_and_teams", "an NFL team"), ("Go Green Bay!", "players_and_teams", "an NFL team"),
    ("chiefs fans", "players_and_teams", None), ("Kc", "players_and_teams", None), ("KC", "players", None),
    ("Chiefs", "off", None), ("RB-041", "off", None)])
def test_validate_refuses_team_names_a_masked_run_would_refuse(prepared_2024, name, mode, what):
    """``validate`` (no data) refuses every pseudonym-like or NFL-team name the run (with the data) refuses."""
    d = demo_league().model_dump(mode="json")
    d["teams"][2]["name"], d["information"] = name, {"masking": mode}
    if mode != "off":  # the run's verdict on the same name (config validation bypassed)
        run = masked(demo_league(), mode)
        run.teams[2] = run.teams[2].model_copy(update={"name": name})
        with pytest.raises(ConfigError) if what else contextlib.nullcontext():
            Masker(Firewall(prepared_2024, run), run)
    if what is None:
        League.model_validate(d)
        return
    from ffbench_lib.config.load import parse_config

    with pytest.raises(ConfigError) as exc:
        parse_config(d)
    assert exc.value.problems == [f"teams[2].name: {name!r} reads as {what}, which information.masking: {mode} "
                                  "would mask or map back; rename the team"]


def test_unquoted_masking_off_in_yaml_is_off(tmp_path):
    """YAML reads `masking: off` as false: it means "off" (and dumps as a league without masking)."""
    from ffbench_lib.config.load import dump_config

    text = (REPO / "params" / "demo.yaml").read_text()
    (tmp_path / "off.yaml").write_text(text + "\ninformation: {masking: off}\n")
    league = load_config(tmp_path / "off.yaml")
    assert league.information.masking == "off" and "information" not in dump_config(league)
    (tmp_path / "on.yaml").write_text(text + "\ninformation: {masking: on}\n")
    with pytest.raises(ConfigError, match="information.masking"):
        load_config(tmp_path / "on.yaml")


def test_a_resume_whose_pseudonyms_moved_is_refused(prepared_2024, tmp_path):
    """masking.json is what the agents saw: a resume that would show a pseudonym as another player is refused
    (naming it and both players), leaving the run as it was; new pseudonyms (a live run's data grew) are fine."""
    from ffbench_lib.runs.runner import ResumeMismatch
    from engine_helpers import digests

    import shutil

    league = masked(demo_league(weeks=2), "players")
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "grew", crash_after="week:1")
    shutil.copytree(tmp_path / "grew", tmp_path / "moved")  # the same crashed run, for the second case
    path = tmp_path / "grew" / "masking.json"
    full = json.loads(path.read_text())
    fewer = {**full, "players": dict(list(full["players"].items())[:-5])}  # as if five players were unknown then
    path.write_text(json.dumps(fewer))
    run_engine(league, prepared_2024, tmp_path / "grew", resume=True)
    assert json.loads(path.read_text()) == full

    path = tmp_path / "moved" / "masking.json"
    a, b = sorted(full["players"], key=natural)[:2]
    swapped = {**full, "players": {**full["players"], a: full["players"][b], b: full["players"][a]}}
    path.write_text(json.dumps(swapped))
    before = digests(tmp_path / "moved")
    with pytest.raises(ResumeMismatch) as exc:
        run_engine(league, prepared_2024, tmp_path / "moved", resume=True)
    for s in (a, full["players"][a]["player_name"], full["players"][b]["player_name"]):
        assert s in str(exc.value)
    assert digests(tmp_path / "moved") == before


def test_the_cli_refuses_such_a_resume_with_exit_2(tmp_path):
    from ffbench_lib import cli

    cfg = tmp_path / "masked.yaml"
    text = (REPO / "params" / "demo.yaml").read_text()  # the shared prepared cache ($FFBENCH_CACHE_DIR)
    cfg.write_text(text.replace("weeks: 17", "weeks: 1").replace("weeks: [4, 7, 10]", "weeks: []") + "\ninformation: {masking: players}\n")
    out = tmp_path / "run"
    assert cli.main(["run", str(cfg), "--out", str(out), "--quiet"]) == 0
    path = out / "masking.json"
    mapping = json.loads(path.read_text())
    a, b = list(mapping["players"])[:2]
    mapping["players"][a], mapping["players"][b] = mapping["players"][b], mapping["players"][a]
    path.write_text(json.dumps(mapping))
    assert cli.main(["run", str(cfg), "--out", str(out), "--resume", "--quiet"]) == 2


def test_pseudonyms_order_lists_naturally(prepared_2024):
    """RB-999 before RB-1000, in views and masking.json (a position past 999 players numbers on)."""
    assert sorted(["RB-1000", "RB-999", "RB-010", "T10", "T09"], key=natural) == [
        "RB-010", "RB-999", "RB-1000", "T09", "T10"]
    league = masked(demo_league(), "players")
    fw = Firewall(prepared_2024, league)
    m = Masker(fw, league)
    a, b = sorted(fw.catalog.pool("WR")[:2])
    m._fwd[a], m._fwd[b] = "WR-999", "WR-1000"  # as in a season with 1,000 known receivers
    assert m.view({"locked_players": [a, b]}) == {"locked_players": ["WR-999", "WR-1000"]}
    m._fwd[a], m._fwd[b] = "WR-1000", "WR-999"
    assert m.view({"locked_players": [a, b]}) == {"locked_players": ["WR-999", "WR-1000"]}
    fakes = list(m.mapping()["players"])
    assert fakes == sorted(fakes, key=natural)
