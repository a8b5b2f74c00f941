"""A bridge pays only for what is enabled: with everything optional off, serving imports none of
the MCP SDK, the console's web stack, the web tools' extraction stack or V8 (each is tens of MB
of resident memory and up to a second of start-up; bench/rss_bench.py measures it), nor
prometheus_client, jsonschema or the Function worker pool (a few MB together).

Each check runs in a fresh interpreter: this test process has imported all of them already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Packages (and the bridge's own modules) that only an enabled section may import.
OPTIONAL = {
    "mcp": "the MCP SDK (mcp:)",
    "mcp_types": "the MCP SDK's types (mcp:)",
    "httpx2": "the MCP HTTP transport's client (mcp:)",
    "starlette": "the console (console:)",
    "jinja2": "the console's templates (console:)",
    "uvicorn": "the console's server (console:)",
    "multipart": "the console's forms (console:)",
    "trafilatura": "the web tools' extraction (web:)",
    "lxml": "the web tools' HTML parsing (web:)",
    "charset_normalizer": "the web tools' charset guess for a page that names none (web:)",
    "bridge.web.fetch": "the web tools' fetcher (web:)",
    "bridge.web.extraction_pool": "the web tools' extraction workers (web:)",
    "py_mini_racer": "V8, which runs in the Function workers and the syntax-check child only",
    "prometheus_client": "the metrics, recorded only when they are on (metrics:)",
    "jsonschema": "the schema checks, deferred for the schemas the bridge ships (their first use)",
    "referencing": "jsonschema's references (a schema's first check)",
    "bridge.functions.worker_pool": "the Function worker pool (the first Function call)",
    "bridge.functions.worker_process": "the Function workers (the first Function call)",
    "click": "httpx's command-line client, which the bridge never runs (bridge/__init__.py)",
    "pygments": "httpx's command-line client, which the bridge never runs (bridge/__init__.py)",
}


def loaded_after(script: str) -> list[str]:
    """The OPTIONAL packages a fresh interpreter holds after running ``script``."""
    probe = textwrap.dedent(script) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(name for name in {sorted(OPTIONAL)!r} if name in sys.modules)))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def named(loaded: list[str]) -> list[str]:
    return [f"{name}: {OPTIONAL[name]}" for name in loaded]


def test_the_command_line_imports_no_optional_stack() -> None:
    # Building the parser imports every command family (serve registers beside mcp, console,
    # try...): each must leave its heavy imports to its handler.
    script = "import bridge.cli, bridge.cli.serve\nbridge.cli.build_parser()"
    assert named(loaded_after(script)) == []


def test_a_bridge_serving_defaults_imports_no_optional_stack(tmp_path: Path) -> None:
    # What serve does before it links: a new folder with its defaults, the token, the
    # network of runtimes with every store open, then the start of its background parts.
    script = f"""
        import asyncio
        from pathlib import Path
        from bridge.app.network.network import Network
        from bridge.control import init_config_dir
        from bridge.link.auth import ensure_token_file
        from bridge.link.token_rotation import LinkToken

        folder = Path({str(tmp_path / "config")!r})
        init_config_dir(folder)
        token = LinkToken(ensure_token_file(folder))
        network = Network.open(folder, default_token=token.current)

        async def started() -> None:
            await network.default.runtime.mcp.start()
            await network.aclose()

        asyncio.run(started())
    """
    assert named(loaded_after(script)) == []


def test_an_mcp_server_in_the_configuration_loads_the_sdk(tmp_path: Path) -> None:
    # The positive control: the same probe sees the SDK once a server is configured.
    # Its workspace is the test's own: a stdio server's folder (mcp/<id>/) is made beside it.
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = f"""
        import asyncio
        from pathlib import Path
        from bridge.control.mcp_config import McpConfig
        from bridge.mcp.clients import McpClients
        from bridge.store.audit_sink import MemoryAudit

        config = McpConfig.model_validate(
            {{"enabled": True, "servers": {{"wiki": {{"transport": "stdio", "command": "true"}}}}}}
        )

        async def started() -> None:
            clients = McpClients(audit=MemoryAudit(), redact=lambda text: text)
            clients.apply(config, Path({str(workspace)!r}))
            await clients.aclose()

        asyncio.run(started())
    """
    assert "mcp" in loaded_after(script)


def test_metrics_on_and_an_owners_own_schema_load_what_they_need(tmp_path: Path) -> None:
    # The positive control of the defaults test: metrics enabled record from the start, and a
    # tools.yml schema the bridge does not ship is checked against its meta-schema at load.
    script = f"""
        from pathlib import Path
        from bridge.app.wiring.runtime import Runtime
        from bridge.control import init_config_dir

        folder = Path({str(tmp_path / "config")!r})
        init_config_dir(folder)
        (folder / "config.yml").write_text("schema: 1\\nmetrics:\\n  enabled: true\\n")
        tools = (folder / "tools.yml").read_text()
        (folder / "tools.yml").write_text(
            tools.replace(
                "\\n      type: object\\n", "\\n      type: object\\n      description: mine\\n", 1
            )
        )
        Runtime.open(folder)
    """
    assert {"prometheus_client", "jsonschema"} <= set(loaded_after(script))
