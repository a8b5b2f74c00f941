"""Every command a command carries, or a refusal when that cannot be told with certainty.

A command can run others: ``execute ... run``, ``return run``, and any NBT or text component
with a ``Command`` key (command blocks and their minecarts, in ``setblock``, ``fill``,
``summon``, ``give``, ``item replace``, ``data merge`` ...) or a ``run_command`` click event
(signs, books, ``tellraw``, dialogs). The never list must see each of them, so this module
returns the whole tree: the command itself, then every command found inside it, recursively.

It over-approximates rather than parses Minecraft's grammar: every ``run`` word of an
``execute``/``return`` chain starts a candidate, and every quoted string is decoded (all SNBT
and JSON escapes) and scanned again as data, to any depth. Any mention of "command" (in any
case, in any layer) must be accounted for: a ``Command``/``command`` key with a text value (its
value is carried), a ``run_command`` action (every ``value``/``command`` text is carried), a
command block id (reported, so the ``command_blocks`` category can refuse it), or one of the
few game rules and actions known not to run anything. Anything else - a ``Command`` key
holding a compound, a path set from elsewhere, an escape the bridge cannot decode, a quote
never closed, a tree too deep - raises ``UncertainCommand`` with the reason.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_DEPTH = 8
MAX_CARRIED = 64

_BLOCK_ID = re.compile(r"(?:minecraft:)?(?:repeating_|chain_)?command_block(?:_minecart)?")
_HARMLESS = frozenset(
    {
        # game rules whose names mention commands
        "commandblockoutput",
        "sendcommandfeedback",
        "logadmincommands",
        "maxcommandchainlength",
        "maxcommandforkcount",
        "commandmodificationblocklimit",
        "commandblocksenabled",
        "minecraft:command_block_output",
        "minecraft:send_command_feedback",
        "minecraft:log_admin_commands",
        "minecraft:max_command_sequence_length",
        "minecraft:max_command_forks",
        "minecraft:command_modification_block_limit",
        "minecraft:command_blocks_work",
        # a click action that only fills the chat box
        "suggest_command",
    }
)
_PUNCT = frozenset("{}[](),:;=")
# A quote opens a string only at the start of a value; elsewhere ("don't") it is a letter.
_STRING_START_AFTER = frozenset(" {[(,:;=")
_SIMPLE_ESCAPES = {
    "\\": "\\",
    '"': '"',
    "'": "'",
    "/": "/",
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "s": " ",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class UncertainCommand(ValueError):
    """What a command carries cannot be told with certainty; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Carried:
    """``commands``: the command, then each command it carries (depth first, each once);
    ``command_blocks``: the command block ids it mentions (``command_block_minecart`` ...)."""

    commands: tuple[str, ...]
    command_blocks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "word", "string" or "punct"
    text: str


def carried_commands(command: str) -> Carried:
    """The tree of ``command`` (a canonical command, without its leading ``/``)."""
    walk = _Walk()
    walk.command(command, 0)
    return Carried(tuple(walk.commands), tuple(dict.fromkeys(walk.blocks)))


def label_of(command: str) -> str:
    """The label a server resolves: the first word, lower-cased, namespace kept."""
    return command.partition(" ")[0].lower()


