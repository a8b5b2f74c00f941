"""A minimal local OpenAI-compatible Chat Completions server for the application benchmarks.

Every POST gets a streamed answer of ``chunks`` text deltas ``delay_s`` apart (0: at once),
then ``finish_reason: stop`` and ``[DONE]``; ``on_first_delta`` is told, once a stream is
written, when its first delta was (``time.perf_counter``). With ``hold_open`` the body is never
ended after ``[DONE]`` (as some servers and proxies do) and ``done_at`` records when each
``[DONE]`` was written. ``head_start_s`` is the pause between the response's headers and its
first delta (0: none). Binds 127.0.0.1 only; a stream ends early when the client goes away or
the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Callable

FINAL = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})


def _chunk(data: str) -> bytes:
    payload = f"data: {data}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(payload), payload)


class LocalProvider:
    """``async with LocalProvider(chunks=..., delay_s=...) as provider: provider.base_url``."""

    def __init__(
        self,
        *,
        chunks: int = 8,
        delay_s: float = 0.0,
        text: str = "word ",
        hold_open: bool = False,
        on_first_delta: Callable[[float], None] | None = None,
        head_start_s: float = 0.0,
    ) -> None:
        self.chunks = chunks
        self.head_start_s = head_start_s
        self.on_first_delta = on_first_delta
        self.delay_s = delay_s
        self.text = text
        self.hold_open = hold_open
        self.done_at: list[float] = []
        self.requests = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> LocalProvider:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        # A stream paused between deltas would otherwise be cancelled by asyncio.run's shutdown,
        # and asyncio's stream callback then prints that cancellation as an error.
        for handler in list(self._handlers):
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await asyncio.wait_for(self._server.wait_closed(), 10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        self._writers.add(writer)
        delta = json.dumps(
            {"choices": [{"index": 0, "delta": {"content": self.text}, "finish_reason": None}]}
        )
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                self.requests += 1
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                )
                if self.head_start_s:
                    # A model server answers with its headers at once and its first token after
                    # the prompt is read: the client has taken the response in by then.
                    await writer.drain()
                    await asyncio.sleep(self.head_start_s)
                first_delta_at = None
                for index in range(self.chunks):
                    if index == 0:
                        first_delta_at = time.perf_counter()
                    writer.write(_chunk(delta))
                    if self.delay_s:
                        await writer.drain()
                        await asyncio.sleep(self.delay_s)
                if self.hold_open:
                    await self._done_held_open(reader, writer)
                    return
                writer.write(_chunk(FINAL) + _chunk("[DONE]") + b"0\r\n\r\n")
                await writer.drain()
                # Told once the stream is written, not while the client is reading it.
                if self.on_first_delta is not None and first_delta_at is not None:
                    self.on_first_delta(first_delta_at)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # only __aexit__ cancels a handler: the server is stopping
        finally:
            self._handlers.discard(handler)
            self._writers.discard(writer)
            with contextlib.suppress(ConnectionError):
                writer.close()

    async def _done_held_open(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(_chunk(FINAL))
        await writer.drain()
        # Let the client read everything before [DONE], so a timing from done_at is [DONE] alone.
        await asyncio.sleep(0.002)
        self.done_at.append(time.perf_counter())
        writer.write(_chunk("[DONE]"))
        await writer.drain()
        await reader.read()  # no last chunk: the body stays open until the client goes away


def providers_yml(base_url: str) -> str:
    """A ``providers.yml`` with one model, ``local/bench``, on ``base_url``."""
    return (
        "schema: 1\ndefault: local/bench\nproviders:\n  local:\n    api:\n"
        "      type: openai_chat_completions\n"
        f"      base_url: {base_url}\n"
        "    api_key: sk-bench-key\n"
        "models:\n  local/bench:\n    limits:\n      context_window: 1000000\n"
        "      max_output_tokens: 1000\n"
    )


BENCH_CONFIG = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"


async def _serve_until_stdin_closes(
    chunks: int, delay_s: float, text: str, stamps: bool = False, head_start_s: float = 0.0
) -> None:
    def stamp(at: float) -> None:  # perf_counter is the machine's monotonic clock on Linux
        print(f"first-delta {at!r}", flush=True)

    on_first = stamp if stamps else None
    async with LocalProvider(
        chunks=chunks,
        delay_s=delay_s,
        text=text,
        on_first_delta=on_first,
        head_start_s=head_start_s,
    ) as provider:
        print(provider.port, flush=True)
        # The parent ends this process by closing its stdin: no stray server outlives a bench.
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


@contextlib.asynccontextmanager
async def provider_process(
    *, chunks: int = 8, delay_s: float = 0.0, text: str = "word "
) -> AsyncIterator[str]:
    """A ``LocalProvider`` in its own process (a real provider is not in the bridge's process
    either, and its CPU must not count against the bridge); yields its base URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.local_provider", str(chunks), str(delay_s), text,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        port = int(await asyncio.wait_for(process.stdout.readline(), 60))
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await stop_provider(process)


async def stop_provider(process: asyncio.subprocess.Process) -> None:
    """Ends a provider process the way it expects (its stdin closed), killing it if it does
    not exit in 30 s."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 30)
    except TimeoutError:
        process.kill()
        await process.wait()


if __name__ == "__main__":
    asyncio.run(
        _serve_until_stdin_closes(
            int(sys.argv[1]),
            float(sys.argv[2]),
            sys.argv[3],
            sys.argv[4:5] == ["stamps"],
            float(sys.argv[5]) if len(sys.argv) > 5 else 0.0,
        )
    )
