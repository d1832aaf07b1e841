"""The masking audit (``ffbench masking audit RUN``): how many real players of the season each card a masked run's
prompts showed could be, measured from the prompts actually sent (``llm_calls.jsonl``).

Every player table of every prompt (:func:`ffbench_lib.game.protect.parse_tables`) is read back row by row; a row
is checked against every real player of the season's table of that moment: the draft pool's preseason cards (and
shortlist details) for the draft kinds, the cards of the players known before the week for the week kinds. A
candidate fits when each shown cell fits his value (equal as written, inside a range, ``-`` for none); position,
byes, numbers, injury and flags count, pseudonyms (id, name, NFL team, opponent) do not. A card's ``k`` is how many
real players fit it; ``k = 1`` is a card that names its player. Per decision kind: distinct cards, the share with
``k = 1``, the smallest and median ``k``, the same over the season's 50 best-ADP players, and (``team_known``) the
same for an adversary who also identified every NFL team pseudonym (a team's cards in one prompt can be enough, and
schedules and byes allow it within weeks; see docs/memory.md; protected numbers show no team, so there it is the
card's own ``k``). ``linked``: per player pseudonym, the real players who fit every card of his in every prompt of
the run (an adversary who reads the whole run and intersects), the same statistics over the players.

The verdict covers every decision kind, the ``team_known`` adversary and the linked cards (``protected_per_card``,
``protected_team_known``, ``protected_linked``), and names what the audit does not measure (``unmeasured``, from
:data:`UNMEASURED`), so it is an upper bound on the protection. The result goes to the run's ``masking_audit.json``
(written atomically; a file a later fresh start of the run replaces, never one that makes a finished run look
edited). A run still being played, a damaged run directory, data other than the run's (its ``data_fingerprint``), a
card no real player fits and a card its own player (``masking.json``) does not fit are refused
(:class:`RunDirError`, naming the file).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ffbench_lib.config.league import League
from ffbench_lib.core.atomic import write_json
from ffbench_lib.game.protect import K, WITHHELD_TEXT, columns, consistent, parse_tables
from ffbench_lib.game.views import Firewall
from ffbench_lib.records.run import RunMeta
from ffbench_lib.runs.rundir import RunDirError, exclusive

AUDIT = "masking_audit.json"
DRAFT_KINDS = ("draft_shortlist", "draft_pick", "draft_queue")
TOP = 50  # the best-ADP players the audit reports apart: the ones a model is likeliest to remember
#: what the audit does not measure (``unmeasured`` in its result): each is a way to narrow a card further
UNMEASURED = {
    "team_identification": "team identification from a prompt's cards (a team pseudonym's cards in one prompt can "
                           "match one real team's players only; team_known assumes the teams identified, it does "
                           "not test how; protected numbers show no team)",
    "season_year": "the withheld year read off the bye classes (they differ from season to season)",
    "positional_strengths": "the league's average positional strengths (rounded to 5 points; each team's own are "
                            "computed from its protected cards)",
    "seed": "pseudonyms rebuilt from the run's seed (they are keyed by it, so that a season replays exactly: a "
            "protection against what a model remembers, not against an analyst who runs ffbench with the seed)",
    "free_text": "free text (another team's trade rationale: its numbers read # under protection, its words "
                 "stay): only player tables are read",
}
#: what a run with protected numbers shows no trace of (:data:`ffbench_lib.game.protect.WITHHELD`)
TEAMS_WITHHELD = "team_identification"


def _stats(ks: list[int]) -> dict[str, Any]:
    if not ks:
        return {"cards": 0, "unique": 0, "unique_share": None, "smallest_k": None, "median_k": None,
                f"below_{K}": 0}
    return {"cards": len(ks), "unique": sum(k == 1 for k in ks), "unique_share": round(sum(k == 1 for k in ks) / len(ks), 4),
            "smallest_k": int(min(ks)), "median_k": float(np.median(ks)), f"below_{K}": sum(k < K for k in ks)}


def _league(run: Path) -> League:
    f = run / "config.yaml"
    try:
        raw = yaml.safe_load(f.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise RunDirError(f"{f}: not readable as YAML ({type(exc).__name__}); the run directory is damaged or edited: "
                          "audit a run directory `ffbench run` wrote") from None
    if not isinstance(raw, dict):
        raise RunDirError(f"{f}: not a league config (a YAML mapping); the run directory is damaged or edited: audit "
                          "a run directory `ffbench run` wrote")
    try:
        return League.model_validate(raw)
    except ValueError as exc:
        raise RunDirError(f"{f}: cannot be read as a league ({type(exc).__name__}); audit a run directory "
                          "`ffbench run` wrote") from None


def _meta(run: Path) -> RunMeta:
    meta = RunMeta.read(run / "run.json")  # RunMetaError (exit 2) names the file when it is not a run's
    if meta.status == "running":
        raise RunDirError(f"{run / 'run.json'}: status running: the run is being played (or was killed mid-way), so "
                          "its prompts are not all written; audit it once it has stopped (let it finish, or continue "
                          "it with `ffbench run --resume`)")
    return meta


def _mapping(run: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """masking.json's pseudonym -> real player id, team pseudonym -> real team, and how the run was masked
    (``mode``, ``numbers``)."""
    f = run / "masking.json"
    if not f.is_file():
        raise RunDirError(f"{run}: masked but without masking.json (the run stopped before its draft?); audit a "
                          "run that played")
    bad = RunDirError(f"{f}: not a masking.json of ffbench (an object with players: pseudonym -> {{player_id}} and "
                      "teams: pseudonym -> team); the run directory is damaged or edited: run it again")
    try:
        mapping = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise bad from None
    if not isinstance(mapping, dict) or not isinstance(mapping.get("players", {}), dict) \
            or not isinstance(mapping.get("teams", {}), dict):
        raise bad
    players: dict[str, str] = {}
    for fake, v in mapping.get("players", {}).items():
        if not isinstance(v, dict) or not isinstance(v.get("player_id"), str):
            raise bad
        players[fake] = v["player_id"]
    teams = mapping.get("teams", {})
    if not all(isinstance(v, str) for v in teams.values()):
        raise bad
    played = {"mode": mapping.get("mode"), "numbers": mapping.get("numbers", "exact")}
    return players, teams, played


def _calls(calls_file: Path):
    """(line number, decision kind, week, prompt text) of each call of llm_calls.jsonl that shows cards; a line that
    is not a call's record is refused, naming the file and the line."""
    def bad(n: int, what: str) -> RunDirError:
        return RunDirError(f"{calls_file}: line {n} {what}; the log is damaged (cut short or edited): audit a run "
                           "that stopped cleanly, or run it again")

    with open(calls_file, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise bad(n, "is not UTF-8 text") from None
            if not line.strip():
                continue
            try:
                call = json.loads(line)
            except ValueError:
                raise bad(n, "is not JSON (a line cut short?)") from None
            if not isinstance(call, dict):
                raise bad(n, "is not a JSON object")
            kind = call.get("decision")
            if not kind or kind == "token_calibration":
                continue
            if not isinstance(kind, str):
                raise bad(n, "has a decision that is not a string")
            messages = call.get("messages", [])
            if not isinstance(messages, list) or not all(
                    isinstance(m, dict) and isinstance(m.get("content") or "", str) for m in messages):
                raise bad(n, "has messages that are not a list of {role, content} objects")
            week = None
            if kind not in DRAFT_KINDS:
                week = call.get("week")
                if not isinstance(week, int) or isinstance(week, bool) or week < 1:
                    raise bad(n, f"is a {kind} call without its week")
            yield n, kind, week, "\n".join(m.get("content") or "" for m in messages if m.get("role") != "assistant")


def _verdict(seen: dict[str, dict], draft: list[int], draft_top: list[int], one: list[int], across: list[int],
             unmeasured: list[str], withheld: bool) -> tuple[str, list[str], dict[str, Any]]:
    """The verdict's level, its parts, and the machine-readable summary (every decision kind, team_known, a
    player's cards in one prompt read together, and across the run's prompts)."""
    week = [k for kind, cards in seen.items() if kind not in DRAFT_KINDS for k, _, _ in cards.values()]
    team = [k for cards in seen.values() for _, k, _ in cards.values()]
    below = {kind: min(k for k, _, _ in cards.values()) for kind, cards in sorted(seen.items())
             if cards and min(k for k, _, _ in cards.values()) < K}
    below_team = {kind: min(k for _, k, _ in cards.values()) for kind, cards in sorted(seen.items())
                  if cards and min(k for _, k, _ in cards.values()) < K}
    cards = draft + week
    summary = {"protected_per_card": bool(cards) and not below,
               "protected_draft_per_card": bool(draft) and min(draft) >= K,
               "protected_team_known": bool(team) and not below_team,
               "protected_in_prompt": bool(one) and min(one) >= K,
               "protected_linked": bool(across) and min(across) >= K,
               "kinds_below_k": below, "kinds_below_k_team_known": below_team, "unmeasured": unmeasured}
    if not cards:
        return "no card in the prompts", [], summary
    parts = []
    if not draft:
        parts.append("no draft card in the prompts")
    elif min(draft) >= K:
        parts.append(f"draft cards k>={K} per card (smallest k {min(draft)}, {len(draft)} cards)")
    else:
        parts.append(f"{sum(k == 1 for k in draft)} of {len(draft)} draft cards name their player "
                     f"({sum(k == 1 for k in draft_top)} of {len(draft_top)} of the top-{TOP} ADP players' cards), "
                     f"smallest k {min(draft)}")
    if week and min(week) >= K:
        parts.append(f"week cards k>={K} per card (smallest k {min(week)})")
    elif week:
        kinds = ", ".join(f"{kind} {k}" for kind, k in below.items() if kind not in DRAFT_KINDS)
        parts.append(f"week cards NOT k>={K}: {sum(k < K for k in week)} of {len(week)} below {K}, "
                     f"{sum(k == 1 for k in week)} unique (smallest k: {kinds})")
    if withheld:
        parts.append("no card shows a team or an opponent (protected numbers withhold them)")
    elif summary["protected_team_known"]:
        parts.append(f"k>={K} also for an adversary who identifies the teams (smallest k {min(team)})")
    else:
        parts.append(f"NOT protected against an adversary who identifies the teams (smallest k {min(team)}, "
                     f"{sum(k == 1 for k in team)} of {len(team)} cards unique)")
    if one and summary["protected_in_prompt"]:
        parts.append(f"k>={K} also with a player's cards in one prompt read together (smallest k {min(one)}: what "
                     "one call shows a model)")
    elif one:
        parts.append(f"NOT k>={K} with a player's cards in one prompt read together: {sum(k == 1 for k in one)} of "
                     f"{len(one)} players named by some prompt, {sum(k < K for k in one)} below {K} (smallest k "
                     f"{min(one)})")
    if across and summary["protected_linked"]:
        parts.append(f"k>={K} also with each player's cards of every prompt read together (smallest k {min(across)}, "
                     f"{len(across)} players)")
    elif across:
        parts.append(f"NOT k>={K} with each player's cards of every prompt read together (an agent that keeps what "
                     f"earlier calls showed): {sum(k == 1 for k in across)} of {len(across)} players named, "
                     f"{sum(k < K for k in across)} below {K} (smallest k {min(across)})")
    if unmeasured:
        parts.append("not measured: " + ", ".join(UNMEASURED[u].split(" (")[0] for u in unmeasured))
    card = summary["protected_per_card"] and summary["protected_team_known"]
    level = ("protected across prompts" if card and summary["protected_in_prompt"] and summary["protected_linked"] else
             "protected per prompt" if card and summary["protected_in_prompt"] else
             "protected per card" if card else
             "partly protected" if summary["protected_draft_per_card"] or summary["protected_per_card"] else
             "not protected")
    return level, parts, summary


def audit(run_dir: str | Path, prepared=None, write: bool = True) -> dict[str, Any]:
    """The audit of one masked run (``prepared``: its season, else prepared from the run's config); written to the
    run's :data:`AUDIT` unless ``write`` is false. The run's lock is held throughout: a run being played is refused."""
    run = Path(run_dir)
    if not (run / "run.json").is_file() or not (run / "config.yaml").is_file():
        raise RunDirError(f"{run}: not a run directory (no run.json and config.yaml); give a folder `ffbench run` "
                          "wrote")
    meta = _meta(run)
    with exclusive(run):  # RunLocked while another process writes the run
        return _audit(run, meta, prepared, write)


def _audit(run: Path, meta: RunMeta, prepared, write: bool) -> dict[str, Any]:
    league = _league(run)
    if league.information.masking == "off":
        raise RunDirError(f"{run}: the run is not masked (information.masking: off), so its prompts name every "
                          "player; audit a run played with masking: players_and_teams")
    if league.season != meta.season:
        raise RunDirError(f"{run / 'config.yaml'}: season {league.season}, but run.json says the run played "
                          f"{meta.season}; the config was edited: restore the one the run wrote")
    calls_file = run / "llm_calls.jsonl"
    if not calls_file.is_file():
        raise RunDirError(f"{run}: no llm_calls.jsonl, so no prompt to audit (only LLM teams are asked with "
                          "prompts); audit a run with LLM teams")
    players, teams, played = _mapping(run)
    for field, value in (("masking", league.information.masking), ("numbers", league.information.numbers)):
        was = played["mode" if field == "masking" else "numbers"]
        if was is not None and was != value:
            raise RunDirError(f"{run / 'config.yaml'}: information.{field} {value}, but masking.json says the run was "
                              f"played with {field} {was}; the config was edited: restore the one the run wrote")
    if prepared is None:
        from ffbench_lib.data.prepare import prepared_for

        prepared = prepared_for(league)
    now = prepared.manifest.get("fingerprint")
    if meta.data_fingerprint and now and meta.data_fingerprint != now:
        raise RunDirError(f"{run / 'run.json'}: the run was played on other prepared data (data_fingerprint "
                          f"{meta.data_fingerprint}, the data here {now}: other data files or another ffbench "
                          "version), so its cards would be looked up in the wrong table; audit it with the data it "
                          "was played on (FFBENCH_DATA_DIR, data.dir)")
    fw = Firewall(prepared, league)
    spec = league.sport_spec
    pool = list(fw.catalog.pool_ids)
    preseason = columns(fw.shortlist_detail(pool))
    ranked = sorted((p for p in pool if fw.adp.get(p) is not None and fw.adp[p] == fw.adp[p]), key=lambda p: fw.adp[p])
    top = set(ranked[:TOP])
    weekly: dict[int, dict] = {}

    def table(kind: str, week: int | None) -> dict:
        if kind in DRAFT_KINDS or week is None:
            return preseason
        if week not in weekly:
            weekly[week] = columns(fw.player_week(p, week) for p in sorted(fw.week(week).known_players()))
        return weekly[week]

    withheld = league.information.numbers == "protected"  # its cards show no team nor opponent
    seen: dict[str, dict[tuple, tuple[int, int, bool]]] = {}
    linked: dict[str, set[str]] = {}  # pseudonym -> the real players every card of his fits
    fitting_of: dict[tuple, set[str]] = {}  # a distinct card -> the real players it fits
    in_prompt: dict[str, int] = {}  # pseudonym -> the fewest real players his cards of one prompt fit together
    for n, kind, week, text in _calls(calls_file):
        cards = seen.setdefault(kind, {})
        prompt: dict[str, set[str]] = {}
        for row in parse_tables(text):
            key = (week, tuple(sorted(row.items())))
            fake = row.get("id", "")
            if key in cards:
                prompt[fake] = prompt[fake] & fitting_of[kind, key] if fake in prompt else fitting_of[kind, key]
                continue
            ref = table(kind, week)
            fit = consistent(row, ref)
            k = int(fit.sum())
            where = f"{calls_file}: line {n} ({kind}{f', week {week}' if week else ''}) shows a card ({row.get('id')})"
            if k == 0:
                raise RunDirError(f"{where} that no real player of the season's table fits: the prompts were not made "
                                  "from this data (another season, other data files or an edited log); audit the run "
                                  "with the data it was played on")
            own = players.get(fake)
            fitting = fitting_of[kind, key] = set(ref["id"].text[fit]) if "id" in ref else set()
            if own is not None and own not in fitting:
                raise RunDirError(f"{where} that the player masking.json maps it to ({own}) does not fit: masking.json "
                                  "is not this run's (edited or copied); restore the run's own")
            linked[fake] = linked[fake] & fitting if fake in linked else fitting
            prompt[fake] = prompt[fake] & fitting if fake in prompt else fitting
            if withheld and row.get("team", WITHHELD_TEXT) == WITHHELD_TEXT:  # no team shown: nothing to match
                k_team = k
            else:
                real_team = teams.get(row.get("team", ""), row.get("team"))
                codes = {c for c in (*spec.team_codes, *spec.team_aliases) if spec.team_aliases.get(c, c) == real_team}
                k_team = int(consistent(row, ref, team=codes | {real_team}).sum())
                if k_team == 0:
                    raise RunDirError(f"{where} whose team pseudonym {row.get('team')!r} masking.json maps to "
                                      f"{real_team!r}, the team of no player who fits it: masking.json is not this "
                                      "run's (edited or copied); restore the run's own")
            cards[key] = (k, k_team, own in top)
        for fake, c in prompt.items():
            in_prompt[fake] = min(in_prompt.get(fake, len(c)), len(c))
    kinds: dict[str, Any] = {}
    for kind, cards in sorted(seen.items()):
        vals = list(cards.values())
        kinds[kind] = {**_stats([k for k, _, _ in vals]),
                       "unmatched": sum(k == 0 for k, _, _ in vals),
                       f"top{TOP}": _stats([k for k, _, t in vals if t]),
                       "team_known": _stats([k for _, k, _ in vals])}
    draft = [k for kind in DRAFT_KINDS for k, _, _ in seen.get(kind, {}).values()]
    draft_top = [k for kind in DRAFT_KINDS for k, _, t in seen.get(kind, {}).values() if t]
    week = [v for kind, cards in seen.items() if kind not in DRAFT_KINDS for v in cards.values()]
    across = {fake: len(c) for fake, c in linked.items() if fake in players}
    across_top = [k for fake, k in across.items() if players[fake] in top]
    one = {fake: k for fake, k in in_prompt.items() if fake in players}
    unmeasured = [u for u in UNMEASURED if not (withheld and u == TEAMS_WITHHELD)]
    level, parts, summary = _verdict(seen, draft, draft_top, list(one.values()), list(across.values()), unmeasured,
                                     withheld)
    out = {"run": str(run), "masking": league.information.masking, "numbers": league.information.numbers,
           "k_target": K, "season_table": {"draft": len(pool)}, "draft": {**_stats(draft), f"top{TOP}": _stats(draft_top)},
           "week": {**_stats([k for k, _, _ in week]), f"top{TOP}": _stats([k for k, _, t in week if t])},
           "team_known": _stats([k for cards in seen.values() for _, k, _ in cards.values()]),
           "in_prompt": {**_stats(list(one.values())), f"top{TOP}": _stats([k for f, k in one.items() if players[f] in top])},
           "linked": {**_stats(list(across.values())), f"top{TOP}": _stats(across_top)},
           "teams_shown": not withheld, "data_fingerprint_checked": bool(meta.data_fingerprint and now),
           "kinds": kinds, **summary,
           "unmeasured_notes": {u: UNMEASURED[u] for u in unmeasured}, "level": level,
           "verdict": f"{level}: {'; '.join(parts)}" if parts else level}
    if write:
        write_json(run / AUDIT, out)
    return out


def format_audit(result: dict[str, Any]) -> str:
    """The audit as a table to print."""
    lines = [f"masking audit of {result['run']} (masking {result['masking']}, numbers {result['numbers']}; "
             f"k = real players a card fits, each card alone)",
             f"{'kind':<18}{'cards':>7}{'unique':>8}{'min k':>7}{'med k':>7}   top-{TOP} ADP: cards unique min k"
             "   teams known: unique min k"]
    for kind, s in result["kinds"].items():
        t, tk = s[f"top{TOP}"], s["team_known"]
        share = lambda x: "-" if x is None else f"{x:.0%}"  # noqa: E731
        lines.append(f"{kind:<18}{s['cards']:>7}{share(s['unique_share']):>8}{s['smallest_k'] or '-':>7}"
                     f"{s['median_k'] if s['median_k'] is not None else '-':>7}   {t['cards']:>15}{share(t['unique_share']):>7}"
                     f"{t['smallest_k'] if t['smallest_k'] is not None else '-':>6}   {share(tk['unique_share']):>18}"
                     f"{tk['smallest_k'] if tk['smallest_k'] is not None else '-':>6}")
    for key, label, what in (("in_prompt", "one prompt", "each player's cards in one prompt read together (the "
                              "fewest any prompt leaves him)"),
                             ("linked", "all prompts", "each player's cards of every prompt read together")):
        ln = result.get(key)
        if ln and ln.get("cards"):
            share = lambda x: "-" if x is None else f"{x:.0%}"  # noqa: E731
            lines.append(f"{label:<18}{ln['cards']:>7}{share(ln['unique_share']):>8}{ln['smallest_k']:>7}"
                         f"{ln['median_k']:>7}   players: {what}")
    if result.get("data_fingerprint_checked") is False:
        lines.append("note: run.json has no data_fingerprint, so the season's table could not be checked against the "
                     "data the run was played on")
    level = result.get("level")
    verdict = result["verdict"]
    if level and verdict.startswith(f"{level}: "):
        lines.append(f"verdict: {level}")
        lines += [f"  {p}" for p in verdict[len(level) + 2:].split("; ")]
    else:
        lines.append(f"verdict: {verdict}")
    return "\n".join(lines)
