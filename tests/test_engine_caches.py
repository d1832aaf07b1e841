"""The engine's caches and fast paths give exactly what the plain computation gives (issue #27, part 4)."""
import json
import random

import numpy as np
import pytest

from ffbench_lib.config.league import Roster
from ffbench_lib.game.decisions import roster_from_rules
from ffbench_lib.game.state import LeagueState
from ffbench_lib.game.views import Firewall
from ffbench_lib.sport.lineup import LineupValuer, best_lineup, lineup_value

from engine_helpers import demo_league

ROSTERS = {
    "demo": Roster(),
    "superflex": Roster(SUPERFLEX=1),
    "two_qb_no_flex": Roster(QB=2, RB=2, WR=2, TE=1, FLEX=0, caps={"QB": 4}),
    "kickers_defenses": Roster(QB=1, RB=2, WR=2, TE=1, K=1, DST=1, FLEX=2),
}


@pytest.mark.parametrize("name", sorted(ROSTERS))
def test_lineup_valuer_is_best_lineup_to_the_float(name):
    """Same value (repr: the same float, not a close one) and the same starters as best_lineup + lineup_value,
    ties, zeros and empty slots included."""
    roster = ROSTERS[name]
    counts, allowed = roster.slot_counts(), roster.slot_positions()
    valuer, rng = LineupValuer(counts, allowed), random.Random(27)
    for _ in range(3000):
        ids = list(dict.fromkeys(f"p{rng.randint(0, 40):02d}" for _ in range(rng.randint(0, 18))))
        pos = {p: rng.choice(roster.positions) for p in ids}
        val = {p: rng.choice([0.0, 1.5, 3.25, round(rng.uniform(0, 25), 2)]) for p in ids}
        lineup = best_lineup(pos, val, counts, allowed)
        value, starters = valuer.lineup(sorted((-val[p], p, pos[p]) for p in ids))
        assert repr(value) == repr(lineup_value(lineup, val))
        assert starters == {p for slot in lineup.values() for p in slot if p}


def test_roster_from_rules_is_cached_per_rules_and_follows_a_change():
    rules = {"roster_slots": {"QB": 1, "RB": 2, "WR": 2, "TE": 1, "FLEX": 1}, "bench": 5,
             "flex_positions": ["RB", "WR", "TE"], "caps": {"QB": 3}}
    a = roster_from_rules(rules)
    assert roster_from_rules({**rules}) is a  # equal rules: the same (immutable) roster
    wider = roster_from_rules({**rules, "roster_slots": {**rules["roster_slots"], "FLEX": 2}})
    assert wider.FLEX == 2 and a.FLEX == 1


def test_player_week_cache_is_a_fresh_build_and_refuses_changes(prepared_2024):
    """A cached card equals one built by a new firewall; a view's shared parts (cards, their lists, the rules)
    refuse any change loudly, so no view can change another's, and a copy of one is plain and mutable."""
    import copy
    import pickle

    league = demo_league()
    fw, fresh = Firewall(prepared_2024, league), Firewall(prepared_2024, league)
    pid = next(iter(sorted(fw.week(5).known_players() & fw.catalog.preseason_ids)))
    card = fw.player_week(pid, 5)
    assert card == fresh.player_week(pid, 5) and fw.player_week(pid, 5) is card
    rules = fw.rules()
    for change in (lambda: card["recent"].append([99, 99.0]), lambda: card["zero_flags"].extend(["x"]),
                   lambda: card.__setitem__("proj_week", -1), lambda: card.update(proj_week=-1),
                   lambda: card.pop("id"), lambda: card["recent"].sort(), lambda: rules["roster_slots"].clear(),
                   lambda: rules.__setitem__("bench", 9), lambda: fw.player_card(pid).setdefault("new", 1)):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert card == fresh.player_week(pid, 5) and rules == fresh.rules()
    for plain in (copy.deepcopy(card), pickle.loads(pickle.dumps(card))):
        plain["recent"].append([99, 99.0])
        assert type(plain) is dict and type(plain["recent"]) is list and plain != card
    mine = dict(card)
    mine["proj_week"] = -1
    assert card["proj_week"] != -1


