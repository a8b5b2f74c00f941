"""Chat Completions request bodies, built from the protocol-neutral conversation.

One assistant message gathers each run of consecutive assistant-side items (text, tool calls
and, with an interleaved field configured, the reasoning streamed in that field). Tool outputs
become ``role: tool`` messages. Reasoning produced by the Responses protocol is never sent here.
"""

from __future__ import annotations

from typing import Any

from bridge.providers.compat import ServerCompat
from bridge.providers.identity import IdentitySettings, chat_completions_user_message
from bridge.providers.items import (
    AssistantText,
    Item,
    PlayerMessage,
    ProviderRequest,
    Reasoning,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from bridge.providers.projection import (
    drop_unpaired_tool_items,
    tool_spec_parameters,
    wire_tool_choice,
)
from bridge.providers.settings import ModelSettings, output_cap

PROTOCOL = "openai_chat_completions"


def tool_shape(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool_spec_parameters(tool.parameters),
            "strict": tool.strict,
        },
    }


class _AssistantMessage:
    """Collects one assistant message while the projection walks the items."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []

    def wire(self, interleaved_field: str | None, compat: ServerCompat) -> dict[str, Any] | None:
        if not (self.text or self.tool_calls):
            return None
        empty = "" if compat.tool_replay_content == "empty" else None
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.text) if self.text else empty,
        }
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        if interleaved_field is not None and self.reasoning:
            message[interleaved_field] = "".join(self.reasoning)
        return message


def _replayable(reasoning: Reasoning, interleaved_field: str | None) -> bool:
    """Reasoning goes back only in the interleaved field it was streamed in, and only from this
    protocol: a Responses reasoning item means nothing to a Chat Completions server."""
    if interleaved_field is None or reasoning.protocol != PROTOCOL or not reasoning.text:
        return False
    return reasoning.opaque is not None and reasoning.opaque.get("field") == interleaved_field


def messages(
    request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.instructions:
        out.append({"role": "system", "content": request.instructions})
    pending: _AssistantMessage | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            message = pending.wire(model.interleaved_field, model.compat)
            if message is not None:
                out.append(message)
            pending = None

    kept: list[Item | None] = drop_unpaired_tool_items(request.items)
    for item in kept:
        if item is None:
            continue
        if isinstance(item, AssistantText | Reasoning | ToolCall):
            if pending is None:
                pending = _AssistantMessage()
            if isinstance(item, AssistantText):
                pending.text.append(item.text)
            elif isinstance(item, ToolCall):
                call: dict[str, Any] = dict(item.extra) if item.extra else {}
                call.update(
                    id=item.call_id,
                    type="function",
                    function={"name": item.name, "arguments": item.arguments},
                )
                pending.tool_calls.append(call)
            elif _replayable(item, model.interleaved_field):
                pending.reasoning.append(item.text)
            continue
        flush()
        if isinstance(item, PlayerMessage):
            out.append(chat_completions_user_message(item, identity))
        elif isinstance(item, ToolResult):
            out.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
    flush()
    return out


# Keys the protocol owns: extra_body from the configuration cannot change them.
_PROTOCOL_KEYS = frozenset(
    {"model", "messages", "stream", "stream_options", "tools", "tool_choice", "n"}
)


def build_body(
    request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for this request."""
    body: dict[str, Any] = {k: v for k, v in model.extra_body.items() if k not in _PROTOCOL_KEYS}
    body["model"] = model.wire_model
    body["messages"] = messages(request, model, identity)
    body["stream"] = True
    if model.compat.stream_usage:
        body["stream_options"] = {"include_usage": True}
    cap = output_cap(model.max_output_tokens, request.max_output_tokens)
    if cap is not None:
        body["max_completion_tokens"] = cap
    tools = [tool_shape(t) for t in request.tools] + [dict(t) for t in request.native_tools]
    if tools:
        body["tools"] = tools
        choice = wire_tool_choice(
            request, model, lambda name: {"type": "function", "function": {"name": name}}
        )
        if choice is not None:
            body["tool_choice"] = choice
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if model.prompt_cache_key:
        body["prompt_cache_key"] = request.session_id
    return body
