"""A local OpenAI-compatible chat server with a scripted policy and faults on demand.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 so the real litellm path (``openai/<name>`` with
``api_base``) can be exercised without any provider: the policy reads the ids and numbers in ffbench's prompt
tables and answers like a sensible manager; faults are injected with a seeded probability and counted.

Faults: ``429``, ``500``, ``slow`` (sleeps past the client's timeout), ``malformed`` (broken JSON), ``prose``
(JSON inside prose), ``fence`` (JSON in a code fence), ``hallucinated`` (unknown player ids), ``illegal``
(an illegal lineup or a player from the wrong position), ``empty`` (no content), ``truncated`` (cut off,
``finish_reason: length``). ``prose`` and ``fence`` are recoverable by the parser; the others are not.
``slow`` holds the answer until the client hangs up (or ``slow_s`` passes), so it never races the timeout.

Opt-in faults (not in the default mix): ``401``/``403``/``404`` (bad key, no permission, unknown model, as
OpenAI words them), ``nested`` (JSON nested 5,000 deep: a RecursionError for a naive parser), ``huge`` (a 1 MB
answer). ``context_window`` answers OpenAI's ``context_length_exceeded`` 400 when a prompt is longer than that
(4 characters a token). ``fault_decisions`` limits faults to the answers of the decisions it names.
The knowledge probe (``DECISION: knowledge_probe``) is answered from ``probe_knowledge`` (``{"points": {player name:
season points}, "top5": {position: [names]}}``, names as the prepared players table spells them), so the server
"knows" the season; without it, with each position's typical season (``PROBE_GUESS``), as a model that does not.
Each request's ``X-FFBench-Attempt`` header is logged, so a test can match the client's ledger to the
requests this server really received. ``spans`` holds each request's start and end time; :func:`critical_path`
finds the longest chain of them that ran one after another (the calls a season waited for).

From the command line (a local model stand-in for ``params/local_llm.yaml`` or any ``openai/<name>`` team with
``api_base``): ``python -m ffbench_lib.testing.fake_openai [--port 8011] [--fault-rate 0.2 --faults 429,500]``
prints its URL and serves until Ctrl-C; ``--help`` lists the options.
"""
from __future__ import annotations

import argparse
import json
import re
import select
import signal
import socket
import sys
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from ffbench_lib.sport import SPORTS, sport
from ffbench_lib.data.schema import DEFAULT_POSITIONS
from ffbench_lib.game.rules.lineup import start_value

FAULTS = ("429", "500", "slow", "malformed", "prose", "fence", "hallucinated", "illegal", "empty", "truncated")
STATUS_FAULTS = {
    "401": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-...xxxx."),
    "403": (403, "permission_error", "insufficient_permissions", "You do not have access to this model."),
    "404": (404, "invalid_request_error", "model_not_found", "The model does not exist or you do not have access."),
}
#: every fault ``faults`` may name: the default mix, then the opt-in ones
ALL_FAULTS = (*FAULTS, *STATUS_FAULTS, "nested", "huge")
_SPORT = sport("nfl")  # its id patterns, made-up ids and injury statuses
#: player ids of every sport at the start of a table row (NFL defenses, FPL codes, masked RB-041 and MID-007)
ID = re.compile("^(" + "|".join(s.real_id_pattern for s in SPORTS.values()) + r"|[A-Z]{1,3}-\d{2,})\s*\|")
#: an id in an answer, masked or not
ANY_ID = re.compile("|".join(s.player_id_pattern for s in SPORTS.values()) + r"|\b(?:"
                    + "|".join(dict.fromkeys(p for s in SPORTS.values() for p in s.positions)) + r")-\d{2,}\b")


