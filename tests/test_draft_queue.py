"""``draft.mode: queue``: every team names a ranked queue at the start of each round, the round's picks are resolved
from the queues in snake order, and only a team whose queue ran dry is asked again."""
from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from ffbench_lib.agents import fit
from ffbench_lib.agents.prompts import user_prompt
from ffbench_lib.config.league import PSEUDONYM, League
from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.runs.runner import SimulatedCrash
from ffbench_lib.records.decision import is_decision
from ffbench_lib.runs.guard import FallbackGuard
from ffbench_lib.game.rules import draft as draft_rules
from ffbench_lib.game.rules.roster import can_field_lineup, within_caps
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.game.state import LeagueState
from ffbench_lib.testing.fake_openai import FakeOpenAIServer, critical_path
from ffbench_lib.game.views import Firewall

from engine_helpers import ScriptedAgent, agents_with, demo_league, run_engine, same_run
from test_decisions import World
from test_masking import TEAM_WORDS, real_strings, words

QUEUE = REGISTRY["draft_queue"]


def league_of(mode="queue", weeks=2, strategy=None, **draft) -> League:
    """The demo league (bots) in ``mode``, a short season without trades; every team ``strategy`` if given."""
    d = demo_league().model_dump(mode="json")
    d.update(weeks=weeks, trades={**d["trades"], "weeks": []})
    d["draft"] = {**d["draft"], "mode": mode, **draft}
    if strategy:
        d["teams"] = [{**t, "agent": {"kind": "bot", "strategy": strategy}} for t in d["teams"]]
    return League.model_validate(d)


def queue_records(run_dir):
    return [d for d in RunDir(run_dir).decisions() if d["decision"] == "draft_queue"]


# ----------------------------------------------------------------------------------------------- the decision
@pytest.fixture(scope="module")
def world(prepared_2024):
    return World(prepared_2024)


def test_queue_validation_keeps_valid_ids_and_repairs_an_unusable_queue(world):
    view = world.queue_view()
    assert view["decision"] == "draft_queue" and view["queue_size"] == 12 and "shortlist_size" not in view
    board = [c for cards in view["available"].values() for c in cards]
    rbs, wrs, qbs = ([c["id"] for c in board if c["pos"] == pos] for pos in ("RB", "WR", "QB"))
    assert "QB" not in view["legal_positions"]  # the QB team holds its cap
    out = QUEUE.resolve({"queue": rbs[:3] + wrs[:3]}, view)
    assert (out.applied, out.decided_by, out.problems) == (rbs[:3] + wrs[:3], "agent", [])
    out = QUEUE.resolve({"queue": [rbs[0], "00-nobody", qbs[0], rbs[0], wrs[0]]}, view)
    assert out.applied == [rbs[0], wrs[0]] and out.decided_by == "agent" and len(out.problems) == 3
    out = QUEUE.resolve({"queue": rbs[:8] + wrs[:8]}, view)
    assert out.applied == rbs[:8] + wrs[:4] and out.problems == ["16 players for a queue of 12; the first 12 kept"]
    best = [c["id"] for c in sorted((c for c in board if c["pos"] in view["legal_positions"]),
                                    key=lambda c: (-(c["proj"] or 0), c["id"]))][:12]
    for answer, problem in [({"queue": [qbs[0]]}, f"{qbs[0]} is a QB"), ({"queue": []}, "empty queue"),
                            ({"shortlist": rbs}, "no 'queue' list"), (None, "no 'queue' list")]:
        out = QUEUE.resolve(answer, view)
        assert (out.applied, out.decided_by) == (best, "fallback"), answer
        assert out.problems[0].startswith(problem) and QUEUE.validate(answer, view) == out.problems


# ------------------------------------------------------------------------------------------------ bot drafts
@pytest.fixture(scope="module")
def queue_run(prepared_2024, tmp_path_factory):
    league = league_of()
    out = tmp_path_factory.mktemp("queue") / "run"
    run_engine(league, prepared_2024, out)
    return league, out


