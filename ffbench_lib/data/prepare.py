"""The prepared season: every table the league engine needs for one season, as parquet.

``prepare_season`` reads one source (plus the preseason files beside it), scores everything under the
league scoring, computes the built-in projections from earlier seasons only, and writes:

==========================  =====================================================================
``players.parquet``         one row per player: id, name, position, preseason team and bye, ADP,
                            preseason projected points (each source + the selected one), previous
                            seasons' points and games, rookie draft slot, ``in_draft_pool``
``weekly.parquet``          actual stats, one row per player-week, plus ``fantasy_points``
``weekly_projections.parquet``  per player-week projections published before kickoff
``injuries.parquet``        official pre-game report status per player-week
``byes.parquet``            one row per team
``schedule.parquet``        regular-season games
``manifest.json``           inputs, scoring, row counts, unmatched players, fingerprint, ``ppr_parity`` (our
                            PPR points against the source's own), and only for a season that lacks some,
                            ``unavailable`` inputs (injury report, rosters, ADP) with what is used instead
                            (``unavailable_notes``)
==========================  =====================================================================

A league with kickers (K) or team defenses (DST) passes its ``positions``: only then do their rows (and their
stat columns, ``schema.weekly_columns``) appear, so a league without them gets exactly the tables it always had.

Writing is idempotent: a second call with the same inputs and parameters finds the same fingerprint and
leaves the files alone (``force=True`` rewrites them); every file is written atomically.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd
from filelock import FileLock

from ffbench_lib import __version__
from ffbench_lib.data import projections
from ffbench_lib.sport import sport
from ffbench_lib.core.paths import outputs_dir
from ffbench_lib.sport.scoring import STAT_GROUPS, check_tiers, check_weights, fantasy_points, resolve_tiers, resolve_weights
from ffbench_lib.data import schema
from ffbench_lib.data.sources import get_source
from ffbench_lib.data.base import REFETCH, DataError, DataSource
from ffbench_lib.data import fpl
from ffbench_lib.data.prepared import TABLES, PreparedSeason, load_prepared, write_prepared  # noqa: F401 (re-exported)
from ffbench_lib.data.nflverse import NflverseDir
from ffbench_lib.data.projection_files import fantasypros_season_projections, nflcom_weekly, preseason_adp
from ffbench_lib.data.sportsdataio import SportsDataIODir

#: the sport whose sources are prepared (positions, aliases, stat groups)
NFL = sport("nfl")

# ------------------------------------------------------------------------------------------------- helpers

def _positions(positions: Sequence[str]) -> tuple[str, ...]:
    unknown = [p for p in positions if p not in NFL.positions]
    if unknown:
        raise DataError(f"positions: unknown position(s) {', '.join(map(str, unknown))}; allowed: "
                        f"{', '.join(NFL.positions)}")
    return tuple(p for p in NFL.positions if p in positions)


def _fantasy_only(weekly: pd.DataFrame, positions: Sequence[str] = schema.DEFAULT_POSITIONS) -> pd.DataFrame:
    """The rows of the league's positions, with the league's columns (``schema.weekly_columns``)."""
    w = weekly.assign(position=weekly["position"].replace(dict(NFL.position_aliases)))
    w = w[w["position"].isin(positions)].reset_index(drop=True)
    return w[[c for c in schema.weekly_columns(positions) if c in w.columns]]


def _scored(weekly: pd.DataFrame, weights: Mapping[str, float], what: str = "weekly stats",
            positions: Sequence[str] = schema.DEFAULT_POSITIONS, tiers: Mapping | None = None) -> pd.DataFrame:
    w = _fantasy_only(weekly, positions)
    # A scored stat with no value in a whole season means the file lacks it: scoring it as zero is silently wrong.
    # (A stat is looked for in the rows of the positions that have it: kickers' field goals in kickers' rows.)
    empty = []
    for s, v in {**{k: v for k, v in weights.items() if v != 0}, **{k: 1 for k in tiers or {}}}.items():
        has = [p for p in positions if set(NFL.position_stat_groups[p]) & set(STAT_GROUPS.get(s, ()))]
        rows = w[w["position"].isin(has)] if set(positions) - set(schema.DEFAULT_POSITIONS) else w
        if len(rows) and (s not in rows or rows[s].isna().all()):
            empty.append(s)
    if empty:
        raise DataError(f"{what}: no values for {', '.join(empty)}, which the league scoring counts; use a "
                        "complete stats file (`ffbench data download`)")
    w["fantasy_points"] = fantasy_points(w, weights, tiers)
    return w


def _rows(s: DataSource, season: int, positions: Sequence[str], history: bool = False) -> pd.DataFrame:
    """A season's player rows plus, for a league with DST, its team-defense rows. For a past season
    (``history``) kickers are left out where the file has no kicking columns and defenses where the season has
    no team stats (no history, like a missing season; :func:`input_problems` decides whether that is allowed)."""
    w = s.weekly(season)
    kickers = [p for p in positions if p in schema.KICKING_POSITIONS]
    if kickers and history and _kicking_problem(s, season):
        w = w[~w["position"].isin(kickers)]
    if schema.DEFENSE_POSITION in positions and not (history and _defense_problem(s, season)):
        w = pd.concat([w, s.defense(season)], ignore_index=True)
        w = w.sort_values(["season", "week", "player_id"], kind="stable").reset_index(drop=True)
    return w


def _kicking_problem(s: DataSource, season: int) -> str | None:
    probe = getattr(s, "kicking_problem", None)
    return probe(season) if probe else f"{s.name}: no kicker (K) stats; use data.source nflverse or remove K"


def _defense_problem(s: DataSource, season: int) -> str | None:
    """Why ``s`` has no team-defense rows for ``season`` (a missing file), else None (read errors raise)."""
    try:
        s.defense(season)
    except DataError as exc:
        return str(exc)
    return None


def _has_season(s: DataSource | None, season: int) -> bool:
    return s is not None and season in s.available_seasons()


def _history(src: DataSource, nv: NflverseDir | None, season: int, weights,
             positions: Sequence[str] = schema.DEFAULT_POSITIONS, tiers: Mapping | None = None) -> pd.DataFrame | None:
    """A past season's scored weekly table from the source, else from nflverse files beside it; None when
    neither has that season (a file that is there but broken is an error, never skipped)."""
    for s in (src, nv):
        if _has_season(s, season):
            return _scored(_rows(s, season, positions, history=True), weights, f"{s.name} weekly stats {season}",
                           positions, tiers)
    return None


def _nflverse_beside(src: DataSource) -> NflverseDir | None:
    if isinstance(src, NflverseDir):
        return src
    try:
        return NflverseDir(src.root)
    except DataError:
        return None


def _has_injury_report(nv: NflverseDir | None, season: int) -> bool:
    return nv is not None and (nv.folder / f"injuries_{season}.csv").exists()


def unavailable_inputs(src: DataSource, season: int) -> dict[str, str]:
    """The optional files ``season`` lacks (the newest season: injury report, rosters), each with what a run
    uses instead (``NflverseDir.unavailable``); SportsData.io data has an injury status of its own."""
    nv = _nflverse_beside(src)
    out = nv.unavailable(season) if nv is not None else {}
    return {k: v for k, v in out.items() if k != "injury_report" or src is nv}


def missing_history_problem(src: DataSource, season: int) -> str | None:
    """Why ``season`` lacks the previous season's weekly stats (the built-in projections and every player's
    ``prev_points`` need them), or None."""
    if _has_season(src, season - 1) or _has_season(_nflverse_beside(src), season - 1):
        return None
    return (f"season {season} needs the {season - 1} weekly stats (nflverse/stats_player_week_{season - 1}.csv.gz "
            f"or player_stats_week_{season - 1}.csv) in {src.root}: without them every veteran's previous-season "
            f"points and built-in projection are 0. Add them (`ffbench data download --seasons {season - 1} "
            f"--out DIR`), choose a later season, or set data.allow_missing_history: true (`ffbench data prepare "
            "--allow-missing-history`) to run anyway "
            "(recorded in the prepared manifest)")


def position_problems(src: DataSource, season: int, positions: Sequence[str],
                      allow_missing_history: bool = False) -> list[str]:
    """Why a league with kickers or team defenses cannot be run on ``season`` from ``src``: the season's (or,
    unless ``allow_missing_history``, the previous season's) kicking columns or team stats are missing."""
    problems: list[str] = []
    nv = _nflverse_beside(src)
    prev = next((s for s in (src, nv) if _has_season(s, season - 1)), None)
    for pos in positions:
        kicking = pos in schema.KICKING_POSITIONS
        if not kicking and pos != schema.DEFENSE_POSITION:
            continue
        probe = _kicking_problem if kicking else _defense_problem
        try:
            problem = probe(src, season)
        except DataError as exc:  # the season's weekly file itself: src.check reports it
            problem = None if kicking else str(exc)
        if problem:
            problems.append(problem)
        if problem or allow_missing_history or prev is None:
            continue  # a missing previous season is missing_history_problem's
        try:
            problem = probe(prev, season - 1)
        except DataError as exc:
            problem = str(exc)
        if problem:
            problems.append(f"season {season} with {pos} needs the {season - 1} {pos} stats for their history and "
                            f"projections: {problem}; or set data.allow_missing_history: true (`ffbench data "
                            f"prepare --allow-missing-history`) to run with no {pos} history")
    return problems


