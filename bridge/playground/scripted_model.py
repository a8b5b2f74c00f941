"""The scripted offline model: a tiny OpenAI-compatible Chat Completions server on loopback.

It answers from a small fixed set chosen by keywords of the player's last line, so the tools,
a confirmation prompt and the gates can be tried with no key and no network. Every text it
writes starts with ``LABEL``, so nobody takes it for a real model. Answers are streamed as
Server-Sent Events with a usage chunk, like OpenAI's, so the bridge's real client reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LABEL = "[scripted offline model]"
MODEL_NAME = "playground/scripted"
_MAX_BODY = 8 << 20


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Script:
    """What one answer says: a text, one tool call, or a failure status (429, 500)."""

    text: str | None = None
    call: ToolCall | None = None
    status: int | None = None


# (keywords, tool, arguments): the first whose keyword is in the player's line and whose tool
# the bridge offers this turn is called.
_TRIGGERS: tuple[tuple[tuple[str, ...], str, dict[str, Any]], ...] = (
    (("where am i", "where", "snapshot"), "player_snapshot", {}),
    (("inventory", "items", "holding"), "item_inspect", {}),
    (("looking at", "block"), "block_inspect", {}),
    (("who is online", "online", "players"), "online_players", {}),
    (
        ("day", "time"),
        "run_command",
        {"command": "time set day", "intent": "make it day", "player": ""},
    ),
    (("ask me", "confirm", "question"), "ask_player", {"question": "Shall I go on?"}),
)

_MAKE_WAVE = re.compile(r"\bmake ([A-Za-z0-9_]{1,16}) wave\b", re.IGNORECASE)
_REMEMBER = re.compile(r"\bremember (?:that )?(.{1,500})", re.IGNORECASE | re.DOTALL)
_RECALL = re.compile(r"\b(?:what do you remember|recall)\b(?: about)?\s*(.{0,500})", re.I | re.S)
_FUNCTION = ("roll a die", "roll the dice", "dice")
_WEB = ("test page", "fetch the page", "read the page")
_MCP = ("demo server", "mcp")
_MARKER = re.compile(r"^\[.*\b(?:begins|ends)\b.*\]$")
DEMO_FUNCTION = "dice"
"""The Function the playground adds to its copy of the folder (`bridge.playground.demos`)."""
DEMO_MCP_SERVER = "demo"
"""The MCP server the playground adds (`demo_mcp_server.py`); its tools are ``mcp__demo__*``."""
PAGE_PATH = "/test-page"
PAGE = (
    "<html><head><title>Playground test page</title></head><body><article>"
    "<h1>Playground test page</h1><p>This page is served on loopback by the playground itself, "
    "so the web tools can be tried offline. The secret word of the day is creeper.</p>"
    "</article></body></html>"
)
_FAILURES = {"provider 429": 429, "provider 500": 500}

HELP = (
    f"{LABEL} I answer from a fixed set. Try: where am I · what am I holding · what block is "
    "that · who is online · make it day · ask me first · make Alex wave · remember my base is "
    "at the river · what do you remember about my base · roll a die · fetch the test page · "
    "ask the demo server · provider 429 · provider 500. As an operator (/as Steve op): /ai "
    "persona playground-pirate, then /ai hello."
)
"""What to type, short enough for the reply's eight chat lines (`chat.reply_max_lines`), also
after a persona's opening: a longer list was cut with "…" before its last demos. The bridge
column names each tool as it is called; docs/install.md says what each shows."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _offered(body: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            names.add(str(tool["function"].get("name", "")))
    return names


def _called_tool(messages: list[Any], call_id: str) -> str:
    for message in reversed(messages):
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            if isinstance(call, dict) and call.get("id") == call_id:
                return str(call.get("function", {}).get("name", "a tool"))
    return "a tool"


def _summary(result: str) -> str:
    """A tool result in one short line (the whole of it is in the audit column)."""
    try:
        parsed = json.loads(result)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("result"), dict):
        parsed = parsed["result"]  # the bridge's envelope: {"tool", "ok", "result"}
    if isinstance(parsed, dict):
        said = _demo_summary(parsed) or _snapshot_summary(parsed)
        if said is not None:
            return said if len(said) <= 300 else said[:299] + "…"
        if isinstance(parsed.get("position"), dict):
            p = parsed["position"]
            return (
                f"you are in {parsed.get('world')} at x={p.get('x')} y={p.get('y')} "
                f"z={p.get('z')}, health {parsed.get('health')}, food {parsed.get('food')}"
            )
        if "answer" in parsed:
            return f"your answer was {json.dumps(parsed['answer'])}"
        if "status" in parsed or "error" in parsed or "error_code" in parsed:
            said = parsed.get("status") or parsed.get("error") or parsed.get("error_code")
            why = parsed.get("reason") or parsed.get("message") or ""
            return f"the bridge answered {said}" + (f": {why}" if why else "")
    flat = " ".join(result.split())
    return flat if len(flat) <= 200 else flat[:199] + "…"


