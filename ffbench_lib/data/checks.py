"""Content rules for the canonical tables, applied once (in :class:`~.base.DataSource`) after each source's
reader, so every source obeys the same rules: a bad row is refused, never silently scored or turned into a bye."""
from __future__ import annotations

from typing import Callable, Mapping

import pandas as pd

from ffbench_lib.sport import scoring, sport
from ffbench_lib.sport.scoring import MAY_BE_NEGATIVE
from ffbench_lib.data import schema
from ffbench_lib.data.errors import REFETCH, DataError

#: Regular-season weeks (18 since 2021; earlier seasons stop at 17).
REG_WEEKS = range(1, 19)
_EXAMPLES = 3
#: Regular-season games that were never played (not byes): season -> {(team, week)}.
CANCELLED = sport("nfl").cancelled_games


def _examples(df: pd.DataFrame, mask: pd.Series, col: str | None = None) -> str:
    rows = df.loc[mask].head(_EXAMPLES)
    out = []
    for _, r in rows.iterrows():
        value = f" {col}={r[col]!r}" if col else ""
        name = f" ({r['player_name']})" if "player_name" in r and pd.notna(r["player_name"]) else ""
        out.append(f"player {r['player_id']}{name} week {r['week']}{value}")
    return ", ".join(out)


def _refuse(what: str, where: str, problems: list[str]) -> None:
    if problems:
        raise DataError(f"{what}: {where}: {'; '.join(problems)}; fix the file or {REFETCH}")


def checked_weekly(df: pd.DataFrame, what: str, where: str, may_be_blank: tuple[str, ...] = ()) -> pd.DataFrame:
    """``schema.conform_weekly(df)`` after refusing non-numeric stats and blank cells, and before refusing
    repeated player-weeks, weeks outside 1..18 and negative counts (``df``: regular-season rows, canonical names).
    A stat blank in some rows and given in others is a damaged file (a blank would score as 0); a stat blank in
    every row is one the source does not break down (NaN in the canonical table). ``may_be_blank``: stats whose
    blank means "not known yet" (a score not yet in the schedule), left to :func:`.prepare.played_through`."""
    problems = []
    for col in ("season", "week", *schema.ALL_STATS, "fantasy_points_ppr"):
        if col not in df:
            continue
        missing = df[col].isna()
        key = col in ("season", "week")
        if missing.any() and (key or not (missing.all() or col in may_be_blank)):
            why = ("every row needs one" if key else "the source's own points" if col == "fantasy_points_ppr"
                   else "a blank stat would score as 0")
            problems.append(f"column {col} is blank in {int(missing.sum())} of {len(df)} row(s) ({why}), e.g. "
                            f"{_examples(df, missing)}")
        if not pd.api.types.is_numeric_dtype(df[col]):
            bad = pd.to_numeric(df[col], errors="coerce").isna() & ~missing
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


#: our points and a source's own, both rounded to 1/100, agree within this
PPR_TOLERANCE = 0.005


def checked_ppr_parity(df: pd.DataFrame, what: str, where: str, column: str,
                       reasons: Callable[[pd.Series], Mapping[str, tuple[pd.Series, str]]]) -> dict:
    """Our ``ppr`` points of every row of ``df`` (the rows :func:`checked_weekly` passed) against the source's own
    PPR points (``fantasy_points_ppr``, the file's ``column``): a DataError naming the rows that differ for no
    known reason (a wrong or missing stat that the other checks cannot see), else the result for the prepared
    manifest. ``reasons(gap)`` (``gap``: ours less theirs): name -> (mask of the rows the source's own rule
    explains, what it means); the first that holds classifies a row."""
    if "fantasy_points_ppr" not in df or df["fantasy_points_ppr"].isna().all():
        return {"column": None, "rows_compared": 0, "note": "the file has no PPR points of its own"}
    stats = df[[c for c in scoring.PPR if c in df and c != "fumbles_lost"]].assign(fumbles_lost=schema.fumbles_lost(df))
    ours = scoring.fantasy_points(stats, scoring.PPR)
    theirs = pd.to_numeric(df["fantasy_points_ppr"], errors="coerce")
    differ = (ours - theirs).abs() > PPR_TOLERANCE
    left, counts, meaning = differ.copy(), {}, {}
    for name, (mask, text) in (reasons(ours - theirs) if differ.any() else {}).items():
        hit = left & mask
        if hit.any():
            counts[name], meaning[name] = int(hit.sum()), text
            left &= ~mask
    if left.any():
        ex = df.loc[left].head(_EXAMPLES)
        examples = ", ".join(
            f"player {r.player_id} ({r.player_name}) week {r.week}: ours {o:g}, the file's {t:g}"
            for r, o, t in zip(ex.itertuples(), ours[ex.index], theirs[ex.index]))
        _refuse(what, where, [f"our PPR points differ from the file's own {column} in {int(left.sum())} of {len(df)} "
                              f"row(s) for no known reason (a stat is wrong or missing there), e.g. {examples}"])
    return {"column": column, "rows_compared": len(df), "matching": int((~differ).sum()),
            "classified_mismatches": counts, **({"reasons": meaning} if meaning else {})}
