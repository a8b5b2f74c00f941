"""Configured secrets redacted by any long run of them (a key's tail, three words of a
four-word passphrase), in the shapes a URL or a JSON string gives them, and never shown in part
by a text that is still arriving."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from bridge.redaction import Redactor
from bridge.redaction.secret_runs import MIN_RUN, SecretRuns

PASSPHRASE = "correct horse battery staple"
KEY = "k3y-0123456789abcdef-tail"
SYMBOLS = "Ab/cd+ef=gh@ij-12"
SHORT = "hunter2"

REDACTOR = Redactor(secret_values=[PASSPHRASE, KEY, SYMBOLS, SHORT])
PLACEHOLDER = "[redacted: configured secret]"


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        (f"console: ...{KEY[3:]}", KEY[3:]),  # shortened by its leading characters
        (f"feedback {KEY[-12:]} ok", KEY[-12:]),  # exactly a run of 12
        (f"{KEY[4:18]}", KEY[4:18]),  # a run from its middle
        ("he said battery staple twice", "battery staple"),  # a run of its words
        ("say correct horse battery!", "correct horse battery"),  # its first three words
        ("correct  horse\n  battery staple", "horse"),  # other whitespace between the words
        (f"next={urllib.parse.quote(SYMBOLS, safe='')}", "%40ij"),
        (json.dumps({"k": SYMBOLS}).replace("/", "\\/"), "ef=gh"),
        (f"q={urllib.parse.quote_plus(PASSPHRASE)}", "horse+battery"),
        (f"my {SYMBOLS}.", SYMBOLS),
        (f"pw {SHORT}!", SHORT),  # a short secret, whole
    ],
)
def test_a_run_of_a_configured_secret_is_redacted(text: str, gone: str) -> None:
    redacted = REDACTOR.redact_text(text)
    assert gone not in redacted
    assert PLACEHOLDER in redacted


@pytest.mark.parametrize(
    "text",
    [
        "the horse is in the stable",  # words of the passphrase, but no run of 12
        f"key {KEY[:11]} and {KEY[-11:]}",  # runs one character short
        "hunter",  # a short secret only counts whole
    ],
)
def test_shorter_runs_are_left_alone(text: str) -> None:
    assert REDACTOR.redact_text(text) == text


def test_the_run_grows_to_everything_of_the_secret_around_it() -> None:
    redacted = REDACTOR.redact_text(f"<{KEY}> and [{PASSPHRASE}]")
    assert redacted == f"<{PLACEHOLDER}> and [{PLACEHOLDER}]"


def test_json_values_are_searched_as_one_text_and_redacted_per_string() -> None:
    value = {"lines": ["clean", f"tail {KEY[2:]}"], "other": 3}
    redacted = REDACTOR.redact_json(value)
    assert redacted["lines"] == ["clean", f"tail {PLACEHOLDER}"]
    clean = {"lines": ["nothing", "here"]}
    assert REDACTOR.redact_json(clean) is clean


def test_a_long_secret_such_as_a_key_file_is_searched_in_linear_time() -> None:
    pem_like = "".join(chr(65 + (i * 7) % 26) + str(i % 10) for i in range(2000))
    runs = SecretRuns([pem_like])
    text = "x" * 50_000 + pem_like[1000:1013] + "y" * 50_000
    assert runs.spans(text) == [(50_000, 50_013)]


@pytest.mark.parametrize(
    ("arriving", "shown"),
    [
        ("my phrase is correct ", "my phrase is"),  # could go on to the passphrase
        ("my phrase is correct horse ", "my phrase is"),  # a run that may go on
        ("a key k3y-01234", "a key"),  # unfinished word
        ("a key k3y-0123 more", "a key k3y-0123"),  # 8 characters of the key, then a space
        (f"{PASSPHRASE} ok ", f"{PLACEHOLDER} ok"),
        ("pw hunt", "pw"),
        ("hello there ", "hello"),  # 'e ' is in the passphrase: the word waits
        ("hello world ", "hello world"),
    ],
)
def test_a_text_still_arriving_holds_back_what_could_begin_a_secret(
    arriving: str, shown: str
) -> None:
    assert REDACTOR.redact_partial(arriving).rstrip() == shown


def test_every_prefix_of_a_stream_shows_no_run_of_a_secret() -> None:
    reply = f"Sure: {PASSPHRASE} is it, and the key ends {KEY[5:]} as you asked."
    for end in range(len(reply) + 1):
        frame = REDACTOR.redact_partial(reply[:end])
        for secret in (PASSPHRASE, KEY):
            for start in range(len(secret) - 4):
                assert secret[start : start + 5] not in frame, (end, frame)


def test_min_run_is_twelve() -> None:
    assert MIN_RUN == 12
