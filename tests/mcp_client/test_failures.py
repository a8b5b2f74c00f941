"""A server that crashes, cannot start, never answers the handshake, or changes its tools."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from bridge.mcp.connection import State
from bridge.tools.results import ErrorCode

from .harness import SERVERS, harness, mcp_config, stdio_server


async def test_a_crashed_server_is_unavailable_with_a_reason_then_restarted(
    tmp_path: Path,
) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        crashed = await h.call("mcp__wiki__crash")
        assert crashed.error_code is ErrorCode.UNAVAILABLE
        assert "MCP server wiki is unavailable" in str(crashed.message)
        await h.until(lambda: connection.starts == 2 and connection.state is State.READY)
        assert connection.failures == 1
        again = await h.call("mcp__wiki__echo", {"text": "back"})
        assert again.ok and "back" in again.result["text"]


async def test_a_server_that_keeps_failing_is_given_up_with_one_clear_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = mcp_config({"wiki": stdio_server("--exit-at-start", max_restarts=2)})
    with caplog.at_level(logging.WARNING, logger="bridge.mcp"):
        async with harness(tmp_path, config) as h:
            await h.until(
                lambda: (
                    "wiki" in h.clients.connections and h.connection("wiki").state is State.GAVE_UP
                )
            )
            [status] = h.clients.status()
            assert status.startswith("wiki: stopped after repeated failures, 0 tools")
            assert "stopped after 3 failures in a row" in status
    gave_up = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(gave_up) == 1 and "MCP server wiki stopped after 3" in gave_up[0].getMessage()


async def test_a_server_that_never_answers_the_handshake_fails_its_connect_timeout(
    tmp_path: Path,
) -> None:
    silent = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVERS / "silent.py")],
        "read": [str(SERVERS)],
        "connect_timeout_ms": 500,
        "max_restarts": 0,
    }
    async with harness(tmp_path, mcp_config({"mute": silent, "wiki": stdio_server()})) as h:
        await h.until(
            lambda: "mute" in h.clients.connections and h.connection("mute").state is State.GAVE_UP
        )
        assert "connect_timeout_ms" in h.connection("mute").reason
        # The other server is not held up by it.
        await h.ready("wiki")
        assert (await h.call("mcp__wiki__echo", {"text": "fine"})).ok


async def test_list_changed_brings_the_new_tool(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        assert "mcp__wiki__extra" not in {t.name for t in connection.listing.offered}
        assert (await h.call("mcp__wiki__grow")).ok
        await h.until(lambda: "mcp__wiki__extra" in {t.name for t in connection.listing.offered})
        outcome = await h.call("mcp__wiki__extra")
        assert outcome.ok and "extra here" in outcome.result["text"]


async def test_a_failed_start_shows_the_childs_stderr_redacted_in_log_and_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """The child's first stderr lines reach the owner (log, /mineclaw status) with its secrets
    redacted; not the model (the reason a call gets is the bridge's words) and not the bridge's
    own stderr (where the playground's chat would print them)."""
    config = mcp_config({"wiki": stdio_server("--exit-at-start", max_restarts=0)})
    secrets = frozenset({"sk-toolbox-secret-4242"})
    with caplog.at_level(logging.WARNING, logger="bridge.mcp"):
        async with harness(tmp_path, config, secrets=secrets) as h:
            await h.until(
                lambda: (
                    "wiki" in h.clients.connections and h.connection("wiki").state is State.GAVE_UP
                )
            )
            [status] = h.clients.status()
            said = "stderr: wiki: cannot open the index with key"
            assert said in status and "| see the wiki's own log" in status, status
            assert "sk-toolbox-secret-4242" not in status
            assert "stderr" not in h.connection("wiki").reason
    [line] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert said in line and "sk-toolbox-secret-4242" not in line
    assert "cannot open the index" not in capfd.readouterr().err


@pytest.mark.parametrize(("count", "said"), [(0, "0 tools"), (1, "1 tool"), (2, "2 tools")])
def test_the_status_line_counts_tools_in_words(tmp_path: Path, count: int, said: str) -> None:
    """'demo: ready, 1 tools' read as a typo in /mineclaw status."""
    from bridge.mcp.clients import McpClients
    from bridge.mcp.connection import Listing, ServerConnection
    from bridge.mcp.discovery import OfferedTool

    config = mcp_config({"wiki": stdio_server()})
    clients = McpClients(audit=None, redact=str, progress=None)  # type: ignore[arg-type]
    connection = ServerConnection(
        "wiki", config.servers["wiki"], workspace=tmp_path, changed=lambda: None
    )
    offered = tuple(
        OfferedTool("wiki", f"t{i}", f"mcp__wiki__t{i}", "", {}, f"d{i}") for i in range(count)
    )
    connection.listing = Listing(offered=offered)
    clients.connections["wiki"] = connection
    [line] = clients.status()
    assert line.startswith(f"wiki: {connection.state.value}, {said}")
    assert not line.startswith(f"wiki: {connection.state.value}, {said}s")
