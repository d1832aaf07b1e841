"""A data directory as it stood during a season: replaying a finished season as if it were live (tests, drills).

:func:`cut_data_dir` writes, into a new folder, the nflverse files of one season cut after week ``k``: player and
team stats of weeks <= k, the games of later weeks without their final scores, and the injury reports through week
k + 1 (the next week's report is out when its lineups are set), or through ``injuries_through`` (k: the days before
the next week's report). Every other file and folder is a symbolic link to
the original, so nothing real is copied. Only nflverse files are cut: a league whose stats come from
``sportsdataio/`` sees that folder whole.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

#: the season's stats files (players, teams), cut to weeks <= k
_STATS = (r"stats_player_week_{s}\.csv\.gz", r"player_stats_week_{s}\.csv", r"stats_team_week_{s}\.csv")
_INJURIES = r"injuries_{s}\.csv"
_GAMES = r"games.*\.csv"
_SCORES = ("home_score", "away_score", "result", "total", "overtime")


def cut_data_dir(data_dir: str | Path, season: int, week: int, out: str | Path,
                 injuries_through: int | None = None) -> Path:
    """Write ``out`` (a new folder): ``data_dir`` with ``season`` played through ``week`` (0: not started) and its
    injury reports through ``injuries_through`` (default ``week + 1``)."""
    src, out = Path(data_dir), Path(out)
    reports = week + 1 if injuries_through is None else injuries_through
    out.mkdir(parents=True, exist_ok=False)
    for item in sorted(src.iterdir()):
        if item.name != "nflverse":
            (out / item.name).symlink_to(item.resolve())
    nv = out / "nflverse"
    nv.mkdir()
    for f in sorted((src / "nflverse").iterdir()):
        name = f.name
        if any(re.fullmatch(p.format(s=season), name) for p in _STATS):
            _write(_read(f)[lambda d: d["week"].astype(int) <= week], nv / name)
        elif re.fullmatch(_INJURIES.format(s=season), name):
            _write(_read(f)[lambda d: d["week"].astype(int) <= reports], nv / name)
        elif re.fullmatch(_GAMES, name):
            games = _read(f)
            later = (games["season"].astype(int) == season) & (
                (games["week"].astype(int) > week) | (games["game_type"] != "REG"))
            games.loc[later, [c for c in _SCORES if c in games]] = ""
            _write(games, nv / name)
        else:
            (nv / name).symlink_to(f.resolve())
    return out


def _read(path: Path) -> pd.DataFrame:
    """Every cell as the exact text of the file (nothing parsed), so what is kept reads back unchanged."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def _write(df: pd.DataFrame, path: Path) -> None:
    df.to_csv(path, index=False, compression="gzip" if path.suffix == ".gz" else None)