def test_a_queue_draft_of_bots_is_complete_legal_and_logged_pick_by_pick(queue_run):
    league, out = queue_run
    run, roster, n = RunDir(out), league.roster, len(league.teams)
    assert run.meta().status == "complete"
    picks = run.table("draft_picks")
    assert list(picks["pick"]) == list(range(1, roster.size * n + 1)) and not picks["player_id"].duplicated().any()
    order = draft_rules.snake(draft_rules.draft_order([t.name for t in league.teams], league.draft.order, league.seed),
                              roster.size)
    assert list(zip(picks["pick"], picks["round"], picks["team"])) == order
    for team, g in picks.groupby("team"):
        assert len(g) == roster.size and within_caps(list(g["position"]), roster) is None
        assert can_field_lineup(list(g["position"]), roster), team
    records = queue_records(out)
    assert {d["decision"] for d in run.decisions() if d["week"] is None} == {"draft_queue"}
    made = [d for d in records if not d.get("queue_dry")]
    assert [(d["pick"], d["team"], d["applied"]) for d in made] == list(zip(picks["pick"], picks["team"],
                                                                             picks["player_id"]))
    reasked = {d["pick"] for d in records if d.get("queue_dry")}
    for d, (_, row) in zip(made, picks.iterrows()):
        assert d["decided_by"] == row["decided_by"] == "agent" and d["queue"][d["queue_position"] - 1] == d["applied"]
        assert list(row["shortlist"]) == d["queue"]  # the draft table's shortlist column holds the queue
        # asked at the round's start: the picks of every earlier round (a re-ask at its turn: every pick before it)
        shown = [(r.pick, r.team, r.player_id, r.position) for r in picks.itertuples() if r.pick < d["pick"] and (
            d["pick"] in reasked or r.round < row["round"])]
        assert [(p["pick"], p["team"], p["id"], p["pos"]) for p in d["view"]["picks_so_far"]] == shown
    assert max(d["queue_position"] for d in made) > 1  # players queued first were taken by earlier teams


def test_a_queue_draft_resumes_byte_identical(queue_run, prepared_2024, tmp_path):
    league, whole = queue_run
    with pytest.raises(SimulatedCrash):
        run_engine(league, prepared_2024, tmp_path / "crashed", crash_after="draft:6")
    run_engine(league, prepared_2024, tmp_path / "crashed", resume=True)
    same_run(whole, tmp_path / "crashed")


def test_draft_views_in_queue_mode_hold_no_future(queue_run, prepared_2024, tmp_path):
    """The firewall's perturbation test on the queue draft: changing every actual stat leaves every view the draft
    showed (board, picks so far) byte-identical."""
    from test_firewall import perturb

    league, out = queue_run
    run_engine(league, perturb(prepared_2024, 1), tmp_path / "perturbed")
    assert [(d["view"], d["raw_answer"]) for d in queue_records(out)] == [
        (d["view"], d["raw_answer"]) for d in queue_records(tmp_path / "perturbed")]


def test_a_dry_queue_is_asked_again_once_at_the_teams_turn(prepared_2024, tmp_path):
    """The second team queues only the player the first team takes: its queue runs dry, it is asked once more with
    the board at its turn, and picks from that queue."""
    league = league_of(strategy="adp", order="fixed", weeks=1)
    first, second = league.teams[0].name, league.teams[1].name
    taken = {}

    def dry_in_round_1(view):
        if view["round"] == 1 and view["picks_before"] == 1:
            return {"queue": [taken["first"]], "rationale": "the one I want"}
        return {"queue": [c["id"] for c in sorted((c for cs in view["available"].values() for c in cs
                                                  if c["pos"] in view["legal_positions"]),
                                                 key=lambda c: (-(c["proj"] or 0), c["id"]))][:5], "rationale": "ok"}

    agent = ScriptedAgent(second, league.seed, {"draft_queue": dry_in_round_1})
    out = tmp_path / "run"
    # the player the first team (an ADP bot) takes first: the best ADP on the opening board
    opening = QUEUE.view(Firewall(prepared_2024, league), _fresh_state(league), first, pick=1, rnd=1, picks_before=0)
    taken["first"] = min((c for cs in opening["available"].values() for c in cs),
                         key=lambda c: (c["adp"] if c["adp"] is not None else 1e9, -(c["proj"] or 0), c["id"]))["id"]
    run_engine(league, prepared_2024, out, agents=agents_with(league, {second: agent}))
    asks = [v for k, v in agent.seen if k == "draft_queue"]
    assert len(asks) == league.roster.size + 1  # one per round, and one re-ask
    again = asks[1]
    assert again["pick"] == 2 and again["picks_before"] == 0
    assert [p["id"] for p in again["picks_so_far"]] == [taken["first"]]
    assert taken["first"] not in {c["id"] for cs in again["available"].values() for c in cs}
    mine = [d for d in queue_records(out) if d["team"] == second]
    dry = [d for d in mine if d.get("queue_dry")]
    assert len(dry) == 1 and dry[0]["pick"] == 2 and dry[0]["applied"] is None and dry[0]["queue"] == [taken["first"]]
    assert dry[0]["reason"] == f"queue ran dry: taken before this pick: {taken['first']} at pick 1"
    assert dry[0]["decided_by"] == "agent" and not is_decision(dry[0])  # a valid queue: not the agent's fault
    first_ask, reask = user_prompt("draft_queue", asks[0]), user_prompt("draft_queue", again)
    assert "Your pick this round is number 2; 1 pick(s) of this round come before yours." in first_ask
    assert "your queue ran dry, so you are on the clock now with pick number 2" in reask
    assert "pick(s) of this round come before yours" not in reask
    pick2 = next(d for d in mine if d["pick"] == 2 and not d.get("queue_dry"))
    assert (pick2["queue_position"], pick2["decided_by"], pick2["view"]) == (1, "agent", again)
    picks = RunDir(out).table("draft_picks")
    assert picks.loc[picks["pick"] == 1, "player_id"].item() == taken["first"]
    assert picks.loc[picks["pick"] == 2, "player_id"].item() == pick2["applied"] == pick2["queue"][0]


