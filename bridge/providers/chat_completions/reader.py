"""A sans-I/O reader of a streamed Chat Completions response: bytes in, stream events out.

Tool calls arrive in fragments keyed by ``index``: the id and name once, the arguments in
pieces. Reasoning arrives as ``delta.reasoning_content`` (DeepSeek and others) or
``delta.reasoning`` (Groq); it is always shown, and kept for replay only when the model has an
interleaved field. Usage comes in a last chunk with empty ``choices``; ``[DONE]`` ends the
stream. An error object can arrive mid-stream, with or without an ``event: error`` line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bridge.providers.chat_completions.text_calls import TextCallGate, parse_text_calls
from bridge.providers.compat import ALL_TEXT_FORMATS, TextToolFormat
from bridge.providers.errors import ProviderResponseError, ProviderStreamError
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
from bridge.providers.failures import (
    RETRYABLE_CLASSES,
    FailureClass,
    classify,
    code_value,
    status_of,
)
from bridge.providers.items import AssistantText, Reasoning, ToolCall
from bridge.providers.jsonfast import parse_json
from bridge.providers.sse import SSEDecoder

PROTOCOL = "openai_chat_completions"
_INCOMPLETE_REASONS = frozenset({"length", "content_filter"})
_SHAPE_ERRORS = (TypeError, KeyError, AttributeError, IndexError, ValueError)
# The keys of a tool-call fragment the reader reads; any other key the server put on a call
# (Gemini's ``extra_content.google.thought_signature``) is kept and sent back on replay.
_FRAGMENT_KEYS = frozenset({"index", "id", "type", "function"})
_DECODER = json.JSONDecoder()


class _ToolCallParts:
    """One call being assembled. ``call_id`` and ``name`` may arrive after the first fragment
    (vLLM, LM Studio and llama.cpp send a nameless first one); ``begun`` says whether
    ``ToolCallBegun`` went out."""

    __slots__ = ("index", "call_id", "name", "arguments", "begun", "extra")

    def __init__(self, index: int, call_id: str | None, name: str | None) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.arguments: list[str] = []
        self.begun = False
        self.extra: dict[str, Any] = {}


def error_from_body(body: Any) -> ProviderResponseError:
    """The error a provider reported as ``{"error": {...}}`` (or a bare string). Codes are
    compared as values: a relay's ``"500"`` is the upstream's ``500``."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        # Not clipped here: the client redacts the whole text first, then clips it.
        return ProviderResponseError(str(error or "unknown error"), retryable=True)
    code = error.get("code")
    if code is None or code == "":
        code = error.get("type")
    status = error.get("status_code", error.get("status"))
    name = code_value(code)
    number = status_of(status, name)
    message = error.get("message")
    text = message if isinstance(message, str) else "provider error"
    if name is None and number is None:
        # An error object with nothing to classify it by: the upstream broke mid-answer.
        kind: FailureClass = "busy"
    else:
        kind = classify(number, name, text)
    return ProviderResponseError(
        text, code=name, status=number, retryable=kind in RETRYABLE_CLASSES
    )


def usage_from(raw: dict[str, Any]) -> Usage:
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0),
        cached_input_tokens=int(prompt_details.get("cached_tokens") or 0),
    )


