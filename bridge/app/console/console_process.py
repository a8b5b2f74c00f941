"""The console as a child process of ``serve``: started with the bridge, started again with
backoff when it dies, stopped with the bridge (`bridge.app.console.console_child` is the
child; `bridge.app.console.console_actions` its channel back).

The child's first start is awaited: a port in use or a certificate that does not load fails
``serve`` with the child's reason, as it did when the console was a thread. After that a
console that exits is logged and started again after `FIRST_BACKOFF_S`, doubling up to
`MAX_BACKOFF_S`; a console that stayed up `STEADY_S` starts the doubling over. Nothing of
this touches the link: the bridge only waits on the child's pipe, on its own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from pathlib import Path

from bridge.app.console.console_actions import ConsoleActions
from bridge.app.console.console_binding import NetworkConsole
from bridge.app.network.network import Network
from bridge.app.serving.storage_settings import storage_target
from bridge.console.channel import ChildStart
from bridge.console.server import ConsoleError

log = logging.getLogger(__name__)

START_WAIT_S = 60.0
"""How long the child may take to import, open its readers and bind (a cold start)."""
STOP_WAIT_S = 5.0
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
STEADY_S = 60.0
MAX_LINE = 4096


class ConsoleProcess:
    """Start with ``await ConsoleProcess.start(network, config_dir)``; ``url`` is where it
    serves; ``await close()``."""

    def __init__(self, actions: ConsoleActions, start: ChildStart) -> None:
        self._actions = actions
        self._start = start
        self._child: asyncio.subprocess.Process | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False
        self.url = ""
        self.starts = 0
        """How many times the child was started (tests wait for a restart by it)."""
        self.restarted = asyncio.Event()

    @property
    def pid(self) -> int | None:
        """The running child's process id (None between a crash and its restart)."""
        child = self._child
        return None if child is None or child.returncode is not None else child.pid

    @property
    def channel_port(self) -> int:
        return self._actions.port

    @classmethod
    async def start(
        cls, network: Network, config_dir: Path, *, port: int | None = None
    ) -> ConsoleProcess:
        """Raises `ConsoleError` (the child's reason) or `StoreError` (the bridge's logins)."""
        plane = network.default.runtime.plane
        logins = storage_target(plane, config_dir).open_console_logins()
        actions = await ConsoleActions.start(NetworkConsole(network, config_dir, logins), logins)
        start = ChildStart(
            config_dir=str(config_dir.resolve()),
            channel_port=actions.port,
            token=actions.token,
            port=port,
        )
        console = cls(actions, start)
        try:
            await console._spawn()
        except ConsoleError:
            await actions.close()
            raise
        console._watcher = asyncio.get_running_loop().create_task(console._watch())
        return console

    async def _spawn(self) -> None:
        try:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bridge.app.console.console_child",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=MAX_LINE,
            )
        except OSError as exc:  # out of processes or memory: said, and tried again later
            raise ConsoleError(f"the console could not be started: {exc}") from exc
        assert child.stdin is not None and child.stdout is not None
        self.starts += 1
        child.stdin.write(self._start.model_dump_json().encode() + b"\n")
        try:
            await child.stdin.drain()
            line = await asyncio.wait_for(child.stdout.readline(), START_WAIT_S)
        except (OSError, ValueError, TimeoutError) as exc:
            await _stop(child)
            raise ConsoleError(f"the console did not start: {exc or 'no answer'}") from None
        said = line.decode("utf-8", "replace").strip()
        if not said.startswith("serving "):
            await _stop(child)
            reason = said.removeprefix("failed ") or "it exited"
            raise ConsoleError(f"the console did not start: {reason}")
        self._child, self.url = child, said.removeprefix("serving ")

    async def _watch(self) -> None:
        backoff = FIRST_BACKOFF_S
        loop = asyncio.get_running_loop()
        while not self._stopping:
            assert self._child is not None
            began = loop.time()
            code = await self._child.wait()
            if self._stopping:
                return
            if loop.time() - began >= STEADY_S:
                backoff = FIRST_BACKOFF_S
            log.warning("the console exited (code %s); starting it again in %.1f s", code, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            if self._stopping:
                return
            try:
                await self._spawn()
            except ConsoleError as exc:  # tried again after the next backoff
                log.error("%s", exc)
                continue
            self.restarted.set()

    async def close(self) -> None:
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self._child is not None:
            await _stop(self._child)
        await self._actions.close()


async def _stop(child: asyncio.subprocess.Process) -> None:
    """Close the child's standard input (its stop), then terminate, then kill."""
    if child.stdin is not None:
        child.stdin.close()
    try:
        await asyncio.wait_for(child.wait(), STOP_WAIT_S)
        return
    except TimeoutError:
        pass
    with contextlib.suppress(ProcessLookupError):
        child.terminate()
    try:
        await asyncio.wait_for(child.wait(), STOP_WAIT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()
