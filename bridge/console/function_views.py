"""The Functions pages: the catalogue with each Function's review state, and one Function
with its source (line numbers, highlighting), capabilities, limits, hash, the skills naming it,
its review (the diff against the last reviewed source) and its calls from the audit log."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JavascriptLexer
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bridge.console.guard import change, page
from bridge.console.security import Refused
from bridge.console.sessions import Session
from bridge.console.state import ConsoleState
from bridge.control.functions_file import FunctionSpec
from bridge.functions.dry_run import dry_run, verdict
from bridge.functions.engine import SandboxError
from bridge.functions.host import PLAYER_REF
from bridge.functions.review import function_references, skill_texts
from bridge.functions.review_state import review_diff
from bridge.policy.whitelist import compile_whitelist
from bridge.store.audit_pages import AuditFilter

# Classes, never inline styles (the CSP allows none); the stylesheet is /static/source.css.
_FORMATTER = HtmlFormatter(linenos="table", cssclass="source", wrapcode=True)
CALL_ROWS = 50
MAX_ARGS_CHARS = 65_536


def source_css() -> str:
    return str(_FORMATTER.get_style_defs(".source"))  # type: ignore[no-untyped-call]


def _highlighted(spec: FunctionSpec) -> str:
    # Pygments escapes every character of the source it emits; the result is markup of ours.
    return str(highlight(spec.on_call, JavascriptLexer(), _FORMATTER))


def catalogue(state: ConsoleState, request: Request, session: Session) -> Response:
    plane = state.backend.plane()
    limits = plane.config.functions
    rows = [
        {
            "spec": spec,
            "review": state.backend.reviews.state(spec, limits),
            "offered": state.backend.reviews.may_offer(spec, limits),
        }
        for spec in plane.functions.functions
    ]
    return state.page(
        request, "functions.html", session, rows=rows, require_review=limits.require_review
    )


def one_function(state: ConsoleState, request: Request, session: Session) -> Response:
    plane = state.backend.plane()
    name = request.path_params["name"]
    spec = plane.functions.get(name)
    if spec is None:
        return state.page(request, "missing.html", session, status=404, name=name)
    limits = plane.config.functions
    book = state.backend.reviews
    store = book.store
    last = None if store is None else store.latest(spec.name)
    skills = sorted(
        {text.file for text in skill_texts(plane.skills) if name in function_references(text.text)}
    )
    calls = state.audit.page(AuditFilter(tool=name), before=None, limit=CALL_ROWS)
    return state.page(
        request,
        "function.html",
        session,
        spec=spec,
        source=_highlighted(spec),
        review=book.state(spec, limits),
        offered=book.may_offer(spec, limits),
        reviewed_now=book.is_reviewed(spec),
        diff=review_diff(spec, last),
        last=last,
        limits=limits.model_dump(),
        skills=skills,
        calls=calls.events,
        message=request.query_params.get("done"),
    )


def review(state: ConsoleState, request: Request, session: Session, form: Any) -> Response:
    name = request.path_params["name"]
    spec = state.backend.plane().functions.get(name)
    if spec is None:
        return state.page(request, "missing.html", session, status=404, name=name)
    if form.get("source_sha256") != spec.source_sha256:
        # The file changed between reading the diff and pressing the button: what the owner
        # read is not what would be accepted.
        return RedirectResponse(f"/functions/{name}?done=changed", status_code=303)
    state.backend.accept_review(name, session.who)
    return RedirectResponse(f"/functions/{name}?done=reviewed", status_code=303)


def run_dry(state: ConsoleState, request: Request, session: Session, form: Any) -> Response:
    """The dry-run form: the same call as `mineclaw-bridge functions run` (nothing performed),
    on a loop of this request's thread."""
    plane = state.backend.plane()
    name = request.path_params["name"]
    if plane.functions.get(name) is None:
        return state.page(request, "missing.html", session, status=404, name=name)
    text = str(form.get("args") or "{}")
    player = str(form.get("player") or "")
    approve = str(form.get("approve") or "yes")
    if len(text) > MAX_ARGS_CHARS:
        raise Refused(400, f"args: more than {MAX_ARGS_CHARS} characters")
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        raise Refused(400, f"args: not JSON: {exc}") from None
    if re.fullmatch(PLAYER_REF, player) is None:
        raise Refused(400, "player: a player name (1-16 of A-Z a-z 0-9 _) or a UUID")
    if approve not in ("yes", "no", "timeout"):
        raise Refused(400, "approve: yes, no or timeout")
    tools = frozenset(tool for tool, spec in plane.tools.tools.items() if spec.enabled)
    try:
        outcome = asyncio.run(
            dry_run(
                plane.functions,
                plane.config.functions,
                name,
                arguments,
                player,
                approve=approve,  # type: ignore[arg-type]  # checked above
                known_tools=tools,
                never=compile_whitelist(plane.whitelist_file).never,
            )
        )
    except SandboxError as exc:
        raise Refused(503, f"the sandbox could not start: {exc}") from None
    operations = [
        (
            record,
            "-" if record.input is None else json.dumps(record.input, ensure_ascii=False),
            verdict(record, approve),  # type: ignore[arg-type]  # checked above
        )
        for record in outcome.operations
    ]
    return state.page(
        request,
        "dry_run.html",
        session,
        name=name,
        player=player,
        approve=approve,
        outcome=outcome,
        operations=operations,
        result=json.dumps(outcome.result, indent=2, ensure_ascii=False),
    )


ROUTES = [
    Route("/functions", page(catalogue)),
    Route("/functions/{name}", page(one_function)),
    Route("/functions/{name}/review", change(review), methods=["POST"]),
    Route("/functions/{name}/dry-run", change(run_dry), methods=["POST"]),
]
