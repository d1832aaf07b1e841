"""LLMAgent: the agent interface answered by a model through litellm.

Each decision renders the view into the versioned prompt templates, calls the model, parses one JSON object
and checks it against the view with the same rules the engine applies. An invalid answer is re-asked up to
``llm.max_reasks`` times with the specific errors; after that the last answer goes to the engine, which
repairs it and records ``decided_by: fallback``. Every call is one ledger line in ``llm_calls.jsonl``.
"""
from __future__ import annotations

from typing import Any

from ..config import LLMAgent as LLMSpec
from ..llm import CallResult, FatalLLMError, LLMCallFailed, LLMClient, parse_json
from ..rules import draft as draft_rules
from ..rules.lineup import validate_and_repair
from .base import Agent, Answer
from .bots import roster_rules
from .prompts import messages as render

REASK = ("Your previous answer was invalid: {problems}. Reply again with exactly one JSON object that follows the "
         "answer schema, using only player ids shown in the tables.")


def _ids(x: Any) -> list[str] | None:
    if isinstance(x, (list, tuple)) and all(isinstance(i, (str, int)) for i in x):
        return [str(i) for i in x]
    return None


def check_answer(decision: str, answer: dict[str, Any], view: dict) -> list[str]:
    """Problems with an answer as far as the view can tell (the engine's rules remain the judge)."""
    if decision == "draft_shortlist":
        avail = [p for ps in view["available"].values() for p in ps]
        positions = {p["id"]: p["pos"] for p in avail}
        _, problems, _ = draft_rules.validate_shortlist(answer, [p["id"] for p in avail], positions,
                                                        view["legal_positions"], view["shortlist_size"])
        return problems
    if decision == "draft_pick":
        detail = view["shortlist_detail"]
        positions = {p["id"]: p["pos"] for p in detail}
        _, problems, _ = draft_rules.validate_pick(answer, [p["id"] for p in detail], positions,
                                                   view["legal_positions"], {})
        return problems
    if decision == "set_lineup":
        positions = {p["id"]: p["pos"] for p in view["players"]}
        return validate_and_repair(answer.get("lineup"), positions, {}, roster_rules(view)).problems
    action = answer.get("action")
    allowed = {"propose_trade": {"propose", "pass"}, "respond_to_offer": {"accept", "reject", "counter"},
               "reply_to_counter": {"accept", "withdraw", "final_counter"},
               "final_decision": {"accept", "reject"}}[decision]
    if action not in allowed:
        return [f"'action' must be one of {sorted(allowed)} (got {action!r})"]
    if action not in ("propose", "counter", "final_counter"):
        return []
    mine = {p["id"] for p in view["my_roster"]}
    if action == "propose":
        teams = {o["team"]: o for o in view["other_teams"]}
        other = teams.get(answer.get("to_team"))
        if other is None:
            return [f"'to_team' must be one of {sorted(teams)}"]
    else:
        other = view["other_teams"][0]
    theirs = {p["id"] for p in other["roster"]}
    give, get = _ids(answer.get("give")), _ids(answer.get("get"))
    if give is None or get is None:
        return ["'give' and 'get' must be lists of player ids"]
    problems = [f"{p} is not on your roster" for p in give if p not in mine]
    problems += [f"{p} was already traded this week" for p in give + get if p in set(view.get("locked_players", []))]
    problems += [f"{p} is not on {other['team']}'s roster" for p in get if p not in theirs]
    size = len(view["offer"]["you_give"]) if "offer" in view else None
    if len(give) != len(get):
        problems.append(f"unequal counts ({len(give)} for {len(get)}); both sides must move the same number")
    elif not 1 <= len(give) <= view["max_players_per_side"]:
        problems.append(f"{len(give)} players per side; allowed 1..{view['max_players_per_side']}")
    elif size is not None and len(give) != size:
        problems.append(f"a counter must keep {size} player(s) per side")
    return problems


def _decision_method(decision: str):
    """Every decision point is the same call with its own prompt template."""
    async def method(self: "LLMAgent", view: dict) -> Answer:
        return await self._decide(decision, view)

    method.__name__ = decision
    return method


class LLMAgent(Agent):
    draft_shortlist = _decision_method("draft_shortlist")
    draft_pick = _decision_method("draft_pick")
    set_lineup = _decision_method("set_lineup")
    propose_trade = _decision_method("propose_trade")
    respond_to_offer = _decision_method("respond_to_offer")
    reply_to_counter = _decision_method("reply_to_counter")
    final_decision = _decision_method("final_decision")

    def __init__(self, team: str, seed: int, spec: LLMSpec):
        super().__init__(team, seed)
        self.spec = spec
        self.agent_id = f"llm:{spec.model}"
        self.ctx = None
        self.client: LLMClient | None = None

    def bind(self, ctx) -> None:
        """Called by the engine with the run's ledger, cache, budget and settings."""
        self.ctx = ctx
        self.client = LLMClient(self.spec, ctx.settings, ctx.cache, ctx.budget)

    async def _decide(self, decision: str, view: dict) -> Answer:
        if self.client is None:
            raise FatalLLMError("LLMAgent used before the engine bound it to a run")
        version = self.ctx.settings.prompt_version
        msgs = render(decision, view, version)
        parsed: dict[str, Any] | None = None
        problems: list[str] = []
        text = None
        for reask in range(self.ctx.settings.max_reasks + 1):
            try:
                call = await self.client.complete(msgs)
            except LLMCallFailed as exc:
                self._ledger(decision, view, msgs, reask, None, None, [], error=str(exc), attempts=exc.attempts)
                raise
            text = call.text
            parsed, perr = parse_json(text)
            problems = [perr] if perr else check_answer(decision, parsed, view)
            if call.finish_reason == "length" and problems:
                problems.append("the answer hit the output-token limit")
            self._ledger(decision, view, msgs, reask, call, parsed, problems)
            if not problems:
                break
            if reask < self.ctx.settings.max_reasks:
                msgs = msgs + [{"role": "assistant", "content": text or ""},
                               {"role": "user", "content": REASK.format(problems="; ".join(problems))}]
        answer = dict(parsed or {})
        answer["_llm"] = {"raw_text": text, "reasks": reask, "invalid": problems or None, "prompt_version": version}
        return answer

    def _ledger(self, decision, view, msgs, reask, call: CallResult | None, parsed, problems, error=None,
                attempts=None) -> None:
        self.ctx.log({
            "team": self.team, "model": self.spec.model, "agent": self.agent_id, "decision": decision,
            "week": view.get("week"), "pick": view.get("pick"), "reask": reask,
            "prompt_version": self.ctx.settings.prompt_version, "messages": msgs,
            "response": call.text if call else None, "finish_reason": call.finish_reason if call else None,
            "parsed": parsed, "problems": problems or None,
            "prompt_tokens": call.usage.get("prompt_tokens") if call else None,
            "completion_tokens": call.usage.get("completion_tokens") if call else None,
            "reasoning_tokens": call.usage.get("reasoning_tokens") if call else None,
            "cost_usd": call.cost_usd if call else None, "latency_s": call.latency_s if call else None,
            "attempts": call.attempts if call else attempts, "retries": max(0, len((call.attempts if call else attempts) or []) - (1 if call else 0)),
            "cache_hit": call.cache_hit if call else False, "error": error,
        })

