"""A real bridge network with the console served on a free loopback port, and the login link
`mineclaw-bridge console` prints for it."""

from __future__ import annotations

import contextlib
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from bridge.app.console.console_process import ConsoleProcess
from bridge.app.network.network import Network
from bridge.cli import main
from bridge.control import init_config_dir
from tests.functions.test_live_tool import FUNCTIONS_YML

SAY_HELLO = FUNCTIONS_YML


@dataclass
class Console:
    folder: Path
    network: Network
    server: ConsoleProcess

    @property
    def url(self) -> str:
        return self.server.url

    def login_link(self, *extra: str) -> str:
        """What `mineclaw-bridge console` prints, pointed at the port the test server got."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["console", "--config", str(self.folder), *extra])
        assert code == 0, out.getvalue()
        link = out.getvalue().splitlines()[0]
        path = link.split("/login?", 1)[1]
        return f"{self.url}/login?{path}"

    def offered(self) -> str:
        runtime = self.network.default.runtime
        specs = runtime.served.registry.for_player(()).specs
        spec = next((s for s in specs if s.name == "call_function"), None)
        return "" if spec is None else spec.description


def console_folder(folder: Path, *, functions: str = SAY_HELLO) -> Path:
    init_config_dir(folder)
    (folder / "functions.yml").write_text(functions, encoding="utf-8")
    config = folder / "config.yml"
    text = config.read_text(encoding="utf-8")
    text = text.replace("require_review: false", "require_review: true")
    text = text.replace("console:\n  enabled: false", "console:\n  enabled: true")
    config.write_text(text, encoding="utf-8")
    return folder


@contextlib.asynccontextmanager
async def served_console(folder: Path) -> AsyncIterator[Console]:
    network = Network.open(folder, default_token="t" * 43)
    try:
        server = await ConsoleProcess.start(network, folder, port=0)
        try:
            yield Console(folder, network, server)
        finally:
            await server.close()
    finally:
        await network.aclose()
