"""The masking audits of runs (``masking_audit.json``, written by ``ffbench masking audit``: see
:mod:`ffbench_lib.runs.anonymity`) as one sentence for the report, beside its other caveats."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

AUDIT = "masking_audit.json"
K = 5  # the audit's k target (ffbench_lib.game.protect.K; an audit file's own ``k_target`` wins)
DRAFT_KINDS = ("draft_shortlist", "draft_pick", "draft_queue")


def _masked(run: Path) -> bool:
    try:
        cfg = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return False
    return (cfg.get("information") or {}).get("masking", "off") not in ("off", False, None)


def _smallest(stats: list[dict]) -> tuple[int | None, float]:
    """The smallest k and the largest unique share over some kinds' statistics."""
    ks = [s["smallest_k"] for s in stats if s.get("smallest_k") is not None]
    return (min(ks) if ks else None), max((s["unique_share"] for s in stats if s.get("unique_share") is not None),
                                          default=0.0)


def _read(f: Path) -> dict:
    """One audit file's draft, week, team-known and linked findings (from its kinds, so older audit files read too)."""
    a = json.loads(f.read_text(encoding="utf-8"))
    kinds = a["kinds"]
    d = a["draft"]
    week = _smallest([s for kind, s in kinds.items() if kind not in DRAFT_KINDS])
    team = _smallest([s["team_known"] for s in kinds.values()])
    linked = _smallest([a["linked"]]) if a.get("linked", {}).get("cards") else (None, 0.0)
    one = _smallest([a["in_prompt"]]) if a.get("in_prompt", {}).get("cards") else (None, 0.0)
    notes = a.get("unmeasured_notes") or {}
    return {"numbers": a.get("numbers", "exact"), "k": a.get("k_target", K), "draft": (d["smallest_k"], d["unique_share"]),
            "week": week, "team": team, "in_prompt": one, "linked": linked, "teams_shown": a.get("teams_shown", True),
            "unmeasured": [str(notes.get(u, u)).split(" (")[0] for u in a.get("unmeasured", [])]}


def _least(found: list[dict], what: str) -> tuple[int | None, float]:
    ks = [r[what][0] for r in found if r[what][0] is not None]
    return (min(ks) if ks else None), max((r[what][1] or 0.0 for r in found), default=0.0)


def audit_caveat(paths) -> str | None:
    """What the runs' masking audits found (None when no run is masked), per numbers setting: the smallest k and the
    largest share of cards naming their player, for the draft cards, the week cards, an adversary who identified
    the teams (where cards show them), a player's cards in one prompt and in a whole run read together; whether that protects the
    prompts (it says not, when any falls below k); what the audits do not measure; and how many masked runs have no
    audit."""
    runs = [Path(p) for p in paths]
    masked = [r for r in runs if _masked(r)]
    if not masked:
        return None
    found, missing = [], []
    for r in masked:
        f = r / AUDIT
        if not f.is_file():
            missing.append(r)
            continue
        try:
            found.append(_read(f))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            missing.append(r)
    at = lambda k: "-" if k is None else k  # noqa: E731
    parts = []
    for numbers in sorted({x["numbers"] for x in found}):
        mine = [x for x in found if x["numbers"] == numbers]
        k = max(x["k"] for x in mine)
        shown = [x for x in mine if x["teams_shown"]]
        (dk, du), (wk, wu), (lk, lu) = _least(mine, "draft"), _least(mine, "week"), _least(mine, "linked")
        ok, ou = _least(mine, "in_prompt")
        tk, tu = _least(shown, "team")
        text = (f"Masking audit of {len(mine)} masked run(s) with numbers {numbers}: every draft card the prompts "
                f"showed matches at least {at(dk)} real player(s), and up to {du:.0%} of a run's draft cards match one only")
        if wk is not None:
            text += f"; week cards at least {wk} (up to {wu:.0%} unique in a kind)"
        if shown:
            text += (f"; for an adversary who identifies the teams (a prompt's cards can be enough) at least {at(tk)} "
                     f"(up to {tu:.0%} unique in a kind)")
        if len(shown) < len(mine):
            text += f"; {len(mine) - len(shown)} run(s) show no team or opponent on any card"
        if ok is not None:
            text += (f"; with a player's cards in one prompt read together (what one call shows a model) at least {ok} "
                     f"(up to {ou:.0%} of a run's players named by some prompt)")
        if lk is not None:
            text += (f"; with each player's cards of every prompt of a run read together (an agent that keeps what "
                     f"earlier calls showed) at least {lk} (up to {lu:.0%} of a run's players named)")
        below = [what for what, v in (("draft cards", dk), ("week cards", wk), ("cards with the teams identified", tk),
                                      ("a player's cards in one prompt", ok)) if v is not None and v < k]
        if below:
            text += (f". Not protected ({', '.join(below)} below k = {k}): a model that remembers the season's numbers "
                     "can name some players"
                     + (" (information.numbers: protected generalises the numbers and withholds the teams)"
                        if numbers == "exact" else ""))
        elif lk is not None and lk < k:
            text += (f". Every card and every prompt matches at least {k} real players, but not a player's cards of "
                     f"a whole run read together (k = {lk} below {k}): an agent that remembers the season's numbers "
                     "and keeps what earlier calls showed can name some players")
        else:
            text += f". Every card, every prompt and every player's cards read together match at least {k} real players"
        unmeasured = list(dict.fromkeys(u for x in mine for u in x["unmeasured"]))
        parts.append(text + (f"; the audit does not measure {', '.join(unmeasured)}." if unmeasured else "."))
    if missing:
        parts.append(f"{len(missing)} masked run(s) have no masking audit: run `ffbench masking audit RUN` to measure "
                     "what their prompts' numbers reveal.")
    return " ".join(parts)
