"""The conformance kit (:mod:`ffbench_lib.testing.conformance`): every registered decision kind is complete, an
incomplete one is told each missing piece and its file, and every view two short real seasons log matches its
kind's ``view_schema`` (a key removed or added does not)."""
from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

import pytest
from pydantic import with_config
from typing_extensions import TypedDict

from ffbench_lib.agents.bots import BOTS, RandomBot
from ffbench_lib.config.load import parse_config
from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.game.decisions.base import Decision, Outcome, register
from ffbench_lib.game.decisions._view_parts import VIEW
from ffbench_lib.game.masking import Masker
from ffbench_lib.game.views import Firewall
from ffbench_lib.runs.rundir import RunDir
from ffbench_lib.testing.conformance import check_kind, inspect_kind, view_problems

from engine_helpers import demo_league, run_engine

#: short seasons of random bots that between them ask every kind: (A) IR slots, FAAB waivers, trades and a playoff
#: bracket with a first-round bye and a two-week final; (B) a queue draft in a masked league
SEASONS = {
    "ir_waivers_trades_playoffs": dict(seed=6, weeks=7, trades={"weeks": [2, 4]}, roster={"IR": 2},
                                       waivers={"enabled": True, "mode": "faab", "budget": 100, "max_claims": 3},
                                       playoffs={"enabled": True, "teams": 3, "round_weeks": [1, 2]}),
    "masked_queue": dict(seed=3, weeks=1, trades={"weeks": []}, draft={"mode": "queue", "queue_size": 2},
                         information={"masking": "players_and_teams"}),
}
#: logged views per kind given to check_kind (each runs every bot and the fake server on it: a sample is enough)
SAMPLE = 4


def season_league(changes: dict[str, Any]):
    cfg = demo_league().model_dump(mode="json")
    for key, value in changes.items():
        cfg[key] = {**cfg.get(key, {}), **value} if isinstance(value, dict) else value
    for team in cfg["teams"]:
        team["agent"] = {"kind": "bot", "strategy": "random"}
    return parse_config(cfg, "conformance season")


@pytest.fixture(scope="module")
def seasons(prepared_2024, tmp_path_factory):
    """name -> (logged decisions, the run's masker in a masked league, else None), each season played once."""
    out = {}
    for name, changes in SEASONS.items():
        folder, league = tmp_path_factory.mktemp(name) / "run", season_league(changes)
        run_engine(league, prepared_2024, folder)
        masked = league.information.masking != "off"
        out[name] = (RunDir(folder).decisions(), Masker(Firewall(prepared_2024, league), league) if masked else None)
    return out


# ---------------------------------------------------------------------------------------- the registry
@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_registered_kind_is_complete(kind):
    assert check_kind(kind) == []


@pytest.fixture
def half_kind():
    """A kind registered with a module and nothing else (no template, policies, fake answer, table, schema),
    removed from the registry afterwards."""

    class ScoutReport(Decision):
        kind = "scout_report"
        tables = ("scout_reports",)

        @classmethod
        def view(cls, fw, state, team, **where):
            return {"team": team}

        @classmethod
        def resolve(cls, answer, view):
            return Outcome(None, "agent")

    register(ScoutReport)
    try:
        yield ScoutReport
    finally:
        del REGISTRY["scout_report"]


def test_an_incomplete_kind_is_told_every_missing_piece_and_its_file(half_kind):
    report = inspect_kind("scout_report")
    by_file = defaultdict(list)
    for problem in report.problems:
        for where in ("tests/test_conformance.py", "prompts/v2/scout_report.txt", "agents/bots.py",
                      "testing/fake_openai.py", "records/tables.py"):
            if where in problem:
                by_file[where].append(problem)
    assert len(report.problems) == 1 + 1 + len(BOTS) + 1 + 1 + 1, report.problems
    assert sorted(map(len, by_file.values())) == [1, 1, 1, 2, len(BOTS)], report.problems
    assert any("does not define prompt_fields()" in p for p in by_file["tests/test_conformance.py"])
    assert any("has no view schema" in p for p in by_file["tests/test_conformance.py"])
    assert {p.split("'")[1] for p in by_file["agents/bots.py"]} == set(BOTS)
    assert "'scout_reports'" in by_file["records/tables.py"][0]
    # the frozen legacy prompt version and the desk's generic form are notes, not problems
    assert any("prompts/v1/scout_report.txt" in n for n in report.notes)
    assert any("GenericForm" in n for n in report.notes)
    assert check_kind("scout_report") == report.problems
    assert "not a registered decision kind" in check_kind("no_such_kind")[0]


