"""``ffbench data download``: fetch nflverse releases once, write the local layout, run offline after.

The network goes through **nflreadpy** (nflverse's maintained Python client). ``nfl_data_py`` is not used:
0.3.3 pins numpy<2 and pandas<2, and pip silently falls back to 0.3.2, which breaks on pandas 3.
The fetcher is a small object so the saving and layout logic can be tested with local files.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Protocol

import pandas as pd
from tqdm.auto import tqdm

from ffbench_lib.core.atomic import write_csv
from ffbench_lib.data.base import DataError


class Fetcher(Protocol):
    def player_stats(self, season: int) -> pd.DataFrame: ...
    def team_stats(self, season: int) -> pd.DataFrame: ...
    def schedules(self) -> pd.DataFrame: ...
    def injuries(self, season: int) -> pd.DataFrame: ...
    def rosters(self, season: int) -> pd.DataFrame: ...
    def ff_playerids(self) -> pd.DataFrame: ...


class NflreadpyFetcher:
    """The real network fetcher (polars frames from nflreadpy, converted to pandas)."""

    def __init__(self) -> None:
        try:
            import nflreadpy
        except ImportError as exc:  # pragma: no cover - it is a declared dependency
            raise DataError("nflreadpy is not installed; `pip install nflreadpy`") from exc
        self.nfl = nflreadpy

    def player_stats(self, season: int) -> pd.DataFrame:
        return self.nfl.load_player_stats([season], summary_level="week").to_pandas()

    def team_stats(self, season: int) -> pd.DataFrame:
        return self.nfl.load_team_stats([season], summary_level="week").to_pandas()

    def schedules(self) -> pd.DataFrame:
        return self.nfl.load_schedules(True).to_pandas()

    def injuries(self, season: int) -> pd.DataFrame:
        return self.nfl.load_injuries([season]).to_pandas()

    def rosters(self, season: int) -> pd.DataFrame:
        return self.nfl.load_rosters([season]).to_pandas()

    def ff_playerids(self) -> pd.DataFrame:
        return self.nfl.load_ff_playerids().to_pandas()


def _reason(exc: BaseException, limit: int = 600) -> str:
    """The error and its root cause in whole words (a blind cut at N characters left "exceeded with )")."""
    root = exc
    while root.__cause__ is not None or (root.__context__ is not None and not root.__suppress_context__):
        root = root.__cause__ or root.__context__
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    if root is not exc:
        text += " | cause: " + " ".join(f"{type(root).__name__}: {root}".split())
    return textwrap.shorten(text, width=limit, placeholder=" [...]")


def parse_seasons(text: str) -> list[int]:
    """'2022-2024' or '2022,2024' -> [2022, 2023, 2024] / [2022, 2024]."""
    out: list[int] = []
    try:
        for part in str(text).split(","):
            part = part.strip()
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                out.extend(range(a, b + 1))
            elif part:
                out.append(int(part))
    except ValueError:
        raise DataError(f"--seasons: cannot read {text!r}; write e.g. 2022-2024 or 2022,2024") from None
    if not out or any(s < 1999 for s in out):
        raise DataError(f"--seasons: {text!r} names no season from 1999 on")
    return sorted(set(out))


def download(seasons: list[int], out: str | Path, fetcher: Fetcher | None = None) -> list[Path]:
    """Write ``out/nflverse/`` with fixed file names (the layout :class:`NflverseDir` reads)."""
    fetcher = fetcher or NflreadpyFetcher()
    folder = Path(out) / "nflverse"
    written: list[Path] = []

    def fetch(what: str, call, *args):
        try:
            return call(*args)
        except Exception as exc:  # noqa: BLE001 - network and release errors become one clear message
            raise DataError(f"download of nflverse {what} failed ({_reason(exc)}); "
                            "check the internet connection, or set FFBENCH_DATA_DIR to a folder that already "
                            "holds the data. Files written so far are complete and are kept.") from None

    for season in tqdm(seasons, desc="nflverse seasons", unit="season"):
        written.append(write_csv(folder / f"stats_player_week_{season}.csv.gz",
                                 fetch(f"player stats {season}", fetcher.player_stats, season), compression="gzip"))
        written.append(write_csv(folder / f"stats_team_week_{season}.csv",  # team defenses (DST)
                                 fetch(f"team stats {season}", fetcher.team_stats, season)))
        written.append(write_csv(folder / f"injuries_{season}.csv", fetch(f"injuries {season}", fetcher.injuries, season)))
        written.append(write_csv(folder / f"roster_{season}.csv", fetch(f"rosters {season}", fetcher.rosters, season)))
    written.append(write_csv(folder / "games.csv", fetch("schedules", fetcher.schedules)))
    written.append(write_csv(folder / "db_playerids.csv", fetch("player ids", fetcher.ff_playerids)))
    return written
