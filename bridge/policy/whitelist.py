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

from bridge.errors import ToolError
from bridge.policy.invisible import describe, first_invisible
from bridge.regex_errors import re2_error_text

Executor = Literal["player", "console"]

MAX_COMMAND_CHARS = 256
MAX_RULES_PER_LIST = 256
MAX_RULE_CHARS = 512


class InvalidCommand(ToolError):
    """The command has no canonical form; ``reason`` says why in words a player can read."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid command: {reason}")
        self.reason = reason


class InvalidRule(ValueError):
    """A whitelist pattern is not acceptable; raised while a control plane is validated."""


@dataclass(frozen=True, slots=True)
class WhitelistDecision:
    """The answer for one command: ``rule`` is the pattern that allowed it, if any."""

    allowed: bool
    canonical: str
    rule: str | None


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


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # errors are reported to the owner, not to stderr
    return options


def check_rule(pattern: str) -> None:
    """Raise ``InvalidRule`` unless ``pattern`` is a usable whitelist pattern."""
    if not 1 <= len(pattern) <= MAX_RULE_CHARS:
        raise InvalidRule(f"a rule must have 1 to {MAX_RULE_CHARS} characters")
    if not pattern.isprintable():
        raise InvalidRule("a rule must not contain control or invisible characters")
    try:
        re2.compile(pattern, options=_options())
    except re2.error as exc:
        raise InvalidRule(f"not a valid RE2 pattern: {re2_error_text(exc)}") from None


class RuleSet:
    """The compiled rules of one executor, in file order; the first matching rule is reported."""

    def __init__(self, patterns: Sequence[str]) -> None:
        if len(patterns) > MAX_RULES_PER_LIST:
            raise InvalidRule(f"at most {MAX_RULES_PER_LIST} rules per list")
        if len(set(patterns)) != len(patterns):
            raise InvalidRule("a rule is listed twice")
        for pattern in patterns:
            check_rule(pattern)
        self.patterns: tuple[str, ...] = tuple(patterns)
        self._set: Any = None
        if self.patterns:
            self._set = re2.Set.FullMatchSet(_options())
            for pattern in self.patterns:
                self._set.Add(pattern)
            self._set.Compile()

    def first_match(self, canonical: str) -> str | None:
        if self._set is None:
            return None
        matched = self._set.Match(canonical)
        return self.patterns[min(matched)] if matched else None


DEFAULT_NEVER: tuple[str, ...] = (
    # operators, bans, the whitelist and the server itself
    "op", "deop", "ban", "ban-ip", "banlist", "pardon", "pardon-ip", "kick", "stop", "restart",
    "reload", "rl", "whitelist", "save-off",
    # commands that run other commands, as someone else
    "execute", "sudo", "function", "schedule",
    # permission plugins
    "lp", "luckperms", "lpb", "lpv", "perm", "perms", "permission", "permissions", "pex",
    "permissionsex", "manuadd", "manudel", "manuaddp", "manudelp", "manuaddsub", "mangadd",
    "mangdel", "mangaddp", "mangdelp", "groupmanager",
    # economy administration
    "eco", "economy", "money", "balance-set", "setmoney",
)  # fmt: skip
"""Command roots no confirmation can pass (``whitelist.yml`` ``never``, on by default)."""

MAX_NEVER = 512
_ROOT = re2.compile(r"[a-z0-9_.+-]{1,64}")


def check_never_root(root: str) -> None:
    """Raise ``InvalidRule`` unless ``root`` is a bare command root (no namespace, no space)."""
    if not _ROOT.fullmatch(root):
        raise InvalidRule(
            f"{root!r} is not a command root: lower-case letters, digits and _ . + - only, "
            "without a namespace (minecraft:op is covered by op)"
        )


def bare_root(canonical: str) -> str:
    """The first word without its namespace, lower-cased: ``minecraft:op Steve`` is ``op``."""
    return canonical.partition(" ")[0].rpartition(":")[2].lower()


class Whitelist:
    """The compiled ``whitelist.yml``; immutable after construction."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        player: Sequence[str] = (),
        console: Sequence[str] = (),
        never: Sequence[str] = DEFAULT_NEVER,
    ) -> None:
        self.enabled = enabled
        self._rules: dict[str, RuleSet] = {"player": RuleSet(player), "console": RuleSet(console)}
        for root in never:
            check_never_root(root)
        self.never: frozenset[str] = frozenset(never)

    def never_root(self, command: str) -> str | None:
        """The ``never`` root ``command`` runs under, whatever its namespace, or None.

        Raises ``InvalidCommand`` when ``command`` has no canonical form.
        """
        root = bare_root(canonicalize(command))
        return root if root in self.never else None

    def rules(self, executor: Executor) -> tuple[str, ...]:
        return self._rules[executor].patterns

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
        return WhitelistDecision(rule is not None, canonical, rule)
