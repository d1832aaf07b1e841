"""A throw-away copy of the project (params/, notebooks/, pyproject.toml, ffbench_lib as a symlink) so tests
exercise project-root resolution for real without writing into the repository's outputs/."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Variables that would override the defaults these tests are about.
OVERRIDES = ("FFBENCH_PROJECT_ROOT", "FFBENCH_CACHE_DIR", "FFBENCH_LLM_CACHE")


def copy_project(dst: Path) -> Path:
    dst.mkdir(parents=True)
    shutil.copytree(REPO / "params", dst / "params")
    shutil.copytree(REPO / "notebooks", dst / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints",
                                                                                           "outputs"))
    shutil.copy2(REPO / "pyproject.toml", dst / "pyproject.toml")
    shutil.copy2(REPO / "run.sh", dst / "run.sh")
    (dst / "ffbench_lib").symlink_to(REPO / "ffbench_lib", target_is_directory=True)
    return dst


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the overrides, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in OVERRIDES}
    env.update(extra)
    return env
