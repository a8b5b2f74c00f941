"""``mineclaw-bridge serve``: run the bridge's link server until Ctrl-C or SIGTERM.

The link is served by the application (``bridge.app.network.network``, a context per server id):
chat verdicts, turns, ``/mineclaw`` commands, with the archive and the audit log in
``<config>/data``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import ipaddress
import logging
import os
import resource
import signal
import ssl
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.app.network.network import Network
from bridge.app.network.server_leases import ServerLeases, network_leases
from bridge.app.serving.restart_settings import SERVING_FILE, write_serving_state
from bridge.app.wiring.heap import settle_startup_heap
from bridge.cli import shutdown_bound
from bridge.cli.clock_file import budget_clock
from bridge.cli.invocation import command_line
from bridge.cli.output import refuse_folder
from bridge.cli.storage_wait import StorageNotReady, open_waiting_for_storage
from bridge.control import init_config_dir
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.errors import ConfigError, LinkError, StoreError
from bridge.functions.worker_confinement import ON, not_dumpable
from bridge.link.auth import ensure_token_file
from bridge.link.codes import CloseCode
from bridge.link.server import LinkServer, LinkSettings
from bridge.link.token_rotation import LinkToken, watch_token
from bridge.store.archive import DATA_DIR_NAME

# The console's web stack (Starlette, Jinja2, uvicorn, Pygments) is imported only by the
# console's own process (tests/app/test_lazy_imports.py); the bridge starts it when
# console.enabled says to.
if TYPE_CHECKING:
    from bridge.app.console.console_process import ConsoleProcess
    from bridge.metrics.endpoint import MetricsEndpoint

_MAX_OPEN_FILES = 1 << 20
"""The soft limit asked for when the hard limit is unlimited (Linux refuses infinity)."""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNAVAILABLE = 3
"""The database did not answer within ``storage.start_wait_s``: starting again later may work
(the systemd unit in docs/install.md restarts on it; 1 and 2 need the owner)."""


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser("serve", help="run the bridge and wait for the plugin")
    serve.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    serve.add_argument(
        "--init",
        action="store_true",
        help="first create the folder and its missing default files, as `init` does",
    )
    serve.add_argument("--host", help="listen address (default: link.host in config.yml)")
    serve.add_argument(
        "--port", type=int, help="listen port, 0 for any free one (default: link.port)"
    )
    serve.set_defaults(handler=run_serve)


def _fail(message: str) -> int:
    print(f"mineclaw-bridge: {message}", file=sys.stderr, flush=True)
    return EXIT_FAILED


def link_tls(config_dir: Path, cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """The server TLS context of ``link.tls_cert`` and ``link.tls_key`` (None without them);
    ``LinkError`` naming the field when they cannot be loaded."""
    if cert is None or key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    cert_path, key_path = config_dir / cert, config_dir / key
    try:
        context.load_cert_chain(cert_path, key_path)
    except (OSError, ssl.SSLError) as exc:
        raise LinkError(
            f"config.yml: link.tls_cert / link.tls_key ({cert_path}, {key_path}): "
            f"cannot load the certificate and key: {exc}"
        ) from exc
    return context


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost
        return False


def raise_open_file_limit() -> None:
    """Raise this process's open-file soft limit to its hard limit.

    Many systems start services with a soft limit of 1024, which a burst of connections (or a
    busy server's files and sockets) can reach long before the hard limit would; the link caps
    its unauthenticated connections, and this keeps the rest of the bridge clear of that ceiling.
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = _MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else hard
        if soft == resource.RLIM_INFINITY or soft >= wanted:
            return
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (OSError, ValueError) as exc:
        logging.getLogger(__name__).warning("could not raise the open-file limit: %s", exc)


def run_serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # The library's own lines ("server listening", "server closing") repeat what serve prints
    # itself; its warnings and errors still show.
    logging.getLogger("websockets").setLevel(logging.WARNING)
    raise_open_file_limit()
    # Same-user processes (a Function worker after a V8 escape, when the bridge does not run
    # as root) cannot read this process's environment (the provider keys) through /proc.
    logging.getLogger(__name__).info("%s", not_dumpable_line(not_dumpable()))
    config_dir: Path = args.config
    # Without --init, a folder that is not a configuration folder (a mistyped --config) is
    # refused rather than filled with new files and a token.
    refused = None if args.init else refuse_folder(config_dir)
    if refused is not None:
        return refused
    try:
        if args.init:
            init_config_dir(config_dir)
        token_file = ensure_token_file(config_dir)
        link_token = LinkToken(token_file)
        network = open_waiting_for_storage(
            lambda: Network.open(
                config_dir,
                default_token=link_token.current,
                manage_logging=True,
                clock=budget_clock(os.environ),
            ),
            config_dir,
            say=lambda line: print(f"mineclaw-bridge: {line}", file=sys.stderr, flush=True),
        )
    except StorageNotReady as exc:
        _fail(str(exc))
        return EXIT_UNAVAILABLE
    except (ConfigError, LinkError, StoreError) as exc:  # ConfigLoadError lists every problem
        return _fail(str(exc))
    except KeyboardInterrupt:  # Ctrl-C while waiting for the database
        return EXIT_OK
    runtime = network.default.runtime
    plane = runtime.plane
    for warning in plane.warnings:
        print(warning, file=sys.stderr)
    link = plane.config.link
    if args.port is not None and not 0 <= args.port <= 65535:
        asyncio.run(network.aclose())
        return _fail(f"--port {args.port} is not a port number")
    settings = LinkSettings(
        host=args.host or link.host,
        port=link.port if args.port is None else args.port,
        max_frame_bytes=link.max_frame_bytes,
        handshake_timeout=link.handshake_timeout_ms / 1000,
        max_unauthenticated=link.max_unauthenticated,
        max_unauthenticated_per_address=link.max_unauthenticated_per_address,
    )
    try:
        tls = link_tls(config_dir, link.tls_cert, link.tls_key)
    except LinkError as exc:
        asyncio.run(network.aclose())
        return _fail(str(exc))
    if not is_loopback_host(settings.host) and tls is None:
        # The token never crosses the wire, but everything after the handshake does: chat,
        # commands, tool results. Plain ws:// stays on this machine.
        asyncio.run(network.aclose())
        return _fail(
            f"link.host {settings.host} would take the link off this machine in plain ws://; "
            "set link.tls_cert and link.tls_key in config.yml (wss://), or keep the link on "
            "loopback and put a TLS reverse proxy in front "
            "(docs/install.md#a-plugin-on-another-machine)"
        )
    settings = dataclasses.replace(settings, tls=tls)
    endpoint: MetricsEndpoint | None = None
    wanted = plane.config.metrics
    if wanted.enabled:
        # prometheus_client is imported by a bridge whose metrics are on, and only then.
        from bridge.metrics.endpoint import MetricsEndpoint, MetricsError

        try:
            endpoint = MetricsEndpoint.start(runtime.metrics, host=wanted.host, port=wanted.port)
        except MetricsError as exc:
            asyncio.run(network.aclose())
            return _fail(f"config.yml: {exc}")
    server = LinkServer(servers=network, settings=settings)
    network.watch_revocations(server)

    async def drop(server_id: str, reason: str) -> None:
        # Said as it is (database lost, lease lost): whether another bridge serves the server
        # now is for the plugin's next attempt to find out.
        await server.drop(server_id, CloseCode.NOT_SERVED, reason)

    leases = network_leases(network, plane, drop)
    try:
        return asyncio.run(
            _serve_until_stopped(server, link_token, network, config_dir, leases, endpoint)
        )
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        return EXIT_OK
    finally:
        if endpoint is not None:
            endpoint.close()


async def _serve_until_stopped(
    server: LinkServer,
    link_token: LinkToken,
    network: Network,
    config_dir: Path,
    leases: ServerLeases | None,
    endpoint: MetricsEndpoint | None = None,
) -> int:
    runtime = network.default.runtime
    console: ConsoleProcess | None = None
    if runtime.plane.config.console.enabled:
        from bridge.app.console.console_process import ConsoleProcess
        from bridge.console.channel import ConsoleError

        try:  # before the link: a console that cannot start fails serve, as it always did
            console = await ConsoleProcess.start(network, config_dir)
        except (ConsoleError, StoreError) as exc:
            await network.aclose()
            return _fail(f"config.yml: console: {exc}")
    try:
        if leases is not None:  # before the link: a plugin must not be served unleased
            await leases.start()
        await server.start()
        await runtime.mcp.start()  # the owner's MCP servers, on this loop
    except (LinkError, StoreError) as exc:
        if console is not None:
            await console.close()
        if leases is not None:
            await leases.close()
        await network.aclose()
        return _fail(runtime.plane.redact(str(exc)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    settle_startup_heap()  # everything start-up loads is in place now
    try:  # for `validate`: which of the folder's values wait for a restart
        serving = write_serving_state(config_dir / DATA_DIR_NAME, runtime.started_with)
    except OSError as exc:
        logging.getLogger(__name__).warning("%s not written: %s", SERVING_FILE, exc)
        serving = None
    print(f"listening on {server.url}", flush=True)
    print(f"link token file: {link_token.path.resolve()}", flush=True)
    if endpoint is not None:
        print(f"metrics on {endpoint.url}", flush=True)
    if console is not None:
        log_in = command_line("console", "--config", str(config_dir))
        print(f"console on {console.url} (log in: {log_in})", flush=True)
    named = sorted(runtime.plane.servers.servers)
    if named:  # the default server (link.token) is always served too
        print(f"servers in servers.yml: {', '.join(named)}", flush=True)
    if leases is not None:
        held = ", ".join(sorted(leases.servers_held)) or "none yet"
        print(f"server leases (PostgreSQL) held: {held}", flush=True)
    watch = asyncio.create_task(
        watch_token(link_token, server, on_rotated=network.rotated), name="link token watch"
    )
    try:
        await stop.wait()
    finally:
        # From here on the process exits within the bound, done or not (a hung database).
        bound = shutdown_bound.arm(runtime.plane.config.storage.stop_wait_s)
        watch.cancel()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await server.close()
        if console is not None:  # before the stores its actions write close
            await console.close()
        if leases is not None:
            await leases.close()
        await network.aclose()
        if serving is not None:
            serving.unlink(missing_ok=True)
        bound.cancel()
    print("stopped", flush=True)
    return EXIT_OK


def not_dumpable_line(state: str) -> str:
    """The startup line about `not_dumpable`, in words an owner reading the log follows."""
    if state == ON:
        return (
            "bridge process not dumpable: other processes of this user cannot read its memory"
            " or environment (the provider keys) nor attach a debugger to it (docs/security.md)"
        )
    return (
        f"bridge process could not be made not dumpable ({state}): other processes of this"
        " user may read its environment (the provider keys); run the bridge as its own user"
        " (docs/security.md)"
    )