def _table(text: str, header_hint: str, last: bool = False) -> list[dict[str, str]]:
    """Rows of the ``id | ...`` table after the first (``last``: the last) line containing ``header_hint`` (all
    tables for the draft board and the free agents)."""
    start = text.rfind(header_hint) if last else text.find(header_hint)
    if start < 0:
        return []
    rows, cols, seen = [], None, set()
    for line in text[start:].splitlines():
        if line.startswith("id | "):
            cols = [c.strip() for c in line.split("|")]
        elif cols and ID.match(line):
            row = dict(zip(cols, (c.strip() for c in line.split("|"))))
            if row["id"] not in seen:  # a player a tool listed and the prompt's brief table shows too: once
                seen.add(row["id"])
                rows.append(row)
        elif rows and not line.strip() and not header_hint.startswith(("BEST", "FREE AGENTS")):
            break  # one table only (the draft board has one table per position)
    return rows


def _num(x: str) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def _line(text: str, prefix: str) -> str:
    for line in text.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return ""


def policy(prompt: str) -> dict[str, Any]:
    """A sensible answer to one ffbench prompt."""
    decision = _line(prompt, "DECISION:")
    if decision in ("draft_shortlist", "draft_queue"):  # the board's best projections at legal positions
        key, default = ("shortlist", 5) if decision == "draft_shortlist" else ("queue", 12)
        legal = [p.strip() for p in _line(prompt, "LEGAL POSITIONS:").split(",")]
        size = int(_line(prompt, f"{key.upper()} SIZE:") or default)
        rows = [r for r in _table(prompt, "BEST AVAILABLE") if r["pos"] in legal]
        rows.sort(key=lambda r: -_num(r["proj"]))
        return {key: [r["id"] for r in rows[:size]], "rationale": "highest projections at legal positions"}
    if decision == "draft_pick":
        legal = [p.strip() for p in _line(prompt.split("YOUR SHORTLIST")[0], "Unfilled starting slots:").split(
            "LEGAL POSITIONS:")[-1].split(",")]
        rows = [r for r in _table(prompt, "YOUR SHORTLIST") if r["pos"] in legal] or _table(prompt, "YOUR SHORTLIST")
        best = max(rows, key=lambda r: _num(r["proj"]))
        return {"player_id": best["id"], "rationale": "best projection on my shortlist"}
    if decision == "set_lineup":
        slots = dict(kv.split("=") for kv in _line(prompt, "SLOTS:").split("(")[0].split())
        # the flex note: "(FLEX: RB/WR/TE; SUPERFLEX: QB/RB/WR/TE)"
        note = _line(prompt, "SLOTS:").partition("(")[2].strip(" )")
        flex = {k.strip(): v.strip().split("/") for k, _, v in (part.partition(":") for part in note.split(";")) if v}
        rows = _table(prompt, "YOUR ROSTER")
        value = {r["id"]: start_value({"proj_week": _num(r["proj_week"]),
                                       "zero_flags": [f for f in r["flags"].split(",") if f not in ("-", "")]})
                 for r in rows}
        rows.sort(key=lambda r: (-value[r["id"]], r["id"]))
        formation = _line(prompt, "FORMATION:")
        if formation:  # every starter under his position, then the bench in order (best substitute first)
            return _formation_answer(formation, rows, "BENCH ORDER:" in prompt)
        used, lineup = set(), {}
        for slot, n in slots.items():  # the positions' slots as the prompt lists them, then FLEX, SUPERFLEX
            ok = [r for r in rows if r["id"] not in used and (r["pos"] == slot or r["pos"] in flex.get(slot, ()))]
            lineup[slot] = [r["id"] for r in ok[:int(n)]]
            used.update(lineup[slot])
        return {"lineup": {k: v for k, v in lineup.items() if int(slots[k])}, "rationale": "best projections"}
    if decision == "propose_trade":
        team = _line(prompt, "You manage") or prompt
        if zlib.crc32(prompt.encode()) % 3:
            return {"action": "pass", "rationale": "happy with my roster"}
        locked = set(_line(prompt, "Players already traded this week (they cannot move again):").split(", "))
        mine = [r for r in _table(prompt, "MY ROSTER") if r["id"] not in locked]
        m = re.search(r'TEAM "([^"]+)"', prompt)  # the first other team (in tools mode its roster is a tool's)
        if not m:
            return {"action": "pass", "rationale": "no partner"}
        theirs = [r for r in _table(prompt, f'TEAM "{m.group(1)}" ROSTER', last=True) if r["id"] not in locked]
        # a depth swap at the position whose starters score most across the league
        league = re.search(r"league average: (\{[^}]*\})", prompt)
        avg = json.loads(league.group(1)) if league else {}
        for pos in sorted(avg, key=lambda p: -avg[p]):
            a = sorted((r for r in mine if r["pos"] == pos), key=lambda r: _num(r["proj_week"]))
            b = sorted((r for r in theirs if r["pos"] == pos), key=lambda r: _num(r["proj_week"]))
            if a and b:
                return {"action": "propose", "to_team": m.group(1), "give": [a[0]["id"]], "get": [b[0]["id"]],
                        "rationale": f"depth swap at {pos} ({team[:0]})"}
        return {"action": "pass", "rationale": "nothing fits"}
    if decision in ("waiver_claims", "free_agent_adds"):
        return _claims(prompt)
    if decision == "ir_moves":
        return _ir_moves(prompt)
    if decision == "respond_to_offer":
        return {"action": "accept" if zlib.crc32(prompt.encode()) % 2 else "reject", "rationale": "judged the offer"}
    if decision == "reply_to_counter":
        return {"action": "accept", "rationale": "fine"}
    if decision == "final_decision":
        return {"action": "accept", "rationale": "fine"}
    return {"rationale": "unknown decision"}


