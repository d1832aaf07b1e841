"""The data-source interface and the id crosswalk shared by every source."""
from __future__ import annotations

import re
import textwrap
import unicodedata
import zlib
from abc import ABC, abstractmethod
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterable

import pandas as pd

from ffbench_lib.data.checks import checked_byes, checked_ppr_parity, checked_schedule, checked_weekly
from ffbench_lib.data.errors import REFETCH, DataError
from ffbench_lib.data.schema import normalize_team


def csv_columns(path: Path, what: str) -> list[str]:
    """The header of a CSV (plain or .gz), or a DataError naming the file."""
    return list(read_csv(path, what, nrows=0).columns)


def read_csv(path: Path, what: str, required: Iterable[str] = (), complete_lines: bool = False,
             **kwargs) -> pd.DataFrame:
    """``pd.read_csv`` whose failures (missing, truncated or corrupt file, missing columns) are one DataError
    naming the file, what it is and the fix; ``required`` columns are checked on the header first.
    ``complete_lines``: a machine-written plain CSV must end with a line break (else it was cut off)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{what}: {path} not found; {REFETCH}")
    if complete_lines and path.suffix == ".csv" and path.stat().st_size:
        with path.open("rb") as fh:
            fh.seek(-1, 2)
            if fh.read(1) != b"\n":
                raise DataError(f"{what}: {path} ends in the middle of a line: the file is truncated; {REFETCH}")
    required = list(required)
    if required:
        have = set(csv_columns(path, what))  # read the header once, not once per column
        missing = [c for c in required if c not in have]
        if missing:
            raise DataError(f"{what}: {path} lacks column(s) {', '.join(missing)}; {REFETCH}")
    try:
        return pd.read_csv(path, **kwargs)
    except (ValueError, OSError, EOFError, zlib.error) as exc:  # parser, encoding, gzip and zlib errors
        detail = textwrap.shorten((str(exc).strip().splitlines() or [""])[0], width=200, placeholder=" [...]")
        raise DataError(f"{what}: cannot read {path} ({type(exc).__name__}: {detail}); the file is truncated "
                        f"or corrupt: {REFETCH}") from None


def check_season(df: pd.DataFrame, col: str, season: int, what: str, path: object, fix: str | None = None) -> None:
    """A DataError when a one-season file holds rows of another season (its ``col``): another season's file saved
    under this season's name would otherwise be read as this season, and fail later, if at all, for a wrong reason."""
    seasons = pd.to_numeric(df[col], errors="coerce")
    other = seasons.notna() & (seasons != season)
    if other.any():
        found = ", ".join(str(int(s)) for s in sorted(seasons[other].unique()))
        fix = fix or f"nflverse files: `ffbench data download --seasons {season} --out DIR`"
        raise DataError(f"{what}: {path} holds season {found} rows ({int(other.sum())} of {len(df)}, its {col} "
                        f"column), not {season}: it is another season's file; replace it with the {season} one "
                        f"({fix})")


_SUFFIX = re.compile(r"\b(jr|sr|ii|iii|iv|v)\b\.?")


def name_key(name: object) -> str:
    """Normalised player name for joins across sources: 'D.J. Moore Jr.' -> 'dj moore'."""
    return _name_key(name) if isinstance(name, str) else ""


@lru_cache(maxsize=1 << 16)
def _name_key(name: str) -> str:
    """:func:`name_key` of a string, kept: a crosswalk repeats each player's name once per roster file (68,000
    names, a few thousand players)."""
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    s = s.replace(".", "").replace("'", "").replace("-", " ")
    s = _SUFFIX.sub("", s)
    return re.sub(r"[^a-z ]", "", re.sub(r"\s+", " ", s)).strip()


