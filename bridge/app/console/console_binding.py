"""The console wired to the running bridge: `NetworkConsole` implements the console's port
(`bridge.console.ports.ConsoleBackend`) over the network's runtimes, and `start_console`
serves it when ``console.enabled`` (``serve``).

Everything here runs on the console's thread. A review is stored and audited there, then every
server's runtime publishes its plane again (what a reload does from a worker thread), so the
next turn's Function menu offers the reviewed source without a reload.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from bridge.app.network.network import Network
from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.storage_settings import storage_target
from bridge.console.ports import LinkedServer, StatusView
from bridge.console.server import ConsoleError, ConsoleServer
from bridge.console.sessions import SessionBook
from bridge.console.state import ConsoleState, template_environment
from bridge.console.web import console_app
from bridge.control.plane import ControlPlane
from bridge.errors import MineclawError
from bridge.functions.review_state import ReviewBook, accept_review
from bridge.memory.records import Memory
from bridge.memory.store import MemoryStore
from bridge.store.reviews import Review
from bridge.store.target import StorageTarget


class NetworkConsole:
    def __init__(self, network: Network, config_dir: Path) -> None:
        self._network = network
        self._config_dir = config_dir

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

    def accept_review(self, name: str, reviewer: str) -> Review:
        runtime = self._network.default.runtime
        spec = runtime.plane.functions.get(name)
        if spec is None:
            raise KeyError(name)
        review = accept_review(runtime.reviews, runtime.audit, spec, reviewer, via="console")
        for context in list(self._network.contexts.values()):
            context.runtime.republish()
        return review

    @property
    def memories(self) -> MemoryStore | None:
        return self._network.default.runtime.memories

    def forget_memory(self, memory_id: str, who: str) -> Memory | None:
        runtime = self._network.default.runtime
        if runtime.memories is None:
            return None
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
        return gone

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


def console_state(backend: NetworkConsole) -> ConsoleState:
    """The console's sessions and its own store readers. Raises `StoreError`."""
    config = backend.plane().config.console
    target = backend.storage
    opened: list[Any] = []
    try:
        logins = target.open_console_logins()
        opened.append(logins)
        audit = target.open_audit_pages()
        opened.append(audit)
        usage = target.open_usage()
        opened.append(usage)
        archive = target.open_archive()
    except MineclawError:  # nothing stays open behind the error
        for reader in opened:
            reader.close()
        raise
    return ConsoleState(
        backend=backend,
        config=config,
        sessions=SessionBook(timedelta(minutes=config.session_minutes)),
        logins=logins,
        audit=audit,
        usage=usage,
        archive=archive,
        templates=template_environment(),
    )


def start_console(
    network: Network, config_dir: Path, *, port: int | None = None
) -> ConsoleServer | None:
    """Serve the console when ``console.enabled`` (``port`` overrides ``console.port``: 0 picks
    a free one). Raises `ConsoleError` or `StoreError`."""
    backend = NetworkConsole(network, config_dir)
    config = backend.plane().config.console
    if not config.enabled:
        return None
    state = console_state(backend)
    tls = None
    if config.tls_cert is not None and config.tls_key is not None:
        tls = (config_dir / config.tls_cert, config_dir / config.tls_key)
    try:
        return ConsoleServer.start(
            console_app(state),
            host=config.host,
            port=config.port if port is None else port,
            tls=tls,
            on_stop=state.close,
        )
    except ConsoleError:
        state.close()
        raise
