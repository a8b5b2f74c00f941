"""Prometheus metrics of one bridge process (`BridgeMetrics`) and the loopback endpoint that
serves them (`MetricsEndpoint`), with the official ``prometheus_client``."""

from bridge.metrics.bridge_metrics import NO_TIER, BridgeMetrics, ModelPrices
from bridge.metrics.endpoint import MetricsEndpoint

__all__ = ["NO_TIER", "BridgeMetrics", "MetricsEndpoint", "ModelPrices"]
