"""Real turns end to end against llama.cpp's ``llama-server``: the testkit JVM, ``python -m
bridge serve`` and the tiny model's tools-capable template, so the tool calls the bridge runs
are real ``tool_calls`` from a real server (``tool_choice: required``), replayed with
``content: null``. Shapes and outcomes only."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.interaction.processes import free_port

from .model_servers import LLAMA_SERVER_READY, llama_server, llama_server_command, running
from .test_llama_cpp_python_e2e import (
    MARKERS,
    PLAYER,
    REPLY_PREFIX,
    World,
    bridge_world,
    line_for,
    public_replies,
    tool_rounds,
)

pytestmark = pytest.mark.jvm


@contextlib.asynccontextmanager
async def world(tmp_path: Path, model: Path, tool_choice: str) -> AsyncIterator[World]:
    binary = llama_server()
    assert binary is not None
    port = free_port()
    command = llama_server_command(binary, model, port)
    async with running("llama-server", command, port, LLAMA_SERVER_READY) as server:
        # Room for grammar-forced calls, whose spacing the random weights choose.
        async with bridge_world(tmp_path, server, tool_choice, "auto", max_output=1024) as w:
            yield w


async def test_real_tool_calls_then_an_answer_reach_public_chat(
    tmp_path: Path, tiny_model: Path
) -> None:
    async with world(tmp_path, tiny_model, "required") as w:
        await w.add("Steve", PLAYER)
        since = w.mark()
        assert (await w.chat("Steve", "@ai who is online?"))["outcome"] == "public"
        await line_for(w, "*", f"{REPLY_PREFIX}@Steve ", since)
        assert tool_rounds(w, since) >= 1
        assert public_replies(w, since)
        everything = " ".join(e.get("text", "") for e in w.testkit.events[since:])
        assert not any(marker in everything for marker in MARKERS)
        # The next turn replays the round as llama-server took it: answered too.
        since = w.mark()
        await w.chat("Steve", "@ai and now?")
        await line_for(w, "*", f"{REPLY_PREFIX}@Steve ", since)
        assert not w.audit("provider.failure"), w.audit("provider.failure")
