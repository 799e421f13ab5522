"""A real OpenTelemetry collector for trace tests: Rotel (the ``rotel``
wheel's ``rotel-agent``, a Rust OTLP collector).

It receives OTLP over gRPC and HTTP on loopback ports, as any collector a
deployment runs, and forwards every span over OTLP/HTTP to ``export_to``
(the test's sink), so a test sees what a collector accepted, not what an
exporter merely sent.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.net import (
    LOOPBACK,
    STARTUP_SECONDS,
    free_ports,
    port_in_use,
    wait_until,
)
from lgos_stack.processes import RunningProcess, running


@dataclass(frozen=True)
class OtlpCollector:
    """Where the collector receives OTLP."""

    http_endpoint: str
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` for OTLP/HTTP (``http://host:port``)."""
    grpc_endpoint: str
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` for OTLP/gRPC."""
    process: RunningProcess


def rotel_binary() -> Path:
    spec = importlib.util.find_spec("rotel")
    if spec is None or spec.origin is None:
        raise RuntimeError("the rotel wheel is not installed (lgos-testkit needs it)")
    return Path(spec.origin).parent / "rotel-agent"


@contextlib.contextmanager
def otlp_collector(
    root: Path, export_to: str, timeout: float = STARTUP_SECONDS
) -> Iterator[OtlpCollector]:
    """Rotel receiving on free loopback ports and exporting every span to
    ``export_to`` (an OTLP/HTTP traces URL, ``.../v1/traces``) without
    batching delay; stopped by PID afterwards. Its log is ``root/rotel.log``."""
    http_port, grpc_port = free_ports(2)
    command: list[str] = [
        str(rotel_binary()),
        "start",
        "--otlp-http-endpoint",
        f"{LOOPBACK}:{http_port}",
        "--otlp-grpc-endpoint",
        f"{LOOPBACK}:{grpc_port}",
        "--exporter",
        "otlp",
        "--otlp-exporter-protocol",
        "http",
        # Rotel wants a base endpoint even with only traces to export.
        "--otlp-exporter-endpoint",
        export_to.rsplit("/v1/", 1)[0],
        "--otlp-exporter-traces-endpoint",
        export_to,
        "--otlp-receiver-metrics-disabled",
        "--otlp-receiver-logs-disabled",
        "--disable-batching",
        "--pid-file",
        str(root / "rotel.pid"),
        "--log-file",
        str(root / "rotel-agent.log"),
    ]
    with running(command, log=root / "rotel.log", name="rotel") as process:

        def listening() -> bool:
            if process.process.poll() is not None:
                raise RuntimeError(f"rotel exited:\n{process.log_tail()}")
            return port_in_use(http_port) and port_in_use(grpc_port)

        wait_until(listening, timeout, "rotel's OTLP ports")
        yield OtlpCollector(
            f"http://{LOOPBACK}:{http_port}", f"http://{LOOPBACK}:{grpc_port}", process
        )
