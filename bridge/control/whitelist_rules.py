"""The grammar of ``whitelist.yml`` rules and ``never`` roots, checked while the file is loaded.

``bridge.policy.whitelist`` compiles the checked rules and decides commands with them; this
module only says whether one pattern or root is acceptable, so the control plane can report a
bad rule at its line without the policy layer.
"""

from __future__ import annotations

from typing import Any

import re2

from bridge.regex_errors import re2_error_text

MAX_RULES_PER_LIST = 256
MAX_RULE_CHARS = 512


class InvalidRule(ValueError):
    """A whitelist pattern is not acceptable; raised while a control plane is validated."""


def rule_options() -> Any:
    """RE2 options for every whitelist pattern (checked here, compiled in policy)."""
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
        re2.compile(pattern, options=rule_options())
    except re2.error as exc:
        raise InvalidRule(f"not a valid RE2 pattern: {re2_error_text(exc)}") from None


MAX_NEVER = 512
_ROOT = re2.compile(r"[a-z0-9_.+-]{1,64}")


def check_never_root(root: str) -> None:
    """Raise ``InvalidRule`` unless ``root`` is a bare command root (no namespace, no space)."""
    if not _ROOT.fullmatch(root):
        raise InvalidRule(
            f"{root!r} is not a command root: lower-case letters, digits and _ . + - only, "
            "without a namespace (minecraft:op is covered by op)"
        )
