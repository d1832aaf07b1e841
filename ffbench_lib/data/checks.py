"""Content rules for the canonical tables, applied once (in :class:`~.base.DataSource`) after each source's
reader, so every source obeys the same rules: a bad row is refused, never silently scored or turned into a bye."""
from __future__ import annotations

import pandas as pd

from . import schema
from .base import REFETCH, DataError

#: Regular-season weeks (18 since 2021; earlier seasons stop at 17).
REG_WEEKS = range(1, 19)
#: Stats that may be negative (a loss of yards); every other counting stat cannot.
MAY_BE_NEGATIVE = frozenset({"passing_yards", "rushing_yards", "receiving_yards"})
_EXAMPLES = 3
#: Regular-season games that were never played (not byes): season -> {(team, week)}.
CANCELLED = {2022: {("BUF", 17), ("CIN", 17)}}  # Damar Hamlin's cardiac arrest, 2 Jan 2023


def _examples(df: pd.DataFrame, mask: pd.Series, col: str | None = None) -> str:
    rows = df.loc[mask].head(_EXAMPLES)
    out = []
    for _, r in rows.iterrows():
        value = f" {col}={r[col]!r}" if col else ""
        out.append(f"player {r['player_id']} week {r['week']}{value}")
    return ", ".join(out)


def _refuse(what: str, where: str, problems: list[str]) -> None:
    if problems:
        raise DataError(f"{what}: {where}: {'; '.join(problems)}; fix the file or {REFETCH}")


def checked_weekly(df: pd.DataFrame, what: str, where: str) -> pd.DataFrame:
    """``schema.conform_weekly(df)`` after refusing non-numeric stats, and before refusing repeated
    player-weeks, weeks outside 1..18 and negative counts (``df``: regular-season rows, canonical names)."""
    problems = []
    for col in ("season", "week", *schema.ALL_STATS):
        if col not in df or (pd.api.types.is_numeric_dtype(df[col]) and col not in ("season", "week")):
            continue
        bad = pd.to_numeric(df[col], errors="coerce").isna() & (df[col].notna() | (col in ("season", "week")))
        if bad.any():
            problems.append(f"column {col} has {int(bad.sum())} non-numeric or missing value(s), e.g. "
                            f"{_examples(df, bad, col)}")
    _refuse(what, where, problems)
    out = schema.conform_weekly(df)
    dup = out.duplicated(["player_id", "season", "week"])
    if dup.any():
        problems.append(f"{int(dup.sum())} row(s) repeat a player-week (one row per player and week), e.g. "
                        f"{_examples(out, dup)}")
    weeks = ~out["week"].isin(REG_WEEKS)
    if weeks.any():
        problems.append(f"{int(weeks.sum())} regular-season row(s) have a week outside "
                        f"{REG_WEEKS.start}..{REG_WEEKS.stop - 1}, e.g. {_examples(out, weeks)}")
    for col in schema.ALL_STATS:
        if col not in MAY_BE_NEGATIVE:
            neg = out[col] < 0
            if neg.any():
                problems.append(f"column {col} is negative in {int(neg.sum())} row(s) (a count cannot be), e.g. "
                                f"{_examples(out, neg, col)}")
    _refuse(what, where, problems)
    return out


def checked_schedule(games: pd.DataFrame, what: str, where: str, last: int) -> pd.DataFrame:
    """``games`` (one season's regular season) after refusing a week of 1..``last`` without games (or games
    after it), a team playing twice in a
    week, and a team idle in any week but its bye (``CANCELLED`` games aside): a missing game would otherwise
    become a wrong bye and a week of zero points."""
    season = int(games["season"].iloc[0])
    problems = []
    weeks = set(games["week"].astype(int))
    gaps = [w for w in range(1, last + 1) if w not in weeks]
    if gaps:
        problems.append(f"no games in week(s) {', '.join(map(str, gaps))} of weeks 1..{last}")
    extra = sorted(w for w in weeks if not 1 <= w <= last)
    if extra:
        problems.append(f"games in week(s) {', '.join(map(str, extra))}, outside the regular season's 1..{last}")
    slots = pd.concat([games[["week", "home_team"]].set_axis(["week", "team"], axis=1),
                       games[["week", "away_team"]].set_axis(["week", "team"], axis=1)], ignore_index=True)
    twice = slots[slots.duplicated(keep="first")]
    if len(twice):
        problems.append("team(s) with two games in one week: " + ", ".join(
            f"{t} week {w}" for w, t in twice.head(_EXAMPLES).itertuples(index=False)))
    if not gaps and not extra:
        cancelled = CANCELLED.get(season, set())
        played = slots.groupby("team")["week"].agg(set)
        idle = {t: [w for w in range(1, last + 1) if w not in ws and (t, w) not in cancelled]
                for t, ws in played.items()}
        idle = {t: ws for t, ws in idle.items() if len(ws) != 1}
        if idle:
            problems.append(f"{len(idle)} team(s) idle in other than exactly one week (the bye): " + ", ".join(
                f"{t} idle in week(s) {'/'.join(map(str, ws)) or 'none'}" for t, ws in list(idle.items())[:_EXAMPLES]))
    _refuse(what, where, problems)
    return games


def checked_byes(byes: pd.DataFrame, games: pd.DataFrame, what: str, where: str) -> pd.DataFrame:
    """``byes`` after refusing a team of the schedule without exactly one bye, a bye after week last-3 (no
    32-team season ever had one; week 1 happened: MIA/TB 2017), or a bye in a week the team plays."""
    last = int(games["week"].max())
    teams = set(games["home_team"]) | set(games["away_team"])
    problems = []
    counts = byes["team"].value_counts()
    wrong = sorted(t for t in teams if counts.get(t, 0) != 1)
    if wrong:
        problems.append(f"team(s) without exactly one bye: {', '.join(wrong)}")
    lo, hi = (1, last - 3) if len(teams) % 2 == 0 else (1, last)  # 1999-2001's 31 teams: someone idle each week
    odd = byes[byes["bye_week"].isna() | ~byes["bye_week"].between(lo, hi)]
    if len(odd):
        problems.append(f"bye week outside {lo}..{hi}: " + ", ".join(
            f"{t} {w}" for t, w in odd[["team", "bye_week"]].head(_EXAMPLES).itertuples(index=False)))
    slots = set(zip(games["home_team"], games["week"])) | set(zip(games["away_team"], games["week"]))
    clash = [f"{t} week {w}" for t, w in byes[["team", "bye_week"]].dropna().itertuples(index=False)
             if (t, int(w)) in slots]
    if clash:
        problems.append(f"bye in a week the team plays: {', '.join(clash[:_EXAMPLES])}")
    _refuse(what, where, problems)
    return byes
