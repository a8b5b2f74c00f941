"""A tool's output with an unpaired surrogate (a Function's JavaScript string, say) enters the
turn as valid text: the next request of the turn and of the session can still be encoded."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bridge.errors import ToolError
from bridge.providers.items import ToolCall, ToolResult
from bridge.turns.ports import TurnContext

from .conftest import Harness, make_snapshot
from .fakes import ScriptedModel, answer, tool_calls


@dataclass
class SurrogateTools:
    async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
        if call.name == "run_command":
            raise ToolError("no such player \udc00")
        return ToolResult(call_id=call.call_id, output="block: stone \ud800")

    def side_effect_free(self, name: str) -> bool:
        return name != "run_command"


def encodes(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def test_tool_output_and_errors_with_lone_surrogates_enter_as_valid_text(
    harness: Harness,
) -> None:
    model = ScriptedModel(
        [
            tool_calls(("c1", "look", "{}"), ("c2", "run_command", "{}")),
            answer("Stone."),
            answer("Ok."),
        ]
    )
    snapshot = make_snapshot(model, runner=SurrogateTools())
    assert (await harness.run(snapshot)).status == "completed"
    results = [item for item in model.requests[1].items if isinstance(item, ToolResult)]
    assert [r.output for r in results] == ["block: stone \ufffd", "error: no such player \ufffd"]
    assert (await harness.run(snapshot, "again")).status == "completed"
    replayed = [item.model_dump(mode="json") for item in model.requests[2].items]
    assert encodes(replayed)
    assert encodes(
        [item.model_dump(mode="json") for t in harness.session.state.turns for item in t.items]
    )
