"""What can be known about a league's LLM teams before its season is played.

Offline (``ffbench validate``): which key variables are unset, whether the fallback guard can ever apply, and each
decision kind's **smallest prompt** (every table shortened as far as :mod:`.agents.fit` goes), measured on the
views of a bots-only copy of the league played to its first trade week, against each team's
``max_prompt_tokens`` and the model's known context window: a league that cannot fit fails here, not at its
first trade week. Online (``ffbench check``): one cheap call per distinct model and endpoint, reporting key,
reachability, model, JSON mode, context window, price and the server's own token count against litellm's estimate.
"""
from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from ffbench_lib.config.league import BotAgent, League, LLMAgent as LLMSpec
from ffbench_lib.llm.client import classify, local_server, missing_key
from ffbench_lib.llm.tokens import context_window, count_tokens

#: what ``ffbench check`` sends: short, asks for JSON, answerable by any chat model
CHECK_MESSAGES = [{"role": "user", "content": 'Reply with exactly this JSON object and nothing else: {"ok": true}'}]
CHECK_MAX_TOKENS = 256
#: a system text sent once with CHECK_MESSAGES: a server whose count hardly grows dropped the system role
CHECK_SYSTEM = ("You manage a fantasy football team in a league of ten teams. Every answer is one JSON object that "
                "follows the schema in the user's message, using only the player ids shown in its tables. " * 4)


def llm_specs(league: League) -> dict[str, LLMSpec]:
    """Team name -> its LLM agent, for the league's LLM teams."""
    return {t.name: t.agent for t in league.teams if isinstance(t.agent, LLMSpec)}


def endpoints(league: League) -> dict[tuple, list[str]]:
    """One entry per distinct model and endpoint (what a call depends on), with the teams using it."""
    out: dict[tuple, list[str]] = {}
    for team, spec in llm_specs(league).items():
        out.setdefault((spec.model, spec.api_base, spec.api_key_env), []).append(team)
    return out


def model_specs(league: League) -> dict[str, LLMSpec]:
    """Team name -> the LLM its calls use: an LLM team's, or a plug-in's own ``model``."""
    plugins = {t.name: t.agent.model for t in league.teams if t.agent.kind == "python" and t.agent.model}
    return {**llm_specs(league), **plugins}


def key_warnings(league: League) -> list[str]:
    """A line per model whose key variable is unset (nothing is called)."""
    out, seen = [], set()
    specs = model_specs(league)
    for team, spec in specs.items():
        var = missing_key(spec)
        if var and (spec.model, var) not in seen:
            seen.add((spec.model, var))
            teams = [t for t, s in specs.items() if s.model == spec.model and missing_key(s) == var]
            out.append(f"{spec.model} (team{'s' if len(teams) > 1 else ''} {', '.join(teams)}): {var} is not set, so "
                       "its first call will stop the run; export it (or give api_key_env), unless this provider takes "
                       "its credentials from elsewhere (a cloud login)")
    return out


# --------------------------------------------------------------------------------------- smallest prompts

@dataclass
class Sample:
    """The views of a bots-only copy of the league, by decision kind, and its decisions per team."""

    views: dict[str, list[dict]] = field(default_factory=dict)
    weeks: int = 0
    draft_decisions: float = 0.0  # per team
    weekly_decisions: float = 0.0  # per team and week


