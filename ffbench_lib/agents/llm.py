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

from ffbench_lib.config.league import LLMAgent as LLMSpec
from ffbench_lib.llm import MAX_ANSWER_CHARS, CallResult, FatalCallFailed, FatalLLMError, LLMClient, parse_json
from ffbench_lib.llm.tokens import context_window, count_tokens, estimated, server_count
from ffbench_lib.core.secrets import register_credentials, scrub
from ffbench_lib.game.decisions import REGISTRY
from ffbench_lib.agents import fit, tools
from ffbench_lib.agents.base import Agent, Answer
from ffbench_lib.agents.prompts import fitted, fold_system, messages as render

REASK = ("Your previous answer was invalid: {problems}. Reply again with exactly one JSON object that follows the "
         "answer schema, using only player ids shown in the tables.")
REASK_ECHO_CHARS = 4000  # of an invalid answer, echoed back in the re-ask
#: added to a re-ask that would otherwise repeat the previous request byte for byte (the same invalid answer): a
#: repeated request would be answered from the replay cache, so max_reasks would count re-asks never made
REASK_AGAIN = " (Re-ask {n} of {of}: your answer repeated the same mistake.)"
#: a budget counted with an estimated tokenizer is checked against the server's own count of a sample (once per
#: team, when a prompt that fits the budget by the estimate comes within CALIBRATE_NEAR of it), with this margin
CALIBRATE_NEAR = 0.75
CALIBRATION_MARGIN = 1.05


