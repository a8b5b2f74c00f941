"""Provider error texts are redacted whole, then clipped: a key echoed in a 401 body never
reaches a failure line in part, wherever the clip falls across it (real local HTTP server)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr

from bridge.control import init_config_dir, load_control_plane
from bridge.providers.client import ProviderClient
from bridge.providers.errors import MAX_MESSAGE_CHARS
from bridge.providers.events import Failed
from bridge.providers.items import PlayerMessage, ProviderRequest
from bridge.providers.settings import ModelSettings, ProviderSettings

from .provider_replay_server import ReplayServer, Reply
from .provider_support import make_settings

MODEL = ModelSettings(wire_model="test-model")
REQUEST = ProviderRequest(session_id="s-1", items=(PlayerMessage(player="Steve", text="hi"),))
PREFIX = "HTTP 401 invalid_api_key: "
# Shaped like no built-in rule: only their registration can redact them.
GATEWAY_TOKEN = "gw7Qz2Xc9Rt4Yb8Np3LkHs6Vd1"
API_KEY = "Kx9Qw2Zr7Lp4Mv8Nt3Bj6Hd5Fy"


def keyed(base_url: str) -> ProviderSettings:
    settings = make_settings("openai_chat_completions", base_url, max_attempts=1)
    return dataclasses.replace(settings, api_key=SecretStr(API_KEY))


def fragments(secret: str, size: int = 4) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def echo_bodies(secret: str, lead: str) -> list[tuple[int, bytes]]:
    """One 401 body per cut position: ``cut`` characters of ``secret`` (after ``lead``) fall
    before the clip, from none to all of them."""
    bodies = []
    for cut in range(len(secret) + 1):
        pad = MAX_MESSAGE_CHARS - 1 - len(PREFIX) - len(lead) - cut
        message = "x" * pad + lead + secret + " is not valid"
        body = json.dumps({"error": {"code": "invalid_api_key", "message": message}})
        bodies.append((cut, body.encode()))
    return bodies


async def failures(
    server: ReplayServer,
    settings: ProviderSettings,
    bodies: list[tuple[int, bytes]],
    redact: Callable[[str], str] | None = None,
) -> list[tuple[int, Failed]]:
    server.script(
        *(Reply(status=401, content_type="application/json", chunks=[b]) for _, b in bodies)
    )
    found = []
    async with ProviderClient(settings, redact=redact) as client:
        for cut, _ in bodies:
            events = [e async for e in client.stream(REQUEST, MODEL)]
            final = events[-1]
            assert isinstance(final, Failed)
            found.append((cut, final))
    return found


def assert_no_piece(secret: str, found: list[tuple[int, Failed]]) -> None:
    for cut, final in found:
        shown = [final.reason, str(final.error)]
        assert all(text.startswith(PREFIX) for text in shown), shown
        leaked = {piece for piece in fragments(secret) for text in shown if piece in text}
        assert not leaked, f"cut after {cut} characters of the secret: {leaked}"
        assert len(final.reason) <= MAX_MESSAGE_CHARS


@pytest.mark.parametrize("lead", ["Authorization: Bearer ", "key "])
async def test_an_echoed_api_key_is_never_clipped_into_view(
    replay_server: ReplayServer, lead: str
) -> None:
    settings = keyed(replay_server.base_url)
    key = API_KEY
    found = await asyncio.wait_for(
        failures(replay_server, settings, echo_bodies(key, lead)), timeout=60
    )
    assert_no_piece(key, found)


async def test_the_bare_token_of_a_header_template_is_redacted_before_the_clip(
    replay_server: ReplayServer, tmp_path: Path
) -> None:
    init_config_dir(tmp_path)
    providers = tmp_path / "providers.yml"
    template = '    extra_headers:\n      X-Gateway-Auth: "Bearer ${GATEWAY_TOKEN}"\n'
    providers.write_text(providers.read_text().replace("    # extra_headers:\n", template))
    plane = load_control_plane(tmp_path, environ={"GATEWAY_TOKEN": GATEWAY_TOKEN})
    assert plane.providers.providers["openai"].extra_headers == {
        "X-Gateway-Auth": f"Bearer {GATEWAY_TOKEN}"
    }
    assert GATEWAY_TOKEN not in plane.redact(f"token {GATEWAY_TOKEN} was refused")

    settings = make_settings(
        "openai_chat_completions",
        replay_server.base_url,
        max_attempts=1,
        extra_headers={"X-Gateway-Auth": f"Bearer {GATEWAY_TOKEN}"},
    )
    bodies = echo_bodies(GATEWAY_TOKEN, "gateway refused token ")
    found = await asyncio.wait_for(
        failures(replay_server, settings, bodies, redact=plane.redact), timeout=60
    )
    assert_no_piece(GATEWAY_TOKEN, found)


async def test_an_in_stream_error_is_redacted_before_the_clip(replay_server: ReplayServer) -> None:
    settings = keyed(replay_server.base_url)
    key = API_KEY
    replies = []
    for _, body in echo_bodies(key, "Bearer "):
        replies.append(Reply(chunks=[b"event: error\ndata: " + body + b"\n\n"]))
    replay_server.script(*replies)
    found = []
    async with ProviderClient(settings) as client:
        for cut in range(len(replies)):
            events = [e async for e in client.stream(REQUEST, MODEL)]
            final = events[-1]
            assert isinstance(final, Failed)
            found.append((cut, final))
    for cut, final in found:
        leaked = {piece for piece in fragments(key) if piece in final.reason}
        assert not leaked, f"cut after {cut}: {leaked}"


async def test_provider_test_never_prints_a_piece_of_an_echoed_header_token(
    replay_server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bridge.cli import main

    from .test_provider_cli import write_config

    config = write_config(tmp_path / "cfg", replay_server.base_url, "openai_chat_completions")
    providers = config / "providers.yml"
    header = '    extra_headers:\n      X-Gateway-Auth: "Bearer ${GATEWAY_TOKEN}"\n'
    text = providers.read_text().replace("    retry:\n", header + "    retry:\n")
    providers.write_text(text)
    (config / ".env").write_text(f"GATEWAY_TOKEN={GATEWAY_TOKEN}\n")
    bodies = echo_bodies(GATEWAY_TOKEN, "gateway refused token ")
    replay_server.script(
        *(Reply(status=401, content_type="application/json", chunks=[b]) for _, b in bodies)
    )
    for cut, _ in bodies:
        argv = ["provider", "test", "--config", str(config), "hi"]
        code = await asyncio.wait_for(asyncio.to_thread(main, argv), timeout=60)
        out = capsys.readouterr().out
        assert code == 1 and "HTTP 401" in out, out
        assert not {p for p in fragments(GATEWAY_TOKEN) if p in out}, (cut, out)
