"""Executing the parameterised notebooks with papermill (explicit kernel, cell timeout, repo as cwd)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ffbench_lib.core.atomic import scrub_file
from ffbench_lib.core.secrets import register_league, scrub

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
KERNEL = "python3"
# Quiet the kernel's own log: it says "Kernel is running over TCP without encryption" at every kernel start (11
# times in the demo; the kernel listens on 127.0.0.1 for this one process) and, at random, "KeyboardInterrupt caught
# in kernel" when jupyter_client interrupts it before shutdown. A failing cell still reaches us through papermill.
KERNEL_ARGS = ["--IPKernelApp.log_level=CRITICAL"]
#: how long a kernel may take to start (papermill's default is 60 s): on a busy machine running a batch's workers
#: (or a test suite) a start can take longer, and a season must not fail for it
START_TIMEOUT_S = 300


class NotebookError(Exception):
    """A cell of an executed notebook raised: one line naming the notebook, the cell and the exception."""


#: kernel starts tried per notebook (a start can fail on a port race; a cell's error is never retried)
KERNEL_STARTS = 3


def execute(name: str, out: str | Path, parameters: dict[str, Any], timeout_s: int = 1800,
            kernel: str = KERNEL, progress_bar: bool = False) -> Path:
    """Run ``notebooks/<name>`` into ``out`` (the executed copy, with outputs) and return its path.
    ``progress_bar``: papermill's bar of executed cells on stderr (for one long notebook a person waits for)."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    src = NOTEBOOKS / name
    if not src.exists():
        raise FileNotFoundError(f"no notebook {src}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _register_keys(parameters.get("config"))
    try:
        for attempt in range(1, KERNEL_STARTS + 1):
            try:
                pm.execute_notebook(str(src), str(out), parameters=parameters, kernel_name=kernel,
                                    execution_timeout=timeout_s, start_timeout=START_TIMEOUT_S, cwd=str(REPO),
                                    progress_bar=progress_bar, extra_arguments=KERNEL_ARGS,
                                    # no live-widget state in the copy: viewers and nbconvert show each widget's
                                    # static fallback (the replay's PNG), not an empty widget from the network
                                    store_widget_state=False)
                break
            except RuntimeError as exc:
                # the kernel died starting (its TCP port taken meanwhile by another process on a busy machine):
                # no cell ran, so starting it again is safe
                if "Kernel died before replying to kernel_info" not in str(exc) or attempt == KERNEL_STARTS:
                    raise
    except PapermillExecutionError as exc:
        evalue = scrub(" ".join(str(exc.evalue).split()))
        raise NotebookError(f"{name}: cell {exc.exec_count} raised {exc.ename}: {evalue} "
                            f"(executed copy with the traceback: {out})") from None
    finally:  # the kernel prints what it likes (tracebacks, echoed answers): no credential stays in the copy
        scrub_file(out)
    return out


def _register_keys(config: Any) -> None:
    """The keys a season notebook's teams name in ``api_key_env`` are masked here too (the kernel is another
    process; this one scrubs its output)."""
    if not isinstance(config, (str, Path)):
        return
    from ffbench_lib.config.load import load_config

    path = Path(config) if Path(config).exists() else REPO / config
    try:
        register_league(load_config(path))
    except Exception:  # noqa: BLE001 - an unreadable config fails inside the notebook, before any call
        return
