"""Graph runs: outcomes, durations, time to first token, tokens, server tools.

One ``RunWatch`` follows one graph run. The surface that drives the run
(a stream encoder, the non-streaming runner, the background executor) tells
it what happened: ``start``, the first answer text, each server tool's
result, and how the run ended (``finish``, idempotent: the first ending
counts). A run's label children are resolved once per (model, api, mode)
and kept, so recording costs a few dictionary reads and increments. With
tracing on the watch also owns the run's ``invoke_agent`` span.

``model`` is always a registered graph id (a request naming another is
refused before a run exists), so the labels stay bounded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from prometheus_client import Counter, Gauge, Histogram

from langgraph_openai_serve.observability.tracing import end_run_span, start_run_span

Api = Literal["chat", "responses"]
Mode = Literal["foreground", "background"]
Outcome = Literal["completed", "incomplete", "failed", "cancelled", "paused"]
OUTCOMES: tuple[Outcome, ...] = (
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "paused",
)

RUNS = Counter(
    "lgos_runs",
    "Graph runs that ended, by graph, API, foreground or background, and outcome.",
    ["model", "api", "mode", "outcome"],
)
RUN_DURATION = Histogram(
    "lgos_run_duration_seconds",
    "Seconds a graph run took, from its start to its end.",
    ["model", "api", "mode"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)
TIME_TO_FIRST_TOKEN = Histogram(
    "lgos_time_to_first_token_seconds",
    "Seconds from a streamed request's arrival to its first answer text delta.",
    ["model", "api"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
TOKENS = Counter(
    "lgos_tokens",
    "Tokens the model calls of finished runs reported (never estimated).",
    ["model", "type"],
)
STREAMS_ACTIVE = Gauge(
    "lgos_streams_active",
    "Server-sent event streams open now (runs and background follows).",
    ["api"],
    multiprocess_mode="livesum",
)
SERVER_TOOL_CALLS = Counter(
    "lgos_server_tool_calls",
    "Server tool calls that returned, by graph, tool and outcome.",
    ["model", "tool", "outcome"],
)


@dataclass(slots=True)
class RunChildren:
    """The label children of one (model, api, mode), resolved once."""

    model: str
    outcomes: dict[str, Any]
    duration: Any
    ttft: Any
    input_tokens: Any
    output_tokens: Any
    tools: dict[tuple[str, bool], Any] = field(default_factory=dict)

    @classmethod
    def of(cls, model: str, api: Api, mode: Mode) -> RunChildren:
        return cls(
            model=model,
            outcomes={
                outcome: RUNS.labels(model, api, mode, outcome) for outcome in OUTCOMES
            },
            duration=RUN_DURATION.labels(model, api, mode),
            ttft=TIME_TO_FIRST_TOKEN.labels(model, api),
            input_tokens=TOKENS.labels(model, "input"),
            output_tokens=TOKENS.labels(model, "output"),
        )

    def tool(self, name: str, failed: bool) -> Any:
        key = (name, failed)
        child = self.tools.get(key)
        if child is None:
            outcome = "failed" if failed else "completed"
            child = self.tools[key] = SERVER_TOOL_CALLS.labels(
                self.model, name, outcome
            )
        return child


_children: dict[tuple[str, str, str], RunChildren] = {}


def run_children(model: str, api: Api, mode: Mode) -> RunChildren:
    key = (model, api, mode)
    children = _children.get(key)
    if children is None:
        children = _children[key] = RunChildren.of(model, api, mode)
    return children


_stream_gauges: dict[str, Any] = {}


def stream_gauge(api: str) -> Any:
    """The ``lgos_streams_active`` child of ``api`` (``inc``/``dec``)."""
    gauge = _stream_gauges.get(api)
    if gauge is None:
        gauge = _stream_gauges[api] = STREAMS_ACTIVE.labels(api)
    return gauge


class RunWatch:
    """Metrics (and, with tracing, the span) of one graph run."""

    __slots__ = (
        "_children",
        "_finished",
        "_first_text_pending",
        "_requested",
        "_span_args",
        "_started",
        "_tracer",
        "callbacks",
        "finish_on_cut",
        "span",
    )

    def __init__(
        self,
        children: RunChildren | None,
        *,
        requested: float | None = None,
        tracer: Any = None,
        span_args: dict[str, Any] | None = None,
        finish_on_cut: bool = True,
    ) -> None:
        self._children = children
        self._requested = requested
        """``perf_counter`` time the request arrived (TTFT's start), if any."""
        self._tracer = tracer
        self._span_args = span_args or {}
        self._started = 0.0
        self._finished = False
        self._first_text_pending = requested is not None
        self.span: Any = None
        """The run's ``invoke_agent`` span once started (tracing only)."""
        self.finish_on_cut = finish_on_cut
        """A run cut short (client gone, task cancelled) ends ``cancelled``;
        ``False`` leaves the ending to the caller (background hand-backs)."""
        self.callbacks: tuple[Any, ...] = ()
        """LangChain handlers the run needs (its node and tool spans)."""
        if tracer is not None:
            from langgraph_openai_serve.observability.graph_spans import GraphSpans

            self.callbacks = (GraphSpans(tracer, self),)

    def name_response(self, response_id: str) -> None:
        """The Response (or completion) id the run answers as, once known;
        before ``start``."""
        if self._tracer is not None:
            self._span_args["response_id"] = response_id

    def start(self) -> None:
        """The run begins: its clock and its span (a child of the active
        context, or of ``parent`` given in ``span_args``)."""
        if self._started:
            return
        self._started = time.perf_counter()
        if self._tracer is not None:
            self.span = start_run_span(self._tracer, **self._span_args)

    def first_text(self) -> None:
        """The run produced its first answer text (streamed runs)."""
        if self._first_text_pending:
            self._first_text_pending = False
            if self._children is not None and self._requested is not None:
                self._children.ttft.observe(time.perf_counter() - self._requested)

    def tool(self, name: str, failed: bool = False) -> None:
        """A selected server tool returned."""
        if self._children is not None:
            self._children.tool(name, failed).inc()

    def finish(
        self,
        outcome: Outcome,
        usage: Any = None,
        *,
        error: BaseException | str | None = None,
    ) -> None:
        """The run ended; only the first ending counts. ``usage`` has
        ``input_tokens`` and ``output_tokens`` (the run's reported usage)."""
        if self._finished:
            return
        self._finished = True
        children = self._children
        if children is not None:
            children.outcomes[outcome].inc()
            if self._started:
                children.duration.observe(time.perf_counter() - self._started)
            if usage is not None:
                children.input_tokens.inc(usage.input_tokens)
                children.output_tokens.inc(usage.output_tokens)
        if self.span is not None:
            end_run_span(self.span, outcome, usage, error)

    def cut(self) -> None:
        """The run stopped before it ended (its consumer went away)."""
        if self.finish_on_cut:
            self.finish("cancelled")

    def discard(self, reason: str) -> None:
        """The run stopped without ending and will run again (a background
        hand-back): no run is counted; the span ends saying why."""
        if self._finished:
            return
        self._finished = True
        if self.span is not None:
            end_run_span(self.span, None, None, reason)


class _NoWatch(RunWatch):
    """Records nothing: metrics and tracing are off, or nobody watches."""

    __slots__ = ()

    def name_response(self, response_id: str) -> None:
        pass

    def start(self) -> None:
        pass

    def first_text(self) -> None:
        pass

    def tool(self, name: str, failed: bool = False) -> None:
        pass

    def finish(
        self,
        outcome: Outcome,
        usage: Any = None,
        *,
        error: BaseException | str | None = None,
    ) -> None:
        pass

    def cut(self) -> None:
        pass

    def discard(self, reason: str) -> None:
        pass


NO_WATCH: RunWatch = _NoWatch(None)
