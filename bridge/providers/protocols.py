"""The two wire protocols behind one small interface the client drives.

Each protocol brings its own path, request builder and reader; nothing is shared between them
beyond the neutral items, so a change to one cannot silently change the other.
"""

from __future__ import annotations

from typing import Any, Protocol

from bridge.providers.chat_completions import request as chat_request
from bridge.providers.chat_completions.reader import ChatCompletionsReader
from bridge.providers.events import StreamEvent
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import ApiType, ProviderRequest
from bridge.providers.responses import request as responses_request
from bridge.providers.responses.reader import ResponsesReader
from bridge.providers.settings import ModelSettings


class StreamReader(Protocol):
    """A sans-I/O reader: ``feed`` bytes, ``close`` at end of body; ``finished`` after the
    terminal event."""

    finished: bool

    def feed(self, chunk: bytes) -> list[StreamEvent]: ...

    def close(self) -> list[StreamEvent]: ...


class WireProtocol(Protocol):
    path: str

    def build_body(
        self, request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
    ) -> dict[str, Any]: ...

    def new_reader(self, model: ModelSettings) -> StreamReader: ...


class ChatCompletionsProtocol:
    path = "/chat/completions"

    def build_body(
        self, request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
    ) -> dict[str, Any]:
        return chat_request.build_body(request, model, identity)

    def new_reader(self, model: ModelSettings) -> StreamReader:
        return ChatCompletionsReader(
            interleaved_field=model.interleaved_field,
            text_formats=model.compat.text_tool_formats,
        )


class ResponsesProtocol:
    path = "/responses"

    def build_body(
        self, request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
    ) -> dict[str, Any]:
        return responses_request.build_body(request, model, identity)

    def new_reader(self, model: ModelSettings) -> StreamReader:
        return ResponsesReader()


def protocol_for(api_type: ApiType) -> WireProtocol:
    if api_type == "openai_chat_completions":
        return ChatCompletionsProtocol()
    return ResponsesProtocol()