def _persona(messages: list[dict[str, Any]]) -> str | None:
    """The start of the persona text in the instructions (`bridge.turns.persona`), if any."""
    for message in messages:
        if message.get("role") in ("system", "developer"):
            _, heading, persona = _text_of(message.get("content")).partition("## Persona\n\n")
            if heading:  # its first sentence: the rest would push the help past the lines
                first = " ".join(persona.split())
                first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
                return first if len(first) <= 60 else first[:59] + "…"
    return None


def _as_persona(script: Script, messages: list[dict[str, Any]]) -> Script:
    """A text answer says which persona the instructions gave, so a switch can be seen."""
    persona = _persona(messages)
    if script.text is None or persona is None:
        return script
    rest = script.text.removeprefix(LABEL)
    return Script(text=f"{LABEL} (speaking as the persona: {persona}){rest}")


def _recalled(memories: list[dict[str, Any]]) -> str:
    """Kept memories in their words; entries of earlier conversations (the whole exchange,
    the help included) only counted, so the note the player asked about is not buried."""
    kept = [
        _short(str(m.get("text", "")), 80) for m in memories if m.get("scope") != "conversation"
    ]
    entries = len(memories) - len(kept)
    said = "I remember: " + ("; ".join(kept) if kept else "nothing kept about that")
    if entries:
        said += f" (and {entries} entr{'y' if entries == 1 else 'ies'} of earlier conversations)"
    return said


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _snapshot_summary(result: dict[str, Any]) -> str | None:
    """The snapshot tools' results (who is online, what is held, the block looked at)."""
    if isinstance(result.get("players"), list):
        names = ", ".join(str(name) for name in result["players"]) or "nobody"
        return f"online: {names}"
    if isinstance(result.get("items"), list):
        held = [
            f"{item.get('amount', 1)} {item.get('type')} ({item.get('slot')})"
            for item in result["items"]
            if isinstance(item, dict)
        ]
        return "you hold " + (", ".join(held) if held else "nothing")
    block = result.get("block")
    if isinstance(block, dict) and isinstance(block.get("position"), dict):
        p = block["position"]
        return f"you look at {block.get('type')} at x={p.get('x')} y={p.get('y')} z={p.get('z')}"
    return None


def _demo_summary(result: dict[str, Any]) -> str | None:
    """The demos' results (memory, a Function, a page, an MCP tool) in a few words."""
    if "remembered" in result:
        return f"I will remember: {result['remembered']}"
    if isinstance(result.get("memories"), list):
        return _recalled([m for m in result["memories"] if isinstance(m, dict)])
    if "output" in result and "status" in result:
        return f"the Function answered {result['status']}: {json.dumps(result['output'])}"
    if isinstance(result.get("text"), str) and "untrusted" in result:
        marked = result["text"].splitlines()  # less the markers around the third party's text
        text = " ".join(" ".join(line for line in marked if not _MARKER.match(line)).split())
        if "final_url" in result:
            return f"the page {result['final_url']} says: {text}"
        return f"it says: {text}"
    return None


