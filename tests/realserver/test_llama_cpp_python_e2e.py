"""Real turns end to end: the testkit JVM, ``python -m bridge serve`` and llama-cpp-python's
real server with the tiny random-weight model. Text means nothing here: the tests assert that
answers arrive, where they arrive, which tools ran and what a failure looks like to a player."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.interaction.processes import (
    BridgeProcess,
    TestkitPlayers,
    TestkitProcess,
    free_port,
    require_testkit_jar,
)

from .model_servers import (
    LLAMA_CPP_PYTHON_READY,
    ModelServer,
    llama_cpp_python,
    llama_cpp_python_command,
    running,
)

pytestmark = pytest.mark.jvm

REPLY_PREFIX = "[Mineclaw] "
PLAYER = ["mineclaw.command.chat", "mineclaw.command.private"]
CONFIG = "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
TOOLS = """schema: 1
tools:
  online_players:
    handler: online_players
    description: List the players who are online now.
    parameters: {type: object, properties: {}, additionalProperties: false}
"""
# Text tool-call markers a player must never see.
MARKERS = ("functions.", "<tool_call>", "[TOOL_CALLS]")


def providers_yml(
    base_url: str, tool_choice: str, compat: str = "llama-cpp-python", max_output: int = 64
) -> str:
    return f"""schema: 1
default: local/tiny
providers:
  local:
    api: {{type: openai_chat_completions, base_url: "{base_url}"}}
    compat: {compat}
    timeout: {{read_s: 300}}
    retry: {{max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 100}}
models:
  local/tiny:
    limits: {{context_window: 8192, max_output_tokens: {max_output}}}
    request: {{tool_choice: {tool_choice}}}
"""


@dataclass
class World(TestkitPlayers):
    config: Path
    bridge: BridgeProcess
    testkit: TestkitProcess
    server: ModelServer

    def lines_to(self, to: str, since: int = 0) -> list[str]:
        return [
            e["text"]
            for e in self.testkit.events[since:]
            if e.get("event") == "message" and e.get("to") == to
        ]

    def audit(self, kind: str) -> list[dict[str, Any]]:
        path = self.config / "data" / "audit.jsonl"
        records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
        return [record for record in records if record.get("kind") == kind]


@contextlib.asynccontextmanager
async def world(
    tmp_path: Path, model: Path, *, tool_choice: str = "online_players"
) -> AsyncIterator[World]:
    """The bridge and the testkit in front of llama-cpp-python's server."""
    python = llama_cpp_python()
    assert python is not None
    port = free_port()
    command = llama_cpp_python_command(python, model, port)
    async with running("llama-cpp-python", command, port, LLAMA_CPP_PYTHON_READY) as server:
        async with bridge_world(tmp_path, server, tool_choice, "llama-cpp-python") as w:
            yield w


@contextlib.asynccontextmanager
async def bridge_world(
    tmp_path: Path, server: ModelServer, tool_choice: str, compat: str, max_output: int = 64
) -> AsyncIterator[World]:
    """The bridge (configured for ``server``) and the testkit JVM linked to it."""
    require_testkit_jar()
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.yml").write_text(CONFIG)
    (config / "providers.yml").write_text(
        providers_yml(server.base_url, tool_choice, compat, max_output)
    )
    (config / "tools.yml").write_text(TOOLS)
    bridge = await BridgeProcess.start(config, port=free_port())
    testkit: TestkitProcess | None = None
    try:
        testkit = await TestkitProcess.start(bridge.url, bridge.token_file)
        await testkit.wait_event(lambda e: e.get("event") == "link.up")
        yield World(config, bridge, testkit, server)
    finally:
        if testkit is not None:
            await testkit.shutdown()
        await bridge.kill()


# A real model on a shared 2-core machine: a prompt of a few thousand byte tokens takes a while.
ANSWER_TIMEOUT = 300.0


async def line_for(w: World, to: str, contains: str, since: int) -> str:
    event = await w.testkit.wait_event(
        lambda e: e.get("event") == "message" and e.get("to") == to and contains in e["text"],
        since=since,
        timeout=ANSWER_TIMEOUT,
    )
    text: str = event["text"]
    return text


def tool_rounds(w: World, since: int) -> int:
    """Tool rounds shown to the asker (``◆ online_players ◆`` in the action bar)."""
    return sum(
        1
        for e in w.testkit.events[since:]
        if e.get("event") == "actionbar" and "online_players" in e.get("text", "")
    )


def public_replies(w: World, since: int) -> list[str]:
    return [line for line in w.lines_to("*", since) if line.startswith(REPLY_PREFIX)]


