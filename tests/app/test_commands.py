"""``/mineclaw`` subcommands: permission nodes, replies from message.yml, their effects."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.app.serving.restart_settings import (
    SERVING_FILE,
    restart_only_fields,
    running_differences,
    write_serving_state,
)
from bridge.link.messages import CommandRequest, Text
from tests.storage_choice import kept_storage

from .conftest import (
    ALEX,
    EVERY_NODE,
    NO_COOLDOWNS,
    STEVE,
    App,
    ScriptedProvider,
    open_app,
    rendered,
    write_config,
)

NODES = {
    ("listen", "on"): "mineclaw.command.listen",
    ("reload",): "mineclaw.command.reload",
    ("compact",): "mineclaw.command.compact",
    ("clear",): "mineclaw.command.clear",
    ("stop",): "mineclaw.command.stop",
    ("model",): "mineclaw.command.model",
    ("tools", "validate"): "mineclaw.command.tools",
    ("functions", "validate"): "mineclaw.command.functions",
    ("approve", "x1"): "mineclaw.command.approve",
    ("deny", "x1"): "mineclaw.command.approve",
}


@pytest.mark.parametrize(("args", "node"), list(NODES.items()))
async def test_each_subcommand_needs_its_node(app: App, args: tuple[str, ...], node: str) -> None:
    others = [n for n in NODES.values() if n != node]
    lines = await app.command(*args, granted=sorted(set(others)))
    assert lines == [f"<red>You may not use /mineclaw {args[0]}."]
    assert not app.runtime.listen.on and app.runtime.model_override is None


async def test_unknown_and_malformed_subcommands_get_their_usage(app: App) -> None:
    assert "Usage: /mineclaw" in (await app.command("frobnicate"))[0]
    assert "listen on|off|status" in (await app.command("listen", "maybe"))[0]
    assert "model [list|default|provider/model]" in (await app.command("model", "a/b", "c/d"))[0]
    assert "tools validate" in (await app.command("tools"))[0]


async def test_status_is_open_to_everyone_and_the_console(app: App) -> None:
    lines = await app.command("status", player=None, granted=[])
    joined = " | ".join(lines)
    assert "link: up" in joined and "model: local/m1" in joined and "listen: off" in joined
    assert "0 turns" in joined
    assert "web tools: off" in joined
    assert "audit log: 0 events dropped, 0 lost since start" in joined
    assert "Function sandbox: workers not started yet" in joined
    # Probed, not merely configured: the scripted provider answers GET /models.
    assert "provider local: reachable" in joined and "usable" not in joined
    assert len(app.provider.probes) == 1 and not app.provider.requests


async def test_status_says_a_provider_whose_server_is_down_is_unreachable(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        write_config(config, sock.getsockname()[1])
    app = await open_app(config, None)
    try:
        joined = " | ".join(await app.command("status", player=None, granted=[]))
    finally:
        await app.runtime.aclose()
    assert "provider local: unreachable: connection refused" in joined


async def test_status_says_which_web_tools_are_on_after_a_reload(app: App) -> None:
    (app.config / "config.yml").write_text(
        "schema: 1\nweb:\n  enabled: true\n  search:\n    backend: searxng\n"
        "    url: http://127.0.0.1:9/\n"
    )
    assert "version 2" in (await app.command("reload"))[0]
    joined = " | ".join(await app.command("status", player=None, granted=[]))
    assert "web tools: on (web_fetch, web_search)" in joined
    (app.config / "config.yml").write_text("schema: 1\nweb:\n  enabled: true\n")
    await app.command("reload")
    joined = " | ".join(await app.command("status", player=None, granted=[]))
    assert "web tools: on (web_fetch)" in joined


async def test_listen_on_announces_once_and_sends_the_link_state(app: App) -> None:
    await app.command("listen", "on")
    await app.command("listen", "on")
    announcements = [c for c in app.link.of("output.chat") if c.target == "broadcast"]
    assert len(announcements) == 1
    assert [s.forward for s in app.link.of("link.state")][-1] == "all"
    await app.command("listen", "off")
    assert "stopped listening" in rendered(app.link.of("output.chat")[-1].text)
    assert app.link.of("link.state")[-1].forward == "prefixed"


async def test_model_shows_switches_and_refuses_unknown_models(app: App) -> None:
    assert "local/m1" in (await app.command("model"))[0]
    assert "not configured" in (await app.command("model", "local/nope"))[0]
    assert "not of the form" in (await app.command("model", "nothing"))[0]
    assert app.runtime.model_override is None
    assert "local/m2" in (await app.command("model", "local/m2"))[0]
    app.provider.answer("From m2.")
    await app.chat("@ai hi")
    await app.turn_done()
    assert app.provider.bodies()[0]["model"] == "m2"


async def test_a_failed_reload_keeps_the_old_plane_and_names_the_file(app: App) -> None:
    (app.config / "config.yml").write_text("schema: 1\nchat:\n  reply_max_chars: 3\n")
    line = (await app.command("reload"))[0]
    assert "Reload failed" in line and "config.yml" in line and "reply_max_chars" in line
    assert app.runtime.plane.version == 1


async def test_a_reload_into_a_wake_pattern_that_wakes_on_everything_is_refused(app: App) -> None:
    (app.config / "config.yml").write_text('schema: 1\nchat:\n  wake_pattern: "x*"\n')
    [line] = await app.command("reload")
    assert "Reload failed" in line and "wake_pattern" in line and "empty message" in line
    assert app.runtime.plane.version == 1
    app.provider.answer("Still waking on the prefix.")
    assert (await app.chat("@ai hello")).decision == "accept"
    assert (await app.chat("anything else")).decision == "pass"
    await app.turn_done()
    (app.config / "config.yml").write_text("schema: 1\nchat:\n  public_prefix: '!ask'\n")
    assert "version 2" in (await app.command("reload"))[0]
    assert app.link.of("link.state")[-1].public_prefix == "!ask"


async def test_a_plane_published_behind_the_runtime_is_not_served(app: App) -> None:
    """The runtime serves its own pair: a plane the store published without a served
    configuration (as if the file changed between a check and the publish) is never used."""
    (app.config / "config.yml").write_text('schema: 1\nchat:\n  public_prefix: "@bot"\n')
    app.runtime.store.reload()
    assert app.runtime.store.current.version == 2
    assert (app.runtime.plane.version, app.runtime.served.plane) == (1, app.runtime.plane)
    app.provider.answer("Still the prefix.")
    assert (await app.chat("@ai hello")).decision == "accept"
    await app.turn_done()
    assert (await app.chat("@bot anything else")).decision == "pass"
    assert app.handler.link_state().forward == "prefixed"


async def test_clear_starts_a_new_session_and_stop_without_a_turn_says_so(app: App) -> None:
    before = app.runtime.session.session_id
    assert "new session" in (await app.command("clear"))[0]
    assert app.runtime.session.session_id != before
    assert "No answer is running" in (await app.command("stop"))[0]


async def test_stop_by_another_player_tells_the_asker(app: App) -> None:
    held = app.provider.held("Never ", "shown")
    await app.chat("@ai long")
    await asyncio.wait_for(held.streaming.wait(), 20)
    assert "Stopped" in (await app.command("stop", player=None))[0]
    notice = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "player")
    assert notice.player == STEVE.uuid and "stopped" in rendered(notice.text)
    await app.turn_done()
    assert app.runtime.session.state.turns == () and app.runtime.archive.all_turns() == []


async def test_compact_with_too_little_history_reports_the_outcome_privately(app: App) -> None:
    assert "Compacting" in (await app.command("compact"))[0]
    result = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "player")
    assert "nothing to compact" in rendered(result.text)
    assert app.provider.requests == []


async def test_everyone_who_asked_for_a_shared_compaction_is_told_its_outcome(app: App) -> None:
    held = app.provider.held("slow ", "answer")
    await app.chat("@ai long")
    await asyncio.wait_for(held.streaming.wait(), 20)
    assert "queued" in (await app.command("compact", player=STEVE))[0]
    assert "queued" in (await app.command("compact", player=ALEX))[0]  # shares Steve's run
    assert "queued" in (await app.command("compact", player=ALEX))[0]  # told once, not twice
    held.release.set()
    await app.turn_done()

    def told(player: str) -> bool:
        return any(
            name == "output.chat" and data.target == "player" and data.player == player
            for name, data in app.link.sent
        )

    await app.link.wait_for(lambda n, d: told(STEVE.uuid) and told(ALEX.uuid))
    for _ in range(10):  # the notices are sent together; let any duplicate arrive too
        await asyncio.sleep(0)
    notices = [
        (data.player, rendered(data.text))
        for name, data in app.link.sent
        if name == "output.chat" and data.target == "player"
    ]
    assert sorted(player for player, _ in notices) == sorted([STEVE.uuid, ALEX.uuid])
    assert all("nothing to compact" in text for _, text in notices)


async def test_validate_commands_list_the_catalogues(app: App) -> None:
    tools = await app.command("tools", "validate")
    assert any("read [available]" in line for line in tools)
    functions = await app.command("functions", "validate")
    assert functions[-1].endswith("catalogue ok") or functions[-1].endswith("has problems")


async def test_approvals_go_to_the_hook_when_one_is_set(app: App) -> None:
    seen: list[list[str]] = []

    async def hook(request: CommandRequest) -> list[Text]:
        seen.append(list(request.args))
        return [Text(template="handled")]

    app.handler.commands.approval_handler = hook
    assert await app.command("deny", "a1") == ["handled"]
    assert seen == [["deny", "a1"]]
    app.handler.commands.approval_handler = None
    assert "not available yet" in (await app.command("approve", "a1"))[0]


async def test_a_reload_says_which_settings_wait_for_a_restart(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """``link.*`` is read only at start; a reload changing one said nothing, so the owner
    believed the new port was in force. ``functions.workers`` is applied by a reload (a new
    Function pool), so it is not reported."""
    caplog.set_level(logging.WARNING, logger="bridge.app.wiring.runtime")
    changed = "link:\n  port: 25999\n  max_frame_bytes: 2048\nfunctions:\n  workers: 3\n"
    kept = kept_storage(app.config)
    (app.config / "config.yml").write_text(NO_COOLDOWNS + changed + kept)
    lines = await app.command("reload")
    assert "version 2" in lines[0]
    notes = [line for line in lines[1:] if "when the bridge restarts" in line]
    assert len(notes) == 2, lines
    assert "link.port changed from 25580 to 25999" in notes[0]
    assert "link.max_frame_bytes changed from 65536 to 2048" in notes[1]
    assert not [line for line in lines if "functions.workers" in line]
    logged = [r.getMessage() for r in caplog.records if "when the bridge restarts" in r.message]
    assert len(logged) == 2 and all(log in note for log, note in zip(logged, notes, strict=True))
    # Back to the values in force: nothing waits for a restart any more.
    caplog.clear()
    (app.config / "config.yml").write_text(NO_COOLDOWNS + kept)
    lines = await app.command("reload")
    assert "version 3" in lines[0] and len(lines) == 1, lines
    assert not [r for r in caplog.records if "restart" in r.getMessage()]


def test_every_restart_only_setting_is_marked_in_the_docs(app: App) -> None:
    rows = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    marked = {
        row.split("`")[1]
        for row in rows.splitlines()
        if row.startswith("| `") and "needs a restart" in row
    }
    assert marked == set(restart_only_fields(app.runtime.plane))


def test_a_serving_state_left_by_a_dead_process_or_garbled_is_ignored(
    app: App, tmp_path: Path
) -> None:
    plane = app.runtime.plane
    data = tmp_path / "data"
    write_serving_state(data, plane)
    changed = plane.config.model_copy(
        update={"link": plane.config.link.model_copy(update={"port": 25999})}
    )
    moved = dataclasses.replace(plane, config=changed)
    assert running_differences(data, moved) == (
        os.getpid(),
        [
            "link.port: the running bridge uses 25580, this folder says 25999; it takes effect "
            "when the bridge restarts"
        ],
    )
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    state = json.loads((data / SERVING_FILE).read_text())
    (data / SERVING_FILE).write_text(json.dumps({**state, "pid": int(dead)}))
    assert running_differences(data, moved) is None
    (data / SERVING_FILE).write_text('{"pid": ')
    assert running_differences(data, moved) is None


async def test_help_lists_only_what_the_sender_may_use(app: App) -> None:
    player = await app.command("help", granted=["mineclaw.command.chat"])
    assert player[0] == "<gold>Mineclaw commands you may use:"
    usages = [line.split("</gold>")[0].removeprefix("<gold>") for line in player[1:]]
    assert usages == [
        "/mineclaw status",
        "/mineclaw help",
        "/mineclaw usage [player]",
        "/mineclaw retry",
        "/mineclaw memory [list [player]|server|conversations|share <id>|unshare <id>|forget <id>"
        "|forget all [player]]",
        "/mineclaw listen ignore-me|include-me",
    ]
    operator = " | ".join(await app.command("help", granted=[*EVERY_NODE, "mineclaw.persona"]))
    for usage in (
        "listen on|off|status|why",
        "reload",
        "model [list|default|provider/model]",
        "stop [private]",
        "clear [private]",
        "compact",
        "tools validate",
        "functions validate",
        "approve|deny <id>",
        "ai <question> | ai clear | ai stop | ai history [id] | ai persona [name]"
        " | ai new [title] | ai list | ai switch|rename|delete <id>",
        "listen ignore-me|include-me",
    ):
        assert f"/mineclaw {usage}</gold>" in operator, usage
    console = " | ".join(await app.command("help", player=None, granted=[]))
    assert "/mineclaw status" in console and "ignore-me" not in console
    # A player who may ask privately but not choose a persona (everyone, by default): the
    # list says "you may use", so ai persona is not in it.
    private = " | ".join(
        await app.command("help", granted=["mineclaw.command.chat", "mineclaw.command.private"])
    )
    assert "/mineclaw ai <question> | ai clear | ai stop | ai history [id] | ai new" in private
    assert "persona" not in private


async def test_model_list_marks_the_current_one_and_default_returns_to_it(app: App) -> None:
    assert await app.command("model", "list") == [
        "<green>▶ local/m1 <gray>(in use)",
        "<gray>  local/m2",
    ]
    await app.command("model", "local/m2")
    assert await app.command("model", "list") == [
        "<gray>  local/m1",
        "<green>▶ local/m2 <gray>(in use)",
    ]
    assert await app.command("model", "default") == [
        "<green>Later answers use the default model, local/m1."
    ]
    assert app.runtime.model_override is None and app.runtime.model_ref() == "local/m1"
    lines = await app.command("model", "list", granted=["mineclaw.command.chat"])
    assert lines == ["<red>You may not use /mineclaw model."]


async def test_listen_on_off_still_needs_the_node_beside_ignore_me(app: App) -> None:
    assert await app.command("listen", "on", granted=[]) == [
        "<red>You may not use /mineclaw listen."
    ]
    console = await app.command("listen", "ignore-me", player=None, granted=[])
    assert "Usage" in console[0] and not app.runtime.listen.ignored


async def test_status_and_the_metrics_count_the_audit_events_not_written(app: App) -> None:
    app.runtime.audit.dropped_events, app.runtime.audit.lost_events = 17, 4
    joined = " | ".join(await app.command("status", player=None, granted=[]))
    assert "audit log: 17 events dropped, 4 lost since start" in joined
    metrics = app.runtime.metrics
    assert metrics.registry.get_sample_value("mineclaw_audit_dropped_events") == 17
    assert metrics.registry.get_sample_value("mineclaw_audit_lost_events") == 4


async def test_a_switch_to_a_model_whose_key_is_missing_is_refused_with_the_reason(
    app: App,
) -> None:
    # Accepted without a word, every turn then answered "(the assistant is not configured yet)".
    providers = app.config / "providers.yml"
    text = providers.read_text()
    model = "    limits:\n      context_window: 100000\n      max_output_tokens: 1000\n"
    text = text.replace(
        "models:\n",
        "  cloud:\n    api:\n      type: openai_chat_completions\n"
        "      base_url: http://127.0.0.1:9/v1\n    api_key: ${CLOUD_UNSET_API_KEY}\n"
        f"models:\n  cloud/big:\n{model}",
    )
    providers.write_text(text)
    assert "Reload failed" not in (await app.command("reload"))[0]
    [line] = await app.command("model", "cloud/big")
    assert "cloud/big cannot be used" in line and "CLOUD_UNSET_API_KEY" in line, line
    assert app.runtime.model_override is None
    assert "local/m2" in (await app.command("model", "local/m2"))[0]
