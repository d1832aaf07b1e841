"""LLMAgent: the agent interface answered by a model through litellm.

Each decision renders the view into the versioned prompt templates (shortened to the team's
``max_prompt_tokens``, see ``fit``; the system text folded into the user message with ``system_in_user``),
calls the model, parses one JSON object and checks it with the decision type's ``validate``, the very rule the
engine judges with. An invalid answer is re-asked up to ``llm.max_reasks`` times with the specific errors; after that the
last answer goes to the engine, which repairs it and records ``decided_by: fallback``. Every call, failed or
not, is one ledger line in ``llm_calls.jsonl``.
"""
from __future__ import annotations

from typing import Any

from ..config import LLMAgent as LLMSpec
from ..llm import MAX_ANSWER_CHARS, CallResult, FatalCallFailed, FatalLLMError, LLMClient, parse_json
from ..llm.tokens import context_window, count_tokens
from ..secrets import register_credentials, scrub
from ..decisions import REGISTRY
from . import fit
from .base import Agent, Answer
from .prompts import messages as render

REASK = ("Your previous answer was invalid: {problems}. Reply again with exactly one JSON object that follows the "
         "answer schema, using only player ids shown in the tables.")
REASK_ECHO_CHARS = 4000  # of an invalid answer, echoed back in the re-ask


