"""The audit log pages: filtered by kind, player, tool, server, outcome and time, paged newest
first by a ``seq`` cursor (`bridge.store.audit_pages`), and exported as JSON lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlencode

from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from bridge.console.guard import page, state_of
from bridge.console.query_values import moment, whole_number
from bridge.console.security import Refused, session_of
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState
from bridge.store.audit_pages import MAX_FILTER_CHARS, AuditFilter

FILTER_FIELDS = ("kind", "player", "tool", "server", "outcome", "since", "until")


def chosen_filter(request: Request) -> tuple[AuditFilter, dict[str, str]]:
    """The filter the query string asks for, and its values to show back in the form."""
    values = {
        name: request.query_params.get(name, "").strip()[:MAX_FILTER_CHARS]
        for name in FILTER_FIELDS
    }
    since = moment(values["since"], "since") if values["since"] else None
    until = moment(values["until"], "until") if values["until"] else None
    chosen = AuditFilter(
        kind=values["kind"] or None,
        player=values["player"] or None,
        tool=values["tool"] or None,
        server=values["server"] or None,
        outcome=values["outcome"] or None,
        since=since,
        until=until,
    )
    return chosen, values


def _cursor(request: Request) -> int | None:
    before = request.query_params.get("before", "")
    if not before:
        return None
    return whole_number(before, "before", "an event number")


def audit_page(state: ConsoleState, request: Request, session: Session) -> Response:
    chosen, values = chosen_filter(request)
    result = state.audit.page(chosen, before=_cursor(request), limit=state.config.page_rows)
    shown = {k: v for k, v in values.items() if v}
    older = (
        None
        if result.next_before is None
        else "/audit?" + urlencode({**shown, "before": result.next_before})
    )
    return state.page(
        request,
        "audit.html",
        session,
        events=[(event, json.dumps(event.fields, ensure_ascii=False)) for event in result.events],
        values=values,
        older=older,
        export="/audit.jsonl?" + urlencode(shown),
    )


async def export(request: Request) -> Response:
    state = state_of(request)
    try:
        session_of(request, state.sessions, secure=state.config.secure_cookie)
        chosen, _ = chosen_filter(request)
    except Refused as refused:
        return refused.response()

    def lines() -> Iterator[str]:
        for event in state.audit.walk(chosen, rows=state.config.export_rows):
            record = {
                "seq": event.seq,
                "at": event.at.isoformat(),
                "kind": event.kind,
                "fields": event.fields,
            }
            yield json.dumps(record, ensure_ascii=False) + "\n"

    return StreamingResponse(
        iterate_in_threadpool(lines()),
        media_type="application/x-ndjson",
        headers={"content-disposition": 'attachment; filename="audit.jsonl"'},
    )


ROUTES = [Route("/audit", page(audit_page)), Route("/audit.jsonl", export)]
