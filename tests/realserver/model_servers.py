"""Real inference servers for the tests: where their builds are cached, a tiny model for them,
and a running server on loopback.

``make model-servers`` (part of ``make test``, see ``tests/realserver/build.sh``) builds, once per
version, llama-cpp-python's server into its own virtual environment and llama.cpp's
``llama-server`` from the llama.cpp sources that llama-cpp-python's source distribution carries,
both under ``$MINECLAW_MODEL_SERVERS`` (default ``~/.cache/mineclaw/model-servers``). Nothing
here downloads a model: ``tiny_gguf.py`` writes one with a fixed seed in the test's own folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"  # keep in step with build.sh
HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 300.0  # loading a model on a loaded 2-core machine
STOP_TIMEOUT_S = 30.0


def cache_dir() -> Path:
    configured = os.environ.get("MINECLAW_MODEL_SERVERS")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mineclaw" / "model-servers"


def llama_cpp_python() -> Path | None:
    """The Python of llama-cpp-python's environment, when it was built."""
    root = cache_dir() / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}"
    python = root / "bin" / "python"
    return python if (root / ".built").is_file() and python.is_file() else None


def llama_server() -> Path | None:
    """llama.cpp's ``llama-server`` built from the same sources, when it was built."""
    binary = cache_dir() / f"llama-server-{LLAMA_CPP_PYTHON_VERSION}" / "bin" / "llama-server"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def make_model(python: Path, out: Path, *, endless: bool = False) -> Path:
    """The tiny random-weight GGUF (fixed seed), written by ``python`` (which has gguf)."""
    import subprocess

    command = [str(python), str(HERE / "tiny_gguf.py"), str(out)]
    if endless:
        command.append("--endless")
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return out


@dataclass
class ModelServer:
    """A server process on 127.0.0.1; its output is kept for waits and failure messages."""

    name: str
    process: asyncio.subprocess.Process
    port: int
    lines: list[str] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def output(self, count: int = 40) -> str:
        return "\n".join(self.lines[-count:])

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines.append(line.decode("utf-8", "replace").rstrip())
            self._changed.set()
        self._changed.set()

    async def wait_line(self, pattern: str, *, since: int = 0, timeout: float) -> int:
        """The index of the first output line from ``since`` matching ``pattern``; bounded."""
        compiled = re.compile(pattern)

        async def find() -> int:
            seen = since
            while True:
                for index in range(seen, len(self.lines)):
                    if compiled.search(self.lines[index]):
                        return index
                seen = len(self.lines)
                if self.process.returncode is not None and self._reader is not None:
                    if self._reader.done():
                        raise RuntimeError(f"{self.name} exited:\n{self.output()}")
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(find(), timeout)
        except TimeoutError:
            raise RuntimeError(
                f"{self.name}: no line matching {pattern!r} in {timeout}s:\n{self.output()}"
            ) from None

    async def kill(self) -> None:
        """SIGKILL: the server dies as it would in a crash, mid-answer if it was answering."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                await self.kill()
        if self._reader is not None:
            await asyncio.wait_for(self._reader, STOP_TIMEOUT_S)


@contextlib.asynccontextmanager
async def running(
    name: str, command: list[str], port: int, ready: str
) -> AsyncIterator[ModelServer]:
    """The server started and ready (its output printed ``ready``); stopped on the way out."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    server = ModelServer(name, process, port)
    server._reader = asyncio.create_task(server._read())
    try:
        await server.wait_line(ready, timeout=START_TIMEOUT_S)
        yield server
    finally:
        await server.stop()


LLAMA_CPP_PYTHON_READY = r"Uvicorn running on"
LLAMA_SERVER_READY = r"listening on"


def llama_cpp_python_command(python: Path, model: Path, port: int) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server with its function-calling chat format."""
    return [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",
        "1",
        "--chat_format",
        "chatml-function-calling",
    ]


def llama_server_command(binary: Path, model: Path, port: int) -> list[str]:
    """llama.cpp's server with the model's own (tools-capable) template: ``--jinja``."""
    return [
        str(binary),
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        # Each of the two slots gets ctx-size / parallel: 8192 per slot, as the tests' providers
        # say (with 8192 in all a slot held 4096, and a turn replaying a long random-weights
        # tool call was refused as too long now and then).
        "--ctx-size",
        "16384",
        "--threads",
        "1",
        "--parallel",
        "2",
        "--jinja",
        "--no-webui",
    ]


if __name__ == "__main__":  # a one-line status for make
    print(f"llama-cpp-python: {llama_cpp_python()}; llama-server: {llama_server()}")
    sys.exit(0)
