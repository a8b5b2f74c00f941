"""The console's port (`bridge.console.ports.ConsoleBackend`) in the console's own process:
the folder and the store read here, on read-only connections; what changes the bridge's state
or only the running bridge knows asked over the channel (`bridge.console.channel`).

The plane is this process's own load of the folder, loaded again whenever the bridge says it
serves another version (one ``version`` question per page), so a page shows what the bridge
serves. The review book is read again at every page: a review accepted here, in game or by the
command line shows at once.
"""

from __future__ import annotations

import threading
from pathlib import Path

from bridge.console.channel import (
    BridgeChannel,
    ForgetAction,
    RedeemAction,
    ReviewAction,
    StatusAction,
    VersionAction,
)
from bridge.console.ports import LinkedServer, StatusView
from bridge.control.plane import ControlPlane, ControlPlaneStore
from bridge.functions.review_state import ReviewBook
from bridge.memory.store import MemoryStore
from bridge.store.console_logins import Redeemed
from bridge.store.target import StorageTarget


class RemoteBackend:
    def __init__(
        self,
        folder: ControlPlaneStore,
        storage: StorageTarget,
        channel: BridgeChannel,
        reviews: ReviewBook,
        memories: MemoryStore | None,
    ) -> None:
        self._folder = folder
        self._storage = storage
        self._channel = channel
        self._reviews = reviews
        self._memories = memories
        self._lock = threading.Lock()
        self._bridge_version: int | None = None

    @property
    def config_dir(self) -> Path:
        return self._folder.path

    @property
    def storage(self) -> StorageTarget:
        return self._storage

    @property
    def reviews(self) -> ReviewBook:
        return self._reviews

    @property
    def memories(self) -> MemoryStore | None:
        return self._memories

    def plane(self) -> ControlPlane:
        """The folder as the bridge serves it: loaded again when the bridge's version moved."""
        served = int(self._channel.call(VersionAction()))
        with self._lock:
            if self._bridge_version is not None and served != self._bridge_version:
                self._folder.reload()
                self._reviews.refresh()
            self._bridge_version = served
            return self._folder.current

    def accept_review(self, name: str, reviewer: str) -> None:
        self._channel.call(ReviewAction(name=name, reviewer=reviewer))
        self._reviews.refresh()

    def forget_memory(self, memory_id: str, who: str) -> bool:
        return bool(self._channel.call(ForgetAction(memory_id=memory_id, who=who)))

    def redeem_login(self, token: str) -> Redeemed | None:
        """Redeemed by the bridge: marking a link used is a write."""
        if not token or len(token) > 256:
            return None
        value = self._channel.call(RedeemAction(token=token))
        return None if value is None else Redeemed(value["role"], value["issued_by"])

    def status(self) -> StatusView:
        value = self._channel.call(StatusAction())
        return StatusView(
            servers=tuple(LinkedServer(**server) for server in value["servers"]),
            running_turns=int(value["running_turns"]),
            waiting=int(value["waiting"]),
            providers=tuple((str(p), str(state)) for p, state in value["providers"]),
            problems=tuple(str(problem) for problem in value["problems"]),
        )
