"""The approval broker: a prompt to one player, and the single answer that player may give.

``run_command`` uses it to ask a player before a command runs as them, and the Function host
uses it for ``approval.request``. Each prompt gets a token that is:

- unguessable (``secrets.token_urlsafe``, 256 bits) and single-use: the first valid answer
  consumes it, a replay finds nothing;
- bound to the target player's UUID (an answer from anyone else is refused and leaves the prompt
  open for the target) and to a ``Subject``: the executor and the exact canonical command, or
  the Function interaction. The caller acts only when ``outcome.approves(subject)`` holds for the
  subject it is about to act on, so an answer can never carry over to a changed command;
- limited in time (60 s for command confirmations): an answer after the deadline is refused
  even if the waiting side has not woken up yet;
- invalidated when the target quits, when the link drops, and when the waiting turn is
  cancelled.

The broker never talks to players itself: ``request`` sends ``approval.show`` over the link it
is given, and the ``/mineclaw approve|deny <token>`` commands reach ``answer`` through
``bridge.policy.approval_commands``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, Protocol

from bridge.control.messages_file import ApprovalMessages
from bridge.errors import MineclawError, ToolError
from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link
from bridge.link.messages import ApprovalButton, ApprovalShow, ApprovalShowResult, PlayerRef, Text

log = logging.getLogger(__name__)

CONFIRMATION_TIMEOUT_S = 60.0
"""How long a command confirmation stays answerable."""

MIN_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 600.0
MAX_PENDING = 256
"""Prompts open at once across all players; more are refused rather than queued."""
MAX_REMEMBERED_ASKS = 1024
"""(turn, player) pairs remembered for the one-prompt-per-player-per-turn rule."""

ApprovalStatus = Literal[
    "approved", "denied", "timeout", "offline", "not_shown", "cancelled", "not_permitted"
]
Answer = Literal["approve", "deny"]


class PromptLedger(Protocol):
    """Where open prompts are written down, so a restart can report the ones it cut short."""

    def prompt_opened(self, prompt_id: str, fields: dict[str, str], at: datetime) -> None: ...

    def prompt_closed(self, prompt_id: str) -> None: ...


class PromptWindow(Protocol):
    """How long a turn's prompts may keep others waiting (`bridge.turns.confirm_window`)."""

    def allowed(self, turn_id: str) -> float | None: ...

    def waited(self, turn_id: str, seconds: float) -> None: ...


class ApprovalError(ToolError):
    """A prompt could not be opened (too many open, bad timeout)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """What an approval is about. Two subjects are the same approval only if every field is.

    For a command: ``kind="command"``, ``executor`` the UUID of the player it runs as,
    ``detail`` the canonical command. For a console command's second confirmation (the
    two-person rule): ``kind="console"``, ``executor`` the requester's UUID, ``detail`` the
    canonical command. For a Function: ``kind="interaction"``, ``executor`` the
    invocation id, ``detail`` the interaction's identity (its JSON, say). For the model's
    ``ask_player``: ``kind="question"``, ``executor`` the tool call, ``detail`` the question.
    """

    kind: Literal["command", "interaction", "console", "question"]
    executor: str
    detail: str


GESTURE = "gesture"
"""The option of an approval given by a gesture (sneak, look straight up, right-click air
holding an inert item) instead of a click: the plugin sends ``/mineclaw approve <token>
gesture`` for the player who made it, and only a prompt shown with ``gesture=True`` takes it."""


@dataclass(frozen=True, slots=True)
class ApprovalOutcome:
    """How a prompt ended. ``option`` is the button option the target picked, if any
    (``GESTURE`` when a gesture approved it)."""

    status: ApprovalStatus
    subject: Subject
    option: str | None = None

    def approves(self, subject: Subject) -> bool:
        """True only for an approval of exactly ``subject``."""
        return self.status == "approved" and self.subject == subject


class AnswerVerdict(StrEnum):
    """What became of one ``/mineclaw approve|deny`` answer."""

    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"
    INVALID = "invalid"
    """Unknown, already used, or not the sender's: the sender cannot tell which."""
    NOT_PERMITTED = "not_permitted"
    """The sender was asked but lacks the permission the prompt needs to be accepted (a
    console command's second confirmation needs ``mineclaw.approve.console``)."""