class DataSource(ABC):
    """One provider's files. Every method returns a canonical table (see ``schema``) for one season."""

    name: str = "abstract"

    def __init__(self, root: Path):
        self.root = Path(root)
        if not self.root.is_dir():
            raise DataError(f"data directory {self.root} does not exist; set FFBENCH_DATA_DIR or data.dir "
                            "to the folder holding nflverse/ (and sportsdataio/, projections/ if you have them)")

    # -- files -----------------------------------------------------------------------------------------
    def _sub(self, name: str) -> Path:
        """``root/name`` when the root holds several sources, else the root itself."""
        sub = self.root / name
        return sub if sub.is_dir() else self.root

    def _file(self, folder: Path, pattern: str, what: str) -> Path:
        hits = sorted(folder.glob(pattern))
        if not hits:
            raise DataError(f"{what}: no file matching {pattern!r} in {folder}; run "
                            f"`ffbench data download --seasons ... --out {self.root}` or check FFBENCH_DATA_DIR")
        # several (a fresh download's games.csv beside an older games_1999_2025.csv): the newest written wins
        return max(hits, key=lambda p: (p.stat().st_mtime, p.name))

    # -- crosswalk ---------------------------------------------------------------------------------------
    @cached_property
    def id_crosswalk(self) -> pd.DataFrame:
        """gsis_id <-> fantasy_data_id (SportsData.io) <-> names, from DynastyProcess ids and nflverse rosters."""
        nv = self._sub("nflverse")
        frames = []
        for path in sorted(nv.glob("db_playerids*.csv")):
            cols = ["gsis_id", "fantasy_data_id", "name", "position", "team"]
            ids = read_csv(path, "player id crosswalk", cols, usecols=cols, dtype={"gsis_id": "string"})
            frames.append(ids.rename(columns={"name": "full_name"}))
        for path in sorted(nv.glob("roster_*.csv")):
            cols = ["gsis_id", "fantasy_data_id", "full_name", "position", "team"]
            frames.append(read_csv(path, "nflverse roster", cols, usecols=cols, dtype={"gsis_id": "string"}))
        if not frames:
            return pd.DataFrame(columns=["gsis_id", "fantasy_data_id", "full_name", "position", "team"])
        cw = pd.concat(frames, ignore_index=True)
        cw = cw[cw["gsis_id"].notna() & cw["gsis_id"].str.startswith("00-")]
        cw["fantasy_data_id"] = pd.to_numeric(cw["fantasy_data_id"], errors="coerce").astype("Int64")
        cw["name_key"] = cw["full_name"].map(name_key)
        cw["team"] = normalize_team(cw["team"])
        return cw.drop_duplicates(["gsis_id", "fantasy_data_id"]).reset_index(drop=True)

    def sdio_to_gsis(self) -> dict[int, str]:
        cw = self.id_crosswalk.dropna(subset=["fantasy_data_id"])
        cw = cw.drop_duplicates("fantasy_data_id", keep="first")
        return dict(zip(cw["fantasy_data_id"].astype(int), cw["gsis_id"].astype(str)))

    # -- the interface -------------------------------------------------------------------------------------
    # weekly/schedule/byes apply the shared content rules (``checks``) to what each source's reader returns,
    # so no source can skip them.
    #: the source's own PPR points column (``fantasy_points_ppr`` in the canonical table), as its files name it
    ppr_column = "fantasy_points_ppr"

    def weekly(self, season: int) -> pd.DataFrame:
        """Actual stats, one row per player-week (regular season), canonical columns; read and checked once
        per source object (callers must not modify it), our PPR points included (:meth:`ppr_parity`)."""
        def read() -> pd.DataFrame:
            rows, where = self._weekly_rows(season)
            what = f"{self.name} weekly stats {season}"
            weekly = checked_weekly(rows, what, where)
            self.__dict__.setdefault("_parity", {})[season] = checked_ppr_parity(
                rows, what, where, self.ppr_column, lambda gap: self._ppr_reasons(rows, season, gap))
            return weekly
        return self._once("weekly", season, read)

    def _once(self, table: str, season: int, read) -> pd.DataFrame:
        """``read()``'s table, read and checked once per source object and season (callers must not modify it:
        a preparation reads the weekly stats, the schedule and the byes several times)."""
        cache = self.__dict__.setdefault(f"_{table}_cache", {})
        if season not in cache:
            cache[season] = read()
        return cache[season]

    def ppr_parity(self, season: int) -> dict:
        """How our ``ppr`` points compare with the source's own in every row of the season's weekly stats (rows,
        matching, mismatches by known reason; see ``checks.checked_ppr_parity``): the prepared manifest's."""
        self.weekly(season)
        return self.__dict__["_parity"][season]

    def _ppr_reasons(self, rows: pd.DataFrame, season: int, gap: pd.Series) -> dict[str, tuple[pd.Series, str]]:
        """The known reasons the source's own PPR points differ from ours (``gap``: ours less theirs, per row of
        :meth:`_weekly_rows`): name -> (rows it explains, what it means). None by default: every row must match."""
        return {}

    def schedule(self, season: int) -> pd.DataFrame:
        """Regular-season games (``schema.SCHEDULE_COLUMNS``), read once (:meth:`_once`)."""
        def read() -> pd.DataFrame:
            games, where = self._schedule_rows(season)
            return checked_schedule(games, f"{self.name} schedule {season}", where, self.last_week(season))
        return self._once("schedule", season, read)

    def last_week(self, season: int) -> int:
        """The last regular-season week the source's schedule covers (the NFL's: 18 since 2021, else 17)."""
        return 18 if season >= 2021 else 17

    def byes(self, season: int) -> pd.DataFrame:
        """``season, team, bye_week``: one row per team, read once (:meth:`_once`)."""
        def read() -> pd.DataFrame:
            byes, where = self._bye_rows(season)
            return checked_byes(byes, self.schedule(season), f"{self.name} byes {season}", where)
        return self._once("byes", season, read)

    @abstractmethod
    def _weekly_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        """Regular-season player-week rows under canonical names (not yet conformed), and the file(s) read."""

    @abstractmethod
    def _schedule_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        """Regular-season games (``schema.SCHEDULE_COLUMNS``), and the file(s) read."""

    @abstractmethod
    def _bye_rows(self, season: int) -> tuple[pd.DataFrame, str]:
        """``season, team, bye_week``, and the file(s) read."""

    @abstractmethod
    def injuries(self, season: int) -> pd.DataFrame:
        """Official pre-game report status per player-week (``schema.INJURY_COLUMNS``)."""

    def season_projections(self, season: int) -> pd.DataFrame | None:
        """Preseason projected stat lines (canonical stat names) plus ``adp``; ``None`` if the source has none."""
        return None

    def weekly_projections(self, season: int) -> pd.DataFrame | None:
        """Projected stat lines per player-week, published before the games; ``None`` if the source has none."""
        return None

    def available_seasons(self) -> list[int]:
        return []

    def check(self, season: int) -> None:
        """Raise a DataError if a file the season's tables are read from is missing or lacks its columns."""



