"""The console's guards: response headers on everything, a session on every page but the
login, the owner role on every change, and a CSRF token on every POST.

- **CSP**: scripts, styles, images and fetches from the console itself only; no inline script
  or style, no framing, no form posting elsewhere. A player named ``<script>`` is escaped by
  the templates, and even a value that slipped through could run nothing.
- **CSRF**: each session has a random token; every form carries it and every POST must
  return it (compared in constant time). A POST whose ``Origin`` names another site is refused
  before that, and the session cookie is ``SameSite=Strict`` besides.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from bridge.console.sessions import Session, SessionBook, cookie_name

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # The login link carries its token in the URL: no page of the console tells anyone where
    # the browser came from or goes to.
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
}

HSTS = ("strict-transport-security", "max-age=31536000")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SecurityHeaders:
    """ASGI middleware adding `HEADERS` to every HTTP response (errors and static files too)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        # Served over TLS by the console itself (not a proxy's plain hop): browsers are told to
        # never try this host over plain http again.
        tls = scope.get("scheme") == "https"

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.decode("latin-1").lower() not in HEADERS
                    and name.decode("latin-1").lower() != HSTS[0]
                ]
                headers.extend((k.encode(), v.encode()) for k, v in HEADERS.items())
                if tls:
                    headers.append((HSTS[0].encode(), HSTS[1].encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class Refused(Exception):
    """A request the guards turn away; rendered as a plain text response."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason

    def response(self) -> Response:
        return PlainTextResponse(self.reason + "\n", status_code=self.status)


def served_port(request: Request) -> int:
    """The port the console's socket listens on (not the Host header, which the client
    writes)."""
    server = request.scope.get("server")
    return int(server[1]) if server and server[1] is not None else 0


def session_cookie(request: Request, *, secure: bool) -> str:
    """The session cookie's name for the port this request reached."""
    return cookie_name(served_port(request), secure=secure)


def session_of(request: Request, sessions: SessionBook, *, secure: bool = False) -> Session:
    """The request's session, or `Refused` (401) sending the visitor to the login command."""
    session = sessions.get(request.cookies.get(session_cookie(request, secure=secure)))
    if session is not None and session.port != served_port(request):
        session = None  # issued by a console on another port of this host
    if session is None:
        raise Refused(401, "not logged in: run `mineclaw-bridge console` for a login link")
    return session


def check_post(request: Request, session: Session, form: Any, *, owner: bool) -> None:
    """The guards of a change: same origin, the session's CSRF token, and the role."""
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        if urlsplit(origin).netloc != request.headers.get("host", ""):
            raise Refused(403, "refused: the request came from another site")
    token = form.get("csrf") if form is not None else None
    if not isinstance(token, str) or not session.csrf_matches(token):
        raise Refused(403, "refused: missing or wrong CSRF token (reload the page)")
    if owner and not session.owner:
        raise Refused(403, "refused: only an owner may do this (you are logged in as a viewer)")