def input_problems(src: DataSource, season: int, projection_source: str = "builtin",
                   allow_missing_history: bool = False,
                   positions: Sequence[str] = schema.DEFAULT_POSITIONS) -> list[str]:
    """Every input a run of ``season`` from ``src`` reads that is missing, unreadable or lacks its columns;
    ``ffbench validate`` and ``prepare_season`` use this one list, so they agree."""
    problems: list[str] = []
    nv = _nflverse_beside(src)
    checks = [lambda: src.check(season), lambda: src.id_crosswalk]
    for s in (src, nv):  # the previous season, where the run will read it
        if _has_season(s, season - 1):
            checks.append(lambda s=s: s.weekly(season - 1))
            break
    for check in checks:
        try:
            check()
        except DataError as exc:
            problems.append(str(exc))
    problems += position_problems(src, season, _positions(positions), allow_missing_history)
    if isinstance(src, SportsDataIODir):  # injuries: nflverse's report where present, else SportsData.io's
        try:
            if _has_injury_report(nv, season):
                nv.injury_file(season)
            else:
                src._week_files(season, "PlayerGameProjectionStatsByWeek.csv")
        except DataError as exc:
            problems.append(str(exc))
    if not allow_missing_history:
        problem = missing_history_problem(src, season)
        if problem:
            problems.append(problem)
    needs = {"sportsdataio": ("sportsdataio", f"{season}/PlayerSeasonProjectionStats.csv"),
             "fantasypros": ("projections", f"fantasypros_season_projections_{season}_raw.csv")}
    if projection_source in needs:
        sub, name = needs[projection_source]
        if not any((folder / name).is_file() for folder in (src.root / sub, src.root)):
            problems.append(f"data.projections: {projection_source!r} has no preseason projections for {season} "
                            f"in {src.root} ({sub}/{name} missing); use 'builtin' (always available) or another "
                            "source")
    return problems


