"""Whitelist rules that could reach a never-listed command: an error, unless the rule opts out.

A rule is checked against the language of never-listed commands: a command named in a
category, in any namespace, directly or after an ``execute``/``return`` chain's ``run``, or a
``<command> <argument>`` pair of a category. The rule's automaton (built by ``interegular``) is
walked over those names, so ``.*``, ``(op|give) .*`` and ``o[p] .*`` are all found, not just
rules that spell a name. Command block ids can sit in any argument, even a player's name, so
they are judged at run time only. Such a rule without ``allow_never: true`` is an error naming
the rule; with it, a warning every time the folder is validated. A pattern the checker cannot
read is treated as one that could match (the owner must opt out or simplify it). Names the
server resolves at run time (plugin aliases) are still judged there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import interegular

from bridge.control.never_categories import effective_categories
from bridge.control.problems import Problem, format_path
from bridge.control.whitelist_file import WhitelistFile, allows_never, pattern_of
from bridge.control.yaml_strict import YamlDocument

LISTS = ("player", "console", "console_confirm")


@dataclass(frozen=True, slots=True)
class RuleProblem:
    """A problem of ``whitelist.yml`` at ``path`` (``("console", 2)``); ``warning`` for an
    opted-out rule, otherwise an error."""

    path: tuple[str | int, ...]
    message: str
    warning: bool


def located_problems(
    file: WhitelistFile, document: YamlDocument | None, name: str
) -> list[Problem]:
    """``never_rule_problems`` as problems of file ``name`` at the rule's line."""
    problems: list[Problem] = []
    for found in never_rule_problems(file):
        line, column = document.locate(found.path) if document is not None else (None, None)
        path = format_path(found.path)
        problems.append(Problem(name, line, column, path, found.message, warning=found.warning))
    return problems


def never_rule_problems(file: WhitelistFile) -> list[RuleProblem]:
    """Every rule of ``file`` that could match a never-listed command."""
    categories = effective_categories(file.never, file.never_categories)
    names = sorted({name for category in categories.values() for name in category.commands})
    pairs = sorted({pair for category in categories.values() for pair in category.subcommands})
    never = _never_language(tuple(names), tuple(pairs))
    problems: list[RuleProblem] = []
    for list_name in LISTS:
        for index, entry in enumerate(getattr(file, list_name)):
            pattern = pattern_of(entry)
            reaches = _reaches(pattern, never)
            if reaches is None:
                continue
            if allows_never(entry):
                message = (
                    f"rule {pattern!r} has allow_never: true, so it can run never-listed"
                    f" commands ({reaches})"
                )
                problems.append(RuleProblem((list_name, index), message, True))
            else:
                message = (
                    f"rule {pattern!r} could match a never-listed command ({reaches}); narrow it,"
                    " or write it as {rule: ..., allow_never: true} if that is really meant"
                )
                problems.append(RuleProblem((list_name, index), message, False))
    return problems


def _reaches(pattern: str, never: _NeverLanguage) -> str | None:
    """What never-listed command ``pattern`` could match, or None."""
    try:
        fsm = interegular.parse_pattern(pattern).to_fsm()
    except Exception:  # the checker's own grammar is smaller than RE2's
        return "the bridge cannot analyse this pattern"
    return _Automaton(fsm).reaches(never)


@dataclass(frozen=True, slots=True)
class _NeverLanguage:
    commands: tuple[str, ...]  # names and "<name> <argument>" pairs


class _Automaton:
    """Walks a rule's automaton by sets of states: each question is a few steps over small
    sets, so checking a rule costs far less than building the product automaton."""

    def __init__(self, fsm: Any) -> None:
        self.fsm = fsm
        self.live = {state for state in fsm.states if fsm.islive(state)}

    def step(self, states: set[Any], text: str) -> set[Any]:
        for char in text:
            symbol = self.fsm.alphabet[char]
            states = {
                self.fsm.map[state][symbol]
                for state in states
                if symbol in self.fsm.map.get(state, {})
            }
            if not states:
                break
        return states

    def closure(self, states: set[Any], chars: str | None) -> set[Any]:
        """Every state reachable from ``states`` reading any string of ``chars`` (any
        character when None)."""
        symbols = None if chars is None else {self.fsm.alphabet[char] for char in chars}
        seen, todo = set(states), list(states)
        while todo:
            for symbol, target in self.fsm.map.get(todo.pop(), {}).items():
                if (symbols is None or symbol in symbols) and target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    def namespaced(self, states: set[Any]) -> set[Any]:
        """``states`` and where an optional ``<namespace>:`` from them leads."""
        return states | self.step(self.closure(states, _NAMESPACE_CHARS), ":")

    def accepts_command(self, states: set[Any], name: str) -> bool:
        for state in self.step(self.namespaced(states), name):
            if state in self.fsm.finals or self.step({state}, " ") & self.live:
                return True
        return False

    def reaches(self, never: _NeverLanguage) -> str | None:
        start = {self.fsm.initial}
        heads = self.namespaced(start)
        wrapped = self.step(heads, "execute ") | self.step(heads, "return ")
        after_run = self.step(self.closure(wrapped, None), "run ")
        for name in never.commands:
            if self.accepts_command(start, name):
                return f"it can match {name!r}"
            if after_run and self.accepts_command(after_run, name):
                return f"it can match {name!r} after execute/return ... run"
        return None


_NAMESPACE_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_.+-"


@cache
def _never_language(names: tuple[str, ...], pairs: tuple[str, ...]) -> _NeverLanguage:
    return _NeverLanguage((*names, *pairs))
