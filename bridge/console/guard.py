"""Endpoint wrappers: every page resolves its session first; every change also passes the
POST guards. Blocking reads run in Starlette's thread pool, off the console's event loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from bridge.console.security import Refused, check_post, session_of
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState

View = Callable[[ConsoleState, Request, Session], Response]
Change = Callable[[ConsoleState, Request, Session, Any], Response]


def state_of(request: Request) -> ConsoleState:
    state: ConsoleState = request.app.state.console
    return state


def page(view: View) -> Callable[[Request], Awaitable[Response]]:
    """A GET page for any logged-in role."""

    async def endpoint(request: Request) -> Response:
        state = state_of(request)
        try:
            session = session_of(request, state.sessions, secure=state.config.secure_cookie)
            return await run_in_threadpool(view, state, request, session)
        except Refused as refused:
            return refused.response()

    return endpoint


def change(view: Change, *, owner: bool = True) -> Callable[[Request], Awaitable[Response]]:
    """A POST: same origin, CSRF token, and the owner role unless ``owner=False``."""

    async def endpoint(request: Request) -> Response:
        state = state_of(request)
        try:
            session = session_of(request, state.sessions, secure=state.config.secure_cookie)
            form = await request.form(max_files=0, max_fields=64)
            check_post(request, session, form, owner=owner)
            return await run_in_threadpool(view, state, request, session, form)
        except Refused as refused:
            return refused.response()

    return endpoint
