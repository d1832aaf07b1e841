#!/usr/bin/env bash
# One entry point that sets itself up on a fresh machine: a virtual environment in .venv, the package and its
# dev extras from pyproject.toml (reinstalled when pyproject.toml changes), then the job.
#   ./run.sh demo   the main job (see README)
#   ./run.sh test   the test suite (what CI runs)
#   ./run.sh ffbench ARGS...   any ffbench command (e.g. ./run.sh ffbench validate params/demo.yaml)
set -euo pipefail
# a relative FFBENCH_DATA_DIR means relative to where the command was typed, not to the project folder
if [ -n "${FFBENCH_DATA_DIR:-}" ] && [ -d "$FFBENCH_DATA_DIR" ]; then
  FFBENCH_DATA_DIR="$(cd "$FFBENCH_DATA_DIR" && pwd)"
  export FFBENCH_DATA_DIR
fi
RUN_SH="$0"
cd "$(dirname "$0")"
VENV="${FFBENCH_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtual environment in $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
want="$(sha256sum pyproject.toml | cut -c1-16)"
if [ "$(cat "$VENV/.ffbench-installed" 2>/dev/null || true)" != "$want" ]; then
  echo "installing ffbench and its dependencies into $VENV (first run takes a few minutes)" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[dev]"
  echo "$want" > "$VENV/.ffbench-installed"
fi
# kernels of this venv (papermill, JupyterLab) do not log ipykernel's harmless "Kernel is running over TCP without
# encryption" warning (it listens on 127.0.0.1 and signs its messages); their errors are still logged
if [ ! -f "$VENV/etc/ipython/ipython_kernel_config.py" ]; then
  mkdir -p "$VENV/etc/ipython"
  echo 'c.IPKernelApp.log_level = "ERROR"  # written by run.sh' > "$VENV/etc/ipython/ipython_kernel_config.py"
fi

# litellm must never fetch its price map at import; ffbench works offline.
export LITELLM_LOCAL_MODEL_COST_MAP=True
if [ -z "${FFBENCH_DATA_DIR:-}" ] && [ -d ../shared/data/nflverse ]; then
  FFBENCH_DATA_DIR="$(cd ../shared/data && pwd)"
  export FFBENCH_DATA_DIR
fi

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  test)
    # CI only: the browser tests (marker "browser": JupyterLab, the play desk, the report) drive Debian's Chromium
    # (playwright cannot download its own browser here). Under CI=true they FAIL without it (locally they skip),
    # so CI installs it when it can.
    if [ "${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
        && command -v apt-get >/dev/null 2>&1; then
      echo "CI: installing chromium for the browser tests" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
        || echo "CI: chromium could not be installed; the browser tests will fail" >&2
    fi
    # The suite starts hundreds of Python processes (kernels, CLI runs, batch workers): with
    # PYTHONDONTWRITEBYTECODE set (some machines set it globally) each one compiled ffbench_lib from source and each
    # xdist worker re-rewrote every test module's asserts (half of collection's CPU). Bytecode goes to the
    # __pycache__ folders git ignores; the code fingerprint of a run skips them.
    unset PYTHONDONTWRITEBYTECODE
    # --dist loadfile: a file's tests on one worker, so a module's shared season is played once, not per worker.
    # Two workers per core (at most 8): a worker often waits on a kernel, a CLI run or a server it started, and on
    # a busy 2-core machine 4 workers took 21.5 min where 2 took 24.7. --no-loadscope-reorder keeps the order
    # tests/conftest.py gives (the heaviest files first, so no long file starts last); -n in "$@" overrides.
    workers=$(( $(nproc 2>/dev/null || echo 1) * 2 ))
    [ "$workers" -gt 8 ] && workers=8
    exec "$VENV/bin/python" -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
    ;;
  demo)
    # downloaded once; an interrupted download (no marker yet) is done again
    if [ -z "${FFBENCH_DATA_DIR:-}" ] && [ ! -f outputs/data/.download-complete ]; then
      echo "FFBENCH_DATA_DIR is not set: downloading nflverse 2021-2024 into outputs/data" >&2
      "$VENV/bin/ffbench" data download --seasons 2021-2024 --out outputs/data
      touch outputs/data/.download-complete
    fi
    exec "$VENV/bin/python" -m ffbench_lib demo "$@"
    ;;
  ffbench)
    # the commands ffbench suggests (a resume hint) start the way the user typed this one
    FFBENCH_PROG="${FFBENCH_PROG:-$RUN_SH ffbench}" exec "$VENV/bin/python" -m ffbench_lib "$@"
    ;;
  *)
    echo "usage: ./run.sh demo | ./run.sh test [pytest args] | ./run.sh ffbench COMMAND [args]" >&2
    exit 2
    ;;
esac
