"""Protected numbers (``information.numbers: protected``): every draft card a masked agent sees matches at least K real
players of the season; the audit (``ffbench masking audit``) measures it from the prompts sent, over every decision
kind and for an adversary who identified the teams, says what it does not measure, and refuses bad input (exit 2);
the future moves no protected view before it; bots keep the exact numbers."""
from __future__ import annotations

import json
import re

import pytest

from ffbench_lib.cli import main as cli
from ffbench_lib.config.errors import ConfigError
from ffbench_lib.config.league import Information, League
from ffbench_lib.config.load import load_config, parse_config
from ffbench_lib.game.protect import (K, NUMBER_WITHHELD, SEASON_HIDDEN, Protector, bye_classes, cell_text, columns,
                                      consistent, fits, generalise, Column, midpoint, mondrian, parse_tables)
from ffbench_lib.game.render import CARD, DETAIL, WEEK, table
from ffbench_lib.game.views import Firewall, canonical_json
from ffbench_lib.runs.anonymity import AUDIT, DRAFT_KINDS, UNMEASURED, audit
from ffbench_lib.runs.rundir import exclusive

from engine_helpers import REPO, demo_league, run_engine
from test_firewall import perturb

PROTECTED = Information(masking="players_and_teams", numbers="protected")


def protected(league: League) -> League:
    return league.model_copy(update={"information": PROTECTED})


def top_adp(fw: Firewall, n: int = 50) -> list[str]:
    pool = [p for p in fw.catalog.pool_ids if fw.adp.get(p) is not None and fw.adp[p] == fw.adp[p]]
    return sorted(pool, key=lambda p: fw.adp[p])[:n]


def draft_ks(fw: Firewall, league: League, ids: list[str], protect: bool) -> list[int]:
    """How many real players of the draft pool each player's shortlist detail (as a prompt writes it) fits."""
    pool = list(fw.catalog.pool_ids)
    ref = columns(fw.shortlist_detail(pool))
    pr = Protector(fw, league.seed)
    out = []
    for p in ids:
        card = fw.shortlist_detail([p])[0]
        shown = pr.card(card, None) if protect else card
        out.append(int(consistent({h: cell_text(shown.get(f)) for h, f in DETAIL}, ref).sum()))
    return out


# ------------------------------------------------------------------------------------------------ config
def test_the_default_dumps_as_before_and_protected_needs_masked_teams():
    league = load_config(REPO / "params" / "demo.yaml")
    assert "information" not in league.model_dump(mode="json")
    masked = league.model_copy(update={"information": Information(masking="players_and_teams")})
    assert masked.model_dump(mode="json")["information"] == {"masking": "players_and_teams"}  # no numbers: exact
    assert protected(league).model_dump(mode="json")["information"] == {"masking": "players_and_teams",
                                                                        "numbers": "protected"}
    d = league.model_dump(mode="json")
    for masking in ("off", "players"):
        d["information"] = {"masking": masking, "numbers": "protected"}
        with pytest.raises(ConfigError, match=r"\n  information\.numbers: protected needs masking players_and_teams.*"
                                              r"set information\.masking: players_and_teams"):
            parse_config(d, "league.yaml")  # as a user reads it (not information.information.numbers)


def test_validate_refuses_protected_numbers_without_masking(tmp_path, capsys):
    text = (REPO / "params" / "demo.yaml").read_text() + "information: {numbers: protected}\n"
    (tmp_path / "l.yaml").write_text(text)
    assert cli(["validate", str(tmp_path / "l.yaml")]) == 2
    err = capsys.readouterr().err
    assert "information.numbers" in err and "players_and_teams" in err and "Traceback" not in err
    with pytest.raises(ConfigError):
        load_config(tmp_path / "l.yaml")


