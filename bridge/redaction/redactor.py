"""The `Redactor`: every rule over a text or every string of a JSON value, configured secret
values whole and by their runs, spans merged before anything is replaced (see the package's
face, `bridge.redaction`, for how and why)."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

import re2

from bridge.redaction.rules import (
    CONFIGURED_SECRET_KIND,
    DEFAULT_RULES,
    SECRET_GROUP,
    RedactionRule,
    RedactionRuleError,
)
from bridge.redaction.secret_runs import MIN_RUN, SecretRuns, normal

# A whole value that is an environment reference, as the YAML files write them.
_ENV_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}")


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
        self.rules: tuple[RedactionRule, ...] = tuple(chosen)
        """Every rule, the owner's first: another process given them redacts as this one
        does, configured secret values apart (they stay in this process)."""
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
