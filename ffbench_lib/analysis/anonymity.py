"""The masking audits of runs (``masking_audit.json``, written by ``ffbench masking audit``: see
:mod:`ffbench_lib.runs.anonymity`) as one sentence for the report, beside its other caveats."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

AUDIT = "masking_audit.json"


def _masked(run: Path) -> bool:
    try:
        cfg = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return False
    return (cfg.get("information") or {}).get("masking", "off") not in ("off", False, None)


def audit_caveat(paths) -> str | None:
    """What the runs' masking audits found (None when no run is masked): the draft cards' smallest k and the share
    naming their player, per audited run, and how many masked runs have no audit."""
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
            a = json.loads(f.read_text(encoding="utf-8"))
            d = a["draft"]
            found.append((r.name, a.get("numbers", "exact"), d["smallest_k"], d["unique_share"]))
        except (OSError, ValueError, KeyError):
            missing.append(r)
    parts = []
    for numbers in sorted({n for _, n, _, _ in found}):
        mine = [(k, u) for _, n, k, u in found if n == numbers]
        ks = [k for k, _ in mine if k is not None]
        share = max((u for _, u in mine if u is not None), default=0.0)
        parts.append(f"Masking audit of {len(mine)} masked run(s) with numbers {numbers}: every draft card the prompts "
                     f"showed matches at least {min(ks) if ks else '-'} real player(s), and up to {share:.0%} of a "
                     "run's draft cards match one only"
                     + (" (a model that remembers the season's numbers can name those; information.numbers: "
                        "protected hides them)" if ks and min(ks) < 5 else "") + ".")
    if missing:
        parts.append(f"{len(missing)} masked run(s) have no masking audit: run `ffbench masking audit RUN` to measure "
                     "what their prompts' numbers reveal.")
    return " ".join(parts)
