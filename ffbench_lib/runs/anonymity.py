"""The masking audit (``ffbench masking audit RUN``): how many real players of the season each card a masked run's
prompts showed could be, measured from the prompts actually sent (``llm_calls.jsonl``).

Every player table of every prompt (:func:`ffbench_lib.game.protect.parse_tables`) is read back row by row; a row
is checked against every real player of the season's table of that moment: the draft pool's preseason cards (and
shortlist details) for the draft kinds, the cards of the players known before the week for the week kinds. A
candidate fits when each shown cell fits his value (equal as written, inside a range, ``-`` for none); position,
byes, numbers, injury and flags count, pseudonyms (id, name, NFL team, opponent) do not. A card's ``k`` is how many
real players fit it; ``k = 1`` is a card that names its player. Per decision kind: distinct cards, the share with
``k = 1``, the smallest and median ``k``, the same over the season's 50 best-ADP players, and (``team_known``) the
same for an adversary who also identified every NFL team pseudonym (schedules and byes allow it within weeks; see
docs/memory.md). The result goes to the run's ``masking_audit.json`` (written atomically; a file a later fresh
start of the run replaces, never one that makes a finished run look edited).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ffbench_lib.config.league import League
from ffbench_lib.core.atomic import write_json
from ffbench_lib.game.protect import K, columns, consistent, parse_tables
from ffbench_lib.game.views import Firewall
from ffbench_lib.runs.rundir import RunDirError, exclusive

AUDIT = "masking_audit.json"
DRAFT_KINDS = ("draft_shortlist", "draft_pick", "draft_queue")
TOP = 50  # the best-ADP players the audit reports apart: the ones a model is likeliest to remember


def _stats(ks: list[int]) -> dict[str, Any]:
    if not ks:
        return {"cards": 0, "unique": 0, "unique_share": None, "smallest_k": None, "median_k": None,
                f"below_{K}": 0}
    return {"cards": len(ks), "unique": sum(k == 1 for k in ks), "unique_share": round(sum(k == 1 for k in ks) / len(ks), 4),
            "smallest_k": int(min(ks)), "median_k": float(np.median(ks)), f"below_{K}": sum(k < K for k in ks)}


def _league(run: Path) -> League:
    try:
        return League.model_validate(yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{run}: config.yaml cannot be read as a league ({type(exc).__name__}); audit a run "
                          "directory `ffbench run` wrote") from None


def audit(run_dir: str | Path, prepared=None, write: bool = True) -> dict[str, Any]:
    """The audit of one masked run (``prepared``: its season, else prepared from the run's config); written to the
    run's :data:`AUDIT` unless ``write`` is false."""
    run = Path(run_dir)
    if not (run / "run.json").is_file() or not (run / "config.yaml").is_file():
        raise RunDirError(f"{run}: not a run directory (no run.json and config.yaml); give a folder `ffbench run` "
                          "wrote")
    league = _league(run)
    if league.information.masking == "off":
        raise RunDirError(f"{run}: the run is not masked (information.masking: off), so its prompts name every "
                          "player; audit a run played with masking: players_and_teams")
    calls_file = run / "llm_calls.jsonl"
    if not calls_file.is_file():
        raise RunDirError(f"{run}: no llm_calls.jsonl, so no prompt to audit (only LLM teams are asked with "
                          "prompts); audit a run with LLM teams")
    mapping_file = run / "masking.json"
    if not mapping_file.is_file():
        raise RunDirError(f"{run}: masked but without masking.json (the run stopped before its draft?); audit a "
                          "run that played")
    mapping = json.loads(mapping_file.read_text(encoding="utf-8"))
    players = {fake: v["player_id"] for fake, v in mapping.get("players", {}).items()}
    teams = mapping.get("teams", {})
    if prepared is None:
        from ffbench_lib.data.prepare import prepared_for

        prepared = prepared_for(league)
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

    seen: dict[str, dict[tuple, tuple[int, int, bool]]] = {}
    with open(calls_file, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            call = json.loads(line)
            kind = call.get("decision")
            if not kind or kind == "token_calibration":
                continue
            week = call.get("week") if kind not in DRAFT_KINDS else None
            text = "\n".join(m.get("content") or "" for m in call.get("messages", []) if m.get("role") != "assistant")
            cards = seen.setdefault(kind, {})
            for row in parse_tables(text):
                key = (week, tuple(sorted(row.items())))
                if key in cards:
                    continue
                ref = table(kind, week)
                k = int(consistent(row, ref).sum())
                real_team = teams.get(row.get("team", ""), row.get("team"))
                codes = {c for c in (*spec.team_codes, *spec.team_aliases) if spec.team_aliases.get(c, c) == real_team}
                k_team = int(consistent(row, ref, team=codes | {real_team}).sum())
                cards[key] = (k, k_team, players.get(row.get("id", "")) in top)
    kinds: dict[str, Any] = {}
    for kind, cards in sorted(seen.items()):
        vals = list(cards.values())
        kinds[kind] = {**_stats([k for k, _, _ in vals]),
                       "unmatched": sum(k == 0 for k, _, _ in vals),
                       f"top{TOP}": _stats([k for k, _, t in vals if t]),
                       "team_known": _stats([k for _, k, _ in vals])}
    draft = [k for kind in DRAFT_KINDS for k, _, _ in seen.get(kind, {}).values()]
    draft_top = [k for kind in DRAFT_KINDS for k, _, t in seen.get(kind, {}).values() if t]
    if not draft:
        verdict = "no draft card in the prompts"
    elif min(draft) >= K:
        verdict = f"protected: every draft card matches at least {K} real players (smallest k {min(draft)})"
    else:
        verdict = (f"not protected: {sum(k == 1 for k in draft)} of {len(draft)} draft cards name their player "
                   f"({sum(k == 1 for k in draft_top)} of {len(draft_top)} of the top-{TOP} ADP players' cards); "
                   f"smallest k {min(draft)}")
    out = {"run": str(run), "masking": league.information.masking, "numbers": league.information.numbers,
           "k_target": K, "season_table": {"draft": len(pool)}, "draft": {**_stats(draft), f"top{TOP}": _stats(draft_top)},
           "kinds": kinds, "verdict": verdict}
    if write:  # one writer per run directory: never while the run is being played (RunLocked names it)
        with exclusive(run):
            write_json(run / AUDIT, out)
    return out


def format_audit(result: dict[str, Any]) -> str:
    """The audit as a table to print."""
    lines = [f"masking audit of {result['run']} (masking {result['masking']}, numbers {result['numbers']}; "
             f"k = real players a card fits)",
             f"{'kind':<18}{'cards':>7}{'unique':>8}{'min k':>7}{'med k':>7}   top-{TOP} ADP: cards unique min k"
             "   teams known: unique min k"]
    for kind, s in result["kinds"].items():
        t, tk = s[f"top{TOP}"], s["team_known"]
        share = lambda x: "-" if x is None else f"{x:.0%}"  # noqa: E731
        lines.append(f"{kind:<18}{s['cards']:>7}{share(s['unique_share']):>8}{s['smallest_k'] or '-':>7}"
                     f"{s['median_k'] if s['median_k'] is not None else '-':>7}   {t['cards']:>15}{share(t['unique_share']):>7}"
                     f"{t['smallest_k'] if t['smallest_k'] is not None else '-':>6}   {share(tk['unique_share']):>18}"
                     f"{tk['smallest_k'] if tk['smallest_k'] is not None else '-':>6}")
    lines.append(f"verdict: {result['verdict']}")
    return "\n".join(lines)