def _unique_lookup(cw: pd.DataFrame, keys: list[str]) -> pd.Series:
    """(keys) -> gsis_id for key combinations that name exactly one player."""
    g = cw.groupby(keys, dropna=True)["gsis_id"].agg(["nunique", "first"])
    return g.loc[g["nunique"] == 1, "first"]


def resolve_names(df: pd.DataFrame, crosswalk: pd.DataFrame, name_col: str = "player_name",
                  pos_col: str = "position", team_col: str | None = "team") -> pd.Series:
    """gsis ids for rows known only by name: a unique (name, position, team) match first, then a unique
    (name, position) match; ``<NA>`` where neither is unique (reported by callers, never guessed)."""
    probe = pd.DataFrame({"name_key": df[name_col].map(name_key).to_numpy(),
                          "position": df[pos_col].to_numpy()}, index=df.index)
    out = pd.Series(pd.NA, index=df.index, dtype="string")
    if team_col is not None and team_col in df:
        probe["team"] = df[team_col].to_numpy()
        c3 = _unique_lookup(crosswalk.drop_duplicates(["gsis_id", "team"]), ["name_key", "position", "team"])
        idx = pd.MultiIndex.from_frame(probe[["name_key", "position", "team"]].astype(object))
        out = pd.Series(c3.reindex(idx).to_numpy(), index=df.index, dtype="string")
    c2 = _unique_lookup(crosswalk.drop_duplicates("gsis_id"), ["name_key", "position"])
    idx = pd.MultiIndex.from_frame(probe[["name_key", "position"]].astype(object))
    return out.fillna(pd.Series(c2.reindex(idx).to_numpy(), index=df.index, dtype="string"))
