"""A hostile server's call never holds another player: a witness's chat verdict is answered
while the hostile call runs (events only: the witness is asked after the hostile call started,
and both must end)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bridge.tools.registry import CallContext
from bridge.tools.results import ToolOutcome
from tests.app.conftest import ALEX, App, open_app, provider, write_config
from tests.app.scripted_provider import ScriptedProvider

from .harness import SERVERS, TOOLBOX, WAIT
from .test_app_wiring import MEMBER, config_yml, wait_for_tool

__all__ = ["provider"]


@contextlib.contextmanager
def url_that_never_answers() -> Iterator[str]:
    """A loopback port that takes connections into its backlog and never answers them."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


async def opened(tmp_path: Path, provider: ScriptedProvider, *args: str) -> App:
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [TOOLBOX, *args],
        "read": [str(SERVERS)],
    }
    write_config(tmp_path / "config", provider.port, config_yml(server=server))
    return await open_app(tmp_path / "config", provider)


async def witnessed(
    app: App, provider: ScriptedProvider, calls: list[tuple[str, Any]]
) -> list[ToolOutcome]:
    """Start the hostile calls, then ask for the witness's verdict; both must come back."""
    invoker = app.runtime.served.invoker(frozenset(MEMBER))
    started = asyncio.Event()

    async def hostile(name: str, arguments: Any) -> ToolOutcome:
        started.set()
        context = CallContext("t-hostile", name, "uuid-steve", "Steve")
        return await invoker.invoke(name, json.dumps(arguments), context)

    tasks = [asyncio.create_task(hostile(name, arguments)) for name, arguments in calls]
    await started.wait()
    provider.answer("Hello, witness.")
    verdict = await app.chat("@ai hello", player=ALEX, granted=MEMBER)
    assert verdict.decision == "accept"
    await app.turn_done()
    async with asyncio.timeout(WAIT):
        return list(await asyncio.gather(*tasks))


async def test_a_hostile_schema_holds_no_other_player(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    with url_that_never_answers() as url:
        app = await opened(tmp_path, provider, "--schema-url", url)
        try:
            await wait_for_tool(app, "mcp__wiki__pattern_bomb")
            bomb, remote = await witnessed(
                app,
                provider,
                [
                    ("mcp__wiki__pattern_bomb", {"x": "a" * 64 + "!"}),
                    ("mcp__wiki__remote_ref", {"x": "a"}),
                ],
            )
            assert bomb.error_code == "invalid_arguments"
            assert remote.error_code == "unknown_tool"  # refused at listing
        finally:
            await app.runtime.aclose()


async def test_a_32_mib_answer_holds_no_other_player_nor_the_servers_next_call(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        await wait_for_tool(app, "mcp__wiki__big")
        [big] = await witnessed(app, provider, [("mcp__wiki__big", {"megabytes": 32})])
        assert big.error_code == "result_too_large"
        [echo] = await witnessed(app, provider, [("mcp__wiki__echo", {"text": "next"})])
        assert echo.ok and "next" in echo.result["text"]
        assert app.runtime.mcp.connections["wiki"].starts == 1
    finally:
        await app.runtime.aclose()