def _text_of(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    raise ProviderStreamError(f"{what} is {type(value).__name__}, not a string")


class ChatCompletionsReader:
    """Feed it the response body in any chunks; it returns events, ending with one terminal.

    Every shape it cannot read becomes a ``ProviderStreamError`` (the client yields it as a
    ``Failed``), never a ``TypeError`` or ``KeyError`` from deep inside."""

    def __init__(
        self,
        *,
        interleaved_field: str | None = None,
        text_formats: Sequence[TextToolFormat] = ALL_TEXT_FORMATS,
    ) -> None:
        self._sse = SSEDecoder()
        self._gate = TextCallGate(text_formats)
        self._interleaved_field = interleaved_field
        self._reasoning_field: str | None = None
        self._text: list[str] = []
        self._reasoning: list[str] = []
        # The call each index holds now, and every call in the order it began: a server that
        # sends parallel calls all at index 0 (Ollama, SGLang, LiteLLM) reuses an index.
        self._calls: dict[int, _ToolCallParts] = {}
        self._all_calls: list[_ToolCallParts] = []
        self._calls_done = False
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._response_id: str | None = None
        self.finished = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if self.finished:
            return out
        try:
            for event in self._sse.feed(chunk):
                self._handle(event.event, event.data, out)
                if self.finished:
                    break
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc) from exc
        return out

    def close(self) -> list[StreamEvent]:
        """The body ended. Without ``[DONE]`` the response is complete only when it already
        gave its ``finish_reason`` (ik_llama.cpp, llama-box and older TGI never send
        ``[DONE]``); otherwise it was cut off."""
        out: list[StreamEvent] = []
        if self.finished:
            return out
        try:
            for event in self._sse.close():
                self._handle(event.event, event.data, out)
                if self.finished:
                    return out
            if self._finish_reason is not None:
                self._complete(out)
                return out
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc) from exc
        raise ProviderStreamError("stream ended before [DONE]")

    def _shape_error(self, exc: Exception) -> ProviderStreamError:
        return ProviderStreamError(
            f"unexpected stream shape near line {self._sse.lines_read} ({type(exc).__name__})"
        )

    def _handle(self, name: str, data: bytes, out: list[StreamEvent]) -> None:
        if data[:1] != b"{" and data.strip() == b"[DONE]":
            self._complete(out)
            return
        try:
            chunk = parse_json(data)
        except ValueError as exc:
            raise ProviderStreamError(
                f"data line is not JSON (near line {self._sse.lines_read})"
            ) from exc
        if not isinstance(chunk, dict):
            raise ProviderStreamError(
                f"data is not a JSON object (near line {self._sse.lines_read})"
            )
        if name == "error" or chunk.get("error") is not None:
            error = error_from_body(chunk)
            out.append(Failed(reason=str(error), retryable=error.retryable, error=error))
            self.finished = True
            return
        if self._response_id is None:
            self._response_id = chunk.get("id")
        usage = chunk.get("usage")
        if not usage:
            # Groq reports usage inside its own x_groq object on the last chunk.
            extension = chunk.get("x_groq")
            usage = extension.get("usage") if isinstance(extension, dict) else None
        if usage:
            self._usage = usage_from(usage)
        choices = chunk.get("choices")
        if choices:
            self._choice(choices[0], out)

    def _choice(self, choice: dict[str, Any], out: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if delta:
            text = delta.get("content")
            if text:
                text = _text_of(text, "delta.content")
                self._text.append(text)
                shown = self._gate.feed(text)
                if shown:
                    out.append(TextDelta(shown))
            reasoning = delta.get("reasoning_content")
            if reasoning:
                self._reasoning_field = "reasoning_content"
            else:
                reasoning = delta.get("reasoning")
                if reasoning and self._reasoning_field is None:
                    self._reasoning_field = "reasoning"
            if reasoning:
                reasoning = _text_of(reasoning, "delta reasoning")
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
            fragments = delta.get("tool_calls")
            if fragments:
                if isinstance(fragments, dict):  # TGI sends one call as an object, not a list
                    fragments = (fragments,)
                for fragment in fragments:
                    self._tool_fragment(fragment, out)
        finish = choice.get("finish_reason")
        if finish:
            self._finish_reason = _text_of(finish, "finish_reason")
            self._finish_tool_calls(out)

    def _tool_fragment(self, fragment: dict[str, Any], out: list[StreamEvent]) -> None:
        function = fragment.get("function") or {}
        call_id = fragment.get("id") or None
        name = function.get("name") or None
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_without_one(call_id)
        parts = self._calls.get(index)
        if parts is not None and self._starts_another_call(parts, call_id, name):
            parts = None
        if parts is None:
            parts = _ToolCallParts(index, None, None)
            self._calls[index] = parts
            self._all_calls.append(parts)
        if call_id is not None and parts.call_id is None:
            parts.call_id = _text_of(call_id, "tool call id")
        if name is not None and parts.name is None:
            parts.name = _text_of(name, "tool call name")
        for key, value in fragment.items():
            if key not in _FRAGMENT_KEYS and value is not None:
                parts.extra[key] = value
        if not parts.begun and parts.name is not None:
            parts.begun = True
            begun_id = self._id_of(parts)
            out.append(ToolCallBegun(begun_id, parts.name))
            if parts.arguments:  # fragments that came before the name
                out.append(ToolCallArgumentsDelta(begun_id, "".join(parts.arguments)))
        arguments = function.get("arguments")
        if arguments is None or arguments == "":
            return
        if isinstance(arguments, str):
            parts.arguments.append(arguments)
        elif isinstance(arguments, dict | list):
            # llama.cpp (object arguments), TGI and Ollama through LiteLLM send the arguments
            # as a JSON value: it stands for the whole arguments, serialised as the spec wants.
            arguments = json.dumps(arguments, ensure_ascii=False)
            parts.arguments[:] = [arguments]
        else:
            raise ProviderStreamError(
                f"tool call arguments are {type(arguments).__name__}, not a string or object"
            )
        if parts.begun:
            out.append(ToolCallArgumentsDelta(self._id_of(parts), arguments))

    @staticmethod
    def _starts_another_call(parts: _ToolCallParts, call_id: Any, name: Any) -> bool:
        """A fragment with a new id and a name at an index that already holds a named call is
        the next parallel call. A new id without a name continues the call (Kimi sends a
        fresh id with every fragment); the same id and name again only repeat it."""
        return (
            call_id is not None
            and name is not None
            and parts.name is not None
            and parts.call_id is not None
            and call_id != parts.call_id
        )

    def _index_without_one(self, call_id: Any) -> int:
        """Some OpenAI-compatible servers leave ``index`` out: a new id starts a new call, a
        fragment without an id continues the latest one."""
        if call_id:
            for index, parts in self._calls.items():
                if parts.call_id == call_id:
                    return index
            return len(self._calls)
        return max(self._calls, default=0)

    def _id_of(self, parts: _ToolCallParts) -> str:
        """The call's id; a server that never sent one gets a stable made-up id, unique in the
        response, so the result can still be matched to its call."""
        if parts.call_id is None:
            parts.call_id = f"call_{self._all_calls.index(parts)}"
        return parts.call_id

    def _finish_tool_calls(self, out: list[StreamEvent]) -> None:
        if self._calls_done:
            return
        self._calls_done = True
        for parts in self._ordered_calls():
            for call in self._tool_calls(parts):
                out.append(ToolCallDone(call))

    def _ordered_calls(self) -> list[_ToolCallParts]:
        order = {id(parts): n for n, parts in enumerate(self._all_calls)}
        return sorted(self._all_calls, key=lambda parts: (parts.index, order[id(parts)]))

    def _tool_calls(self, parts: _ToolCallParts) -> list[ToolCall]:
        """The call, or the calls a relay glued together: a relay that streams parallel calls
        on one index with an empty name and no new id leaves ``{...}{...}`` as the arguments;
        each complete JSON object is a call of that name (the first keeps the id)."""
        if parts.name is None:
            raise ProviderStreamError(f"tool call {parts.index} never received its name")
        call_id = self._id_of(parts)
        arguments = "".join(parts.arguments)
        extra = dict(parts.extra) or None
        pieces = _glued_objects(arguments)
        if pieces is None:
            return [ToolCall(call_id=call_id, name=parts.name, arguments=arguments, extra=extra)]
        return [
            ToolCall(
                call_id=call_id if n == 0 else f"{call_id}-{n + 1}",
                name=parts.name,
                arguments=piece,
                extra=extra if n == 0 else None,
            )
            for n, piece in enumerate(pieces)
        ]

    def _replay_marker(self) -> dict[str, str] | None:
        """Which delta field the reasoning came in, when that is the interleaved field: the
        request builder replays it only then."""
        field = self._reasoning_field
        if field is not None and field == self._interleaved_field:
            return {"field": field}
        return None

    def _complete(self, out: list[StreamEvent]) -> None:
        self.finished = True
        if self._finish_reason in _INCOMPLETE_REASONS:
            out.append(
                Failed(
                    reason=f"response incomplete: {self._finish_reason}",
                    retryable=False,
                    kind="incomplete",
                )
            )
            return
        if self._finish_reason == "error":
            # vLLM and some gateways end a broken generation this way without an error object.
            out.append(
                Failed(
                    reason="the provider ended the response with finish_reason error",
                    retryable=True,
                    kind="busy",
                )
            )
            return
        self._finish_tool_calls(out)
        text = "".join(self._text)
        text_calls: list[ToolCall] = []
        if self._gate.format is not None:
            parsed = parse_text_calls(text, self._gate.format)
            if parsed is None:
                out.append(
                    Failed(
                        reason=f"a tool call written as text ({self._gate.format}) "
                        "could not be read",
                        retryable=True,
                        kind="broken",
                    )
                )
                return
            text = ""
            for n, (name, arguments) in enumerate(parsed):
                call = ToolCall(call_id=f"call_text_{n}", name=name, arguments=arguments)
                text_calls.append(call)
                out.append(ToolCallDone(call))
        else:
            released = self._gate.release()
            if released:
                out.append(TextDelta(released))
        if not (text or self._reasoning or self._all_calls or text_calls):
            if self._finish_reason is None:
                # Only the role chunk and [DONE]: llama-cpp-python ends a stream it dropped
                # under load this way. Not an answer; another attempt may give one.
                out.append(
                    Failed(
                        reason="the stream ended without any content or finish_reason",
                        retryable=True,
                        kind="broken",
                    )
                )
                return
        items: list[AssistantText | Reasoning | ToolCall] = []
        if self._reasoning:
            items.append(
                Reasoning(
                    protocol=PROTOCOL,
                    text="".join(self._reasoning),
                    opaque=self._replay_marker(),
                )
            )
        if text:
            items.append(AssistantText(text=text))
        for parts in self._ordered_calls():
            items.extend(self._tool_calls(parts))
        items.extend(text_calls)
        out.append(
            Completed(
                items=tuple(items),
                usage=self._usage,
                finish_reason=self._finish_reason,
                response_id=self._response_id,
            )
        )


def _glued_objects(arguments: str) -> list[str] | None:
    """Two or more JSON objects written one after the other, each as its own text; None for
    anything else (one value, or text that is not JSON)."""
    if "}" not in arguments or arguments.count("{") < 2:
        return None
    pieces: list[str] = []
    position, end = 0, len(arguments)
    try:
        while position < end:
            while position < end and arguments[position].isspace():
                position += 1
            if position == end:
                break
            value, next_position = _DECODER.raw_decode(arguments, position)
            if not isinstance(value, dict):
                return None
            pieces.append(arguments[position:next_position])
            position = next_position
    except ValueError:
        return None
    return pieces if len(pieces) > 1 else None