# ------------------------------------------------------------------------------------------------ pieces
def test_mondrian_classes_hold_k_and_ranges_read_back():
    import numpy as np

    x = np.arange(40, dtype=float).reshape(20, 2)
    classes = mondrian(x, [str(i) for i in range(20)], k=5)
    assert sorted(len(c) for c in classes) == [5, 5, 5, 5] and sorted(np.concatenate(classes)) == list(range(20))
    assert midpoint("180-210") == 195.0 and midpoint("-4-2 or -") == -1.0 and midpoint(3) == 3.0
    col = Column([185.5, 212.0, None, 7])
    assert fits("180-210", col).tolist() == [True, False, False, False]
    assert fits("180-210 or -", col).tolist() == [True, False, True, False]
    assert fits("7", col).tolist() == [False, False, False, True] and fits("-", col).tolist() == [False, False, True, False]
    assert bye_classes([5] * 4 + [6] * 4 + [7] * 2 + [9] * 2 + [10] * 4 + [11] * 4 + [12] * 6 + [14] * 6) == {
        5: "5-7", 6: "5-7", 7: "5-7", 9: "9-11", 10: "9-11", 11: "9-11", 12: "12-14", 14: "12-14"}
    rows = parse_tables("BOARD\n" + table([{"id": "RB-001", "name": "RB-001", "pos": "RB", "adp": "3-9"}], CARD))
    assert rows == [{"id": "RB-001", "name": "RB-001", "pos": "RB", "team": "-", "bye": "-", "adp": "3-9",
                     "proj": "-", "prev_pts": "-", "prev_g": "-"}]


def test_every_draft_card_of_a_season_matches_k_players(prepared_2024):
    league = protected(demo_league())
    fw = Firewall(prepared_2024, league)
    pool = list(fw.catalog.pool_ids)
    assert min(draft_ks(fw, league, pool, protect=True)) >= K
    assert sum(k == 1 for k in draft_ks(fw, league, top_adp(fw), protect=False)) > 25  # the leak it closes
    recs = [canonical_json(Protector(fw, 4).preseason()), canonical_json(Protector(fw, 4).preseason())]
    assert recs[0] == recs[1]  # a function of the seed and the data


def week_ks(fw: Firewall, league: League, w: int) -> tuple[list[int], int]:
    """How many real players known before week ``w`` each one's protected week card (as a prompt writes it, flags
    and injury included) fits; and how many cards leave unsaid whether the player scores nothing (``bye or -``)."""
    known = sorted(fw.week(w).known_players())
    ref = columns(fw.player_week(p, w) for p in known)
    pr = Protector(fw, league.seed)
    ks, unsure = [], 0
    for p in known:
        shown = pr.card(fw.player_week(p, w), w)
        ks.append(int(consistent({h: cell_text(shown.get(f)) for h, f in WEEK}, ref).sum()))
        exact = list(fw.player_week(p, w)["zero_flags"])
        if isinstance(shown["zero_flags"], str):  # generalised: the player's own flags are one of its options
            assert (",".join(exact) or "-") in shown["zero_flags"].split(" or "), (p, w, shown["zero_flags"])
            unsure += shown["zero_flags"].endswith(" or -")
        else:
            assert list(shown["zero_flags"]) == exact
    return ks, unsure


def test_every_week_card_matches_k_players_flags_and_injuries_included(prepared_2024):
    league = protected(demo_league())
    fw = Firewall(prepared_2024, league)
    for w in range(1, league.weeks + 1):
        ks, _ = week_ks(fw, league, w)
        assert min(ks) >= K, (w, sorted(ks)[:5])


