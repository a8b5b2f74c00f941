"""A scripted OpenAI-compatible Chat Completions server for the application's tests.

Built on the provider tests' ``ReplayServer`` (a real local HTTP/1.1 server): ``answer`` queues
a streamed text answer, ``fail`` an error status, and ``held`` an answer that sends its first
delta and then waits until the test releases it, so a test can act while a turn is streaming.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from providers.provider_replay_server import ReceivedRequest, ReplayServer, Reply


def sse(*payloads: object) -> list[bytes]:
    """Chat Completions stream chunks: one ``data:`` event per payload, then ``[DONE]``."""
    return [f"data: {json.dumps(p)}\n\n".encode() for p in payloads] + [b"data: [DONE]\n\n"]


def text_chunks(*parts: str) -> list[bytes]:
    payloads: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": part}, "finish_reason": None}]}
        for part in parts
    ]
    payloads.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return sse(*payloads)


def with_usage(chunks: list[bytes], usage: tuple[int, int] | None) -> list[bytes]:
    """``chunks`` with a usage chunk (empty ``choices``) before ``[DONE]``, as OpenAI sends it
    when ``stream_options.include_usage`` is on."""
    if usage is None:
        return chunks
    prompt, completion = usage
    report = {
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    return [*chunks[:-1], *sse(report)[:-1], chunks[-1]]


@dataclass
class HeldReply(Reply):
    """Sends the headers and the first chunk, sets ``streaming``, then waits for ``release``."""

    streaming: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class ScriptedProvider(ReplayServer):
    def answer(self, *parts: str, usage: tuple[int, int] | None = None) -> None:
        """Queues a text answer; ``usage`` (input, output tokens) is reported in a last chunk."""
        self.script(Reply(chunks=with_usage(text_chunks(*parts), usage)))

    def reason_then_answer(self, reasoning: list[str], *parts: str) -> None:
        """Queues an answer that first streams ``reasoning_content`` deltas, then ``parts``."""
        thoughts: list[dict[str, Any]] = [
            {"choices": [{"index": 0, "delta": {"reasoning_content": r}, "finish_reason": None}]}
            for r in reasoning
        ]
        chunks = text_chunks(*parts)
        self.script(Reply(chunks=[*sse(*thoughts)[:-1], *chunks]))

    def call_tools(
        self, *calls: tuple[str, dict[str, Any]], usage: tuple[int, int] | None = None
    ) -> None:
        """Queues one answer asking for every (name, arguments) call, in one reply."""
        deltas = [
            {
                "index": index,
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for index, (name, arguments) in enumerate(calls)
        ]
        self.script(
            Reply(
                chunks=with_usage(
                    sse(
                        {"choices": [{"index": 0, "delta": {"tool_calls": deltas}}]},
                        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                    ),
                    usage,
                )
            )
        )

    def break_after(self, *parts: str, times: int = 1) -> None:
        """Queues answers that stream ``parts`` and then end without a finish or ``[DONE]``
        (a connection lost mid-answer): the provider served them, the bridge got no answer."""
        for _ in range(times):
            self.script(Reply(chunks=text_chunks(*parts)[:-2]))

    def fail(self, status: int = 500, times: int = 1) -> None:
        body = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}})
        for _ in range(times):
            self.script(
                Reply(status=status, content_type="application/json", chunks=[body.encode()])
            )

    def held(self, *parts: str) -> HeldReply:
        reply = HeldReply(chunks=text_chunks(*parts))
        self.script(reply)
        return reply

    def bodies(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.requests]

    async def _answer(self, request: ReceivedRequest, writer: asyncio.StreamWriter) -> bool:
        queued = self._script[0] if self._script else None
        if not isinstance(queued, HeldReply):
            return await super()._answer(request, writer)
        self._script.pop(0)
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        writer.write((head + "transfer-encoding: chunked\r\n\r\n").encode("latin-1"))
        first, rest = queued.chunks[0], queued.chunks[1:]
        writer.write(b"%x\r\n%s\r\n" % (len(first), first))
        await writer.drain()
        queued.streaming.set()
        release = asyncio.ensure_future(queued.release.wait())
        stop = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait([release, stop], return_when=asyncio.FIRST_COMPLETED)
        release.cancel()
        stop.cancel()
        if self._stop.is_set():
            return False
        for chunk in rest:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
