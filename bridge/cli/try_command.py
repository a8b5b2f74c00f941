"""``mineclaw-bridge try``: the playground (``bridge.playground``) on a terminal.

You are a player on a simulated server linked to a real bridge serving a copy of your
configuration folder. With no provider key, or with ``--offline``, the model is the scripted
offline one, so the tools, a confirmation prompt and the gates can be tried with no network.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from bridge.control import init_config_dir
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.errors import ConfigError, LinkError, StoreError
from bridge.functions.worker_confinement import not_dumpable
from bridge.playground.console import Conversation, Screen
from bridge.playground.session import LOG_FILE, Playground, missing_key

EXIT_OK = 0
EXIT_FAILED = 1


def register(subparsers: Any) -> None:
    play = subparsers.add_parser(
        "try", help="chat as a player on a simulated server linked to a real bridge"
    )
    play.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    play.add_argument(
        "--offline",
        action="store_true",
        help="use the scripted offline model even when a provider key is set",
    )
    play.set_defaults(handler=run_try)


def no_key_line(config_dir: Path, variable: str) -> str:
    """The one line that says how to get a real model."""
    return (
        f"no provider key: put {variable}=... in {config_dir / '.env'}, or point providers.yml "
        "at a local Ollama (http://127.0.0.1:11434/v1) or llama.cpp server "
        "(http://127.0.0.1:8080/v1); until then the scripted offline model answers"
    )


def _read_line(prompt: str) -> str:
    """A line from a terminal after ``prompt`` (with line editing), or from a pipe as it is."""
    if sys.stdin.isatty():
        return input(prompt)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def run_try(args: argparse.Namespace) -> int:
    config_dir: Path = args.config
    screen = Screen()
    try:
        init_config_dir(config_dir)
        variable = missing_key(config_dir)
    except (ConfigError, OSError) as exc:
        print(f"mineclaw-bridge: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    scripted = bool(args.offline) or variable is not None
    if variable is not None:
        screen.say(no_key_line(config_dir, variable))
    try:
        return asyncio.run(_play(config_dir, scripted, screen))
    except KeyboardInterrupt:
        return EXIT_OK


async def unanswered_providers(playground: Playground) -> list[str]:
    """A line for each provider the default model may call that the status probe does not
    reach, with what to do: the first answer told the player only that the provider was
    "busy" (`bridge.app.serving.provider_probes`, bounded and cached as for the status)."""
    runtime = playground.network.default.runtime
    in_use = runtime.plane.providers.providers_in_use()
    lines = []
    for provider_id, state in await runtime.served.provider_states():
        if provider_id in in_use and state != "reachable":
            lines.append(
                f"provider {provider_id}: {state}; start its server or fix providers.yml, then "
                "/mineclaw reload as an operator (/as Steve op), or start again with --offline "
                "for the scripted model"
            )
    return lines


async def _play(config_dir: Path, scripted: bool, screen: Screen) -> int:
    # As `serve` does: the process holds the owner's provider keys when they are set, and
    # /mineclaw status then shows the layer as a served bridge has it (it said "not set").
    not_dumpable()
    try:
        playground = await Playground.open(
            config_dir, scripted=scripted, show=screen.show, said=screen.show
        )
    except (ConfigError, LinkError, StoreError, OSError) as exc:
        print(f"mineclaw-bridge: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    model = "the scripted offline model" if scripted else "your default model"
    screen.say(
        f"a simulated server is linked to a bridge serving a copy of {config_dir} "
        f"({playground.folder}; the bridge's log: {playground.scratch / LOG_FILE}), "
        f"answering with {model}"
    )
    if not scripted:
        for line in await unanswered_providers(playground):
            screen.say(line)
    if playground.demos:
        screen.say(
            "for the scripted model's demos the copy also has "
            + ", ".join(playground.demos)
            + f" ({playground.folder} only; your folder is unchanged); @ai help lists them"
        )
    try:
        await Conversation(
            playground.server, screen, _read_line, copy_again=playground.copy_again
        ).run()
    finally:
        await playground.close()
    return EXIT_OK
