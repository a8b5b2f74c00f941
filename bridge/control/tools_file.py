"""``tools.yml``: which built-in tools exist, how the model sees them and who may use them.

A key is the tool name shown to the model; ``handler`` says which built-in implements it, so an
owner can rename or describe a tool without touching code. ``parameters`` is the JSON Schema
of the arguments object the model must send.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from bridge.control.base import StrictModel
from bridge.control.shipped_schemas import shipped_schema_texts
from bridge.schemas import SafeSchema, SchemaRefused

Handler = Literal[
    "player_snapshot",
    "item_inspect",
    "block_inspect",
    "online_players",
    "list",
    "read",
    "grep",
    "run_command",
    "call_function",
    "read_skill",
    "ask_player",
    "recipe_lookup",
    "item_facts",
    "list_plugins",
    "list_commands",
    "web_fetch",
    "web_search",
    "remember",
    "recall",
    "mcp",
]
MCP_HANDLER = "mcp"
"""The handler of every tool an MCP server offers (``config.yml``'s ``mcp``); an entry of
``tools.yml`` can never name it."""

TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# The nodes the link protocol can ask the plugin to report (its ReportNode): up to eight dotted
# words of at most 32 characters each.
PERMISSION_NODE = re.compile(r"[a-z0-9_-]{1,32}(\.[a-z0-9_-]{1,32}){0,7}")


class ToolSpec(StrictModel):
    """One tool offered to the model."""

    handler: Handler
    enabled: bool = True
    description: str = Field(min_length=1, max_length=2048)
    # A permission node the asking player must hold for the tool to be shown at all.
    permission: str | None = Field(default=None, min_length=1, max_length=128)
    # paid: calling it costs money (an external API); guests are not offered it.
    cost: Literal["free", "paid"] = "free"
    parameters: dict[str, Any]

    @field_validator("handler")
    @classmethod
    def _built_in(cls, value: str, info: ValidationInfo) -> str:
        context = info.context
        if value == MCP_HANDLER and not (isinstance(context, dict) and context.get("mcp")):
            raise ValueError("not a built-in handler; MCP tools come from config.yml's mcp section")
        return value

    @field_validator("permission")
    @classmethod
    def _node(cls, value: str | None) -> str | None:
        if value is not None and not PERMISSION_NODE.fullmatch(value):
            raise ValueError(
                "must be a permission node such as mineclaw.tool.run_command"
                " (up to 8 dotted words of a-z, 0-9, _ and -, each at most 32 characters)"
            )
        return value

    @field_validator("parameters")
    @classmethod
    def _schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            SafeSchema.of(value, vouched=shipped_schema_texts())
        except SchemaRefused as exc:
            raise ValueError(str(exc)) from None
        if value.get("type") != "object":
            raise ValueError('must have "type": "object"')
        return value


class ToolsFile(StrictModel):
    """The whole of ``tools.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    tools: dict[str, ToolSpec] = Field(default_factory=dict, max_length=128)

    @field_validator("tools")
    @classmethod
    def _names(cls, value: dict[str, ToolSpec]) -> dict[str, ToolSpec]:
        for name in value:
            if not TOOL_NAME.fullmatch(name):
                raise ValueError(f"tool name {name!r} must match {TOOL_NAME.pattern}")
        return value

    def enabled(self) -> dict[str, ToolSpec]:
        """The enabled tools by name, in file order."""
        return {name: spec for name, spec in self.tools.items() if spec.enabled}
