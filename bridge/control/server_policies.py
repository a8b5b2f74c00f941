"""The policy files one server of a network has of its own (``servers.<id>.whitelist`` ...).

Each is a whole file in the format of its network-wide counterpart (``whitelist.yml``,
``tools.yml``, ``functions.yml``, ``message.yml``) and replaces that file for the one server;
what a server does not name it takes from the network-wide file. Replacing, not merging, keeps
what a server may do readable in one file: nothing of the network's whitelist leaks into a
server that has its own.

The files are read and validated with the rest of the folder, every problem located in the
file itself; a bad one refuses the whole plane like any other file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile, catalogue_problems
from bridge.control.messages_file import MessagesFile
from bridge.control.problems import Problem
from bridge.control.servers_file import ServerEntry
from bridge.control.tools_file import ToolsFile
from bridge.control.whitelist_file import WhitelistFile

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ServerPolicy:
    """A server's own policy files, ``None`` where it takes the network-wide one."""

    whitelist: WhitelistFile | None = None
    tools: ToolsFile | None = None
    functions: FunctionsFile | None = None
    messages: MessagesFile | None = None

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in dataclasses.fields(self))


Validate = Callable[[str, type[BaseModel]], BaseModel | None]
"""Reads, parses and validates one file by its folder-relative path (problems recorded by
the caller); ``None`` when it had problems."""


def load_policy(
    server_id: str,
    entry: ServerEntry,
    *,
    validate: Validate,
    function_limits: FunctionLimits | None,
    problems: list[Problem],
) -> ServerPolicy | None:
    """The server's policy, or ``None`` when one of its files had problems."""
    failed = False

    def one(path: str | None, model: type[ModelT]) -> ModelT | None:
        nonlocal failed
        if path is None:
            return None
        result = validate(path, model)
        if result is None:
            failed = True
            return None
        assert isinstance(result, model)
        return result

    policy = ServerPolicy(
        whitelist=one(entry.whitelist, WhitelistFile),
        tools=one(entry.tools, ToolsFile),
        functions=one(entry.functions, FunctionsFile),
        messages=one(entry.messages, MessagesFile),
    )
    if policy.functions is not None and function_limits is not None and entry.functions:
        for message in catalogue_problems(policy.functions, function_limits):
            problems.append(Problem(entry.functions, None, None, "functions", message))
            failed = True
    return None if failed else policy
