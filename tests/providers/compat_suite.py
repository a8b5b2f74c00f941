"""The compatibility fixtures of ``tests/providers/compat``: loading them and checking a result.

Each fixture is one server family's quirk, written from the shape a public issue or the
server's documentation shows (the file's header names the source). ``expect`` says what the
bridge must make of it: ``completed`` with its text, reasoning, tool calls and usage, or
``failed`` with a failure class and whether it may be retried.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bridge.providers.events import Completed, Failed
from bridge.providers.items import ApiType, AssistantText, Reasoning, ToolCall

COMPAT_DIR = Path(__file__).resolve().parent / "compat"


@dataclass(frozen=True)
class Expect:
    outcome: str
    text: str | None = None
    reasoning: str | None = None
    replay_field: str | None = None
    tool_calls: tuple[tuple[str, Any], ...] = ()
    call_ids: tuple[str, ...] = ()
    usage: tuple[int, int] | None = None
    failure_class: str | None = None
    retryable: bool | None = None
    pause: float | None = None


@dataclass(frozen=True)
class Fixture:
    name: str
    server: str
    protocol: ApiType
    body: bytes
    expect: Expect
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    interleaved: str | None = None

    @property
    def streams(self) -> bool:
        return self.status == 200

    def chunks(self) -> list[bytes]:
        """The body as a server would write it: one chunk per event (or per line ending)."""
        separator = b"\r\r" if b"\r\r" in self.body else b"\n\n"
        parts = self.body.split(separator)
        out = [part + separator for part in parts[:-1]]
        return out + ([parts[-1]] if parts[-1] else [])


def load(path: Path) -> Fixture:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    body = raw["body"]
    if raw.get("line_endings") == "cr":
        body = body.replace("\n", "\r")
    expect = raw["expect"]
    return Fixture(
        name=path.stem,
        server=raw["server"],
        protocol=raw["protocol"],
        body=body.encode("utf-8"),
        status=raw.get("status", 200),
        content_type=raw.get("content_type", "text/event-stream"),
        headers=dict(raw.get("headers") or {}),
        interleaved=raw.get("interleaved"),
        expect=Expect(
            outcome=expect["outcome"],
            text=expect.get("text"),
            reasoning=expect.get("reasoning"),
            replay_field=expect.get("replay_field"),
            tool_calls=tuple((name, args) for name, args in expect.get("tool_calls") or ()),
            call_ids=tuple(expect.get("call_ids") or ()),
            usage=tuple(expect["usage"]) if "usage" in expect else None,  # type: ignore[arg-type]
            failure_class=expect.get("class"),
            retryable=expect.get("retryable"),
            pause=expect.get("pause"),
        ),
    )


FIXTURES = tuple(load(path) for path in sorted(COMPAT_DIR.glob("*.yaml")))


def check_final(fixture: Fixture, final: Completed | Failed) -> None:
    expect = fixture.expect
    if expect.outcome == "failed":
        assert isinstance(final, Failed), final
        assert final.failure_class == expect.failure_class, final
        assert final.retryable is expect.retryable, final
        return
    assert isinstance(final, Completed), final
    texts = [i.text for i in final.items if isinstance(i, AssistantText)]
    if expect.text is not None:
        assert texts == [expect.text], texts
    reasoning = [i for i in final.items if isinstance(i, Reasoning)]
    if expect.reasoning is not None:
        assert [r.text for r in reasoning] == [expect.reasoning], reasoning
        replay = {"field": expect.replay_field} if expect.replay_field else None
        assert reasoning[0].opaque == replay, reasoning
    calls = [i for i in final.items if isinstance(i, ToolCall)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == list(expect.tool_calls), calls
    assert len({c.call_id for c in calls}) == len(calls)  # every result can find its call
    if expect.call_ids:
        assert tuple(c.call_id for c in calls) == expect.call_ids
    if expect.usage is not None:
        assert final.usage is not None
        assert (final.usage.input_tokens, final.usage.output_tokens) == expect.usage