def tool_plan(prompt: str, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """Tools mode: the lookups a sensible manager makes before answering ``prompt`` (brief tables, see
    ``ffbench_lib.agents.tools``): the roster of the team a trade would go to, and, unless the board is said to
    show the best players the list needs, the board of each legal position whose rows all make the list (more
    of it might too). Empty: the prompt is enough."""
    decision = _line(prompt, "DECISION:")
    if decision == "propose_trade" and "team_roster" in offered and not zlib.crc32(prompt.encode()) % 3:
        m = re.search(r'TEAM "([^"]+)"', prompt)
        return [("team_roster", {"team": m.group(1)})] if m else []
    if decision in ("draft_shortlist", "draft_queue") and "draft_board" in offered:
        key, default = ("shortlist", 5) if decision == "draft_shortlist" else ("queue", 12)
        legal = [p.strip() for p in _line(prompt, "LEGAL POSITIONS:").split(",")]
        size = int(_line(prompt, f"{key.upper()} SIZE:") or default)
        if f"the board shows the best {size} available" in prompt:  # the brief board holds the whole answer
            return []
        rows = sorted((r for r in _table(prompt, "BEST AVAILABLE") if r["pos"] in legal), key=lambda r: -_num(r["proj"]))
        top = {r["id"] for r in rows[:size]}
        deeper = [p for p in legal if {r["id"] for r in rows if r["pos"] == p} <= top and any(r["pos"] == p for r in rows)]
        return [("draft_board", {"position": p, "limit": size}) for p in deeper]
    return []


def _formation_answer(formation: str, rows: list[dict[str, str]], ordered_bench: bool) -> dict[str, Any]:
    """The best XI by projection within a formation line (``11 players in a legal formation: GK 1, DEF 3-5``),
    each position's least first; ``rows`` best first."""
    total = int(formation.split()[0])
    ranges = {}
    for part in formation.split(":", 1)[1].split(","):
        pos, span = part.split()
        lo, _, hi = span.partition("-")
        ranges[pos] = (int(lo), int(hi or lo))
    start: list[dict[str, str]] = []
    for pos, (lo, _) in ranges.items():
        start += [r for r in rows if r["pos"] == pos][:lo]
    for r in rows:
        n = sum(1 for s in start if s["pos"] == r["pos"])
        if len(start) < total and r not in start and r["pos"] in ranges and n < ranges[r["pos"]][1]:
            start.append(r)
    lineup = {pos: [r["id"] for r in start if r["pos"] == pos] for pos in ranges}
    answer: dict[str, Any] = {"lineup": lineup, "rationale": "best projections within the formation"}
    if ordered_bench:
        answer["bench"] = [r["id"] for r in rows if r not in start]
    return answer


@dataclass
class FakeOpenAIServer:
    """``with FakeOpenAIServer(fault_rate=0.3) as srv: ... srv.api_base ...``"""

    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULTS
    latency_s: float = 0.0
    slow_s: float = 30.0  # upper bound; a slow answer is normally cut short by the client hanging up
    seed: int = 0
    requests: int = 0
    injected: Counter = field(default_factory=Counter)
    log: list[dict[str, Any]] = field(default_factory=list)
    echo_auth_in_errors: bool = False  # some providers echo part of the key in errors: tests that we scrub it
    echo_auth_in_answers: bool = False  # the Authorization header inside every answer's rationale (canary tests)
    inflight: int = 0
    max_inflight: int = 0
    #: every answered request as (start, end, decision), monotonic seconds: see :func:`critical_path`
    spans: list[tuple[float, float, str]] = field(default_factory=list)
    context_window: int | None = None  # tokens (4 characters each); longer prompts get OpenAI's 400
    #: the server's tokenizer: prompt tokens are characters / 4 times this (a model that counts more than litellm)
    token_factor: float = 1.0
    #: a chat template that drops the system role: system messages are neither read nor counted
    drop_system: bool = False
    fault_decisions: tuple[str, ...] | None = None  # faults only in these decisions' answers (None: in all)
    #: the knowledge probe's answers: None does not know the season (position-typical guesses); a dict
    #: {"points": {player name: season points}, "top5": {position: [names]}} "knows" it (others null)
    probe_knowledge: dict[str, Any] | None = None
    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port (see api_base)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = np.random.default_rng(self.seed)
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                return None

            def do_GET(self) -> None:  # noqa: N802 - GET /v1/models, as OpenAI-compatible servers list them
                if not self.path.rstrip("/").endswith("/models"):
                    self.send_error(404)
                    return
                model = {"id": "fake", "object": "model", "owned_by": "ffbench",
                         "max_model_len": server.context_window or 131072}  # as vLLM reports its window
                data = json.dumps({"object": "list", "data": [model]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                start = time.monotonic()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    status, payload, delay = server.respond(body, self.headers.get("Authorization", ""),
                                                            self.headers.get("X-FFBench-Attempt"))
                    if payload.pop("_hold", False):
                        _wait_for_hangup(self.connection, delay)
                    elif delay:
                        time.sleep(delay)
                finally:
                    with server._lock:
                        server.inflight -= 1
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout fault)
                user = next((m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"), "")
                with server._lock:
                    server.spans.append((start, time.monotonic(), _line(user, "DECISION:")))

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def api_base(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def describe(self) -> str:
        """One line: where it listens, what it answers and which faults it injects."""
        faults = "none" if not self.fault_rate else f"{self.fault_rate:g} of answers from {','.join(self.faults)}"
        if self.fault_rate and self.fault_decisions is not None:
            faults += f" in {','.join(self.fault_decisions) or 'no decision'}"
        extra = "".join([f", latency {self.latency_s:g} s" if self.latency_s else "",
                         f", context window {self.context_window} tokens" if self.context_window else "",
                         f", seed {self.seed}"])
        probe = "knows the season" if self.probe_knowledge is not None else "position-typical guesses"
        return (f"fake OpenAI-compatible server on {self.api_base} (any model name; policy: ffbench's scripted "
                f"manager, knowledge probe: {probe}; faults: {faults}{extra})")

    # -- answering ----------------------------------------------------------------------------------------
    def respond(self, body: dict[str, Any], auth: str = "",
                attempt_id: str | None = None) -> tuple[int, dict[str, Any], float]:
        msgs = body.get("messages", [])
        prompt = next((m["content"] for m in msgs if m.get("role") == "user"  # the decision, not a worked example
                       and not (m.get("content") or "").startswith("EXAMPLE (")), "")
        prompt_chars = sum(len(m.get("content") or "") + (len(json.dumps(m["tool_calls"])) if m.get("tool_calls") else 0)
                           for m in msgs if not (self.drop_system and m.get("role") == "system"))
        prompt_chars += len(json.dumps(body["tools"])) if body.get("tools") else 0  # tool specs are prompt too
        prompt_tokens = int(prompt_chars // 4 * self.token_factor)
        with self._lock:
            self.requests += 1
            n = self.requests
            fault = str(self._rng.choice(self.faults)) if self._rng.random() < self.fault_rate else None
            if self.fault_decisions is not None and _line(prompt, "DECISION:") not in self.fault_decisions:
                fault = None
            if self.context_window is not None and prompt_tokens > self.context_window:
                fault = "context"
            if fault:
                self.injected[fault] += 1
            self.log.append({"n": n, "model": body.get("model"), "fault": fault, "attempt_id": attempt_id,
                             "decision": _line(prompt, "DECISION:")})
        delay = self.latency_s
        if fault in STATUS_FAULTS:
            status, typ, code, message = STATUS_FAULTS[fault]
            message += f" (request auth: {auth})" if self.echo_auth_in_errors else ""
            return status, {"error": {"message": message, "type": typ, "code": code}}, delay
        if fault == "context":
            return 400, {"error": {"message": f"This model's maximum context length is {self.context_window} tokens. "
                                              f"However, your messages resulted in {prompt_tokens} tokens.",
                                   "type": "invalid_request_error", "param": "messages",
                                   "code": "context_length_exceeded"}}, delay
        if fault == "429":
            return 429, {"error": {"message": "rate limited (injected)", "type": "rate_limit_error"}}, delay
        if fault == "500":
            echo = f" (request auth: {auth})" if self.echo_auth_in_errors else ""
            return 500, {"error": {"message": f"server error (injected){echo}", "type": "server_error"}}, delay
        offered = {t["function"]["name"] for t in body.get("tools") or ()} if body.get("tool_choice") != "none" else set()
        results = [m.get("content") or "" for m in msgs if m.get("role") == "tool"]
        plan = tool_plan(prompt, offered) if offered and not results else []
        if plan:  # tools mode: look up what the decision needs first
            calls = [{"id": f"call_{n}_{i}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(plan)]
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(1, len(json.dumps(calls)) // 4)}
            usage["total_tokens"] = prompt_tokens + usage["completion_tokens"]
            return 200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
                                      "finish_reason": "tool_calls"}], "usage": usage}, delay
        seen = "\n\n".join([prompt, *results])  # the tools' tables after the prompt's brief ones
        answer = (probe_answer(prompt, self.probe_knowledge) if _line(prompt, "DECISION:") == "knowledge_probe"
                  else policy(seen))
        if self.echo_auth_in_answers:
            answer["rationale"] = f"{answer.get('rationale', '')} (request auth: {auth})"
        text = json.dumps(answer)
        finish = "stop"
        if fault == "malformed":
            text = text.replace('"', "'").replace("{", "{{", 1)
        elif fault == "prose":
            text = f"Sure! Here is my decision:\n{text}\nLet me know if you need anything else."
        elif fault == "fence":
            text = f"```json\n{json.dumps(answer, indent=2)}\n```"
        elif fault == "hallucinated":
            if ANY_ID.search(text):
                text = ANY_ID.sub(_SPORT.made_up_id(9999999), text)
            else:  # an answer without ids (pass, accept): a trade with players nobody has
                text = json.dumps({"action": "propose" if answer.get("action") == "pass" else "counter",
                                   "to_team": "Nobody", "give": [_SPORT.made_up_id(9999999)],
                                   "get": [_SPORT.made_up_id(9999998)],
                                   "rationale": "made-up players"})
        elif fault == "illegal":
            text = _illegal(answer)
        elif fault == "empty":
            text = ""
        elif fault == "truncated":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "nested":
            text = "[" * 5_000 + "]" * 5_000
            text = '{"lineup": ' + text + "}"
        elif fault == "huge":
            text = json.dumps({**answer, "rationale": "x" * 1_000_000})
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(1, len(text) // 4),
                 "total_tokens": prompt_tokens + max(1, len(text) // 4)}
        return 200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": finish}], "usage": usage,
                     **({"_hold": True} if fault == "slow" else {})}, self.slow_s if fault == "slow" else delay


def critical_path(spans: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The longest chain of requests that do not overlap in time (each starts after the one before ended): the
    calls a season had to wait for one after another, whatever ran beside them. Earliest end first is optimal
    for the largest set of non-overlapping intervals."""
    chain: list[tuple[float, float, str]] = []
    for span in sorted(spans, key=lambda s: (s[1], s[0])):
        if not chain or span[0] >= chain[-1][1]:
            chain.append(span)
    return chain


#: what a model that does not know the season might say: a typical starter's season at each position
PROBE_GUESS = dict(zip(DEFAULT_POSITIONS, (260.0, 170.0, 170.0, 110.0)))


def probe_answer(prompt: str, knowledge: dict[str, Any] | None) -> dict[str, Any]:
    """The knowledge probe's answer: from ``knowledge`` (points by player name, top 5 by position) when given,
    else a plausible answer of a model that does not know the season (position-typical totals, the first
    players listed as top 5)."""
    rows = [[c.strip() for c in line.split("|")] for line in prompt.splitlines() if re.match(r"^P\d+\s*\|", line)]
    if knowledge is None:
        points = {r[0]: PROBE_GUESS.get(r[3], 100.0) for r in rows}
        top5 = {pos: [r[1] for r in rows if r[3] == pos][:5] for pos in PROBE_GUESS}
    else:
        known = knowledge.get("points", {})
        points = {r[0]: known.get(r[1]) for r in rows}
        top5 = knowledge.get("top5", {})
    return {"points": points, "top5": top5}


def _wait_for_hangup(conn: socket.socket, limit_s: float) -> None:
    """Hold a ``slow`` answer until the client closes the connection (its timeout) or ``limit_s`` passes."""
    end = time.monotonic() + limit_s
    while (left := end - time.monotonic()) > 0:
        readable, _, _ = select.select([conn], [], [], min(left, 0.05))
        if readable:
            try:
                if conn.recv(1, socket.MSG_PEEK) == b"":
                    return
            except OSError:
                return
            time.sleep(min(left, 0.05))  # pipelined bytes, not a hang-up: keep waiting


def _claims(prompt: str) -> dict[str, Any]:
    """Replace the weakest player of a position with a free agent of that position projected 2 points
    better this week (same position, so caps and lineups hold), best gain first; a small FAAB bid."""
    def value(r: dict[str, str]) -> float:
        return start_value({"proj_week": _num(r["proj_week"]),
                            "zero_flags": [f for f in r["flags"].split(",") if f not in ("-", "")]})

    mine, free = _table(prompt, "YOUR ROSTER"), _table(prompt, "FREE AGENTS")
    m = re.search(r"you have (\d+) of \d+ dollars left", prompt)
    limit = int(_line(prompt, "Claim at most").split()[0]) if _line(prompt, "Claim at most") else 1
    gains = []
    for fa in free:
        same = sorted((r for r in mine if r["pos"] == fa["pos"]), key=lambda r: (value(r), r["id"]))
        if same and value(fa) - value(same[0]) >= 2.0:
            gains.append((value(fa) - value(same[0]), fa["id"], same[0]["id"]))
    claims, used = [], set()
    spots = re.search(r"You have (\d+) open roster spot", prompt)  # fill open spots (IR) without a drop first,
    held = Counter(r["pos"] for r in mine)  # at the positions the roster holds fewest of (far from any cap)
    for fa in sorted(free, key=lambda r: (held[r["pos"]], -value(r), r["id"]))[: int(spots.group(1)) if spots else 0]:
        if len(claims) < limit:
            used.add(fa["id"])
            claims.append({"add": fa["id"], "drop": None, **({"bid": min(int(m.group(1)), 5)} if m else {})})
    for gain, add, drop in sorted(gains, key=lambda g: (-g[0], g[1])):
        if add not in used and drop not in used and len(claims) < limit:
            used.update((add, drop))
            claims.append({"add": add, "drop": drop, **({"bid": min(int(m.group(1)), 5)} if m else {})})
    return {"claims": claims, "rationale": "projected upgrades at the same position"}


def _ir_moves(prompt: str) -> dict[str, Any]:
    """Players ruled Out to IR while slots are free (not a position's last active player, so a lineup can still
    be fielded); IR players no longer Out back, into an open spot or for the weakest active player of their
    position."""
    m = re.search(r"(\d+) free\. Active roster: (\d+) of (\d+) spots", prompt)
    free_slots, active_n, spots = (int(x) for x in m.groups()) if m else (0, 0, 0)
    active, ir = _table(prompt, "YOUR ACTIVE ROSTER"), _table(prompt, "YOUR IR")

    def value(r: dict[str, str]) -> float:
        return start_value({"proj_week": _num(r["proj_week"]),
                            "zero_flags": [f for f in r["flags"].split(",") if f not in ("-", "")]})

    to_ir: list[str] = []
    for r in sorted((r for r in active if r["injury"] == _SPORT.out_status), key=lambda r: r["id"]):
        others = [o for o in active if o["pos"] == r["pos"] and o["id"] != r["id"] and o["id"] not in to_ir]
        if len(to_ir) < free_slots and others:
            to_ir.append(r["id"])
    open_spots = spots - active_n + len(to_ir)
    back = []
    for r in (r for r in ir if r["injury"] != _SPORT.out_status):
        if open_spots > 0:
            back.append({"player": r["id"], "drop": None})
            open_spots -= 1
            continue
        gone = set(to_ir) | {b["drop"] for b in back}
        same = sorted((o for o in active if o["pos"] == r["pos"] and o["id"] not in gone),
                      key=lambda o: (value(o), o["id"]))
        if same:
            back.append({"player": r["id"], "drop": same[0]["id"]})
    return {"to_ir": to_ir, "from_ir": back, "rationale": "injured players to IR, healthy ones back"}


def _illegal(answer: dict[str, Any]) -> str:
    if "to_ir" in answer:  # IR players (or nobody known) to IR again, and an unknown player back
        return json.dumps({"to_ir": [b["player"] for b in answer["from_ir"]] or [_SPORT.made_up_id(0)],
                           "from_ir": [{"player": _SPORT.made_up_id(0), "drop": None}], "rationale": "everyone to IR"})
    if "claims" in answer:
        return json.dumps({"claims": [{"add": c["drop"], "drop": c["add"], "bid": -1} for c in answer["claims"]]
                           or [{"add": _SPORT.made_up_id(0), "drop": _SPORT.made_up_id(0)}], "rationale": "backwards"})
    if "lineup" in answer:
        everyone = [p for ids in answer["lineup"].values() for p in ids]
        return json.dumps({"lineup": {slot: everyone[: len(ids)] for slot, ids in answer["lineup"].items()},
                           "rationale": "everyone everywhere"})
    if "shortlist" in answer:
        return json.dumps({"shortlist": answer["shortlist"][:1] * 3, "rationale": "same player thrice"})
    if "queue" in answer:
        return json.dumps({"queue": [_SPORT.positions[0]] * 2, "rationale": "a position, not a player"})
    if "player_id" in answer:
        return json.dumps({"player_id": _SPORT.positions[0], "rationale": "a position, not a player"})
    return json.dumps({**answer, "action": "maybe"})


def _rate(text: str) -> float:
    rate = float(text)
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1")
    return rate


def _names(allowed: tuple[str, ...] | None):
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        bad = [n for n in names if allowed is not None and n not in allowed]
        if bad or not names:
            raise argparse.ArgumentTypeError(f"{','.join(bad) or repr(text)}: name one or more of "
                                             f"{','.join(allowed or ())}, comma-separated")
        return names
    return parse


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C (or SIGTERM): exit 0. A port in use or an unreadable probe file: one line, exit 2."""
    ap = argparse.ArgumentParser(prog="python -m ffbench_lib.testing.fake_openai",
                                 description="A local OpenAI-compatible chat server (POST /v1/chat/completions) "
                                             "that answers ffbench's prompts like a sensible manager, with "
                                             "faults on demand. It answers any model name.")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8011, help="port (default 8011; 0: any free port)")
    ap.add_argument("--fault-rate", type=_rate, default=0.0, help="share of requests given a fault (default 0)")
    ap.add_argument("--faults", type=_names(ALL_FAULTS), default=FAULTS,
                    help=f"the faults drawn from, comma-separated (default {','.join(FAULTS)}; "
                         f"opt-in: {','.join(a for a in ALL_FAULTS if a not in FAULTS)})")
    ap.add_argument("--fault-decisions", type=_names(None), default=None,
                    help="faults only in these decisions' answers, comma-separated (e.g. set_lineup,draft_pick)")
    ap.add_argument("--latency-s", type=float, default=0.0, help="seconds before each answer (default 0)")
    ap.add_argument("--slow-s", type=float, default=30.0,
                    help="the 'slow' fault holds an answer this long at most, or until the client hangs up")
    ap.add_argument("--context-window", type=int, default=None,
                    help="tokens (4 characters each): longer prompts get OpenAI's context_length_exceeded 400")
    ap.add_argument("--probe-knowledge", default=None, metavar="JSON_FILE",
                    help='the knowledge probe\'s answers: {"points": {name: season points}, "top5": {pos: [names]}}')
    ap.add_argument("--seed", type=int, default=0, help="seed of the fault draws (default 0)")
    ap.add_argument("--token-factor", type=float, default=1.0,
                    help="prompt tokens are characters / 4 times this (a server that counts more than litellm)")
    ap.add_argument("--drop-system", action="store_true",
                    help="behave like a chat template that drops the system role (neither read nor counted)")
    args = ap.parse_args(argv)
    try:
        knowledge = None if args.probe_knowledge is None else json.loads(open(args.probe_knowledge).read())
    except (OSError, ValueError) as e:
        print(f"error: --probe-knowledge {args.probe_knowledge}: {e}", file=sys.stderr)
        return 2
    server = FakeOpenAIServer(fault_rate=args.fault_rate, faults=args.faults, latency_s=args.latency_s,
                              slow_s=args.slow_s, seed=args.seed, context_window=args.context_window,
                              fault_decisions=args.fault_decisions, probe_knowledge=knowledge,
                              host=args.host, port=args.port, token_factor=args.token_factor,
                              drop_system=args.drop_system)
    try:
        server.start()
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e.strerror or e}; pass another --port "
              "(0: any free port)", file=sys.stderr)
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C and `kill` stop it, even if started with SIGINT ignored
        signal.signal(sig, signal.default_int_handler)
    try:  # from the first line on: a client that read the address may press Ctrl-C at once
        print(server.describe(), flush=True)
        print("Ctrl-C to stop", file=sys.stderr, flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    injected = ", ".join(f"{k} {n}" for k, n in sorted(server.injected.items())) or "none"
    print(f"stopped after {server.requests} request(s); faults injected: {injected}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
