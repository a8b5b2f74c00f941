"""The runtime: provider clients across reloads, message lines, tool handlers bound late."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bridge.app.serving.texts import MAX_VALUE_CHARS, template_of, text_for
from bridge.app.wiring.log_level import BRIDGE_LOGGER
from bridge.app.wiring.runtime import Runtime
from bridge.control.messages_file import PLACEHOLDERS
from bridge.tools.registry import CallContext

from .conftest import NO_COOLDOWNS, STEVE, App, hello, providers_yml, write_config
from .scripted_provider import ScriptedProvider


def client_of(app: App) -> object:
    return app.runtime.snapshot(()).stream.func.__self__  # type: ignore[attr-defined]


async def test_a_reload_keeps_the_client_unless_the_provider_changed(app: App) -> None:
    first = client_of(app)
    await app.command("reload")
    assert client_of(app) is first
    (app.config / "providers.yml").write_text(
        providers_yml(app.provider.port, key="sk-another-secret")
    )
    assert "version 3" in (await app.command("reload"))[0]
    replaced = client_of(app)
    assert replaced is not first
    app.provider.answer("With the new key.")
    await app.chat("@ai hi")
    await app.turn_done()
    assert app.provider.requests[-1].headers["authorization"] == "Bearer sk-another-secret"
    closing = list(app.runtime._closing)  # retired once no turn could use it
    await asyncio.wait_for(asyncio.gather(*closing), 20)
    assert first._http.is_closed  # type: ignore[attr-defined]


async def test_the_client_never_retries_on_its_own(app: App) -> None:
    assert client_of(app).settings.retry.max_attempts == 1  # type: ignore[attr-defined]
    assert app.runtime.snapshot(()).limits.model_attempts == 3


async def test_every_declared_message_key_resolves_and_values_are_bounded(app: App) -> None:
    messages = app.runtime.plane.messages
    for key in PLACEHOLDERS:
        assert template_of(messages, key)
    with pytest.raises(KeyError):
        template_of(messages, "commands.nope")
    with pytest.raises(KeyError):
        template_of(messages, "schema_")
    text = text_for(messages, "commands.line", {"line": "x" * 20_000}, model={"m": "y" * 9000})
    assert text.values == {"line": "x" * MAX_VALUE_CHARS}
    assert text.model == {"m": "y" * MAX_VALUE_CHARS}


async def test_tool_handlers_added_later_reach_the_next_snapshot(app: App) -> None:
    async def online(arguments: dict[str, object], context: object) -> object:
        return {"players": []}

    before = {spec.name for spec in app.runtime.snapshot(["mineclaw.command.chat"]).tools}
    app.runtime.add_tool_handlers({"online_players": online})
    after = {spec.name for spec in app.runtime.snapshot(["mineclaw.command.chat"]).tools}
    catalogue = {e.name: e for e in app.runtime.served.registry.catalogue}
    bound = [name for name, e in catalogue.items() if e.handler == "online_players"]
    assert bound and catalogue[bound[0]].status == "available"
    assert after >= before


async def test_tools_the_connected_plugin_cannot_serve_are_not_shown(app: App) -> None:
    granted = ["mineclaw.command.chat", "mineclaw.tool.run_command"]

    def names() -> set[str]:
        return {spec.name for spec in app.runtime.snapshot(granted).tools}

    without = names()  # the fixture's plugin announced no features
    assert "player_snapshot" not in without and "block_inspect" not in without
    assert {"run_command", "online_players", "read"} <= without  # the link alone serves these

    await app.handler.on_connected(app.link, hello(features=("snapshots", "approvals")))
    assert {"player_snapshot", "item_inspect", "block_inspect"} <= names()

    await app.handler.on_disconnected()
    offline = names()
    assert not offline & {"player_snapshot", "run_command", "online_players"}
    assert "read" in offline  # workspace tools need no server


async def test_a_snapshot_is_built_once_per_plane_model_permissions_and_plugin(app: App) -> None:
    chat = ["mineclaw.command.chat"]
    first = app.runtime.snapshot(chat)
    assert app.runtime.snapshot(list(reversed(chat))) is first  # same facts, same snapshot
    assert app.runtime.snapshot(None) is not first
    assert app.runtime.snapshot(None).tools == ()

    await app.command("model", "local/m2")
    switched = app.runtime.snapshot(chat)
    assert switched is not first and switched.model_ref == "local/m2"

    await app.command("reload")
    reloaded = app.runtime.snapshot(chat)
    assert reloaded is not switched
    assert reloaded.control_version != switched.control_version

    await app.handler.on_connected(app.link, hello(features=("snapshots", "approvals")))
    linked = app.runtime.snapshot(chat)
    assert linked is not reloaded
    assert "player_snapshot" in {spec.name for spec in linked.tools}


async def test_a_reload_changes_the_tool_cooldown_at_once(app: App) -> None:
    """``environment.tool_cooldown_ms`` was read once when the runtime was built: after a
    reload setting it to 0, a second call within 500 ms was still refused."""
    context = CallContext(turn_id="t", call_id="c", player_uuid=STEVE.uuid, player_name="Steve")

    async def list_twice() -> list[str | None]:
        runner = app.runtime.snapshot(["mineclaw.command.chat"]).tool_runner
        assert runner is not None
        outcomes = [await runner.invoke("list", "{}", context) for _ in range(2)]
        return [o.message if o.error_code == "cooldown" else None for o in outcomes]

    assert "ms" in str((await list_twice())[1])  # refused under the default 500 ms
    (app.config / "config.yml").write_text(NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 0\n")
    assert "version 2" in (await app.command("reload"))[0]
    assert await list_twice() == [None, None]
    raised = NO_COOLDOWNS + "environment:\n  tool_cooldown_ms: 600000\n"
    (app.config / "config.yml").write_text(raised)
    assert "version 3" in (await app.command("reload"))[0]
    waits = [int(m.rsplit(" ", 2)[-2]) for m in await list_twice() if m is not None]
    assert len(waits) == 2 and min(waits) > 500_000  # counted from the last call, 600 s


async def test_logging_level_is_applied_at_open_and_again_on_reload(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    """``logging.level`` was never read; a runtime that manages logging applies it at open and
    on every reload (what ``serve`` does)."""
    config = tmp_path / "config"
    write_config(config, provider.port, NO_COOLDOWNS + "logging:\n  level: ERROR\n")
    bridge_logger = logging.getLogger(BRIDGE_LOGGER)
    seen: list[str] = []
    catcher = logging.Handler()
    catcher.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    bridge_logger.addHandler(catcher)
    runtime = Runtime.open(config, environ={}, manage_logging=True)
    try:
        some_module = logging.getLogger("bridge.app.chat.chat")
        some_module.warning("hidden at ERROR")
        (config / "config.yml").write_text(NO_COOLDOWNS + "logging:\n  level: DEBUG\n")
        runtime.reload()
        some_module.debug("shown at DEBUG")
        (config / "config.yml").write_text(NO_COOLDOWNS + "logging:\n  level: WARNING\n")
        runtime.reload()
        some_module.info("hidden at WARNING")
        some_module.warning("shown at WARNING")
    finally:
        bridge_logger.removeHandler(catcher)
        bridge_logger.setLevel(logging.NOTSET)
        await runtime.aclose()
    assert [line for line in seen if line.startswith(("hidden", "shown"))] == [
        "shown at DEBUG",
        "shown at WARNING",
    ]
