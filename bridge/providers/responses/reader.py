"""A sans-I/O reader of a streamed Responses answer: bytes in, stream events out.

Items are taken from ``response.output_item.done``: the copy in ``output_item.added`` can be
incomplete (a reasoning item's ``encrypted_content`` changes between the two). Deltas are
passed on as they come. The stream ends with ``response.completed`` (the items, in output
order, and usage), ``response.failed``, ``response.incomplete`` or an ``error`` event.
"""

from __future__ import annotations

import json
from typing import Any

from bridge.providers.errors import ProviderResponseError, ProviderStreamError, clip
from bridge.providers.events import (
    Completed,
    Failed,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallBegun,
    ToolCallDone,
    Usage,
)
from bridge.providers.failures import RETRYABLE_CLASSES, FailureClass, classify, code_value
from bridge.providers.items import AssistantText, Reasoning, ToolCall
from bridge.providers.jsonfast import parse_json
from bridge.providers.responses.replay import normalize_reasoning_item
from bridge.providers.sse import SSEDecoder

PROTOCOL = "openai_responses"
_SHAPE_ERRORS = (TypeError, KeyError, AttributeError, IndexError, ValueError)

_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)

# Events that add nothing the reader keeps; when the server names them on the ``event:`` line
# their JSON is not even parsed (``in_progress`` repeats the whole response object).
_UNUSED_EVENTS = frozenset(
    {
        "response.in_progress",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.reasoning_text.done",
        "response.function_call_arguments.done",
    }
)

AssembledItem = AssistantText | Reasoning | ToolCall


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ProviderStreamError(f"a text delta is {type(value).__name__}, not a string")


def _error(raw: Any, fallback: str) -> ProviderResponseError:
    if not isinstance(raw, dict):
        return ProviderResponseError(fallback, retryable=True)
    code = raw.get("code")
    if code is None or code == "":
        code = raw.get("type")
    name = code_value(code)
    message = raw.get("message")
    # Not clipped here: the client redacts the whole text first, then clips it.
    text = message if isinstance(message, str) and message else fallback
    # Compared as values, as for Chat Completions: a relay's "500" is the upstream's 500.
    kind: FailureClass = "busy" if name is None else classify(None, name, text)
    return ProviderResponseError(text, code=name, retryable=kind in RETRYABLE_CLASSES)


class _IncompleteItem(Exception):
    """Internal: an output item the server marked incomplete (its arguments are cut off)."""


def usage_from(raw: dict[str, Any]) -> Usage:
    input_details = raw.get("input_tokens_details") or {}
    output_details = raw.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        reasoning_tokens=int(output_details.get("reasoning_tokens") or 0),
        cached_input_tokens=int(input_details.get("cached_tokens") or 0),
    )


def item_from_output(raw: dict[str, Any]) -> AssembledItem | None:
    """The neutral item for one output item, or None for a type the bridge does not replay
    (a provider-native tool's own call record, for example)."""
    kind = raw.get("type")
    if kind == "message":
        parts = raw.get("content") or ()
        text = "".join(
            part.get("text") or part.get("refusal") or ""
            for part in parts
            if isinstance(part, dict) and part.get("type") in ("output_text", "refusal")
        )
        return AssistantText(text=text)
    if kind == "function_call":
        call_id, name, arguments = raw.get("call_id"), raw.get("name"), raw.get("arguments")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise ProviderStreamError("function_call item without call_id or name")
        if raw.get("status") == "incomplete":
            raise _IncompleteItem(name)
        if isinstance(arguments, dict | list):
            # Some servers put the arguments object itself here; the spec wants its JSON text.
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            raise ProviderStreamError(f"function_call arguments are {type(arguments).__name__}")
        return ToolCall(call_id=call_id, name=name, arguments=arguments)
    if kind == "reasoning":
        summary = [p.get("text", "") for p in raw.get("summary") or () if isinstance(p, dict)]
        content = [p.get("text", "") for p in raw.get("content") or () if isinstance(p, dict)]
        return Reasoning(
            protocol=PROTOCOL,
            text="\n\n".join(summary) if summary else "".join(content),
            opaque=normalize_reasoning_item(raw),
        )
    return None


