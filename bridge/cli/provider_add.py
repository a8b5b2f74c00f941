"""``mineclaw-bridge provider add``: a local or OpenAI-compatible model server in providers.yml.

Asks two things, the server's base URL and the model (offering the first one the server
lists), reads ``/v1/models`` for the model's name and context length, writes the entry (and
makes it the default model unless ``--keep-default``), checks the folder with the real loader
(the old file is put back if it fails), then runs ``provider test`` on the new model.
Works for Ollama, llama.cpp's server, LM Studio, vLLM and any OpenAI-compatible URL.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from bridge.cli.invocation import command_line
from bridge.cli.output import load_folder
from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.layout import DEFAULT_CONFIG_DIR, PROVIDERS_FILE, default_bytes
from bridge.control.provider_entry import (
    DEFAULT_CONTEXT,
    ID_PATTERN,
    NewEntry,
    normalized_base_url,
    provider_id_for,
    with_entry,
)
from bridge.errors import ConfigError
from bridge.providers.model_listing import ListedModel, ListingError, list_models

EXIT_OK = 0
EXIT_FAILED = 1
TEST_PROMPT = "Say hello in five words."
SHOWN_MODELS = 20
EXAMPLES = (
    "Ollama http://127.0.0.1:11434, llama.cpp http://127.0.0.1:8080, "
    "LM Studio http://127.0.0.1:1234, vLLM http://127.0.0.1:8000"
)


class _NoAnswer(Exception):
    pass


def register(actions: Any, test: Callable[[argparse.Namespace], int]) -> None:
    """Adds ``provider add`` to the ``provider`` family; ``test`` is ``provider test``'s
    handler, run on the new model."""
    add = actions.add_parser(
        "add", help="add a model server (Ollama, llama.cpp, LM Studio, vLLM, any OpenAI API)"
    )
    add.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    add.add_argument("--url", default=None, help="the server's base URL (asked when missing)")
    add.add_argument("--model", default=None, help="the model's name (asked when missing)")
    add.add_argument("--id", default=None, help="the provider id (default: from the port)")
    add.add_argument(
        "--api-key-env", default=None, metavar="NAME", help="the variable holding its key, if any"
    )
    add.add_argument("--keep-default", action="store_true", help="leave default: as it is")
    add.add_argument("--no-test", action="store_true", help="do not run provider test after")
    add.set_defaults(handler=run_provider_add, run_test=test)


def _ask(console: Console, question: str, default: str | None = None) -> str:
    shown = f" [{default}]" if default else ""
    console.print(f"{escape(question)}{escape(shown)}: ", end="")
    try:
        answer = input().strip()
    except EOFError:
        console.print()
        raise _NoAnswer(question) from None
    if not sys.stdin.isatty():
        console.print(escape(answer))  # what a terminal would have echoed
    if not answer and default:
        return default
    if not answer:
        raise _NoAnswer(question)
    return answer


def _fail(console: Console, message: str) -> int:
    console.print(f"[red]error:[/red] {escape(message)}")
    return EXIT_FAILED


def _chosen(listed: list[ListedModel], name: str) -> ListedModel | None:
    return next((model for model in listed if model.id == name), None)


def _write(path: Path, text: str) -> None:
    """Replaces the file in one rename, keeping its mode (a reader never sees half of it)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(mode)
    temporary.replace(path)


def run_provider_add(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    plane = load_folder(args.config, console)
    if isinstance(plane, int):
        return plane
    try:
        return _add(console, args, set(plane.providers.providers), set(plane.providers.models))
    except _NoAnswer as missing:
        return _fail(console, f"no answer to '{missing}' (give it as an option: --url, --model)")


def _add(console: Console, args: argparse.Namespace, ids: set[str], refs: set[str]) -> int:
    console.print(f"[dim]Base URLs: {escape(EXAMPLES)}[/dim]")
    try:
        base_url = normalized_base_url(args.url or _ask(console, "Base URL of the model server"))
    except ConfigError as exc:
        return _fail(console, str(exc))
    api_key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    try:
        listed = asyncio.run(list_models(base_url, api_key))
    except ListingError as exc:
        return _fail(console, f"cannot list the server's models: {exc}")
    if not listed:
        return _fail(console, f"{base_url}/models lists no model: load or pull one first")
    names = ", ".join(model.id for model in listed[:SHOWN_MODELS])
    more = f" and {len(listed) - SHOWN_MODELS} more" if len(listed) > SHOWN_MODELS else ""
    console.print(f"the server serves: {escape(names)}{more}")
    name = args.model or _ask(console, "Model", default=listed[0].id)
    chosen = _chosen(listed, name)
    if chosen is None:
        return _fail(console, f"the server does not list the model '{name}'")
    provider_id = args.id or provider_id_for(base_url, ids)
    if not ID_PATTERN.fullmatch(provider_id):
        return _fail(console, f"'{provider_id}' is no provider id (a-z, 0-9, - and _, 32 at most)")
    if provider_id in ids:
        return _fail(console, f"providers.yml already has a provider '{provider_id}' (--id)")
    entry = NewEntry(
        provider_id, base_url, chosen.id, chosen.context_length or DEFAULT_CONTEXT, args.api_key_env
    )
    if entry.model_ref in refs:
        return _fail(console, f"providers.yml already has the model '{entry.model_ref}'")
    path = args.config / PROVIDERS_FILE
    before = path.read_text(encoding="utf-8") if path.exists() else None
    text = before if before is not None else default_bytes(PROVIDERS_FILE).decode("utf-8")
    _write(path, with_entry(text, entry, make_default=not args.keep_default,
                            context_said=chosen.context_length is not None))  # fmt: skip
    try:
        load_control_plane(args.config)
    except ConfigLoadError as exc:
        if before is None:
            path.unlink()
        else:
            _write(path, before)
        console.print("[red]error:[/red] the new entry did not load; providers.yml is as it was:")
        for problem in exc.problems[:10]:
            console.print(f"  {escape(str(problem))}")
        return EXIT_FAILED
    said = "as the server says" if chosen.context_length else "assumed: the server does not say"
    console.print(
        f"[green]added[/green] {escape(entry.model_ref)} to {escape(str(path))} "
        f"(context window {entry.context_window}, {said})"
    )
    if not args.keep_default:
        console.print(f"default model: {escape(entry.model_ref)}")
    if args.no_test:
        return EXIT_OK
    console.print(f"[dim]{escape(command_line('provider', 'test', TEST_PROMPT))}[/dim]")
    test = argparse.Namespace(config=args.config, model=entry.model_ref, prompt=TEST_PROMPT)
    result: int = args.run_test(test)
    return result
