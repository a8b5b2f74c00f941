"""Personal by property: every tool whose result depends on who asks says so in the registry.

The test walks every tool the served registry binds (the link's, the workspace's, the web's,
memory's) and runs each for two askers with a context that records what the code reads. A
tool that reads the asker's UUID or permission nodes must be personal, or be declared as
reading the asker only to pick the server they are on (`HandlerTraits.routed_by_asker`) or to
act for them (`acts_for_asker`: whether it may run, whom to ask). A new
tool that reads the asker and declares neither fails here, whoever forgets the declaration.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.tools.registry import HANDLERS, CallContext

from .conftest import NO_COOLDOWNS, App, open_app, write_config
from .scripted_provider import ScriptedProvider

STEVE_UUID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
ALEX_UUID = "0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b"

ASKER_FIELDS = frozenset({"player_uuid", "granted"})
"""What identifies the asker to the code (the name is a label for audit records and lines)."""

ARGUMENTS: dict[str, dict[str, Any]] = {
    "player_snapshot": {},
    "item_inspect": {},
    "block_inspect": {},
    "online_players": {},
    "recipe_lookup": {"item": "minecraft:stick"},
    "item_facts": {"item": "minecraft:stick"},
    "list_plugins": {},
    "list_commands": {},
    "list": {"path": "."},
    "read": {"path": "skills/README.md"},
    "grep": {"pattern": "the"},
    "read_skill": {"name": "x"},
    "run_command": {"command": "time set day"},
    "ask_player": {"question": "yes?", "choices": ["yes", "no"]},
    "call_function": {"name": "x", "arguments": {}},
    "web_fetch": {"url": "http://127.0.0.1:9/"},
    "web_search": {"query": "minecraft"},
    "remember": {"text": "my base is at 1 2 3"},
    "recall": {"query": "base"},
}
"""Arguments that take each handler past its validation (a handler added without a line here
fails the test, so it is looked at)."""


class Reads:
    def __init__(self) -> None:
        self.fields: set[str] = set()


def recording(reads: Reads, **fields: Any) -> CallContext:
    class Recorded(CallContext):
        """A context that notes which of its fields the code under test reads."""

        def __getattribute__(self, name: str) -> Any:
            if name in ASKER_FIELDS:
                reads.fields.add(name)
            return object.__getattribute__(self, name)

    return Recorded(**fields)


WEB_ON = NO_COOLDOWNS + (
    "web:\n  enabled: true\n  search:\n    backend: searxng\n    url: http://127.0.0.1:9/\n"
)


async def test_every_tool_that_reads_the_asker_is_personal_or_only_routed_by_them(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, WEB_ON)
    app = await open_app(config, provider)
    try:
        await walk_every_tool(app)
    finally:
        await app.runtime.aclose()


async def walk_every_tool(app: App) -> None:
    registry = app.runtime.served.registry
    bound = registry.bound
    handlers_walked = {tool.entry.handler for tool in bound.values()}
    # Every built-in but the MCP servers' (tests/mcp_client: personal unless shared) is walked.
    assert handlers_walked >= set(HANDLERS) - {"mcp", "call_function"}, (
        set(HANDLERS) - handlers_walked
    )
    offenders = []
    for name, tool in bound.items():
        arguments = ARGUMENTS[tool.entry.handler]
        reads = Reads()
        for uuid, who in ((STEVE_UUID, "Steve"), (ALEX_UUID, "Alex")):
            context = recording(
                reads,
                turn_id=f"t-{name}-{who}",
                call_id="c1",
                player_uuid=uuid,
                player_name=who,
                lane_id="public",
                granted=frozenset({"mineclaw.memory.server"}),
            )
            try:
                await asyncio.wait_for(tool.run(dict(arguments), context), 5)
            except Exception:  # a refusal or a missing world after the read is fine here
                pass
        traits = HANDLERS[tool.entry.handler]
        declared = traits.routed_by_asker or traits.acts_for_asker
        if reads.fields and not tool.personal and not declared:
            offenders.append((name, sorted(reads.fields)))
    assert offenders == []


def test_a_tool_declared_routed_is_shared_and_every_handler_is_declared() -> None:
    for name, traits in HANDLERS.items():
        assert not (traits.personal and (traits.routed_by_asker or traits.acts_for_asker)), name
    # The ones the issue names: results that depend on who asks.
    personal = {name for name, traits in HANDLERS.items() if traits.personal}
    assert {"list_commands", "player_snapshot", "remember", "recall", "mcp"} <= personal
