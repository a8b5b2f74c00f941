"""Responses request bodies: stateless, the bridge's session being the only history.

Always ``store: false``; never ``previous_response_id`` or ``conversation``. Function tools are
flat (``{type, name, description, parameters, strict}``) with ``strict`` always present.
"""

from __future__ import annotations

from typing import Any

from bridge.providers.identity import IdentitySettings
from bridge.providers.items import ProviderRequest, ToolSpec
from bridge.providers.projection import tool_spec_parameters, wire_tool_choice
from bridge.providers.responses.replay import input_items
from bridge.providers.settings import ModelSettings, output_cap

# Keys the protocol owns: extra_body from the configuration cannot change them, so no
# configuration can turn on server-side state or point at a stored conversation.
_PROTOCOL_KEYS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "stream",
        "store",
        "include",
        "tools",
        "tool_choice",
        "previous_response_id",
        "conversation",
    }
)


def tool_shape(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool_spec_parameters(tool.parameters),
        "strict": tool.strict,
    }


def build_body(
    request: ProviderRequest, model: ModelSettings, identity: IdentitySettings
) -> dict[str, Any]:
    """The JSON body of ``POST /responses`` for this request."""
    body: dict[str, Any] = {k: v for k, v in model.extra_body.items() if k not in _PROTOCOL_KEYS}
    body["model"] = model.wire_model
    if request.instructions:
        body["instructions"] = request.instructions
    body["input"] = input_items(request.items, identity)
    body["stream"] = True
    body["store"] = False
    body["include"] = ["reasoning.encrypted_content"]
    cap = output_cap(model.max_output_tokens, request.max_output_tokens)
    if cap is not None:
        body["max_output_tokens"] = cap
    tools = [tool_shape(t) for t in request.tools] + [dict(t) for t in request.native_tools]
    if tools:
        body["tools"] = tools
        choice = wire_tool_choice(request, model, lambda name: {"type": "function", "name": name})
        if choice is not None:
            body["tool_choice"] = choice
        if request.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if model.prompt_cache_key:
        body["prompt_cache_key"] = request.session_id
    return body
