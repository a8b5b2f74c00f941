"""The metrics endpoint scraped by a real HTTP client after real turns: ``python -m bridge
serve`` with ``metrics.enabled`` on a free loopback port, the testkit JVM as the server, a
scripted provider over HTTP that reports usage (cached input included) for one answer and
fails another."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from app.scripted_provider import sse
from prometheus_client.parser import text_string_to_metric_families
from providers.provider_replay_server import Reply

from .processes import EVENT_TIMEOUT, free_port
from .test_turns_e2e import OP, World, world

pytestmark = pytest.mark.jvm


def config_yml(port: int) -> str:
    return (
        "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
        f"metrics:\n  enabled: true\n  host: 127.0.0.1\n  port: {port}\n"
    )


PRICED_MODEL = (
    "    price:\n      input_per_million: 2.0\n      cached_input_per_million: 0.5\n"
    "      output_per_million: 8.0\n"
)


def with_prices(w: World) -> None:
    """Price local/m1 in providers.yml (prices are read as turns run, like the model)."""
    path = w.config / "providers.yml"
    text = path.read_text()
    text = text.replace("  local/m2:\n", PRICED_MODEL + "  local/m2:\n", 1)
    path.write_text(text)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_the_endpoint_serves_turns_tokens_cost_failures_and_latencies(
    tmp_path: Path,
) -> None:
    port = free_port()
    async with world(tmp_path, config_yml(port)) as w:
        await w.bridge.stdout.wait_for(
            rf"^metrics on http://127\.0\.0\.1:{port}/metrics$", timeout=EVENT_TIMEOUT
        )
        await w.add("Steve", OP)
        with_prices(w)
        assert any("eload" in line for line in await w.command("Steve", "reload"))
        usage = {
            "choices": [],
            "usage": {
                "prompt_tokens": 1200,
                "completion_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 1000},
            },
        }
        w.provider.script(
            Reply(
                chunks=sse(
                    {"choices": [{"index": 0, "delta": {"content": "Counted."}}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    usage,
                )
            )
        )
        since = w.mark()
        await w.chat("Steve", "@ai count me")
        await w.message("*", "Counted.", since)
        w.provider.fail(status=500, times=3)
        since = w.mark()
        await w.chat("Steve", "@ai this one fails")
        await w.message("Steve", "model provider is busy", since)

        async with httpx.AsyncClient(timeout=EVENT_TIMEOUT) as client:
            response = await client.get(f"http://127.0.0.1:{port}/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        found = samples(response.text)

        # Steve holds no mineclaw.budget.<tier> node: a guest where his turn is bound to a
        # budget, "none" where it is not (which depends on the budgets' wiring, not on the
        # metrics: tests/metrics checks a named tier). Every series of the turn agrees.
        [tier] = {
            dict(labels)["tier"]
            for (name, labels), _ in found.items()
            if name == "mineclaw_turns_total"
        }
        assert tier in ("guest", "none")
        assert (
            value(found, "mineclaw_turns_total", outcome="completed", lane="public", tier=tier) == 1
        )
        assert (
            value(found, "mineclaw_turns_total", outcome="dropped", lane="public", tier=tier) == 1
        )
        reported = {"tier": tier, "model": "local/m1", "source": "reported", "purpose": "turn"}
        assert value(found, "mineclaw_tokens_total", kind="input", **reported) == 200
        assert value(found, "mineclaw_tokens_total", kind="cached_input", **reported) == 1000
        assert value(found, "mineclaw_tokens_total", kind="output", **reported) == 50
        cost = value(found, "mineclaw_cost_estimate_total", tier=tier, model="local/m1")
        assert cost == pytest.approx((200 * 2.0 + 1000 * 0.5 + 50 * 8.0) / 1_000_000)
        failures = value(
            found,
            "mineclaw_provider_failures_total",
            **{"class": "busy", "model": "local/m1"},
        )
        assert failures == 3
        assert value(found, "mineclaw_turn_duration_seconds_count", outcome="completed") == 1
        assert (
            value(
                found,
                "mineclaw_model_request_duration_seconds_count",
                model="local/m1",
                result="ok",
            )
            == 1
        )
        assert value(found, "mineclaw_queue_length") == 0
