"""A real MCP server over streamable HTTP on loopback: discovery, a call with the owner's
header from .env, and a server that goes away."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.mcp.connection import State
from bridge.tools.results import ErrorCode
from tests.interaction.processes import free_port

from .harness import harness, http_toolbox, mcp_config, watch_messages

TOKEN = "wiki-token-0123456789"


def http_server(port: int, **fields: object) -> dict[str, object]:
    return {
        "transport": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headers": {"X-Wiki-Token": "${WIKI_TOKEN}"},
        "restart_backoff_ms": 0,
        **fields,
    }


async def test_discovery_and_a_call_with_the_header_from_env(tmp_path: Path) -> None:
    port = free_port()
    config = mcp_config({"wiki": http_server(port)}, environ={"WIKI_TOKEN": TOKEN})
    with http_toolbox(port):
        async with harness(tmp_path, config, secrets=frozenset({TOKEN})) as h:
            connection = await h.ready("wiki")
            assert "mcp__wiki__echo" in {t.name for t in connection.listing.offered}
            outcome = await h.call("mcp__wiki__echo", {"text": "over http"})
            assert outcome.ok and "over http" in outcome.result["text"]
            # The server got the header; what it says back is redacted like any secret.
            said = await h.call("mcp__wiki__token")
            assert said.ok and TOKEN not in said.to_json()
            assert "redacted" in said.result["text"]
            assert TOKEN not in " ".join(h.clients.status())


async def test_a_server_that_went_away_is_unavailable_then_given_up(tmp_path: Path) -> None:
    port = free_port()
    config = mcp_config(
        {"wiki": http_server(port, max_restarts=1, connect_timeout_ms=5_000)},
        environ={"WIKI_TOKEN": TOKEN},
    )
    with http_toolbox(port) as server:
        async with harness(tmp_path, config) as h:
            connection = await h.ready("wiki")
            server.kill()
            server.wait()
            gone = await h.call("mcp__wiki__echo", {"text": "anyone?"})
            assert gone.error_code in (ErrorCode.UNAVAILABLE, ErrorCode.TOOL_ERROR), gone
            await h.until(lambda: connection.state is State.GAVE_UP)
            after = await h.call("mcp__wiki__echo", {"text": "anyone?"})
            assert after.error_code is ErrorCode.UNAVAILABLE
            assert "stopped after 2 failures" in str(after.message)


async def test_messages_nobody_asked_for_never_reach_the_session_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a stdio server's reader drops, an HTTP server's streams drop too: log lines,
    progress of no request and resource notifications never reach the session, list_changed
    only once per listing; the session goes on."""
    seen, listings = watch_messages(monkeypatch)
    port = free_port()
    config = mcp_config({"wiki": http_server(port)}, environ={"WIKI_TOKEN": TOKEN})
    with http_toolbox(port):
        async with harness(tmp_path, config) as h:
            connection = await h.ready("wiki")
            assert (await h.call("mcp__wiki__chatter", {"count": 300})).ok
            assert (await h.call("mcp__wiki__echo", {"text": "still here"})).ok
            assert connection.state is State.READY and connection.starts == 1
    assert set(seen) <= {"ToolListChangedNotification"}, (len(seen), set(seen))
    assert len(seen) <= len(listings), (len(seen), len(listings))
