"""The run directory: one season, one seed, everything needed to analyse it later without re-running.

=========================  ==============================================================================
``config.yaml``            the fully resolved league config
``run.json``               ``records.run.RunMeta`` (its ``format``): run id, seed, status (running / complete / failed / interrupted / stopped_budget /
                           waiting_for_week)
                           and its reason, phase, data fingerprint, budget, every resume and what it changed;
                           only when they apply: ``unavailable`` inputs of the season (``unavailable_notes``)
                           and ``knowledge_cutoffs`` (models' cutoffs against the season's end)
``checkpoint.json``        league state after the last completed phase (each draft round, then every week; a live
                           run waiting for a week's games: that week's decisions, ``decided:<week>``)
``live.jsonl``             live runs only: one line per decided week (UTC time, SHA-256 of decisions.jsonl so far)
``decisions.jsonl``        every agent decision: the exact view, the raw answer, what was applied, by whom
``llm_calls.jsonl``        every LLM call (ledger): messages, raw response, parsed answer, tokens, cost, latency,
                           every attempt's error, re-asks, cache hits
``llm_summary.parquet``    per team and model: calls, re-asks, invalid answers, fallbacks, faults, tokens, cost
``draft_picks.parquet``    pick, round, team, agent, player, shortlist, decided_by
``lineups.parquet``        week, team, agent, slot, player_id, position, points, decided_by (starters)
``bench.parquet``          week, team, agent, player_id, position, points
``rosters.parquet``        week, team, agent, player_id, position (active rosters as each week kicked off)
``matchups.parquet``       week, team, agent, opponent, points_for, points_against, result (regular season)
``standings.parquet``      week, team, agent, wins, losses, ties, points_for, points_against, rank (regular season)
``playoffs.parquet``       week, round, team, seed, opponent, the week's and the round's points, result
``trade_steps.parquet``    every negotiation step: week, negotiation, step, actor, action, give, get, rationale
``trades.parquet``         accepted trades
``waiver_claims.parquet``  every waiver and free-agent claim and how it ended
``transactions.parquet``   every roster move outside draft and trades (waiver, free agent, drop for an IR return)
``dropped_points.parquet`` points of players on no roster, for draft value
``ir_moves.parquet``       every move to and from injured reserve; ``ir_players.parquet``: who was on IR each week
=========================  ==============================================================================

Tables of features a league does not use (waivers, IR, playoffs) are written empty, with their columns.

Every file is written atomically; the logs are append-only and truncated back to the checkpoint's length on
resume (to empty before the first checkpoint), so a resumed run ends byte-identical to an uninterrupted one.
The parquet tables are written after the draft, at the end of the run, and when it stops early; while it runs,
``checkpoint.json`` holds their rows. One process at a time writes a run directory: :meth:`RunDir.exclusive`
holds an OS file lock (``.lock``), which the OS releases if the process dies.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager, suppress
from operator import is_
from datetime import datetime, timezone
from zoneinfo import ZoneInfo
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock, Timeout

from ffbench_lib.core.atomic import write_json, write_parquet, write_text
from ffbench_lib.core.secrets import scrub, secret_values
from ffbench_lib.game.state import LeagueState, StateError
from ffbench_lib.game.frozen import SPACED, FrozenDict, encode, encoded
from ffbench_lib.records.decision import DecisionLine
from ffbench_lib.records.load import RunFiles
from ffbench_lib.records.run import RunMeta, RunMetaError
from ffbench_lib.records.tables import TABLES, table_frame

LOGS = ("decisions.jsonl", "llm_calls.jsonl")
LOCK = ".lock"
#: Every file a run writes (what a fresh start may replace); anything else makes a folder "not a run's".
OWN_FILES = ("config.yaml", "run.json", "checkpoint.json", *LOGS, "llm_summary.parquet", "masking.json",
             *(f"{t}.parquet" for t in TABLES), "live.jsonl", "masking_audit.json")  # the last: `ffbench masking audit`
#: A human seat's answers (agents/human.py): kept when a run restarts, so a person never answers twice.
HUMAN_ANSWERS = "human_answers.jsonl"
#: A live run's commitments: one line per decided week (never rewound: it is what the user published).
LIVE = "live.jsonl"


class RunDirError(Exception):
    """A run (or batch) directory that cannot be used as asked; ``str()`` is the one-line message for the user."""


class RunLocked(RunDirError):
    pass


class RunExists(RunDirError):
    pass


class CheckpointError(RunDirError):
    """A damaged or edited run directory: a resume would not continue the run that was started."""


class RunInterrupted(Exception):
    """The run was stopped by a signal (SIGINT, SIGTERM); run.json says so and ``--resume`` continues it."""

    def __init__(self, signame: str, signum: int):
        super().__init__(f"stopped by {signame}")
        self.signame, self.signum = signame, signum


@contextmanager
def exclusive(folder: str | os.PathLike[str], what: str = "run directory") -> Iterator[None]:
    """Hold ``folder``'s lock for the block: a second writer gets :class:`RunLocked` at once, never a mixed folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunLocked(f"{folder}: another process is writing this {what} (it holds {folder / LOCK}); wait for "
                        f"it to finish or stop it, or choose another output folder") from None
    try:
        yield
    finally:
        lock.release()