async def test_a_tool_round_then_an_answer_reaches_public_chat(
    tmp_path: Path, tiny_model: Path
) -> None:
    async with world(tmp_path, tiny_model) as w:
        await w.add("Steve", PLAYER)
        since = w.mark()
        assert (await w.chat("Steve", "@ai who is online?"))["outcome"] == "public"
        await line_for(w, "*", f"{REPLY_PREFIX}@Steve ", since)
        replies = public_replies(w, since)
        assert replies and all(line.strip() != REPLY_PREFIX.strip() for line in replies)
        everything = " ".join(e.get("text", "") for e in w.testkit.events[since:])
        assert not any(marker in everything for marker in MARKERS)
        assert tool_rounds(w, since) == 1  # the forced call ran, once
        # The next turn replays that round (content "" on the assistant call): answered too.
        since = w.mark()
        await w.chat("Steve", "@ai and now?")
        await line_for(w, "*", f"{REPLY_PREFIX}@Steve ", since)
        assert tool_rounds(w, since) == 1
        assert not w.audit("provider.failure"), w.audit("provider.failure")


def done(ref: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e.get("event") == "command.done" and e.get("ref") == ref


async def test_two_players_at_once_each_get_their_answer(tmp_path: Path, tiny_model: Path) -> None:
    async with world(tmp_path, tiny_model, tool_choice="omit") as w:
        await w.add("Steve", PLAYER)
        await w.add("Alex", PLAYER)
        since = w.mark()
        asked = [
            w.testkit.send({"op": "ask", "player": name, "text": "hello", "ref": f"a-{name}"})
            for name in ("Steve", "Alex")
        ]
        await asyncio.gather(*asked)
        for name in ("Steve", "Alex"):
            await w.testkit.wait_event(done(f"a-{name}"), since=since, timeout=ANSWER_TIMEOUT)
        # Each private answer reaches only its asker; neither is a failure line.
        answers = {name: await line_for(w, name, "→ you]", since) for name in ("Steve", "Alex")}
        for name, other in (("Steve", "Alex"), ("Alex", "Steve")):
            assert answers[name].split("]", 1)[1].strip(), answers
            mine = w.lines_to(name, since)
            assert not any("busy" in line or "failed" in line for line in mine), mine
            assert not [line for line in w.lines_to(other, since) if "→ you]" in line][1:]
        assert not public_replies(w, since)


async def test_a_server_killed_mid_answer_tells_the_player_and_the_bridge_stays(
    tmp_path: Path, endless_model: Path
) -> None:
    async with world(tmp_path, endless_model, tool_choice="omit") as w:
        await w.add("Steve", PLAYER)
        since = w.mark()
        assert (await w.chat("Steve", "@ai tell me a long story"))["outcome"] == "public"
        # The answer is streaming into Steve's action bar: kill the server under it.
        await w.testkit.wait_event(
            lambda e: e.get("event") == "actionbar" and e.get("to") == "Steve",
            since=since,
            timeout=ANSWER_TIMEOUT,
        )
        await w.server.kill()
        # The broken stream reads "busy"; a retry that found the server gone reads that it
        # cannot be reached. Either is true; which comes depends on where the kill fell.
        await w.testkit.wait_event(
            lambda e: (
                e.get("event") == "message"
                and e.get("to") == "Steve"
                and ("busy" in e["text"] or "cannot be reached" in e["text"])
            ),
            since=since,
            timeout=ANSWER_TIMEOUT,
        )
        assert not public_replies(w, since)  # nothing half-said is posted as an answer
        status = " | ".join(await w.command("Steve", "status"))
        assert status


async def test_a_tool_the_model_chose_under_auto_names_the_cause_not_busy(
    tmp_path: Path, tiny_model: Path
) -> None:
    """With ``tool_choice: auto`` the tiny model picks a tool and the real server answers an
    empty 200 stream: the operator's failure line names the cause and the setting to change,
    the asker reads that the provider is not set up correctly (never "busy"), and the status
    probe finds the server reachable."""
    async with world(tmp_path, tiny_model, tool_choice="auto") as w:
        await w.add("Steve", [*PLAYER, "mineclaw.command.reload"])  # an operator: told why
        since = w.mark()
        assert (await w.chat("Steve", "@ai who is online?"))["outcome"] == "public"
        notice = await line_for(w, "Steve", "tool_choice", since)
        assert "llama-cpp-python" in notice, notice
        await line_for(w, "Steve", "not set up correctly", since)
        assert not any("busy" in line for line in w.lines_to("Steve", since))
        status = " | ".join(await w.command("Steve", "status"))
        assert "provider local: reachable" in status, status
