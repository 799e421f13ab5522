"""``Observer``: what one bound server records, decided once at binding.

Metrics on (``LGOS_METRICS_ENABLED``, the default) and tracing on (the
``OTEL_*`` variables, ``tracing.py``) are independent; with both off a run
gets a watch that records nothing, and the HTTP middleware skips its work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.observability.http import HttpMetrics
from langgraph_openai_serve.observability.queue import RerunReason, queue_waited, rerun
from langgraph_openai_serve.observability.runs import (
    NO_WATCH,
    Api,
    Mode,
    RunWatch,
    run_children,
    stream_gauge,
)
from langgraph_openai_serve.observability.tracing import (
    extract_context,
    inject_current,
)


@dataclass(frozen=True, slots=True)
class Observer:
    metrics: bool = False
    tracer: Any = None
    """LGOS's OpenTelemetry tracer; ``None``: tracing is off."""
    http: HttpMetrics | None = None
    """Set when metrics are on."""

    @classmethod
    def build(cls, *, metrics: bool, tracer: Any = None) -> Observer:
        return cls(metrics, tracer, HttpMetrics() if metrics else None)

    def run(
        self,
        model: str,
        api: Api,
        mode: Mode = "foreground",
        *,
        requested: float | None = None,
        response_id: str | None = None,
        conversation: str | None = None,
        trace_carrier: dict[str, str] | None = None,
        finish_on_cut: bool = True,
    ) -> RunWatch:
        """The watch of one graph run. ``requested``: when its streamed
        request arrived (time to first token); ``trace_carrier``: the trace
        context a background job carried from the request that submitted it.
        """
        if not self.metrics and self.tracer is None:
            return NO_WATCH
        span_args: dict[str, Any] | None = None
        if self.tracer is not None:
            span_args = {
                "model": model,
                "api": api,
                "mode": mode,
                "response_id": response_id,
                "conversation": conversation,
            }
            if trace_carrier is not None:
                span_args["parent"] = extract_context(trace_carrier)
        return RunWatch(
            run_children(model, api, mode) if self.metrics else None,
            requested=requested,
            tracer=self.tracer,
            span_args=span_args,
            finish_on_cut=finish_on_cut,
        )

    def stream_gauge(self, api: str) -> Any:
        """The ``lgos_streams_active`` child of ``api``; ``None``: metrics off."""
        return stream_gauge(api) if self.metrics else None

    def queue_waited(self, model: str, seconds: float | None) -> None:
        """A worker started a background job's first run ``seconds`` after
        its submission."""
        if self.metrics and seconds is not None:
            queue_waited(model, seconds)

    def rerun(self, reason: RerunReason) -> None:
        """A background run went back on the queue."""
        if self.metrics:
            rerun(reason)

    def trace_carrier(self) -> dict[str, str] | None:
        """The active trace context, for a job that runs elsewhere later."""
        if self.tracer is None:
            return None
        return inject_current() or None


NO_OBSERVER = Observer()
"""Records nothing (metrics and tracing off)."""
