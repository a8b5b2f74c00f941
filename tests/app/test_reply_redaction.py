"""What the model says is redacted whole before it is cut or shown: the broadcast reply (even
when the reply cap falls inside a secret), each action-bar frame while the secret is still
arriving, the archived turn and the audit log."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from bridge.app.wiring.runtime import Runtime

from .conftest import App, open_app, write_config
from .scripted_provider import text_chunks

RCON = "Zq8Wm3Xv7Lt2Pn4K"
KEY = "sk-proj-" + "Rt5Yu7Io9Pa2Sd4Fg6Hj8Kl1Zx3"
CAP = 36


def fragments(secret: str, size: int = 4) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def leaks(text: str) -> set[str]:
    return {piece for secret in (RCON, KEY) for piece in fragments(secret) if piece in text}


def answering(*parts: str) -> httpx.MockTransport:
    """The model's answer in process: what is tested is redaction, not the wire."""
    body = b"".join(text_chunks(*parts))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx.MockTransport(handler)


async def test_a_reply_holding_secrets_is_redacted_everywhere_it_goes(tmp_path: Path) -> None:
    config = tmp_path / "config"
    lead = "Sure. The rcon password is "
    # The cap falls inside the password; the stream splits it across deltas.
    assert len(lead) < CAP - 1 < len(lead) + len(RCON)
    transport = answering(lead + RCON[:5], RCON[5:] + " and the key is " + KEY[:12], KEY[12:] + ".")
    write_config(
        config,
        9,  # never dialled: the transport answers
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
        f"chat:\n  reply_max_chars: {CAP}\n",
    )
    (config / ".env").write_text(f"RCON_PASSWORD={RCON}\n")
    app: App = await open_app(config, None, transport=transport)
    runtime: Runtime = app.runtime
    try:
        verdict = await app.chat("@ai what is the rcon password?")
        assert verdict.decision == "accept"
        await app.turn_done()
        reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
        shown = reply.text.model["message"]
        assert not leaks(shown), shown
        assert shown.startswith(lead + "[redact")
        bars = [bar.text.values["text"] for bar in app.link.of("output.actionbar")]
        assert bars and not any(leaks(bar) for bar in bars), bars
        [turn] = runtime.archive.all_turns()
        archived = json.dumps([item for item in turn.items])
        assert not leaks(archived) and "[redacted: configured secret]" in archived
        runtime.audit.flush()
        assert not leaks(json.dumps([e.fields for e in runtime.audit.events()]))
    finally:
        await runtime.aclose()