class ResponsesReader:
    """Feed it the response body in any chunks; it returns events, ending with one terminal."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._items: dict[int, AssembledItem] = {}
        self._call_ids: dict[str, str] = {}
        self._response_id: str | None = None
        self.finished = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if self.finished:
            return out
        try:
            for event in self._sse.feed(chunk):
                if event.event in _UNUSED_EVENTS:
                    continue
                self._handle(event.data, out)
                if self.finished:
                    break
        except _IncompleteItem as cut:
            self._incomplete(f"tool call {clip(str(cut), 60)} was cut off", out)
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc) from exc
        return out

    def close(self) -> list[StreamEvent]:
        """The body ended; without a terminal event the response is incomplete."""
        out: list[StreamEvent] = []
        if self.finished:
            return out
        try:
            for event in self._sse.close():
                self._handle(event.data, out)
                if self.finished:
                    return out
        except _IncompleteItem as cut:
            self._incomplete(f"tool call {clip(str(cut), 60)} was cut off", out)
            return out
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc) from exc
        raise ProviderStreamError("stream ended before response.completed")

    def _shape_error(self, exc: Exception) -> ProviderStreamError:
        return ProviderStreamError(
            f"unexpected stream shape near line {self._sse.lines_read} ({type(exc).__name__})"
        )

    def _incomplete(self, reason: str, out: list[StreamEvent]) -> None:
        self.finished = True
        out.append(
            Failed(reason=f"response incomplete: {reason}", retryable=False, kind="incomplete")
        )

    def _handle(self, data: bytes, out: list[StreamEvent]) -> None:
        try:
            event = parse_json(data)
            kind = event["type"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderStreamError(
                f"data line is not a JSON event (near line {self._sse.lines_read})"
            ) from exc
        # The frequent deltas first: a long answer is hundreds of them.
        if kind == "response.output_text.delta":
            out.append(TextDelta(_text(event["delta"])))
        elif kind in _REASONING_DELTAS:
            out.append(ReasoningDelta(_text(event["delta"])))
        elif kind == "response.function_call_arguments.delta":
            item_id = event.get("item_id", "")
            delta = event["delta"]
            if not isinstance(delta, str):
                delta = json.dumps(delta, ensure_ascii=False)
            out.append(ToolCallArgumentsDelta(self._call_ids.get(item_id, item_id), delta))
        elif kind == "response.reasoning_summary_part.added":
            if event.get("summary_index", 0) > 0:
                out.append(ReasoningDelta("\n\n"))
        elif kind == "response.output_item.added":
            self._item_added(event.get("item") or {}, out)
        elif kind == "response.output_item.done":
            self._item_done(event, out)
        elif kind == "response.created":
            response = event.get("response") or {}
            self._response_id = response.get("id")
        elif kind == "response.completed":
            self._completed(event.get("response") or {}, out)
        elif kind == "response.failed":
            response = event.get("response") or {}
            self._fail(_error(response.get("error"), "response failed"), out)
        elif kind == "response.incomplete":
            details = (event.get("response") or {}).get("incomplete_details") or {}
            self._incomplete(str(details.get("reason") or "unknown")[:4096], out)
        elif kind == "error":
            self._fail(_error(event.get("error", event), "provider error"), out)
        # Other events (content parts, *.done text copies, in_progress) add nothing.

    def _fail(self, error: ProviderResponseError, out: list[StreamEvent]) -> None:
        self.finished = True
        out.append(Failed(reason=str(error), retryable=error.retryable, error=error))

    def _item_added(self, item: dict[str, Any], out: list[StreamEvent]) -> None:
        if item.get("type") == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                self._call_ids[item.get("id") or call_id] = call_id
                out.append(ToolCallBegun(call_id, name))

    def _item_done(self, event: dict[str, Any], out: list[StreamEvent]) -> None:
        raw = event.get("item")
        if not isinstance(raw, dict):
            raise ProviderStreamError("output_item.done without an item")
        item = item_from_output(raw)
        if item is None:
            return
        index = event.get("output_index")
        self._items[index if isinstance(index, int) else len(self._items)] = item
        if isinstance(item, ToolCall):
            out.append(ToolCallDone(item))

    def _completed(self, response: dict[str, Any], out: list[StreamEvent]) -> None:
        self.finished = True
        if not self._items:
            # Some servers skip output_item.done; the final output list is then the source.
            for index, raw in enumerate(response.get("output") or ()):
                item = item_from_output(raw) if isinstance(raw, dict) else None
                if item is not None:
                    self._items[index] = item
                    if isinstance(item, ToolCall):
                        out.append(ToolCallDone(item))
        usage = response.get("usage")
        out.append(
            Completed(
                items=tuple(self._items[i] for i in sorted(self._items)),
                usage=usage_from(usage) if isinstance(usage, dict) else None,
                finish_reason=response.get("status") or "completed",
                response_id=response.get("id") or self._response_id,
            )
        )