def _fresh_state(league):
    teams = [t.name for t in league.teams]
    return LeagueState(teams=teams, agent_ids={t: "x" for t in teams},
                       draft_order=draft_rules.draft_order(teams, league.draft.order, league.seed), schedule={})


def test_an_invalid_queue_is_repaired_by_projection(prepared_2024, tmp_path):
    league = league_of(strategy="adp", weeks=1)
    team = league.teams[3].name
    agent = ScriptedAgent(team, league.seed, {"draft_queue": lambda v: {"queue": ["00-nobody", "QB"]}})
    run_engine(league, prepared_2024, tmp_path / "run", agents=agents_with(league, {team: agent}))
    mine = [d for d in queue_records(tmp_path / "run") if d["team"] == team]
    assert len(mine) == league.roster.size and {d["decided_by"] for d in mine} == {"fallback"}
    for d in mine:  # the pick: the best legal player by projection still available at the team's turn
        assert d["reason"].startswith("00-nobody is not among the available players shown")
        assert d["applied"] in d["queue"]
    picks = RunDir(tmp_path / "run").table("draft_picks")
    mine_rows = picks[picks["team"] == team]
    assert (mine_rows["decided_by"] == "fallback").all() and mine_rows["reason"].notna().all()
    assert (picks.loc[picks["team"] != team, "decided_by"] == "agent").all()


def test_an_invalid_queue_that_runs_dry_counts_as_a_fallback(prepared_2024, tmp_path):
    """A queue of one: the last team of round 1 answers garbage, the repair (the board's best by projection) is taken
    by the projection bots before its turn, and the re-ask is valid. The garbage answer still counts as a fallback
    (for the guard and the metrics), and the dry record says why it ran dry."""
    league = league_of(strategy="recent_form", weeks=1, queue_size=1, order="fixed")
    late = league.teams[-1].name

    def garbage_in_round_1(view):
        if view["round"] == 1 and not view["at_turn"]:
            return {"queue": ["nonsense"]}
        return {"queue": [min((c for cs in view["available"].values() for c in cs
                               if c["pos"] in view["legal_positions"]), key=lambda c: -(c["proj"] or 0))["id"]]}

    agent = ScriptedAgent(late, league.seed, {"draft_queue": garbage_in_round_1})
    run_engine(league, prepared_2024, tmp_path / "run", agents=agents_with(league, {late: agent}))
    mine = [d for d in queue_records(tmp_path / "run") if d["team"] == late]
    # (later rounds' queues of one run dry too)
    dry = [d for d in mine if d.get("queue_dry") and d["pick"] <= len(league.teams)]
    assert len(dry) == 1 and dry[0]["pick"] == len(league.teams) and dry[0]["decided_by"] == "fallback"
    picks = RunDir(tmp_path / "run").table("draft_picks")
    at = picks.loc[picks["player_id"] == dry[0]["queue"][0], "pick"].item()
    assert dry[0]["reason"] == ("nonsense is not among the available players shown; queue ran dry: taken before "
                                f"this pick: {dry[0]['queue'][0]} at pick {at}") and at < len(league.teams)
    assert is_decision(dry[0]) and sum(d["decided_by"] == "fallback" for d in mine if is_decision(d)) == 1
    guard = FallbackGuard(0.5, 100)  # counts, never stops
    for d in mine:
        guard.record({**d, "agent": "llm:x"})
    assert (guard.decisions[late], guard.fallbacks[late]) == (league.roster.size + 1, 1)


