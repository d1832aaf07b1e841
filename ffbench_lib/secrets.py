"""Keeping API keys out of everything ffbench writes.

Keys reach litellm only as call arguments or the provider's own environment variables; nothing that holds
them is logged. As a second line, every record written to a run directory passes through :func:`scrub`,
which replaces the value of any environment variable that looks like a credential.
"""
from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)
MASK = "***"


def secret_values() -> list[str]:
    vals = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= 8}
    return sorted(vals, key=len, reverse=True)


def scrub(text: str) -> str:
    for v in secret_values():
        if v in text:
            text = text.replace(v, MASK)
    return text
