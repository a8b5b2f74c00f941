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

COOKIE_NAME = "mineclaw_console"
MAX_SESSIONS = 256


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    role: Role
    who: str
    csrf: str
    expires_at: datetime

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

    def open(self, role: Role, who: str, now: datetime | None = None) -> Session:
        moment = now or datetime.now(UTC)
        session = Session(
            secrets.token_urlsafe(32), role, who, secrets.token_urlsafe(32), moment + self._lifetime
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
