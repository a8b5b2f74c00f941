"""The terminal side of the playground: what players see, and dimmed beside it what the bridge
did, one line each, with ``rich``; the lines you type as the player you are now.

Works on a terminal and on plain pipes alike (no full-screen layout, no cursor tricks), so a
test can drive it through stdin and stdout as a person would through a terminal.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from bridge.errors import ConfigError
from bridge.link.messages import PLAYER_NAME_PATTERN
from bridge.playground.simulated_server import Player, ShowKind, SimulatedServer

HELP = (
    "type a chat line as the player (the wake prefix asks the assistant); /ai <question> asks "
    "privately; /mineclaw ... runs a bridge command; y / n (or 1-5) answer your confirmation "
    "prompt; /as NAME [op] switches player; /disconnect and /connect drop and restore the "
    "server's link; /quit leaves"
)

RELOAD_NODE = "mineclaw.command.reload"

BYSTANDER = "Alex"
"""The other player online from the start (``/as Alex`` plays as them)."""

_STYLES: dict[ShowKind, tuple[str, str]] = {
    "public": ("chat", "white"),
    "private": ("private", "cyan"),
    "actionbar": ("action bar", "yellow"),
    "prompt": ("prompt", "bold magenta"),
    "notice": ("notice", "cyan"),
    "game": ("server", "dim"),
    "server": ("bridge", "dim"),
}


class Screen:
    """Prints each line as a player (or the bridge column) would get it."""

    def __init__(self, out: TextIO | None = None) -> None:
        stream = out or sys.stdout
        self.console = Console(file=stream, highlight=False, soft_wrap=True)

    def show(self, kind: ShowKind, player: str, text: str) -> None:
        label, style = _STYLES[kind]
        if kind in ("game", "server"):
            self.console.print(f"    ┊ {label}: {escape(text)}", style="dim")
            return
        if kind == "public" and player:  # a player's own line, as the chat shows it
            self.console.print(escape(f"[{label}] <{player}> {text}"), style=style)
            return
        seen_by = f" → {player}" if player else ""
        self.console.print(escape(f"[{label}{seen_by}] {text}"), style=style)

    def say(self, text: str) -> None:
        """A line of the playground itself (not of the game, not of the bridge)."""
        self.console.print(f"» {escape(text)}", style="green")


@dataclass
class Conversation:
    """Reads what you type and does it as the current player."""

    server: SimulatedServer
    screen: Screen
    read_line: Callable[[str], str]
    """Reads one typed line, given the prompt to show (``EOFError`` at the end of input)."""
    player: Player = field(default_factory=lambda: Player("Steve"))
    copy_again: Callable[[], Path] | None = None
    """Copies the owner's folder over the playground's copy before ``/mineclaw reload``
    (`Playground.copy_again`): a reload must read what the owner edited, not the old copy."""

    async def run(self) -> None:
        await self.server.join(self.player)
        # Another player is online from the start, so a command for another player (the
        # README's "@ai make Alex wave") has someone to ask instead of target_offline.
        await self.server.join(Player(BYSTANDER))
        prefix = self.server.public_prefix
        self.screen.say(f"you are {self._who()}; {BYSTANDER} is online too. {HELP}")
        self.screen.say(f"to ask the assistant in public chat, start a line with {prefix}")
        while True:
            try:
                line = await asyncio.to_thread(self.read_line, f"{self._who()}> ")
            except EOFError:
                return
            if not await self.handle(line.strip()):
                return

    async def handle(self, line: str) -> bool:
        """Does one typed line; False once the player leaves."""
        if not line:
            return True
        if line in ("/quit", "/exit"):
            self.screen.say("bye")
            return False
        try:
            if line.startswith("/as"):
                await self._switch(line[3:].split())
            elif line.lower() in ("y", "n") or line.isdigit():
                await self._answer(line.lower())
            elif line == "/disconnect":
                await self.server.close()
                self.screen.say("the server's link to the bridge is closed; /connect links again")
            elif line == "/connect":
                if not self.server.linked:
                    await self.server.connect()
                self.screen.say("the server is linked to the bridge")
            elif line == "/help":
                self.screen.say(HELP)
            elif line.startswith("/ai"):
                question = line[3:].strip()
                await self.server.command(self.player, ["ai", question] if question else ["ai"])
            elif line.startswith("/mineclaw"):
                args = shlex.split(line)[1:] or ["help"]
                # Only for a player who may reload: anyone else is refused by the bridge, and
                # the copy stays as it is (it said "copied again" before the refusal).
                reloading = args == ["reload"] and RELOAD_NODE in self.server.granted(self.player)
                if reloading and self.copy_again is not None:
                    try:
                        source = await asyncio.to_thread(self.copy_again)
                    except ConfigError as exc:
                        self.screen.say(f"not reloaded, the bridge goes on as it was: {exc}")
                        return True
                    except OSError as exc:
                        self.screen.say(f"not reloaded: your folder could not be copied: {exc}")
                        return True
                    self.screen.say(f"copied {source} again; reloading it")
                await self.server.command(self.player, args)
            elif line.startswith("/"):
                self.screen.say(f"not simulated: {line.split()[0]} ({HELP})")
            else:
                await self.server.chat(self.player, line)
        except (ConnectionError, TimeoutError, ValueError) as exc:
            self.screen.say(f"not sent: {exc}")
        return True

    def _who(self) -> str:
        return f"{self.player.name}{' (op)' if self.player.op else ''}"

    async def _switch(self, words: list[str]) -> None:
        if not words or len(words) > 2 or (len(words) == 2 and words[1] != "op"):
            self.screen.say("usage: /as NAME or /as NAME op")
            return
        if not re.fullmatch(PLAYER_NAME_PATTERN, words[0]):
            self.screen.say(f"{words[0]} is not a player name: 1-16 of A-Z, a-z, 0-9 and _")
            return
        wanted = Player(words[0], op=len(words) == 2)
        await self.server.join(wanted)
        self.player = wanted
        self.screen.say(f"you are {self._who()} now")

    async def _answer(self, key: str) -> None:
        prompt = self.server.prompts.get(self.player.ref.uuid)
        if prompt is None:
            self.screen.say(f"{self.player.name} has no confirmation prompt to answer")
            return
        if key in ("y", "n"):
            wanted = "approve" if key == "y" else "deny"
            chosen = next((a for a in prompt.answers if a[0] == wanted), None)
        else:
            index = int(key) - 1
            chosen = prompt.answers[index] if 0 <= index < len(prompt.answers) else None
        if chosen is None:
            self.screen.say(f"that prompt has no answer {key}")
            return
        del self.server.prompts[self.player.ref.uuid]
        answer, option = chosen
        args = [answer, prompt.token] + ([option] if option else [])
        await self.server.command(self.player, args)
