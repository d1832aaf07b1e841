"""Atomic file writes: write to a temporary file in the same folder, fsync, then ``os.replace``.

A reader (or a killed run) therefore sees either the old file or the new one, never half of one.
"""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ffbench_lib.core.secrets import scrub, scrub_frame

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``, on error it is removed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs are ordinary files
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def remove_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files a killed writer left in ``folder`` (``.name.XXXX.tmp``); call it only while
    holding the folder's lock, so no live writer's file is removed."""
    stale = sorted(Path(folder).glob(".*.tmp"))
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """``text`` (UTF-8) as :func:`atomic_path` writes a file, through the temporary file's own descriptor (no
    reopening: checkpoints are written every phase)."""
    data = scrub(text).encode("utf-8")  # every text and JSON writer: no credential reaches disk
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs are ordinary files
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_json(path: str | os.PathLike[str], obj: Any, compact: bool = False) -> Path:
    text = json.dumps(obj, sort_keys=True, default=str, **({"separators": (",", ":")} if compact else {"indent": 2}))
    return write_text(path, text + "\n")


def write_parquet(path: str | os.PathLike[str], df: pd.DataFrame) -> Path:
    """Parquet through pyarrow, without the pandas index, deterministic for the same frame."""
    with atomic_path(path) as tmp:
        scrub_frame(df).to_parquet(tmp, engine="pyarrow", index=False)
    return Path(path)


def write_csv(path: str | os.PathLike[str], df: pd.DataFrame, **kwargs: Any) -> Path:
    with atomic_path(path) as tmp:
        scrub_frame(df).to_csv(tmp, index=False, **kwargs)
    return Path(path)


def scrub_file(path: str | os.PathLike[str]) -> None:
    """Mask credentials inside a file written by someone else (papermill's executed notebook)."""
    p = Path(path)
    if not p.is_file():
        return
    text = p.read_text(encoding="utf-8", errors="surrogateescape")
    clean = scrub(text)
    if clean != text:
        with atomic_path(p) as tmp:
            tmp.write_bytes(clean.encode("utf-8", errors="surrogateescape"))
