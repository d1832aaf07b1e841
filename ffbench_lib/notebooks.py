"""Executing the parameterised notebooks with papermill (explicit kernel, cell timeout, repo as cwd)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
KERNEL = "python3"


def execute(name: str, out: str | Path, parameters: dict[str, Any], timeout_s: int = 1800,
            kernel: str = KERNEL) -> Path:
    """Run ``notebooks/<name>`` into ``out`` (the executed copy, with outputs) and return its path."""
    import papermill as pm

    src = NOTEBOOKS / name
    if not src.exists():
        raise FileNotFoundError(f"no notebook {src}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(str(src), str(out), parameters=parameters, kernel_name=kernel,
                        execution_timeout=timeout_s, cwd=str(REPO), progress_bar=False)
    return out