def test_views_follow_roster_changes(prepared_2024):
    """Cards are cached per player and week, never per roster: a trade shows at once in the next view."""
    league = demo_league()
    fw = Firewall(prepared_2024, league)
    teams = [t.name for t in league.teams]
    state = LeagueState(teams=teams, agent_ids={t: "test" for t in teams}, draft_order=list(teams),
                        schedule={})
    a, b = state.teams[:2]
    pool = list(fw.catalog.pool_ids)
    state.rosters[a], state.rosters[b] = pool[:3], pool[3:6]
    before = [c["id"] for c in fw.lineup_view(state, a, 3)["players"]]
    state.rosters[a], state.rosters[b] = [pool[0], pool[1], pool[3]], [pool[2], pool[4], pool[5]]
    after = [c["id"] for c in fw.lineup_view(state, a, 3)["players"]]
    assert before == sorted(pool[:3]) and after == sorted([pool[0], pool[1], pool[3]])


ODD_VALUES = [None, True, 0, -1.5, 1e-05, 2.5e16, "", "a, b: c", "quote \" inside", "back\\slash", "naïve — ünï",
              "tab\tnew\nline", {"k, ey": [1, 2, {"x": ":"}]}, [], {}, [[]], {"": None}]


ODD_LEAVES = [float("nan"), float("inf"), -float("inf"), 1e300, -0.0, 10**30, False, ("tu", "ple"), {3: "int key"},
              {1.5: "float key", 2: 1}, {None: 0}, {True: 1, 2: 0}, frozenset({1}), object, np.float64(2.5), np.int64(7), np.float32(0.1), "\u2028 \x00 \U0001f600"]


def test_views_and_decision_lines_with_shared_parts_are_json_dumps():
    """canonical_json and the decision line, built around the kept encodings of read-only parts, are byte for byte
    json.dumps of the same values, whatever they hold (separators and quotes inside strings, non-ASCII, NaN and
    infinities, exponents, int/float/None keys, tuples, default=str), frozen at any depth or not, encoded again."""
    from ffbench_lib.game.frozen import encode_both, freeze
    from ffbench_lib.game.views import canonical_json, spaced_json
    from ffbench_lib.runs.rundir import _line

    rng = random.Random(27)
    for i in range(400):
        def value(depth=0):
            v = rng.choice(ODD_VALUES + ODD_LEAVES)
            if depth < 2 and rng.random() < 0.4:
                v = {f"c{j}": value(depth + 1) for j in range(rng.randint(0, 3))}
            return freeze(v) if rng.random() < 0.5 else v
        view = {f"k{j}": value() for j in range(rng.randint(0, 6))}
        view["cards"] = [freeze({"id": f"p{j}", "pts": [rng.random() * 30, None], "note": value()})
                         for j in range(rng.randint(0, 4))]
        record = {"run_id": "r", "view": view, "view_hash": "h", "raw_answer": value(), "zeta": i,
                  "applied": {"a": [1, "x, y"]}, "week": None}
        plain_spaced = json.dumps(view, sort_keys=True, ensure_ascii=False, default=str)
        if i % 2:  # both encodings at once of parts never encoded (the others: of parts encoded compact only)
            assert encode_both(view)[1] == plain_spaced
        for _ in range(2):  # the second time from the kept encodings
            text = canonical_json(view)
            assert text == json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
            assert _line(record) == json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
            pair = encode_both(view)  # the recorder's: hashed compact, logged spaced
            assert pair == (text, plain_spaced)
            assert _line(record, pair) == _line(record)
        spaced = spaced_json(text)
        assert spaced is None or spaced == json.dumps(view, sort_keys=True, ensure_ascii=False, default=str)


