"""``/mineclaw listen on|off|status|why`` (``mineclaw.command.listen``) and every player's own
``listen ignore-me|include-me``, remembered in the store (`bridge.store.player_state`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from bridge.app.commands.listen_why import listen_why_lines
from bridge.app.commands.replies import Replies
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.players.listen_optouts import ListenOptOuts
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError, StoreError, TurnError
from bridge.link.messages import CommandRequest, Text

log = logging.getLogger(__name__)

LISTEN_SELF = frozenset({"ignore-me", "include-me"})
"""``/mineclaw listen`` choices every player may use for themselves, without the node."""


class ListenCommand:
    """``on_state_changed`` is awaited after listen mode went on or off (``link.state``)."""

    def __init__(
        self,
        runtime: Runtime,
        output: LinkTurnOutput,
        replies: Replies,
        *,
        on_state_changed: Callable[[], Awaitable[None]],
        optouts: ListenOptOuts | None,
    ) -> None:
        self._runtime = runtime
        self._output = output
        self._replies = replies
        self._on_state_changed = on_state_changed
        self._optouts = optouts

    async def run(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        choice = args[0].lower() if args else "status"
        if choice not in {"on", "off", "status", "why", *LISTEN_SELF} or len(args) > 1:
            return self._replies.usage("listen")
        if choice in LISTEN_SELF:
            return await self._listen_self(request, choice == "ignore-me")
        if choice == "why":
            return [self._replies.line(line) for line in listen_why_lines(runtime)]
        if choice != "status":
            try:
                changed = runtime.listen.set(choice == "on")
            except TurnError as exc:
                return [runtime.text("errors.invalid_request", {"reason": str(exc)})]
            if changed and choice == "off":
                runtime.listen_decisions.listen_off()
            if changed:
                await self._on_state_changed()
                announcement = "listen.enabled" if choice == "on" else "listen.disabled"
                try:
                    await self._output.broadcast(runtime.text(announcement))
                except MineclawError as exc:
                    log.warning("listen announcement not delivered: %s", exc)
        state = "on" if runtime.listen.on else "off"
        return [runtime.text("commands.listen_status", {"state": state})]

    async def _listen_self(self, request: CommandRequest, ignore: bool) -> list[Text]:
        """``listen ignore-me`` / ``include-me``: the sending player's own choice, remembered."""
        runtime = self._runtime
        player = request.sender.player
        if player is None:
            return [runtime.text("commands.usage", {"usage": "listen on|off|status"})]
        listen = runtime.listen
        changed = listen.ignore(player.uuid, player.name) if ignore else listen.include(player.uuid)
        if ignore:
            runtime.listen_decisions.forget(player.uuid)
        if changed and self._optouts is not None:
            try:
                await self._optouts.remember(player.uuid, ignore)
            except StoreError as exc:
                # Kept for this run; the owner learns why other bridges and a restart miss it.
                log.error("listen opt-out of %s not remembered: %s", player.name, exc)
        if changed:
            runtime.audit.record(
                "listen.opt_out" if ignore else "listen.opt_in", {"player": player.name}
            )
        key = "listen.ignored" if ignore else "listen.included"
        return [runtime.text(key, {"player": player.name})]