@dataclass(frozen=True, slots=True)
class AnswerResult:
    verdict: AnswerVerdict
    display: Mapping[str, str] = field(default_factory=dict)
    """The prompt's display values (requester, target, command, name) for the reply line."""
    kind: str | None = None
    """The kind of the prompt's subject (``command``, ``interaction``, ``question``...), when
    the answer reached a live prompt of the sender's."""


@dataclass(slots=True)
class _Pending:
    target: PlayerRef
    subject: Subject
    answers: frozenset[tuple[Answer, str | None]]
    deadline: float
    display: Mapping[str, str]
    future: asyncio.Future[ApprovalOutcome]
    permission: str | None = None
    """A node the target must hold (in their facts when they answer) to accept."""
    turn: str | None = None


class ApprovalBroker:
    """Open prompts by token. One broker serves the process; it is not thread-safe (one loop).

    ``clock`` and ``new_token`` are injectable so tests can pin the deadline and the token.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        new_token: Callable[[], str] = lambda: secrets.token_urlsafe(32),
        max_pending: int = MAX_PENDING,
        ledger: PromptLedger | None = None,
    ) -> None:
        self._clock = clock
        self._new_token = new_token
        self._max_pending = max_pending
        self._ledger = ledger
        self.window: PromptWindow | None = None
        """Set by the app: bounds the prompts of a turn that others wait behind."""
        self._pending: dict[str, _Pending] = {}
        # (turn id, target UUID) of recent prompts, oldest first.
        self._asked: OrderedDict[tuple[str, str], None] = OrderedDict()

    @property
    def open_prompts(self) -> int:
        return len(self._pending)

    async def request(
        self,
        link: Link,
        *,
        target: PlayerRef,
        subject: Subject,
        prompt: Text,
        buttons: Sequence[ApprovalButton],
        timeout_s: float = CONFIRMATION_TIMEOUT_S,
        display: Mapping[str, str] | None = None,
        turn: str | None = None,
        permission: str | None = None,
        pending_turn: str | None = None,
        gesture: bool = False,
    ) -> ApprovalOutcome:
        """Show ``prompt`` to ``target`` and wait for their answer, the deadline or a quit.

        A ``turn`` may ask each player once (so at most one of its prompts is ever pending for
        a player): a model cannot chain prompt after prompt until someone clicks. A
        ``pending_turn`` may ask a player again, but never while one of the turn's prompts to
        them is still open (the wait window applies to it as to a ``turn``). ``gesture``: the
        target may also approve with a gesture (only for a yes/no prompt, and only a plugin that
        announced ``gestures`` is told so). Cancelling the caller closes the prompt (its token
        stops working) and re-raises.
        """
        if not MIN_TIMEOUT_S <= timeout_s <= MAX_TIMEOUT_S:
            raise ApprovalError(f"timeout must be {MIN_TIMEOUT_S:g}-{MAX_TIMEOUT_S:g} s")
        if len(self._pending) >= self._max_pending:
            raise ApprovalError(f"{self._max_pending} approval prompts are already open")
        if pending_turn is not None and any(
            p.turn == pending_turn and p.target.uuid == target.uuid for p in self._pending.values()
        ):
            raise ApprovalError(f"{target.name} has not answered this turn's last question yet")
        waiting_turn = turn if turn is not None else pending_turn
        window = self.window if waiting_turn is not None else None
        if window is not None and waiting_turn is not None:
            allowed = window.allowed(waiting_turn)
            if allowed is not None:
                if allowed < MIN_TIMEOUT_S:
                    raise ApprovalError(
                        "other players are waiting for the assistant and this answer has already"
                        " waited the time of one confirmation; answer without asking again"
                    )
                timeout_s = min(timeout_s, allowed)
        if turn is not None:
            if (turn, target.uuid) in self._asked:
                raise ApprovalError(
                    f"{target.name} was already asked once in this turn; a new request from"
                    " a player may ask again"
                )
            self._asked[(turn, target.uuid)] = None
            while len(self._asked) > MAX_REMEMBERED_ASKS:
                self._asked.popitem(last=False)
        token = self._new_token()
        if token in self._pending:  # only a broken token source repeats itself
            raise ApprovalError("the token source repeated a token")
        future: asyncio.Future[ApprovalOutcome] = asyncio.get_running_loop().create_future()
        deadline = self._clock() + timeout_s
        # Registered before the prompt is sent: a quick click may arrive before the answer to
        # approval.show does.
        answers = {(button.answer, button.option) for button in buttons}
        if gesture:
            answers.add(("approve", GESTURE))
        self._pending[token] = _Pending(
            target=target,
            subject=subject,
            answers=frozenset(answers),
            deadline=deadline,
            display=dict(display or {}),
            future=future,
            permission=permission,
            turn=waiting_turn,
        )
        prompt_id = self._opened(target, subject, display)
        try:
            not_shown = await self._show(link, token, target, prompt, buttons, timeout_s, gesture)
            if future.done():  # answered, or the target quit, while the prompt was being sent
                return future.result()
            if not_shown is not None:
                return ApprovalOutcome(not_shown, subject)
            async with asyncio.timeout(max(0.0, deadline - self._clock())):
                return await future
        except TimeoutError:
            return ApprovalOutcome("timeout", subject)
        finally:
            self._pending.pop(token, None)
            self._closed(prompt_id)
            if window is not None and waiting_turn is not None:
                window.waited(waiting_turn, self._clock() - (deadline - timeout_s))

    def _opened(
        self, target: PlayerRef, subject: Subject, display: Mapping[str, str] | None
    ) -> str | None:
        """Tell the ledger a prompt is open (by an id of its own: the token stays in memory).
        A ledger that cannot write costs the restart report, never the prompt."""
        if self._ledger is None:
            return None
        prompt_id = secrets.token_urlsafe(12)
        fields = {
            "target": target.name,
            "target_uuid": target.uuid,
            "kind": subject.kind,
            **dict(display or {}),
        }
        try:
            self._ledger.prompt_opened(prompt_id, fields, datetime.now(UTC))
        except MineclawError as exc:
            log.warning("approval prompt not recorded: %s", exc)
            return None
        return prompt_id

    def _closed(self, prompt_id: str | None) -> None:
        if self._ledger is None or prompt_id is None:
            return
        try:
            self._ledger.prompt_closed(prompt_id)
        except MineclawError as exc:
            log.warning("approval prompt end not recorded: %s", exc)

    async def _show(
        self,
        link: Link,
        token: str,
        target: PlayerRef,
        prompt: Text,
        buttons: Sequence[ApprovalButton],
        timeout_s: float,
        gesture: bool,
    ) -> ApprovalStatus | None:
        """None when the prompt is up; otherwise the status the request ends with."""
        # Only a prompt that takes gestures carries the field: older plugins refuse it.
        show = ApprovalShow(
            player=target.uuid,
            token=token,
            prompt=prompt,
            buttons=list(buttons),
            expires_ms=round(timeout_s * 1000),
            **({"gesture": True} if gesture else {}),
        )
        try:
            answer = await link.request("approval.show", show)
        except LinkRequestError as exc:
            return "offline" if exc.code is LinkCode.PLAYER_OFFLINE else "not_shown"
        if not isinstance(answer, ApprovalShowResult) or not answer.shown:
            return "not_shown"
        return None

    def answer(
        self,
        sender: PlayerRef | None,
        answer: Answer,
        token: str,
        option: str | None = None,
        *,
        granted: Collection[str] = (),
    ) -> AnswerResult:
        """Apply one answer; ``sender`` is None for the console, which can never answer.
        ``granted``: the sender's permission facts as the plugin reported them with this
        answer, for a prompt that needs one to be accepted."""
        pending = self._pending.get(token)
        if pending is None or pending.future.done():
            return AnswerResult(AnswerVerdict.INVALID)
        if sender is None or sender.uuid != pending.target.uuid:
            # Left open: only the target's own answer may close it.
            return AnswerResult(AnswerVerdict.INVALID)
        kind = pending.subject.kind
        if self._clock() >= pending.deadline:
            self._settle(token, ApprovalOutcome("timeout", pending.subject))
            return AnswerResult(AnswerVerdict.EXPIRED, pending.display, kind)
        if (answer, option) not in pending.answers:
            return AnswerResult(AnswerVerdict.INVALID)
        if answer == "approve" and pending.permission and pending.permission not in granted:
            # Asked, but not allowed to accept: the prompt ends, nothing runs.
            self._settle(token, ApprovalOutcome("not_permitted", pending.subject))
            return AnswerResult(AnswerVerdict.NOT_PERMITTED, pending.display, kind)
        status: ApprovalStatus = "approved" if answer == "approve" else "denied"
        self._settle(token, ApprovalOutcome(status, pending.subject, option))
        verdict = AnswerVerdict.APPROVED if answer == "approve" else AnswerVerdict.DENIED
        return AnswerResult(verdict, pending.display, kind)

    def player_quit(self, player_uuid: str) -> int:
        """Close every prompt shown to that player; returns how many were closed."""
        tokens = [t for t, p in self._pending.items() if p.target.uuid == player_uuid]
        for token in tokens:
            self._settle(token, ApprovalOutcome("offline", self._pending[token].subject))
        return len(tokens)

    def link_lost(self) -> int:
        """Close every prompt: no answer can arrive without the link."""
        tokens = list(self._pending)
        for token in tokens:
            self._settle(token, ApprovalOutcome("cancelled", self._pending[token].subject))
        return len(tokens)

    def _settle(self, token: str, outcome: ApprovalOutcome) -> None:
        pending = self._pending.pop(token)
        if not pending.future.done():
            pending.future.set_result(outcome)


_BUTTON_PLACEHOLDERS = re.compile(r"\s*<(accept|deny)>")


def confirmation_prompt(
    messages: ApprovalMessages,
    *,
    requester: str,
    target: str,
    command: str,
    intent: str,
    assistant: str,
    console: bool = False,
) -> tuple[Text, list[ApprovalButton], dict[str, str]]:
    """The prompt, buttons and display values of a command confirmation, from ``message.yml``.

    Layout: the ``approval.prompt`` sentence (the assistant asks on behalf of the requester),
    then, on a line of its own, the model's ``intent`` in the ``approval.intent`` template,
    which marks it as the assistant's words; then the plugin draws the buttons on a line of
    their own, so the ``<accept>`` and ``<deny>`` markers are taken out of the prompt template.
    The line break is the bridge's ``<newline>``: an owner's template cannot write one. Every
    value is inserted unparsed; the intent is also the buttons' hover text.
    """
    values = {"requester": requester, "target": target, "command": command, "name": assistant}
    prompt_values = {**values, "intent": intent or "-"}
    # ``console``: the second confirmation of a console command (``approval.console_prompt``).
    template_text = messages.console_prompt if console else messages.prompt
    sentence = _BUTTON_PLACEHOLDERS.sub("", template_text).strip() or "<command>"
    template = f"{sentence}<reset><newline>{messages.intent}" if intent else sentence
    hover = Text(template="<intent>", values={"intent": intent}) if intent else None
    buttons = [
        ApprovalButton(
            label=Text(template=messages.accept_button), hover=hover, answer="approve", option=None
        ),
        ApprovalButton(
            label=Text(template=messages.deny_button), hover=hover, answer="deny", option=None
        ),
    ]
    return Text(template=template, values=prompt_values), buttons, values
