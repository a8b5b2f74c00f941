"""The metrics: fed by real turns of the engine, served over a real loopback HTTP endpoint and
read back with an HTTP client; the tier label comes from the turn's budget; the endpoint and
its configuration refuse anything but loopback."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bridge.control import init_config_dir, load_control_plane
from bridge.control.plane import ConfigLoadError
from bridge.metrics import BridgeMetrics
from bridge.metrics.endpoint import MetricsEndpoint, MetricsError
from bridge.store.audit_sink import MemoryAudit
from bridge.store.usage import UsageDetail
from bridge.turns.activity import ServerActivity
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.ports import BudgetHold, PlayerRef
from bridge.turns.session import PublicSession
from tests.turns.conftest import make_snapshot
from tests.turns.fakes import (
    STEVE,
    MemoryArchive,
    RecordingOutput,
    RecordingTools,
    ScriptedModel,
    answer,
    tool_calls,
)


@dataclass
class VipBudget:
    refuse: bool = False
    spent: list[int] = field(default_factory=list)

    @property
    def tier(self) -> str:
        return "vip"

    def reserve(self, player: PlayerRef | None, worst: int, least: int | None = None) -> BudgetHold:
        refusal = ("budget.player_day", {"used": "10", "limit": "5"}) if self.refuse else None
        return BudgetHold(refusal=refusal)

    def settle(
        self,
        hold: BudgetHold,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        if tokens:
            self.spent.append(tokens)

    def spend(
        self,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        self.spent.append(tokens)


def scrape(endpoint: MetricsEndpoint) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(endpoint.url, timeout=10)
    assert response.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


async def test_turns_feed_the_metrics_by_tier_and_a_refusal_is_counted() -> None:
    metrics = BridgeMetrics()
    engine = TurnEngine(
        session=PublicSession(),
        archive=MemoryArchive(),
        audit=MemoryAudit(),
        output=RecordingOutput(),
        activity=ServerActivity(),
        metrics=metrics,
    )
    # No usage reported: estimated. The second turn's budget runs out after its first round.
    model = ScriptedModel([answer("hello there"), tool_calls(("c1", "look", "{}"))])
    snapshot = make_snapshot(model, runner=RecordingTools())
    outcome = await engine.start(TurnRequest(STEVE, "hi"), replace(snapshot, budget=VipBudget()))
    assert outcome.status == "completed"
    refused = await engine.start(
        TurnRequest(STEVE, "more"), replace(snapshot, budget=VipBudget(refuse=True))
    )
    assert refused.status == "dropped"
    endpoint = MetricsEndpoint.start(metrics, host="127.0.0.1", port=0)
    try:
        found = scrape(endpoint)
    finally:
        endpoint.close()
    turns = "mineclaw_turns_total"
    assert found[(turns, (("lane", "public"), ("outcome", "completed"), ("tier", "vip")))] == 1
    assert found[(turns, (("lane", "public"), ("outcome", "dropped"), ("tier", "vip")))] == 1
    answered = (
        ("kind", "input"),
        ("model", "local/model-a"),
        ("purpose", "turn"),
        ("source", "estimated"),
        ("tier", "vip"),
    )
    assert found[("mineclaw_tokens_total", answered)] > 0
    refusal = (("budget", "budget.player_day"), ("tier", "vip"))
    assert found[("mineclaw_budget_refusals_total", refusal)] == 1
    # No price configured: no cost is invented.
    assert not [key for key in found if key[0] == "mineclaw_cost_estimate_total"]


def test_web_tool_calls_are_counted_by_tool_and_outcome() -> None:
    metrics = BridgeMetrics()
    metrics.web_request("web_fetch", "ok")
    metrics.web_request("web_fetch", "refused")
    metrics.web_request("web_fetch", "refused")
    metrics.web_request("web_search", "failed")
    endpoint = MetricsEndpoint.start(metrics, host="127.0.0.1", port=0)
    try:
        seen = scrape(endpoint)
    finally:
        endpoint.close()
    name = "mineclaw_web_requests_total"
    assert seen[(name, (("outcome", "refused"), ("tool", "web_fetch")))] == 2
    assert seen[(name, (("outcome", "ok"), ("tool", "web_fetch")))] == 1
    assert seen[(name, (("outcome", "failed"), ("tool", "web_search")))] == 1


def test_the_queue_gauge_adds_every_wait_line_at_scrape_time() -> None:
    metrics = BridgeMetrics()
    lengths = [2, 3]
    metrics.add_queue(lambda: lengths[0])
    metrics.add_queue(lambda: lengths[1])
    endpoint = MetricsEndpoint.start(metrics, host="127.0.0.1", port=0)
    try:
        assert scrape(endpoint)[("mineclaw_queue_length", ())] == 5
        lengths[0] = 0
        assert scrape(endpoint)[("mineclaw_queue_length", ())] == 3
    finally:
        endpoint.close()


def test_the_endpoint_refuses_a_non_loopback_host_and_a_taken_port() -> None:
    metrics = BridgeMetrics()
    with pytest.raises(MetricsError, match="not a loopback"):
        MetricsEndpoint.start(metrics, host="0.0.0.0", port=0)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsError, match=f"127.0.0.1:{port}"):
            MetricsEndpoint.start(metrics, host="127.0.0.1", port=port)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.com"])
def test_config_refuses_a_metrics_host_that_is_not_loopback(tmp_path: Path, host: str) -> None:
    init_config_dir(tmp_path)
    (tmp_path / "config.yml").write_text(f"schema: 1\nmetrics:\n  enabled: true\n  host: {host}\n")
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(tmp_path, environ={})
    [problem] = [p for p in caught.value.problems if not p.warning]
    assert (problem.file, problem.line, problem.path) == ("config.yml", 4, "metrics.host")
    assert "loopback" in problem.message


@pytest.mark.parametrize("path", ["/", "/index.html", "/metrics/extra", "/favicon.ico", "/x"])
def test_the_endpoint_answers_only_its_own_path(path: str) -> None:
    metrics = BridgeMetrics()
    endpoint = MetricsEndpoint.start(metrics, host="127.0.0.1", port=0)
    try:
        base = endpoint.url.removesuffix("/metrics")
        other = httpx.get(base + path, timeout=10)
        assert other.status_code == 404
        assert "mineclaw_" not in other.text
        assert httpx.get(endpoint.url, timeout=10).status_code == 200
        assert httpx.get(endpoint.url + "?name[]=mineclaw_queue_length", timeout=10).is_success
    finally:
        endpoint.close()


def test_the_endpoint_serves_on_ipv6_loopback() -> None:
    endpoint = MetricsEndpoint.start(BridgeMetrics(), host="::1", port=0)
    try:
        assert httpx.get(endpoint.url, timeout=10).status_code == 200
        assert httpx.get(endpoint.url.removesuffix("metrics"), timeout=10).status_code == 404
    finally:
        endpoint.close()
