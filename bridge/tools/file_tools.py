"""The ``list``, ``read`` and ``grep`` handlers: workspace operations run off the event loop.

Each call gets a fresh ``Budget`` from the workspace's timeout. The filesystem work runs in a
worker thread; if the turn is cancelled while it runs, the budget is marked cancelled so the
thread stops at its next check instead of walking on unobserved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.tools.registry import CallContext, HandlerFn
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.workspace import Workspace
from bridge.tools.workspace_paths import Budget


class _Arguments(BaseModel):
    # The owner's schema in tools.yml is checked first; these models hold the handler's own
    # minimum, so a loosened schema cannot hand the code a value of the wrong type.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ListArguments(_Arguments):
    path: str = ""
    depth: int = Field(default=1, ge=1, le=64)


class ReadArguments(_Arguments):
    path: str
    offset: int = Field(default=0, ge=0)


class GrepArguments(_Arguments):
    pattern: str = Field(min_length=1, max_length=1024)
    path: str = ""


ArgsT = TypeVar("ArgsT", bound=_Arguments)


def workspace_handlers(workspace: Workspace) -> dict[str, HandlerFn]:
    """Handlers for the three file tools over ``workspace``, keyed by built-in name."""

    async def list_handler(arguments: dict[str, Any], context: CallContext) -> Any:
        args = _parse(ListArguments, arguments)
        return await _in_thread(
            workspace,
            lambda budget: workspace.list_folder(args.path, depth=args.depth, budget=budget),
        )

    async def read_handler(arguments: dict[str, Any], context: CallContext) -> Any:
        args = _parse(ReadArguments, arguments)
        return await _in_thread(
            workspace,
            lambda budget: workspace.read_file(args.path, offset=args.offset, budget=budget),
        )

    async def grep_handler(arguments: dict[str, Any], context: CallContext) -> Any:
        args = _parse(GrepArguments, arguments)
        return await _in_thread(
            workspace, lambda budget: workspace.grep(args.pattern, args.path, budget=budget)
        )

    return {"list": list_handler, "read": read_handler, "grep": grep_handler}


def _parse(model: type[ArgsT], arguments: dict[str, Any]) -> ArgsT:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "(arguments)"
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"{where}: {first['msg']}") from None


async def _in_thread(workspace: Workspace, work: Callable[[Budget], Any]) -> Any:
    budget = workspace.budget()
    try:
        return await asyncio.to_thread(work, budget)
    except asyncio.CancelledError:
        budget.cancelled.set()
        raise
