"""The application in-process against the shared fake link and the scripted SSE server.

The link itself is not what these tests are about (the e2e tests run the real one); the
provider is real HTTP over loopback, so the client, the engine and the app are all real.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from support.fake_link import FakeLink, Responder, delivered

from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.runtime import Runtime
from bridge.control import init_config_dir
from bridge.link.messages import (
    ChatRequest,
    ChatVerdict,
    CommandReply,
    CommandRequest,
    CommandSender,
    Hello,
    Permission,
    PlayerRef,
    ProtocolVersion,
)
from tests.storage_choice import apply_chosen_storage

from .scripted_provider import ScriptedProvider

STEVE = PlayerRef(uuid="3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", name="Steve")
ALEX = PlayerRef(uuid="0b6a1c9e-1111-4c6a-9e2f-1a2b3c4d5e6f", name="Alex")
INSTANCE_A = "aaaaaaaa-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
INSTANCE_B = "bbbbbbbb-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
# Every /mineclaw command node; not the rate-limit bypass, so cooldown tests stay meaningful.
EVERY_NODE = [node for node in get_args(Permission) if node.startswith("mineclaw.command.")]
NO_COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
WAIT = 20.0


def providers_yml(port: int, *, max_attempts: int = 3, key: str = "sk-unit-secret-key") -> str:
    model = "    limits:\n      context_window: 100000\n      max_output_tokens: 1000\n"
    return (
        "schema: 1\ndefault: local/m1\nproviders:\n  local:\n    api:\n"
        "      type: openai_chat_completions\n"
        f"      base_url: http://127.0.0.1:{port}/v1\n"
        f"    api_key: {key}\n"
        f"    retry:\n      max_attempts: {max_attempts}\n"
        "      initial_backoff_ms: 0\n      max_backoff_ms: 0\n"
        f"models:\n  local/m1:\n{model}  local/m2:\n{model}"
    )


def hello(instance_id: str = INSTANCE_A, features: tuple[str, ...] = ()) -> Hello:
    return Hello(
        protocol=ProtocolVersion(major=1, minor=0),
        nonce="n" * 43,
        mac="0" * 64,
        instance_id=instance_id,
        plugin_version="0.1.0",
        minecraft_version="1.21.8",
        platform="testkit",
        features=list(features),
    )


def app_link(responders: Mapping[str, Responder] | None = None) -> FakeLink:
    """The shared fake link as a plugin that shows every line (``delivered``)."""
    return FakeLink(responders, default=delivered)


@dataclass
class App:
    runtime: Runtime
    handler: AppHandler
    link: FakeLink
    server: ScriptedProvider | None
    """None when the model is answered in process (``open_app(..., transport=...)``)."""
    config: Path

    @property
    def provider(self) -> ScriptedProvider:
        assert self.server is not None, "this app answers the model through a transport"
        return self.server

    async def chat(
        self, text: str, player: PlayerRef = STEVE, granted: list[str] | None = None
    ) -> ChatVerdict:
        request = ChatRequest(
            player=player,
            granted=EVERY_NODE if granted is None else granted,  # type: ignore[arg-type]
            text=text,
        )
        return await self.handler.on_chat(request)

    async def command(
        self, *args: str, player: PlayerRef | None = STEVE, granted: list[str] | None = None
    ) -> list[str]:
        fields: dict[str, Any] = {"granted": EVERY_NODE if granted is None else granted}
        if player is None:
            sender = CommandSender.model_validate({"kind": "console", **fields})
        else:
            sender = CommandSender.model_validate({"kind": "player", "player": player, **fields})
        reply: CommandReply = await self.handler.on_command(
            CommandRequest(sender=sender, args=list(args))
        )
        return [rendered(line) for line in reply.lines]

    async def turn_done(self) -> None:
        task = self.runtime.turn
        assert task is not None
        await asyncio.wait_for(asyncio.shield(task), WAIT)


def rendered(text: Any) -> str:
    """A Text with its placeholders filled (tags left in), for assertions."""
    out: str = text.template
    for name, value in {**(text.values or {}), **(text.model or {})}.items():
        out = out.replace(f"<{name}>", value)
    return out


def write_config(
    config: Path, provider_port: int, config_yml: str = NO_COOLDOWNS, **kw: Any
) -> None:
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yml").write_text(config_yml)
    (config / "providers.yml").write_text(providers_yml(provider_port, **kw))


@pytest.fixture
async def provider() -> AsyncIterator[ScriptedProvider]:
    server = ScriptedProvider()
    await server.start()
    yield server
    await server.stop()


async def open_app(
    config: Path,
    provider: ScriptedProvider | None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> App:
    """``transport``: the provider clients' httpx transport, for tests not about the wire."""
    init_config_dir(config)
    apply_chosen_storage(config)
    runtime = Runtime.open(config, environ={}, transport=transport)
    handler = AppHandler(runtime)
    link = app_link()
    await handler.on_connected(link, hello())
    return App(runtime, handler, link, provider, config)


@pytest.fixture
async def app(tmp_path: Path, provider: ScriptedProvider) -> AsyncIterator[App]:
    config = tmp_path / "config"
    write_config(config, provider.port)
    opened = await open_app(config, provider)
    yield opened
    await opened.runtime.aclose()
