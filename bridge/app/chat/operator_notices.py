"""One line to the operators online when turns fail at the model provider.

The asking player only learns that the provider is busy, out of credit or misconfigured; the
people who can fix it need the provider's own words. Operators are the players online who hold
``mineclaw.command.reload`` (the node that lets them fix the configuration): the bridge learns
that from the permission facts every chat line and command carries, and forgets a player when
they quit or the link drops. Each kind of failure is told at most once per
``NOTICE_INTERVAL_S``, so a provider that stays down does not flood anyone; the audit log keeps
every failure whole.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from typing import Protocol

from bridge.errors import LinkError, MineclawError
from bridge.functions.suspensions import Suspension
from bridge.link.messages import OutputChat, PlayerRef, Text
from bridge.providers.errors import clip
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.turns.failure_lines import ProviderFailureNotice

log = logging.getLogger(__name__)

OPERATOR_NODE = "mineclaw.command.reload"
NOTICE_INTERVAL_S = 300.0
"""At most one line per kind of failure this often."""
MAX_ERROR_CHARS = 240


class NoticeHost(Protocol):
    def text(self, key: str, values: dict[str, str] | None = None, **model: str) -> Text: ...


class OperatorNotices:
    """``seen``/``quit``/``link_down`` keep the set of operators online; ``notify`` is the turn
    engine's provider-failure listener. ``send`` is the turn output's ``send_soon`` (raises
    ``LinkError`` when the link is down); ``redact`` cuts secrets out of the provider's text."""

    def __init__(
        self,
        host: NoticeHost,
        *,
        send: Callable[..., None],
        audit: AuditSink,
        redact: Callable[[str], str],
        monotonic: Callable[[], float] = time.monotonic,
        interval_s: float = NOTICE_INTERVAL_S,
    ) -> None:
        self._host = host
        self._send = send
        self._audit = audit
        self._redact = redact
        self._monotonic = monotonic
        self._interval_s = interval_s
        self._operators: dict[str, str] = {}  # uuid -> name
        self._last_told: dict[str, float] = {}

    @property
    def operators(self) -> dict[str, str]:
        return dict(self._operators)

    def seen(self, player: PlayerRef, granted: Collection[str]) -> None:
        if OPERATOR_NODE in granted:
            self._operators[player.uuid] = player.name
        else:
            self._operators.pop(player.uuid, None)

    def quit(self, player: PlayerRef) -> None:
        self._operators.pop(player.uuid, None)

    def link_down(self) -> None:
        self._operators.clear()

    def notify(self, notice: ProviderFailureNotice) -> None:
        now = self._monotonic()
        last = self._last_told.get(notice.failure_class)
        if last is not None and now - last < self._interval_s:
            return
        if not self._operators:
            return  # nobody to tell now: the next failure of this kind may be told
        error = clip(self._redact(notice.error), MAX_ERROR_CHARS)
        line = self._host.text(
            "errors.operator_notice",
            {"model": notice.model_ref, "kind": notice.failure_class, "error": error},
        )
        if self._tell(line, {"turn_id": notice.turn_id, "class": notice.failure_class}):
            self._last_told[notice.failure_class] = now

    def function_suspended(self, suspension: Suspension) -> None:
        """A Function's calls kept killing their worker: the operators online hear it at once
        (a suspension happens at most once per `suspend_minutes` per Function)."""
        if not self._operators:
            return
        line = self._host.text(
            "errors.function_suspended",
            {
                "function": suspension.function,
                "losses": str(suspension.losses),
                "minutes": str(suspension.minutes),
            },
        )
        self._tell(line, {"class": "function_suspended", "function": suspension.function})

    def _tell(self, line: Text, fields: dict[str, JSONValue]) -> bool:
        """Send `line` to every operator online and audit it with `fields`; False when the
        link is down (not sent)."""
        recipients = list(self._operators)
        try:
            self._send(
                *(OutputChat(target="player", player=uuid, text=line) for uuid in recipients)
            )
        except LinkError as exc:
            log.info("operator notice not sent: %s", exc)
            return False
        names: list[JSONValue] = [self._operators[uuid] for uuid in recipients]
        try:
            self._audit.record("operator.notice", {**fields, "recipients": names})
        except MineclawError as exc:
            log.error("operator notice not audited: %s", exc)
        return True
