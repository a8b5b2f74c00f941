"""A tool gated by a permission node of the owner's own (``permission: myserver.lookup`` in
``tools.yml``) end to end: the bridge names the node in ``link.state``, the plugin (the testkit
JVM running the real plugin core) reads it for each player and reports it among the Granted
facts, and only the player who holds it is offered the tool. Before ``report_nodes`` the plugin
read a fixed set of nodes, so such a tool was silently offered to nobody."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_budgets_e2e import tool_names
from .test_turns_e2e import REPLY_PREFIX, asked_by, world

pytestmark = pytest.mark.jvm

CHAT = "mineclaw.command.chat"
TOOLS_YML = """schema: 1
tools:
  list:
    handler: list
    description: List files in the workspace folder.
    permission: myserver.lookup
    parameters: {type: object, properties: {path: {type: string}}, additionalProperties: false}
  read:
    handler: read
    description: Read a text file from the workspace folder.
    parameters:
      type: object
      properties: {path: {type: string, minLength: 1}}
      required: [path]
      additionalProperties: false
"""
CONFIG = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"


async def test_a_tool_behind_an_owners_node_is_offered_to_its_holders_only(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, CONFIG, {"tools.yml": TOOLS_YML}) as w:
        await w.testkit.wait_event(lambda e: e.get("event") == "link.state")
        await w.add("Steve", [CHAT, "myserver.lookup"])
        await w.add("Alex", [CHAT])
        for player in ("Steve", "Alex"):
            w.provider.answer(f"Hello {player}.")
            since = w.mark()
            assert (await w.chat(player, "@ai what can you do?"))["outcome"] == "public"
            await w.message("*", asked_by(player) + f"Hello {player}.", since)
            assert any(m["text"].startswith(REPLY_PREFIX) for m in w.messages(since))
        steve, alex = w.provider.bodies()[-2:]
        assert sorted(tool_names(steve)) == ["list", "read"]
        assert tool_names(alex) == ["read"]
