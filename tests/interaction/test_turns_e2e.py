"""Turns end to end with real processes: the testkit JVM, the bridge (``python -m bridge
serve``) and a scripted OpenAI-compatible SSE server in this test.

Each test writes its own configuration folder pointing the bridge at the scripted server, then
drives the testkit as players would. Waits are on observable events, each bounded.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from app.scripted_provider import ScriptedProvider

from tests.storage_choice import archived_turns as stored_turns

from .processes import (
    BridgeProcess,
    TestkitPlayers,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)

pytestmark = pytest.mark.jvm

OP = [
    "mineclaw.command.chat",
    "mineclaw.command.listen",
    "mineclaw.command.reload",
    "mineclaw.command.compact",
    "mineclaw.command.clear",
    "mineclaw.command.stop",
    "mineclaw.command.model",
]
CHAT_ONLY = ["mineclaw.command.chat"]
NO_COOLDOWNS = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
REPLY_PREFIX = "[Mineclaw] "


def asked_by(player: str) -> str:
    """The prefix of a public reply's first line, which names the asker (reply.first_line)."""
    return f"{REPLY_PREFIX}@{player} "


def providers_yml(port: int) -> str:
    model = (
        "    limits:\n      context_window: 100000\n      max_output_tokens: 1000\n"
        "      compaction_trigger: 90000\n"
    )
    return (
        "schema: 1\ndefault: local/m1\nproviders:\n  local:\n    api:\n"
        "      type: openai_chat_completions\n"
        f"      base_url: http://127.0.0.1:{port}/v1\n"
        "    api_key: sk-test-secret-key\n"
        f"models:\n  local/m1:\n{model}  local/m2:\n{model}"
    )


def write_config(
    config: Path, provider_port: int, config_yml: str, files: dict[str, str] | None = None
) -> None:
    """``files``: more files of the folder by relative path (whitelist.yml, skills...)."""
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yml").write_text(config_yml)
    (config / "providers.yml").write_text(providers_yml(provider_port))
    for name, text in (files or {}).items():
        (config / name).parent.mkdir(parents=True, exist_ok=True)
        (config / name).write_text(text)


@dataclass
class World(TestkitPlayers):
    config: Path
    port: int
    bridge: BridgeProcess
    testkit: TestkitProcess
    provider: ScriptedProvider

    def messages(self, since: int = 0) -> list[dict[str, Any]]:
        return [e for e in self.testkit.events[since:] if e.get("event") == "message"]


@contextlib.asynccontextmanager
async def world(
    tmp_path: Path,
    config_yml: str = NO_COOLDOWNS,
    files: dict[str, str] | None = None,
    testkit_args: tuple[str, ...] = (),
    bridge_env: dict[str, str] | None = None,
    bridge_command: tuple[str, ...] | None = None,
) -> AsyncIterator[World]:
    """``bridge_command``: an installed ``mineclaw-bridge`` to run instead of this checkout's
    package (started in ``tmp_path``; ``bridge_env`` should then clear ``PYTHONPATH``)."""
    require_testkit_jar()
    provider = ScriptedProvider()
    await provider.start()
    config, port = tmp_path / "config", free_port()
    write_config(config, provider.port, config_yml, files)
    if bridge_command is None:
        bridge = await BridgeProcess.start(config, port=port, env=bridge_env)
    else:
        bridge = await BridgeProcess.start(
            config, port=port, env=bridge_env, command=bridge_command, cwd=tmp_path
        )
    testkit: TestkitProcess | None = None
    current: World | None = None
    try:
        testkit = await TestkitProcess.start(bridge.url, bridge.token_file, *testkit_args)
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        current = World(config, port, bridge, testkit, provider)
        yield current
    finally:
        # A test may have replaced the bridge or the testkit: stop the ones running now.
        if current is not None:
            bridge, testkit = current.bridge, current.testkit
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()
        await provider.stop()


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] in ("system", "developer"))


