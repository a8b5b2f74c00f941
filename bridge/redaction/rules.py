"""Redaction rules as data: a kind (what the placeholder names) and an RE2 pattern, the owner's
validated like any field, and ``DEFAULT_RULES``, the built-in set."""

from __future__ import annotations

import re2
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bridge.errors import ToolError

SECRET_GROUP = "secret"
_KIND = re2.compile(r"[a-z0-9][a-z0-9 _.-]*")
CONFIGURED_SECRET_KIND = "configured secret"

# Values of a key=value assignment: a quoted value whole (a passphrase has spaces), its
# closing quote optional (a quote still open, in a stream or a cut text, runs to the line's
# end), or anything up to whitespace, a quote or a separator. The quotes stay (JSON text stays
# JSON), so the quoted forms have groups of their own (``secret_...``; RE2 allows a name once).
# A value never starts with "[", so an already redacted text is left as it is.
_VALUE = (
    r"""(?:"(?P<secret_dq>[^"\[\r\n][^"\r\n]*)"?|'(?P<secret_sq>[^'\[\r\n][^'\r\n]*)'?"""
    r"""|(?P<secret>[^\s"'`,;<>\[][^\s"'`,;<>]{3,}))"""
)
# A key, optionally with a prefix joined by _ or - (``db_password``, ``x-api-key``).
_KEY_PREFIX = r"(?:^|[^A-Za-z0-9_-])(?:[A-Za-z0-9]+[_-])*"
_ASSIGN = r"""["']?[ \t]*[:=][ \t]*"""


class RedactionRuleError(ToolError):
    """An owner's redaction rule is not a valid RE2 pattern."""


class RedactionRule(BaseModel):
    """One named pattern; ``kind`` appears in the placeholder."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    kind: str = Field(min_length=1, max_length=48)
    pattern: str = Field(min_length=1, max_length=1024)

    @field_validator("kind")
    @classmethod
    def _plain_kind(cls, value: str) -> str:
        if not _KIND.fullmatch(value):
            raise ValueError(
                "must start with a lower-case letter or digit and hold only lower-case letters, "
                "digits, spaces, '_', '.' and '-'"
            )
        return value

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        options = re2.Options()
        options.log_errors = False  # the problem goes to the owner, not to stderr
        try:
            re2.compile(value, options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise ValueError(f"not a valid RE2 pattern: {reason}") from None
        return value


def _rule(kind: str, pattern: str) -> RedactionRule:
    return RedactionRule(kind=kind, pattern=pattern)


DEFAULT_RULES: tuple[RedactionRule, ...] = (
    # A truncated read can cut a key block in half: without its END line it runs to the end.
    _rule(
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[\s\S]*)",
    ),
    # user:password@ (the password may hold '/' or '@': up to the last '@' before the host),
    # or a lone token as the user (``https://ghp_...@github.com``).
    _rule(
        "url credentials",
        r"[A-Za-z][A-Za-z0-9+.-]*://(?P<secret>[^\s/?#@:]*:[^\s?#]*|[A-Za-z0-9._~%+-]{16,})"
        r"@[A-Za-z0-9\[]",
    ),
    _rule("bearer token", r"\b[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+(?P<secret>[A-Za-z0-9._~+/-]{12,}=*)"),
    _rule("github token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
    _rule("gitlab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    _rule("aws access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    _rule("age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{20,}"),
    _rule("api key", r"\bsk-[A-Za-z0-9_-]{20,}"),
    _rule("token", _KEY_PREFIX + r"(?i:token)" + _ASSIGN + _VALUE),
    _rule("api key", _KEY_PREFIX + r"(?i:api[_-]?key)" + _ASSIGN + _VALUE),
    _rule("password", _KEY_PREFIX + r"(?i:password|passwd|pwd)" + _ASSIGN + _VALUE),
    # An AWS secret access key where it is usually written: 40 characters after its name.
    _rule(
        "aws secret access key",
        r"(?i:aws)[A-Za-z0-9_-]*(?i:secret)[A-Za-z0-9_-]*"
        + _ASSIGN
        + r"""["']?(?P<secret>[A-Za-z0-9/+=]{40})""",
    ),
    # aws_secret_access_key, client_secret, SECRET_KEY, private_key = ...
    _rule(
        "secret", _KEY_PREFIX + r"(?i:secret|(?:secret|access|private)[_-]?key)" + _ASSIGN + _VALUE
    ),
    # Shapes of well-known services' credentials.
    _rule(
        "basic credentials",
        r"(?i:authorization)" + _ASSIGN + r"(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})",
    ),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _rule("slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-[0-9]-[A-Za-z0-9-]{10,}"),
    _rule(
        "slack webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/(?P<secret>[A-Za-z0-9/_-]{20,})",
    ),
    _rule(
        "discord webhook",
        r"https://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/"
        r"(?P<secret>[A-Za-z0-9_-]{20,})",
    ),
    _rule(
        "discord token",
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
    ),
    _rule("google api key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _rule("google oauth", r"\bGOCSPX-[A-Za-z0-9_-]{20,}|\bya29\.[0-9A-Za-z_-]{20,}"),
)