def test_rare_flags_pool_before_they_are_hidden():
    """Three kickers on bye and two ruled out share a class (``bye or out``: both score nothing) before either joins
    the healthy ones, whose flags stay exact."""
    cards = {f"k{i:02d}": {"pos": "K", "proj_week": float(i), "zero_flags": flags, "injury": inj}
             for i, (flags, inj) in enumerate([(["bye"], None)] * 3 + [(["out"], "Out")] * 2 + [([], None)] * 20)}
    shown = generalise(cards, ("proj_week",), seed=1, k=K, exact=("zero_flags", "injury"))
    assert {shown[f"k{i:02d}"]["zero_flags"] for i in range(5)} == {"bye or out"}
    assert {shown[f"k{i:02d}"]["injury"] for i in range(5)} == {"Out or -"}
    assert all(shown[f"k{i:02d}"]["zero_flags"] == [] for i in range(5, 25))
    two = {**{f"a{i}": {"pos": "K", "proj_week": 1.0, "zero_flags": ["bye"], "injury": None} for i in range(2)},
           **{f"b{i}": {"pos": "K", "proj_week": 1.0, "zero_flags": [], "injury": None} for i in range(8)}}
    got = generalise(two, ("proj_week",), seed=1, k=K, exact=("zero_flags", "injury"))
    assert {got[p]["zero_flags"] for p in ("a0", "a1")} == {"bye or -"}  # two flagged kickers cannot hide alone


def test_numbers_in_another_teams_rationale_are_withheld_and_ids_kept(prepared_2024):
    pr = Protector(Firewall(prepared_2024, protected(demo_league())), 4)
    view = {"decision": "respond_to_offer", "week": 3, "negotiation": [
        {"step": 1, "their_rationale_untrusted": "raises my projected starting value by 12.3 per week; 00-0035208 "
                                                 "for a 1-for-1 swap, gain +3.2 in 2024"}]}
    text = pr.view(view)["negotiation"][0]["their_rationale_untrusted"]
    assert text == (f"raises my projected starting value by {NUMBER_WITHHELD} per week; 00-0035208 for a 1-for-1 "
                    f"swap, gain {NUMBER_WITHHELD} in {NUMBER_WITHHELD}")


def test_a_protected_teams_boards_are_cut_by_the_protected_value_and_bots_keep_the_exact_cut(prepared_2024):
    """A board cut by the exact projection would say a card's rank (169 of 1,440 board cards fit one player with
    it); cut by the protected value it holds whole classes, and a keyed draw from the last one."""
    from ffbench_lib.game.decisions import waiver_claims
    from ffbench_lib.game.state import LeagueState

    league = protected(demo_league())
    fw = Firewall(prepared_2024, league)
    teams = [t.name for t in league.teams]
    fw.protected_teams = frozenset(teams[:1])
    state = LeagueState(teams=teams, agent_ids={t: t for t in teams}, draft_order=teams, schedule={},
                        rosters={t: [] for t in teams})
    mine, bot = fw.draft_view(state, teams[0], 1, 1)["available"], fw.draft_view(state, teams[1], 1, 1)["available"]
    n, classes, moved = league.draft.show_per_position, fw.protector.preseason(), 0
    for pos, cards in mine.items():
        pool = list(fw.catalog.pool(pos))
        assert [c["id"] for c in bot[pos]] == pool[:n]  # the exact cut, as before
        ids = [c["id"] for c in cards]
        assert ids == fw.protector.ranked(pool, "proj", None)[:n]
        moved += len(set(ids) - set(pool[:n]))
        # whole classes: the classes with members on and off the board all show the board's last value
        straddle = {midpoint(classes[p]["proj"]) for p in ids if any(classes[q] is classes[p] and q not in ids
                                                                     for q in pool)}
        assert straddle <= {midpoint(classes[ids[-1]]["proj"])}, pos
    assert moved > 0  # the protected cut differs somewhere
    w = 2
    players = waiver_claims.pool(fw, state, w)
    exact, prot = (waiver_claims.best_free_agents(fw, players, w, p) for p in (False, True))
    lists = waiver_claims.free_agent_lists(fw, players, w, teams)
    assert lists[teams[0]] == prot and lists[teams[1]] == exact and exact != prot
    for pos, cards in prot.items():
        assert [c["id"] for c in cards] == fw.protector.ranked(
            [p for p in players if fw.position[p] == pos], "proj_week", w)[: league.waivers.show_per_position]