def sample_views(league: League, keep: int = 3) -> Sample:
    """Play a copy of ``league`` with every team an adp bot, to its first trade week (or week 1), and keep each
    decision kind's ``keep`` largest views: the views an LLM team would get are the same (the firewall builds
    them for the team, whoever answers)."""
    from ffbench_lib.data.prepare import prepared_for
    from ffbench_lib.runs.runner import Engine
    from ffbench_lib.runs.rundir import RunDir
    from ffbench_lib.core.aio import run_sync

    weeks = min(league.trades.weeks) if league.trades.weeks else 1
    weeks = max(1, min(weeks, league.regular_weeks))
    bots = [t.model_copy(update={"agent": BotAgent(kind="bot", strategy="adp")}) for t in league.teams]
    copy = league.model_copy(update={
        "teams": bots, "weeks": weeks, "trades": league.trades.model_copy(update={"weeks": [weeks]}),
        "playoffs": league.playoffs.model_copy(update={"enabled": False}),
        "information": league.information.model_copy(update={"masking": "off"}),
        "llm": league.llm.model_copy(update={"max_fallback_rate": None})})
    prepared = prepared_for(copy)
    with tempfile.TemporaryDirectory(prefix="ffbench-sizes-") as tmp:
        run_sync(Engine(copy, prepared, tmp, progress=False).run())
        records = RunDir(tmp).decisions()
    by_kind: dict[str, list[tuple[int, dict]]] = {}
    for r in records:
        view = r.get("view")
        if isinstance(view, dict):
            by_kind.setdefault(r["decision"], []).append((len(json.dumps(view)), view))
    sample = Sample(weeks=weeks)
    for kind, views in by_kind.items():
        sample.views[kind] = [v for _, v in sorted(views, key=lambda x: -x[0])[:keep]]
    n = len(league.teams)
    draft = sum(1 for r in records if r.get("week") in (None, 0))
    sample.draft_decisions = draft / n
    sample.weekly_decisions = (len(records) - draft) / n / weeks
    return sample


def smallest_prompt(spec: LLMSpec, kind: str, view: dict, version: str) -> int:
    """Tokens of ``kind``'s prompt for ``view`` with every table shortened as far as it goes (litellm's count)."""
    from ffbench_lib.agents import fit
    from ffbench_lib.agents.prompts import fitted

    msgs, _ = fitted(kind, view, fit.levels(view), version, spec.system_in_user, spec.prompt)
    return count_tokens(spec.model, msgs)


def prompt_sizes(league: League, sample: Sample | None = None, ratios: dict[str, float] | None = None) -> list[dict]:
    """One row per LLM model setting and decision kind: the smallest prompt (the largest of the sample's views,
    shortened to the bone), scaled by the server's measured ``ratios`` (model -> server tokens per estimated
    token) where known, against the team's ``max_prompt_tokens`` and the model's context window."""
    specs = llm_specs(league)
    if not specs:
        return []
    sample = sample or sample_views(league)
    rows, seen = [], set()
    for team, spec in specs.items():
        key = (spec.model, spec.system_in_user, spec.max_prompt_tokens, spec.max_tokens)
        if key in seen:
            continue
        seen.add(key)
        window = context_window(spec.model) if not local_server(spec) else None
        ratio = (ratios or {}).get(spec.model)
        for kind, views in sorted(sample.views.items()):
            tokens = max(smallest_prompt(spec, kind, v, spec.prompt_version(league.llm.prompt_version)) for v in views)
            need = round(tokens * ratio) if ratio else tokens
            rows.append({"model": spec.model, "teams": [t for t, s in specs.items() if s == spec], "kind": kind,
                         "tokens": tokens, "server_tokens": need if ratio else None,
                         "max_prompt_tokens": spec.max_prompt_tokens, "max_tokens": spec.max_tokens,
                         "context_window": window})
    return rows


