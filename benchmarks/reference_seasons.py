"""Reference bot seasons, played by one checkout's code and compared byte for byte with another's.

A change that is not meant to change results proves it: play the reference seasons with the old code and the new,
then compare every file. Six seasons on real 2024 data cover the presets as shipped: the demo league (seeds 1 and
7), ``standard_10`` (K, DST, IR, FAAB, playoffs), ``superflex_12``, ``waivers`` (seed 3) and the demo masked
(players and teams as pseudonyms, seed 2).

    python benchmarks/reference_seasons.py play OUT [--code DIR]
    python benchmarks/reference_seasons.py compare OUT_A OUT_B

``play`` runs in a fresh process with ``DIR``'s ``ffbench_lib`` (default this checkout) and this checkout's params.
``compare`` lists every file that differs or exists on one side only and exits 1 if any does; a run's
``run.json`` is compared without its ``code_fingerprint`` (which names the code, so always differs).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (league file, seed, overrides)
SEASONS = {
    "demo-s1": ("params/demo.yaml", 1, {}),
    "demo-s7": ("params/demo.yaml", 7, {}),
    "standard_10": ("params/standard_10.yaml", None, {}),
    "superflex_12": ("params/superflex_12.yaml", None, {}),
    "waivers-s3": ("params/waivers.yaml", 3, {}),
    "masked-demo-s2": ("params/demo.yaml", 2, {"information": {"masking": "players_and_teams"}}),
}

CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from ffbench_lib.config.load import load_config
from ffbench_lib.data.prepare import prepared_for
from ffbench_lib.runs.runner import Engine
out, seasons = Path(sys.argv[1]), json.loads(sys.argv[2])
for name, (path, seed, overrides) in seasons.items():
    league = load_config(Path(path))
    data = league.model_dump()
    for key, value in overrides.items():
        data[key] = {**data.get(key, {}), **value}
    if seed is not None:
        data["seed"] = seed
    league = type(league).model_validate(data)
    asyncio.run(Engine(league, prepared_for(league), out / name, progress=False).run())
    print(name, flush=True)
import ffbench_lib
print(json.dumps({"code": str(Path(ffbench_lib.__file__).resolve().parents[1])}))
"""


def play(out: Path, code: Path) -> None:
    """Play every reference season into ``out`` with ``code``'s library. ``-P`` keeps this checkout (the working
    folder, for the params) off the front of ``sys.path``."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty: give a new folder")
    env = {**os.environ, "PYTHONPATH": str(code)}
    res = subprocess.run([sys.executable, "-P", "-c", CHILD, str(out.resolve()), json.dumps(SEASONS)], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, text=True)
    if res.returncode:
        raise SystemExit(f"playing the reference seasons failed (exit {res.returncode}): see the error above")
    res = res.stdout
    played = json.loads(res.strip().splitlines()[-1])["code"]
    if Path(played) != code.resolve():
        raise SystemExit(f"the child played the ffbench_lib of {played}, not of {code}")
    print(f"{len(SEASONS)} seasons by {code} in {out}")


def _content(path: Path) -> bytes:
    if path.name == "run.json":
        data = json.loads(path.read_bytes())
        data.pop("code_fingerprint", None)
        return json.dumps(data, sort_keys=True).encode()
    return path.read_bytes()


def compare(a: Path, b: Path) -> int:
    """Every file under ``a`` and ``b`` byte for byte; returns how many differ (or are on one side only). A folder
    without the reference seasons is refused: two empty folders must not pass as identical."""
    for folder in (a, b):
        missing = [name for name in SEASONS if not (folder / name / "run.json").is_file()]
        if missing:
            raise SystemExit(f"{folder} does not hold the reference seasons (no {missing[0]}/run.json): give a "
                             "folder written by `reference_seasons.py play`")
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    bad = sorted(files_a ^ files_b)
    for rel in bad:
        print(f"only in {a if rel in files_a else b}: {rel}")
    for rel in sorted(files_a & files_b):
        if _content(a / rel) != _content(b / rel):
            print(f"differs: {rel}")
            bad.append(rel)
    print(f"{len(files_a & files_b)} files compared, {len(bad)} differ" if bad else
          f"{len(files_a)} files identical")
    return len(bad)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play", help="play the reference seasons into a new folder")
    p.add_argument("out", type=Path)
    p.add_argument("--code", type=Path, default=ROOT, help="the checkout whose ffbench_lib plays")
    c = sub.add_parser("compare", help="compare two folders of reference seasons byte for byte")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "play":
        play(args.out, args.code.resolve())
    else:
        sys.exit(1 if compare(args.a, args.b) else 0)


if __name__ == "__main__":
    main()
