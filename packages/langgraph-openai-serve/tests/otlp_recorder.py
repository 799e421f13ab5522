"""A loopback stand-in for Langfuse's OTLP endpoint (``test_langfuse.py``),
and the sink behind a real collector (``test_tracing.py``).

The Langfuse SDK (v3+) sends OpenTelemetry spans as OTLP/HTTP protobuf to
``{LANGFUSE_BASE_URL}/api/public/otel/v1/traces``; ``OtlpRecorder`` answers
like a collector, keeps every request, and decodes the spans as ``Span``.
The tracing tests put Rotel, a real collector, in front of it
(``lgos_testkit.otlp``) and read here what the collector forwarded.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

TRACES_PATH = "/api/public/otel/v1/traces"


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Span:
    """One exported span, as Langfuse receives it."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    scope: str
    attributes: dict[str, Any]
    kind: int = 0
    """The protobuf ``SpanKind`` (2: server)."""
    status: int = 0
    """The protobuf status code (2: error)."""
    resource: dict[str, Any] | None = None

    def metadata(self, level: str, key: str) -> Any:
        """A ``langfuse.{trace|observation}.metadata.<key>`` value (JSON on
        the wire), or ``None``."""
        raw = self.attributes.get(f"langfuse.{level}.metadata.{key}")
        return None if raw is None else json.loads(raw)


def _plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_plain(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _plain(kv.value) for kv in value.kvlist_value.values}
    return None if kind is None else getattr(value, kind)


class OtlpRecorder:
    """A loopback HTTP server standing in for Langfuse: accepts OTLP trace
    exports (answering like an OTLP collector) and records every request."""

    def __init__(self, traces_path: str = TRACES_PATH) -> None:
        self.traces_path = traces_path
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self.sdk_started = False
        """Set once a test has used the Langfuse SDK against this recorder."""
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                recorder._record(self, body)
                if self.path == recorder.traces_path:
                    out = ExportTraceServiceResponse().SerializeToString()
                    self._reply(200, "application/x-protobuf", out)
                else:
                    self._reply(404, "application/json", b'{"message":"Not Found"}')

            def do_GET(self) -> None:
                # Not called by the SDK for tracing today; answered like
                # Langfuse in case a version checks health or its project.
                recorder._record(self, b"")
                if self.path.startswith("/api/public/health"):
                    self._reply(200, "application/json", b'{"status":"OK"}')
                elif self.path.startswith("/api/public/projects"):
                    project = b'{"data":[{"id":"lgos-test","name":"lgos-test"}]}'
                    self._reply(200, "application/json", project)
                else:
                    self._reply(404, "application/json", b'{"message":"Not Found"}')

            def _reply(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="otlp-recorder", daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _record(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        entry = Recorded(handler.command, handler.path, dict(handler.headers), body)
        with self._lock:
            self._requests.append(entry)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def spans(self) -> list[Span]:
        """Every span received by the traces endpoint, decoded."""
        spans = []
        for request in self.requests:
            if request.method != "POST" or request.path != self.traces_path:
                continue
            export = ExportTraceServiceRequest.FromString(request.body)
            for resource_spans in export.resource_spans:
                resource = {
                    a.key: _plain(a.value) for a in resource_spans.resource.attributes
                }
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        spans.append(
                            Span(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                scope=scope_spans.scope.name,
                                attributes={
                                    a.key: _plain(a.value) for a in span.attributes
                                },
                                kind=span.kind,
                                status=span.status.code,
                                resource=resource,
                            )
                        )
        return spans

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
