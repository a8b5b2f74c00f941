"""The console in a process of its own: started by the bridge, started again when it dies,
stopped with the bridge, and reaching the bridge only through its channel, which takes the
token first and bounds every line."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import httpx

from bridge.console.channel import MAX_FRAME, Hello, StatusAction, VersionAction, encode
from tests.app.serve_process import start_serve
from tests.console.support import console_folder, served_console


async def _opened(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, limit=2 * MAX_FRAME)


async def test_the_channel_takes_nothing_before_the_token(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        port = console.server.channel_port
        reader, writer = await _opened(port)
        writer.write(encode(Hello(token="x" * 43)) + encode(VersionAction()))
        assert await reader.read() == b""  # closed, nothing answered
        writer.close()
        reader, writer = await _opened(port)
        writer.write(encode(VersionAction()))  # an action in the token's place
        assert await reader.read() == b""
        writer.close()


async def test_the_channel_bounds_and_checks_every_line(tmp_path: Path) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        token = console.server._actions.token
        reader, writer = await _opened(console.server.channel_port)
        writer.write(encode(Hello(token=token)))
        writer.write(b'{"action": "drop_tables"}\n')
        refused = await reader.readline()
        assert b'"ok":false' in refused and b'"refused"' in refused
        writer.write(b'{"action": "review", "name": "' + b"a" * 65 + b'", "reviewer": "x"}\n')
        long_name = await reader.readline()
        assert b'"refused"' in long_name and b"name" in long_name
        writer.write(encode(StatusAction()))
        status = await reader.readline()
        assert b'"ok":true' in status and b"running_turns" in status
        writer.write(b"x" * (MAX_FRAME + 10))  # no end of line within the bound
        assert await reader.read() == b""
        writer.close()


async def test_a_console_that_dies_is_started_again_and_stops_with_the_bridge(
    tmp_path: Path,
) -> None:
    async with served_console(console_folder(tmp_path)) as console:
        process = console.server
        first = process.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        await process.restarted.wait()
        assert process.pid not in (None, first) and process.starts == 2
        async with httpx.AsyncClient(base_url=console.url) as client:
            assert (await client.get("/functions")).status_code == 401  # serving again
        second = process.pid
    assert second is not None
    try:
        os.kill(second, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError(f"the console process {second} outlived the bridge")


def _console_on(folder: Path, port: int) -> Path:
    console_folder(folder)
    config = folder / "config.yml"
    text = config.read_text(encoding="utf-8").replace("port: 25590", f"port: {port}")
    config.write_text(text, encoding="utf-8")
    return folder


async def test_serve_starts_the_console_process_and_stops_it(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await start_serve(_console_on(tmp_path / "config", port))
    try:
        assert process.stdout is not None
        while b"console on" not in (line := await process.stdout.readline()):
            assert line, await process.stderr.read() if process.stderr else b""
        assert f"http://127.0.0.1:{port}".encode() in line
        async with httpx.AsyncClient() as client:  # served by the child, not by serve
            assert (await client.get(f"http://127.0.0.1:{port}/functions")).status_code == 401
    finally:
        process.send_signal(signal.SIGTERM)
        stdout, _ = await process.communicate()
    assert b"stopped" in stdout
    with socket.socket() as after:  # the child went with it: nothing serves the port
        assert after.connect_ex(("127.0.0.1", port)) != 0


async def test_serve_says_why_the_console_could_not_start(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await start_serve(_console_on(tmp_path / "config", port))
        stdout, stderr = await process.communicate()
    assert process.returncode == 1, (stdout, stderr)
    assert b"listening on" not in stdout
    assert b"config.yml: console:" in stderr and str(port).encode() in stderr
