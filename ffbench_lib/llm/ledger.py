"""Per team and model summary of a run's LLM calls: the reliability and cost numbers a comparison needs."""
from __future__ import annotations

from typing import Any

import pandas as pd

COLUMNS = ["team", "agent", "model", "decisions", "fallbacks", "fallback_rate", "calls", "cache_hits", "reasks",
           "invalid_answers", "invalid_rate", "transport_errors", "failed_calls", "prompt_tokens", "prompt_tokens_estimated",
           "completion_tokens", "reasoning_tokens", "cost_usd", "unpriced_calls", "latency_s_mean"]


def summarize(calls: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per LLM team. ``invalid_rate``: share of calls whose answer failed parsing or validation;
    ``fallback_rate``: share of decisions the engine had to repair. ``unpriced_calls``: answered calls without a
    price (litellm's table lacks the model and the config sets none): their cost is unknown, so ``cost_usd`` is a
    lower bound and must not be shown as the cost. Replayed (cache-hit) answers count too: they carry the recorded
    live call's cost, which ``cost_usd`` sums; failed calls got no answer to price and do not count."""
    if not calls:
        return pd.DataFrame(columns=COLUMNS)
    c = pd.DataFrame(calls)
    d = pd.DataFrame([r for r in decisions if str(r.get("agent", "")).startswith(("llm:", "python:"))])
    rows = []
    for (team, model), g in c.groupby(["team", "model"]):
        dd = d[d["team"] == team] if len(d) else d
        errors = sum(1 for atts in g["attempts"] for a in (atts or []) if a.get("error"))
        n_dec = len(dd)
        fb = int((dd["decided_by"] == "fallback").sum()) if n_dec else 0
        invalid = int(g["problems"].notna().sum())
        rows.append({
            "team": team, "agent": g["agent"].iloc[0], "model": model, "decisions": n_dec, "fallbacks": fb,
            "fallback_rate": fb / n_dec if n_dec else 0.0, "calls": len(g), "cache_hits": int(g["cache_hit"].sum()),
            "reasks": int((g["reask"] > 0).sum()), "invalid_answers": invalid, "invalid_rate": invalid / len(g),
            "transport_errors": errors, "failed_calls": int(g["error"].notna().sum()),
            "prompt_tokens": int(g["prompt_tokens"].fillna(0).sum()),
            # litellm's tokenizer on what was sent: comparable across providers that report usage differently
            "prompt_tokens_estimated": int(g["prompt_tokens_estimated"].fillna(0).sum())
            if "prompt_tokens_estimated" in g else 0,
            "completion_tokens": int(g["completion_tokens"].fillna(0).sum()),
            "reasoning_tokens": int(g["reasoning_tokens"].fillna(0).sum()),
            "cost_usd": float(g["cost_usd"].fillna(0).sum()),
            "unpriced_calls": int((g["cost_usd"].isna() & g["error"].isna()).sum()),
            "latency_s_mean": float(g["latency_s"].dropna().mean()) if g["latency_s"].notna().any() else 0.0,
        })
    return pd.DataFrame(rows, columns=COLUMNS)
