"""The bridge installed as docs/install.md says, with nothing else: the wheel in a clean venv of
the oldest supported Python and its own pip (``clean_venv.py``), then one live turn of the
installed ``mineclaw-bridge serve`` (the testkit JVM, a scripted provider) in which the model
fetches a loopback page, calls an MCP server's tool and calls a Function.

Each is a part that imports something only when used: trafilatura and lxml's HTML cleaner in
the extraction worker, the MCP SDK, the V8 sandbox. A dependency the wheel does not declare, or
declares in a spelling the shipped pip does not match, fails here as it would for a user
(every HTML fetch answered ``internal_error`` on a plain install, while the tests, in a venv
whose pip ``make install`` upgrades, passed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.interaction.test_ask_player_e2e import stopped_audit
from tests.interaction.test_turns_e2e import NO_COOLDOWNS, OP, world
from tests.mcp_client.harness import TOOLBOX
from tests.web.network import seam_env
from tests.web.site import LoopbackSite

from .clean_venv import CleanVenv

pytestmark = pytest.mark.jvm

PAGE = """<html><head><title>Crafting Table</title></head><body><article>
<h1>Crafting Table</h1><p>A crafting table gives access to a three by three crafting grid. It is
made from four planks of any wood and is one of the first blocks a player makes.</p>
</article></body></html>"""
FUNCTIONS = """\
schema: 1
api_version: 1
functions:
  - name: add
    description: Adds two whole numbers.
    enabled: true
    capabilities: []
    parameters:
      type: object
      properties: {a: {type: integer}, b: {type: integer}}
      required: [a, b]
      additionalProperties: false
    on_call: |
      async function onCall(ctx, api) {
        return {status: "ok", output: {sum: ctx.args.a + ctx.args.b}};
      }
"""
READY = r"MCP server wiki ready: (\d+) tools offered"


def config_yml(venv: CleanVenv) -> str:
    config = yaml.safe_load(NO_COOLDOWNS)
    config["environment"] = {"tool_cooldown_ms": 0}
    config["web"] = {"enabled": True}
    # The MCP server runs on the clean venv's Python: the SDK the wheel brought serves it.
    config["mcp"] = {
        "enabled": True,
        "servers": {"wiki": {"transport": "stdio", "command": str(venv.python), "args": [TOOLBOX]}},
    }
    return yaml.safe_dump(config)


def tool_outcomes(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    calls = {
        call["id"]: call["function"]["name"]
        for m in body["messages"]
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    }
    return {
        calls[m["tool_call_id"]]: json.loads(m["content"])
        for m in body["messages"]
        if m["role"] == "tool"
    }


async def test_a_plain_install_fetches_a_page_calls_mcp_and_a_function_in_a_live_turn(
    plain_install: CleanVenv, tmp_path: Path
) -> None:
    venv = plain_install
    async with LoopbackSite() as site:
        site.page("/Crafting_Table", PAGE)
        async with world(
            tmp_path,
            config_yml(venv),
            {"functions.yml": FUNCTIONS},
            # No PYTHONPATH: only the installed copy of the bridge can be found.
            bridge_env={**seam_env(tmp_path, site.port), "PYTHONPATH": ""},
            bridge_command=(str(venv.command("mineclaw-bridge")),),
        ) as w:
            await w.bridge.stderr.wait_for(READY, timeout=120)
            await w.add("Steve", OP)
            w.provider.call_tools(
                ("web_fetch", {"url": "http://wiki.example/Crafting_Table"}),
                ("mcp__wiki__echo", {"text": "the spawn is at 0 64 0"}),
                ("call_function", {"name": "add", "arguments": {"a": 2, "b": 3}}),
            )
            w.provider.answer("Four planks; the spawn is at 0 64 0; 2 and 3 make 5.")
            since = w.mark()
            await w.chat("Steve", "@ai three questions")
            # The MCP result and the Function's are personal (issue 44): the answer that carries
            # them reaches its asker alone.
            assert (await w.message("Steve", "→ you]", since)).endswith(
                "Four planks; the spawn is at 0 64 0; 2 and 3 make 5."
            )
            outcomes = tool_outcomes(w.provider.bodies()[-1])
            logged = await stopped_audit(w)
    page = outcomes["web_fetch"]
    assert page["ok"] is True, page
    assert page["result"]["extractor"] == "trafilatura"
    assert "four planks" in page["result"]["text"]
    mcp = outcomes["mcp__wiki__echo"]
    assert mcp["ok"] is True and "the spawn is at 0 64 0" in mcp["result"]["text"], mcp
    function = outcomes["call_function"]
    assert function["ok"] is True and function["result"]["output"] == {"sum": 5}, function
    assert [f["outcome"] for f in logged["web.fetch"]] == ["ok"]
