"""A turn that moves to the model's fallback, through the real runtime and two local HTTP
providers (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import NO_COOLDOWNS, STEVE, open_app, rendered
from .scripted_provider import Reply, ScriptedProvider

LIMITS = "    limits:\n      context_window: 100000\n      max_output_tokens: 1000\n"


def providers_yml(primary: int, backup: int) -> str:
    def provider(name: str, port: int) -> str:
        return (
            f"  {name}:\n    api:\n      type: openai_chat_completions\n"
            f"      base_url: http://127.0.0.1:{port}/v1\n"
            f"    api_key: sk-{name}-key\n"
            "    retry:\n      max_attempts: 2\n      initial_backoff_ms: 0\n"
            "      max_backoff_ms: 0\n"
        )

    return (
        "schema: 1\ndefault: main/m1\nproviders:\n"
        + provider("main", primary)
        + provider("spare", backup)
        + f"models:\n  main/m1:\n{LIMITS}    fallbacks: [spare/m2]\n  spare/m2:\n{LIMITS}"
    )


async def test_quota_at_the_first_provider_is_answered_by_the_fallback(tmp_path: Path) -> None:
    primary, backup = ScriptedProvider(), ScriptedProvider()
    await primary.start()
    await backup.start()
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(NO_COOLDOWNS)
    (config / "providers.yml").write_text(providers_yml(primary.port, backup.port))
    app = await open_app(config, primary)
    try:
        quota = {"error": {"code": "insufficient_quota", "message": "You exceeded your quota"}}
        primary.script(
            Reply(status=429, content_type="application/json", chunks=[json.dumps(quota).encode()])
        )
        backup.answer("Answered by ", "the spare.")
        await app.chat("@ai hello")
        await app.turn_done()
        reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
        assert "Answered by the spare." in rendered(reply.text)
        assert len(primary.requests) == 1 and len(backup.requests) == 1
        assert backup.requests[0].json()["model"] == "m2"
        (archived,) = app.runtime.archive.all_turns()
        assert archived.model_ref == "spare/m2"
        app.runtime.audit.flush()
        (fallback,) = app.runtime.audit.events("provider.fallback")
        assert fallback.fields["to"] == "spare/m2" and fallback.fields["class"] == "quota"
        assert not any(chat.player == STEVE.uuid for chat in app.link.of("output.chat"))
    finally:
        await app.runtime.aclose()
        await primary.stop()
        await backup.stop()
