"""``ask_player``: the model asks the player it is answering, and waits for their answer.

Arguments: ``question`` and, for a choice, ``options`` (2-5 short texts); without options it
is a yes/no question. The question goes only to the turn's own asker (no argument can name
another player), through the same prompt machinery as command confirmations
(``ApprovalBroker``): a single-use token bound to that player, clickable answers, 60 s
(``environment.ask_timeout_ms``). One
question of a turn may be open per player at a time. A yes/no question can also be approved by
a gesture (sneak, look straight up, right-click air holding an inert item) when the plugin
announced ``gestures``; the plugin turns the gesture into the player's own approval.

The result says what happened: ``answered`` with ``answer`` (``yes``/``no``) or ``choice`` and
``index``, and ``by`` (``click`` or ``gesture``); ``declined`` (a choice answered with "none of
these"), ``timed_out``, ``player_offline``, ``not_shown``. Each question's end is audited
(``ask.result``); the answer itself is audited by ``/mineclaw approve|deny`` like every answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.control.messages_file import AskMessages
from bridge.link.messages import ApprovalButton, PlayerRef, Text
from bridge.policy.approvals import (
    CONFIRMATION_TIMEOUT_S,
    GESTURE,
    ApprovalBroker,
    ApprovalError,
    ApprovalOutcome,
    Subject,
)
from bridge.redaction import Redactor
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.tools.plugin_access import APPROVALS, PluginAccess
from bridge.tools.registry import CallContext
from bridge.tools.results import ErrorCode, ToolFailure

GESTURES = "gestures"
"""The plugin feature: it detects the gestures that approve a yes/no question."""
MAX_QUESTION_CHARS = 256
MAX_OPTION_CHARS = 64
MAX_OPTIONS = 5


class AskArguments(BaseModel):
    """The handler's own minimum, whatever schema ``tools.yml`` gives the model."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    options: list[str] | None = Field(default=None, min_length=2, max_length=MAX_OPTIONS)


class AskPlayer:
    """The handler. ``messages`` and ``assistant`` read the configuration in force."""

    def __init__(
        self,
        plugin: PluginAccess,
        broker: ApprovalBroker,
        *,
        messages: Callable[[], AskMessages],
        assistant: Callable[[], str],
        redactor: Callable[[], Redactor],
        audit: AuditSink,
        timeout_s: Callable[[], float] = lambda: CONFIRMATION_TIMEOUT_S,
    ) -> None:
        """``timeout_s``: how long the player has to answer (``environment.ask_timeout_ms``),
        read when a question is asked."""
        self._plugin = plugin
        self._broker = broker
        self._messages = messages
        self._assistant = assistant
        self._redactor = redactor
        self._audit = audit
        self._timeout_s = timeout_s

    async def run(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        question, options = _arguments(arguments, self._redactor())
        link = self._plugin.link(APPROVALS)
        target = PlayerRef(uuid=context.player_uuid, name=context.player_name)
        gesture = options is None and self._plugin.has(GESTURES)
        prompt, buttons = ask_prompt(
            self._messages(), question, options, gesture=gesture, assistant=self._assistant()
        )
        subject = Subject("question", f"{context.turn_id}/{context.call_id}", question)
        display = {"question": question, "name": self._assistant(), "player": target.name}
        try:
            outcome = await self._broker.request(
                link,
                target=target,
                subject=subject,
                prompt=prompt,
                buttons=buttons,
                timeout_s=self._timeout_s(),
                display=display,
                pending_turn=context.turn_id,
                gesture=gesture,
            )
        except ApprovalError as exc:
            raise ToolFailure(ErrorCode.UNAVAILABLE, str(exc)) from None
        result = _result(outcome, subject, options)
        fields: dict[str, JSONValue] = {
            "turn_id": context.turn_id,
            "call_id": context.call_id,
            "player": context.player_name,
            "kind": "confirm" if options is None else "choice",
            "status": result["status"],
        }
        if "by" in result:
            fields["by"] = result["by"]
        self._audit.record("ask.result", fields)
        if outcome.status == "cancelled":
            raise ToolFailure(ErrorCode.UNAVAILABLE, "the server link dropped during the question")
        return result


def ask_prompt(
    messages: AskMessages,
    question: str,
    options: list[str] | None,
    *,
    gesture: bool,
    assistant: str,
) -> tuple[Text, list[ApprovalButton]]:
    """The prompt and its buttons: Yes/No, or one button per option and "none of these". The
    question and the options are values (shown as plain text, never parsed as tags); the
    gesture hint goes on a line of its own (the bridge's ``<newline>``)."""
    template = messages.prompt
    if gesture:
        template = f"{template}<reset><newline>{messages.gesture_hint}"
    prompt = Text(template=template, values={"question": question, "name": assistant})
    if options is None:
        buttons = [
            ApprovalButton(
                label=Text(template=messages.yes_button), hover=None, answer="approve", option=None
            ),
            ApprovalButton(
                label=Text(template=messages.no_button), hover=None, answer="deny", option=None
            ),
        ]
        return prompt, buttons
    buttons = [
        ApprovalButton(
            label=Text(template=messages.choice_button, values={"option": option}),
            hover=None,
            answer="approve",
            option=str(index),
        )
        for index, option in enumerate(options, start=1)
    ]
    buttons.append(
        ApprovalButton(
            label=Text(template=messages.none_button), hover=None, answer="deny", option=None
        )
    )
    return prompt, buttons


def _arguments(arguments: dict[str, Any], redactor: Redactor) -> tuple[str, list[str] | None]:
    try:
        parsed = AskArguments.model_validate(arguments)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"{where}: {error['msg']}") from None
    question = _shown(parsed.question, redactor)
    if not question:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "question: must not be blank")
    if parsed.options is None:
        return question, None
    options = [_shown(option, redactor)[:MAX_OPTION_CHARS] for option in parsed.options]
    if any(not option for option in options):
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "options: an option must not be blank")
    if len(set(options)) != len(options):
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, "options: the options must differ")
    return question, options


def _shown(text: str, redactor: Redactor) -> str:
    """One line of plain text, redacted: what the player may be shown of the model's words."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return redactor.redact_text(flat)


def _result(
    outcome: ApprovalOutcome, subject: Subject, options: list[str] | None
) -> dict[str, Any]:
    by = "gesture" if outcome.option == GESTURE else "click"
    if outcome.status == "approved" and outcome.subject == subject:
        if options is None:
            return {"status": "answered", "answer": "yes", "by": by}
        index = int(outcome.option or "0")
        if 1 <= index <= len(options):
            return {"status": "answered", "choice": options[index - 1], "index": index, "by": by}
    if outcome.status == "denied":
        if options is None:
            return {"status": "answered", "answer": "no", "by": "click"}
        return {"status": "declined"}
    status = {
        "timeout": "timed_out",
        "offline": "player_offline",
        "not_shown": "not_shown",
        "cancelled": "cancelled",
    }.get(outcome.status, "not_shown")
    return {"status": status}
