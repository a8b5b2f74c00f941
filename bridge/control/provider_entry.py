"""A new provider and model written into providers.yml as text, so the owner's comments,
order and layout stay as they were (a YAML round trip would drop every comment).

The provider goes first under ``providers:``, the model first under ``models:``, each at the
indentation the file already uses there; ``default:`` is pointed at the new model when asked.
The caller checks the result with the real loader and keeps the old text if it fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from bridge.errors import ConfigError

# Ports the local servers listen on by default, and the provider id each one gets.
KNOWN_PORTS = {11434: "ollama", 8080: "llamacpp", 1234: "lmstudio", 8000: "vllm"}
DEFAULT_CONTEXT = 8192
"""Assumed when the server does not say (Ollama, LM Studio): small enough for any local model."""
ID_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class NewEntry:
    provider_id: str
    base_url: str
    model: str
    context_window: int
    api_key_env: str | None = None

    @property
    def model_ref(self) -> str:
        return f"{self.provider_id}/{self.model}"

    @property
    def max_output_tokens(self) -> int:
        return max(256, min(4096, self.context_window // 4))


def normalized_base_url(text: str) -> str:
    """``http://host:port`` or ``.../v1``: where the OpenAI-compatible API is (``/v1`` added
    when the URL has no path, as every local server serves it there)."""
    url = text.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"'{url}' is not an http:// or https:// URL with a host")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError("the base URL must not carry credentials, a query or a fragment")
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path or '/v1'}"


def provider_id_for(base_url: str, taken: set[str]) -> str:
    port = urlsplit(base_url).port
    stem = KNOWN_PORTS.get(port or 0, "local")
    candidate, number = stem, 1
    while candidate in taken:
        number += 1
        candidate = f"{stem}-{number}"
    return candidate


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted one


def provider_block(entry: NewEntry, indent: str) -> list[str]:
    lines = [
        f"{indent}{entry.provider_id}:   # added by `mineclaw-bridge provider add`",
        f"{indent}  api:",
        f"{indent}    type: openai_chat_completions",
        f"{indent}    base_url: {_quoted(entry.base_url)}",
    ]
    if entry.api_key_env:
        lines.append(f"{indent}  api_key: ${{{entry.api_key_env}}}")
    return lines


def model_block(entry: NewEntry, indent: str, context_said: bool) -> list[str]:
    why = "" if context_said else "   # assumed, the server did not say: set your model's"
    return [
        f"{indent}{_quoted(entry.model_ref)}:",
        f"{indent}  limits:",
        f"{indent}    context_window: {entry.context_window}{why}",
        f"{indent}    max_output_tokens: {entry.max_output_tokens}",
    ]


def _section(lines: list[str], key: str) -> int | None:
    for index, line in enumerate(lines):
        if re.match(rf"{key}:(\s*(#.*)?)?$", line) or re.match(rf"{key}:\s*\{{\s*\}}", line):
            return index
    return None


def _child_indent(lines: list[str], start: int) -> str:
    for line in lines[start + 1 :]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        return indent if indent else "  "
    return "  "


def _insert(lines: list[str], key: str, block: Callable[[str], list[str]]) -> list[str]:
    """``block`` made at the indentation of the section's entries and put first in it."""
    index = _section(lines, key)
    if index is None:
        return [*lines, f"{key}:", *block("  ")]
    if "{" in lines[index]:  # `providers: {}`: the new entry is its first
        return [*lines[:index], f"{key}:", *block("  "), *lines[index + 1 :]]
    return [*lines[: index + 1], *block(_child_indent(lines, index)), *lines[index + 1 :]]


def with_entry(text: str, entry: NewEntry, *, make_default: bool, context_said: bool) -> str:
    """``text`` with the entry added (and ``default:`` set to it when ``make_default``)."""
    lines = text.splitlines()
    lines = _insert(lines, "providers", lambda indent: provider_block(entry, indent))
    lines = _insert(lines, "models", lambda indent: model_block(entry, indent, context_said))
    if make_default:
        default = f"default: {_quoted(entry.model_ref)}"
        found = next((i for i, line in enumerate(lines) if re.match(r"default:", line)), None)
        if found is None:
            lines.insert(0, default)
        else:
            lines[found] = default
    return "\n".join(lines) + "\n"
