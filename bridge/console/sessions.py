"""The console's sessions: a random id in an HttpOnly cookie, each with its role, who logged
in, when it expires and its CSRF token. Kept in memory: a restart of the bridge logs everyone
out, which is the safe direction (a new link is one command away)."""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bridge.store.console_logins import Role

COOKIE_PREFIX = "mineclaw_console_"
MAX_SESSIONS = 256


def cookie_name(port: int, *, secure: bool) -> str:
    """The session cookie's name on the console's ``port``. Browsers send a host's cookies to
    every port of it, so each console names its own (two bridges on one machine no longer log
    each other out) and a session is only taken on the port that issued it. Over https the
    ``__Host-`` prefix makes the browser refuse the cookie set by a subdomain or without
    ``Secure``."""
    return f"{'__Host-' if secure else ''}{COOKIE_PREFIX}{port}"


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    role: Role
    who: str
    csrf: str
    expires_at: datetime
    port: int = 0
    """The console port that issued the session: it is not taken on another."""

    @property
    def owner(self) -> bool:
        return self.role == "owner"

    def csrf_matches(self, offered: str | None) -> bool:
        return offered is not None and hmac.compare_digest(offered.encode(), self.csrf.encode())


class SessionBook:
    def __init__(self, lifetime: timedelta) -> None:
        self._lifetime = lifetime
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, role: Role, who: str, now: datetime | None = None, *, port: int = 0) -> Session:
        moment = now or datetime.now(UTC)
        session = Session(
            secrets.token_urlsafe(32),
            role,
            who,
            secrets.token_urlsafe(32),
            moment + self._lifetime,
            port,
        )
        with self._lock:
            self._drop_expired(moment)
            if len(self._sessions) >= MAX_SESSIONS:  # the oldest goes: never unbounded
                oldest = min(self._sessions.values(), key=lambda s: s.expires_at)
                del self._sessions[oldest.session_id]
            self._sessions[session.session_id] = session
        return session

    def get(self, session_id: str | None, now: datetime | None = None) -> Session | None:
        if not session_id:
            return None
        moment = now or datetime.now(UTC)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None and session.expires_at <= moment:
                del self._sessions[session_id]
                return None
        return session

    def close(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def _drop_expired(self, moment: datetime) -> None:
        for key in [k for k, s in self._sessions.items() if s.expires_at <= moment]:
            del self._sessions[key]
