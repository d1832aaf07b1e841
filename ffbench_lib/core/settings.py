"""Every environment variable the project reads, declared once (the README's table is :func:`markdown_table`).

``settings()`` reads the environment afresh on each call: tests change it at runtime and the batch runner sets
``FFBENCH_PROVIDER_LIMITS`` in its workers. An empty value counts as unset. A bad value raises
:class:`SettingsError`, one line naming the variable.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(ValueError):
    """An environment variable with a value ffbench cannot use."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", case_sensitive=True, frozen=True)

    data_dir: Path | None = Field(
        None, validation_alias="FFBENCH_DATA_DIR",
        description="the data folder (holding `nflverse/`); a relative path is taken from where the command was "
                    "typed. Unset: `../shared/data` or `outputs/data`, whichever holds `nflverse/`")
    project_root: Path | None = Field(
        None, validation_alias="FFBENCH_PROJECT_ROOT",
        description="the project folder `params/`, `outputs/` and the notebooks resolve against. Unset: found "
                    "from the current folder upwards")
    cache_dir: Path | None = Field(
        None, validation_alias="FFBENCH_CACHE_DIR",
        description="where prepared seasons are cached when the config has no `data.prepared_dir`. Unset: "
                    "`outputs/prepared`")
    llm_cache: Path | None = Field(
        None, validation_alias="FFBENCH_LLM_CACHE",
        description="the LLM replay cache folder when the config has no `llm.cache_dir`. Unset: `outputs/llm_cache`")
    provider_limits: str | None = Field(
        None, validation_alias="FFBENCH_PROVIDER_LIMITS",
        description="where each provider's `max_concurrency` is held for a whole batch: a Dask scheduler address "
                    "(`tcp://host:8786`: one `distributed.Semaphore` per provider endpoint, cluster-wide) or an "
                    "absolute folder (lock files shared by the local executor's workers; waiting calls are served "
                    "first come, first served). `ffbench batch` sets it in its workers; unset: the limit holds "
                    "within one process")
    prog: str | None = Field(None, validation_alias="FFBENCH_PROG",
                             description="how the user reached the `ffbench` command, for the commands ffbench "
                                         "suggests (e.g. a resume hint); `run.sh` sets it to `./run.sh ffbench`. "
                                         "Unset: `ffbench`")
    venv: str = Field(".venv", validation_alias="FFBENCH_VENV",
                      description="`run.sh` only: the virtualenv folder it creates and uses")
    litellm_local_model_cost_map: str = Field(
        "True", validation_alias="LITELLM_LOCAL_MODEL_COST_MAP",
        description="read by litellm: `True` keeps its model price map offline; `import ffbench_lib` sets it "
                    "when unset")

    @field_validator("data_dir", "cache_dir", "llm_cache")
    @classmethod
    def _not_a_file(cls, v: Path | None) -> Path | None:
        if v is not None and v.exists() and not v.is_dir():
            raise ValueError(f"{v} is a file, not a folder")
        return v

    @field_validator("provider_limits")
    @classmethod
    def _address_or_folder(cls, v: str | None) -> str | None:
        if v is None or "://" in v:
            return v
        if re.fullmatch(r"[^/\\]+:\d+", v):  # host:port is never a folder someone meant
            raise ValueError(f"{v} looks like a Dask scheduler address without its scheme; write tcp://{v}")
        if not Path(v).is_absolute():  # seasons' kernels may run in another folder: one folder for all
            raise ValueError(f"{v} is a relative folder; give an absolute folder for lock files or a Dask "
                             "scheduler address such as tcp://host:8786")
        if Path(v).exists() and not Path(v).is_dir():
            raise ValueError(f"{v} is a file, not a folder (give a folder for lock files or a Dask scheduler "
                             "address such as tcp://host:8786)")
        return v

    @field_validator("project_root")
    @classmethod
    def _existing_folder(cls, v: Path | None) -> Path | None:
        if v is not None and not v.is_dir():  # never created: outputs would land somewhere unintended
            raise ValueError(f"{v} is not an existing folder (the project folder holds pyproject.toml)")
        return v

    @classmethod
    def variable(cls, field: str) -> str:
        """The environment variable behind ``field``."""
        return cls.model_fields[field].validation_alias


def settings() -> Settings:
    """The settings as the environment holds them now."""
    try:
        return Settings()
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "?"
        name = Settings.variable(field) if field in Settings.model_fields else field
        value = os.environ.get(name)
        msg = err["msg"].removeprefix("Value error, ")
        raise SettingsError(f"environment variable {name}={value!r}: {msg[0].lower() + msg[1:]}; "
                            f"fix or unset it") from None


def export(**values: Any) -> None:
    """Set variables by field name for this process and the ones it starts; a bad value changes nothing."""
    names = {Settings.variable(field): str(value) for field, value in values.items()}
    before = {name: os.environ.get(name) for name in names}
    os.environ.update(names)
    try:
        settings()
    except SettingsError:  # leave the environment as it was
        for name, old in before.items():
            if old is None:
                del os.environ[name]
            else:
                os.environ[name] = old
        raise


def markdown_table() -> str:
    """The README's table of environment variables."""
    rows = ["| Variable | Default | What it does |", "|---|---|---|"]
    for field, info in Settings.model_fields.items():
        default = "unset" if info.default is None else f"`{info.default}`"
        rows.append(f"| `{Settings.variable(field)}` | {default} | {info.description} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown_table(), end="")
