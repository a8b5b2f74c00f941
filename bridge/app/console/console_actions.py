"""The bridge's end of the console's channel (`bridge.console.channel`): a loopback listener on
the bridge's loop that takes the console process's few actions and does them with the
network's runtimes (`NetworkConsole`).

Every action is blocking (a store write, a republish of every server's plane, the provider
probes of the status page) and runs in a worker thread, so the loop only reads lines, each
bounded by `MAX_FRAME`. A connection that does not open with the token is closed unread; so is
one that sends a line the channel does not carry, or more than `MAX_FRAME` bytes without one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
import secrets
from typing import Any

from pydantic import ValidationError

from bridge.app.console.console_binding import NetworkConsole
from bridge.console.channel import (
    ACTION,
    MAX_FRAME,
    Action,
    ForgetAction,
    Hello,
    RedeemAction,
    Reply,
    ReviewAction,
    StatusAction,
    VersionAction,
    encode,
)
from bridge.errors import MineclawError
from bridge.store.console_logins import ConsoleLogins

log = logging.getLogger(__name__)

HELLO_WAIT_S = 10.0
"""How long a connection may take to say the token."""


class ConsoleActions:
    """Start with ``await ConsoleActions.start(backend, logins)``; ``port`` and ``token`` go to
    the console process; ``await close()``."""

    def __init__(self, backend: NetworkConsole, logins: ConsoleLogins) -> None:
        self._backend = backend
        self._logins = logins
        self.token = secrets.token_urlsafe(32)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self.port = 0

    @classmethod
    async def start(cls, backend: NetworkConsole, logins: ConsoleLogins) -> ConsoleActions:
        actions = cls(backend, logins)
        actions._server = await asyncio.start_server(
            actions._serve, host="127.0.0.1", port=0, limit=MAX_FRAME
        )
        actions.port = int(actions._server.sockets[0].getsockname()[1])
        return actions

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            hello = await asyncio.wait_for(reader.readline(), HELLO_WAIT_S)
            given = Hello.model_validate_json(hello).token
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                log.warning("a connection to the console channel with a wrong token, closed")
                return
            while line := await reader.readline():
                writer.write(encode(await self._answer(line)))
                await writer.drain()
        except (ValueError, ValidationError, TimeoutError, OSError):
            return  # a long line, a broken frame, a silent or gone peer: closed unread
        finally:
            self._connections.discard(writer)
            writer.close()

    async def _answer(self, line: bytes) -> Reply:
        try:
            action = ACTION.validate_json(line)
        except ValidationError as exc:
            return Reply(ok=False, error="refused", message=_first_error(exc))
        try:
            value = await asyncio.to_thread(self._do, action)
        except KeyError as exc:
            return Reply(ok=False, error="unknown", message=str(exc.args[0]))
        except MineclawError as exc:
            return Reply(ok=False, error="failed", message=str(exc)[:2000])
        return Reply(ok=True, value=value)

    def _do(self, action: Action) -> Any:
        backend = self._backend
        match action:
            case ReviewAction(name=name, reviewer=reviewer):
                backend.accept_review(name, reviewer)
                return None
            case ForgetAction(memory_id=memory_id, who=who):
                return backend.forget_memory(memory_id, who) is not None
            case RedeemAction(token=token):
                redeemed = self._logins.redeem(token)
                return None if redeemed is None else dataclasses.asdict(redeemed)
            case StatusAction():
                return json.loads(json.dumps(dataclasses.asdict(backend.status())))
            case VersionAction():
                return backend.plane().version

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._connections):  # the console's open connection
                writer.close()
            await self._server.wait_closed()
        self._logins.close()


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "frame"
    return f"{where}: {first['msg']}"[:2000]
