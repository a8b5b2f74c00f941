"""``/mineclaw model [list|default|provider/model]`` (``mineclaw.command.model``): the model in
force for the next turns, until a restart or ``default``."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.app.commands.replies import Replies
from bridge.app.wiring.runtime import Runtime
from bridge.errors import ConfigError
from bridge.link.messages import Text


def model_command(runtime: Runtime, args: Sequence[str], replies: Replies) -> list[Text]:
    if len(args) > 1:
        return replies.usage("model")
    if not args:
        return [runtime.text("commands.model_current", {"model": runtime.model_ref()})]
    if args[0].lower() == "list":
        current = runtime.model_ref()
        return [
            runtime.text(
                "commands.model_entry_current" if ref == current else "commands.model_entry",
                {"model": ref},
            )
            for ref in runtime.plane.providers.models
        ]
    if args[0].lower() == "default":
        runtime.model_override = None
        default = runtime.plane.providers.default
        runtime.audit.record("model.switch", {"model": default, "default": True})
        return [runtime.text("commands.model_default", {"model": default})]
    try:
        runtime.plane.providers.resolve(args[0])
    except ConfigError as exc:
        return [runtime.text("commands.model_refused", {"reason": str(exc)})]
    unusable = runtime.served.why_unusable(args[0])
    if unusable is not None:
        # Accepted, every turn would answer players "(the assistant is not configured yet)".
        reason = f"{args[0]} cannot be used: {unusable}; the model in force stays"
        return [runtime.text("commands.model_refused", {"reason": reason})]
    runtime.model_override = args[0]
    runtime.audit.record("model.switch", {"model": args[0]})
    return [runtime.text("commands.model_switched", {"model": args[0]})]
