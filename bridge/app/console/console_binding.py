"""What the console process asks of the running bridge, done with the network's runtimes:
`NetworkConsole` answers the console's channel (`bridge.app.console.console_actions`).

Everything here runs in a worker thread of the bridge. A review is stored and audited there,
then every server's runtime publishes its plane again (what a reload does from a worker
thread), so the next turn's Function menu offers the reviewed source without a reload.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bridge.app.network.network import Network
from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.storage_settings import storage_target
from bridge.console.ports import LinkedServer, StatusView
from bridge.control.plane import ControlPlane
from bridge.functions.review_state import ReviewBook, accept_review
from bridge.memory.store import MemoryStore
from bridge.store.console_logins import ConsoleLogins, Redeemed
from bridge.store.target import StorageTarget


class NetworkConsole:
    def __init__(self, network: Network, config_dir: Path, logins: ConsoleLogins) -> None:
        self._network = network
        self._config_dir = config_dir
        self._logins = logins

    @property
    def config_dir(self) -> Path:
        return self._config_dir

    @property
    def storage(self) -> StorageTarget:
        return storage_target(self.plane(), self._config_dir)

    @property
    def reviews(self) -> ReviewBook:
        return self._network.default.runtime.reviews

    def plane(self) -> ControlPlane:
        return self._network.default.runtime.plane

    def accept_review(self, name: str, reviewer: str) -> None:
        runtime = self._network.default.runtime
        spec = runtime.plane.functions.get(name)
        if spec is None:
            raise KeyError(name)
        accept_review(runtime.reviews, runtime.audit, spec, reviewer, via="console")
        for context in list(self._network.contexts.values()):
            context.runtime.republish()

    def redeem_login(self, token: str) -> Redeemed | None:
        return self._logins.redeem(token)

    @property
    def memories(self) -> MemoryStore | None:
        return self._network.default.runtime.memories

    def forget_memory(self, memory_id: str, who: str) -> bool:
        runtime = self._network.default.runtime
        if runtime.memories is None:
            return False
        gone = runtime.memories.forget(memory_id, owner_uuid=None)
        if gone is not None:
            runtime.audit.record(
                "memory.forget",
                {
                    "memory_id": gone.memory_id,
                    "scope": gone.scope,
                    "owner": gone.owner_name,
                    "by": who,
                    "via": "console",
                },
            )
        return gone is not None

    def status(self) -> StatusView:
        servers = []
        running = waiting = 0
        for server_id, context in sorted(self._network.contexts.items()):
            servers.append(LinkedServer(server_id, context.runtime.link is not None))
            lanes = context.runtime.lanes
            running += lanes.cap.running
            waiting += len(lanes.queue.waiting())
        served = self._network.default.runtime.served
        # The console's own thread has no loop running: the probes (bounded by their own
        # deadline, cached a minute) run on one of their own, never on the bridge's.
        providers = asyncio.run(served.provider_states())
        verdict = folder_verdict(self._config_dir)
        problems = tuple(str(problem) for problem in verdict.problems)
        return StatusView(tuple(servers), running, waiting, tuple(providers), problems)
