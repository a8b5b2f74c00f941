"""The command whitelist: one canonical command form and anchored, linear-time rule matching.

A command is canonicalised once, and rules only ever see that form, so there is exactly one
string a rule has to account for. Canonical form:

- at most ``MAX_COMMAND_CHARS`` characters;
- no control, format, separator (other than the plain space), surrogate, private-use or
  unassigned character: newlines, U+2028, zero-width and bidi marks all make it invalid;
- no default-ignorable or blank-looking character (Hangul fillers, U+034F, variation
  selectors, U+2800 ...: `bridge.policy.invisible`), which ``isprintable`` lets through;
- no ``§`` (legacy formatting codes);
- one leading ``/`` removed;
- no leading, trailing or repeated spaces (refused rather than collapsed, so what is checked is
  what runs);
- the root (first word) lowercased; namespaced roots (``minecraft:give``) kept as written, so a
  rule for ``give`` does not allow ``minecraft:give``.

Rules are RE2 patterns (linear time, no backreferences) matched against the whole canonical
command. All rules of one executor are compiled into one RE2 set, so a decision is a single
pass over the command whatever the number of rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import re2

from bridge.control.never_categories import NeverCategory, effective_categories
from bridge.control.whitelist_file import RuleSpec, WhitelistFile, allows_never, pattern_of
from bridge.control.whitelist_rules import (
    MAX_RULES_PER_LIST,
    InvalidRule,
    check_never_root,
    check_rule,
    rule_options,
)
from bridge.errors import ToolError
from bridge.policy.invisible import describe, first_invisible
from bridge.policy.never_list import NeverList

Executor = Literal["player", "console"]

MAX_COMMAND_CHARS = 256


class InvalidCommand(ToolError):
    """The command has no canonical form; ``reason`` says why in words a player can read."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid command: {reason}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WhitelistDecision:
    """The answer for one command: ``rule`` is the pattern that allowed it, if any, and
    ``allow_never`` whether that rule opted out of the never list."""

    allowed: bool
    canonical: str
    rule: str | None
    allow_never: bool = False


def canonicalize(command: str) -> str:
    """The canonical form of ``command`` or ``InvalidCommand``."""
    if len(command) > MAX_COMMAND_CHARS + 1:
        raise InvalidCommand(f"longer than {MAX_COMMAND_CHARS} characters")
    # str.isprintable is false exactly for the Unicode categories refused above (Cc, Cf, Cs, Co,
    # Cn, Zl, Zp and every Zs but U+0020), and it runs in C.
    if not command.isprintable():
        bad = next(ch for ch in command if not ch.isprintable())
        raise InvalidCommand(f"contains the invisible or control character U+{ord(bad):04X}")
    hidden = first_invisible(command)
    if hidden is not None:
        raise InvalidCommand(f"contains the invisible character {describe(hidden)}")
    if "§" in command:
        raise InvalidCommand("contains the formatting character §")
    text = command[1:] if command.startswith("/") else command
    if not text:
        raise InvalidCommand("is empty")
    if len(text) > MAX_COMMAND_CHARS:
        raise InvalidCommand(f"longer than {MAX_COMMAND_CHARS} characters")
    if text[0] == " " or text[-1] == " ":
        raise InvalidCommand("starts or ends with a space")
    if "  " in text:
        raise InvalidCommand("contains repeated spaces")
    root, space, rest = text.partition(" ")
    return root.lower() + space + rest


class RuleSet:
    """The compiled rules of one executor, in file order; the first matching rule is reported."""

    def __init__(self, entries: Sequence[str | RuleSpec]) -> None:
        patterns = [pattern_of(entry) for entry in entries]
        if len(patterns) > MAX_RULES_PER_LIST:
            raise InvalidRule(f"at most {MAX_RULES_PER_LIST} rules per list")
        if len(set(patterns)) != len(patterns):
            raise InvalidRule("a rule is listed twice")
        for pattern in patterns:
            check_rule(pattern)
        self.patterns: tuple[str, ...] = tuple(patterns)
        self.opted_out: frozenset[str] = frozenset(
            pattern_of(entry) for entry in entries if allows_never(entry)
        )
        self._set: Any = None
        if self.patterns:
            self._set = re2.Set.FullMatchSet(rule_options())
            for pattern in self.patterns:
                self._set.Add(pattern)
            self._set.Compile()

    def first_match(self, canonical: str) -> str | None:
        if self._set is None:
            return None
        matched = self._set.Match(canonical)
        return self.patterns[min(matched)] if matched else None


def bare_root(canonical: str) -> str:
    """The first word without its namespace, lower-cased: ``minecraft:op Steve`` is ``op``."""
    return canonical.partition(" ")[0].rpartition(":")[2].lower()


class Whitelist:
    """The compiled ``whitelist.yml``; immutable after construction."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        player: Sequence[str | RuleSpec] = (),
        console: Sequence[str | RuleSpec] = (),
        never: Sequence[str] = (),
        never_categories: dict[str, NeverCategory] | None = None,
        console_confirm: Sequence[str | RuleSpec] = (),
    ) -> None:
        self.enabled = enabled
        self._rules: dict[str, RuleSet] = {"player": RuleSet(player), "console": RuleSet(console)}
        self._console_confirm = RuleSet(console_confirm)
        for root in never:
            check_never_root(root)
        self.never = NeverList(effective_categories(list(never), never_categories or {}))

    def confirm_opts_out(self, rule: str) -> bool:
        """Whether the ``console_confirm`` rule ``rule`` has ``allow_never: true``."""
        return rule in self._console_confirm.opted_out

    @property
    def console_confirm_rules(self) -> tuple[str, ...]:
        return self._console_confirm.patterns

    def confirm_rule(self, canonical: str) -> str | None:
        """The ``console_confirm`` rule ``canonical`` (a canonical command) matches, if any:
        such a console command runs only after a second player confirms it. None while the
        whitelist is disabled (then nothing runs)."""
        if not self.enabled:
            return None
        return self._console_confirm.first_match(canonical)

    def rules(self, executor: Executor) -> tuple[str, ...]:
        return self._rules[executor].patterns

    def opts_out(self, executor: Executor, rule: str) -> bool:
        """Whether ``executor``'s rule ``rule`` has ``allow_never: true``."""
        return rule in self._rules[executor].opted_out

    def decide(self, executor: Executor, command: str) -> WhitelistDecision:
        """Allow only when a rule of ``executor`` matches the whole canonical command.

        Raises ``InvalidCommand`` when ``command`` has no canonical form and ``ToolError`` for
        an executor other than ``player`` or ``console``.
        """
        rules = self._rules.get(executor)
        if rules is None:  # the type says Literal, but the value may come from model output
            raise ToolError(f"unknown executor {executor!r}: expected player or console")
        canonical = canonicalize(command)
        if not self.enabled:
            return WhitelistDecision(False, canonical, None)
        rule = rules.first_match(canonical)
        return WhitelistDecision(
            rule is not None, canonical, rule, rule is not None and rule in rules.opted_out
        )


def compile_whitelist(file: WhitelistFile) -> Whitelist:
    """The compiled form of a validated ``whitelist.yml`` (its rules were checked when read)."""
    return Whitelist(
        enabled=file.enabled,
        player=file.player,
        console=file.console,
        never=file.never,
        never_categories=dict(file.never_categories),
        console_confirm=file.console_confirm,
    )
