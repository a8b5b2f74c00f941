"""What every console page shares: the backend, the sessions, the store readers, the
templates. One per console server; built by `bridge.console.web.console_app`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import HTMLResponse

from bridge.console.ports import ConsoleBackend
from bridge.console.sessions import Session, SessionBook
from bridge.control.console_config import ConsoleConfig
from bridge.store.archive import TurnArchive
from bridge.store.audit_pages import AuditPages
from bridge.store.usage import UsageLedger

PACKAGE_DIR = Path(__file__).resolve().parent


def template_environment() -> Environment:
    # Autoescape everywhere: every value from players, the model or a Function is text.
    return Environment(
        loader=FileSystemLoader(PACKAGE_DIR / "templates"), autoescape=True, auto_reload=False
    )


@dataclass(slots=True)
class ConsoleState:
    backend: ConsoleBackend
    config: ConsoleConfig
    sessions: SessionBook
    audit: AuditPages
    usage: UsageLedger
    archive: TurnArchive
    templates: Environment

    def page(
        self,
        request: Request,
        template: str,
        session: Session | None,
        status: int = 200,
        **values: Any,
    ) -> HTMLResponse:
        html = self.templates.get_template(template).render(
            session=session, path=request.url.path, **values
        )
        return HTMLResponse(html, status_code=status)

    def close(self) -> None:
        for closing in (self.audit.close, self.usage.close, self.archive.close):
            closing()
