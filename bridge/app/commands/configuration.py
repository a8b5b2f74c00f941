"""``/mineclaw reload``, ``tools validate`` and ``functions validate``: the configuration folder
read again, and what the served configuration in force makes of the tools and Functions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from bridge.app.commands.replies import Replies
from bridge.app.wiring.runtime import Runtime
from bridge.control import ConfigLoadError
from bridge.errors import ConfigError
from bridge.functions.review import review_catalogue, review_lines, skill_texts
from bridge.link.messages import Text

MAX_REASON_PROBLEMS = 3


async def reload_command(
    runtime: Runtime, replies: Replies, on_state_changed: Callable[[], Awaitable[None]]
) -> list[Text]:
    try:
        plane = await asyncio.to_thread(runtime.reload)
    except ConfigLoadError as exc:
        shown = [str(p) for p in exc.problems if not p.warning][:MAX_REASON_PROBLEMS]
        reason = "; ".join(shown) or str(exc)
        return [runtime.text("commands.reload_failed", {"reason": reason})]
    except ConfigError as exc:
        return [runtime.text("commands.reload_failed", {"reason": str(exc)})]
    runtime.audit.record("control.reload", {"version": plane.version})
    runtime.prepare()
    lines = [runtime.text("commands.reload_done", {"version": str(plane.version)})]
    lines += [replies.line(note) for note in runtime.restart_pending]
    await on_state_changed()
    return lines


def tools_command(runtime: Runtime, args: Sequence[str], replies: Replies) -> list[Text]:
    if list(args) != ["validate"]:
        return replies.usage("tools")
    registry = runtime.served.registry
    lines = []
    for entry in registry.catalogue:
        problems = "".join(f"; {problem.message}" for problem in entry.problems)
        lines.append(f"{entry.name} [{entry.status}]{problems}")
    return [replies.line(line) for line in lines or ["no tools configured"]]


def functions_command(runtime: Runtime, args: Sequence[str], replies: Replies) -> list[Text]:
    if list(args) != ["validate"]:
        return replies.usage("functions")
    served = runtime.served
    plane, registry = served.plane, served.registry
    review = review_catalogue(
        plane.functions,
        plane.config.functions,
        skills=skill_texts(plane.skills),
        known_tools=frozenset(entry.name for entry in registry.catalogue),
    )
    return [replies.line(line) for line in review_lines(review)]
