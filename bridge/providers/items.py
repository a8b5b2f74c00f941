"""The protocol-neutral conversation: what a turn holds, whichever wire protocol carries it.

The turn engine keeps a session as a sequence of these items; each protocol's request builder
projects them to its own wire shape, and each SSE reader assembles a response back into them.
Identity is only the player's account name: no UUID, address or permission ever lives here, so
none can reach a provider.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ApiType = Literal["openai_chat_completions", "openai_responses"]
"""The two wire protocols, named as ``api.type`` in ``providers.yml``."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlayerMessage(_Item):
    """What a player wrote. ``player`` is the account name the plugin reported, or None when the
    bridge itself speaks for nobody in particular (for example a compaction request)."""

    kind: Literal["player"] = "player"
    player: str | None
    text: str


class AssistantText(_Item):
    """Visible text the model answered with."""

    kind: Literal["assistant_text"] = "assistant_text"
    text: str


class Reasoning(_Item):
    """The model's reasoning. ``text`` is readable (summary or raw reasoning, possibly empty);
    ``protocol`` says which wire protocol produced it, because only that protocol can replay it.

    Responses keeps the reasoning item as ``output_item.done`` gave it in ``opaque`` (id, summary,
    ``encrypted_content``); Chat Completions replays ``text`` in the interleaved field, if any.
    """

    kind: Literal["reasoning"] = "reasoning"
    protocol: ApiType
    text: str = ""
    opaque: dict[str, Any] | None = None


class ToolCall(_Item):
    """A tool call the model asked for; ``arguments`` is the JSON text exactly as streamed.

    ``extra``: fields the server put on the call beside ``id``, ``type`` and ``function``
    (Gemini's ``extra_content`` with its ``thought_signature``); they go back unchanged when
    the call is replayed, since a server may refuse a follow-up without them.
    """

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: str
    extra: dict[str, Any] | None = None


class ToolResult(_Item):
    """The output the bridge produced for the tool call with the same ``call_id``.

    ``personal``: the output is about the asking player (a snapshot of them, their items, what
    they look at); the session replays it only in that player's later turns
    (`bridge.turns.session`).
    """

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    output: str
    personal: bool = False


Item = Annotated[
    PlayerMessage | AssistantText | Reasoning | ToolCall | ToolResult,
    Field(discriminator="kind"),
]
"""One entry of a conversation."""

ASSISTANT_SIDE = (AssistantText, Reasoning, ToolCall)
"""Items a model response produces; consecutive ones form one assistant message."""


class ToolSpec(_Item):
    """A local tool, described once and projected to each protocol's tool shape."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False


ToolChoice = Literal["auto", "required", "none"]


class ProviderRequest(_Item):
    """One model request of a turn, in protocol-neutral form.

    ``session_id`` is the public session's stable id: it goes into ``prompt_cache_key`` (when the
    model enables it) and into the opencode session header, unchanged across tool round trips,
    compaction and retries. ``native_tools`` are provider payloads from ``providers.yml`` that
    the registry allowed for this turn; they are sent exactly as written.
    """

    session_id: str = Field(min_length=1)
    instructions: str | None = None
    items: tuple[Item, ...]
    tools: tuple[ToolSpec, ...] = ()
    native_tools: tuple[dict[str, Any], ...] = ()
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    """A cap for this request below the model's own (a guest's turn); the smaller one is sent."""