def played_through(rows: pd.DataFrame, schedule: pd.DataFrame, scores: bool, source: str, season: int) -> int:
    """The last week up to which every week is played: every team of its games has stats rows (``rows``: the
    season's player-weeks) and, with ``scores`` (team defenses' points allowed), every game its final score.
    The week after it may be under way; anything later means a file with a hole (a DataError): a week with no
    results would otherwise score every player 0."""
    teams = pd.concat([schedule[["week", "home_team"]].set_axis(["week", "team"], axis=1),
                       schedule[["week", "away_team"]].set_axis(["week", "team"], axis=1)], ignore_index=True)
    need, have = ({int(w): set(t.dropna()) for w, t in schema.normalize_team(df["team"]).groupby(df["week"].to_numpy())}
                  for df in (teams, rows))
    done = {w: need[w] - have.get(w, set()) for w in need}
    sides = schedule[["home_score", "away_score"]].notna()
    scored = sides.all(axis=1).groupby(schedule["week"].to_numpy()).all()
    any_score = sides.any(axis=1).groupby(schedule["week"].to_numpy()).any()
    checks = [(lambda w: not done[w], lambda w: w in have,
               lambda w: f"{source} weekly stats {season}: no rows for "
                         f"{'any team' if done[w] == need[w] else ', '.join(sorted(done[w]))} in week {w}, which the "
                         "schedule has, though later weeks have rows; the stats file is incomplete: replace it with a "
                         "complete copy")]
    if scores:
        checks.append((lambda w: bool(scored[w]), lambda w: bool(any_score[w]),
                       lambda w: f"{source} schedule {season}: week {w} lacks final scores (team defenses' points "
                                 f"allowed), though later weeks have them; {REFETCH}"))
    last = max(need)
    played = last
    for complete, started, problem in checks:  # complete: the week is played; started: it has any results
        upto = next((w - 1 for w in range(1, last + 1) if not complete(w)), last)
        if any(started(w) for w in range(upto + 2, last + 1)):
            raise DataError(problem(upto + 1))
        played = min(played, upto)
    return played


