"""The soak's model: an OpenAI-compatible streaming server on loopback that answers each
question by its tag and keeps a log of what it served, so the checker can hold the bridges'
records against it.

Many players ask at once, so a queue of scripted replies (the e2e tests' ``ScriptedProvider``)
cannot say which answer goes to whom: here the answer is made from the request itself. The last
user message's tag (``q-...``) comes back as ``A:<tag>``; every completed stream reports the
same usage (``TOKENS``). Faults the soak turns on: ``stall`` holds the next streams after their
first chunk until ``release``; ``breaks`` ends the next streams after their first chunk without
a finish, a usage chunk or ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

from tests.app.scripted_provider import text_chunks, with_usage
from tests.providers.provider_replay_server import ReceivedRequest, ReplayServer

TOKENS = (11, 7)
"""(input, output) tokens each completed stream reports."""
TAG = re.compile(r"q-[a-z0-9-]+")


@dataclass
class Served:
    """One model request as the provider saw it."""

    tag: str | None
    bridge: str
    started: float
    ended: float = 0.0
    tokens: int = 0
    """Tokens reported to the bridge (0 for a stream that did not complete)."""
    held: bool = False
    """Held by a stall: the bridge may have given the stream up (its own deadline) before the
    rest was written, and billed its estimate instead; the provider cannot tell."""
    outcome: str = "streaming"
    """``completed``, ``broken`` (the soak's fault) or ``cut`` (the bridge went away)."""


def _last_user_tag(body: dict[str, Any]) -> str | None:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            found = TAG.findall(text)
            return found[-1] if found else None
    return None


class SoakProvider(ReplayServer):
    def __init__(self) -> None:
        super().__init__()
        self.log: list[Served] = []
        self.stall = False
        self.breaks = 0
        self.release = asyncio.Event()

    def stall_streams(self) -> None:
        self.release = asyncio.Event()
        self.stall = True

    def unstall(self) -> None:
        self.stall = False
        self.release.set()

    def records(self) -> list[dict[str, Any]]:
        return [asdict(served) for served in self.log]

    async def _answer(self, request: ReceivedRequest, writer: asyncio.StreamWriter) -> bool:
        try:
            body = request.json()
        except ValueError:
            body = {}
        tag = _last_user_tag(body if isinstance(body, dict) else {})
        # Each bridge has its own key (providers.yml), so the log says who asked.
        bridge = request.headers.get("authorization", "").rsplit("-", 1)[-1]
        served = Served(tag=tag, bridge=bridge, started=time.time())
        self.log.append(served)
        chunks = with_usage(text_chunks(f"A:{tag} ", "done."), TOKENS)
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        breaking = self.breaks > 0
        if breaking:
            self.breaks -= 1
        try:
            writer.write((head + "transfer-encoding: chunked\r\n\r\n").encode("latin-1"))
            writer.write(b"%x\r\n%s\r\n" % (len(chunks[0]), chunks[0]))
            await writer.drain()
            if breaking:
                served.outcome, served.ended = "broken", time.time()
                writer.transport.abort()
                return False
            if self.stall:
                served.held = True
                release = asyncio.ensure_future(self.release.wait())
                stop = asyncio.ensure_future(self._stop.wait())
                await asyncio.wait([release, stop], return_when=asyncio.FIRST_COMPLETED)
                release.cancel()
                stop.cancel()
                if self._stop.is_set():
                    served.outcome, served.ended = "cut", time.time()
                    return False
            for chunk in chunks[1:]:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            served.outcome, served.ended = "cut", time.time()
            return False
        served.outcome, served.ended = "completed", time.time()
        served.tokens = sum(TOKENS)
        return True