def test_a_schema_that_lets_unknown_keys_through_is_a_problem(half_kind):
    class Lenient(TypedDict):
        team: str

    @with_config(VIEW)
    class Strict(TypedDict):
        team: str

    half_kind.view_schema = Lenient
    assert any("lets unknown keys through (Lenient)" in p for p in check_kind("scout_report"))
    half_kind.view_schema = Strict
    assert not any("schema" in p for p in check_kind("scout_report"))
    assert view_problems("scout_report", {"team": "A"}) == []
    assert view_problems("scout_report", {"team": "A", "extra": 1}) == ["view.extra: Extra inputs are not permitted"]


# ------------------------------------------------------------------------------------------ real views
def test_every_logged_view_matches_its_kind_schema(seasons):
    assert seasons["masked_queue"][1] is not None and seasons["ir_waivers_trades_playoffs"][1] is None
    seen = defaultdict(int)
    for name, (decisions, masker) in seasons.items():
        for d in decisions:
            kind, view = d["decision"], d["view"]
            seen[kind] += 1
            assert view_problems(kind, view) == [], (name, kind, d["week"], d["team"])
            if masker is not None:  # the agent's-eye view of a masked league has the same shape
                assert view_problems(kind, masker.view(view)) == [], (name, kind, "masked")
    assert set(seen) == set(REGISTRY), f"kinds no season asked: {sorted(set(REGISTRY) - set(seen))}"
    lineups = [d["view"] for d in seasons["ir_waivers_trades_playoffs"][0] if d["decision"] == "set_lineup"]
    statuses = {v["playoff"]["status"] for v in lineups if "playoff" in v}
    assert {"playing", "bye"} <= statuses and any("round_points_so_far" in v.get("playoff", {}) for v in lineups)


def test_check_kind_passes_on_real_views_of_every_kind(seasons):
    """With views: their prompts render, the fake server answers them in the kind's answer shape, every bot
    answers them legally."""
    views = defaultdict(list)
    for decisions, _ in seasons.values():
        for d in decisions:
            if len(views[d["decision"]]) < SAMPLE:
                views[d["decision"]].append(d["view"])
    for kind in sorted(REGISTRY):
        assert check_kind(kind, views[kind]) == [], kind


def test_check_kind_names_a_bot_that_answers_a_real_view_illegally(seasons):
    """A strategy registered for the test (then removed) whose lineups leave every slot empty."""

    class Careless(RandomBot):
        strategy = "careless"

        async def set_lineup(self, view):
            return {"lineup": {}, "rationale": "forgot"}

    views = [d["view"] for d in seasons["masked_queue"][0] if d["decision"] == "set_lineup"][:1]
    BOTS["careless"] = Careless
    try:
        problems = check_kind("set_lineup", views)
    finally:
        del BOTS["careless"]
    assert len(problems) == 1 and problems[0].startswith("bot strategy 'careless' answers a set_lineup view "
                                                         "illegally (QB: 1 slot(s) left empty"), problems
    assert check_kind("set_lineup", views) == []


def test_a_view_with_a_key_removed_or_added_fails(seasons):
    decisions, _ = seasons["ir_waivers_trades_playoffs"]
    lineup = next(d["view"] for d in decisions if d["decision"] == "set_lineup" and "ir" in d["view"])
    offer = next(d["view"] for d in decisions if d["decision"] == "respond_to_offer")

    def without(view, *path):
        view = copy.deepcopy(view)
        *parents, key = path
        target = view
        for p in parents:
            target = target[p]
        del target[key]
        return view

    assert view_problems("set_lineup", without(lineup, "record")) == ["view.record: Field required"]
    assert view_problems("set_lineup", without(lineup, "players", 0, "proj_week")) == \
        ["view.players.0.proj_week: Field required"]
    assert view_problems("set_lineup", without(lineup, "rules", "bench")) == ["view.rules.bench: Field required"]
    assert view_problems("respond_to_offer", without(offer, "offer", "you_get")) == \
        ["view.offer.you_get: Field required"]
    assert view_problems("set_lineup", {**lineup, "actual_points": 12.5}) == \
        ["view.actual_points: Extra inputs are not permitted"]
    assert view_problems("set_lineup", {**lineup, "week": "3"}) == ["view.week: Input should be a valid integer"]
    # a view of one kind is not another's: the decision names the view
    assert view_problems("ir_moves", lineup)
