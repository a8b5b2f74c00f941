"""One check used by the reader tests and the wire tests: events against the recording."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.providers.events import (
    Completed,
    Failed,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallBegun,
    ToolCallDone,
)
from bridge.providers.items import AssistantText, Reasoning, ToolCall

from .provider_expectations import Expected


def check_events(events: Sequence[StreamEvent], expected: Expected) -> None:
    terminal = [e for e in events if isinstance(e, Completed | Failed)]
    assert len(terminal) == 1 and events[-1] is terminal[0], events[-3:]
    streamed_text = "".join(e.text for e in events if isinstance(e, TextDelta))
    streamed_reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert streamed_text == expected.text_deltas
    # Between summary parts the reader adds a paragraph break for the reader's eyes.
    assert streamed_reasoning.replace("\n\n", "") == expected.reasoning_deltas.replace("\n\n", "")
    if expected.error_code is not None:
        final = events[-1]
        assert isinstance(final, Failed)
        assert final.error is not None and expected.error_code in final.reason
        return
    final = events[-1]
    assert isinstance(final, Completed), final
    texts = [i.text for i in final.items if isinstance(i, AssistantText)]
    assert "".join(texts) == expected.text
    calls = [(i.call_id, i.name, i.arguments) for i in final.items if isinstance(i, ToolCall)]
    assert calls == expected.tool_calls
    reasoning = [i for i in final.items if isinstance(i, Reasoning)]
    assert "".join(r.text for r in reasoning) == expected.reasoning
    encrypted = [
        r.opaque["encrypted_content"]
        for r in reasoning
        if r.opaque is not None and "encrypted_content" in r.opaque
    ]
    assert encrypted == expected.encrypted
    done = [e.call for e in events if isinstance(e, ToolCallDone)]
    assert [(c.call_id, c.name, c.arguments) for c in done] == expected.tool_calls
    begun = [(e.call_id, e.name) for e in events if isinstance(e, ToolCallBegun)]
    assert begun == [(c[0], c[1]) for c in expected.tool_calls]
    for call_id, _, arguments in expected.tool_calls:
        pieces = [
            e.delta
            for e in events
            if isinstance(e, ToolCallArgumentsDelta) and e.call_id == call_id
        ]
        assert "".join(pieces) == arguments
    assert final.usage is not None and expected.usage is not None
    assert final.usage.input_tokens == expected.usage["input_tokens"]
    assert final.usage.output_tokens == expected.usage["output_tokens"]
