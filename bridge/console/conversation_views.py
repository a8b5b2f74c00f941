"""The conversations page: the archive of public and private turns, as stored (redacted when
they were written), newest first or one player's, paged by a cursor over the archive's keys.
The console holds every node, as the server console does in game: anyone logged in reads."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bridge.console.guard import page
from bridge.console.query_values import whole_number
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState

MAX_NAME_CHARS = 64
MAX_ITEM_CHARS = 4_000
TURNS_PER_PAGE = 20


def _item_text(item: object) -> tuple[str, str]:
    """(what, text) of one archived item: a message's role and words, or a call or result
    as its JSON, cut to `MAX_ITEM_CHARS`."""
    if isinstance(item, dict):
        what = str(item.get("role") or item.get("type") or "item")
        content = item.get("content", item.get("text"))
        text = content if isinstance(content, str) else json.dumps(item, ensure_ascii=False)
    else:
        what, text = "item", json.dumps(item, ensure_ascii=False)
    return what, text if len(text) <= MAX_ITEM_CHARS else text[:MAX_ITEM_CHARS] + "…"


def conversations(state: ConsoleState, request: Request, session: Session) -> Response:
    player = request.query_params.get("player", "").strip()[:MAX_NAME_CHARS]
    before = request.query_params.get("before", "")
    cursor = whole_number(before, "before", "a turn number") if before else None
    turns, older = state.archive.page(player=player or None, before=cursor, limit=TURNS_PER_PAGE)
    shown = [(turn, [_item_text(item) for item in turn.items]) for turn in turns]
    return state.page(
        request,
        "conversations.html",
        session,
        turns=shown,
        player=player,
        older=older,
    )


ROUTES = [Route("/conversations", page(conversations))]
