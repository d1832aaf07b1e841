"""Prompt sizes in the model's own tokens (litellm's tokenizer for the model) and its context window.

litellm would fetch Llama/Cohere tokenizers from Hugging Face on first use (and retry for ~20 s when offline);
ffbench never downloads: those models are counted with litellm's bundled tiktoken encoding (cl100k, close to
Llama 3's), so their counts are estimates. Anthropic, DeepSeek and OpenAI tokenizers ship with litellm.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_WINDOW_IN_ERROR = re.compile(r"(?:maximum context length|context window|context size)\D{0,20}(\d[\d,]*)", re.I)


@lru_cache(maxsize=64)
def _needs_download(model: str) -> bool:
    try:
        from litellm.utils import huggingface_tokenizer_kind
    except ImportError:  # older litellm: be safe, use tiktoken
        return True
    return huggingface_tokenizer_kind(model) not in (None, "anthropic", "deepseek")


def count_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of ``messages`` for ``model`` (chat-template overhead included, as litellm counts it)."""
    import litellm

    if _needs_download(model):
        return int(litellm.token_counter(model="gpt-4", messages=messages))  # bundled cl100k encoding
    return int(litellm.token_counter(model=model, messages=messages))


def estimated(model: str) -> bool:
    """Whether :func:`count_tokens` only estimates ``model``'s count: its tokenizer is not bundled (counted with
    cl100k) or litellm does not know the model at all (an ``openai/<local model>`` is counted as an OpenAI one)."""
    import litellm

    if _needs_download(model):
        return True
    try:
        litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - not in litellm's table: whatever it counts with is a guess
        return True
    return False


#: the server's own count of a prompt in a context-overflow error (OpenAI, vLLM, llama.cpp, llama-cpp-python,
#: Ollama wordings), most specific first
_COUNT_IN_ERROR = (re.compile(r"(\d[\d,]*) in the messages", re.I),
                   re.compile(r"(?:resulted in\s+|requested tokens \(|you requested\s+|prompt (?:is too long|has)"
                              r"\D{0,12}|input (?:length|tokens)\D{0,12})(\d[\d,]*)", re.I))


def server_count(error_text: str) -> int | None:
    """The prompt's token count as the server's context-overflow error states it, if it does."""
    for pattern in _COUNT_IN_ERROR:
        m = pattern.search(error_text or "")
        if m:
            return int(m.group(1).replace(",", ""))
    return None


def context_window(model: str, error_text: str = "") -> int | None:
    """The model's input window: litellm's model table, else the number the server's error names."""
    import litellm

    try:
        info = litellm.get_model_info(model)
        n = info.get("max_input_tokens") or info.get("max_tokens")
        if n:
            return int(n)
    except Exception:  # noqa: BLE001 - a model litellm does not know (local servers)
        pass
    m = _WINDOW_IN_ERROR.search(error_text or "")
    return int(m.group(1).replace(",", "")) if m else None