def test_a_protected_trade_view_shows_strengths_from_its_cards_and_rounded_points(prepared_2024):
    """A team's positional strength from exact projections (a one-QB slot's: that QB's) would narrow its cards: it is
    recomputed from the protected cards the view shows; a record's points for (sums of exact points) are rounded."""
    from ffbench_lib.game.protect import POINTS_STEP
    from ffbench_lib.game.state import LeagueState

    league = protected(demo_league())
    fw = Firewall(prepared_2024, league)
    teams = [t.name for t in league.teams]
    pool = list(fw.catalog.pool_ids)
    state = LeagueState(teams=teams, agent_ids={t: t for t in teams}, draft_order=teams, schedule={},
                        rosters={t: pool[i::len(teams)][: league.roster.size] for i, t in enumerate(teams)})
    state.records[teams[1]].points_for = 123.45
    w = 3
    exact = fw.trade_view(state, teams[0], w)
    shown = fw.protector.view(exact)
    slots = exact["rules"]["roster_slots"]
    for mine, cards, strength in [(True, shown["my_roster"], shown["my_strength"])] + [
            (False, t["roster"], t["strength"]) for t in shown["other_teams"]]:
        for pos, v in strength.items():
            top = sorted((midpoint(c["proj_week"]) or 0.0 for c in cards if c["pos"] == pos), reverse=True)
            assert v == round(sum(top[: max(1, slots.get(pos, 0))]), 1), (mine, pos)
    assert shown["my_strength"] != exact["my_strength"]
    assert shown["league_avg_strength"] == {p: round(v / 5) * 5.0 for p, v in exact["league_avg_strength"].items()}
    other = next(t for t in shown["other_teams"] if t["team"] == teams[1])
    assert other["record"]["points_for"] == round(123.45 / POINTS_STEP) * POINTS_STEP == 120.0


# ------------------------------------------------------------------------------------------------ real data
def test_top_50_adp_draft_cards_of_2024_are_unique_exact_and_k_anonymous_protected(real_prepared_2024):
    league = protected(demo_league())
    fw = Firewall(real_prepared_2024, league)
    top = top_adp(fw)
    exact = draft_ks(fw, league, top, protect=False)
    assert sum(k == 1 for k in exact) == 50  # the leak: every top-50 player named by his detail card
    ks = draft_ks(fw, league, top, protect=True)
    assert min(ks) >= K and not any(k == 1 for k in ks), ks
    assert min(draft_ks(fw, league, list(fw.catalog.pool_ids), protect=True)) >= K


def test_every_week_card_of_2024_matches_k_players_and_few_hide_a_zero(real_prepared_2024):
    league = protected(demo_league())
    fw = Firewall(real_prepared_2024, league)
    cards = unsure = 0
    for w in range(1, league.weeks + 1):
        ks, u = week_ks(fw, league, w)
        assert min(ks) >= K, (w, sorted(ks)[:5])
        cards, unsure = cards + len(ks), unsure + u
    assert 0 < unsure < 0.03 * cards  # 173 of 16,203 (1.1%) leave unsaid whether the player scores nothing


# ------------------------------------------------------------------------------------------------ firewall
@pytest.mark.parametrize("week", [1, 4])
def test_protected_views_before_week_w_do_not_move_when_the_future_changes(prepared_2024, week):
    league = protected(demo_league(seed=4))
    fake = perturb(prepared_2024, week)
    a, b = Protector(Firewall(prepared_2024, league), 4), Protector(Firewall(fake, league), 4)
    assert a.preseason() == b.preseason()
    for w in range(1, week + 1):
        assert canonical_json(a.week(w)) == canonical_json(b.week(w)), w
    assert a.week(week + 2) != b.week(week + 2)  # a later week does see the change
    assert Protector(Firewall(prepared_2024, league), 5).preseason() != a.preseason()  # and the seed moves it


# ------------------------------------------------------------------------------------------------ LLM seasons
WEEKS = 2


def llm_league(api_base: str, cache, numbers: str) -> League:
    d = load_config(REPO / "params" / "demo.yaml").model_dump(mode="json")
    for i in (0, 1):
        d["teams"][i] = {"name": f"LLM-{i}", "agent": {"kind": "llm", "model": f"openai/fake-{i}",
                                                       "api_base": api_base, "timeout_s": 30}}
    d.update(weeks=WEEKS, trades={"weeks": [2], "max_players_per_side": 2},
             information={"masking": "players_and_teams", "numbers": numbers}, llm={"cache_dir": str(cache)})
    return League.model_validate(d)


