"""Replay cache: provider answers on disk, keyed by model, messages and the parameters that shape the answer
(never the key or the server address). A re-run or resumed run replays them without calling anyone."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..atomic import write_json


class ReplayMiss(RuntimeError):  # made fatal by the engine (see FatalLLMError)
    """``replay_only`` and no recorded answer: the run stops (it is not an agent mistake to repair)."""


class ReplayCache:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

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