def prompt_problems(rows: list[dict], windows: dict[str, int] | None = None) -> list[str]:
    """A line per decision kind whose smallest prompt cannot fit a team's budget or its model's window, and per
    model whose ``max_prompt_tokens`` is above its window (prompts shortened to the budget would still overflow)."""
    out, seen = [], set()
    for r in rows:
        window = (windows or {}).get(r["model"]) or r["context_window"]
        if window and r["max_prompt_tokens"] and r["max_prompt_tokens"] > window and r["model"] not in seen:
            seen.add(r["model"])
            out.append(f"{r['model']} (team{'s' if len(r['teams']) > 1 else ''} {', '.join(r['teams'])}): "
                       f"max_prompt_tokens {r['max_prompt_tokens']:,} is above the model's context window of "
                       f"{window:,}, so a prompt shortened to it can still overflow; set max_prompt_tokens to at "
                       f"most {max(1, window - r['max_tokens']):,} (the window less max_tokens {r['max_tokens']:,}, "
                       "which some servers reserve)")
    for r in rows:
        need = r["server_tokens"] or r["tokens"]
        counted = "by the server's count" if r["server_tokens"] else "by litellm's estimate"
        window = (windows or {}).get(r["model"]) or r["context_window"]
        who = f"{r['model']} (team{'s' if len(r['teams']) > 1 else ''} {', '.join(r['teams'])})"
        if r["max_prompt_tokens"] and need > r["max_prompt_tokens"]:
            out.append(f"{who}: the {r['kind']} prompt needs {need:,} tokens {counted} even with every table "
                       f"shortened, above max_prompt_tokens {r['max_prompt_tokens']:,}: raise max_prompt_tokens (and "
                       "serve the model with a larger context), use smaller rosters, or leave this decision out "
                       f"of the league")
        elif window and need > window:
            out.append(f"{who}: the {r['kind']} prompt needs {need:,} tokens {counted} even with every table "
                       f"shortened, above the model's context window of {window:,}: serve the model with a larger "
                       "context, use smaller rosters, or leave this decision out of the league")
    return out


def guard_warning(league: League, sample: Sample) -> str | None:
    """The fallback guard never applies when a team makes fewer decisions in the season than
    ``llm.fallback_min_decisions``: say so (a short league then finishes whatever the engine repaired; its
    agents are still marked above ``max_fallback_rate`` in every table and figure)."""
    s = league.llm
    if s.max_fallback_rate is None or not llm_specs(league):
        return None
    per_team = sample.draft_decisions + sample.weekly_decisions * league.weeks
    if per_team >= s.fallback_min_decisions:
        return None
    return (f"llm.fallback_min_decisions is {s.fallback_min_decisions}, but a team makes about {per_team:.0f} decisions "
            f"in this league, so llm.max_fallback_rate ({s.max_fallback_rate:.0%}) can never stop a run whose answers "
            f"the engine repairs; set llm.fallback_min_decisions to about {max(1, int(per_team // 2))} to guard it")


# ------------------------------------------------------------------------------------------- online check

#: tokens of the over-long prompt that asks a local server for its window (its refusal names it)
PROBE_TOKENS = 40_000


def _window_probe(spec: LLMSpec, key: str | None) -> int | None:
    """A local server that lists no window (llama-cpp-python) states it when refusing a prompt longer than any
    local window (``Requested tokens (40002) exceed context window of 4096``): tokenizing is cheap, nothing is
    generated. A server that takes it (a window of 40,000 or more) is big enough for any ffbench prompt."""
    import httpx

    from ffbench_lib.llm.tokens import _WINDOW_IN_ERROR

    body = {"model": spec.model.split("/", 1)[-1], "max_tokens": 1,
            "messages": [{"role": "user", "content": "x " * PROBE_TOKENS}]}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        r = httpx.post(f"{spec.api_base.rstrip('/')}/chat/completions", json=body, headers=headers,
                       timeout=min(spec.timeout_s, 60))
    except httpx.HTTPError:
        return None
    if r.status_code == 200:
        return PROBE_TOKENS
    m = _WINDOW_IN_ERROR.search(r.text) or re.search(r"context window of (\d+)", r.text)
    return int(m.group(1).replace(",", "")) if m else None


def server_window(spec: LLMSpec, key: str | None = None) -> int | None:
    """A local server's context window: what it lists (vLLM's ``max_model_len``, llama.cpp's ``/props``), else
    what it says when refusing an over-long prompt (:func:`_window_probe`); None when it tells neither."""
    return _server_window(spec, key) or (_window_probe(spec, key) if local_server(spec) else None)


