r"""Secrets replaced by ``[redacted: <kind>]`` before a tool result goes anywhere.

Rules are data: a kind (what the placeholder names) and an RE2 pattern, so matching is linear in
the text whatever the pattern. A pattern with a group named ``secret`` replaces only that group
(``password: [redacted: password]`` keeps the key, which tells the model what was there);
otherwise the whole match goes. Every rule runs over the original text and overlapping spans are
merged before anything is replaced, so one rule never re-matches another's placeholder.

``DEFAULT_RULES`` is the built-in set; the owner's list (``config.yml`` ``redaction.rules``) is
passed in as ``rules`` and the defaults are kept unless ``include_defaults=False``. Configured
secret values (from ``.env`` and ``providers.yml``) are replaced wherever they appear: whole,
and a long one by any run of 12 or more of its characters (`bridge.redaction.secret_runs`).

Redact, then cut: callers redact a whole text before they slice, window or truncate it, since a
piece of a secret no longer looks like one (a key minus its first character, a PEM body without
its BEGIN line, the tail of a configured value). A placeholder keeps the line breaks of what it
replaced, so line numbers counted in the redacted text are the file's.

Most strings of a tool result (file names, block ids, chat lines) hold no secret, so one search
with every rule joined in a single alternation decides first whether any rule can match at all;
only a string that it matches is scanned rule by rule for the spans. The alternation is compiled
with ``never_capture`` (the rules' ``secret`` groups would otherwise clash) and, being a plain
RE2 search, it never gives up on a long text the way an ``re2.Set`` match may.

A JSON value goes further: all its strings, joined by newlines, get that one search together
(with ``^`` and ``$`` matching at every line), so a clean tool result costs one search instead
of one per string, and comes back as the same object. Joining can only add matches, never lose
one: each string sits between newlines, which is where ``^``, ``$`` and ``\b`` see a string's
ends on their own. Only ``\A``, ``\z`` and a rule turning multi-line matching off would see the
difference, so a rule set with any of them searches string by string.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

import re2
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bridge.errors import ToolError
from bridge.redaction.secret_runs import MIN_RUN, SecretRuns, normal

# Credential names: whole segments of a name split at '_' (after lower-casing, with '-' read
# as '_'), so ``input_tokens`` is not one but ``api_token`` is. The short spellings owners
# write in ``.env`` count too (``DB_PASS``, ``SMTP_PW``, ``MYSQL_PWD``), and the run-together
# ones (``APITOKEN``, ``SECRETKEY``).
SECRET_SEGMENTS = frozenset(
    {
        *("token", "secret", "password", "passwd", "authorization", "apikey", "credential"),
        *("cookie", "pass", "pw", "pwd", "pswd", "passphrase", "passcode", "dsn"),
        *("apitoken", "authtoken", "accesstoken", "secretkey", "privatekey", "accesskey"),
        *("credentials", "secrets", "passwords"),
    }
)
# Adjacent segment pairs that name a credential only together.
SECRET_PAIRS = frozenset(
    {
        *(("api", "key"), ("private", "key"), ("access", "key"), ("signing", "key")),
        *(("encryption", "key"), ("master", "key"), ("session", "key"), ("license", "key")),
        *(("client", "key"), ("auth", "key"), ("webhook", "url"), ("database", "url")),
        *(("db", "url"), ("connection", "string")),
    }
)


def is_secret_name(name: str) -> bool:
    """Whether a field or variable called ``name`` looks like it holds a credential."""
    segments = name.lower().replace("-", "_").split("_")
    if any(segment in SECRET_SEGMENTS for segment in segments):
        return True
    return any(pair in SECRET_PAIRS for pair in zip(segments, segments[1:], strict=False))


SECRET_GROUP = "secret"
# A whole value that is an environment reference, as the YAML files write them.
_ENV_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}")
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


class _Compiled:
    __slots__ = ("kind", "regexp", "groups")

    def __init__(self, rule: RedactionRule, index: int) -> None:
        try:
            self.regexp = re2.compile(rule.pattern)
        except re2.error as exc:
            raise RedactionRuleError(f"redaction rule {index} ({rule.kind}): {exc}") from exc
        self.kind = rule.kind
        # ``secret``, or one of several alternatives named ``secret_...``: whichever matched.
        self.groups = tuple(
            index
            for name, index in sorted(self.regexp.groupindex.items())
            if name == SECRET_GROUP or name.startswith(SECRET_GROUP + "_")
        )

    def span(self, match: Any) -> tuple[int, int]:
        for group in self.groups:
            start, end = match.span(group)
            if start >= 0:
                return start, end
        return match.span() if not self.groups else (0, 0)


# What makes a rule see a string differently once it sits between newlines in a joined text:
# the text's own ends (\A, \z) and flag groups that clear a flag, such as (?-m). Over-eager on
# purpose (an escaped backslash before A also counts): a false hit only costs speed.
_NOT_JOINABLE = re2.compile(r"\\[Az]|\(\?[A-Za-z]*-")
_JOIN = "\n"


def _any_rule_of(rules: Sequence[RedactionRule], *, multiline: bool = False) -> Any:
    """One regexp that matches wherever any of `rules` matches (None for no rules).

    Each rule sits in its own non-capturing group, so a rule's inline flags (``(?i)``) and
    anchors stay inside it. A search that finds nothing proves that no rule matches anywhere.
    ``multiline`` is for texts joined with newlines: ``^`` and ``$`` also match at each one.
    """
    if not rules:
        return None
    options = re2.Options()
    options.never_capture = True
    joined = "|".join(f"(?:{rule.pattern})" for rule in rules)
    if multiline:
        joined = f"(?m:{joined})"
    try:
        return re2.compile(joined, options)
    except re2.error:
        # Every rule compiled alone, so only size can fail here (RE2's memory cap): an empty
        # pattern matches every text, and every string is then scanned rule by rule.
        return re2.compile("")


class Redactor:
    """Applies the rules to text and, recursively, to every string of a JSON value."""

    def __init__(
        self,
        rules: Sequence[RedactionRule] = (),
        *,
        include_defaults: bool = True,
        secret_values: Iterable[str] = (),
    ) -> None:
        # The owner's rules first: where two rules match the same text, the owner's kind shows.
        chosen = [*rules, *(DEFAULT_RULES if include_defaults else ())]
        self._rules = tuple(_Compiled(rule, index) for index, rule in enumerate(chosen))
        self._any_rule = _any_rule_of(chosen)
        self._joinable = not any(_NOT_JOINABLE.search(rule.pattern) for rule in chosen)
        self._any_rule_joined = _any_rule_of(chosen, multiline=True) if self._joinable else None
        # Each value also as it is written inside a URL or a JSON string ('@' as %40, '/' as
        # \/): a key with such characters is still that key there.
        values = {shape for value in secret_values if value for shape in written_shapes(value)}
        # A long value is found by any long run of it (`bridge.redaction.secret_runs`); a
        # short one only whole, longest first, so a secret containing another goes whole.
        self._runs = SecretRuns(values)
        self._values = tuple(
            sorted((v for v in values if len(normal(v).strip()) < MIN_RUN), key=len, reverse=True)
        )

    def redact_text(self, text: str) -> str:
        return _replaced(text, self._spans(text))

    def redact_partial(self, text: str) -> str:
        """What may be shown, redacted, of a text that is still arriving (a stream): up to its
        last whitespace (`complete_words`), less any tail that more characters could make part
        of a configured secret, and less any match that reaches into that tail (the rest of
        it may still come); what is held back waits for the characters that decide it."""
        head = complete_words(text)
        spans = self._spans(head)
        held = self._runs.held_tail(head)
        cut = len(head) - held
        if held and not head[cut].isspace():  # back to the start of the word it begins in
            cut = len(complete_words(head[:cut]))
        for start, end, _ in spans:
            if start < cut < end:
                cut = start
        return _replaced(head[:cut], [span for span in spans if span[1] <= cut])

    def redact_json(self, value: Any) -> Any:
        """``value`` with every string redacted, keys included: a copy (tuples become lists,
        keys strings) when anything was replaced, else ``value`` itself."""
        if self._joinable:
            strings: list[str] = []
            _collect_strings(value, strings)
            if not self._may_match(_JOIN.join(strings)):
                return value
        copy = self._redact_each(value)
        return value if copy == value else copy

    def _redact_each(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return {self.redact_text(str(k)): self._redact_each(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._redact_each(item) for item in value]
        return value

    def _may_match(self, text: str) -> bool:
        """False proves that no rule and no configured secret matches in any joined string."""
        if any(secret in text for secret in self._values) or self._runs.found_in(text):
            return True
        return self._any_rule_joined is not None and self._any_rule_joined.search(text) is not None

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        for value in self._values:
            start = text.find(value)
            while start != -1:
                found.append((start, start + len(value), CONFIGURED_SECRET_KIND))
                start = text.find(value, start + len(value))
        found.extend((start, end, CONFIGURED_SECRET_KIND) for start, end in self._runs.spans(text))
        if self._any_rule is None or self._any_rule.search(text) is None:
            rules: tuple[_Compiled, ...] = ()
        else:
            rules = self._rules
        for rule in rules:
            for match in rule.regexp.finditer(text):
                start, end = rule.span(match)
                # `api_key: ${OPENAI_API_KY}` names a variable (a reload error showing a typo),
                # it holds no secret: the name stays readable.
                if end > start and not _ENV_REFERENCE.fullmatch(text, start, end):
                    found.append((start, end, rule.kind))
        if not found:
            return found
        found.sort(key=lambda span: (span[0], -span[1]))
        merged = [found[0]]
        for start, end, kind in found[1:]:
            last_start, last_end, last_kind = merged[-1]
            if start < last_end:
                merged[-1] = (last_start, max(end, last_end), last_kind)
            else:
                merged.append((start, end, kind))
        return merged


def _replaced(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    if not spans:
        return text
    pieces: list[str] = []
    position = 0
    for start, end, kind in spans:
        pieces.append(text[position:start])
        pieces.append(f"[redacted: {kind}]")
        # The line breaks stay, so a line counted after redaction is the same line before.
        pieces.append("\n" * text.count("\n", start, end))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def written_shapes(value: str) -> set[str]:
    """``value`` and the forms it takes inside a URL (percent-encoded, ``+`` for a space) and
    a JSON string (escaped; ``/`` as ``\\/``, as some encoders write it)."""
    escaped = json.dumps(value)[1:-1]
    return {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value, safe=""),
        json.dumps(value, ensure_ascii=False)[1:-1],
        escaped,
        escaped.replace("/", "\\/"),
    }


def complete_words(text: str) -> str:
    """``text`` up to and with its last whitespace character ("" when it has none).

    What may be shown of a text that goes on past its end (a stream still arriving, a file cut
    at a size limit): its last word may be the head of a secret that no rule recognises yet."""
    match = _UP_TO_LAST_SPACE.match(text)
    return "" if match is None else match.group(0)


_UP_TO_LAST_SPACE = re.compile(r".*\s", re.DOTALL)


def _collect_strings(value: Any, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            into.append(str(key))
            _collect_strings(inner, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_strings(item, into)