def test_secret_values_follow_the_environment_and_the_registry(monkeypatch):
    """The kept secret values are never stale: a set, changed or removed variable, or a registered value, is
    masked (or no longer) on the very next call."""
    from ffbench_lib.core import secrets

    key_a, key_b, extra = "sk-" + "a1" * 12, "sk-" + "b2" * 12, "registered-" + "c3" * 8
    monkeypatch.delenv("FFB27_TEST_API_KEY", raising=False)
    assert key_a not in secrets.secret_values()
    monkeypatch.setenv("FFB27_TEST_API_KEY", key_a)
    assert secrets.scrub(f"x {key_a} y") == "x *** y"
    monkeypatch.setenv("FFB27_TEST_API_KEY", key_b)
    assert secrets.scrub(f"{key_a} {key_b}") == f"{key_a} ***"
    monkeypatch.delenv("FFB27_TEST_API_KEY")
    assert secrets.scrub(key_b) == key_b
    try:
        secrets.register(extra)
        assert secrets.scrub(extra) == "***"
    finally:
        secrets._REGISTERED.discard(extra)
    assert secrets.scrub(extra) == extra


def test_checkpoint_text_with_kept_row_encodings_is_json_dumps(prepared_2024, tmp_path):
    """A played season's checkpoint, built from the rows' kept encodings, is json.dumps of the state after every
    checkpoint (rows added, a table replaced or reordered, a plain row put in), and after a round trip; rows are
    read-only once added."""
    import asyncio

    from ffbench_lib.game.state import _plain
    from ffbench_lib.runs.runner import Engine

    league = demo_league(weeks=3)
    state = asyncio.run(Engine(league, prepared_2024, tmp_path / "run", progress=False).run())

    def plain(s):
        return json.dumps(s.to_dict(), separators=(",", ":"), ensure_ascii=False, default=_plain)

    assert state.to_json() == plain(state)
    with pytest.raises(TypeError, match="read-only"):
        state.tables["lineups"][0]["points"] = 99.0
    state.add_rows("lineups", [{**state.tables["lineups"][0], "points": 1.5, "slot": "naïve \"QB\""}])
    state.tables["bench"] = list(reversed(state.tables["bench"]))
    state.tables["rosters"].insert(1, {"week": 1, "team": "x", "agent": "y", "player_id": "p", "position": np.str_("QB")})
    state.tables["rosters"].pop()
    for _ in range(2):
        assert state.to_json() == plain(state)
    again = LeagueState.from_json(state.to_json())
    assert again.to_json() == state.to_json() == plain(again)
    with pytest.raises(TypeError, match="read-only"):
        again.tables["draft_picks"][0]["shortlist"].append("p")


def test_lazy_recent_games_are_the_eager_ones(prepared_2024):
    """Knowledge.recent, each player's list made when first read, is the dict the row-by-row loop builds: the same
    players in the same order, the same [week, points] lists, for every week."""
    import pandas as pd

    from ffbench_lib.game.knowledge import RECENT_GAMES

    fw = Firewall(prepared_2024, demo_league())
    for w in range(1, 19):
        played = fw._feed._played_before(w)
        weeks = played["week"]  # the feed's columns as numpy arrays, players as codes of the season's sorted ids
        pids = np.asarray(fw._feed._ids, dtype=object)[played["code"]]
        codes, _ = pd.factorize(pids, sort=True)
        order = np.lexsort((weeks, codes))
        ends = np.searchsorted(codes[order], codes[order], side="right")
        last = order[(ends - np.arange(len(order))) <= RECENT_GAMES]
        eager: dict = {}
        for pid, wk, pts in zip(pids[last].tolist(), weeks[last].tolist(),
                                played["fantasy_points"][last].tolist()):
            eager.setdefault(pid, []).append([int(wk), round(float(pts), 2)])
        lazy = fw.week(w).recent
        assert list(lazy) == list(eager) and len(lazy) == len(eager) and "nobody" not in lazy
        assert all(repr(lazy[p]) == repr(v) and lazy.get(p) is lazy[p] for p, v in eager.items())
        assert lazy.get("nobody", []) == []


