"""HTTP requests of the OpenAI API: how many, how they ended, how long they took.

Labels are bounded: ``route`` is the matched route's template with its mount
prefix (``/v1/responses/{response_id}``), ``unmatched`` when no route matched;
never the raw path. A label set's children are resolved once and kept.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from prometheus_client import Counter, Histogram

UNMATCHED_ROUTE = "unmatched"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUESTS = Counter(
    "lgos_http_requests",
    "HTTP requests the OpenAI API answered, by route template, method and status.",
    ["route", "method", "status"],
)
REQUEST_DURATION = Histogram(
    "lgos_http_request_duration_seconds",
    "Seconds from a request's arrival to its last byte (a stream's end).",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)


class HttpMetrics:
    """Records one finished request; caches each label set's children."""

    __slots__ = ("_durations", "_requests")

    def __init__(self) -> None:
        self._requests: dict[tuple[str, str, int], Any] = {}
        self._durations: dict[tuple[str, str], Any] = {}

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        requests = self._requests.get(key)
        if requests is None:
            if method not in _METHODS:  # a client's invented method is no label
                method = "other"
                key = (route, method, status)
            requests = self._requests[key] = REQUESTS.labels(route, method, str(status))
        requests.inc()
        duration = self._durations.get(key[:2])
        if duration is None:
            duration = self._durations[key[:2]] = REQUEST_DURATION.labels(route, method)
        duration.observe(seconds)


def route_template(scope: MutableMapping[str, Any]) -> str:
    """The template of the route Starlette matched for ``scope``, with the
    mount prefix (``root_path``); ``unmatched`` when none did."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return UNMATCHED_ROUTE
    return str(scope.get("root_path", "")) + path
