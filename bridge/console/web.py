"""The console's Starlette application: login by one-time link, logout, the status page, the
static files of the package, and the Functions, audit and usage pages of their modules."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from bridge.console import (
    audit_views,
    conversation_views,
    function_views,
    memory_views,
    usage_views,
)
from bridge.console.guard import change, page, state_of
from bridge.console.security import SecurityHeaders, served_port, session_cookie
from bridge.console.sessions import Session
from bridge.console.state import PACKAGE_DIR, ConsoleState


async def login(request: Request) -> Response:
    """Redeem a one-time link: a session cookie and a page that moves on to the console (by a
    same-site navigation, so the SameSite=Strict cookie goes with it). A second use, an expired
    or unknown token: 403, with nothing said about which."""
    state = state_of(request)
    token = request.query_params.get("token", "")
    redeemed = await run_in_threadpool(state.backend.redeem_login, token)
    if redeemed is None:
        return state.page(request, "login_refused.html", None, status=403)
    session = state.sessions.open(redeemed.role, redeemed.issued_by, port=served_port(request))
    response = state.page(request, "logged_in.html", session)
    response.set_cookie(
        session_cookie(request, secure=state.config.secure_cookie),
        session.session_id,
        max_age=state.config.session_minutes * 60,
        path="/",
        httponly=True,
        samesite="strict",
        secure=state.config.secure_cookie,
    )
    return response


def logout(state: ConsoleState, request: Request, session: Session, form: Any) -> Response:
    state.sessions.close(session.session_id)
    response = RedirectResponse("/logged-out", status_code=303)
    response.delete_cookie(
        session_cookie(request, secure=state.config.secure_cookie),
        path="/",
        secure=state.config.secure_cookie,
        httponly=True,
        samesite="strict",
    )
    return response


async def logged_out(request: Request) -> Response:
    return state_of(request).page(request, "logged_out.html", None)


def status(state: ConsoleState, request: Request, session: Session) -> Response:
    return state.page(request, "status.html", session, status_view=state.backend.status())


async def index(request: Request) -> Response:
    return RedirectResponse("/functions", status_code=303)


async def no_icon(request: Request) -> Response:
    """Browsers ask for one on every first visit; none is drawn."""
    return Response(status_code=204)


async def source_css(request: Request) -> Response:
    return Response(function_views.source_css(), media_type="text/css")


def console_app(state: ConsoleState) -> Any:
    """The ASGI application (Starlette inside the security headers)."""
    routes = [
        Route("/", index),
        Route("/login", login),
        Route("/logout", change(logout, owner=False), methods=["POST"]),
        Route("/logged-out", logged_out),
        Route("/status", page(status)),
        Route("/source.css", source_css),
        Route("/favicon.ico", no_icon),
        *function_views.ROUTES,
        *audit_views.ROUTES,
        *usage_views.ROUTES,
        *memory_views.ROUTES,
        *conversation_views.ROUTES,
        Mount("/static", StaticFiles(directory=PACKAGE_DIR / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.console = state
    return SecurityHeaders(app)
