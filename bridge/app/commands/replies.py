"""What every ``/mineclaw`` command group answers with besides its own lines: a plain report line
(``commands.line``), the group's usage, and the refusal of a node the sender lacks."""

from __future__ import annotations

from collections.abc import Callable

from bridge.app.wiring.runtime import Runtime
from bridge.link.messages import CommandRequest, Text


class Replies:
    """``usage_of``: a subcommand's usage string, from the router's table."""

    def __init__(self, runtime: Runtime, usage_of: Callable[[str], str]) -> None:
        self._runtime = runtime
        self._usage_of = usage_of

    def line(self, line: str) -> Text:
        return self._runtime.text("commands.line", {"line": line})

    def usage(self, name: str) -> list[Text]:
        return [self._runtime.text("commands.usage", {"usage": self._usage_of(name)})]

    def refused(self, request: CommandRequest, name: str, node: str) -> list[Text] | None:
        """None when the sender holds ``node``; else the ``no_permission`` line for ``name``."""
        if node in request.sender.granted:
            return None
        player = request.sender.player
        values = {"player": player.name if player else "console", "command": name}
        return [self._runtime.text("commands.no_permission", values)]
