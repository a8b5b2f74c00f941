"""Listen mode: one switch for the whole server, held by the bridge per server instance.

It starts off, goes off whenever the plugin reports a new server instance id (a server or
plugin restart), survives a link reconnect from the same instance, and a control-plane reload
does not touch it (nothing here reads the control plane).
"""

from __future__ import annotations

from typing import Literal

from bridge.errors import TurnError

ForwardMode = Literal["all", "prefixed"]


class ListenMode:
    def __init__(self) -> None:
        self._instance_id: str | None = None
        self._on = False

    @property
    def instance_id(self) -> str | None:
        return self._instance_id

    @property
    def on(self) -> bool:
        return self._on

    def bind_instance(self, instance_id: str) -> bool:
        """Record the connected server instance; returns True if that switched listen mode off."""
        if instance_id == self._instance_id:
            return False
        was_on = self._on
        self._instance_id = instance_id
        self._on = False
        return was_on

    def set(self, on: bool) -> bool:
        """Switch listen mode; returns True when the state changed (the caller announces it)."""
        if self._instance_id is None:
            raise TurnError("listen mode needs a connected server")
        changed = self._on != on
        self._on = on
        return changed

    def forward_mode(self, *, wake_pattern_set: bool) -> ForwardMode:
        """What ``link.state`` tells the plugin to forward."""
        return "all" if self._on or wake_pattern_set else "prefixed"
