"""llama-cpp-python's server with ``tool_choice: auto``: when its model picks a tool in a
streamed turn, the server raises "Automatic streaming tool choice is not supported" after its
200 headers went out, and the body ends with no event (llama_cpp/llama_chat_format.py,
chatml_function_calling, 0.3.36). A real loopback server answers in that shape here; the
failure must name the cause instead of reading as a busy provider."""

from __future__ import annotations

import pytest

from bridge.providers.client import EMPTY_TOOL_STREAM
from bridge.providers.events import Failed
from bridge.providers.items import PlayerMessage, ProviderRequest
from bridge.providers.settings import ModelSettings

from .provider_replay_server import ReplayServer, Reply
from .test_provider_server_compat import TOOL, send

ASKED = ProviderRequest(
    session_id="s", items=(PlayerMessage(player="Steve", text="who is on?"),), tools=(TOOL,)
)
EMPTY = Reply(status=200, content_type="text/event-stream", chunks=[])
PINGS_THEN_CUT = Reply(
    status=200, content_type="text/event-stream", chunks=[b": ping\r\n\r\n"], reset_after_chunks=1
)


@pytest.mark.parametrize("reply", [EMPTY, PINGS_THEN_CUT], ids=["ended", "cut"])
async def test_llama_cpp_python_empty_stream_names_its_cause_and_is_not_retried(
    replay_server: ReplayServer, reply: Reply
) -> None:
    replay_server.script(reply, reply)
    events = await send(
        replay_server, ASKED, ModelSettings(wire_model="m"), compat="llama-cpp-python"
    )
    final = events[-1]
    assert isinstance(final, Failed) and final.reason == EMPTY_TOOL_STREAM
    assert not final.retryable and final.failure_class == "misconfigured"
    assert "tool_choice" in final.reason and len(replay_server.requests) == 1


async def test_an_unknown_server_s_empty_stream_is_retried_with_the_likely_cause_named(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(EMPTY)
    events = await send(replay_server, ASKED, ModelSettings(wire_model="m"))
    final = events[-1]
    assert isinstance(final, Failed) and final.retryable
    assert "llama-cpp-python answers so when its model picks a tool" in final.reason


async def test_an_empty_stream_without_tools_left_to_the_model_is_only_broken(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(EMPTY)
    forced = ModelSettings(wire_model="m", tool_choice="block_inspect")
    events = await send(replay_server, ASKED, forced, compat="llama-cpp-python")
    final = events[-1]
    assert isinstance(final, Failed) and final.retryable and "tool_choice" not in final.reason