def last_played_week(src: DataSource, season: int, positions: Sequence[str] = schema.DEFAULT_POSITIONS,
                     schedule: pd.DataFrame | None = None) -> int:
    """:func:`played_through` of a source's season (``ffbench validate`` and preparing). Final scores count
    only for nflverse team defenses, whose points allowed come from the schedule."""
    scores = schema.DEFENSE_POSITION in positions and isinstance(src, NflverseDir)
    return played_through(src.weekly(season), src.schedule(season) if schedule is None else schedule, scores,
                          src.name, season)


def unplayed_weeks_problem(season: int, league_weeks: int, played: int, season_weeks: int) -> str | None:
    """Why a league cannot be run (``ffbench run``, ``validate``) on a season of ``season_weeks`` weeks played
    through week ``played``: its later weeks have no results, and would be scored 0 to 0 (``ffbench live`` waits
    for them, passing ``played=season_weeks``)."""
    if league_weeks <= played:
        return None
    if played >= season_weeks:
        return (f"season {season} has {season_weeks} weeks in this data, but the league plays {league_weeks}; set "
                f"`weeks: {season_weeks}` (or fewer) in the league config")
    done = f"has results through week {played} only" if played else "has no results yet (week 1 is not played)"
    fix = f"set `weeks: {played}` in the league config to play the weeks that are done, or " if played else ""
    return (f"season {season} {done}, but the league plays {league_weeks} weeks; {fix}play the season as it goes "
            "with `ffbench live CONFIG --out DIR`")


def _raise_problems(problems: list[str], season: int, source: str) -> None:
    if len(problems) == 1:
        raise DataError(f"data for season {season} ({source}): {problems[0]}")
    if problems:
        raise DataError("\n".join([f"data for season {season} ({source}) cannot be used:",
                                    *(f"  - {p}" for p in problems)]))


def check_inputs(league, live: bool = False) -> int:
    """Raise a DataError listing every input a run of ``league`` would miss (``ffbench validate``); return the
    season's last played week. ``live`` (``validate --live``): weeks without results yet pass, as ``ffbench live``
    waits for them; a league longer than the season is refused all the same."""
    if league.data.source == "fpl":
        return _check_fpl_inputs(league, live)
    src = get_source(league.data.source, league.data.resolved_dir())
    _raise_problems(input_problems(src, league.season, league.data.projections,
                                   league.data.allow_missing_history, league.roster.positions),
                    league.season, league.data.source)
    schedule = src.schedule(league.season)
    played, season_weeks = last_played_week(src, league.season, league.roster.positions, schedule), \
        int(schedule["week"].max())
    problem = unplayed_weeks_problem(league.season, league.weeks, season_weeks if live else played, season_weeks)
    if problem:
        raise DataError(problem)
    return played


def _check_fpl_inputs(league, live: bool) -> int:
    """:func:`check_inputs` of a Premier League season: its folder, the season before (unless allowed without),
    and the gameweeks played."""
    spec, root = league.sport_spec, league.data.resolved_dir()
    name = spec.season_name(league.season)
    folder = fpl.season_dir(root, name)
    if not (folder / "gws").is_dir():
        raise DataError(fpl.missing_season(root, name))
    if not (fpl.season_dir(root, spec.season_name(league.season - 1)) / "gws").is_dir() and \
            not league.data.allow_missing_history:
        raise DataError(f"data for season {name} (fpl): the season before is missing, so no player has a history; "
                        "add its folder or set data.allow_missing_history: true")
    played, season_weeks = fpl.last_played(root, league.season)
    problem = unplayed_weeks_problem(name, league.weeks, season_weeks if live else played, season_weeks)
    if problem:
        raise DataError(problem)
    return played


def _fingerprint(root: Path, params: dict) -> str:
    h = hashlib.sha256(json.dumps({"v": __version__, **params}, sort_keys=True, default=str).encode())
    for sub in ("nflverse", "sportsdataio", "projections"):
        folder = root / sub if (root / sub).is_dir() else root
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(root)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _points(df: pd.DataFrame | None, weights) -> pd.DataFrame | None:
    if df is None:
        return None
    return df.assign(proj_points=fantasy_points(df, weights).to_numpy())


