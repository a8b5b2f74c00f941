"""What a Function's `command.dispatch` must pass before it is sent, in one place for the live
host and the dry run: a dry run stops exactly where a live run would (it once showed `op Steve`
as completed while a live run refused it).

- the command as the wire carries it (one leading `/` dropped, at most 256 characters, no line
  breaks, control or invisible characters) and its canonical form: else `invalid_input`;
- the never list's judgement of it: a never-listed, unknown or unreadable command is
  `never_listed`, unless the Function is written with `allow_never: true`.

The live host judges with the server's resolution of each label (`CommandJudge`); a dry run
has no server and judges the spelling, as `whitelist check` does.
"""

from __future__ import annotations

from bridge.functions.host import OperationRefused
from bridge.policy.invisible import describe, first_invisible
from bridge.policy.never_list import Judgement, NeverList
from bridge.policy.whitelist import InvalidCommand, canonicalize

MAX_COMMAND_CHARS = 256
"""What the link's `command.dispatch` carries (docs/protocol.md)."""


def wire_command(command: str) -> str:
    """``command`` as the plugin receives it, or `OperationRefused` (``invalid_input``)."""
    wire = command.removeprefix("/")
    if not wire or wire.startswith("/"):
        raise OperationRefused("invalid_input", "the command is empty after its leading '/'")
    if len(wire) > MAX_COMMAND_CHARS:
        raise OperationRefused(
            "invalid_input", f"the command is over {MAX_COMMAND_CHARS} characters"
        )
    if not wire.isprintable():
        raise OperationRefused("invalid_input", "the command has line breaks or control characters")
    hidden = first_invisible(wire)
    if hidden is not None:
        raise OperationRefused(
            "invalid_input", f"the command contains the invisible character {describe(hidden)}"
        )
    return wire


def canonical_command(wire: str) -> str:
    """The canonical form the never list judges, or `OperationRefused` (``invalid_input``)."""
    try:
        return canonicalize(wire)
    except InvalidCommand as exc:
        raise OperationRefused("invalid_input", f"the command {exc.reason}") from None


def refuse_never_listed(judgement: Judgement, *, allow_never: bool) -> None:
    """`OperationRefused` (``never_listed``) when the judgement stops the command."""
    refusal = judgement.refusal(allow_never=allow_never)
    if refusal is not None:
        raise OperationRefused("never_listed", refusal)


def check_offline(command: str, never: NeverList, *, allow_never: bool) -> str:
    """The whole check without a server (a dry run): the wire command, or the refusal a live
    run would meet on the same spelling."""
    wire = wire_command(command)
    refuse_never_listed(never.judge(canonical_command(wire), None), allow_never=allow_never)
    return wire
