"""The gateway's Prometheus metrics (``GET /metrics``).

:class:`Metrics` holds one registry per app by default (so two gateways in one process, as in
the tests, never share counts); :func:`metrics_in` gives the one set of metrics registered in
a given registry (the vLLM plugin's, in vLLM's own registry, which vLLM's ``/metrics``
serves: the same names as ``serve``'s ``/metrics``, each metric object made once however
many apps count into it). The metrics: requests by route and status, prompt and completion
tokens, time to first token and time per output token (histograms), open streams, requests queued
(admitted, waiting for the engine's first output), and upstream errors by code.
:class:`~.request_layer.RequestLayer` counts each response into them. Needs
``prometheus_client`` (the ``serve`` extra).
"""

from __future__ import annotations

import weakref

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

__all__ = ["ROUTES", "Metrics", "metrics_in"]

#: The routes counted by name; anything else counts as ``other`` (bounded label values).
ROUTES = (
    "/v1/chat/completions",
    "/v1/chat/completions/render",
    "/v1/responses",
    "/v1/responses/render",
    "/v1/completions",
    "/v1/models",
    "/health",
    "/metrics",
)

class Metrics:
    """The gateway's metrics, in ``registry`` (default: a registry of their own).

    A registry holds each metric name once: a second :class:`Metrics` in the same registry
    raises prometheus_client's ``ValueError``; :func:`metrics_in` shares the first."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "harmony_gateway_requests",
            "HTTP responses by route and status",
            ["route", "status"],
            registry=r,
        )
        self.prompt_tokens = Counter(
            "harmony_gateway_prompt_tokens", "prompt tokens of generation requests", registry=r
        )
        self.completion_tokens = Counter(
            "harmony_gateway_completion_tokens", "completion tokens sent to clients", registry=r
        )
        self.time_to_first_token = Histogram(
            "harmony_gateway_time_to_first_token_seconds",
            "from the request's arrival to its first output from the engine",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.time_per_output_token = Histogram(
            "harmony_gateway_time_per_output_token_seconds",
            "mean time between output tokens, one observation per generation",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
            registry=r,
        )
        self.open_streams = Gauge(
            "harmony_gateway_open_streams", "generations sending output now", registry=r
        )
        self.queued = Gauge(
            "harmony_gateway_queue_depth",
            "generation requests admitted and waiting for the engine's first output",
            registry=r,
        )
        self.upstream_errors = Counter(
            "harmony_gateway_upstream_errors", "engine faults by code", ["code"], registry=r
        )

    def exposition(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


#: The metrics made in each registry by :func:`metrics_in` (a registry that goes away takes
#: its entry with it).
_IN_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, Metrics] = weakref.WeakKeyDictionary()


def metrics_in(registry: CollectorRegistry) -> Metrics:
    """The gateway's metrics registered in ``registry``, made on the first call and the same
    object on every later one: apps that count into one registry share its counters."""
    metrics = _IN_REGISTRY.get(registry)
    if metrics is None:
        metrics = _IN_REGISTRY[registry] = Metrics(registry)
    return metrics