def _offense_lines(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """Projected stat lines without kickers and defenses: the third-party files give no kicking or defense
    stat lines in our columns, so their lines would score 0 (K and DST use the built-in projection)."""
    return None if df is None else df[~df["position"].isin(schema.EXTRA_STAT_POSITIONS)].reset_index(drop=True)


def _of_positions(df: pd.DataFrame | None, positions: Sequence[str]) -> pd.DataFrame | None:
    return None if df is None else df[df["position"].isin(positions)].reset_index(drop=True)


# -------------------------------------------------------------------------------------------------- prepare

def prepare_season(season: int, source: str = "nflverse", data_dir: str | Path | None = None,
                   scoring: str | Mapping[str, float] = "ppr", projection_source: str = "builtin",
                   weeks: int = 18, out: str | Path | None = None, force: bool = False,
                   allow_missing_history: bool = False, positions: Sequence[str] = schema.DEFAULT_POSITIONS,
                   tiers: Mapping | None = None) -> PreparedSeason:
    """Build (and with ``out``, write) the prepared tables for one season. See the module docstring.
    ``positions``: the league's (K and DST rows and columns only when it has them); ``scoring`` a preset name
    (its rules for those positions) or weights, with ``tiers`` (added to a preset's own).
    A season whose inputs are missing (see :func:`input_problems`) is refused before anything is written."""
    positions = _positions(positions)
    if isinstance(scoring, str):
        groups = NFL.stat_groups(positions)
        weights, tiers = resolve_weights(scoring, groups=groups), resolve_tiers(scoring, tiers, groups)
    else:
        weights, tiers = check_weights(scoring), check_tiers(tiers)
    src = get_source(source, data_dir)
    root = src.root
    params = {"season": season, "source": source, "scoring": weights, "projection_source": projection_source,
              "weeks": weeks, "allow_missing_history": allow_missing_history}
    extra = {}  # only for leagues that use them: a league without K/DST/tiers keeps its fingerprint and manifest
    if positions != schema.DEFAULT_POSITIONS:
        extra["positions"] = list(positions)
    if tiers:
        extra["tiers"] = tiers
    params.update(extra)
    fp = _fingerprint(root, params)
    if out is None:
        return _prepare(season, source, src, weights, tiers, positions, projection_source, weeks,
                        allow_missing_history, extra, fp)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out.parent / f".{out.name}.lock")):  # one writer per folder: never one's tables, another's manifest
        manifest_path = out / "manifest.json"
        if not force and manifest_path.exists() and json.loads(manifest_path.read_text()).get("fingerprint") == fp:
            return load_prepared(out)
        prepared = _prepare(season, source, src, weights, tiers, positions, projection_source, weeks,
                            allow_missing_history, extra, fp)
        write_prepared(prepared, out)
        return prepared


