"""``remember`` and ``recall``: the model writes and reads memories (`bridge.memory`).

``remember(text, scope)``: ``personal`` (the default) keeps a note about the asker, recalled
only in their own turns; ``server`` keeps a note for everyone and needs the asker to hold
``mineclaw.memory.server`` and, from a public turn as from a private one, the asker's explicit
consent (a yes/no prompt through the ``consent`` port; without one it is refused). The text is
redacted before it is stored, and the asker is shown "remembered: ..." with what was kept.

``recall(query)``: the best matches among the asker's own memories, the server's, and earlier
conversations (the asker's own private turns and the public ones, `bridge.memory.conversations`);
the owner is a filter in the store's SQL. Both results are personal (`HANDLERS`): a later
request replays the call with the result withheld, so another player's turn never carries it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.memory.recall import QuestionVectors, RecallFloor, search
from bridge.memory.records import (
    MAX_MEMORY_CHARS,
    SCOPES,
    SERVER_MEMORY_NODE,
    SERVER_OWNER,
    Memory,
    new_memory_id,
)
from bridge.memory.store import MemoryStore
from bridge.redaction import Redactor
from bridge.tools.registry import CallContext
from bridge.tools.results import ErrorCode, ToolFailure

Notify = Callable[[CallContext, str], Awaitable[None]]
"""Shows the asker the text a ``remember`` kept ("remembered: ...")."""
Consent = Callable[[CallContext, str], Awaitable[bool]]
"""Asks the asker whether a server memory may be kept (every one, whatever the lane)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryToolSettings:
    """``config.yml``'s ``memory`` limits the tools apply (read at every call)."""

    max_chars: int = 500
    max_per_player: int = 200
    recall_limit: int = 5
    floor: RecallFloor = RecallFloor()


class RememberArguments(BaseModel):
    """The handler's own minimum, whatever schema ``tools.yml`` gives the model."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    text: str = Field(min_length=1, max_length=MAX_MEMORY_CHARS)
    scope: Literal["personal", "server"] = "personal"


class RecallArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    query: str = Field(min_length=1, max_length=512)


class MemoryTools:
    """The two handlers over one store. ``settings`` and ``redactor`` read the configuration
    in force; ``notify`` and ``consent`` reach the asker (None: not shown, not asked)."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        settings: Callable[[], MemoryToolSettings],
        redactor: Callable[[], Redactor],
        notify: Notify | None = None,
        consent: Consent | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._settings = settings
        self._redactor = redactor
        self.notify = notify
        self.consent = consent
        self.vectors: QuestionVectors | None = None
        """The question's embedding for a hybrid search (None: keywords alone)."""
        self.written: Callable[[], None] | None = None
        """Told after each memory kept (the embedder catches up)."""
        self._clock = clock

    def handlers(self) -> dict[str, Callable[[dict[str, Any], CallContext], Awaitable[Any]]]:
        return {"remember": self.remember, "recall": self.recall}

    async def remember(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        try:
            args = RememberArguments.model_validate(arguments)
        except ValidationError as exc:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, _first_error(exc)) from None
        settings = self._settings()
        text = " ".join(self._redactor().redact_text(args.text).split())
        if not text:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "text: nothing left to remember")
        if len(text) > settings.max_chars:
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS,
                f"text: at most {settings.max_chars} characters (memory.max_chars)",
            )
        if args.scope == "server":
            await self._may_write_server(context, text)
        else:
            count = await asyncio.to_thread(self._store.count, context.player_uuid)
            if count >= settings.max_per_player:
                raise ToolFailure(
                    ErrorCode.REFUSED,
                    f"{context.player_name} already has {count} memories (memory.max_per_player);"
                    " they can delete some with /mineclaw memory forget",
                )
        memory = Memory(
            memory_id=new_memory_id(),
            scope=args.scope,
            owner_uuid=context.player_uuid if args.scope == "personal" else SERVER_OWNER,
            owner_name=context.player_name,
            text=text,
            source="tool",
            created_at=self._clock(),
            origin=context.lane_id,
        )
        await asyncio.to_thread(self._store.add, memory)
        if self.written is not None:
            self.written()
        if self.notify is not None:
            await self.notify(context, text)
        return {"remembered": text, "id": memory.memory_id, "scope": memory.scope}

    async def _may_write_server(self, context: CallContext, text: str) -> None:
        if SERVER_MEMORY_NODE not in context.granted:
            raise ToolFailure(
                ErrorCode.REFUSED,
                f"a server memory needs {SERVER_MEMORY_NODE}, which {context.player_name}"
                " does not hold; keep it as a personal memory instead",
            )
        # Asked in a public turn as in a private one: the text may be another player's
        # overheard line, a web page's or an MCP or Function result the model passed on, and
        # only the asker's own yes makes it everyone's.
        if self.consent is None or not await self.consent(context, text):
            raise ToolFailure(
                ErrorCode.REFUSED,
                f"{context.player_name} did not agree to share this with the whole server",
            )

    async def recall(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        try:
            args = RecallArguments.model_validate(arguments)
        except ValidationError as exc:
            raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, _first_error(exc)) from None
        settings = self._settings()
        found = await search(
            self._store,
            self.vectors,
            args.query,
            asker_uuid=context.player_uuid,
            limit=settings.recall_limit,
            floor=settings.floor,
            scopes=SCOPES,
        )
        redact = self._redactor().redact_text
        return {
            "memories": [
                {
                    "id": hit.memory.memory_id,
                    "scope": hit.memory.scope,
                    "when": hit.memory.created_at.strftime("%Y-%m-%d %H:%M UTC"),
                    "text": redact(hit.memory.text),
                }
                for hit in found
            ]
        }


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
    return f"{where}: {error['msg']}"
