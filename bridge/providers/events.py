"""What a provider client streams to the turn engine, whichever protocol is on the wire.

A stream yields any number of deltas and ends with exactly one terminal event: ``Completed``
(with the assembled items of this response) or ``Failed``. These are plain slotted dataclasses
rather than pydantic models because hundreds of them are made per response on the hot path;
their content was already checked by the reader that made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bridge.errors import ProviderError
from bridge.providers.failures import FailureClass, classify_error
from bridge.providers.items import AssistantText, Reasoning, ToolCall


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them; 0 where it reported nothing.

    ``estimated``: the server reported no usage (llama-cpp-python ignores
    ``stream_options.include_usage``) and the client counted about four bytes of the request
    and of the answer per token instead (`estimate_usage`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBegun:
    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallDone:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class Completed:
    """The response finished; ``items`` is what it holds, ready to append to the turn."""

    items: tuple[AssistantText | Reasoning | ToolCall, ...]
    usage: Usage | None = None
    finish_reason: str | None = None
    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """The attempt failed. ``retryable`` says whether the same request may succeed; the turn
    engine decides whether to spend another of the turn's attempts on it. ``kind`` is the
    failure's class when the reader knew it (otherwise it is read from ``error``)."""

    reason: str
    retryable: bool
    error: ProviderError | None = field(default=None, compare=False)
    kind: FailureClass | None = None

    @property
    def failure_class(self) -> FailureClass:
        if self.kind is not None:
            return self.kind
        return classify_error(self.error, retryable=self.retryable)


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallBegun
    | ToolCallArgumentsDelta
    | ToolCallDone
    | Completed
    | Failed
)


BYTES_PER_TOKEN = 4
"""A rough average of tokenizers on English and JSON, for estimates only."""


def estimate_usage(
    request_bytes: int, items: tuple[AssistantText | Reasoning | ToolCall, ...]
) -> Usage:
    """Usage counted from sizes when the server reported none, marked ``estimated``."""
    answer = 0
    for item in items:
        if isinstance(item, ToolCall):
            answer += len(item.name) + len(item.arguments)
        else:
            answer += len(item.text)
    return Usage(
        input_tokens=-(-request_bytes // BYTES_PER_TOKEN),
        output_tokens=-(-answer // BYTES_PER_TOKEN),
        estimated=True,
    )
