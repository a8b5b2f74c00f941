"""A Function that makes V8 abort, called by the model in a real bridge process.

The bridge (``python -m bridge serve``), the testkit JVM and a scripted provider: the model
calls a Function whose body aborts V8. While it runs, another player's chat keeps getting its
verdicts; the turn ends with the model told the stable error code, the player gets the reply,
and the bridge process is still serving. In-process, V8's abort ended the whole bridge.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app.scripted_provider import sse
from providers.provider_replay_server import Reply

from .test_turns_e2e import NO_COOLDOWNS, OP, REPLY_PREFIX, asked_by, world

pytestmark = pytest.mark.jvm

FUNCTIONS = """\
schema: 1
api_version: 1
functions:
  - name: crash
    description: Makes V8 abort.
    enabled: true
    capabilities: []
    parameters: {type: object}
    on_call: |
      async function onCall(ctx, api) {
        "a".repeat(2 ** 28).split("");
        return {status: "ok", output: {}};
      }
"""
# A segment limit long enough for V8 to reach its fatal error. With 512 MB the worker's data
# limit is 1 GiB, where V8 fails fast; the memory watch may still be first on a busy machine,
# and either way the worker dies under the call and the bridge carries on.
CONFIG = NO_COOLDOWNS + "functions:\n  sync_segment_ms: 10000\n  worker_memory_mb: 512\n"


def call_function(name: str) -> list[bytes]:
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {
        "name": "call_function",
        "arguments": json.dumps({"name": name, "arguments": {}}),
    }
    return sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )


async def test_a_v8_abort_in_a_function_ends_only_that_call(tmp_path: Path) -> None:
    async with world(tmp_path, CONFIG) as w:
        (w.config / "functions.yml").write_text(FUNCTIONS)
        await w.add("Steve", OP)
        await w.add("Alex", ["mineclaw.command.chat"])
        assert await w.command("Steve", "reload") != []
        w.provider.script(Reply(chunks=call_function("crash")))
        w.provider.answer("The kit machine broke.")
        since = w.mark()
        woken = await w.chat("Steve", "@ai give me a kit")
        assert woken["outcome"] == "public"
        # Verdicts keep coming while the Function runs and its worker dies.
        for n in range(5):
            verdict = await w.chat("Alex", f"hello {n}")
            assert verdict["outcome"] == "public", verdict
        # A Function's result is personal (it is handed the asker): the answer is Steve's.
        reply = await w.message("Steve", "→ you]", since)
        assert reply.endswith("The kit machine broke.")
        tool_results = [
            m["content"] for m in w.provider.bodies()[-1]["messages"] if m["role"] == "tool"
        ]
        assert len(tool_results) == 1
        code = json.loads(tool_results[0])["result"]["output"]["error_code"]
        assert code in ("memory_limit", "engine_crashed"), tool_results
        # The same bridge process answers the next turn.
        w.provider.answer("Still here.")
        since = w.mark()
        await w.chat("Steve", "@ai are you there")
        assert await w.message("*", REPLY_PREFIX, since) == asked_by("Steve") + "Still here."
        assert w.bridge.process.returncode is None