class _Walk:
    def __init__(self) -> None:
        self.commands: list[str] = []
        self.blocks: list[str] = []

    def command(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise UncertainCommand(f"commands are nested more than {MAX_DEPTH} deep")
        if text in self.commands:
            return
        if len(self.commands) >= MAX_CARRIED:
            raise UncertainCommand(f"it carries more than {MAX_CARRIED} commands")
        self.commands.append(text)
        words = text.split(" ")
        root = words[0].lower().rpartition(":")[2]
        if root in ("execute", "return"):
            # Every `run` word may be the real one (a player or a tag can be named run): each
            # suffix is judged, so the real inner command is always among them.
            for index, word in enumerate(words[1:], start=1):
                if word == "run":
                    inner = " ".join(words[index + 1 :])
                    if not inner:
                        raise UncertainCommand("a run with no command after it")
                    self.command(_inner(inner), depth + 1)
                elif word.lower().rpartition(":")[2] == "function" and index > 1:
                    # `execute if|unless function <id>` runs that function to test it: judged
                    # as the function command it is (whose commands the bridge cannot see).
                    self.command(" ".join(["function", *words[index + 1 : index + 2]]), depth + 1)
        # The label itself is resolved by the server, not read as data.
        for inner in self._data(text.partition(" ")[2], depth):
            self.command(_inner(inner), depth + 1)

    def _data(self, text: str, depth: int) -> list[str]:
        """The command texts carried by the data (NBT, components, JSON) inside ``text``."""
        layers: list[list[_Token]] = []
        self._layers(text, depth, layers)
        clicks = any(
            token.text.lower().rpartition(":")[2] == "run_command"
            for layer in layers
            for token in layer
        )
        found: list[str] = []
        for layer in layers:
            found.extend(self._layer(layer, clicks))
        return found

    def _layers(self, text: str, depth: int, layers: list[list[_Token]]) -> None:
        if depth > MAX_DEPTH:
            raise UncertainCommand(f"quoted text is nested more than {MAX_DEPTH} deep")
        tokens = _tokens(text)
        layers.append(tokens)
        for index, token in enumerate(tokens):
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            is_key = following is not None and following.text == ":" and following.kind == "punct"
            if token.kind == "string" and not is_key:  # a key is judged where it stands
                self._layers(token.text, depth + 1, layers)

    def _layer(self, tokens: list[_Token], clicks: bool) -> list[str]:
        found: list[str] = []
        for index, token in enumerate(tokens):
            if token.kind == "punct":
                continue
            lowered = token.text.lower()
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            is_key = following is not None and following.kind == "punct" and following.text == ":"
            if is_key and (lowered == "command" or (clicks and lowered == "value")):
                found.append(_text_value(tokens, index + 2, token.text))
                continue
            if "command" not in lowered:
                continue
            if lowered in _HARMLESS or lowered.rpartition(":")[2] == "run_command":
                continue
            if token.kind == "string":
                continue  # scanned as a layer of its own
            if _BLOCK_ID.fullmatch(lowered):
                self.blocks.append(lowered.rpartition(":")[2])
                continue
            if lowered.endswith("command"):
                found.append(_path_value(tokens, index))
                continue
            raise UncertainCommand(
                f"it mentions {token.text[:40]!r}, which may carry a command the bridge cannot read"
            )
        return found


def _text_value(tokens: list[_Token], index: int, key: str) -> str:
    value = tokens[index] if index < len(tokens) else None
    if value is None or value.kind == "punct":
        raise UncertainCommand(f"its {key!r} key holds something other than text")
    return value.text


def _path_value(tokens: list[_Token], index: int) -> str:
    """``data modify ... Command set value "<text>"``: the text; any other way of changing a
    ``Command`` field (from another block, appended, merged) cannot be read."""
    parts = [token.text for token in tokens[index + 1 : index + 3]]
    value = tokens[index + 3] if index + 3 < len(tokens) else None
    if parts == ["set", "value"] and value is not None and value.kind != "punct":
        return value.text
    raise UncertainCommand(
        f"it mentions {tokens[index].text[:40]!r} where a command may be carried that the"
        " bridge cannot read"
    )


def _inner(text: str) -> str:
    """A carried command as the server reads it: one leading ``/`` dropped."""
    stripped = text[1:] if text.startswith("/") else text
    if not stripped or stripped != stripped.strip(" ") or "  " in stripped:
        raise UncertainCommand(f"it carries {text[:60]!r}, which is not one plain command")
    if not stripped.isprintable():
        raise UncertainCommand("it carries a command with control or invisible characters")
    return stripped


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == " ":
            index += 1
        elif char in "\"'" and (index == 0 or text[index - 1] in _STRING_START_AFTER):
            value, index = _string(text, index)
            tokens.append(_Token("string", value))
        elif char in _PUNCT:
            tokens.append(_Token("punct", char))
            index += 1
        else:
            start = index
            while index < size and text[index] != " " and text[index] not in _PUNCT:
                index += 1
            word = text[start:index]
            if "\\" in word:
                raise UncertainCommand(f"it has a backslash outside quotes ({word[:40]!r})")
            tokens.append(_Token("word", word))
    return tokens


def _string(text: str, start: int) -> tuple[str, int]:
    """The decoded quoted string starting at ``start`` and the index after its closing quote."""
    quote = text[start]
    out: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == quote:
            return "".join(out), index + 1
        if char != "\\":
            out.append(char)
            index += 1
            continue
        if index + 1 >= len(text):
            break
        code = text[index + 1]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            index += 2
        elif code in _HEX_ESCAPES:
            digits = text[index + 2 : index + 2 + _HEX_ESCAPES[code]]
            if len(digits) != _HEX_ESCAPES[code] or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise UncertainCommand(f"it has an escape the bridge cannot decode (\\{code})")
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise UncertainCommand("it has an escape outside Unicode") from None
            index += 2 + len(digits)
        elif code == "N" and text[index + 2 : index + 3] == "{":
            end = text.find("}", index + 3)
            if end < 0:
                break
            try:
                out.append(unicodedata.lookup(text[index + 3 : end]))
            except KeyError:
                raise UncertainCommand("it has a \\N{...} escape naming no character") from None
            index = end + 1
        else:
            raise UncertainCommand(f"it has an escape the bridge cannot decode (\\{code})")
    raise UncertainCommand("it has a quoted text that is never closed")
