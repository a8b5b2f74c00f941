"""The benchmarks' local provider, run as the benchmarks run it: its own process, real HTTP over
loopback, stopped by closing its stdin."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REQUEST = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"


async def _provider(chunks: int, delay_s: float) -> tuple[asyncio.subprocess.Process, int]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.local_provider", str(chunks), str(delay_s), "word ",
        cwd=REPO, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    port = int(await asyncio.wait_for(process.stdout.readline(), 60))
    return process, port


async def _stop(process: asyncio.subprocess.Process) -> bytes:
    assert process.stdin is not None and process.stderr is not None
    process.stdin.close()
    stderr = await asyncio.wait_for(process.stderr.read(), 60)
    assert await asyncio.wait_for(process.wait(), 60) == 0
    return stderr


async def _ask(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(REQUEST)
    await writer.drain()
    return reader, writer


async def test_stopping_mid_stream_is_quiet() -> None:
    process, port = await _provider(chunks=4, delay_s=30)
    try:
        reader, writer = await _ask(port)
        assert b"200 OK" in await reader.readuntil(b"\r\n\r\n")
        # The first delta has arrived; the server now waits 30 s before the next one.
        assert b"word" in await reader.readuntil(b"\n\n\r\n")
        stderr = await _stop(process)
        writer.close()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert stderr == b""


async def test_a_whole_stream_ends_with_done() -> None:
    process, port = await _provider(chunks=2, delay_s=0)
    try:
        reader, writer = await _ask(port)
        body = await reader.readuntil(b"0\r\n\r\n")
        writer.close()
        assert await _stop(process) == b""
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert body.count(b'"content": "word "') == 2
    assert b"data: [DONE]" in body