def _prepare(season, source, src, weights, tiers, positions, projection_source, weeks, allow_missing_history,
             extra, fp) -> PreparedSeason:
    """:func:`prepare_season`'s tables and manifest, built in memory."""
    root = src.root
    _raise_problems(input_problems(src, season, projection_source, allow_missing_history, positions), season,
                    source)

    t0 = time.perf_counter()
    nv = _nflverse_beside(src)
    crosswalk = src.id_crosswalk

    schedule = src.schedule(season)
    schedule = schedule[schedule["week"] <= weeks].reset_index(drop=True)
    played = last_played_week(src, season, positions, schedule)
    rows = _rows(src, season, positions)  # a season under way: only the weeks whose games are all played
    weekly = _scored(rows[rows["week"] <= played], weights, f"{source} weekly stats {season}", positions, tiers)
    weekly = weekly.reset_index(drop=True)
    # the three seasons before, each scored once (last season and the one before are also the rookie prior's)
    history = {s: _history(src, nv, s, weights, positions, tiers) for s in (season - 1, season - 2, season - 3)}
    last, before_last = history[season - 1], history[season - 2]
    rookies = nv.rookies(season) if nv else pd.DataFrame(columns=["player_id", "player_name", "position", "team", "draft_number"])
    rookies = _of_positions(rookies, positions)

    # Built-in preseason projection: earlier seasons only (rookie prior fitted on earlier rookie classes).
    prior_history = []
    for s in range(season - 3, season):
        w = history[s]
        if nv is not None and w is not None:
            # rookies of a position the season has no rows for (kickers before 2023) are unknown, not 0-point
            prior_history.append((_of_positions(nv.rookies(s), sorted(set(w["position"]))), w))
    prior = projections.rookie_prior(prior_history)
    if last is None:
        last = weekly.iloc[0:0]
    builtin = projections.preseason(last, before_last, rookies, prior)

    # Source and third-party preseason projections and ADP.
    sdio_proj = None
    sdio = src if isinstance(src, SportsDataIODir) else None
    if sdio is None:
        try:
            sdio = SportsDataIODir(root)
        except DataError:
            sdio = None
    if sdio is not None:
        try:
            sdio_proj = _points(_offense_lines(sdio.season_projections(season)), weights)
        except DataError:
            sdio_proj = None
    fp_proj = _points(_offense_lines(fantasypros_season_projections(root, season, crosswalk)), weights)
    adp_fp = _of_positions(preseason_adp(root, season, crosswalk, "fantasypros_adp"), positions)
    adp_sd = _of_positions(preseason_adp(root, season, crosswalk, "sportsdataio_projection_file"), positions)

    # --- players table ---------------------------------------------------------------------------
    s1 = projections.season_summary(last).set_index("player_id") if len(last) else None
    s2 = projections.season_summary(before_last).set_index("player_id") if before_last is not None else None
    pool_ids = set(builtin.loc[builtin["player_id"].isin(s1.index if s1 is not None else []), "player_id"])
    pool_ids |= set(rookies["player_id"])
    for df in (adp_fp, adp_sd, fp_proj):
        if df is not None:
            pool_ids |= set(df.loc[df.get("adp", pd.Series(0, index=df.index)).notna(), "player_id"].dropna())
    if sdio_proj is not None:  # the SportsData.io file lists retired players with zero projections
        pool_ids |= set(sdio_proj.loc[sdio_proj["proj_points"] > 0, "player_id"].dropna())
    ids = sorted(pool_ids | set(weekly["player_id"]))
    players = pd.DataFrame({"player_id": pd.Series(ids, dtype="string")}).set_index("player_id")

    def fill(col: str, *candidates: pd.Series | None) -> None:
        s = pd.Series(pd.NA, index=players.index, dtype="object")
        for c in candidates:
            if c is not None:
                s = s.fillna(c[~c.index.duplicated()].reindex(players.index))
        players[col] = s

    def col(df, name):
        if df is None or name not in df:
            return None
        d = df.dropna(subset=["player_id"])
        return d.set_index("player_id")[name]

    first_week = weekly.sort_values("week").drop_duplicates("player_id").set_index("player_id")
    # every preseason source before the season's own rows: a draft-pool player's position (and so whether he is
    # in the pool at all) must never wait for the week he first plays (the future would decide the pool)
    fill("player_name", col(adp_fp, "player_name"), col(sdio_proj, "player_name"), col(rookies, "player_name"),
         s1["player_name"] if s1 is not None else None, s2["player_name"] if s2 is not None else None,
         col(adp_sd, "player_name"), col(fp_proj, "player_name"), first_week["player_name"])
    fill("position", col(adp_fp, "position"), col(sdio_proj, "position"), col(rookies, "position"),
         s1["position"] if s1 is not None else None, s2["position"] if s2 is not None else None,
         col(adp_sd, "position"), col(fp_proj, "position"), first_week["position"])
    # Preseason team: only sources published before the season; the in-season team is the engine's business.
    fill("team", col(adp_fp, "team"), col(sdio_proj, "team"), col(fp_proj, "team"), col(rookies, "team"),
         s1["team"] if s1 is not None else None)
    byes = src.byes(season)
    players["bye_week"] = players["team"].map(byes.set_index("team")["bye_week"]).astype("Int64")
    fill("adp", col(adp_fp, "adp"), col(adp_sd, "adp"))
    players["adp_source"] = pd.Series(pd.NA, index=players.index, dtype="string")
    if adp_fp is not None:
        players.loc[players.index.isin(adp_fp["player_id"].dropna()), "adp_source"] = "fantasypros"
    if adp_sd is not None:
        players.loc[players["adp_source"].isna() & players.index.isin(adp_sd["player_id"].dropna()), "adp_source"] = "sportsdataio"
    players["proj_points_builtin"] = builtin.set_index("player_id")["proj_points"].reindex(players.index)
    players["proj_ppg_builtin"] = builtin.set_index("player_id")["proj_ppg"].reindex(players.index)
    players["proj_points_sportsdataio"] = col(sdio_proj, "proj_points").reindex(players.index) if sdio_proj is not None else float("nan")
    if fp_proj is not None:
        players["proj_points_fantasypros"] = (fp_proj.dropna(subset=["player_id"]).drop_duplicates("player_id")
                                              .set_index("player_id")["proj_points"].reindex(players.index))
    else:
        players["proj_points_fantasypros"] = float("nan")
    proj_cols = [f"proj_points_{s}" for s in ("builtin", "sportsdataio", "fantasypros")] + ["proj_ppg_builtin"]
    players[proj_cols] = players[proj_cols].apply(pd.to_numeric, errors="coerce").astype("float64")
    chosen = f"proj_points_{projection_source}"
    if players[chosen].notna().sum() == 0:
        raise DataError(f"data.projections: {projection_source!r} has no preseason projections for {season} in "
                        f"{root}; use 'builtin' (always available) or another source")
    # The selected source where it has a player, the built-in model for everyone else.
    players["proj_points"] = players[chosen].fillna(players["proj_points_builtin"]).fillna(0.0)
    players["proj_source"] = players[chosen].notna().map({True: projection_source, False: "builtin"})
    players["prev_points"] = s1["points"].reindex(players.index).fillna(0.0) if s1 is not None else 0.0
    players["prev_games"] = s1["games"].reindex(players.index).fillna(0).astype(int) if s1 is not None else 0
    players["prev2_points"] = s2["points"].reindex(players.index).fillna(0.0) if s2 is not None else 0.0
    players["prev2_games"] = s2["games"].reindex(players.index).fillna(0).astype(int) if s2 is not None else 0
    players["rookie"] = players.index.isin(rookies["player_id"])
    players["draft_number"] = pd.to_numeric(rookies.drop_duplicates("player_id").set_index("player_id")["draft_number"]
                                            .reindex(players.index), errors="coerce").astype("Int64")
    players["in_draft_pool"] = players.index.isin(list(pool_ids))
    players = players[players["position"].isin(positions)].reset_index()
    players["season"] = season
    for c in ("player_name", "position", "team", "proj_source"):
        players[c] = players[c].astype("string")
    players["adp"] = pd.to_numeric(players["adp"], errors="coerce")

    # --- weekly projections ------------------------------------------------------------------------
    pre_ppg = players.set_index("player_id")["proj_points"] / 17.0
    pre_ppg = players.set_index("player_id")["proj_ppg_builtin"].fillna(pre_ppg) if projection_source == "builtin" else pre_ppg
    wp = projections.weekly(weekly, pre_ppg, weeks)
    if isinstance(src, SportsDataIODir) or sdio is not None:
        try:
            sp = _fantasy_only(_offense_lines(sdio.weekly_projections(season)))  # scored row by row, in place
            sp = sp.assign(proj_points_sportsdataio=fantasy_points(sp, weights))
            sp = sp.drop_duplicates(["week", "player_id"])[["week", "player_id", "proj_points_sportsdataio"]]
            wp = wp.merge(sp, on=["week", "player_id"], how="left")
        except (DataError, AttributeError):
            pass
    nfl = _of_positions(nflcom_weekly(root, season, crosswalk), positions)
    if nfl is not None:
        n = nfl.dropna(subset=["player_id"]).drop_duplicates(["week", "player_id"])
        wp = wp.merge(n[["week", "player_id", "projected_pts_half_ppr"]].rename(
            columns={"projected_pts_half_ppr": "proj_points_nflcom_half_ppr"}), on=["week", "player_id"], how="left")
    wp.insert(0, "season", season)
    wp = wp[wp["player_id"].isin(players["player_id"])].sort_values(["week", "player_id"]).reset_index(drop=True)

    # --- injuries (the official report where nflverse has it) ---------------------------------------------
    unavailable = unavailable_inputs(src, season)  # run without them; the manifest says so
    if players["adp"].isna().all():
        unavailable["adp"] = (f"no preseason ADP for {season} (projections/ has none): the adp column is empty, "
                              "and the adp bot drafts by projection alone")
    if _has_injury_report(nv, season):
        injuries, injury_source = nv.injuries(season), "nflverse"
    elif "injury_report" in unavailable:
        injuries, injury_source = pd.DataFrame(columns=list(schema.INJURY_COLUMNS)), None
    else:
        injuries, injury_source = src.injuries(season), source
    injuries = injuries[injuries["player_id"].isin(players["player_id"]) & (injuries["week"] <= weeks)]
    injuries = injuries.reset_index(drop=True)


    unmatched = {}
    if isinstance(src, SportsDataIODir):
        um = src.unmatched(season)
        um = um[um["position"].isin(positions)]
        unmatched["sportsdataio_weekly"] = um.to_dict("records")
    for name, df in (("fantasypros_adp", adp_fp), ("sportsdataio_adp", adp_sd), ("fantasypros_projections", fp_proj)):
        if df is not None:
            unmatched[name] = df.loc[df["player_id"].isna(), ["player_name", "position", "team"]].to_dict("records")
    if nfl is not None:
        unmatched["nflcom_weekly_rows"] = int(nfl["player_id"].isna().sum())

    prepared = PreparedSeason(season=season, source=source, projection_source=projection_source, scoring=weights,
                              players=players, weekly=weekly, weekly_projections=wp, injuries=injuries,
                              byes=byes.reset_index(drop=True), schedule=schedule, tiers=tiers, positions=positions)
    prepared.manifest = {
        "ffbench_version": __version__, "fingerprint": fp, "season": season, "source": source,
        "projection_source": projection_source, "injury_source": injury_source, "scoring": weights,
        "weeks": weeks, "data_dir": str(root), "rows": {k: int(len(v)) for k, v in prepared.tables().items()},
        "missing_history": [s for s in (season - 1,) if missing_history_problem(src, season)],
        "draft_pool": int(players["in_draft_pool"].sum()), "unmatched": unmatched,
        # our ppr points against the source's own in every row of the season's weekly file (checks.checked_ppr_parity)
        "ppr_parity": src.ppr_parity(season),
        "seconds": round(time.perf_counter() - t0, 2), **extra,
        # only while the season is under way, so a finished season's manifest stays as it was
        **({"played_weeks": played} if played < int(schedule["week"].max()) else {}),
        # only for a season that lacks them, so other seasons' manifests stay as they were
        **({"unavailable": sorted(unavailable), "unavailable_notes": unavailable} if unavailable else {}),
    }
    return prepared




