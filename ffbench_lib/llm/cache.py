"""Replay cache: provider answers on disk, keyed by model, messages and the parameters that shape the answer
(never the key or the server address). A re-run or resumed run replays them without calling anyone."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ffbench_lib.core.atomic import write_json
from ffbench_lib.core.paths import outputs_dir
from ffbench_lib.core.settings import settings


class ReplayMiss(RuntimeError):  # made fatal by the engine (see FatalLLMError)
    """``replay_only`` and no recorded answer: the run stops (it is not an agent mistake to repair)."""


class CacheUnusable(ValueError):
    """The replay cache folder cannot be written: every paid answer would be lost (and counted a failure)."""


class ReplayCache:
    def __init__(self, folder: str | Path, source: str = "the cache folder"):
        self.folder = Path(folder)
        self.source = source  # where the folder came from, for messages

    @classmethod
    def for_config(cls, cache_dir: str | Path | None) -> "ReplayCache":
        """The cache of a league: its ``llm.cache_dir``, else ``$FFBENCH_LLM_CACHE``, else ``outputs/llm_cache``."""
        if cache_dir:
            return cls(cache_dir, "llm.cache_dir")
        env = settings().llm_cache
        return cls(env, "FFBENCH_LLM_CACHE") if env else cls(outputs_dir() / "llm_cache", "the default cache folder")

    def check(self, replay_only: bool = False) -> None:
        """:class:`CacheUnusable` naming the setting unless the cache can be used: replayed from (an existing
        folder) or, to record, written (the folder, or the nearest folder above it that exists, is writable).
        Nothing is created."""
        def unusable(why: str) -> CacheUnusable:
            return CacheUnusable(f"{self.source}: {self.folder} cannot hold the LLM replay cache ({why}); point it "
                                 f"at a folder you can {'read' if replay_only else 'write'}")

        if replay_only:
            if not self.folder.is_dir():
                raise unusable("replay_only, and no such folder")
            return
        here = self.folder
        while not here.exists() and here != here.parent:
            here = here.parent
        if not here.is_dir():
            raise unusable(f"{here} is a file")
        if not os.access(here, os.W_OK | os.X_OK):
            raise unusable(f"{here} cannot be written")

    @staticmethod
    def key(model: str, messages: list[dict], params: dict[str, Any]) -> str:
        blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        if not p.exists():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def put(self, key: str, entry: dict[str, Any]) -> None:
        write_json(self._path(key), entry)
