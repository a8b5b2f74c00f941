"""Prometheus metrics of one bridge process (`BridgeMetrics`) and the loopback endpoint that
serves them (`bridge.metrics.endpoint.MetricsEndpoint`), with the official ``prometheus_client``,
which only a bridge with ``metrics.enabled`` imports."""

from bridge.metrics.bridge_metrics import NO_TIER, BridgeMetrics, ModelPrices

__all__ = ["NO_TIER", "BridgeMetrics", "ModelPrices"]