def prepared_for(league, cache_root: str | Path | None = None) -> PreparedSeason:
    """The prepared season a league config needs, from the cache folder when its inputs are unchanged.

    Cache: ``data.prepared_dir`` or ``$FFBENCH_CACHE_DIR`` or ``outputs/prepared`` under the project root,
    one sub-folder per (season, source, projections, scoring).
    """
    if league.data.source == "fpl":
        return fpl.prepare_cached(league.season, league.data.resolved_dir(), league.weeks,
                                  league.data.allow_missing_history, cache_root or league.data.prepared_dir)
    return prepare_cached(league.season, league.data.source, league.data.resolved_dir(),
                          scoring=league.scoring_weights, projection_source=league.data.projections,
                          allow_missing_history=league.data.allow_missing_history,
                          positions=league.roster.positions, tiers=league.scoring_tiers,
                          cache_root=cache_root or league.data.prepared_dir)


def prepare_cached(season: int, source: str, data_dir: str | Path | None, *, scoring: str | Mapping[str, float],
                   projection_source: str = "builtin", allow_missing_history: bool = False,
                   positions: Sequence[str] = schema.DEFAULT_POSITIONS, tiers: Mapping | None = None,
                   cache_root: str | Path | None = None) -> PreparedSeason:
    """:func:`prepare_season` through the prepared-season cache (``cache_root`` or ``$FFBENCH_CACHE_DIR`` or
    ``outputs/prepared``): one folder per season, source, projections, scoring and data folder, reused while
    its fingerprint holds (see :func:`prepared_for`)."""
    from ffbench_lib.core.settings import settings

    if isinstance(scoring, str):  # a preset: the folder is keyed by its weights, as a league's is
        groups = NFL.stat_groups(_positions(positions))
        scoring, tiers = resolve_weights(scoring, groups=groups), resolve_tiers(scoring, tiers, groups) or None
    key_parts = [scoring, allow_missing_history]  # one folder per fingerprint
    if tuple(positions) != schema.DEFAULT_POSITIONS or tiers:  # a league without K/DST keeps its folder
        key_parts += [list(positions), tiers]
    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()[:8]
    root = Path(cache_root or settings().cache_dir or outputs_dir() / "prepared")
    data_dir = get_source(source, data_dir).root
    # the data folder is part of the name: two data folders (the real files, a generated world) never share one
    data_key = hashlib.sha256(str(Path(data_dir).resolve()).encode()).hexdigest()[:6]
    out = root / f"{season}-{source}-{projection_source}-{key}-{data_key}"
    return prepare_season(season, source, data_dir, scoring=scoring, projection_source=projection_source, out=out,
                          allow_missing_history=allow_missing_history, positions=positions, tiers=tiers)
