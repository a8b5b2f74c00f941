"""Starting, watching and stopping the real processes the interaction tests use.

Every wait here is bounded; a timeout fails the test with what the process printed so far.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.storage_choice import apply_chosen_storage

REPO = Path(__file__).resolve().parents[2]
TESTKIT_JAR = REPO / "plugin-java" / "testkit" / "target" / "mineclaw-testkit.jar"
START_TIMEOUT = 60.0
"""Bound on a process start; generous, the machines are shared."""
EVENT_TIMEOUT = 30.0
"""Bound on waiting for one event."""
LINK_RETRY_MAX_S = 30.0
"""The plugin's longest pause between two connection attempts (CONTROL.md: jittered, 0.5 s
doubling to 30 s)."""
RELINK_TIMEOUT = LINK_RETRY_MAX_S + EVENT_TIMEOUT
"""Bound on the plugin linking again once a restarted bridge listens. How far its back-off has
grown by then depends on how long the bridge took to start, that is on the machine's speed, so
its next attempt may be a whole longest pause away: the bound covers that pause and one event
(a bound of one event alone failed on a loaded machine)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def java_executable() -> str:
    home = os.environ.get("JAVA25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    java = Path(home) / "bin" / "java"
    if not java.is_file():
        pytest.fail(f"no JDK 25 at {java}: set JAVA25_HOME to a JDK 25")
    return str(java)


def require_testkit_jar() -> Path:
    if not TESTKIT_JAR.is_file():
        pytest.fail(f"the testkit jar {TESTKIT_JAR} is missing: run `make java` first")
    return TESTKIT_JAR


class _Output:
    """Collects a stream's lines in the background so the pipe never fills."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self.changed = asyncio.Event()
        self.ended = False
        self._task = asyncio.create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        try:
            while line := await stream.readline():
                self.lines.append(line.decode("utf-8", "replace").rstrip("\n"))
                self.changed.set()
        finally:
            self.ended = True
            self.changed.set()

    async def wait_for(self, pattern: str, *, timeout: float, since: int = 0) -> re.Match[str]:
        # A failure carries the stream's last lines: a CI log then says why the line never came.
        try:
            async with asyncio.timeout(timeout):
                while True:
                    for line in self.lines[since:]:
                        found = re.search(pattern, line)
                        if found:
                            return found
                    if self.ended:
                        raise EOFError(
                            f"the stream ended before a line matching {pattern!r}:\n{self.tail()}"
                        )
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise TimeoutError(
                f"no line matching {pattern!r} in {timeout} s; the last lines:\n{self.tail()}"
            ) from None

    def tail(self, count: int = 30) -> str:
        return "\n".join(self.lines[-count:])

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


class BridgeProcess:
    """``python -m bridge serve`` as a child process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdout is not None and process.stderr is not None
        self.stdout = _Output(process.stdout)
        self.stderr = _Output(process.stderr)
        self.url = ""
        self.token_file = Path()

    @classmethod
    async def start(
        cls,
        config_dir: Path,
        *,
        port: int | None = None,
        open_files: int | None = None,
        env: dict[str, str] | None = None,
        command: tuple[str, ...] = (sys.executable, "-m", "bridge"),
        cwd: Path = REPO,
    ) -> BridgeProcess:
        """``open_files`` starts the bridge with that open-file soft limit (the hard one kept),
        as many service managers do with 1024; ``env`` adds environment variables; ``command``
        is what runs ``serve`` (an installed ``mineclaw-bridge``, say)."""
        apply_chosen_storage(config_dir)
        # --init: most tests start from a folder that does not exist yet.
        args = [*command, "serve", "--init", "--config", str(config_dir)]
        if port is not None:
            args += ["--port", str(port)]

        def lower_soft_limit() -> None:
            if open_files is not None:
                _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, hard))

        process = await asyncio.create_subprocess_exec(
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=lower_soft_limit if open_files is not None else None,
            env=None if env is None else {**os.environ, **env},
        )
        bridge = cls(process)
        try:
            listening = await bridge.stdout.wait_for(
                r"^listening on (wss?://\S+)$", timeout=START_TIMEOUT
            )
            token = await bridge.stdout.wait_for(r"^link token file: (.+)$", timeout=START_TIMEOUT)
        except (TimeoutError, EOFError) as exc:
            await bridge.kill()
            pytest.fail(f"the bridge did not start ({exc!r}); it printed:\n{bridge.output()}")
        except BaseException:
            # Cancelled while starting (a soak's restart cut short): the process is nobody's
            # to kill but this call's.
            await asyncio.shield(bridge.kill())
            raise
        bridge.url = listening.group(1)
        bridge.token_file = Path(token.group(1))
        return bridge

    def output(self) -> str:
        return f"stdout:\n{self.stdout.tail()}\nstderr:\n{self.stderr.tail()}"

    async def wait(self) -> int:
        return await asyncio.wait_for(self.process.wait(), START_TIMEOUT)

    async def interrupt(self, signum: int = signal.SIGINT) -> int:
        """Ctrl-C (or ``signum``), then the exit code."""
        self.process.send_signal(signum)
        code = await self.wait()
        await self._close_streams()
        return code

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.wait()
        await self._close_streams()

    async def _close_streams(self) -> None:
        # Wait for EOF so the output is complete, then stop the readers.
        for stream in (self.stdout, self.stderr):
            with contextlib.suppress(TimeoutError, EOFError):
                await stream.wait_for(r"(?!)", timeout=START_TIMEOUT)
            await stream.close()


