"""The memories page: the players' and the server's memories, newest first or one player's,
with the rights the console has in game (it holds every node): anyone logged in reads, an
owner may forget a memory (a POST with the CSRF token, audited as ``memory.forget``). A player
is named by their UUID, or by a name: then every player who wrote memories under that name is
shown, each row with its UUID (a name is not who a player is; the console has no server to ask
who is online by it)."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bridge.console.guard import change, page
from bridge.console.query_values import whole_number
from bridge.console.security import Refused
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState

MAX_NAME_CHARS = 64
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def memories_page(state: ConsoleState, request: Request, session: Session) -> Response:
    store = state.backend.memories
    player = request.query_params.get("player", "").strip()[:MAX_NAME_CHARS]
    number = request.query_params.get("page", "0")
    shown = whole_number(number, "page", "a page number", most=999_999)
    rows = state.config.page_rows
    memories = []
    more = False
    if store is not None:
        if player:
            owners = [player.lower()] if UUID.fullmatch(player) else store.owners_named(player)
            memories = [m for owner in owners for m in reversed(store.personal(owner))]
        else:
            found = store.everything(limit=rows + 1, offset=shown * rows)
            memories, more = found[:rows], len(found) > rows
    return state.page(
        request,
        "memories.html",
        session,
        enabled=store is not None,
        memories=memories,
        player=player,
        shown=shown,
        more=more,
        message=request.query_params.get("done"),
    )


def forget(state: ConsoleState, request: Request, session: Session, form: Any) -> Response:
    memory_id = form.get("memory_id")
    if not isinstance(memory_id, str) or not 1 <= len(memory_id) <= 64:
        raise Refused(400, "memory_id: missing")
    gone = state.backend.forget_memory(memory_id, session.who)
    return RedirectResponse(
        "/memories?done=" + ("forgotten" if gone else "missing"), status_code=303
    )


ROUTES = [
    Route("/memories", page(memories_page)),
    Route("/memories/forget", change(forget), methods=["POST"]),
]
