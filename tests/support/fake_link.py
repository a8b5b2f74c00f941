"""The one stand-in for the plugin link in unit tests (the e2e tests run the real one).

It implements the link port the bridge talks to (``connected``, ``request``, ``send_event``),
keeps every frame sent in order (``sent``, ``of(name)``, ``wait_for``) and answers a request by
its name: a responder of the request data returns the answer (or an awaitable of it) or raises
``LinkRequestError``; a request with no responder goes to ``default``, and with no default it
fails as the plugin would, with ``unknown_type``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import OutputChatResult, WireModel

Responder = Callable[[WireModel], WireModel | Awaitable[WireModel]]
WAIT_S = 20.0
"""A bound on ``wait_for``, never a measured threshold."""


def delivered(data: WireModel) -> WireModel:
    """The answer of a plugin that shows every line it is sent."""
    return OutputChatResult(delivered=1)


class FakeLink:
    def __init__(
        self,
        responders: Mapping[str, Responder] | None = None,
        *,
        default: Responder | None = None,
    ) -> None:
        self.responders: dict[str, Responder] = dict(responders or {})
        self.default = default
        self.connected = True
        self.sent: list[tuple[str, WireModel]] = []
        """Every request and event, in the order sent."""
        self.changed = asyncio.Event()

    async def request(self, name: str, data: WireModel, *, timeout: float | None = None) -> Any:
        self._record(name, data)
        responder = self.responders.get(name, self.default)
        if responder is None:
            raise LinkRequestError(ErrorCode.UNKNOWN_TYPE, f"{name} is not scripted")
        answer = responder(data)
        if isinstance(answer, WireModel):
            return answer
        return await answer

    async def send_event(self, name: str, data: WireModel) -> None:
        self._record(name, data)

    def _record(self, name: str, data: WireModel) -> None:
        self.sent.append((name, data))
        self.changed.set()

    def of(self, name: str) -> list[Any]:
        """The data of every frame named ``name``, in order."""
        return [data for sent, data in self.sent if sent == name]

    async def wait_for(self, matches: Callable[[str, Any], bool], since: int = 0) -> Any:
        """The data of the first frame from index ``since`` on that ``matches``."""
        async with asyncio.timeout(WAIT_S):
            while True:
                for name, data in self.sent[since:]:
                    if matches(name, data):
                        return data
                self.changed.clear()
                await self.changed.wait()