def test_a_queued_player_beyond_the_board_is_not_called_unavailable(world, prepared_2024):
    """An LLM may queue a player it knows who is available but not on the board shown: the problem says so truthfully,
    while the shortlist keeps its recorded wording; the prompt asks for players from the tables shown."""
    view = world.queue_view()
    shown = {c["id"] for cs in view["available"].values() for c in cs}
    state, _, _ = world.mid_draft
    beyond = next(p for p in world.fw.available_ids(state) if p not in shown)
    out = QUEUE.resolve({"queue": [beyond]}, view)
    assert out.problems == [f"{beyond} is not among the available players shown"] and out.decided_by == "fallback"
    short = REGISTRY["draft_shortlist"].resolve({"shortlist": [beyond]}, world.draft_view())
    assert short.problems == [f"{beyond} is not an available player"]
    assert "players you would take from the BEST AVAILABLE tables above" in user_prompt("draft_queue", view)


def test_sequential_asks_go_one_at_a_time_in_snake_order(prepared_2024, tmp_path):
    d = league_of(strategy="adp", weeks=1).model_dump(mode="json")
    d["llm"] = {**d["llm"], "sequential": True}
    league = League.model_validate(d)
    order = draft_rules.snake(draft_rules.draft_order([t.name for t in league.teams], league.draft.order,
                                                      league.seed), league.roster.size)
    for sequential in (True, False):
        league = league.model_copy(update={"llm": league.llm.model_copy(update={"sequential": sequential})})
        log, flight = [], {"now": 0, "max": 0}

        class Logged(ScriptedAgent):
            """Yields to the event loop mid-decision, so asks sent at once overlap (bots never await)."""

            async def decide(self, kind, view):
                if kind != "draft_queue":
                    return await super().decide(kind, view)
                log.append((view["round"], self.team))
                flight["now"] += 1
                flight["max"] = max(flight["max"], flight["now"])
                await asyncio.sleep(0)
                flight["now"] -= 1
                return await super().decide(kind, view)

        agents = {t.name: Logged(t.name, league.seed) for t in league.teams}
        run_engine(league, prepared_2024, tmp_path / f"run-{sequential}", agents=agents)
        if sequential:
            assert flight["max"] == 1 and log == [(r, t) for _, r, t in order]
        else:  # a round's queues are asked at once
            assert flight["max"] == len(league.teams) and sorted(log) == sorted((r, t) for _, r, t in order)


# ------------------------------------------------------------------------------------ both modes, same bots
def test_projection_ranked_bots_draft_the_same_players_in_both_modes(prepared_2024, tmp_path):
    """Each team picks once a round, so a bot whose ranking is a fixed order of players that always reaches the
    board's top (``recent_form``: by preseason projection) takes the same player from its round-start queue as
    when asked at its turn. (``adp`` can differ: a player with a good ADP but a low projection may enter the board,
    which shows the best ``show_per_position`` by projection, only after the round started; ``vorp``'s ranking
    depends on the picks made meanwhile.)"""
    picks = {}
    for mode in ("shortlist", "queue"):
        run_engine(league_of(mode, strategy="recent_form", weeks=1), prepared_2024, tmp_path / mode)
        picks[mode] = RunDir(tmp_path / mode).table("draft_picks")[["pick", "team", "player_id"]]
    pd.testing.assert_frame_equal(picks["shortlist"], picks["queue"])