class LLMAgent(Agent):
    """Generic over decision kinds: a kind is its prompt template and its ``validate``."""

    def __init__(self, team: str, seed: int, spec: LLMSpec):
        super().__init__(team, seed)
        self.spec = spec
        self.agent_id = spec.agent_id
        self.ctx = None
        self.client: LLMClient | None = None
        #: server tokens per estimated token (None: not measured; 1.0 at least: a budget is never loosened)
        self._ratio: float | None = None
        self.calibration: dict | None = None  # what the calibration measured (and warned of)
        register_credentials(spec.extra)  # before the run writes config.yaml (validation rejects these anyway)

    def bind(self, ctx) -> None:
        """Called by the engine with the run's ledger, cache, budget and settings."""
        self.ctx = ctx
        self.client = LLMClient(self.spec, ctx.settings, ctx.cache, ctx.budget, team=self.team)

    # -- prompts ---------------------------------------------------------------------------------------
    def _fold(self, msgs: list[dict[str, str]]) -> list[dict[str, str]]:
        return fold_system(msgs) if self.spec.system_in_user else msgs

    def _tokens(self, msgs: list[dict[str, str]]) -> int:
        return count_tokens(self.spec.model, msgs)

    def _fits(self, tokens: int) -> bool:
        """Within ``max_prompt_tokens`` by the server's count as far as it is known (see :meth:`_calibrate`)."""
        budget = self.spec.max_prompt_tokens
        return budget is None or tokens * (self._ratio or 1.0) <= budget

    async def _calibrate(self, decision: str, view: dict, version: str) -> None:
        """Measure the server's tokens per estimated token once, on this decision's prompt with every table
        shortened (the smallest, most likely to fit), with ``max_tokens: 1``; replayed from the cache like any
        call. A ratio above 1 (the server counts more) tightens the budget, with :data:`CALIBRATION_MARGIN`.
        Unless ``system_in_user``, the user message alone is counted too: a count that hardly changes without
        the system message means the chat template drops it (a warning naming ``system_in_user``)."""
        self._ratio = 1.0
        short, _ = fit.shorten(view, fit.levels(view))
        whole = render(decision, short, version, self.spec.prompt)
        samples = [self._fold(whole)]
        if not self.spec.system_in_user and any(m["role"] == "system" for m in whole):
            samples.append([m for m in whole if m["role"] != "system"])
        calls = []
        for sample in samples:
            est = self._tokens(sample)
            try:
                call = await self.client.complete(sample, max_tokens=1)
            except Exception as exc:  # noqa: BLE001 - a configuration error stops the run; others leave the estimate
                self._ledger("token_calibration", view, sample, 0, None, None, [], error=scrub(str(exc))[:1000],
                             attempts=getattr(exc, "attempts", []), prompt_tokens_estimated=est)
                if isinstance(exc, FatalCallFailed) and exc.kind == "context":
                    raise self._context_error(decision, est, exc) from None
                if isinstance(exc, (FatalCallFailed, FatalLLMError)):
                    raise
                return
            calls.append((sample, est, call))
        counts = [(est, call.usage.get("prompt_tokens")) for _, est, call in calls]
        (est, server), warning = counts[0], None
        if len(counts) == 2 and server and counts[1][1]:
            (bare_est, bare), sys_tokens = counts[1], counts[0][0] - counts[1][0]
            if server - bare < 0.3 * sys_tokens * (bare / bare_est):
                est, server = bare_est, bare
                warning = (f"team {self.team!r} ({self.spec.model}): the server counted {counts[0][1]:,} prompt "
                           f"tokens with the system message and {bare:,} without it (about {sys_tokens:,} more "
                           "expected): its chat template drops the system role, and with it the league's rules; set "
                           "system_in_user: true")
        if server and est and server > est:
            self._ratio = server / est * CALIBRATION_MARGIN
        self.calibration = {"for": decision, "estimated": est, "server": server, "ratio": round(self._ratio, 4),
                            **({"warning": warning} if warning else {})}
        for i, (sample, n, call) in enumerate(calls):
            self._ledger("token_calibration", view, sample, 0, call, None, [], prompt_tokens_estimated=n,
                         calibration=self.calibration if i == len(calls) - 1 else {"for": decision, "estimated": n})
        if warning:
            from tqdm.auto import tqdm
            import sys

            tqdm.write(f"warning: {warning}", file=sys.stderr)

    async def _prompt(self, decision: str, view: dict, version: str) -> tuple[list[dict[str, str]], list[str]]:
        """The first prompt of a decision, shortened to ``max_prompt_tokens`` when the team sets one (by the
        server's count once measured: models whose tokenizer litellm only estimates are calibrated first)."""
        budget = self.spec.max_prompt_tokens
        top = fit.levels(view) if budget else 0
        for level in range(top + 1):
            msgs, notes = fitted(decision, view, level, version, self.spec.system_in_user, self.spec.prompt)
            tokens = self._tokens(msgs) if budget is not None else 0
            if (budget is not None and self._ratio is None and budget * CALIBRATE_NEAR < tokens <= budget
                    and estimated(self.spec.model)):  # fits by the estimate, but near enough for it to matter
                await self._calibrate(decision, view, version)
            if self._fits(tokens):
                return msgs, notes
        counted = (f" (x{self._ratio:.2f} by the server's count)" if self._ratio and self._ratio > 1 else "")
        raise FatalLLMError(f"team {self.team!r} ({self.spec.model}): the {decision} prompt needs "
                            f"{self._tokens(msgs):,} tokens{counted} even with every table shortened; max_prompt_tokens "
                            f"is {budget:,}: raise it (and the model's context window) or use smaller rosters")

    def _reask(self, first: list[dict[str, str]], asked: list[list[dict[str, str]]], text: str | None,
               problems: list[str], reask: int = 1) -> list[dict[str, str]] | None:
        """The first prompt plus the latest invalid answer and what was wrong with it (earlier re-ask turns are
        not repeated: each would add the echo of a bad answer); over ``max_prompt_tokens`` the echo is dropped;
        None if even that is too long."""
        answer = text or ""
        if len(answer) > REASK_ECHO_CHARS:
            answer = answer[:REASK_ECHO_CHARS] + " [...cut]"
        turn = [{"role": "assistant", "content": answer},
                {"role": "user", "content": REASK.format(problems="; ".join(problems))}]
        for candidate in (first + turn, first + [{**turn[0], "content": ""}, turn[1]]):
            if candidate in asked:  # the same request again would be answered from the cache: say it is a re-ask
                candidate = [*candidate[:-1], {**candidate[-1], "content": candidate[-1]["content"] + REASK_AGAIN.format(
                    n=reask, of=self.ctx.settings.max_reasks)}]
            if self._fits(self._tokens(candidate)):
                return candidate
        return None

    def _context_error(self, decision: str, tokens: int, exc: FatalCallFailed) -> FatalLLMError:
        window = context_window(self.spec.model, exc.error)
        size = f"{window:,} tokens" if window else "smaller (the server did not say how large)"
        server = server_count(exc.error)
        count = (f"{server:,} tokens by the server's count ({tokens:,} by litellm's estimate)" if server else
                 f"about {tokens:,} tokens (litellm's tokenizer)")
        budget = self.spec.max_prompt_tokens
        fix = (f"max_prompt_tokens is {budget:,}: lower it below the window less max_tokens" if budget else
               "Set max_prompt_tokens for this team (prompts are then shortened to fit)")
        return FatalLLMError(
            f"team {self.team!r} ({self.spec.model}): the {decision} prompt is {count} and the model's context "
            f"window is {size}; the window must also hold max_tokens={self.spec.max_tokens} on some servers. "
            f"{fix}, lower max_tokens, or serve the model with a larger context")

    # -- one decision ------------------------------------------------------------------------------------
    async def decide(self, kind: str, view: dict) -> Answer:
        return await self._decide(kind, view)

    async def _decide(self, decision: str, view: dict) -> Answer:
        if self.client is None:
            raise FatalLLMError("LLMAgent used before the engine bound it to a run")
        settings = self.ctx.settings
        version = self.spec.prompt_version(settings.prompt_version)
        call, due = None, {}
        if self.spec.mode == "tools":  # the rounds of tool calls end with the call that answered
            first, call, due = await self._use_tools(decision, view, version)
            trimmed = []
        else:
            first, trimmed = await self._prompt(decision, view, version)
        msgs, asked = first, []
        parsed: dict[str, Any] | None = None
        problems: list[str] = []
        text = None
        for reask in range(settings.max_reasks + 1):
            tokens = self._tokens(msgs)
            meta = {"prompt_tokens_estimated": tokens, "trimmed": trimmed or None}
            if call is None or reask:
                call = await self._call(decision, view, msgs, reask, meta, **due)
            text = call.text
            parsed, problems = self._judge(decision, view, call)
            self._ledger(decision, view, msgs, reask, call, parsed, problems, **meta)
            if not problems:
                break
            if reask < settings.max_reasks:
                asked.append(msgs)
                nxt = self._reask(first, asked, text, problems, reask + 1)
                if nxt is None:
                    problems = problems + ["not re-asked: a re-ask would exceed max_prompt_tokens"]
                    break
                msgs = nxt
        answer = dict(parsed or {})
        answer["_llm"] = {"raw_text": text, "reasks": reask, "invalid": problems or None, "prompt_version": version}
        return answer

    async def _call(self, decision: str, view: dict, msgs: list[dict], reask: int, meta: dict,
                    **tool_kw: Any) -> CallResult:
        """One call; every call has its ledger line, also one that never got an answer."""
        try:
            return await self.client.complete(msgs, **tool_kw)
        except Exception as exc:
            self._ledger(decision, view, msgs, reask, None, None, [], error=scrub(str(exc))[:1000],
                         attempts=getattr(exc, "attempts", []), **meta)
            if isinstance(exc, FatalCallFailed) and exc.kind == "context":
                raise self._context_error(decision, meta["prompt_tokens_estimated"], exc) from None
            raise

    async def _use_tools(self, decision: str, view: dict, version: str) -> tuple[list[dict], CallResult, dict]:
        """Tools mode: the short prompt, then up to ``max_tool_rounds`` rounds in which the model may call the
        view's tools (each call and result in that round's ledger line); the last round's answer is due
        (``tool_choice: none``). Returns the conversation so far, the call that answered, and how a re-ask calls."""
        specs = tools.specs(decision, view)
        msgs = tools.messages(decision, view, version, self.spec.prompt, self.spec.system_in_user)
        budget = self.spec.max_prompt_tokens
        if budget is not None and not self._fits(self._tokens(msgs)):
            raise FatalLLMError(f"team {self.team!r} ({self.spec.model}): the {decision} tools prompt needs "
                                f"{self._tokens(msgs):,} tokens; max_prompt_tokens is {budget:,}: raise it")
        due = {"tools": specs, "tool_choice": "none"}
        for rnd in range(self.spec.max_tool_rounds + 1):
            last = rnd == self.spec.max_tool_rounds
            meta = {"prompt_tokens_estimated": self._tokens(msgs), "trimmed": None}
            call = await self._call(decision, view, msgs, 0, meta, **(due if last else {"tools": specs}))
            if last or not call.tool_calls:
                return msgs, call, due
            results = [{"id": c["id"], "name": c["name"], "content": tools.run(decision, view, c["name"], c["arguments"])}
                       for c in call.tool_calls]
            nxt = [*msgs, {"role": "assistant", "content": call.text, "tool_calls": [
                       {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                       for c in call.tool_calls]},
                   *({"role": "tool", "tool_call_id": r["id"], "content": r["content"]} for r in results)]
            if budget is not None and not self._fits(self._tokens(nxt)):  # the answer is due without them
                nxt = [*nxt[:len(msgs) + 1], *({"role": "tool", "tool_call_id": r["id"], "content":
                       "not shown: the result would exceed max_prompt_tokens; answer from what you have"}
                       for r in results)]
                self._ledger(decision, view, msgs, 0, call, None, [], tool_round=rnd, tool_results=results, **meta)
                msgs = nxt
                meta = {"prompt_tokens_estimated": self._tokens(msgs), "trimmed": None}
                return msgs, await self._call(decision, view, msgs, 0, meta, **due), due
            self._ledger(decision, view, msgs, 0, call, None, [], tool_round=rnd, tool_results=results, **meta)
            msgs = nxt
        raise AssertionError("unreachable")  # pragma: no cover

    def _judge(self, decision: str, view: dict, call: CallResult) -> tuple[dict[str, Any] | None, list[str]]:
        """Parse and check one answer; whatever is wrong with it is a problem to re-ask about, never a crash."""
        if call.truncated:
            return None, [f"the answer was {call.answer_chars:,} characters; at most {MAX_ANSWER_CHARS:,} are "
                          "accepted: reply with one short JSON object"]
        try:
            last = self.spec.prompt is not None and self.spec.prompt.reasoning == "full"  # reasoning, then the answer
            parsed, perr = parse_json(call.text, last=last)
            problems = [perr] if perr else REGISTRY[decision].validate(parsed, view)
        except Exception as exc:  # noqa: BLE001 - an answer shape the checks did not foresee
            parsed, problems = None, [f"the answer could not be read ({type(exc).__name__}); reply with exactly one "
                                      "JSON object that follows the answer schema"]
        if call.finish_reason == "length" and problems:
            problems.append("the answer hit the output-token limit")
        return parsed, problems

    def _ledger(self, decision, view, msgs, reask, call: CallResult | None, parsed, problems, error=None,
                attempts=None, prompt_tokens_estimated=None, trimmed=None, calibration=None, tool_round=None,
                tool_results=None) -> None:
        attempts = call.attempts if call else (attempts or [])
        extra = {"calibration": calibration} if calibration is not None else {}
        if self.spec.mode == "tools":  # which round, the calls the model made and what the tools returned
            extra |= {"mode": "tools", "tool_round": tool_round, "tool_calls": call.tool_calls if call else None,
                      "tool_results": tool_results}
        self.ctx.log({**extra,
            "team": self.team, "model": self.spec.model, "agent": self.agent_id, "decision": decision,
            "week": view.get("week"), "pick": view.get("pick"), "reask": reask,
            "prompt_version": self.spec.prompt_version(self.ctx.settings.prompt_version),
            **({"prompt": self.spec.prompt.model_dump(mode="json")} if self.spec.prompt is not None else {}),
            "messages": msgs,
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
            "wait_s": call.wait_s if call else None,
            "attempts": attempts, "retries": max(0, len(attempts) - 1),  # retries = attempts after the first
            "cache_hit": call.cache_hit if call else False, "error": error,
            "cache_error": call.cache_error if call else None,
        })