def _server_window(spec: LLMSpec, key: str | None) -> int | None:
    """The context window an OpenAI-compatible server reports (vLLM ``max_model_len``, llama.cpp ``n_ctx``)."""
    import httpx

    if not spec.api_base:
        return None
    base = spec.api_base.rstrip("/")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    name = spec.model.split("/", 1)[-1]
    for url in (f"{base}/models", f"{base.removesuffix('/v1')}/props"):
        try:
            r = httpx.get(url, headers=headers, timeout=10)
            data = r.json() if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            continue
        models = data.get("data") if isinstance(data, dict) and isinstance(data.get("data"), list) else []
        for m in sorted(models, key=lambda m: m.get("id") != name if isinstance(m, dict) else True):
            if isinstance(m, dict):
                meta = m.get("meta") if isinstance(m.get("meta"), dict) else {}
                n = m.get("max_model_len") or m.get("context_length") or meta.get("n_ctx") or meta.get("n_ctx_train")
                if isinstance(n, int) and n > 0:
                    return n
        gen = data.get("default_generation_settings") if isinstance(data, dict) else None
        if isinstance(gen, dict) and isinstance(gen.get("n_ctx"), int):
            return gen["n_ctx"]
    return None


def _price(spec: LLMSpec) -> str:
    import litellm

    if spec.input_cost_per_token is not None or spec.output_cost_per_token is not None:
        return "from the config"
    try:
        info = litellm.get_model_info(spec.model)
        if info.get("input_cost_per_token") is not None:
            return "litellm's price table"
    except Exception:  # noqa: BLE001 - not in the table
        pass
    return "unknown: cost_usd is a lower bound; set input_cost_per_token and output_cost_per_token"


async def check_endpoint(spec: LLMSpec, teams: list[str], settings) -> dict[str, Any]:
    """One cheap call to ``spec``'s model: what works and what does not, as a row of ``ffbench check``."""
    import litellm

    from ffbench_lib.llm.client import Budget, FatalLLMError, LLMClient, _fatal_message
    from ffbench_lib.llm.parse import parse_json
    from ffbench_lib.core.secrets import scrub

    row: dict[str, Any] = {"model": spec.model, "api_base": spec.api_base or "(provider default)", "teams": teams,
                           "key": "not needed (local server)" if local_server(spec) else "set", "reachable": None,
                           "model_found": None, "json_mode": None, "context_window": None, "price": _price(spec),
                           "prompt_tokens": None, "estimated_tokens": None, "ratio": None, "problems": []}
    var = missing_key(spec)
    if var:
        row["key"] = f"missing: {var} is not set"
        row["problems"].append(f"{var} is not set: export it (or set api_key_env)")
        return row
    client = LLMClient(spec, settings, None, Budget(None))
    try:
        kwargs = client._call_kwargs()
    except FatalLLMError as exc:
        row["key"], row["problems"] = "missing", [str(exc)]
        return row
    params = {**client.answer_params(), "max_tokens": min(spec.max_tokens, CHECK_MAX_TOKENS)}
    t0 = time.perf_counter()
    for attempt in range(2):
        try:
            resp = await litellm.acompletion(model=spec.model, messages=CHECK_MESSAGES, **params, **kwargs)
        except Exception as exc:  # noqa: BLE001 - classified below
            kind, text = classify(exc), scrub(str(exc))[:300]
            if attempt == 0 and "response_format" in params and "response_format" in text.lower():
                params.pop("response_format")
                row["json_mode"] = "refused by the server (answers are parsed from plain text)"
                continue
            if kind in ("auth", "missing_key", "permission"):
                row["key"] = "rejected" if kind != "missing_key" else "missing"
                row["reachable"] = kind != "missing_key"
            elif kind == "not_found":
                row["reachable"], row["model_found"] = True, False
            elif kind == "bad_url":
                row["reachable"] = False
            elif kind is None and any(w in type(exc).__name__ for w in ("Connection", "Timeout")):
                row["reachable"] = False
            row["problems"].append(_fatal_message("", spec, kind, type(exc).__name__, text) if kind else
                                   f"{type(exc).__name__}: {text}")
            return row
        break
    row["latency_s"] = round(time.perf_counter() - t0, 2)
    row["reachable"], row["model_found"] = True, True
    text = resp.choices[0].message.content if getattr(resp, "choices", None) else None
    parsed, _ = parse_json(text)
    if row["json_mode"] is None:
        row["json_mode"] = ("accepted" if "response_format" in params else "not offered by litellm for this model "
                            "(answers are parsed from plain text)")
    row["answer_is_json"] = parsed is not None
    usage = getattr(resp, "usage", None)
    row["prompt_tokens"] = getattr(usage, "prompt_tokens", None)
    row["estimated_tokens"] = count_tokens(spec.model, CHECK_MESSAGES)
    if row["prompt_tokens"] and row["estimated_tokens"]:
        row["ratio"] = round(row["prompt_tokens"] / row["estimated_tokens"], 3)
    row["system_role"] = await _system_role(spec, params, kwargs, row)
    row["context_window"] = context_window(spec.model) if not local_server(spec) else None
    row["context_window"] = row["context_window"] or server_window(spec, kwargs.get("api_key"))
    if not row["context_window"]:
        row["problems"].append("context window unknown: set max_prompt_tokens for these teams so prompts are "
                               "shortened to fit")
    return row