def choose(body: dict[str, Any], page_url: str | None = None) -> Script:
    """The scripted answer to one Chat Completions request body; ``page_url`` is the test page
    a web_fetch asks for."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return _as_persona(_choose(body, messages, page_url), messages)


def _demo_call(said: str, typed: str, offered: set[str], page_url: str | None) -> Script | None:
    """The memory, Function, web and MCP demos; None when the line asks for none of them."""
    wanted: ToolCall | None = None
    if (recall := _RECALL.search(typed)) is not None:
        query = recall.group(1).strip(" ?.!") or typed.strip()
        wanted = ToolCall("recall", {"query": query})
    elif (remember := _REMEMBER.search(typed)) is not None:
        wanted = ToolCall("remember", {"text": remember.group(1).strip()})
    elif any(words in said for words in _FUNCTION):
        arguments: dict[str, Any] = {"name": DEMO_FUNCTION, "arguments": {"sides": 6}}
        wanted = ToolCall("call_function", arguments)
    elif any(words in said for words in _WEB) and page_url is not None:
        wanted = ToolCall("web_fetch", {"url": page_url})
    elif any(words in said for words in _MCP):
        prefix = f"mcp__{DEMO_MCP_SERVER}__"
        tools = sorted(name for name in offered if name.startswith(prefix))
        if not tools:
            return Script(
                text=f"{LABEL} I would call a tool of the demo MCP server, but none "
                "is offered to you."
            )
        wanted = ToolCall(tools[0], {})
    if wanted is None:
        return None
    if wanted.name not in offered:
        return Script(text=f"{LABEL} I would call {wanted.name}, but it is not offered to you.")
    return Script(call=wanted)


def _choose(body: dict[str, Any], messages: list[dict[str, Any]], page_url: str | None) -> Script:
    if messages and messages[-1].get("role") == "tool":
        last = messages[-1]
        tool = _called_tool(messages, str(last.get("tool_call_id", "")))
        if tool.startswith("mcp__"):  # chat formatting would take the __ for emphasis
            server, _, name = tool.removeprefix("mcp__").partition("__")
            tool = f"the {server} MCP server's {name}"
        return Script(text=f"{LABEL} {tool} said: {_summary(_text_of(last.get('content')))}")
    typed = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            typed = _text_of(message.get("content"))
            break
    said = typed.lower()
    for words, status in _FAILURES.items():
        if words in said:
            return Script(status=status)
    offered = _offered(body)
    demo = _demo_call(said, typed, offered, page_url)
    if demo is not None:
        return demo
    wave = _MAKE_WAVE.search(typed)
    if wave is not None and "run_command" in offered:
        arguments = {"command": "me waves", "intent": "wave hello", "player": wave.group(1)}
        return Script(call=ToolCall("run_command", arguments))
    for keywords, tool, arguments in _TRIGGERS:
        if any(word in said for word in keywords):
            if tool in offered:
                return Script(call=ToolCall(tool, dict(arguments)))
            return Script(text=f"{LABEL} I would call {tool}, but it is not offered to you.")
    return Script(text=HELP)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def sse_body(script: Script, prompt_chars: int) -> bytes:
    """``script`` as a Chat Completions stream: deltas, a finish, a usage chunk, ``[DONE]``."""
    events: list[dict[str, Any]] = []
    if script.call is not None:
        arguments = json.dumps(script.call.arguments)
        delta: dict[str, Any] = {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_scripted",
                    "type": "function",
                    "function": {"name": script.call.name, "arguments": arguments},
                }
            ]
        }
        events.append({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        finish, written = "tool_calls", arguments
    else:
        text = script.text or ""
        words = text.split(" ")
        for i, word in enumerate(words):  # word by word, so the action bar has frames to show
            part = word if i == 0 else " " + word
            events.append(
                {"choices": [{"index": 0, "delta": {"content": part}, "finish_reason": None}]}
            )
        finish, written = "stop", text
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    prompt, completion = max(1, prompt_chars // 4), _tokens(written)
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    events.append({"choices": [], "usage": {**usage, "total_tokens": prompt + completion}})
    lines = [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def wire_note(body: dict[str, Any], script: Script) -> list[str]:
    """What the model read and wrote in one request, for the bridge column: the tool result it
    was given (the audit log keeps only its size) and the call it asked for, with arguments."""
    notes: list[str] = []
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if messages and messages[-1].get("role") == "tool":
        result = " ".join(_text_of(messages[-1].get("content")).split())
        notes.append(f"model read the tool result: {result}")
    if script.status is not None:
        notes.append(f"model server answers HTTP {script.status} (scripted)")
    if script.call is not None:
        notes.append(f"model asked for {script.call.name} {json.dumps(script.call.arguments)}")
    return notes


class ScriptedModelServer:
    """Serves ``POST …/chat/completions`` on 127.0.0.1 (one request per connection).

    ``noted`` gets ``wire_note``'s lines for every request answered."""

    def __init__(self, noted: Callable[[str], None] | None = None) -> None:
        self._server: asyncio.Server | None = None
        self._noted = noted
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def page_url(self) -> str:
        """The test page ``web_fetch`` reads in the playground (served here too)."""
        return f"http://127.0.0.1:{self.port}{PAGE_PATH}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, body, kind = await self._answer(reader)
        except (ValueError, asyncio.IncompleteReadError, ConnectionError):
            status, body = 400, b'{"error": {"message": "bad request"}}'
            kind = "application/json"
        head = (
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
            f"content-type: {kind}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        with contextlib.suppress(ConnectionError):
            writer.write(head.encode("latin-1") + body)
            await writer.drain()
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[int, bytes, str]:
        """Status, body and content type of one request."""
        request_line = (await reader.readline()).decode("latin-1")
        length = 0
        while True:
            line = (await reader.readline()).decode("latin-1").strip()
            if not line:
                break
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length > _MAX_BODY:
            raise ValueError("body too large")
        raw = await reader.readexactly(length)
        if request_line.startswith("GET ") and "/models " in request_line:
            # The status page's probe (`bridge.providers.probe`): the one model it serves.
            listing = {"object": "list", "data": [{"id": "scripted"}]}
            return 200, json.dumps(listing).encode(), "application/json"
        if request_line.startswith(("GET ", "HEAD ")) and f"{PAGE_PATH} " in request_line:
            return 200, PAGE.encode(), "text/html; charset=utf-8"
        if not request_line.startswith("POST ") or "/chat/completions" not in request_line:
            missing = b'{"error": {"message": "only POST /v1/chat/completions is served"}}'
            return 404, missing, "application/json"
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("body is not a JSON object")
        script = choose(body, self.page_url)
        if self._noted is not None:
            for note in wire_note(body, script):
                self._noted(note)
        if script.status is not None:
            failure = {"error": {"message": f"{LABEL} a scripted {script.status}"}}
            return script.status, json.dumps(failure).encode(), "application/json"
        return 200, sse_body(script, len(raw)), "text/event-stream"
