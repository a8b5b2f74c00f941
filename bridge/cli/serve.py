"""``mineclaw-bridge serve``: run the bridge's link server until Ctrl-C or SIGTERM.

Until the turn engine lands, the link is served by ``PlaceholderHandler``: the plugin connects,
chat flows, and prefixed messages get a line saying the assistant is not configured yet.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from bridge.control import init_config_dir, load_control_plane
from bridge.errors import ConfigError, LinkError
from bridge.link.auth import ensure_token_file, read_token
from bridge.link.handler import PlaceholderHandler
from bridge.link.server import LinkServer, LinkSettings

DEFAULT_CONFIG_DIR = Path("mineclaw-config")
EXIT_OK = 0
EXIT_FAILED = 1


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser("serve", help="run the bridge and wait for the plugin")
    serve.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    serve.add_argument("--host", help="listen address (default: link.host in config.yml)")
    serve.add_argument(
        "--port", type=int, help="listen port, 0 for any free one (default: link.port)"
    )
    serve.set_defaults(handler=run_serve)


def _fail(message: str) -> int:
    print(f"mineclaw-bridge: {message}", file=sys.stderr, flush=True)
    return EXIT_FAILED


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost
        return False


def run_serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    config_dir: Path = args.config
    try:
        init_config_dir(config_dir)
        plane = load_control_plane(config_dir)
        token_file = ensure_token_file(config_dir)
        token = read_token(token_file)
    except (ConfigError, LinkError) as exc:  # ConfigLoadError lists every problem
        return _fail(str(exc))
    for warning in plane.warnings:
        print(warning, file=sys.stderr)
    link = plane.config.link
    if args.port is not None and not 0 <= args.port <= 65535:
        return _fail(f"--port {args.port} is not a port number")
    settings = LinkSettings(
        host=args.host or link.host,
        port=link.port if args.port is None else args.port,
        max_frame_bytes=link.max_frame_bytes,
    )
    if not is_loopback_host(settings.host):
        print(
            f"warning: listening on {settings.host}, reachable from other machines; the token "
            "still guards the link, but the plugin and the bridge are meant to share a host",
            file=sys.stderr,
        )
    handler = PlaceholderHandler(public_prefix=plane.config.chat.public_prefix)
    server = LinkServer(token=token, handler=handler, settings=settings)
    try:
        return asyncio.run(_serve_until_stopped(server, token_file))
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        return EXIT_OK


async def _serve_until_stopped(server: LinkServer, token_file: Path) -> int:
    try:
        await server.start()
    except LinkError as exc:
        return _fail(str(exc))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    print(f"listening on {server.url}", flush=True)
    print(f"link token file: {token_file.resolve()}", flush=True)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await server.close()
    print("stopped", flush=True)
    return EXIT_OK
