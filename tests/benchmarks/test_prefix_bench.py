"""The prefix bench measures what it says: equal starts are found exactly, and a short run of
the scripted conversation goes through the real engine with every turn completed."""

from __future__ import annotations

import random

from bench.prefix_bench import SUMMARY_INSTRUCTIONS, common_prefix, prompt_bytes, run


def test_common_prefix_matches_a_plain_walk() -> None:
    rng = random.Random(3)
    for _ in range(300):
        a = bytes(rng.choice(b"ab") for _ in range(rng.randrange(0, 40)))
        b = bytes(rng.choice(b"ab") for _ in range(rng.randrange(0, 40)))
        walk = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        expected = min(len(a), len(b)) if walk is None else walk
        assert common_prefix(a, b) == expected


async def test_each_turn_starts_with_the_previous_request() -> None:
    requests, completed = await run(12)
    assert sorted(completed) == list(range(1, 13))
    chat = [prompt_bytes(r) for _, r in requests if r.instructions != SUMMARY_INSTRUCTIONS]
    # Every request repeats most of the one before it: the history is never rewritten.
    for before, after in zip(chat, chat[1:], strict=False):
        assert common_prefix(before, after) > len(before) * 0.8