@pytest.fixture(scope="module")
def llm_runs(prepared_2024, tmp_path_factory):
    """The demo league with two LLM teams on the fake server through litellm, WEEKS long: masked with exact
    numbers and with protected ones."""
    from ffbench_lib.testing.fake_openai import FakeOpenAIServer

    root = tmp_path_factory.mktemp("protect")
    runs = {}
    for numbers in ("exact", "protected"):
        with FakeOpenAIServer() as srv:
            league = llm_league(srv.api_base, root / f"cache-{numbers}", numbers)
            run_engine(league, prepared_2024, root / numbers)
        runs[numbers] = (league, root / numbers)
    return runs


def test_the_audit_finds_the_leak_of_exact_numbers_and_none_in_protected_draft_cards(llm_runs, prepared_2024):
    _, run = llm_runs["exact"]
    before = audit(run, prepared_2024)
    draft = before["draft"]
    assert draft["unique_share"] > 0.5 and draft["smallest_k"] == 1 and before["verdict"].startswith("not protected")
    assert not before["protected_per_card"] and not before["protected_draft_per_card"]
    assert not before["protected_team_known"]
    assert {"draft_shortlist", "draft_pick", "set_lineup"} <= set(before["kinds"])
    assert all(s["unmatched"] == 0 for s in before["kinds"].values())  # every card shown fits its own player
    league, run = llm_runs["protected"]
    after = audit(run, prepared_2024)
    assert json.loads((run / AUDIT).read_text()) == after
    assert after["draft"]["cards"] > 100 and after["draft"]["smallest_k"] >= K and after["draft"]["unique"] == 0
    for kind in ("draft_shortlist", "draft_pick"):
        assert after["kinds"][kind]["smallest_k"] >= K and after["kinds"][kind]["unmatched"] == 0
    # the verdict covers every kind, the team_known adversary and the linked cards, and names what it does not measure
    week_min = min(s["smallest_k"] for kind, s in after["kinds"].items() if kind not in DRAFT_KINDS)
    team_min = min(s["team_known"]["smallest_k"] for s in after["kinds"].values())
    assert after["protected_draft_per_card"] and after["protected_per_card"] and week_min >= K  # flags included
    assert f"week cards NOT k>={K}" not in after["verdict"] and f"week cards NOT k>={K}" in before["verdict"]
    # exact numbers show the team pseudonyms, and an adversary who identifies the teams names players ...
    before_team = min(s["team_known"]["smallest_k"] for s in before["kinds"].values())
    assert before["teams_shown"] and not before["protected_team_known"] and before_team == 1
    assert f"NOT protected against an adversary who identifies the teams (smallest k 1" in before["verdict"]
    assert "team_identification" in before["unmeasured"]
    # ... protected ones show no team nor opponent: team_known is each card's own k
    assert not after["teams_shown"] and after["protected_team_known"] and team_min == week_min
    assert all(r["team"] == "?" and r.get("opp", "?") == "?" for r in protected_rows(run))
    assert "no card shows a team or an opponent" in after["verdict"]
    assert set(after["unmeasured"]) == set(UNMEASURED) - {"team_identification"}
    assert after["verdict"].split("not measured: ")[1] == ", ".join(
        UNMEASURED[u].split(" (")[0] for u in after["unmeasured"])
    # the linked adversary: every card of a player in every prompt read together narrows him further
    linked = after["linked"]
    assert linked["cards"] > 50 and linked["smallest_k"] <= min(after["draft"]["smallest_k"], week_min)
    assert after["protected_linked"] == (linked["smallest_k"] >= K)
    # one prompt read as a whole (what one call shows a model) still leaves every player among K
    assert after["protected_in_prompt"] and after["in_prompt"]["smallest_k"] >= K
    assert after["in_prompt"]["cards"] == linked["cards"] and linked["smallest_k"] <= after["in_prompt"]["smallest_k"]
    assert after["level"] == ("protected across prompts" if after["protected_linked"] else "protected per prompt")
    assert not before["protected_in_prompt"] and before["in_prompt"]["unique_share"] > 0.5
    assert before["linked"]["unique_share"] > 0.5 and before["linked"]["unique"] > linked["unique"]
    # no week card names its player either (rare flags and statuses pool with others, ``bye or out``)
    assert after["kinds"]["set_lineup"]["unique"] == 0 and before["kinds"]["set_lineup"]["unique_share"] > 0.1


