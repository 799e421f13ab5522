"""OpenTelemetry spans after the GenAI semantic conventions (the ``otel`` extra).

Tracing is off unless the standard variables ask for it: an OTLP endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) or
``OTEL_TRACES_EXPORTER=otlp|console``; ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` keep it off. Everything else the SDK reads
itself: ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, the sampler, the
batch processor, the exporter's headers, timeout and compression, and
``OTEL_PROPAGATORS`` for ``traceparent``. An application that wants LGOS's
spans in its own ``TracerProvider`` passes it as
``LanggraphOpenaiServe(tracer_provider=...)``; that turns tracing on too.

The provider LGOS builds from ``OTEL_*`` is private: it is not made the
global one, and a global one is never adopted, so a library that installs
its own (Langfuse does) keeps it and exports exactly what it always did.
LGOS's spans are still the active context while a request runs, so other
spans (Langfuse's observations too) share the request's trace id.

Spans: one ``SERVER`` span per request (``POST /v1/responses``), one
``invoke_agent {graph}`` span per graph run, a span per graph node, and an
``execute_tool {name}`` span per tool the graph runs (``graph_spans.py``).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Mapping, MutableMapping
from importlib.metadata import version
from typing import Any

logger = logging.getLogger("langgraph_openai_serve")

SCOPE = "langgraph_openai_serve"
PROVIDER_NAME = "langgraph"
"""``gen_ai.provider.name`` of a run: the graph runs on LangGraph; the model
providers it calls are the graph's business."""

_TRUE = {"1", "true", "yes", "on"}
_lock = threading.Lock()
_env_provider: Any = None


class TracingConfigurationError(RuntimeError):
    """The ``OTEL_*`` variables ask for something LGOS cannot do."""


def tracing_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the standard variables ask for traces."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    if exporter:
        return True
    return bool(
        env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def build_tracer(provider: Any = None) -> Any:
    """LGOS's tracer: from ``provider``, else from one built from ``OTEL_*``
    (once per process); ``None`` when tracing is off.

    Raises:
        TracingConfigurationError: tracing is asked for but the ``otel``
            extra is missing, or the exporter or protocol is unknown.
    """
    if provider is None:
        provider = _provider_from_environment()
        if provider is None:
            return None
    return provider.get_tracer(SCOPE, version("langgraph-openai-serve"))


def _provider_from_environment() -> Any:
    global _env_provider
    if not tracing_requested():
        return None
    with _lock:
        if _env_provider is None:
            _env_provider = _new_provider()
            atexit.register(_env_provider.shutdown)
        return _env_provider


def _new_provider() -> Any:
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
        )
    except ImportError:
        raise TracingConfigurationError(
            "OTEL_* variables ask for traces but the OpenTelemetry SDK is not "
            'installed; install "langgraph-openai-serve[otel]".'
        ) from None
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
    provider = TracerProvider(resource=Resource.create({"service.name": _service()}))
    for name in filter(None, (part.strip() for part in exporter_name.split(","))):
        if name == "console":
            exporter: Any = ConsoleSpanExporter()
        elif name == "otlp":
            exporter = _otlp_exporter()
        else:
            raise TracingConfigurationError(
                f"OTEL_TRACES_EXPORTER={exporter_name!r}: LGOS exports traces "
                "with 'otlp' or 'console' (or 'none')."
            )
        provider.add_span_processor(BatchSpanProcessor(exporter))
    logger.info("tracing.enabled exporter=%s", exporter_name)
    return provider


def _service() -> str:
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over this default
    # (Resource.create merges the environment's attributes last).
    return os.environ.get("OTEL_SERVICE_NAME") or "lgos"


def _otlp_exporter() -> Any:
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter,
        )

        return OTLPSpanExporter()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError:
            raise TracingConfigurationError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the gRPC exporter: "
                "install opentelemetry-exporter-otlp-proto-grpc."
            ) from None
        return GrpcExporter()
    raise TracingConfigurationError(
        f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: LGOS exports traces over "
        "'http/protobuf' (the default) or 'grpc'."
    )


# --- spans -------------------------------------------------------------------


def extract_context(carrier: Mapping[str, str] | None) -> Any:
    """The context a ``traceparent`` carrier names (``OTEL_PROPAGATORS``)."""
    from opentelemetry import propagate

    return propagate.extract(carrier or {})


def inject_current() -> dict[str, str]:
    """The active trace context as headers (``traceparent``...)."""
    from opentelemetry import propagate

    carrier: MutableMapping[str, str] = {}
    propagate.inject(carrier)
    return dict(carrier)


def start_run_span(
    tracer: Any,
    *,
    model: str,
    api: str,
    mode: str,
    response_id: str | None = None,
    conversation: str | None = None,
    parent: Any = None,
) -> Any:
    """The ``invoke_agent`` span of one graph run (not made current: a run
    spans async generators, so children name it as their parent)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": PROVIDER_NAME,
        "gen_ai.agent.name": model,
        "gen_ai.request.model": model,
        "lgos.api": api,
        "lgos.mode": mode,
    }
    if response_id is not None:
        attributes["gen_ai.response.id"] = response_id
    if conversation is not None:
        attributes["gen_ai.conversation.id"] = conversation
    return tracer.start_span(
        f"invoke_agent {model}", context=parent, attributes=attributes
    )


def end_run_span(
    span: Any, outcome: str | None, usage: Any, error: BaseException | str | None
) -> None:
    from opentelemetry.trace import Status, StatusCode

    if outcome is not None:
        span.set_attribute("lgos.run.outcome", outcome)
    if usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    if outcome == "failed":
        kind = type(error).__name__ if isinstance(error, BaseException) else error
        span.set_attribute("error.type", kind or "_OTHER")
        span.set_status(Status(StatusCode.ERROR))
    elif outcome is None and error is not None:
        span.set_attribute("lgos.run.stopped", str(error))
    span.end()


def span_context_of(span: Any) -> Any:
    """A context whose active span is ``span`` (a parent for its children)."""
    from opentelemetry import trace

    return trace.set_span_in_context(span)


class _AsgiHeaders:
    """Reads an ASGI scope's headers for the propagator (lower-case names)."""

    @staticmethod
    def get(carrier: Any, key: str) -> list[str] | None:
        wanted = key.lower().encode("latin-1")
        values = [v.decode("latin-1") for k, v in carrier if k == wanted]
        return values or None

    @staticmethod
    def keys(carrier: Any) -> list[str]:
        return [k.decode("latin-1") for k, _ in carrier]


def start_server_span(tracer: Any, scope: Mapping[str, Any]) -> tuple[Any, Any]:
    """The ``SERVER`` span of one request, continuing an incoming
    ``traceparent``, made current until ``end_server_span``; (span, token)."""
    from opentelemetry import context, propagate, trace

    parent = propagate.extract(scope["headers"], getter=_AsgiHeaders())  # type: ignore[arg-type]
    method = scope["method"]
    span = tracer.start_span(
        method,
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes={
            "http.request.method": method,
            "url.path": scope["path"],
            "url.scheme": scope.get("scheme", "http"),
        },
    )
    token = context.attach(trace.set_span_in_context(span, parent))
    return span, token


def end_server_span(
    span: Any, token: Any, method: str, route: str, status: int | None
) -> None:
    from opentelemetry import context
    from opentelemetry.trace import Status, StatusCode

    span.update_name(f"{method} {route}")
    span.set_attribute("http.route", route)
    if status is not None:
        span.set_attribute("http.response.status_code", status)
        if status >= 500:
            span.set_attribute("error.type", str(status))
            span.set_status(Status(StatusCode.ERROR))
    span.end()
    context.detach(token)