class LLMAgent(Agent):
    """Generic over decision kinds: a kind is its prompt template and its ``validate``."""

    def __init__(self, team: str, seed: int, spec: LLMSpec):
        super().__init__(team, seed)
        self.spec = spec
        self.agent_id = spec.agent_id
        self.ctx = None
        self.client: LLMClient | None = None
        register_credentials(spec.extra)  # before the run writes config.yaml (validation rejects these anyway)

    def bind(self, ctx) -> None:
        """Called by the engine with the run's ledger, cache, budget and settings."""
        self.ctx = ctx
        self.client = LLMClient(self.spec, ctx.settings, ctx.cache, ctx.budget, team=self.team)

    # -- prompts ---------------------------------------------------------------------------------------
    def _fold(self, msgs: list[dict[str, str]]) -> list[dict[str, str]]:
        """``system_in_user``: the system text goes in front of the first user message (some chat templates
        silently drop the system role)."""
        if not self.spec.system_in_user:
            return msgs
        system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system")
        rest = [dict(m) for m in msgs if m["role"] != "system"]
        first = next((m for m in rest if m["role"] == "user"), None)
        if system and first is not None:
            first["content"] = f"{system}\n\n{first['content']}"
        return rest

    def _tokens(self, msgs: list[dict[str, str]]) -> int:
        return count_tokens(self.spec.model, msgs)

    def _prompt(self, decision: str, view: dict, version: str) -> tuple[list[dict[str, str]], list[str]]:
        """The first prompt of a decision, shortened to ``max_prompt_tokens`` when the team sets one."""
        budget = self.spec.max_prompt_tokens
        top = fit.levels(view) if budget else 0
        for level in range(top + 1):
            short, notes = fit.shorten(view, level)
            msgs = render(decision, short, version)
            if notes:
                msgs = [dict(m) for m in msgs]
                user = next(m for m in msgs if m["role"] == "user")
                user["content"] += "\n\n" + fit.note(notes)
            msgs = self._fold(msgs)
            if budget is None or self._tokens(msgs) <= budget:
                return msgs, notes
        raise FatalLLMError(f"team {self.team!r} ({self.spec.model}): the {decision} prompt needs "
                            f"{self._tokens(msgs):,} tokens even with every table shortened; max_prompt_tokens is "
                            f"{budget:,}: raise it (and the model's context window) or use smaller rosters")

    def _reask(self, first: list[dict[str, str]], msgs: list[dict[str, str]], text: str | None,
               problems: list[str]) -> list[dict[str, str]] | None:
        """The conversation plus the invalid answer and what was wrong with it. Over ``max_prompt_tokens``,
        older re-ask turns are dropped, then the echo of the invalid answer; None if even that is too long."""
        answer = text or ""
        if len(answer) > REASK_ECHO_CHARS:
            answer = answer[:REASK_ECHO_CHARS] + " [...cut]"
        turn = [{"role": "assistant", "content": answer},
                {"role": "user", "content": REASK.format(problems="; ".join(problems))}]
        budget = self.spec.max_prompt_tokens
        for candidate in (msgs + turn, first + turn, first + [{**turn[0], "content": ""}, turn[1]]):
            if budget is None or self._tokens(candidate) <= budget:
                return candidate
        return None

    def _context_error(self, decision: str, tokens: int, exc: FatalCallFailed) -> FatalLLMError:
        window = context_window(self.spec.model, exc.error)
        size = f"{window:,} tokens" if window else "smaller (the server did not say how large)"
        return FatalLLMError(
            f"team {self.team!r} ({self.spec.model}): the {decision} prompt is about {tokens:,} tokens (litellm's "
            f"tokenizer) and the model's context window is {size}; the window must also hold max_tokens="
            f"{self.spec.max_tokens} on some servers. Set max_prompt_tokens for this team (prompts are then "
            "shortened to fit), lower max_tokens, or serve the model with a larger context")

    # -- one decision ------------------------------------------------------------------------------------
    async def decide(self, kind: str, view: dict) -> Answer:
        return await self._decide(kind, view)

    async def _decide(self, decision: str, view: dict) -> Answer:
        if self.client is None:
            raise FatalLLMError("LLMAgent used before the engine bound it to a run")
        settings = self.ctx.settings
        version = settings.prompt_version
        first, trimmed = self._prompt(decision, view, version)
        msgs = first
        parsed: dict[str, Any] | None = None
        problems: list[str] = []
        text = None
        for reask in range(settings.max_reasks + 1):
            tokens = self._tokens(msgs)
            meta = {"prompt_tokens_estimated": tokens, "trimmed": trimmed or None}
            try:
                call = await self.client.complete(msgs)
            except Exception as exc:  # every call has its ledger line, also one that never got an answer
                self._ledger(decision, view, msgs, reask, None, None, [], error=scrub(str(exc))[:1000],
                             attempts=getattr(exc, "attempts", []), **meta)
                if isinstance(exc, FatalCallFailed) and exc.kind == "context":
                    raise self._context_error(decision, tokens, exc) from None
                raise
            text = call.text
            parsed, problems = self._judge(decision, view, call)
            self._ledger(decision, view, msgs, reask, call, parsed, problems, **meta)
            if not problems:
                break
            if reask < settings.max_reasks:
                nxt = self._reask(first, msgs, text, problems)
                if nxt is None:
                    problems = problems + ["not re-asked: a re-ask would exceed max_prompt_tokens"]
                    break
                msgs = nxt
        answer = dict(parsed or {})
        answer["_llm"] = {"raw_text": text, "reasks": reask, "invalid": problems or None, "prompt_version": version}
        return answer

    @staticmethod
    def _judge(decision: str, view: dict, call: CallResult) -> tuple[dict[str, Any] | None, list[str]]:
        """Parse and check one answer; whatever is wrong with it is a problem to re-ask about, never a crash."""
        if call.truncated:
            return None, [f"the answer was {call.answer_chars:,} characters; at most {MAX_ANSWER_CHARS:,} are "
                          "accepted: reply with one short JSON object"]
        try:
            parsed, perr = parse_json(call.text)
            problems = [perr] if perr else REGISTRY[decision].validate(parsed, view)
        except Exception as exc:  # noqa: BLE001 - an answer shape the checks did not foresee
            parsed, problems = None, [f"the answer could not be read ({type(exc).__name__}); reply with exactly one "
                                      "JSON object that follows the answer schema"]
        if call.finish_reason == "length" and problems:
            problems.append("the answer hit the output-token limit")
        return parsed, problems

    def _ledger(self, decision, view, msgs, reask, call: CallResult | None, parsed, problems, error=None,
                attempts=None, prompt_tokens_estimated=None, trimmed=None) -> None:
        attempts = call.attempts if call else (attempts or [])
        self.ctx.log({
            "team": self.team, "model": self.spec.model, "agent": self.agent_id, "decision": decision,
            "week": view.get("week"), "pick": view.get("pick"), "reask": reask,
            "prompt_version": self.ctx.settings.prompt_version, "messages": msgs,
            "request_params": self.client.request_params(), "prompt_tokens_estimated": prompt_tokens_estimated,
            "trimmed": trimmed,
            "response": call.text if call else None, "finish_reason": call.finish_reason if call else None,
            "answer_chars": call.answer_chars if call else None,
            "answer_truncated": call.truncated if call else None,
            "parsed": parsed, "problems": problems or None,
            "prompt_tokens": call.usage.get("prompt_tokens") if call else None,
            "completion_tokens": call.usage.get("completion_tokens") if call else None,
            "reasoning_tokens": call.usage.get("reasoning_tokens") if call else None,
            "cost_usd": call.cost_usd if call else None, "latency_s": call.latency_s if call else None,
            "attempts": attempts, "retries": max(0, len(attempts) - 1),  # retries = attempts after the first
            "cache_hit": call.cache_hit if call else False, "error": error,
            "cache_error": call.cache_error if call else None,
        })