async def _system_role(spec: LLMSpec, params: dict, kwargs: dict, row: dict) -> str:
    """Whether the server's chat template keeps a system message: the same request with a system text in
    front must count about that many more prompt tokens (a template that drops it counts the same)."""
    import litellm

    if spec.system_in_user:
        return "not used (system_in_user: true)"
    if not row["prompt_tokens"]:
        return "not measured (the server reports no token counts)"
    with_system = [{"role": "system", "content": CHECK_SYSTEM}, *CHECK_MESSAGES]
    try:
        resp = await litellm.acompletion(model=spec.model, messages=with_system, **{**params, "max_tokens": 1},
                                         **kwargs)
    except Exception as exc:  # noqa: BLE001 - the first call worked: this one only informs
        return f"not measured ({type(exc).__name__})"
    more = (getattr(getattr(resp, "usage", None), "prompt_tokens", None) or 0) - row["prompt_tokens"]
    expected = (count_tokens(spec.model, with_system) - row["estimated_tokens"]) * (row["ratio"] or 1.0)
    if more < 0.3 * expected:
        row["problems"].append(f"the server counted {more} more prompt tokens with a system message of about "
                               f"{expected:.0f}: its chat template drops the system role (and with it the league's "
                               "rules); set system_in_user: true for these teams")
        return "dropped by the chat template"
    return f"kept ({more} tokens more with a system message of about {expected:.0f})"


async def _measure_ratio(spec: LLMSpec, row: dict, sample: Sample, version: str) -> None:
    """The server's tokens per estimated token on a real prompt (the largest of the sample's smallest prompts,
    sent once with ``max_tokens: 1``): a short message says little about a tokenizer on tables of ids and numbers."""
    import litellm

    from ffbench_lib.agents import fit
    from ffbench_lib.agents.prompts import fitted
    from ffbench_lib.llm.client import Budget, LLMClient

    kind, view = max(((k, v) for k, vs in sample.views.items() for v in vs[:1]),
                     key=lambda kv: smallest_prompt(spec, kv[0], kv[1], version))
    msgs, _ = fitted(kind, view, fit.levels(view), version, spec.system_in_user, spec.prompt)
    client = LLMClient(spec, None, None, Budget(None))
    try:
        resp = await litellm.acompletion(model=spec.model, messages=msgs, **{**client.answer_params(), "max_tokens": 1},
                                         **client._call_kwargs())
    except Exception as exc:  # noqa: BLE001 - the message says the prompt did not go through
        from ffbench_lib.llm.tokens import server_count

        n = server_count(str(exc))
        if n:
            row["prompt_tokens"], row["estimated_tokens"] = n, count_tokens(spec.model, msgs)
            row["ratio"], row["ratio_on"] = round(n / row["estimated_tokens"], 3), kind
        return
    n = getattr(getattr(resp, "usage", None), "prompt_tokens", None)
    if n:
        row["prompt_tokens"], row["estimated_tokens"] = n, count_tokens(spec.model, msgs)
        row["ratio"], row["ratio_on"] = round(n / row["estimated_tokens"], 3), kind