def protected_rows(run) -> list[dict[str, str]]:
    calls = [json.loads(line) for line in (run / "llm_calls.jsonl").open()]
    return [r for c in calls for m in c["messages"] if m["role"] != "assistant" for r in parse_tables(m["content"])]


def test_a_protected_season_plays_from_ranges_without_the_year_and_bots_see_exact_numbers(llm_runs):
    league, run = llm_runs["protected"]
    calls = [json.loads(line) for line in (run / "llm_calls.jsonl").open()]
    text = "\n".join(m["content"] for c in calls for m in c["messages"])
    assert SEASON_HIDDEN in text and not re.search(r"\b20(2[0-9])\b", text)
    assert re.search(r"\| \d+-\d+ \|", text)  # ranges in the tables
    assert text.count("Protected numbers: a number on a player's card is a range (low-high) shared by at least 5 ") \
        == sum(m["role"] == "system" for c in calls for m in c["messages"])  # every system prompt says what they mean
    recs = [json.loads(line) for line in (run / "decisions.jsonl").open()]
    llm = [r for r in recs if r["agent"].startswith("llm:")]
    assert sum(r["decided_by"] == "fallback" for r in llm) / len(llm) < 0.1  # answers map back and apply
    assert all(not isinstance(c.get("proj"), str) for r in recs for c in r["view"].get("roster", []))  # logs exact
    assert json.loads((run / "masking.json").read_text())["numbers"] == "protected"
    # bot seats decided on the exact views: the same as in the exact-numbers twin up to the LLM teams' picks
    exact = [json.loads(line) for line in (llm_runs["exact"][1] / "decisions.jsonl").open()]
    assert [r["decision"] for r in exact if r["week"] is None][:3] == [r["decision"] for r in recs if r["week"] is None][:3]


def test_an_audited_run_is_not_edited_and_resumes(llm_runs, prepared_2024, tmp_path):
    import shutil

    league, run = llm_runs["protected"]
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    audit(copy, prepared_2024)
    result, _ = run_engine(league, prepared_2024, copy, resume=True)  # a finished run: nothing to do, no refusal
    assert json.loads((copy / "run.json").read_text())["status"] == "complete"


