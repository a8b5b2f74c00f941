"""Redaction corpus: secrets that must go (true positives) and look-alikes that must stay."""

from __future__ import annotations

import pytest

from bridge.redaction import DEFAULT_RULES, RedactionRule, Redactor

GITHUB_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (text, the secret that must disappear, the kind named in its placeholder)
TRUE_POSITIVES = [
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
        "eyJhbGciOiJIUzI1NiJ9",
        "bearer token",
    ),
    ("curl -H 'authorization: bearer abcdef0123456789xyz'", "abcdef0123456789xyz", "bearer token"),
    (
        "OPENAI_API_KEY=sk-proj-Abc123Def456Ghi789Jkl012",
        "sk-proj-Abc123Def456Ghi789Jkl012",
        "api key",
    ),
    ("key: sk-ant-api03-abcdefghijklmnopqrstuv", "sk-ant-api03-abcdefghijklmnopqrstuv", "api key"),
    ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws access key id"),
    ("session ASIAY34FZKBOKMUTVV7A here", "ASIAY34FZKBOKMUTVV7A", "aws access key id"),
    (
        "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP",
        "AGE-SECRET-KEY-1QYQ",
        "age secret key",
    ),
    ("GITLAB=glpat-xxxxXXXXxxxxXXXXxxxx1", "glpat-xxxxXXXXxxxxXXXXxxxx1", "gitlab token"),
    (f"token is {GITHUB_PAT}.", GITHUB_PAT, "github token"),
    ("gho_" + "z" * 36, "gho_" + "z" * 36, "github token"),
    ("ghs_" + "9" * 36 + " and ghr_" + "8" * 36, "ghs_" + "9" * 36, "github token"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP",
        "github_pat_11ABCDEFG0123456789",
        "github token",
    ),
    (f"key file:\n{PEM}\nend", "b3BlbnNzaC1rZXktdjE", "private key"),
    (
        "cut short: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7",
        "MIIEpAIBAAKCAQEA7",
        "private key",
    ),
    ("token=abcd1234efgh", "abcd1234efgh", "token"),
    ('{"access_token": "q1w2e3r4t5"}', "q1w2e3r4t5", "token"),
    ("api_key: AbCdEf987654", "AbCdEf987654", "api key"),
    ("X-Api-Key = 'zzzz-yyyy-xxxx'", "zzzz-yyyy-xxxx", "api key"),
    ("password: hunter22", "hunter22", "password"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws secret access key",
    ),
    ("client_secret: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "secret"),
    ("SECRET_KEY='django-insecure-xyz'", "django-insecure-xyz", "secret"),
    ("DB_PASSWORD=correct-horse", "correct-horse", "password"),
    ("postgres://admin:s3cr3tpw@db.internal:5432/app", "admin:s3cr3tpw", "url credentials"),
    ("https://user:p%40ss@example.com/", "p%40ss", "url credentials"),
    ("git clone https://bob:pa/ss@word@git.example.com/x", "pa/ss@word", "url credentials"),
    (
        "remote https://ghp0123456789abcdefXYZ@github.com/o/r",
        "ghp0123456789abcdefXYZ",
        "url credentials",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "basic credentials"),
    (
        "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        "jwt",
    ),
    ("SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "xoxb-123456789012", "slack token"),
    ("app xapp-1-A0123456789-0123456789012-abcdef", "xapp-1-A0123456789", "slack token"),
    (
        "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "slack webhook",
    ),
    (
        "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "discord webhook",
    ),
    (
        "bot MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe",
        "discord token",
    ),
    ("maps AIzaSyA-0123456789abcdefghijklmnopqrstu", "AIzaSyA-0123456789abcdef", "google api key"),
    ("GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12", "GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12", "google oauth"),
    ("ya29.a0AfH6SMBx0123456789abcdefghij", "ya29.a0AfH6SMBx0123456789", "google oauth"),
    ('password: "horse battery staple" ok', "battery staple", "password"),
    ('secret: "my secret phrase here"', "my secret phrase here", "secret"),
    ("token = 'a b c d e f'", "a b c d e f", "token"),
    ('API_KEY="short', "short", "api key"),  # a quote still open runs to the line's end
]

# Text that looks a little like a secret and must pass unchanged.
FALSE_POSITIVES = [
    "the bearer of good news",
    "Bearer short",  # too short to be a token
    "max_tokens: 4096",
    "input_tokens=12, output_tokens=30",
    "token_count: 12",
    "tokens: 7",
    "a desk-lamp and a task-force-of-twenty-five-players",
    "sk-short",
    "AKIA is a prefix; AKIAshort is not a key",
    "passwords must be 8 characters",
    "the secret: is to dig down",
    "keep the access key out of chat",
    "password: ***",  # too short and already masked
    "the api key goes in .env, not here",
    "https://example.com/path?user=steve",
    "ssh://git@github.com/org/repo.git",
    "mail me at steve@example.com",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "ghp_tooshort",
    "glpat-short",
    "spawn is at 0 64 0",
    "token=[redacted: token]",  # already redacted text is left as it is
    'password: "[redacted: password]"',
    "Basic authentication is off; basic setup first",
    "a jwt looks like eyJ...",
    "xoxb- is a Slack prefix",
    "AIza is where a Google key begins",
    "ya29. is a prefix",
    "ssh://git@github.com/org/repo.git and mailto:someone@example.com",
]


@pytest.mark.parametrize(("text", "secret", "kind"), TRUE_POSITIVES, ids=lambda v: str(v)[:30])
def test_true_positives_are_replaced_with_their_kind(text: str, secret: str, kind: str) -> None:
    redacted = Redactor().redact_text(text)
    assert secret not in redacted
    assert f"[redacted: {kind}]" in redacted


@pytest.mark.parametrize("text", FALSE_POSITIVES, ids=lambda v: v[:30])
def test_false_positives_are_left_alone(text: str) -> None:
    assert Redactor().redact_text(text) == text


def test_assignment_keeps_its_key_so_the_model_knows_what_was_there() -> None:
    assert Redactor().redact_text("password: hunter22") == "password: [redacted: password]"


def test_redaction_is_idempotent() -> None:
    redactor = Redactor()
    for text, _, _ in TRUE_POSITIVES:
        once = redactor.redact_text(text)
        assert redactor.redact_text(once) == once


def test_overlapping_rules_produce_one_placeholder() -> None:
    # The sk- rule and the api_key assignment both match the same characters.
    redacted = Redactor().redact_text("api_key=sk-abcdefghijklmnopqrstuvwxyz")
    assert redacted.count("[redacted:") == 1
    assert "abcdefghij" not in redacted


def test_json_values_are_redacted_recursively_keys_included() -> None:
    value = {
        "path": "notes/env.txt",
        "lines": [{"text": f"GH={GITHUB_PAT}"}, {"text": "nothing"}],
        f"key {GITHUB_PAT}": 1,
        "size": 12,
        "flag": True,
    }
    redacted = Redactor().redact_json(value)
    assert GITHUB_PAT not in repr(redacted)
    assert redacted["lines"][1] == {"text": "nothing"}
    assert redacted["size"] == 12 and redacted["flag"] is True
    assert value["lines"][0]["text"] == f"GH={GITHUB_PAT}"  # the input is not changed


def test_configured_secret_values_are_replaced_literally() -> None:
    redactor = Redactor(secret_values={"plain-looking-value", "plain"})
    redacted = redactor.redact_text("we use plain-looking-value here")
    assert redacted == "we use [redacted: configured secret] here"


def test_owner_rules_add_to_the_defaults_or_replace_them() -> None:
    rule = RedactionRule(kind="rcon password", pattern=r"rcon\.password=(?P<secret>\S+)")
    text = f"rcon.password=minecraft1 {GITHUB_PAT}"
    both = Redactor([rule]).redact_text(text)
    assert both == "rcon.password=[redacted: rcon password] [redacted: github token]"
    only = Redactor([rule], include_defaults=False).redact_text(text)
    assert only == f"rcon.password=[redacted: rcon password] {GITHUB_PAT}"


@pytest.mark.parametrize(
    ("kind", "pattern"), [("bad", "(unclosed"), ("bad", r"a(?=b)"), ("Bad Kind!", "x")]
)
def test_invalid_owner_rules_are_refused_when_built(kind: str, pattern: str) -> None:
    with pytest.raises(ValueError):
        RedactionRule(kind=kind, pattern=pattern)


def test_every_default_rule_fires_at_least_once_in_the_corpus() -> None:
    kinds = {kind for _, _, kind in TRUE_POSITIVES}
    assert {rule.kind for rule in DEFAULT_RULES} <= kinds


def test_pathological_input_is_linear_not_catastrophic() -> None:
    # Classic backtracking bait for the assignment rules; RE2 handles it in one pass.
    text = "password" + "=" * 20_000 + "a" * 50_000
    assert Redactor().redact_text(text).startswith("password")


def test_a_placeholder_keeps_the_line_breaks_it_replaced() -> None:
    text = f"before\n{PEM}\nafter"
    redacted = Redactor().redact_text(text)
    assert redacted.count("\n") == text.count("\n")
    assert redacted.splitlines()[-1] == "after"


@pytest.mark.parametrize(
    ("text", "complete"),
    [("one two thr", "one two "), ("ends\n", "ends\n"), ("nospace", ""), ("", "")],
)
def test_complete_words_drops_a_word_that_may_go_on(text: str, complete: str) -> None:
    from bridge.redaction import complete_words

    assert complete_words(text) == complete


@pytest.mark.parametrize(
    "line",
    [
        "providers.yml:14:5: providers.openai.api_key: ${OPENAI_API_KY} is not set",
        "storage.password: ${MINECLAW_DB_PASWORD} is not set in the environment or .env",
        'token: "${LOBBY_TOKEN}" is not set',
    ],
)
def test_a_variable_name_in_an_error_is_not_a_secret(line: str) -> None:
    # A reload error naming a mistyped variable showed it as [redacted: api key].
    assert Redactor().redact_text(line) == line


def test_a_value_next_to_a_reference_is_still_redacted() -> None:
    text = "api_key: sk-live-abcdefghijklmnop and password: ${DB_PASS}x"
    redacted = Redactor().redact_text(text)
    assert "sk-live-abcdefghijklmnop" not in redacted and "${DB_PASS}x" not in redacted