def test_adp_bots_differ_across_modes_only_by_the_round_start_board(prepared_2024, tmp_path):
    """Where an ADP bot's queue pick differs from its shortlist-mode pick, the shortlist-mode player was not on the
    board the queue was named from (he entered it during the round)."""
    rows = {}
    for mode in ("shortlist", "queue"):
        run_engine(league_of(mode, strategy="adp", weeks=1), prepared_2024, tmp_path / mode)
        rows[mode] = RunDir(tmp_path / mode).table("draft_picks")
    diff = rows["shortlist"]["player_id"] != rows["queue"]["player_id"]
    assert diff.any()
    first = int(rows["shortlist"].loc[diff, "pick"].iloc[0])
    player = rows["shortlist"].loc[rows["shortlist"]["pick"] == first, "player_id"].item()
    asked = next(d for d in queue_records(tmp_path / "queue") if d["pick"] == first)
    assert player not in {c["id"] for cs in asked["view"]["available"].values() for c in cs}


# ------------------------------------------------------------------------------------------------ LLM agents
def test_llm_teams_draft_by_queue_through_the_fake_server_masked(prepared_2024, tmp_path):
    """The real litellm path: four models name their queues through the fake server, in a masked league; every
    queue pick is the model's, and no rendered prompt holds a real player or team."""
    d = league_of(weeks=1).model_dump(mode="json")
    with FakeOpenAIServer() as srv:
        for i in range(4):
            d["teams"][i] = {"name": f"M{i}", "agent": {"kind": "llm", "model": f"openai/fake-{i}",
                                                        "api_base": srv.api_base, "timeout_s": 5, "max_tokens": 2000}}
        d["llm"] = {"cache_dir": str(tmp_path / "cache"), "retries": 2, "backoff_s": 0.01}
        d["information"] = {"masking": "players_and_teams"}
        league = League.model_validate(d)
        run_engine(league, prepared_2024, tmp_path / "run")
    run = RunDir(tmp_path / "run")
    assert run.meta().status == "complete"
    calls = [c for c in run.llm_calls() if c["decision"] == "draft_queue"]
    llm = {f"M{i}" for i in range(4)}
    records = [r for r in queue_records(tmp_path / "run") if r["team"] in llm]
    assert len(calls) == len(records) == 4 * league.roster.size + sum(bool(r.get("queue_dry")) for r in records)
    assert {r["decided_by"] for r in records} == {"agent"} and all(c["problems"] is None for c in calls)
    real_ids = set(prepared_2024.players["player_id"])
    assert all(r["applied"] in real_ids for r in records if not r.get("queue_dry"))  # answers mapped back
    text = "\n".join(m["content"] for c in calls for m in c["messages"])
    assert "PICKS SO FAR" in text and "QUEUE SIZE: 12" in text
    players, teams = real_strings(prepared_2024, "players_and_teams")
    assert [s for s in players if s in text] == []
    assert words(text, teams | TEAM_WORDS) == set() and len(teams) >= 32  # no NFL team code or name either
    rounds = league.roster.size
    last = next(c for c in calls if f"Round {rounds} of {rounds}" in c["messages"][-1]["content"])
    shown = last["messages"][-1]["content"].split("PICKS SO FAR\n")[1].split("\n\n")[0].splitlines()
    assert len(shown) >= 1 + (rounds - 1) * len(league.teams)  # the header and every pick of the rounds before
    assert all(PSEUDONYM.fullmatch(p) for c in calls for p in c["parsed"]["queue"])  # models answer in pseudonyms


def test_a_long_picks_table_is_shortened_first_to_fit_a_small_context(world):
    view = {**world.queue_view(), "picks_so_far": [{"pick": i, "round": 1, "team": "x", "id": f"00-{i:07d}",
                                                    "name": "n", "pos": "RB"} for i in range(1, 31)]}
    assert fit.levels(view) == 1 + 3  # the picks so far, then the board in three steps
    short, notes = fit.shorten(view, 1)
    assert [p["pick"] for p in short["picks_so_far"]] == list(range(21, 31)) and short["available"] == view["available"]
    assert notes == ["only the last 10 picks so far are shown"]


def test_the_critical_path_is_the_longest_chain_of_requests_one_after_another():
    # three rounds of four concurrent calls (0.2 s), then one call alone: 4 calls had to wait for each other
    spans = [(r * 0.3 + i * 0.01, r * 0.3 + 0.2 + i * 0.01, "draft_queue") for r in range(3) for i in range(4)]
    spans.append((1.0, 1.2, "set_lineup"))
    chain = critical_path(spans)
    assert len(chain) == 4 and all(a[1] <= b[0] for a, b in zip(chain, chain[1:]))
    assert len(critical_path([(i * 0.2, i * 0.2 + 0.2, "x") for i in range(5)])) == 5  # strictly sequential
