"""A real stdio MCP server (the toolbox, a child process): discovery, calls through the one tool
path, tool errors, timeouts, cancellation, the environment and limits it gets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bridge.mcp.connection import State
from bridge.tools.registry import CallContext
from bridge.tools.results import ErrorCode

from .harness import harness, mcp_config, stdio_server


async def test_tools_are_discovered_and_a_call_goes_through_the_one_tool_path(
    tmp_path: Path,
) -> None:
    config = mcp_config({"wiki": stdio_server()})
    async with harness(tmp_path, config) as h:
        connection = await h.ready("wiki")
        names = {tool.name for tool in connection.listing.offered}
        assert {"mcp__wiki__echo", "mcp__wiki__fail", "mcp__wiki__slow"} <= names
        spec = next(s for s in h.invoker().tools.specs if s.name == "mcp__wiki__echo")
        assert spec.description.startswith("[MCP server wiki; the server's own description")
        assert spec.parameters["required"] == ["text"]

        outcome = await h.call("mcp__wiki__echo", {"text": "hello wiki"})
        assert outcome.ok, outcome
        text = outcome.result["text"]
        assert "hello wiki" in text and text.startswith("[MCP result ")
        assert outcome.result["server"] == "wiki" and "third party" in outcome.result["untrusted"]
        # The tool path's own record and the MCP call's, arguments kept (redacted, cut).
        assert ("tool.invoke", "mcp") in [(k, f.get("handler")) for k, f in h.audit.events]
        [record] = [f for k, f in h.audit.events if k == "mcp.call"]
        assert record["status"] == "ok" and record["tool"] == "echo"
        assert json.loads(str(record["arguments"])) == {"text": "hello wiki"}

        # The schema the server gave is enforced before the server is asked.
        refused = await h.call("mcp__wiki__echo", {"text": 5})
        assert refused.error_code is ErrorCode.INVALID_ARGUMENTS
        assert len([k for k, _ in h.audit.events if k == "mcp.call"]) == 1


async def test_a_tool_error_is_the_tools_own_message(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__fail")
        assert outcome.error_code is ErrorCode.TOOL_ERROR
        assert "the wiki is closed today" in str(outcome.message)
        assert h.connection("wiki").state is State.READY


async def test_a_call_past_its_timeout_is_cancelled_on_the_server(tmp_path: Path) -> None:
    config = mcp_config({"wiki": stdio_server(call_timeout_ms=500)})
    async with harness(tmp_path, config) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__slow")
        assert outcome.error_code is ErrorCode.TIMEOUT
        assert "call_timeout_ms" in str(outcome.message)
        # The server was told (notifications/cancelled) and stopped the handler.
        async with asyncio.timeout(60):
            while True:
                seen = await h.call("mcp__wiki__cancellations")
                if "1" in seen.result["text"].splitlines()[1]:
                    break
        assert h.connection("wiki").state is State.READY


async def test_progress_shows_to_the_asker_and_a_stop_cancels_the_call_on_the_server(
    tmp_path: Path,
) -> None:
    shown: list[tuple[str, str]] = []
    running = asyncio.Event()

    async def action_bar(context: CallContext, text: str) -> None:
        shown.append((context.player_name, text))
        running.set()

    async with harness(tmp_path, mcp_config({"wiki": stdio_server()}), progress=action_bar) as h:
        await h.ready("wiki")
        turn = asyncio.create_task(h.call("mcp__wiki__slow"))
        async with asyncio.timeout(60):
            await running.wait()  # the server runs the call: it reported progress
        # The bridge's own words: the tool's offered name and a number, not the server's text.
        assert shown == [("Steve", "mcp__wiki__slow 50%")]
        turn.cancel()  # what a player's stop does to the turn's running call
        async with asyncio.timeout(60):
            while (await h.call("mcp__wiki__cancellations")).result["text"].splitlines()[1] == "0":
                pass
        assert [f["status"] for k, f in h.audit.events if k == "mcp.call"][0] == "cancelled"


async def test_the_server_gets_only_the_named_variables_and_its_limits(tmp_path: Path) -> None:
    config = mcp_config(
        {"wiki": stdio_server(env=["WIKI_TOKEN"], memory_mb=777, open_files=77)},
        environ={"WIKI_TOKEN": "token-value-123456", "OTHER": "x"},
    )
    async with harness(tmp_path, config) as h:
        await h.ready("wiki")
        names = json.loads((await h.call("mcp__wiki__environment")).result["text"].splitlines()[1])
        assert names == ["WIKI_TOKEN"]
        limits = json.loads((await h.call("mcp__wiki__limits")).result["text"].splitlines()[1])
        assert limits == [777 * 1024 * 1024, 77]


async def test_a_tools_yml_gate_applies_to_mcp_tools_and_guests_never_see_them(
    tmp_path: Path,
) -> None:
    config = mcp_config(
        {
            "wiki": stdio_server(
                tools={"fail": {"permission": "mineclaw.tool.wiki"}}, unlisted="offer"
            )
        }
    )
    async with harness(tmp_path, config) as h:
        await h.ready("wiki")
        visible = {s.name for s in h.invoker().tools.specs}
        assert "mcp__wiki__fail" not in visible  # its node is not held
        assert "mcp__wiki__echo" in visible
        held = {s.name for s in h.invoker(frozenset({"mineclaw.tool.wiki"})).tools.specs}
        assert "mcp__wiki__fail" in held
        gated = await h.call("mcp__wiki__fail")
        assert gated.error_code is ErrorCode.UNKNOWN_TOOL
