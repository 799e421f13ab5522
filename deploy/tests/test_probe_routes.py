"""The probes, monitors and the LiteLLM component's model sync point at what
the real processes serve: ``lgos serve`` and ``lgos worker`` started with the
base's command and environment (the cluster's addresses and secrets replaced
by local ones), on a real PostgreSQL the db-setup Job set up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from deploy_support import Rendered, RunningApi, container, local_command
from langgraph_openai_serve import Settings
from lgos_testkit import RunningProcess, free_port, running, wait_until

PROBES = ("startupProbe", "readinessProbe", "livenessProbe")

# The health routes and the worker's health server came with the fleet
# issue (LGOS_WORKER_HEALTH_PORT); /metrics comes with the metrics issue.
_HEALTH_ROUTES_LANDED = "WORKER_HEALTH_PORT" in Settings.model_fields
needs_health_routes = pytest.mark.skipif(
    not _HEALTH_ROUTES_LANDED,
    reason="the core has no /health/live, /health/ready or worker health port yet",
)
needs_metrics = pytest.mark.skipif(
    "METRICS_ENABLED" not in Settings.model_fields,
    reason="the core serves no /metrics yet",
)


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return 0


def _probe_paths(box: dict[str, Any]) -> set[str]:
    return {box[kind]["httpGet"]["path"] for kind in PROBES}


def _metrics_path(result: Rendered, monitor: str) -> str:
    (endpoint,) = result.get("PodMonitor", monitor)["spec"]["podMetricsEndpoints"]
    path: str = endpoint["path"]
    return path


@pytest.fixture
def worker(
    base: Rendered, set_up_database: str, tmp_path: Path
) -> Iterator[tuple[RunningProcess, str]]:
    port = free_port()
    argv, env = local_command(
        base,
        base.get("Deployment", "lgos-worker"),
        "worker",
        tmp_path,
        LGOS_DATABASE_URL=set_up_database,
        DEMO_FILES_API_KEY="sk-deploy-test-files",
        LGOS_BATCH_FILES_API_KEY="sk-deploy-test-files-service",
        LGOS_WORKER_HEALTH_HOST="127.0.0.1",
        LGOS_WORKER_HEALTH_PORT=str(port),
    )
    url = f"http://127.0.0.1:{port}"
    with running(
        argv,
        log=tmp_path / "worker.log",
        name="lgos worker",
        env=env,
        health_url=f"{url}/health/live",
    ) as process:
        yield process, url


def _serves(process: RunningProcess, url: str, paths: set[str]) -> None:
    # Ready may follow live by a moment (graphs resolved, queue registered).
    for path in sorted(paths):
        wait_until(
            lambda path=path: _status(url + path) == 200,
            60,
            f"{process.name} answering 200 on {path}",
        )


@needs_health_routes
def test_the_api_answers_its_probes(base: Rendered, api: RunningApi) -> None:
    process, url = api.process, api.url
    box = container(base.get("Deployment", "lgos-api"), "api")

    _serves(process, url, _probe_paths(box))


@needs_metrics
def test_the_api_serves_what_its_monitor_scrapes(
    production: Rendered, api: RunningApi
) -> None:
    process, url = api.process, api.url

    _serves(process, url, {_metrics_path(production, "lgos-api")})


@needs_health_routes
def test_a_worker_answers_its_probes(
    base: Rendered, worker: tuple[RunningProcess, str]
) -> None:
    process, url = worker
    box = container(base.get("Deployment", "lgos-worker"), "worker")

    _serves(process, url, _probe_paths(box))


@needs_health_routes
@needs_metrics
def test_a_worker_serves_what_its_monitor_scrapes(
    production: Rendered, worker: tuple[RunningProcess, str]
) -> None:
    process, url = worker

    _serves(process, url, {_metrics_path(production, "lgos-worker")})
