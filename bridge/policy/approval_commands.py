"""``/mineclaw approve <token> [option]`` and ``/mineclaw deny <token>``: answers to prompts.

``/mineclaw approve <token> gesture`` is what the plugin sends for a player who approved a
yes/no question with a gesture; the broker accepts it only for a prompt shown with gestures.

The plugin turns a click on an approval button into one of these commands from the clicking
player. The broker decides; this module only reads the arguments and words the reply with the
``approval`` lines of ``message.yml``. Who sent it comes from the plugin's sender facts, never
from the arguments, and an answer that is not the sender's to give gets the same reply as an
unknown token, so a wrong player learns nothing about other players' prompts.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bridge.control.messages_file import ApprovalMessages, AskMessages
from bridge.link.messages import CommandReply, CommandRequest, PlayerRef, Text
from bridge.policy.approvals import Answer, AnswerVerdict, ApprovalBroker
from bridge.store.audit_sink import AuditSink

APPROVAL_VERBS = frozenset({"approve", "deny"})

INVALID_ANSWER = "<gray>That request is not yours to answer, was already answered, or is gone."
NOT_PERMITTED_ANSWER = (
    "<gray>Confirming a console command needs the mineclaw.approve.console permission;"
    " nothing was run."
)
USAGE = "<gray>Usage: /mineclaw approve TOKEN [OPTION] or /mineclaw deny TOKEN"
# Mirrors the wire patterns of approval.show, so nothing else even reaches the broker.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{22,64}")
_OPTION = re.compile(r"[a-z0-9_-]{1,32}")


class ApprovalCommands:
    """Answers the two subcommands; ``messages`` returns the ``approval`` section in force."""

    def __init__(
        self,
        broker: ApprovalBroker,
        *,
        messages: Callable[[], ApprovalMessages],
        audit: AuditSink | None = None,
        redact: Callable[[str], str] | None = None,
        ask_messages: Callable[[], AskMessages] | None = None,
    ) -> None:
        """``ask_messages``: the ``ask`` section in force, for the replies to answers of the
        model's questions (``ask_player``); the ``approval`` lines otherwise."""
        self._broker = broker
        self._messages = messages
        self._audit = audit
        self._redact = redact
        self._ask_messages = ask_messages

    @staticmethod
    def handles(request: CommandRequest) -> bool:
        return bool(request.args) and request.args[0] in APPROVAL_VERBS

    def handle(self, request: CommandRequest) -> CommandReply:
        """The reply to one ``approve``/``deny`` command (``handles(request)`` must hold)."""
        verb, *rest = request.args
        option = rest[1] if len(rest) == 2 and verb == "approve" else None
        well_formed = (
            len(rest) in ((1, 2) if verb == "approve" else (1,))
            and _TOKEN.fullmatch(rest[0]) is not None
            and (option is None or _OPTION.fullmatch(option) is not None)
        )
        if not well_formed:
            return _reply(Text(template=USAGE))
        sender: PlayerRef | None = request.sender.player
        answer: Answer = "approve" if verb == "approve" else "deny"
        result = self._broker.answer(
            sender, answer, rest[0], option, granted=request.sender.granted
        )
        if self._audit is not None:
            # The token itself is not recorded: while live it is the prompt's only secret. The
            # command is redacted like the run_command decision record of the same call.
            command = result.display.get("command")
            if command is not None and self._redact is not None:
                command = self._redact(command)
            self._audit.record(
                "approval.answer",
                {
                    "sender": sender.name if sender is not None else "console",
                    "answer": answer,
                    "option": option,
                    "verdict": result.verdict.value,
                    "command": command,
                    "kind": result.kind,
                },
            )
        if result.kind == "question" and self._ask_messages is not None:
            ask = self._ask_messages()
            reply = {
                AnswerVerdict.APPROVED: ask.answered,
                AnswerVerdict.DENIED: ask.answered,
                AnswerVerdict.EXPIRED: ask.expired,
            }.get(result.verdict)
            if reply is not None:
                return _reply(Text(template=reply, values=dict(result.display) or None))
        messages = self._messages()
        template = {
            AnswerVerdict.APPROVED: messages.accepted,
            AnswerVerdict.DENIED: messages.denied,
            AnswerVerdict.EXPIRED: messages.expired,
        }.get(result.verdict)
        if result.verdict is AnswerVerdict.NOT_PERMITTED:
            return _reply(Text(template=NOT_PERMITTED_ANSWER))
        if template is None:
            return _reply(Text(template=INVALID_ANSWER))
        return _reply(Text(template=template, values=dict(result.display) or None))


def _reply(text: Text) -> CommandReply:
    return CommandReply(lines=[text])