def _line(record: dict[str, Any], view_json: tuple[str, str] | None = None) -> str:
    """``json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)``, byte for byte; the view's shared
    parts (cards, rules) are encoded once for every line that shows them (:func:`~ffbench_lib.game.frozen.encode`).
    ``view_json``: the view's compact and spaced JSON, made by the recorder just now for its hash
    (:func:`~ffbench_lib.game.frozen.encode_both`): the line holds the spaced one, not encoded again."""
    if view_json is not None and type(record.get("view")) is dict:
        record = {**record, "view": encoded(record["view"], *view_json)}
    return encode(record, SPACED)


class RunDir(RunFiles):
    """A run directory to write; it reads as :class:`~ffbench_lib.records.load.RunFiles` does."""

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the run directory's lock (:func:`exclusive`); while it is held the logs stay open for appending
        (a season appends hundreds of lines: one open each was a measurable share of a bot season), closed when
        the block ends."""
        with exclusive(self.path):
            self.__dict__["_open_logs"] = {}
            try:
                yield
            finally:
                self._close_logs()
                del self.__dict__["_open_logs"]

    def _close_logs(self) -> None:
        """Close the kept log handles (before a log is cut back or replaced, and when the lock is released)."""
        kept = self.__dict__.get("_open_logs")
        while kept:
            kept.popitem()[1].close()

    # -- writing ---------------------------------------------------------------------------------------
    def start(self, config_yaml: str, meta: RunMeta) -> None:
        """A fresh run: whatever an earlier attempt wrote (killed before its first checkpoint) is replaced."""
        self.path.mkdir(parents=True, exist_ok=True)
        foreign = sorted(p.name for p in self.path.iterdir() if p.name not in (*OWN_FILES, HUMAN_ANSWERS, LOCK)
                         and not p.name.startswith("."))
        if foreign:
            raise RunExists(f"{self.path} is not empty and holds no run (it has {', '.join(foreign[:3])}"
                            f"{', ...' if len(foreign) > 3 else ''}); choose a new or empty --out")
        self._close_logs()
        for name in OWN_FILES:
            if self.file(name).exists():
                self.file(name).unlink()
        write_text(self.file("config.yaml"), config_yaml)
        self.write_meta(meta)
        self.file("decisions.jsonl").touch()

    def write_config(self, config_yaml: str) -> None:
        write_text(self.file("config.yaml"), config_yaml)

    def write_meta(self, meta: RunMeta) -> None:
        write_json(self.file("run.json"), meta.dump())

    def append(self, log: str, record: dict[str, Any], view_json: tuple[str, str] | None = None) -> int:
        """Append one JSON line to ``log`` (secrets scrubbed); returns the file's new length in bytes. A decision
        is checked against :class:`DecisionLine` first; the dict itself is written, so the bytes stay its own
        (``view_json``: its view's canonical JSON, see :func:`_line`)."""
        if log == "decisions.jsonl":
            DecisionLine.model_validate(record)
        line = scrub(_line(record, view_json)) + "\n"
        kept = self.__dict__.get("_open_logs")  # None outside exclusive(): a handle for this line only
        fh = kept.get(log) if kept is not None else None
        if fh is None:
            fh = open(self.file(log), "a", encoding="utf-8")
            if kept is not None:
                kept[log] = fh
        try:
            fh.write(line)
            fh.flush()
            return fh.tell()
        except BaseException:  # a failed write (a full disk): a kept handle goes too, as the per-line one does
            if kept is not None:
                kept.pop(log, None)
            raise
        finally:
            if kept is None or log not in kept:
                with suppress(OSError):
                    fh.close()

    def checkpoint(self, state: LeagueState) -> None:
        """Decisions on disk first, then the checkpoint: a checkpoint never points past what is on disk.
        The checkpoint holds every table's rows; the parquet tables are written by :meth:`write_tables`."""
        for log in LOGS:
            if self.file(log).exists():
                with open(self.file(log), "rb+") as fh:
                    os.fsync(fh.fileno())
        write_text(self.file("checkpoint.json"), scrub(state.to_json()) + "\n")

    def commit_week(self, week: int, decisions_bytes: int, first_game_day: str | None = None,
                    results_in_data: bool = False) -> dict[str, Any]:
        """A live run's commitment to week ``week``'s decisions: the UTC time and the SHA-256 of the first
        ``decisions_bytes`` bytes of ``decisions.jsonl`` (every decision so far; later weeks only append, so
        anyone can check it against the finished run), whether it was made after the day of the week's first
        game (US Eastern; None when the schedule has no date), and whether the week's results were already in the
        data (a record, not a prior commitment). Once per week: a rerun still waiting finds its line."""
        for line in self.read_log(LIVE):
            if line.get("week") == week:
                return line
        with open(self.file("decisions.jsonl"), "rb") as fh:
            digest = hashlib.sha256(fh.read(decisions_bytes)).hexdigest()
        now = datetime.now(timezone.utc)
        line = {"week": week, "decided_at": now.isoformat(timespec="seconds"), "decisions_sha256": digest,
                "bytes": decisions_bytes, "first_game_day": first_game_day,
                # US Eastern: a decision on the first game's own day may precede its kickoff; a later one cannot
                "decided_after_first_game_day": None if first_game_day is None else
                now.astimezone(ZoneInfo("America/New_York")).date().isoformat() > first_game_day,
                "results_in_data": results_in_data}
        with open(self.file(LIVE), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return line

    def write_tables(self, state: LeagueState) -> None:
        """Every table as a parquet file. A table this writer already wrote from the very same rows (read-only
        rows: the same objects in the same order hold the same content) with the same credentials to mask, whose
        file is still there, is not written again: the same bytes (after the draft most tables never change)."""
        written: dict[str, tuple[list, list[str]]] = self.__dict__.setdefault("_tables_written", {})
        secrets = secret_values()
        for name in TABLES:
            rows = state.tables.get(name, [])
            path = self.file(f"{name}.parquet")
            was = written.get(name)
            if (was is not None and was[1] == secrets and len(was[0]) == len(rows) and all(map(is_, was[0], rows))
                    and all(type(r) is FrozenDict for r in rows) and path.exists()):
                continue
            write_parquet(path, table_frame(name, rows))
            written[name] = (list(rows), secrets)
        if self.file("llm_calls.jsonl").exists():
            from ffbench_lib.llm.ledger import summarize

            write_parquet(self.file("llm_summary.parquet"), summarize(self.llm_calls(), self.decisions()))

    # -- reading -----------------------------------------------------------------------------------------
    def read_json(self, name: str) -> Any:
        """A JSON file of the run to resume from, as stored; run.json must be a :class:`RunMeta` of a format this
        code reads (a newer one is refused, never resumed and rewritten as format 1)."""
        try:
            raw = json.loads(self.file(name).read_bytes())
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"cannot resume {self.path}: {name} is unreadable ({_short(exc)}); the directory "
                                  "is damaged: start the run again with another --out") from None
        if name == "run.json":
            try:
                RunMeta.parse(raw, self.file(name))
            except RunMetaError as exc:
                raise CheckpointError(f"cannot resume {self.path}: {exc}") from None
        return raw

    def load_state(self) -> LeagueState | None:
        """The checkpoint, type-checked (None before the first one). Nothing is changed on disk here."""
        cp = self.file("checkpoint.json")
        if not cp.exists():
            return None
        try:
            return LeagueState.from_json(cp.read_bytes())
        except (OSError, StateError) as exc:
            raise CheckpointError(f"cannot resume {self.path}: checkpoint.json is not a valid checkpoint "
                                  f"({_short(exc)}); it was damaged or edited: start the run again with another "
                                  "--out") from None

    def log_problems(self, state: LeagueState | None) -> list[str]:
        """Logs that do not hold what the checkpoint says was written before it."""
        out = []
        for log in LOGS:
            n = state.log_bytes.get(log, 0) if state else 0
            size = self.file(log).stat().st_size if self.file(log).exists() else 0
            if n > size:
                out.append(f"{log} holds {size} bytes, fewer than the {n} written before the checkpoint")
                continue
            head = b""
            if n:
                with open(self.file(log), "rb") as fh:
                    head = fh.read(n)
            if n and not head.endswith(b"\n"):
                out.append(f"{log} does not end a line at the checkpoint's length {n}")
            elif log == "decisions.jsonl" and state and (lines := head.count(b"\n")) != state.decisions:
                    out.append(f"{log} holds {lines} decisions before the checkpoint, which counted {state.decisions}")
        unknown = sorted(set(state.log_bytes) - set(LOGS)) if state else []
        return out + [f"log_bytes names unknown log {u!r}" for u in unknown]

    def live_cost(self, state: LeagueState) -> tuple[float, list[str]]:
        """What the live LLM calls before the checkpoint cost: ``cost_usd`` of every ledger line (up to the
        checkpoint's length) that is not a cache hit, summed in the ledger's order, as the run's budget added them
        (a resumed run's budget starts from it). Also why the checkpoint's ``llm_cost_usd`` is not that sum."""
        n, spent = state.log_bytes.get("llm_calls.jsonl", 0), 0.0
        if n and self.file("llm_calls.jsonl").exists():
            with open(self.file("llm_calls.jsonl"), "rb") as fh:
                for i, line in enumerate(fh.read(n).splitlines(), start=1):
                    try:
                        call = json.loads(line)
                        spent += 0.0 if call.get("cache_hit") else float(call.get("cost_usd") or 0.0)
                    except (ValueError, TypeError, AttributeError):
                        return spent, [f"llm_calls.jsonl line {i} is not a ledger line with a cost"]
        if state.llm_cost_usd < 0:
            return spent, [f"llm_cost_usd is negative ({state.llm_cost_usd})"]
        if state.llm_cost_usd != round(spent, 6):
            return spent, [f"llm_cost_usd is {state.llm_cost_usd} USD; the live calls in llm_calls.jsonl before "
                           f"the checkpoint cost {round(spent, 6)} USD"]
        return spent, []

    def rewind_logs(self, log_bytes: dict[str, int]) -> None:
        """Cut every log back to the checkpoint's lengths (``log_bytes``): whatever was appended after it (a torn
        last line included) is redone by the resumed run. A log the checkpoint never saw did not exist yet."""
        self._close_logs()
        for log in LOGS:
            path = self.file(log)
            if log not in log_bytes:
                if path.exists():
                    path.unlink()
                continue
            with open(path, "rb+") as fh:
                fh.truncate(log_bytes[log])
                os.fsync(fh.fileno())
        if not self.file("decisions.jsonl").exists():
            self.file("decisions.jsonl").touch()


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]


