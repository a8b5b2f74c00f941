"""Scripted stand-ins for the turn engine's ports: a model, tools, output and an archive."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from bridge.errors import LinkError, StoreError, ToolError
from bridge.providers.events import Completed, Failed, StreamEvent, TextDelta, Usage
from bridge.providers.items import AssistantText, ProviderRequest, ToolCall, ToolResult
from bridge.store.archive import ArchivedTurn
from bridge.turns.ports import PlayerRef, TurnContext

STEVE = PlayerRef(uuid="00000000-0000-0000-0000-000000000001", name="Steve")
ALEX = PlayerRef(uuid="00000000-0000-0000-0000-000000000002", name="Alex")


@dataclass
class Pause:
    """A script step: signal `reached`, then wait for `release` before going on."""

    reached: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


Step = StreamEvent | Pause | BaseException


def answer(text: str, *, input_tokens: int = 0, deltas: int = 1) -> list[Step]:
    """A response that streams `text` in `deltas` pieces and completes with it."""
    size = max(1, -(-len(text) // deltas))
    pieces: list[Step] = [TextDelta(text[i : i + size]) for i in range(0, len(text), size)]
    usage = Usage(input_tokens=input_tokens) if input_tokens else None
    return [*pieces, Completed(items=(AssistantText(text=text),), usage=usage)]


def tool_calls(*calls: tuple[str, str, str]) -> list[Step]:
    """A response asking for tools: (call_id, name, arguments) each."""
    items = tuple(ToolCall(call_id=c, name=n, arguments=a) for c, n, a in calls)
    return [Completed(items=items)]


def failure(reason: str = "HTTP 503", *, retryable: bool = True) -> list[Step]:
    return [
        TextDelta("partial text of a failed attempt"),
        Failed(reason=reason, retryable=retryable),
    ]


class ScriptedModel:
    """Each call to the model plays the next script; every request is kept for inspection."""

    def __init__(self, scripts: Sequence[Sequence[Step]]) -> None:
        self.scripts = [list(script) for script in scripts]
        self.requests: list[ProviderRequest] = []
        self.closed = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if not self.scripts:
            raise AssertionError("the model was called more often than scripted")
        script = self.scripts.pop(0)
        try:
            for step in script:
                if isinstance(step, Pause):
                    step.reached.set()
                    await step.release.wait()
                elif isinstance(step, BaseException):
                    raise step
                else:
                    yield step
        finally:
            self.closed += 1


@dataclass
class RecordingOutput:
    action_bars: list[tuple[str, str]] = field(default_factory=list)
    replies: list[tuple[str, str]] = field(default_factory=list)
    asker_replies: list[tuple[str, str]] = field(default_factory=list)
    """Public answers that reached their asker alone (a personal result)."""
    failures: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    status_lines: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    """Every action-bar frame in order: model text, or ``message_key {values}``."""
    link_down: bool = False

    async def action_bar(self, player: PlayerRef, text: str) -> None:
        if self.link_down:
            raise LinkError("link is down")
        self.action_bars.append((player.uuid, text))
        self.frames.append(text)

    async def action_bar_line(
        self, player: PlayerRef, message_key: str, values: dict[str, str]
    ) -> None:
        if self.link_down:
            raise LinkError("link is down")
        self.status_lines.append((player.uuid, message_key, dict(values)))
        self.frames.append(f"{message_key} {values}".strip())

    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        if self.link_down:
            raise LinkError("link is down")
        self.replies.append((player.name, "\n".join(lines)))

    async def reply_to_asker(self, player: PlayerRef, lines: Sequence[str]) -> None:
        if self.link_down:
            raise LinkError("link is down")
        self.asker_replies.append((player.name, "\n".join(lines)))

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        if self.link_down:
            raise LinkError("link is down")
        self.failures.append((player.uuid, message_key, dict(values)))


@dataclass
class RecordingTools:
    """Echoes each call; names in `refuse` raise ToolError, in `crash` raise RuntimeError."""

    refuse: frozenset[str] = frozenset()
    crash: frozenset[str] = frozenset()
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    writes: frozenset[str] = frozenset({"run_command"})
    """Tools with side effects: the engine runs them alone, in order."""

    def side_effect_free(self, name: str) -> bool:
        return name not in self.writes

    async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
        self.calls.append((context.turn_id, call.name, call.arguments))
        if call.name in self.refuse:
            raise ToolError(f"{call.name} is not allowed for {context.player.name}")
        if call.name in self.crash:
            raise RuntimeError("tool bug")
        return ToolResult(call_id=call.call_id, output=f"ran {call.name} {call.arguments}")


@dataclass
class MemoryArchive:
    turns: list[ArchivedTurn] = field(default_factory=list)
    fail: bool = False

    def append(self, turn: ArchivedTurn) -> None:
        if self.fail:
            raise StoreError("disk full")
        self.turns.append(turn)


class ManualClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)
