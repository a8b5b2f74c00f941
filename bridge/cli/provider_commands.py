"""``mineclaw-bridge provider test``: one request to a configured model, streamed live
(``provider add``, which runs it on the model it adds, is in ``provider_add``).

It sends the prompt with the configured tools (the built-ins of ``tools.yml`` and the
provider's native tools), shows the answer as it streams, the reasoning summaries, the tool
calls the model asked for (never run), the usage, or a clear error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from bridge.app.serving.provider_settings import client_for
from bridge.cli import provider_add
from bridge.cli.output import load_folder
from bridge.control import ControlPlane
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.control.providers import ResolvedModel
from bridge.errors import ConfigError
from bridge.providers.events import (
    Completed,
    Failed,
    ReasoningDelta,
    TextDelta,
    ToolCallDone,
)
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import PlayerMessage, ProviderRequest, ToolSpec
from bridge.unicode_text import valid_json_text, valid_text

EXIT_OK = 0
EXIT_FAILED = 1  # the configuration is invalid or the request failed
EXIT_BAD_MODEL = 2  # --model names nothing configured


def register(subparsers: Any) -> None:
    provider = subparsers.add_parser("provider", help="talk to a configured model provider")
    actions = provider.add_subparsers(dest="provider_command", metavar="ACTION", required=True)
    test = actions.add_parser("test", help="send one prompt and stream the answer")
    test.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    test.add_argument("--model", default=None, metavar="PROVIDER/MODEL")
    test.add_argument("prompt")
    test.set_defaults(handler=run_provider_test)
    provider_add.register(actions, test=run_provider_test)


def configured_tools(plane: ControlPlane) -> tuple[ToolSpec, ...]:
    """The enabled built-ins of ``tools.yml`` as the model would see them."""
    return tuple(
        ToolSpec(name=name, description=spec.description, parameters=spec.parameters)
        for name, spec in plane.tools.tools.items()
        if spec.enabled
    )


def run_provider_test(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    plane = load_folder(args.config, console)
    if isinstance(plane, int):
        return plane
    try:
        resolved = plane.providers.resolve(args.model)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_BAD_MODEL
    return asyncio.run(_stream(console, plane, args.model, args.prompt, resolved))


async def _stream(
    console: Console,
    plane: ControlPlane,
    model_ref: str | None,
    prompt: str,
    resolved: ResolvedModel,
) -> int:
    identity = IdentitySettings(
        include_player_name_field=plane.config.identity.include_player_name_field,
        include_player_content_prefix=plane.config.identity.include_player_content_prefix,
    )
    try:
        client, model = client_for(resolved, identity=identity, redact=plane.redact)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {escape(plane.redact(str(exc)))}")
        return EXIT_FAILED
    request = ProviderRequest(
        session_id=f"provider-test-{uuid.uuid4().hex}",
        instructions=plane.agents_md or None,
        items=(PlayerMessage(player=None, text=prompt),),
        tools=configured_tools(plane),
        native_tools=tuple(dict(tool) for tool in client.settings.native_tools),
    )
    name = model_ref or plane.providers.default
    console.print(f"[bold]{escape(name)}[/bold] ({client.settings.api_type})", style="dim")
    in_reasoning = False
    async with client, contextlib.aclosing(client.stream(request, model)) as events:
        async for event in events:
            if isinstance(event, ReasoningDelta):
                if not in_reasoning:
                    console.print("[dim italic]reasoning:[/dim italic] ", end="")
                    in_reasoning = True
                console.print(escape(valid_text(event.text)), style="dim italic", end="")
                continue
            if in_reasoning:
                console.print()
                in_reasoning = False
            if isinstance(event, TextDelta):
                console.print(escape(valid_text(event.text)), end="")
            elif isinstance(event, ToolCallDone):
                call = event.call
                name, arguments = valid_text(call.name), valid_json_text(call.arguments)
                console.print(
                    f"\n[cyan]tool call[/cyan] {escape(name)}({escape(arguments)}) "
                    "[dim](not run)[/dim]"
                )
            elif isinstance(event, Completed):
                console.print()
                usage = event.usage
                if usage is not None:
                    console.print(
                        f"usage: {usage.input_tokens} in ({usage.cached_input_tokens} cached), "
                        f"{usage.output_tokens} out ({usage.reasoning_tokens} reasoning)"
                        + (" (estimated: the server reported none)" if usage.estimated else ""),
                        style="dim",
                    )
                console.print(f"[green]done[/green] ({escape(event.finish_reason or 'stop')})")
                return EXIT_OK
            elif isinstance(event, Failed):
                console.print()
                hint = " (may succeed if retried)" if event.retryable else ""
                console.print(
                    f"[red]error:[/red] {escape(plane.redact(valid_text(event.reason)))}{hint}"
                )
                return EXIT_FAILED
    console.print("[red]error:[/red] the stream ended without a result")
    return EXIT_FAILED
