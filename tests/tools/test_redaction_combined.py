"""The combined first pass of the redactor decides only whether the rules run: whatever text it
sees, the result equals running every rule over the text, as the redactor did before it."""

from __future__ import annotations

import random

import pytest
import re2

from bridge.redaction import CONFIGURED_SECRET_KIND, RedactionRule, Redactor

from .test_redaction import FALSE_POSITIVES, TRUE_POSITIVES

OWNER_RULES = (
    # An inline flag that must stay inside its own rule when the rules are joined.
    RedactionRule(kind="rcon password", pattern=r"(?i)rcon\.password=(?P<secret>\S+)"),
    # An anchor: only at the very start of the text.
    RedactionRule(kind="motd", pattern=r"^motd:(?P<secret>\w{4,})"),
    # A rule that matches the empty string (the redactor skips empty spans).
    RedactionRule(kind="maybe", pattern=r"z*"),
)


def reference_redact(redactor: Redactor, text: str) -> str:
    """Every rule over the whole text, without the combined pass: the redactor's old path."""
    found: list[tuple[int, int, str]] = []
    for value in redactor._values:
        start = text.find(value)
        while start != -1:
            found.append((start, start + len(value), CONFIGURED_SECRET_KIND))
            start = text.find(value, start + len(value))
    for rule in redactor._rules:
        for match in rule.regexp.finditer(text):
            start, end = rule.span(match)
            if end > start:
                found.append((start, end, rule.kind))
    found.sort(key=lambda span: (span[0], -span[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    pieces, position = [], 0
    for start, end, kind in merged:
        pieces += [text[position:start], f"[redacted: {kind}]", "\n" * text.count("\n", start, end)]
        position = end
    return "".join(pieces) + text[position:]


def corpus() -> list[str]:
    texts = [text for text, _, _ in TRUE_POSITIVES] + list(FALSE_POSITIVES)
    texts += ["RCON.PASSWORD=minecraft1", "x motd:hello", "motd:hello there", "", "zzz"]
    rng = random.Random(20261202)
    alphabet = "aAzZ09 _-=:'\"/@.\n" + "sk-ghp_glpat-AKIAbearer token password api_key://"
    for _ in range(400):
        pieces = [rng.choice(texts) if rng.random() < 0.3 else "" for _ in range(3)]
        noise = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        texts.append(noise.join(pieces) + noise)
    return texts


@pytest.mark.parametrize("include_defaults", [True, False])
def test_combined_pass_gives_the_rule_by_rule_result_for_every_text(
    include_defaults: bool,
) -> None:
    redactor = Redactor(OWNER_RULES, include_defaults=include_defaults, secret_values={"hunter22"})
    texts = corpus()
    changed = 0
    for text in texts:
        expected = reference_redact(redactor, text)
        assert redactor.redact_text(text) == expected, text
        changed += expected != text
    assert changed > 20  # the corpus really exercises the rules, not only the fast path


def test_inline_flags_of_one_rule_do_not_leak_into_the_next() -> None:
    # Joined carelessly, "(?i)" would make the next rule case-insensitive as well.
    rules = [
        RedactionRule(kind="loud", pattern=r"(?i)shout"),
        RedactionRule(kind="exact", pattern=r"Quiet\d+"),
    ]
    redactor = Redactor(rules, include_defaults=False)
    assert redactor.redact_text("SHOUT quiet12") == "[redacted: loud] quiet12"
    assert redactor.redact_text("Quiet12") == "[redacted: exact]"


def test_without_any_rule_only_configured_values_are_replaced() -> None:
    redactor = Redactor(include_defaults=False, secret_values={"s3cret"})
    assert redactor.redact_text(f"a s3cret and {TRUE_POSITIVES[0][0]}") == (
        f"a [redacted: {CONFIGURED_SECRET_KIND}] and {TRUE_POSITIVES[0][0]}"
    )


def test_rules_too_big_to_join_are_still_applied_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_compile = re2.compile

    def refuse_joined(pattern: str, options: object = None) -> object:
        if options is not None:
            raise re2.error("pattern too large - compile failed")
        return real_compile(pattern)

    monkeypatch.setattr(re2, "compile", refuse_joined)
    redactor = Redactor()
    for text, secret, kind in TRUE_POSITIVES:
        redacted = redactor.redact_text(text)
        assert secret not in redacted and f"[redacted: {kind}]" in redacted
    for text in FALSE_POSITIVES:
        assert redactor.redact_text(text) == text


# ---- JSON values: every string of a value searched at once, joined by newlines

JSON_RULES = (
    *OWNER_RULES,
    # Anchored at the end, and around word boundaries: joining must not lose either.
    RedactionRule(kind="pin", pattern=r"pin=(?P<secret>\d{4})$"),
    RedactionRule(kind="word", pattern=r"\bseed(?P<secret>\d+)\b"),
)


def reference_json(redactor: Redactor, value: object) -> object:
    """Each string redacted on its own, as the redactor did before joining them."""
    if isinstance(value, str):
        return reference_redact(redactor, value)
    if isinstance(value, dict):
        return {
            reference_redact(redactor, str(k)): reference_json(redactor, v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [reference_json(redactor, item) for item in value]
    return value


def random_value(rng: random.Random, texts: list[str], depth: int = 0) -> object:
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        return {
            rng.choice(texts): random_value(rng, texts, depth + 1) for _ in range(rng.randrange(4))
        }
    if depth < 3 and roll < 0.45:
        return [random_value(rng, texts, depth + 1) for _ in range(rng.randrange(4))]
    if roll < 0.55:
        return rng.choice([1, 2.5, None, True])
    return rng.choice(texts)


def json_corpus() -> list[str]:
    return corpus() + ["pin=1234", "my pin=1234", "pin=1234 later", "seed42", "xseed42", "seed42x"]


@pytest.mark.parametrize("include_defaults", [True, False])
def test_a_json_value_redacts_as_each_string_would_alone(include_defaults: bool) -> None:
    redactor = Redactor(JSON_RULES, include_defaults=include_defaults, secret_values={"hunter22"})
    assert redactor._joinable
    texts = json_corpus()
    rng = random.Random(7)
    changed = clean = 0
    for _ in range(400):
        value = random_value(rng, texts)
        expected = reference_json(redactor, value)
        got = redactor.redact_json(value)
        assert got == expected, value
        if got is value:
            clean += 1
            assert expected == value
        else:
            changed += 1
    assert changed > 40 and clean > 40  # both paths are exercised


@pytest.mark.parametrize(
    ("string", "redacted"),
    [("pin=1234", True), ("pin=1234 later", False), ("seed42", True), ("xseed42", False)],
)
def test_joined_strings_keep_each_string_s_own_anchors(string: str, redacted: bool) -> None:
    redactor = Redactor(JSON_RULES, include_defaults=False)
    value = {"first": "abc", "list": ["x", string, "y"], "last": 1}
    got = redactor.redact_json(value)
    assert (got is not value) is redacted
    assert (string in str(got)) is not redacted


def test_a_clean_value_comes_back_as_the_same_object() -> None:
    value = {"ok": True, "entries": [{"name": "world", "kind": "dir"}, "readme.md"], "n": 3}
    assert Redactor().redact_json(value) is value


@pytest.mark.parametrize(
    "pattern",
    [r"\Amotd:(?P<secret>\w+)", r"(?P<secret>\w+):motd\z", r"(?-m:^motd:(?P<secret>\w+))"],
)
def test_rules_that_see_the_text_s_own_ends_are_searched_string_by_string(pattern: str) -> None:
    redactor = Redactor([RedactionRule(kind="motd", pattern=pattern)], include_defaults=False)
    assert not redactor._joinable
    value = {"a": "nothing", "b": ["x", "motd:hello:motd"]}
    assert redactor.redact_json(value) == reference_json(redactor, value) != value
    assert redactor.redact_json({"a": "nothing"}) == {"a": "nothing"}
