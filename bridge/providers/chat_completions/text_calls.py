"""Tool calls a server streamed as plain ``content``, recognised by their chat format.

Some servers leave a model's tool call in the text when their tool-call parser is off or does
not know the model's format: llama-cpp-python's function calling streams ``functions.NAME:``
followed by the arguments, Hermes and Qwen templates write ``<tool_call>{...}</tool_call>``,
Mistral ``[TOOL_CALLS] [...]``. Posted to chat, that text is noise at best; so while the start
of an answer could still be one of these markers, its text is held back, and an answer that
is a tool call becomes tool calls and is never shown. Only an answer that begins with a marker
counts: a marker in the middle of prose is prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from bridge.providers.compat import TextToolFormat

_MARKERS: dict[TextToolFormat, str] = {
    "functions": "functions.",
    "hermes": "<tool_call>",
    "mistral": "[TOOL_CALLS]",
}
_FUNCTIONS_CALL = re.compile(r"functions\.([A-Za-z0-9_-]{1,64})\s*:", re.ASCII)
_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder()


class TextCallGate:
    """Holds back the start of an answer while it could still be a tool call written as text.

    ``feed`` returns the text that may be shown now; ``format`` names the chat format once the
    answer began with its marker. Without formats it passes everything through."""

    def __init__(self, formats: Sequence[TextToolFormat]) -> None:
        self._markers = [(name, _MARKERS[name]) for name in formats]
        self._held: list[str] = []
        self._decided = not self._markers
        self.format: TextToolFormat | None = None

    def feed(self, text: str) -> str:
        if self._decided:
            return "" if self.format is not None else text
        self._held.append(text)
        start = "".join(self._held).lstrip()
        if not start:
            return ""
        for name, marker in self._markers:
            if start.startswith(marker):
                self._decided, self.format = True, name
                return ""
            if marker.startswith(start):
                return ""  # still a possible start of this marker
        self._decided = True
        released = "".join(self._held)
        self._held.clear()
        return released

    def release(self) -> str:
        """At the end of the answer: the held text when it never became a marker."""
        if self.format is not None or self._decided:
            return ""
        self._decided = True
        released = "".join(self._held)
        self._held.clear()
        return released


def parse_text_calls(text: str, fmt: TextToolFormat) -> list[tuple[str, str]] | None:
    """The (name, JSON arguments) of each call the text holds in format ``fmt``; None when
    not even one call's name can be read."""
    if fmt == "functions":
        calls = _functions_calls(text)
    elif fmt == "hermes":
        calls = [call for block in _HERMES_BLOCK.findall(text) for call in _json_calls(block)]
    else:
        calls = _json_calls(text.strip().removeprefix("[TOOL_CALLS]"))
    return calls or None


def _functions_calls(text: str) -> list[tuple[str, str]]:
    """``functions.NAME:`` then (optionally) a JSON object, any number of times."""
    calls: list[tuple[str, str]] = []
    matches = list(_FUNCTIONS_CALL.finditer(text))
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        rest = text[match.end() : end].strip()
        calls.append((match.group(1), _arguments_text(rest)))
    return calls


def _arguments_text(rest: str) -> str:
    """The arguments as JSON text: the JSON value at the start of ``rest``, ``{}`` for none,
    and the text as written when it is not JSON (the tool then reports invalid arguments)."""
    if not rest:
        return "{}"
    try:
        value, _ = _DECODER.raw_decode(rest)
    except ValueError:
        return rest
    return json.dumps(value, ensure_ascii=False)


def _json_calls(text: str) -> list[tuple[str, str]]:
    """Calls written as JSON objects ``{"name": ..., "arguments": ...}`` (or a list of them)."""
    text = text.strip()
    if not text:
        return []
    try:
        value, _ = _DECODER.raw_decode(text)
    except ValueError:
        return []
    entries: list[Any] = value if isinstance(value, list) else [value]
    calls: list[tuple[str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            continue
        arguments = entry.get("arguments", entry.get("parameters", {}))
        if isinstance(arguments, str):
            calls.append((name, arguments or "{}"))
        else:
            calls.append((name, json.dumps(arguments, ensure_ascii=False)))
    return calls