async def check_league(league: League, sample: Sample | None = None) -> list[dict[str, Any]]:
    specs = llm_specs(league)
    rows = []
    for (model, api_base, env), teams in endpoints(league).items():
        row = await check_endpoint(specs[teams[0]], teams, league.llm)
        if sample is not None and row["reachable"] and row["model_found"] and sample.views:
            await _measure_ratio(specs[teams[0]], row, sample, specs[teams[0]].prompt_version(league.llm.prompt_version))
        rows.append(row)
    return rows


def run_preflight(league: League) -> None:
    """Before a season is played: a warning per model whose key variable is unset; for LLM teams with prompt budgets,
    a :class:`ConfigError` for a decision whose smallest prompt cannot fit (litellm's estimate) or a budget above
    a local server's window (asked of it)."""
    import sys

    from ffbench_lib.config.errors import ConfigError

    specs = llm_specs(league)
    if not league.llm.replay_only:  # every team whose key is missing, not only the first one to be asked
        for line in key_warnings(league):
            print(f"warning: {line}", file=sys.stderr)
    if not any(s.max_prompt_tokens for s in specs.values()):
        return
    windows: dict[str, int] = {}
    if not league.llm.replay_only:
        for spec in {s.model: s for s in specs.values() if local_server(s) and s.max_prompt_tokens}.values():
            window = server_window(spec)
            if window:
                windows[spec.model] = window
    problems = prompt_problems(prompt_sizes(league), windows)
    if problems:
        raise ConfigError(problems, what="league for its LLM teams")


def format_check(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        out.append(f"{r['model']} at {r['api_base']} (teams {', '.join(r['teams'])})")
        ratio = (f"{r['prompt_tokens']} prompt tokens by the server's count, {r['estimated_tokens']} by litellm's "
                 f"estimate (x{r['ratio']}{', on the ' + r['ratio_on'] + ' prompt' if r.get('ratio_on') else ''})"
                 if r.get("ratio") else "not measured")
        for label, value in (("key", r["key"]), ("endpoint reachable", _yes(r["reachable"])),
                             ("model found", _yes(r["model_found"])), ("JSON mode", r["json_mode"] or "not checked"),
                             ("context window", f"{r['context_window']:,} tokens" if r["context_window"] else "unknown"),
                             ("price", r["price"]), ("token count", ratio),
                             ("system role", r.get("system_role") or "not checked")):
            out.append(f"  {label:<19} {value}")
        for p in r["problems"]:
            out.append(f"  problem: {p}")
    return "\n".join(out)


def _yes(v: bool | None) -> str:
    return "not checked" if v is None else "yes" if v else "no"


def run_check(league: League, sample: Sample | None = None) -> list[dict[str, Any]]:
    from ffbench_lib.core.aio import run_sync

    return run_sync(check_league(league, sample))


__all__ = ["CHECK_MESSAGES", "Sample", "run_preflight", "server_window", "check_endpoint", "check_league", "endpoints", "format_check",
           "guard_warning", "key_warnings", "prompt_problems", "prompt_sizes", "run_check", "sample_views",
           "smallest_prompt"]
