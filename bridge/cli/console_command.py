"""`mineclaw-bridge console`: print a one-time login link to the owner's web console.

The link carries a random token the serving bridge redeems once (`bridge.store.console_logins`
is where the two processes meet); it expires after ``console.login_link_minutes``. Anyone who
can run this command on the bridge's machine with its configuration folder can log in: that is
the console's whole idea of an owner.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path
from typing import Any

from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.storage_settings import storage_target
from bridge.cli.invocation import command_name
from bridge.cli.output import EXIT_OK, EXIT_PROBLEMS, print_error, refuse_folder
from bridge.cli.review_command import system_user
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.errors import StoreError
from bridge.store.console_logins import ROLES


def register(subparsers: Any) -> None:
    console = subparsers.add_parser("console", help="a one-time login link to the web console")
    console.add_argument(
        "--role",
        choices=ROLES,
        default="owner",
        help="owner (may review) or viewer (reads only); default owner",
    )
    console.add_argument(
        "--as",
        dest="who",
        default=None,
        metavar="NAME",
        help="the name the console shows and audits (default: the system user)",
    )
    console.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    console.set_defaults(handler=run_console)


def run_console(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    verdict = folder_verdict(args.config)
    plane = verdict.plane
    if plane is None:
        print_error(f"the folder is invalid: fix it first ({command_name()} validate)")
        return EXIT_PROBLEMS
    config = plane.config.console
    if not config.enabled:
        print_error("the console is off: set console.enabled: true in config.yml and restart")
        return EXIT_PROBLEMS
    who = (args.who or system_user()).strip()[:64] or "owner"
    try:
        with storage_target(plane, args.config).open_console_logins() as logins:
            token = logins.issue(
                args.role, who, valid_for=timedelta(minutes=config.login_link_minutes)
            )
    except StoreError as exc:
        print_error(str(exc))
        return EXIT_PROBLEMS
    scheme = "https" if config.secure_cookie else "http"
    host = f"[{config.host}]" if ":" in config.host else config.host
    print(f"{scheme}://{host}:{config.port}/login?token={token}")
    print(
        f"works once, for {config.login_link_minutes} minute(s), as {args.role} {who};"
        " behind a proxy, use the proxy's address with the same path",
    )
    return EXIT_OK