def test_the_audit_command_reports_and_refuses_bad_input(llm_runs, tmp_path, capsys):
    _, run = llm_runs["protected"]
    assert cli(["masking", "audit", str(run), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draft"]["smallest_k"] >= K
    assert cli(["masking", "audit", str(run)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"verdict: protected (per prompt|across prompts)\n  draft cards k>=5 per card", out), out
    assert "no card shows a team or an opponent" in out and "  not measured: the withheld year" in out
    assert re.search(r"\none prompt +\d+ +0% +\d+ ", out) and re.search(r"\nall prompts +\d+ +\d+% +\d+ ", out), out
    assert cli(["masking", "audit", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    # a masked run without prompts, and an unmasked run
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(run, bare)
    (bare / "llm_calls.jsonl").unlink()
    assert cli(["masking", "audit", str(bare)]) == 2
    err = capsys.readouterr().err
    assert "no llm_calls.jsonl" in err and "Traceback" not in err
    cfg = (bare / "config.yaml").read_text()
    (bare / "config.yaml").write_text(re.sub(r"information:\n(  .*\n)+", "", cfg))
    assert cli(["masking", "audit", str(bare)]) == 2
    err = capsys.readouterr().err
    assert "not masked" in err and "Traceback" not in err


def _edit_json(f, **changes):
    d = json.loads(f.read_text())
    d.update(changes)
    f.write_text(json.dumps(d))


def _impossible_card(run):
    """The first draft prompt with one more card no real player fits (the wrong season's table, say)."""
    lines = (run / "llm_calls.jsonl").read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("decision") == "draft_shortlist")
    call = json.loads(lines[i])
    user = next(m for m in call["messages"] if m["role"] == "user")
    user["content"] += "\n" + table([{"id": "QB-999", "name": "QB-999", "pos": "QB", "adp": "9990-9999"}], CARD)
    lines[i] = json.dumps(call)
    (run / "llm_calls.jsonl").write_text("\n".join(lines) + "\n")


def _swap(run, what: str):
    m = json.loads((run / "masking.json").read_text())
    fakes = sorted(m[what])
    m[what] = dict(zip(fakes, [m[what][f] for f in fakes[1:] + fakes[:1]]))
    (run / "masking.json").write_text(json.dumps(m))


#: a bad input, how it is made from a finished run, and the file the error must name
BAD_INPUTS = {
    "a truncated last line of llm_calls.jsonl": (
        lambda r: (r / "llm_calls.jsonl").write_bytes((r / "llm_calls.jsonl").read_bytes()[:-200]),
        "llm_calls.jsonl", "is not JSON"),
    "a line of llm_calls.jsonl that is not an object": (
        lambda r: (r / "llm_calls.jsonl").write_text("[1, 2]\n"), "llm_calls.jsonl", "not a JSON object"),
    "messages that are not a list": (
        lambda r: (r / "llm_calls.jsonl").write_text('{"decision": "draft_pick", "messages": "hello"}\n'),
        "llm_calls.jsonl", "messages that are not a list"),
    "a week kind without its week": (
        lambda r: (r / "llm_calls.jsonl").write_text('{"decision": "set_lineup", "messages": []}\n'),
        "llm_calls.jsonl", "without its week"),
    "garbage masking.json": (
        lambda r: (r / "masking.json").write_text("not json"), "masking.json", "not a masking.json"),
    "a list for masking.json": (lambda r: (r / "masking.json").write_text("[]"), "masking.json", "not a masking.json"),
    "masking.json whose players are not objects": (
        lambda r: (r / "masking.json").write_text('{"players": {"RB-001": 3}}'), "masking.json", "not a masking.json"),
    "unparsable YAML in config.yaml": (lambda r: (r / "config.yaml").write_text(": : :\n"), "config.yaml", "YAML"),
    "an empty config.yaml": (lambda r: (r / "config.yaml").write_text(""), "config.yaml", "not a league config"),
    "a config edited to another season": (
        lambda r: (r / "config.yaml").write_text(re.sub(r"(?m)^season: 2024$", "season: 2023",
                                                        (r / "config.yaml").read_text())),
        "config.yaml", "run.json says the run played 2024"),
    "a run still being played (run.json status running)": (
        lambda r: _edit_json(r / "run.json", status="running"), "run.json", "status running"),
    "other prepared data than the run's (data_fingerprint)": (
        lambda r: _edit_json(r / "run.json", data_fingerprint="0" * 16), "run.json",
        "data_fingerprint 0000000000000000"),
    "a card no real player fits (the wrong reference table)": (
        _impossible_card, "llm_calls.jsonl", "no real player of the season's table fits"),
    "masking.json of other players": (lambda r: _swap(r, "players"), "llm_calls.jsonl", "masking.json is not this run's"),
    "bytes that are not UTF-8 in llm_calls.jsonl": (
        lambda r: (r / "llm_calls.jsonl").write_bytes((r / "llm_calls.jsonl").read_bytes() + b"\xff\xfe{}\n"),
        "llm_calls.jsonl", "is not UTF-8 text"),
    "a config edited to exact numbers": (
        lambda r: (r / "config.yaml").write_text((r / "config.yaml").read_text().replace("numbers: protected",
                                                                                          "numbers: exact")),
        "config.yaml", "masking.json says the run was played with numbers protected"),
}


@pytest.mark.parametrize("case", [*BAD_INPUTS, "masking.json of other teams"])
def test_the_audit_refuses_each_bad_input_with_one_message_naming_the_file(llm_runs, tmp_path, capsys, case):
    import shutil

    if case == "masking.json of other teams":  # a run that shows team pseudonyms (protected numbers show none)
        make, named, says, run = lambda r: _swap(r, "teams"), "llm_calls.jsonl", "masking.json is not this run's", \
            llm_runs["exact"][1]
    else:
        (make, named, says), run = BAD_INPUTS[case], llm_runs["protected"][1]
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (copy / AUDIT).unlink(missing_ok=True)
    make(copy)
    capsys.readouterr()
    assert cli(["masking", "audit", str(copy)]) == 2
    cap = capsys.readouterr()
    assert cap.err.startswith("error: ") and len(cap.err.strip().splitlines()) == 1, cap.err
    assert str(copy / named) in cap.err and says in cap.err and "Traceback" not in cap.err, cap.err
    assert not (copy / AUDIT).exists() and cap.out == ""


def test_the_audit_refuses_a_run_whose_lock_is_held(llm_runs, tmp_path, capsys):
    import shutil

    _, run = llm_runs["protected"]
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (copy / AUDIT).unlink(missing_ok=True)
    with exclusive(copy):  # another process writing the run
        assert cli(["masking", "audit", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "another process is writing" in err and str(copy / ".lock") in err and "Traceback" not in err
    assert not (copy / AUDIT).exists()
    assert cli(["masking", "audit", str(copy), "--json"]) == 0  # released: audited


def test_a_bot_only_protected_season_plays_as_the_masked_one(prepared_2024, tmp_path):
    """Bots see exact numbers: with protection on, a bot-only season's decisions are byte-identical to the masked
    one's (and so to the unmasked one's: test_masking)."""
    league = demo_league(weeks=2)
    run_engine(league.model_copy(update={"information": Information(masking="players_and_teams")}), prepared_2024,
               tmp_path / "masked")
    run_engine(protected(league), prepared_2024, tmp_path / "protected")
    assert (tmp_path / "masked" / "decisions.jsonl").read_bytes() == (tmp_path / "protected" / "decisions.jsonl").read_bytes()


def test_the_report_caveat_names_each_audited_runs_smallest_k(llm_runs, prepared_2024, tmp_path):
    from ffbench_lib.analysis.anonymity import audit_caveat

    for numbers in ("exact", "protected"):
        audit(llm_runs[numbers][1], prepared_2024)
    text = audit_caveat([llm_runs["exact"][1], llm_runs["protected"][1]])
    assert "numbers exact: every draft card the prompts showed matches at least 1 real player" in text
    assert f"numbers protected: every draft card the prompts showed matches at least " in text
    prot = text.split("numbers protected:")[1]
    exact = text.split("numbers protected:")[0]
    # exact numbers show the teams: the caveat says not protected, naming the team-known adversary
    assert "for an adversary who identifies the teams" in exact and "Not protected (" in exact
    assert "cards with the teams identified" in exact.split("Not protected (")[1].split(")")[0]
    assert "team identification from a prompt's cards" in exact
    # protected numbers: every card k >= 5 alone, no team shown, and the linked cards stated with what is not measured
    linked = json.loads((llm_runs["protected"][1] / AUDIT).read_text())["linked"]
    assert "1 run(s) show no team or opponent on any card" in prot and "Not protected (" not in prot
    assert f"earlier calls showed) at least {linked['smallest_k']} " in prot
    assert ("but not a player's cards of a whole run read together" in prot) == (linked["smallest_k"] < K)
    assert "with a player's cards in one prompt read together (what one call shows a model) at least " in prot
    assert "the audit does not measure the withheld year read off the bye classes" in prot
    assert "team identification" not in prot
    assert audit_caveat([tmp_path]) is None  # no masked run: nothing to say
