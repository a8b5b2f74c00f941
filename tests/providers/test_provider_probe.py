"""Provider probes against real loopback servers: one that answers, one that refuses, one that
hangs, one that sends garbage, one that refuses the key, and none configured; the minute's
cache; `/mineclaw status` and the console's page words (tests/app, tests/console)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from bridge.app.serving.provider_probes import PROBE_CACHE_S, ProviderProbes
from bridge.playground.scripted_model import ScriptedModelServer
from bridge.providers.probe import probe
from bridge.providers.settings import ProviderSettings

from .provider_support import make_settings

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
LISTING = b'{"object":"list","data":[{"id":"tiny"}]}'


class Loopback:
    """A real HTTP/1.1 server on 127.0.0.1 that answers every request with ``reply`` (None:
    reads the request and never answers)."""

    def __init__(self, status: int = 200, body: bytes = LISTING) -> None:
        self.status, self.body = status, body
        self.hang = False
        self.heads: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._release = asyncio.Event()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.heads.append((await reader.readuntil(b"\r\n\r\n")).decode("latin-1"))
            if self.hang:
                await self._release.wait()
                return
            head = f"HTTP/1.1 {self.status} X\r\ncontent-length: {len(self.body)}\r\n\r\n"
            writer.write(head.encode() + self.body)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> Loopback:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def answering() -> AsyncIterator[Loopback]:
    async with Loopback() as server:
        yield server


def settings_for(base_url: str, **kwargs: object) -> ProviderSettings:
    return make_settings("openai_chat_completions", base_url, **kwargs)


def refused_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_a_server_that_lists_its_models_is_reachable(answering: Loopback) -> None:
    assert await probe(settings_for(answering.base_url)) == "reachable"
    head = answering.heads[0]
    assert head.startswith("GET /v1/models ")
    assert "authorization: Bearer sk-test-secret-key" in head.lower().replace("bearer", "Bearer")


async def test_a_refused_connection_is_unreachable_and_says_so() -> None:
    assert await probe(settings_for(refused_url())) == "unreachable: connection refused"


async def test_a_server_that_never_answers_is_unreachable_within_the_deadline() -> None:
    async with Loopback() as server:
        server.hang = True
        word = await probe(settings_for(server.base_url), timeout_s=0.5)
    assert word == "unreachable: no answer within 0.5 s"
    assert server.heads  # it was asked, and held the probe as long as it could


@pytest.mark.parametrize(
    "body", [b"<html>It works!</html>", b'{"models": []}', b"\xff\xfe garbage", b""]
)
async def test_garbage_is_not_a_model_list(body: bytes) -> None:
    async with Loopback(body=body) as server:
        word = await probe(settings_for(server.base_url))
    assert word == "unreachable: the answer to GET /models is not a model list"


async def test_a_long_answer_is_read_up_to_the_cap_only() -> None:
    async with Loopback(body=b"<" * 5000) as garbage, Loopback(body=LISTING * 200) as long:
        assert (await probe(settings_for(garbage.base_url), max_bytes=1000)).startswith(
            "unreachable: the answer"
        )
        # A listing past the cap (OpenRouter's runs to megabytes) opened as JSON does.
        assert await probe(settings_for(long.base_url), max_bytes=1000) == "reachable"


@pytest.mark.parametrize(
    ("status", "word"),
    [
        (401, "unreachable: HTTP 401 (the key was refused)"),
        (404, "unreachable: HTTP 404 to GET /models"),
        (503, "unreachable: HTTP 503 to GET /models"),
    ],
)
async def test_an_error_status_is_named_and_the_url_and_key_are_not(status: int, word: str) -> None:
    async with Loopback(status=status, body=b'{"error": "sk-test-secret-key"}') as server:
        got = await probe(settings_for(server.base_url))
    assert got == word and "127.0.0.1" not in got and "sk-test" not in got


async def test_none_configured_is_said_and_nothing_is_asked() -> None:
    probes = ProviderProbes()
    states = await probes.states({}, {"openai": "OPENAI_API_KEY is not set"})
    assert states == [("openai", "not configured (OPENAI_API_KEY is not set)")]
    assert await probes.states({}, {}) == []


async def test_the_probes_run_together_and_each_is_kept_a_minute(answering: Loopback) -> None:
    now = [1000.0]
    probes = ProviderProbes(clock=lambda: now[0])
    configured = {
        "local": settings_for(answering.base_url, provider_id="local"),
        "down": settings_for(refused_url(), provider_id="down"),
    }
    missing = {"cloud": "CLOUD_KEY is not set"}
    expected = [
        ("cloud", "not configured (CLOUD_KEY is not set)"),
        ("down", "unreachable: connection refused"),
        ("local", "reachable"),
    ]
    assert await probes.states(configured, missing) == expected
    now[0] += PROBE_CACHE_S - 1
    assert await probes.states(configured, missing) == expected
    assert len(answering.heads) == 1  # the minute's word, not a second knock
    now[0] += 1
    await probes.states(configured, missing)
    assert len(answering.heads) == 2
    # A reload that changes the provider's settings is probed again at once.
    configured["local"] = settings_for(answering.base_url, provider_id="local", read_s=5.0)
    await probes.states(configured, missing)
    assert len(answering.heads) == 3


async def test_the_playgrounds_scripted_model_is_reachable() -> None:
    """`make try`'s status page and `/mineclaw status` must not call its model unreachable."""
    model = ScriptedModelServer()
    await model.start()
    try:
        assert await probe(settings_for(model.base_url)) == "reachable"
    finally:
        await model.close()