class TestkitProcess:
    """The testkit JVM: a stand-in Minecraft server with the real plugin core, on JSON lines."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdout is not None and process.stderr is not None
        self.stdout = _Output(process.stdout)
        self.stderr = _Output(process.stderr)

    @classmethod
    async def start(
        cls, url: str, token_file: Path, *extra: str, core_from: Path | None = None
    ) -> TestkitProcess:
        """``core_from``: a jar put before the testkit's on the class path, so the plugin core
        that links is the one that jar carries (a released plugin jar shades it)."""
        jar = require_testkit_jar()
        if core_from is None:
            launch = ["-jar", str(jar)]
        else:
            launch = ["-cp", f"{core_from}{os.pathsep}{jar}", "dev.mineclaw.testkit.TestkitMain"]
        process = await asyncio.create_subprocess_exec(
            java_executable(),
            *launch,
            "--url",
            url,
            "--token-file",
            str(token_file),
            *extra,
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        testkit = cls(process)
        await testkit.wait_event(lambda e: e.get("event") == "ready", timeout=START_TIMEOUT)
        return testkit

    @property
    def events(self) -> list[dict[str, Any]]:
        parsed = []
        for line in self.stdout.lines:
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if isinstance(event, dict):
                    parsed.append(event)
        return parsed

    async def relinked(self, since: int) -> dict[str, Any]:
        """The ``link.up`` after ``since``, once a restarted bridge listens again (call it after
        ``BridgeProcess.start`` returned): bounded by ``RELINK_TIMEOUT``."""
        return await self.wait_event(
            lambda e: e.get("event") == "link.up", since=since, timeout=RELINK_TIMEOUT
        )

    async def send(self, op: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(op) + "\n").encode())
        await asyncio.wait_for(self.process.stdin.drain(), EVENT_TIMEOUT)

    async def wait_event(
        self,
        matches: Callable[[dict[str, Any]], bool],
        *,
        timeout: float = EVENT_TIMEOUT,
        since: int = 0,
    ) -> dict[str, Any]:
        """The first event at index ``since`` or later that ``matches``."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    for event in self.events[since:]:
                        if matches(event):
                            return event
                    if self.stdout.ended:
                        raise EOFError("the testkit exited")
                    self.stdout.changed.clear()
                    await self.stdout.changed.wait()
        except (TimeoutError, EOFError) as exc:
            pytest.fail(f"testkit: no matching event ({exc!r}); it printed:\n{self.output()}")

    def output(self) -> str:
        return f"stdout:\n{self.stdout.tail()}\nstderr:\n{self.stderr.tail()}"

    async def shutdown(self) -> int:
        if self.process.returncode is None:
            with contextlib.suppress(ConnectionError):
                await self.send({"op": "shutdown"})
            try:
                await asyncio.wait_for(self.process.wait(), START_TIMEOUT)
            except TimeoutError:
                self.process.kill()
                await asyncio.wait_for(self.process.wait(), START_TIMEOUT)
        for stream in (self.stdout, self.stderr):
            await stream.close()
        code = self.process.returncode
        assert code is not None
        return code


class TestkitPlayers:
    """What the e2e tests do as the players of one testkit server: add one, chat, run
    ``/mineclaw``, wait for a line. Mixed into each test's world, which holds ``testkit``."""

    testkit: TestkitProcess

    def mark(self) -> int:
        return len(self.testkit.events)

    async def add(self, name: str, permissions: list[str]) -> None:
        await self.testkit.send({"op": "player.add", "name": name, "permissions": permissions})

    async def chat(self, player: str, text: str) -> dict[str, Any]:
        ref = f"c{self.mark()}"
        await self.testkit.send({"op": "chat", "player": player, "text": text, "ref": ref})
        return await self.testkit.wait_event(
            lambda e: e.get("event") == "chat.outcome" and e.get("ref") == ref
        )

    async def command(self, sender: str, *args: str) -> list[str]:
        """The reply lines of ``/mineclaw args`` as the sender saw them."""
        since, ref = self.mark(), f"m{self.mark()}"
        await self.testkit.send({"op": "command", "sender": sender, "args": list(args), "ref": ref})
        await self.testkit.wait_event(
            lambda e: e.get("event") == "command.done" and e.get("ref") == ref, since=since
        )
        return [
            e["text"]
            for e in self.testkit.events[since:]
            if e.get("event") == "message" and e.get("to") == sender
        ]

    async def message(self, to: str, contains: str, since: int) -> str:
        event = await self.testkit.wait_event(
            lambda e: (
                e.get("event") == "message" and e.get("to") == to and contains in e.get("text", "")
            ),
            since=since,
        )
        text: str = event["text"]
        return text