def test_tables_written_again_only_when_their_rows_change(tmp_path, monkeypatch):
    """write_tables skips a table it already wrote from the very same rows; a new, replaced or plain row, another
    credential to mask, or a removed file is written again, and a file always holds its table."""
    import pandas as pd

    from ffbench_lib.runs.rundir import RunDir

    teams = ["a", "b"]
    state = LeagueState(teams=teams, agent_ids={t: "x" for t in teams}, draft_order=teams, schedule={})
    rd = RunDir(tmp_path)
    row = {"week": 1, "team": "a", "agent": "x", "player_id": "p1", "position": "QB"}
    state.add_rows("rosters", [row])
    rd.write_tables(state)
    path = rd.file("rosters.parquet")

    def rewritten(change) -> bool:
        before = path.stat().st_mtime_ns, path.stat().st_ino
        change()
        rd.write_tables(state)
        assert pd.read_parquet(path).to_dict("records") == [dict(r) for r in state.tables["rosters"]]
        return (path.stat().st_mtime_ns, path.stat().st_ino) != before

    assert not rewritten(lambda: None)
    assert rewritten(lambda: state.add_rows("rosters", [{**row, "player_id": "p2"}]))
    assert not rewritten(lambda: None)
    assert rewritten(lambda: state.tables["rosters"].__setitem__(0, {**row, "player_id": "p3"}))  # a plain row
    assert rewritten(lambda: None)  # not read-only: never trusted to be unchanged
    state.tables["rosters"][0] = state.tables["rosters"][1]
    assert rewritten(lambda: None) and not rewritten(lambda: None)
    assert rewritten(lambda: path.unlink())
    assert rewritten(lambda: monkeypatch.setenv("FFBENCH_TEST_API_KEY", "a-new-secret-value-of-issue-27"))


def test_draft_supply_counts_the_available_pool_at_every_pick(prepared_2024):
    """Firewall.supply (the pool's counts less the taken) is the available players counted per position, pick
    after pick of a random draft, and the legal positions built on it are those of the plain count."""
    from collections import Counter

    from ffbench_lib.game.decisions.draft_shortlist import legal_now
    from ffbench_lib.game.rules.draft import legal_positions, others_need

    league = demo_league()
    fw, rng = Firewall(prepared_2024, league), random.Random(27)
    teams = [t.name for t in league.teams]
    state = LeagueState(teams=teams, agent_ids={t: "test" for t in teams}, draft_order=list(teams), schedule={})
    for i in range(len(teams) * league.roster.size):
        team = teams[i % len(teams)]
        avail = fw.available_ids(state)
        counted = Counter(fw.position[p] for p in avail)
        assert {pos: n for pos, n in fw.supply(state).items() if n} == dict(counted)
        legal = legal_now(fw, state, team)
        need = others_need(team, state.rosters, fw.position, league.roster)
        assert legal == legal_positions([fw.position[p] for p in state.rosters[team]], league.roster, counted, need)
        state.rosters[team].append(rng.choice([p for p in avail if fw.position[p] in legal][:60]))


def test_catalog_rows_and_cards_are_the_frame_records(prepared_2024):
    """The catalog's column lists give each player the row to_dict("records") gives (same keys, values and types,
    missing values None) and the card built from it, for every player of the season."""
    import math

    from ffbench_lib.game.knowledge import PRESEASON_COLUMNS, PlayerCatalog

    cat = PlayerCatalog(prepared_2024)
    players = prepared_2024.players[list(PRESEASON_COLUMNS)]
    records = {r["player_id"]: r for r in players.to_dict("records")}
    assert set(cat._at) <= set(records) and len(cat._at) > 100

    def same(a, b):
        return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))

    for pid in cat._at:
        row, want = cat.row(pid), records[pid]
        assert list(row) == list(want) and all(same(row[k], want[k]) for k in want), pid
        card = cat.card(pid)
        assert card == PlayerCatalog._make_card(want) and cat.card(pid) is not card  # a fresh card each time
    frame = players.set_index("player_id", drop=False).loc[list(cat._at)]  # the catalog's rows, in its order
    for got, want in ((cat.position, frame["position"].to_dict()), (cat.name, frame["player_name"].to_dict()),
                      (cat.preseason_proj, frame["proj_points"].fillna(0.0).to_dict()),
                      (cat.adp, frame["adp"].to_dict()), (cat.team, frame["team"].dropna().to_dict())):
        assert repr(got) == repr(want)  # the same keys, order, values and types (nan as nan)


