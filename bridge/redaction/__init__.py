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

Modules::

    rules         RedactionRule, DEFAULT_RULES, the placeholder kinds
    redactor      Redactor: the rules and configured secrets over texts and JSON values
    secret_runs   configured secret values found whole and by their runs
    secret_names  is_secret_name: names that look like credentials
"""

from bridge.redaction.redactor import Redactor, complete_words, written_shapes
from bridge.redaction.rules import (
    CONFIGURED_SECRET_KIND,
    DEFAULT_RULES,
    SECRET_GROUP,
    RedactionRule,
    RedactionRuleError,
)
from bridge.redaction.secret_names import SECRET_PAIRS, SECRET_SEGMENTS, is_secret_name

__all__ = [
    "CONFIGURED_SECRET_KIND",
    "DEFAULT_RULES",
    "SECRET_GROUP",
    "SECRET_PAIRS",
    "SECRET_SEGMENTS",
    "RedactionRule",
    "RedactionRuleError",
    "Redactor",
    "complete_words",
    "is_secret_name",
    "written_shapes",
]
