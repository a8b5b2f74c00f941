"""Skills reach the model, end to end: the testkit JVM, ``python -m bridge serve`` and a
scripted provider. The request carries the skill index after ``AGENTS.md``, and the model reads
a skill's full text with ``read_skill``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_turns_e2e import NO_COOLDOWNS, OP, REPLY_PREFIX, asked_by, system_text, world

pytestmark = pytest.mark.jvm

WARPS = """---
id: warps
name: Warps
description: How this server's warp signs work.
triggers: [warp, teleport]
---
Warp signs are at spawn. Right-click one, then say the warp's name.
"""


async def test_the_request_carries_the_skill_index_and_read_skill_returns_the_text(
    tmp_path: Path,
) -> None:
    files = {"workspace/skills/warps.md": WARPS}
    async with world(tmp_path, NO_COOLDOWNS, files) as w:
        await w.add("Steve", OP)
        w.provider.call_tools(("read_skill", {"id": "warps"}))
        w.provider.answer("Warp signs are at spawn.")
        since = w.mark()
        await w.chat("Steve", "@ai how do I warp home")
        assert (
            await w.message("*", REPLY_PREFIX, since)
            == asked_by("Steve") + "Warp signs are at spawn."
        )
        first, second = w.provider.bodies()
        instructions = system_text(first)
        agents = (w.config / "workspace" / "AGENTS.md").read_text().strip()
        assert instructions.startswith(agents)
        assert "- warps: Warps. How this server's warp signs work." in instructions
        assert "(when the player mentions: warp, teleport)" in instructions
        assert "read_skill" in [tool["function"]["name"] for tool in first["tools"]]
        # The same prefix in the next request of the turn: byte for byte.
        assert system_text(second) == instructions
        result = [m for m in second["messages"] if m["role"] == "tool"][0]
        outcome = json.loads(result["content"])
        assert outcome["ok"] is True
        assert outcome["result"]["text"].startswith("Warp signs are at spawn.")
