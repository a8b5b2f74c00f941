"""What each OpenAI-compatible server family accepts and sends, as data.

"OpenAI-compatible" servers differ in small ways that break a tool round: llama-cpp-python's
server answers HTTP 500 to an assistant message replayed with ``"content": null`` (it wants
``""``), Ollama refused it in some versions too, and a server whose chat format writes tool
calls as text (``functions.NAME:`` of llama-cpp-python, Hermes ``<tool_call>`` tags) needs the
reader to recognise them. ``providers.yml`` names the family per provider (``compat:``);
``auto`` starts from the OpenAI shape and switches once the server says who it is (its
``Server`` header, or a host whose family is known). ``docs/providers.md`` has the table of
what was measured for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

CompatName = Literal[
    "auto",
    "openai",
    "llama-cpp",
    "llama-cpp-python",
    "vllm",
    "ollama",
    "gemini",
    "lmstudio",
    "tgi",
    "litellm",
]
COMPAT_NAMES: tuple[CompatName, ...] = get_args(CompatName)

TextToolFormat = Literal["functions", "hermes", "mistral"]
"""Chat formats that write a tool call as text (`bridge.providers.chat_completions.text_calls`):
``functions``: ``functions.NAME:`` then the arguments (llama-cpp-python's function calling);
``hermes``: ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` (Hermes, Qwen);
``mistral``: ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]``."""

ALL_TEXT_FORMATS: tuple[TextToolFormat, ...] = ("functions", "hermes", "mistral")


@dataclass(frozen=True, slots=True)
class ServerCompat:
    """One server family's wire habits.

    tool_replay_content: what an assistant message that holds only tool calls carries as
    ``content`` when it is replayed: ``null`` (the OpenAI specification) or ``""``.
    stream_usage: send ``stream_options: {include_usage: true}``; a server that ignores it is
    still asked nothing else, and its usage is estimated (`Usage.estimated`).
    text_tool_formats: chat formats whose tool calls written as text the reader turns back
    into calls (and never shows).
    """

    name: CompatName
    tool_replay_content: Literal["null", "empty"] = "null"
    stream_usage: bool = True
    text_tool_formats: tuple[TextToolFormat, ...] = ALL_TEXT_FORMATS


COMPAT: Mapping[CompatName, ServerCompat] = {
    "auto": ServerCompat("auto"),
    "openai": ServerCompat("openai", text_tool_formats=()),
    "llama-cpp": ServerCompat("llama-cpp"),
    "llama-cpp-python": ServerCompat(
        "llama-cpp-python", tool_replay_content="empty", stream_usage=False
    ),
    "vllm": ServerCompat("vllm"),
    "ollama": ServerCompat("ollama", tool_replay_content="empty"),
    "gemini": ServerCompat("gemini", text_tool_formats=()),
    "lmstudio": ServerCompat("lmstudio"),
    "tgi": ServerCompat("tgi"),
    "litellm": ServerCompat("litellm"),
}

# Hosts whose family is known from the URL alone.
_HOSTS: Mapping[str, CompatName] = {
    "generativelanguage.googleapis.com": "gemini",
    "api.openai.com": "openai",
}
_PORTS: Mapping[int, CompatName] = {11434: "ollama"}
# The ``Server`` header's first word, lower-cased, as each server sends it.
_SERVER_HEADERS: Mapping[str, CompatName] = {"llama.cpp": "llama-cpp"}


def compat_for_url(base_url: str) -> CompatName | None:
    """The family a base URL names by its host or its well-known port, if any."""
    authority = base_url.split("/")[2] if base_url.count("/") >= 2 else ""
    host, _, port = authority.rpartition(":") if authority.count(":") == 1 else (authority, "", "")
    host = host.lower()
    if host in _HOSTS:
        return _HOSTS[host]
    if port.isdigit() and int(port) in _PORTS:
        return _PORTS[int(port)]
    return None


def compat_for_server_header(value: str | None) -> CompatName | None:
    """The family a response's ``Server`` header names, if it names one."""
    if not value:
        return None
    first = value.strip().split("/")[0].split()[0].lower() if value.strip() else ""
    return _SERVER_HEADERS.get(first)