def test_mean_points_is_np_mean_to_the_float():
    """last3_avg's mean is np.mean's float (repr, the sign of a zero too) for the few games a card shows."""
    from ffbench_lib.game.knowledge import mean_points

    rng = random.Random(27)
    cases = [[-0.0], [-0.0, -0.0, -0.0], [0.0, -0.0], [0.1, 0.2, 0.3], [1e16, 1.0, -1e16], [0.1] * 7, [0.1] * 9]
    cases += [[round(rng.choice([rng.uniform(-5, 45), -0.0, 0.0]), 2) for _ in range(rng.randint(1, 3))]
              for _ in range(20000)]
    for c in cases:
        assert repr(mean_points([[1, v] for v in c])) == repr(float(np.mean(c))), c


def test_knowledge_from_a_frame_is_the_knowledge_from_the_feeds_arrays(prepared_2024):
    """from_rows takes the played rows as a frame (arrow strings, as the prepared tables hold them) or as the
    feed's numpy columns (players as codes of the season's sorted ids, points rounded once): the same knowledge
    either way, for every week."""
    import pandas as pd

    from ffbench_lib.game.knowledge import Knowledge

    fw = Firewall(prepared_2024, demo_league())
    ids = np.asarray(fw._feed._ids, dtype=object)
    for w in range(1, 19):
        arrays = fw._feed._played_before(w)
        frame = pd.DataFrame({"player_id": pd.array(ids[arrays["code"]].tolist(), dtype="str"),
                              "week": arrays["week"], "team": pd.array(arrays["team"].tolist(), dtype="str"),
                              "fantasy_points": arrays["fantasy_points"]})
        a = Knowledge.from_rows(fw.catalog, arrays, fw._feed._published(w), fw._feed._ids)
        b = Knowledge.from_rows(fw.catalog, frame, fw._feed._published(w))
        assert a.known == b.known
        for f in ("games", "points", "team", "projection", "status", "opponent"):  # repr: orders and types too
            assert repr(getattr(a, f)) == repr(getattr(b, f)), f
        assert repr({p: a.recent[p] for p in a.recent}) == repr({p: b.recent[p] for p in b.recent})


def test_positional_strength_kept_per_week_and_rosters_is_a_fresh_computation(prepared_2024):
    """The kept strengths (and league average) are what a new firewall computes, follow a roster change or another
    week at once, and are read-only (shared by every trade view of a window)."""
    league = demo_league()
    fw = Firewall(prepared_2024, league)
    teams = [t.name for t in league.teams]
    state = LeagueState(teams=teams, agent_ids={t: "test" for t in teams}, draft_order=list(teams), schedule={})
    pool = list(fw.catalog.pool_ids)
    for i, t in enumerate(teams):
        state.rosters[t] = pool[i * 12:(i + 1) * 12]

    def fresh(w):
        return Firewall(prepared_2024, league)._strengths(state, w)

    kept = fw._strengths(state, 4)
    assert kept == fresh(4) and fw._strengths(state, 4)[0] is kept[0]
    with pytest.raises(TypeError):
        kept[0][teams[0]]["QB"] = 0.0
    a, b = teams[:2]
    state.rosters[a], state.rosters[b] = state.rosters[b], state.rosters[a]  # a trade: new strengths
    assert fw._strengths(state, 4) == fresh(4) and fw._strengths(state, 4)[0][a] == kept[0][b]
    assert fw._strengths(state, 5) == fresh(5)
    view = fw.trade_view(state, a, 5)
    assert view["my_strength"] == fresh(5)[0][a] and view["league_avg_strength"] == fresh(5)[1]


