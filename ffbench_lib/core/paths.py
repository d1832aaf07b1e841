"""Where the project is: notebook defaults and default output folders resolve against the project root, so a
notebook opened in JupyterLab (whose kernel starts in ``notebooks/``) reads ``params/`` and writes ``outputs/``
exactly as papermill (which runs from the root) and the CLI do.

The root is the nearest folder, from the current directory upwards, that holds ``pyproject.toml`` next to
``ffbench_lib/`` or ``params/``; failing that, the checkout this package was imported from; failing that, the
current directory (an installed package used from a folder of the user's own).
"""
from __future__ import annotations

import os
from pathlib import Path

from ffbench_lib.core.settings import settings

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def _is_root(folder: Path) -> bool:
    return (folder / "pyproject.toml").is_file() and ((folder / "ffbench_lib").is_dir() or (folder / "params").is_dir())


def project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The project root seen from ``start`` (default: the current directory)."""
    env = settings().project_root
    if env:
        return env.resolve()
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if _is_root(folder):
            return folder
    if _is_root(_PACKAGE_PARENT):
        return _PACKAGE_PARENT
    return here


def from_root(path: str | os.PathLike[str]) -> Path:
    """An absolute path as it is; a relative one (``params/demo.yaml``, ``outputs/runs/*``) under the root."""
    p = Path(os.path.expanduser(str(path)))
    return p if p.is_absolute() else project_root() / p


def outputs_dir() -> Path:
    """The project's ``outputs/`` folder (git-ignored), the default home of every generated file."""
    return project_root() / "outputs"


def find_data_dir() -> Path | None:
    """The data directory to use when none is given: ``$FFBENCH_DATA_DIR``, else a ``shared/data`` folder next to
    the project (the ``../shared/data`` layout ``run.sh`` and CI use), else ``outputs/data`` (where ``run.sh demo``
    downloads); a candidate counts only if it holds ``nflverse/``. None when there is none."""
    env = settings().data_dir
    if env:
        return env.expanduser().resolve()
    root = project_root()
    for candidate in (root.parent / "shared" / "data", root / "outputs" / "data"):
        if (candidate / "nflverse").is_dir():
            return candidate.resolve()
    return None
