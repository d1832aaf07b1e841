"""A human seat: the engine's question goes to a :class:`HumanSeat` (a notebook's widgets, or a test's coroutine)
and the run awaits the answer on the same event loop.

Every answer is appended (fsync'd) to ``human_answers.jsonl`` in the run folder, keyed by the decision kind and a
digest of the view; a resumed run replays from its last checkpoint and gets the recorded answers back without
asking again, so the person answers each question once and the run stays deterministic.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ffbench_lib.core.atomic import write_text
from ffbench_lib.core.secrets import scrub_text
from ffbench_lib.agents.base import Agent, Answer

#: a person's "why" is kept up to this many characters (a pasted page would bloat every log twice)
MAX_RATIONALE = 2000


class NoHumanSeat(RuntimeError):
    """A human team asked outside :func:`ffbench_lib.play.session.start_play` (``ffbench run``, a batch)."""


class AnswersRefused(ValueError):
    """A ``human_answers.jsonl`` that cannot be replayed into this league (another league's, or edited). Bad input,
    not a bug: a notebook cell shows only its one line, naming the file and the fix (IPython renders an
    exception's ``_render_traceback_`` instead of the traceback)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def view_key(kind: str, view: dict) -> str:
    """The key of one question: its kind and a sha256 of the view's canonical JSON."""
    body = json.dumps(view, sort_keys=True, separators=(",", ":"), default=str)
    return f"{kind}:{hashlib.sha256(body.encode()).hexdigest()}"


@dataclass
class Pending:
    """One open question: what the widget shows, and the future its answer resolves."""

    team: str
    kind: str
    view: dict
    future: asyncio.Future = field(repr=False)
    record: Callable[[Answer], None] | None = field(default=None, repr=False)


class HumanSeat:
    """The open questions of a run's human teams; ``answer`` resolves one. ``changed`` is set whenever a question
    opens, so a waiting widget or test wakes up."""

    def __init__(self) -> None:
        self.pending: list[Pending] = []
        self.changed = asyncio.Event()

    def ask(self, team: str, kind: str, view: dict, record: Callable[[Answer], None] | None = None) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.pending.append(Pending(team, kind, view, fut, record))
        self.changed.set()
        return fut

    async def next(self) -> Pending:
        """The oldest open question, waiting for one if none is open."""
        while not self.pending:
            self.changed.clear()
            await self.changed.wait()
        return self.pending[0]

    def answer(self, pending: Pending, answer: Answer) -> None:
        """Record the answer at once (a kernel killed before the engine goes on loses nothing), then resolve.
        A question no longer open (answered, or its run stopped) is refused: nothing is recorded."""
        if not isinstance(answer, dict):
            raise TypeError(f"a human answer is a mapping, got {type(answer).__name__}")
        if pending.future.done() or pending not in self.pending:
            raise ValueError(f"the {pending.kind} question is no longer open (answered already, or the run "
                             "stopped): nothing was recorded")
        if isinstance(answer.get("rationale"), str) and len(answer["rationale"]) > MAX_RATIONALE:
            answer = {**answer, "rationale": answer["rationale"][:MAX_RATIONALE] + "..."}
        # as a replay will read it (same run either way), and a key pasted into the "why" field never reaches disk
        answer = json.loads(scrub_text(json.dumps(answer, default=str)))
        self.pending.remove(pending)
        if pending.record is not None:
            pending.record(answer)
        loop = pending.future.get_loop()
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            _settle(pending.future, answer)
        else:  # a widget callback on another thread (JupyterLab may route a comm to a kernel subshell): a plain
            # set_result would not wake the run's loop, which would sleep until the kernel's next message
            loop.call_soon_threadsafe(_settle, pending.future, answer)


def _settle(future: asyncio.Future, answer: Answer) -> None:
    if not future.done():  # its run may have stopped meanwhile
        future.set_result(answer)


class AnswerBook:
    """``human_answers.jsonl``: each answer a line, appended and fsync'd before the engine sees it. Every line
    carries its league's digest (:func:`league_digest`): answers given in another league (another seed, team or
    rule) are refused, never replayed into this one."""

    def __init__(self, path: str | Path, league: str = ""):
        self.path, self.league = Path(path), league
        self.answers: dict[str, Answer] = {}
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                key, answer, where = rec["key"], rec["answer"], rec.get("league", "")
            except (ValueError, KeyError, TypeError):
                if n == len(lines):  # a line cut by a crash mid-write: dropped, and that answer asked again
                    write_text(self.path, "".join(f"{x}\n" for x in lines[:-1]))
                    text = ""
                    break
                raise AnswersRefused(f"{self.path} line {n}: not an answer record; delete the file to answer "
                                     "every question again, or play in another run_dir") from None
            if where != self.league:
                raise AnswersRefused(f"{self.path} holds answers given in another league (line {n}: its config, "
                                     "seed or teams differ from this one's): play this league in another run_dir, "
                                     "or delete the file to answer every question again")
            self.answers[key] = answer
        if text and not text.endswith("\n"):  # a whole last record without its newline: the next one on its own line
            with open(self.path, "a", encoding="utf-8") as f:
                f.write("\n")

    def get(self, key: str) -> Answer | None:
        found = self.answers.get(key)
        return None if found is None else json.loads(json.dumps(found))  # a copy: the engine may change it

    def add(self, key: str, team: str, answer: Answer) -> None:
        self.answers[key] = json.loads(json.dumps(answer, default=str))  # a copy: the engine may change the answer
        line = json.dumps({"key": key, "team": team, "league": self.league, "answer": answer}, sort_keys=True,
                          default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def league_digest(config_yaml: str) -> str:
    """A short digest of a league's config (as the run's config.yaml holds it) that answers are tied to."""
    return hashlib.sha256(config_yaml.encode()).hexdigest()[:16]


class HumanAgent(Agent):
    """A team played by a person through a :class:`HumanSeat`; recorded answers are replayed first."""

    masked_views = True

    def __init__(self, team: str, seed: int, name: str = "you", seat: HumanSeat | None = None,
                 book: AnswerBook | None = None):
        super().__init__(team, seed)
        self.agent_id = f"human:{name}"
        self.seat, self.book = seat, book

    async def decide(self, kind: str, view: dict) -> Answer:
        key = f"{self.team}:{view_key(kind, view)}"
        if self.book is not None and (recorded := self.book.get(key)) is not None:
            return recorded
        if self.seat is None:
            raise NoHumanSeat(f"team {self.team} is played by a person: play it in notebooks/10_play.ipynb "
                              "(or ffbench_lib.play.session.start_play), not with ffbench run or a batch")
        book = self.book
        return await self.seat.ask(self.team, kind, view,
                                   None if book is None else (lambda answer: book.add(key, self.team, answer)))