def test_upgrade_swaps_prefilter_gives_every_plain_swap():
    """Free agents who beat no droppable player by the margin are skipped before pairs are enumerated: the swaps
    are those of every legal pair filtered afterwards (the plain rule), on random rosters (full or with an open
    spot), pools and values (ties, zeros, missing projections) for both bot valuations."""
    from ffbench_lib.agents import bots
    from ffbench_lib.game.decisions.waiver_claims import legal_swaps

    roster = Roster()
    rules = {"roster_slots": roster.slot_counts(), "bench": roster.BENCH, "flex_positions": list(roster.flex_positions),
             "caps": dict(roster.caps), "weeks": 17}
    rng = random.Random(6)

    def card(i):
        return {"id": f"p{i:03d}", "pos": rng.choice(roster.positions), "zero_flags": rng.choice([[], [], ["bye"]]),
                "proj_week": rng.choice([None, 0.0, 4.5, round(rng.uniform(0, 25), 2)]),
                "std_ppg": rng.choice([None, 4.5, round(rng.uniform(0, 25), 2)]),
                "last3_avg": rng.choice([None, round(rng.uniform(0, 25), 2)])}

    def plain(view, how, margin):  # every legal pair, filtered afterwards
        mine, free = view["my_roster"], bots._free_cards(view)
        value = {c["id"]: bots._ros_per_game(c, how) for c in mine + free}
        positions = {c["id"]: c["pos"] for c in mine + free}
        starters = {p for ids in bots.best_lineup({c["id"]: c["pos"] for c in mine}, value, roster).values()
                    for p in ids}
        return sorted(((value[a] - value.get(d, 0.0), a, d) for a, d in legal_swaps(
            [c["id"] for c in mine], positions, [c["id"] for c in free], roster)
            if d not in starters and value[a] - value.get(d, 0.0) >= margin), key=lambda x: (-x[0], x[1], x[2] or ""))

    found = 0
    for _ in range(300):
        cards = [card(i) for i in range(60)]
        n = rng.randint(roster.size - 2, roster.size)
        view = {"my_roster": cards[:n], "free_agents": {"all": cards[n:]}, "rules": rules}
        for how in ("proj", "recent"):
            margin = rng.choice([0.0, 1.0, 3.0])
            want = plain(view, how, margin)
            assert bots.upgrade_swaps(view, how, margin) == want
            found += len(want)
    assert found > 100  # the random cases do hold swaps


def test_run_dir_keeps_its_logs_open_only_while_locked(tmp_path):
    """Inside exclusive() a log stays open between lines (and is closed when the block ends, or before a rewind);
    outside it every line opens the file: the same bytes and lengths either way."""
    from ffbench_lib.runs.rundir import RunDir

    rd = RunDir(tmp_path)
    lengths = [rd.append("llm_calls.jsonl", {"n": 0})]
    with rd.exclusive():
        lengths += [rd.append("llm_calls.jsonl", {"n": i}) for i in (1, 2)]
        assert set(rd.__dict__["_open_logs"]) == {"llm_calls.jsonl"}
        rd.rewind_logs({"llm_calls.jsonl": lengths[1]})
        assert not rd.__dict__["_open_logs"]
        lengths.append(rd.append("llm_calls.jsonl", {"n": 3}))
        kept = rd.__dict__["_open_logs"]["llm_calls.jsonl"]
    assert kept.closed and "_open_logs" not in rd.__dict__
    lengths.append(rd.append("llm_calls.jsonl", {"n": 4}))
    text = rd.file("llm_calls.jsonl").read_text()
    assert [json.loads(x)["n"] for x in text.splitlines()] == [0, 1, 3, 4]
    assert lengths[-1] == len(text.encode()) and lengths[2] - lengths[1] == lengths[3] - lengths[1]
