"""How much field mode gains over a full league (issue #14), measured on bots.

Runs (or reuses, when every run is complete) the field batch params/batch_field_bots.yaml (4 bot candidates in
seat VORP-1 of the demo league, one league per candidate and seed, reference adp) and the full-league batch
params/batch_full_bots.yaml (the 10 demo bots in one league, same seeds), then prints:

* per candidate: the sd of the seat's raw season result vs the sd of its duplicate score (minus adp's in the same
  seat on the same seed) and two variance reduction factors (field.variance_reduction): ``vrf_raw`` =
  var_raw / var_dup (the duplicate score's spread against one raw result's, as issue #14 words it; it compares a
  difference with a single result, so it understates the gain) and ``vrf_pairing`` = (var_raw + var_raw_reference)
  / var_dup (how much playing the reference's seat on the same seed reduces the variance of the comparison with
  it, against comparing results of two independent leagues);
* vorp vs adp: the sd of the paired per-seed difference in each design -- field (duplicate scores, measured),
  full league measured from the full batch (one VORP team vs one ADP team, VORP-1 - ADP-1, and the per-run means
  of all VORP vs all ADP teams) and full league estimated from the field pilot (sqrt(var_raw_a + var_raw_b): two
  independent seats with one team per agent, an upper bound when seats of one league share the seed's luck) --
  and the seeds each needs for 80% power at alpha 0.05, alone (m = 1) and with Holm over the 6 pairs of 4
  candidates (m = 6; power at alpha/6 is a lower bound under Holm).

    python benchmarks/field_design.py               # the specs' 10 seeds (about 10 minutes per batch on 2 cores)
    python benchmarks/field_design.py --seeds 30    # more seeds: temporary specs and batches under outputs/
    python benchmarks/field_design.py --no-run      # only analyse batches that are already complete

FFBENCH_DATA_DIR must point at the NFL data (the folder holding nflverse/).
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ffbench_lib.analysis import field, metrics
from ffbench_lib.runs.batch import load_batch, run_batch
from ffbench_lib.analysis.power import ESTIMATED
from ffbench_lib.core.stats import seeds_needed
from ffbench_lib.records import field as field_record
from ffbench_lib.records.load import RunFiles

ROOT = Path(__file__).resolve().parents[1]
FIELD_SPEC, FULL_SPEC = ROOT / "params" / "batch_field_bots.yaml", ROOT / "params" / "batch_full_bots.yaml"
A, B = "bot:vorp", "bot:adp"
TEAM_A, TEAM_B = "VORP-1", "ADP-1"


def with_seeds(spec_path: Path, n: int) -> Path:
    """A copy of the spec with seeds 0..n-1 and its own out folder, under outputs/benchmarks/field_design/."""
    spec = yaml.safe_load(spec_path.read_text())
    name = f"{spec['name']}_s{n}"
    spec.update(name=name, seeds=list(range(n)), base=str((spec_path.parent / spec["base"]).resolve()),
                out=str(ROOT / "outputs" / "batches" / name))
    out = ROOT / "outputs" / "benchmarks" / "field_design" / f"{name}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(spec, sort_keys=False))
    return out


def complete(spec_path: Path) -> bool:
    """Every run of the batch is there and complete (then it is reused as it is, analysis notebooks included)."""
    spec, _ = load_batch(spec_path)
    out = spec.out if spec.out.is_absolute() else ROOT / spec.out
    if spec.design == "field":
        manifest_file = out / field_record.MANIFEST
        if not manifest_file.is_file():
            return False
        m = field_record.read_manifest(out)
        dirs = [out / d / f"seed-{s}" for d in dict.fromkeys([*m.candidates.values(), m.reference_dir])
                for s in spec.seeds]
    else:
        dirs = [out / "runs" / f"seed-{s}" for s in spec.seeds]
    return all((d / "run.json").is_file() and RunFiles(d).meta().status == "complete" for d in dirs)


def ensure(spec_path: Path, run: bool) -> Path:
    spec, _ = load_batch(spec_path)
    out = spec.out if spec.out.is_absolute() else ROOT / spec.out
    if complete(spec_path):
        print(f"reusing {out} (every run complete)", file=sys.stderr)
        return out
    if not run:
        sys.exit(f"error: {out} is not complete; run without --no-run (or `ffbench batch {spec_path}`)")
    print(f"running {spec_path} -> {out}", file=sys.stderr)
    summary = run_batch(spec_path, progress=True)
    if summary["failed"]:
        sys.exit(f"error: {len(summary['failed'])} run(s) of {spec_path} failed: {summary['failed'][:2]}")
    return out


def needed(effect: float, sd: float, m: int) -> str:
    n = seeds_needed(abs(effect), sd, alpha=0.05, m=m, target=0.8)
    return ">10000" if n is None else str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="run this many seeds (0..N-1) instead of the specs'")
    ap.add_argument("--no-run", action="store_true", help="do not run batches; analyse complete ones only")
    ap.add_argument("--value", nargs="+", choices=["points_for", "win_rate", "wins"],
                    default=["points_for", "win_rate"], help="seat results to analyse")
    ap.add_argument("--field-spec", type=Path, default=FIELD_SPEC, help="the field batch (design: field)")
    ap.add_argument("--full-spec", type=Path, default=FULL_SPEC, help="the full-league batch")
    args = ap.parse_args(argv)
    field_spec, full_spec = args.field_spec, args.full_spec
    if args.seeds:
        field_spec, full_spec = with_seeds(field_spec, args.seeds), with_seeds(full_spec, args.seeds)
    field_out = ensure(field_spec, not args.no_run)
    full_out = ensure(full_spec, not args.no_run)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complete batches only: nothing is left out
        fr = field.load(field_out)
        full = metrics.load_runs(metrics.expand_paths(full_out / "runs"))
    seat = field.seat_results(fr.runs, fr.manifest)
    k = len(fr.manifest.candidates)
    pd.set_option("display.width", 200)
    print(f"field batch {field_out.name}: seat {fr.manifest.seat}, reference {fr.manifest.reference}, {k} candidates "
          f"x {seat['seed'].nunique()} seeds ({metrics.describe_runs(fr.runs)}); full league {full_out.name}: "
          f"{full['meta']['run_id'].nunique()} runs")
    for value in args.value:
        report(field.duplicate_scores(seat, fr.manifest, value), full, value, k)
    return 0


def report(scores: pd.DataFrame, full: metrics.Runs, value: str, k: int) -> None:
    """The variance reduction per candidate and vorp vs adp in each design, for one seat result."""
    m_holm = k * (k - 1) // 2
    vr = field.variance_reduction(scores, value)
    print(f"\n=== {value} ===\nthe seat's {value}: raw vs duplicate score (minus the reference's on the same seed)")
    print(vr[["agent", "n", "mean_raw", "sd_raw", "sd_raw_reference", "mean_dup", "sd_dup", "vrf_raw", "vrf_pairing",
              "note"]].round(3).to_string(index=False))
    print("vrf_raw = var_raw / var_dup (one result's spread vs the duplicate score's); vrf_pairing = (var_raw + "
          "var_raw_reference) / var_dup (the comparison with the reference on the same seat and seed vs in two "
          "independent leagues)")

    dup = scores.pivot_table(index="seed", columns="agent", values="dup")
    raw = scores.pivot_table(index="seed", columns="agent", values=value)
    d_field = (dup[A] - dup[B]).dropna()
    st = metrics.standings(full)
    seat = st.pivot_table(index="seed", columns="team", values=value)
    d_seats = (seat[TEAM_A] - seat[TEAM_B]).dropna()
    means = metrics.per_agent(st, value).merge(full["meta"][["run_id", "seed"]], on="run_id")
    means = means.pivot_table(index="seed", columns="agent", values=value)
    d_means = (means[A] - means[B]).dropna()
    sd_est = float(np.sqrt(raw[A].var(ddof=1) + raw[B].var(ddof=1)))
    effect = float(d_field.mean())
    rows = [
        ("field: duplicate scores (measured)", len(d_field), d_field.mean(), d_field.std(ddof=1)),
        (f"full league: {TEAM_A} - {TEAM_B} (measured)", len(d_seats), d_seats.mean(), d_seats.std(ddof=1)),
        ("full league: per-run means of all VORP vs all ADP teams (measured)", len(d_means), d_means.mean(),
         d_means.std(ddof=1)),
        ("full league: sqrt(var_raw_vorp + var_raw_adp) of the field (estimated*)", len(raw), np.nan, sd_est),
    ]
    table = pd.DataFrame(rows, columns=["design", "n", "mean_diff", "sd_diff"])
    for m in (1, m_holm):
        table[f"seeds own effect m={m}"] = [needed(r.mean_diff, r.sd_diff, m) if np.isfinite(r.mean_diff) else "-"
                                            for r in table.itertuples()]
        table[f"seeds effect {effect:.3g} m={m}"] = [needed(effect, r.sd_diff, m) for r in table.itertuples()]
    print(f"\n{A} vs {B}: paired per-seed difference of {value}; seeds needed for 80% power at alpha 0.05 alone "
          f"(m=1) and with Holm over the {m_holm} pairs of {k} candidates (m={m_holm}: a lower bound); 'own effect' "
          f"is each row's mean difference, 'effect {effect:.3g}' the field's, used for every row")
    print(table.round(3).to_string(index=False))
    print(f"* {ESTIMATED}")


if __name__ == "__main__":
    sys.exit(main())
