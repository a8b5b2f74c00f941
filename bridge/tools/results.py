"""The one shape every tool call ends in, and the error a handler raises to refuse.

A call that ran returns ``{"tool", "ok": true, "result"}``; any refusal or failure returns
``{"tool", "ok": false, "error_code", "message"}``. The model, the audit log and the CLI see the
same JSON. Error codes are stable strings: tests and the model's instructions may rely on them.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from bridge.errors import ToolError


class ErrorCode(StrEnum):
    """Why a tool call did not produce a result."""

    UNKNOWN_TOOL = "unknown_tool"
    """No tool of that name is available to this player in this turn (absent or gated)."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments are not JSON, not an object, or do not match the tool's schema."""
    COOLDOWN = "cooldown"
    """This player called this tool too recently (``environment.tool_cooldown_ms``)."""
    UNAVAILABLE = "unavailable"
    """The tool exists but cannot run now (its handler is not built or the server link is down)."""
    PATH_REFUSED = "path_refused"
    """A workspace path broke a rule: outside the workspace, a link, a special file, too deep."""
    NOT_FOUND = "not_found"
    """The workspace path names nothing."""
    NOT_A_FILE = "not_a_file"
    """``read`` was given a folder, or a file that is not text."""
    NOT_A_DIRECTORY = "not_a_directory"
    """``list`` or ``grep`` was given a file where a folder was expected."""
    URL_REFUSED = "url_refused"
    """The web shield refused a URL or the address it leads to; the message names the rule."""
    NOT_READABLE = "not_readable"
    """``web_fetch`` got an answer it does not read: not text (a PDF, an image), an HTTP error
    status, too many redirects."""
    TIMEOUT = "timeout"
    """The tool ran out of its time budget before producing anything useful."""
    REFUSED = "refused"
    """The call broke a rule of its tool: a memory scope the player may not write, a limit
    reached, consent not given."""
    TOOL_ERROR = "tool_error"
    """An MCP server's tool ran and reported an error; the message is its own (third-party)
    text, cut."""
    RESULT_TOO_LARGE = "result_too_large"
    """An MCP server's answer was over what that server may send (cut at the pipe, never
    read); the server's session goes on."""
    INTERNAL_ERROR = "internal_error"
    """The handler failed unexpectedly; the details went to the bridge log, not the model."""


class ToolFailure(ToolError):
    """Raised by a handler to end a call with a clear error result."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


class ToolOutcome(BaseModel):
    """The result of one tool call, as the model and the CLI receive it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    ok: bool
    result: Any = None
    error_code: ErrorCode | None = None
    message: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ToolOutcome:
        if self.ok and (self.error_code is not None or self.message is not None):
            raise ValueError("a successful outcome carries no error")
        if not self.ok and (self.error_code is None or self.message is None or self.result):
            raise ValueError("a failed outcome carries an error code and a message only")
        return self

    @classmethod
    def success(cls, tool: str, result: Any) -> ToolOutcome:
        return cls(tool=tool, ok=True, result=result)

    @classmethod
    def failure(cls, tool: str, code: ErrorCode, message: str) -> ToolOutcome:
        return cls(tool=tool, ok=False, error_code=code, message=message)

    def to_json(self) -> str:
        """Compact JSON with non-ASCII kept readable; the text the model receives."""
        return json.dumps(
            self.model_dump(mode="json", exclude_none=True), ensure_ascii=False, sort_keys=False
        )