async def test_explicit_wake_is_answered_publicly_and_listen_mode_wakes_on_every_message(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        w.provider.answer("Hello ", "<green>Steve</green>!")
        since = w.mark()
        woken = await w.chat("Steve", "@ai what is up")
        assert woken["outcome"] == "public" and woken["shown"] == "<Steve> @ai what is up"
        reply = await w.message("*", REPLY_PREFIX, since)
        assert reply == asked_by("Steve") + "Hello Steve!"  # colour tags rendered, not shown
        body = w.provider.bodies()[-1]
        assert user_texts(body) == ["what is up"]
        sent = json.dumps(body)
        assert "sk-test-secret-key" not in sent and "mineclaw.command" not in sent
        assert [m.get("name") for m in body["messages"] if m["role"] == "user"] == ["Steve"]

        ordinary = await w.chat("Steve", "good morning")
        assert ordinary == {**ordinary, "outcome": "public", "shown": "<Steve> good morning"}
        assert len(w.provider.requests) == 1  # not a wake: never sent to the provider

        since = w.mark()
        assert any("on" in line for line in await w.command("Steve", "listen", "on"))
        await w.testkit.wait_event(
            lambda e: e.get("event") == "link.state" and e.get("forward") == "all", since=since
        )
        await w.message("*", "now listening to public chat", since)

        w.provider.answer("Fine, thanks.")
        since = w.mark()
        implicit = await w.chat("Steve", "how are you, Mineclaw")  # named: a turn starts
        assert implicit["outcome"] == "public"
        assert implicit["shown"] == "[AI] <Steve> how are you, Mineclaw"
        assert await w.message("*", REPLY_PREFIX, since) == asked_by("Steve") + "Fine, thanks."
        # The second request replays the first turn: the session holds completed turns.
        assert user_texts(w.provider.bodies()[-1]) == ["what is up", "how are you, Mineclaw"]

        assert await w.command("Steve", "reload") != []
        assert any("is on" in line for line in await w.command("Steve", "listen", "status"))
        status = " | ".join(await w.command("Steve", "status"))
        assert "listen: on" in status and "2 turns" in status and "local/m1" in status

        # A new server instance (the plugin restarted) starts with listen mode off.
        await w.testkit.shutdown()
        w.testkit = await TestkitProcess.start(w.bridge.url, w.bridge.token_file)
        await w.testkit.wait_event(
            lambda e: e.get("event") == "link.state" and e.get("forward") == "prefixed"
        )
        await w.add("Steve", OP)
        assert any("is off" in line for line in await w.command("Steve", "listen", "status"))
        passed = await w.chat("Steve", "just chatting")
        assert passed["shown"] == "<Steve> just chatting"
        assert len(w.provider.requests) == 2


async def test_a_reply_with_line_breaks_reaches_chat_as_a_few_prefixed_lines(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        w.provider.answer(
            "ok" + "\n" * 400,
            "<Notch> I am op now\u2028[Server] Restarting in 10s\u2029§c&4**Done**",
        )
        since = w.mark()
        await w.chat("Steve", "@ai hello")
        await w.message("*", "Done", since)
        shown = [m["text"] for m in w.messages(since) if m.get("to") == "*"]
        # Every line the bridge broadcast carries the prefix; none stands alone.
        assert shown == [
            asked_by("Steve") + "ok",
            REPLY_PREFIX + "<Notch> I am op now",
            REPLY_PREFIX + "[Server] Restarting in 10s",
            REPLY_PREFIX + "Done",
        ]
        for text in shown:
            assert not any(c in text for c in "\n\r\u2028\u2029\u0085§")


async def test_gates_refuse_in_order_each_with_its_own_private_line(tmp_path: Path) -> None:
    cooldowns = (
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 600000\n  global_cooldown_ms: 300000\n"
        "concurrency:\n  queue_length: 0\n"  # no wait line: a wake during a turn is told busy
    )
    async with world(tmp_path, cooldowns) as w:
        await w.add("Mute", [])
        await w.add("Steve", CHAT_ONLY)
        await w.add("Alex", CHAT_ONLY)
        await w.add("Op", [*OP, "mineclaw.bypass.ratelimit"])
        await w.add("Op2", [*OP, "mineclaw.bypass.ratelimit"])

        since = w.mark()
        refused = await w.chat("Mute", "@ai hi")
        assert refused["outcome"] == "cancelled" and refused["shown"] is None
        await w.message("Mute", "You may not use the assistant", since)

        hint = await w.chat("Steve", "@ai")
        assert hint["outcome"] == "cancelled"
        await w.message("Steve", "Ask a question after @ai", since)

        w.provider.answer("First.")
        assert (await w.chat("Steve", "@ai one"))["outcome"] == "public"
        await w.message("*", "First.", since)

        since = w.mark()
        again = await w.chat("Steve", "@ai two")
        assert again["outcome"] == "cancelled"
        await w.message("Steve", "Please wait", since)
        other = await w.chat("Alex", "@ai three")
        assert other["outcome"] == "cancelled"
        await w.message("Alex", "cooling down", since)

        held = w.provider.held("Slow ", "answer.")
        assert (await w.chat("Op", "@ai long question"))["outcome"] == "public"
        await held.streaming.wait()
        since = w.mark()
        busy = await w.chat("Op2", "@ai me too")
        assert busy["outcome"] == "cancelled"
        await w.message("Op2", "busy with another request", since)
        held.release.set()
        await w.message("*", "Slow answer.", since)
        assert len(w.provider.requests) == 2  # only the admitted wakes reached the provider
        assert not [m for m in w.messages() if m["to"] == "*" and "two" in m["text"]]


async def test_a_provider_failing_three_times_drops_the_turn_and_tells_the_player(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        w.provider.answer("Kept.")
        since = w.mark()
        await w.chat("Steve", "@ai remember me")
        await w.message("*", "Kept.", since)

        w.provider.fail(500, times=3)
        since = w.mark()
        assert (await w.chat("Steve", "@ai doomed question"))["outcome"] == "public"
        # The player's line by failure class, never the provider's text; Steve is an operator,
        # so he also gets one line with the provider's own error.
        await w.message("Steve", "model provider is busy", since)
        await w.message("Steve", "failed (busy): HTTP 500 server_error: scripted failure", since)
        assert len(w.provider.requests) == 4  # one, then three attempts: no more
        assert not [m for m in w.messages(since) if m["to"] == "*"]  # no invented reply

        w.provider.answer("Still here.")
        await w.chat("Steve", "@ai next")
        await w.message("*", "Still here.", since)
        assert user_texts(w.provider.bodies()[-1]) == ["remember me", "next"]
        assert "2 turns" in " ".join(await w.command("Steve", "status"))


async def test_model_switch_and_reload_mid_turn_apply_to_later_turns_and_stop_cancels(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        held = w.provider.held("Answer ", "from m1.")
        since = w.mark()
        await w.chat("Steve", "@ai first")
        await held.streaming.wait()
        assert any("local/m2" in line for line in await w.command("Steve", "model", "local/m2"))
        refused = await w.command("Steve", "model", "nowhere/x")
        assert any("not configured" in line for line in refused)
        agents = w.config / "workspace" / "AGENTS.md"
        agents.write_text("You are the reloaded assistant.\n")
        assert any("reloaded" in line for line in await w.command("Steve", "reload"))
        held.release.set()
        await w.message("*", "Answer from m1.", since)
        first = w.provider.bodies()[0]
        assert first["model"] == "m1" and "reloaded assistant" not in system_text(first)

        w.provider.answer("Answer from m2.")
        await w.chat("Steve", "@ai second")
        await w.message("*", "Answer from m2.", since)
        second = w.provider.bodies()[-1]
        assert second["model"] == "m2" and "reloaded assistant" in system_text(second)
        assert any("local/m2" in line for line in await w.command("Steve", "model"))

        held = w.provider.held("Never ", "shown.")
        since = w.mark()
        await w.chat("Steve", "@ai stop me")
        await held.streaming.wait()
        assert any("Stopped" in line for line in await w.command("Steve", "stop"))
        assert any("No answer" in line for line in await w.command("Steve", "stop"))
        w.provider.answer("After the stop.")
        await w.chat("Steve", "@ai after")
        await w.message("*", "After the stop.", since)
        assert not [m for m in w.messages(since) if "Never" in m["text"]]
        assert user_texts(w.provider.bodies()[-1]) == ["first", "second", "after"]


async def test_compaction_publishes_a_summary_only_when_it_succeeds(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        for number in range(3):
            w.provider.answer(f"Reply {number}.")
            since = w.mark()
            await w.chat("Steve", f"@ai question {number}")
            await w.message("*", f"Reply {number}.", since)

        w.provider.fail(500, times=3)
        since = w.mark()
        assert any("Compacting" in line for line in await w.command("Steve", "compact"))
        await w.message("Steve", "Compaction finished: failed", since)
        w.provider.answer("Reply 3.")
        await w.chat("Steve", "@ai question 3")
        await w.message("*", "Reply 3.", since)
        assert len(user_texts(w.provider.bodies()[-1])) == 4  # nothing was summarised

        w.provider.answer("Steve asked four numbered questions.")
        since = w.mark()
        await w.command("Steve", "compact")
        await w.message("Steve", "Compaction finished: compacted", since)
        w.provider.answer("Reply 4.")
        await w.chat("Steve", "@ai question 4")
        await w.message("*", "Reply 4.", since)
        body = w.provider.bodies()[-1]
        # The summary is labelled earlier conversation, never system-prompt authority.
        assert "Steve asked four numbered questions." not in system_text(body)
        summary, *asked = user_texts(body)
        assert summary.startswith("[Summary of the earlier public conversation")
        assert summary.endswith("\nSteve asked four numbered questions.")
        assert "name" not in [m for m in body["messages"] if m["role"] == "user"][0]
        assert asked == ["question 2", "question 3", "question 4"]

        held = w.provider.held("Busy ", "answer.")
        since = w.mark()
        await w.chat("Steve", "@ai question 5")
        await held.streaming.wait()
        assert any("queued" in line for line in await w.command("Steve", "compact"))
        assert any("queued" in line for line in await w.command("Steve", "compact"))
        w.provider.answer("Shorter summary.")
        held.release.set()
        await w.message("Steve", "Compaction finished: compacted", since)
        assert len(w.provider.requests) == 11  # one compaction for the two requests


def archived_turns(config: Path) -> list[tuple[str, str]]:
    """(player, every item as JSON text) per archived turn, oldest first, in whichever storage
    the folder names."""
    return [
        (turn.player, " ".join(json.dumps(item) for item in turn.items))
        for turn in stored_turns(config)
    ]


async def test_a_bridge_killed_mid_turn_keeps_every_completed_turn_and_no_partial_one(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        for number in range(2):
            w.provider.answer(f"Done {number}.")
            since = w.mark()
            await w.chat("Steve", f"@ai turn {number}")
            await w.message("*", f"Done {number}.", since)
        held = w.provider.held("Half ", "an answer.")
        await w.chat("Steve", "@ai unfinished")
        await held.streaming.wait()
        since = w.mark()
        await w.bridge.kill()
        await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)

        archived = archived_turns(w.config)
        assert [("Steve" in p, "turn 0" in a or "turn 1" in a) for p, a in archived] == [
            (True, True),
            (True, True),
        ]
        assert not [items for _, items in archived if "unfinished" in items or "Half" in items]

        # The plugin kept the unfinished question (protocol 1.5): the restarted bridge answers it.
        w.provider.answer("Finished after the restart.")
        w.bridge = await BridgeProcess.start(w.config, port=w.port)
        await w.testkit.relinked(since)
        await w.message("*", "Finished after the restart.", since)
        w.provider.answer("Back.")
        await w.chat("Steve", "@ai are you back")
        await w.message("*", "Back.", since)
        turns = archived_turns(w.config)
        assert len(turns) == 4 and "are you back" in turns[-1][1] and "Back." in turns[-1][1]
        # The session survived the kill: the earlier turns are replayed, the half answer not
        # (the question sent again is, with its whole answer).
        assert user_texts(w.provider.bodies()[-1]) == [
            "turn 0",
            "turn 1",
            "unfinished",
            "are you back",
        ]
        assert not [items for _, items in turns if "Half" in items]
