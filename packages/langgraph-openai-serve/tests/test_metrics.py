"""``GET /metrics`` of real processes after known traffic.

``lgos serve --workers 2`` on PostgreSQL: whichever worker answers a scrape
reports both (prometheus-client's multiprocess mode), every family has its
type and labels, counters move by exactly the requests made, the queue
gauges read PostgreSQL's queue, and the whole stays under 500 series. Then
an ``lgos worker`` drains the queue and its health port reports the
background runs, their queue waits and re-runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from conftest import TESTS_DIR, LgosServe, start_lgos_serve
from lgos_testkit import (
    STARTUP_SECONDS,
    free_port,
    start_process,
    wait_for_response,
    wait_until,
)
from metrics_app import WORDS
from metrics_support import Scrape, scrape
from openai import APIError, OpenAI

FAMILIES = {
    "lgos_http_requests": ("counter", {"route", "method", "status"}),
    "lgos_http_request_duration_seconds": ("histogram", {"route", "method"}),
    "lgos_runs": ("counter", {"model", "api", "mode", "outcome"}),
    "lgos_run_duration_seconds": ("histogram", {"model", "api", "mode"}),
    "lgos_time_to_first_token_seconds": ("histogram", {"model", "api"}),
    "lgos_tokens": ("counter", {"model", "type"}),
    "lgos_streams_active": ("gauge", {"api"}),
    "lgos_background_jobs": ("gauge", {"state"}),
    "lgos_background_oldest_ready_seconds": ("gauge", set()),
    "lgos_background_tenant_jobs": ("gauge", {"state", "work", "tenant_class"}),
    "lgos_server_tool_calls": ("counter", {"model", "tool", "outcome"}),
}
"""Families the API process shows once the traffic below has run (queue
waits and re-runs are the worker's: ``test_worker_metrics``)."""


@dataclass(frozen=True)
class Fleet:
    """``lgos serve --workers 2``, its log folder and environment."""

    serve: LgosServe
    log_dir: Path
    env: dict[str, str]

    @property
    def base_url(self) -> str:
        return self.serve.base_url


@pytest.fixture(scope="module")
def fleet(
    tmp_path_factory: pytest.TempPathFactory, postgres_uri: str, bytecode_cache: Any
) -> Iterator[Fleet]:
    env = {
        "LGOS_BACKGROUND_BACKEND": "postgres",
        "LGOS_DATABASE_URL": postgres_uri,
        "LGOS_WORKERS": "2",
        # The keyless caller's scope, counted under a class of its own.
        "LGOS_TENANT_LIMITS": json.dumps({"default": {"class": "demo"}}),
        "PYTHONPYCACHEPREFIX": str(bytecode_cache),
        # Compiled once into the shared cache, not by each of the processes.
        "PYTHONDONTWRITEBYTECODE": "",
    }
    logs = tmp_path_factory.mktemp("metered")
    subprocess.run(
        [sys.executable, "-m", "langgraph_openai_serve.cli", "db-setup"],
        env={**_environ(), **env},
        check=True,
        timeout=120,
    )
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute("TRUNCATE procrastinate_jobs CASCADE")
        conn.execute("TRUNCATE lgos_background_responses CASCADE")
    serve = start_lgos_serve(logs, "metrics_app:registry", **env)
    yield Fleet(
        serve,
        logs,
        {
            **_environ(),
            **env,
            "PYTHONPATH": str(TESTS_DIR),
            "LGOS_REGISTRY": "metrics_app:registry",
        },
    )
    serve.process.stop()


def _environ() -> dict[str, str]:
    return dict(os.environ)


def _metrics_url(fleet: Fleet) -> str:
    return fleet.base_url.removesuffix("/v1") + "/metrics"


def _delta(after: Scrape, before: Scrape, sample: str, **labels: str) -> float:
    return after.value(sample, **labels) - before.value(sample, **labels)


def test_every_process_reports_exactly_the_requests_and_runs_it_served(
    fleet: Fleet, request: pytest.FixtureRequest
) -> None:
    url = _metrics_url(fleet)
    client = OpenAI(base_url=fleet.base_url, api_key="unused", max_retries=0)
    request.addfinalizer(
        client.close
    )  # a socket left to the collector fails a later test
    before = scrape(url)
    input_tokens = output_tokens = 0

    def used(usage: Any) -> None:
        nonlocal input_tokens, output_tokens
        input_tokens += (
            usage.input_tokens
            if hasattr(usage, "input_tokens")
            else (usage.prompt_tokens)
        )
        output_tokens += (
            usage.output_tokens
            if hasattr(usage, "output_tokens")
            else usage.completion_tokens
        )

    chat = [{"role": "user", "content": "Hi"}]
    for _ in range(3):
        completion = client.chat.completions.create(model="words", messages=chat)
        assert completion.choices[0].message.content == WORDS
        used(completion.usage)
    for _ in range(2):
        stream = client.chat.completions.create(
            model="words",
            messages=chat,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        used(next(c.usage for c in chunks if c.usage is not None))
    for _ in range(2):
        with client.responses.stream(model="words", input="Hi") as events:
            used(events.get_final_response().usage)
    used(client.responses.create(model="words", input="Hi").usage)
    tool_response = client.responses.create(
        model="tools",
        input="Which version of langgraph?",
        tools=[{"type": "custom", "name": "package_version"}],
    )
    used(tool_response.usage)
    with pytest.raises(APIError):
        client.chat.completions.create(model="boom", messages=chat)
    failed = client.responses.create(model="boom", input="Hi", stream=True)
    assert [e.type for e in failed][-1] == "response.failed"
    assert httpx.get(fleet.base_url + "/models").status_code == 200
    assert httpx.get(fleet.base_url + "/no/such/route").status_code == 404
    queued = [
        client.responses.create(model="words", input="Later", background=True)
        for _ in range(2)
    ]

    # The middleware counts a request after its last byte went out.
    wait_until(
        lambda: _delta(scrape(url), before, "lgos_http_requests_total") >= 15,
        STARTUP_SECONDS,
        "the requests counted",
    )
    after = scrape(url)

    for name, (kind, labels) in FAMILIES.items():
        assert after.type_of(name) == kind, name
        assert after.label_names(name) == {frozenset(labels)}, name

    def requests(route: str, method: str, status: str) -> float:
        return _delta(
            after,
            before,
            "lgos_http_requests_total",
            route=route,
            method=method,
            status=status,
        )

    assert requests("/v1/chat/completions", "POST", "200") == 5
    assert requests("/v1/chat/completions", "POST", "500") == 1
    assert requests("/v1/responses", "POST", "200") == 7
    assert requests("/v1/models", "GET", "200") == 1
    assert requests("unmatched", "GET", "404") == 1
    assert (
        _delta(
            after,
            before,
            "lgos_http_request_duration_seconds_count",
            route="/v1/responses",
        )
        == 7
    )

    def runs(model: str, api: str, outcome: str) -> float:
        return _delta(
            after,
            before,
            "lgos_runs_total",
            model=model,
            api=api,
            mode="foreground",
            outcome=outcome,
        )

    assert runs("words", "chat", "completed") == 5
    assert runs("boom", "chat", "failed") == 1
    assert runs("words", "responses", "completed") == 3
    assert runs("tools", "responses", "completed") == 1
    assert runs("boom", "responses", "failed") == 1
    assert _delta(after, before, "lgos_runs_total") == 11
    assert _delta(after, before, "lgos_run_duration_seconds_count") == 11
    assert (
        _delta(after, before, "lgos_time_to_first_token_seconds_count", model="words")
        == 4
    )
    assert _delta(after, before, "lgos_tokens_total", type="input") == input_tokens
    assert _delta(after, before, "lgos_tokens_total", type="output") == output_tokens
    assert input_tokens > 0
    assert output_tokens > 0
    assert (
        _delta(
            after,
            before,
            "lgos_server_tool_calls_total",
            model="tools",
            tool="package_version",
            outcome="completed",
        )
        == 1
    )
    assert after.value("lgos_streams_active") == 0
    # No worker drains the queue yet: both Responses wait in PostgreSQL.
    assert after.value("lgos_background_jobs", state="ready") == 2
    assert after.value("lgos_background_jobs", state="running") == 0
    assert after.value("lgos_background_oldest_ready_seconds") > 0
    assert (
        after.value(
            "lgos_background_tenant_jobs",
            state="ready",
            work="interactive",
            tenant_class="demo",
        )
        == 2
    )
    # Both workers' process metrics, each under its pid.
    pids = {sample.labels["pid"] for sample in after.families["process_cpu_seconds"][1]}
    assert len(pids) == 2
    assert after.series <= 500, after.series

    # A worker drains the queue and reports what it ran on its health port.
    port = free_port()
    worker = start_process(
        [sys.executable, "-m", "langgraph_openai_serve.cli", "worker"],
        log=fleet.log_dir / "worker.log",
        name="lgos worker",
        env={
            **fleet.env,
            "LGOS_WORKER_HEALTH_PORT": str(port),
        },
    )
    try:
        worker_url = f"http://127.0.0.1:{port}/metrics"
        for response in queued:
            assert wait_for_response(client, response.id).status == "completed"
        worker.wait_healthy(worker_url, STARTUP_SECONDS)
        drained = scrape(worker_url)
        api = scrape(url)
    finally:
        worker.stop()
    for name, kind, labels in (
        ("lgos_background_queue_wait_seconds", "histogram", {"model"}),
        ("lgos_background_reruns", "counter", {"reason"}),
        ("lgos_runs", "counter", {"model", "api", "mode", "outcome"}),
    ):
        assert drained.type_of(name) == kind, name
        assert drained.label_names(name) == {frozenset(labels)}, name
    assert (
        drained.value(
            "lgos_runs_total", model="words", mode="background", outcome="completed"
        )
        == 2
    )
    assert drained.value("lgos_background_queue_wait_seconds_count", model="words") == 2
    assert drained.value("lgos_background_queue_wait_seconds_sum") > 0
    assert {
        s.labels["reason"]: s.value
        for s in drained.families["lgos_background_reruns"][1]
    } == {"handed_back": 0, "stalled": 0, "database": 0}
    assert drained.value("lgos_tokens_total", model="words") > 0
    assert drained.value("process_cpu_seconds_total") > 0
    assert drained.value("lgos_background_jobs") == 0
    assert api.value("lgos_background_jobs") == 0
    assert drained.series <= 500, drained.series


# --- in process: the switch and the keys ------------------------------------


def _app(**settings: Any) -> Any:
    from langgraph_openai_serve import LanggraphOpenaiServe, Settings
    from metrics_app import registry

    server = LanggraphOpenaiServe(graphs=registry(), settings=Settings(**settings))
    return server.bind_openai_api().app


async def _get(app: Any, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        return await http.get(path, headers=headers)


@pytest.mark.anyio
async def test_metrics_need_no_api_key_and_sit_outside_the_prefix() -> None:
    app = _app(API_KEYS="sk-only", OPENAI_API_PREFIX="/openai")

    metrics = await _get(app, "/metrics")
    assert metrics.status_code == 200
    assert "process_cpu_seconds_total" in metrics.text
    assert (await _get(app, "/openai/metrics")).status_code == 401


@pytest.mark.anyio
async def test_openmetrics_is_served_to_a_scraper_that_asks_for_it() -> None:
    app = _app()
    response = await _get(
        app, "/metrics", accept="application/openmetrics-text; version=1.0.0"
    )
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


@pytest.mark.anyio
async def test_metrics_switched_off_serve_nothing_and_record_nothing() -> None:
    on = _app()
    before = Scrape.of((await _get(on, "/metrics")).text)
    off = _app(METRICS_ENABLED=False)

    assert (await _get(off, "/metrics")).status_code == 404
    assert (await _get(off, "/v1/models")).status_code == 200
    after = Scrape.of((await _get(on, "/metrics")).text)
    # The two apps share the process's registry: the one that is off added
    # nothing to it.
    assert after.value("lgos_http_requests_total", route="/v1/models") == before.value(
        "lgos_http_requests_total", route="/v1/models"
    )


@pytest.mark.anyio
async def test_a_run_handed_back_by_a_stopping_backend_counts_as_a_rerun_not_a_run(
    tmp_path: Path,
) -> None:
    from langchain_core.messages import AIMessage, BaseMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph_openai_serve import (
        GraphConfig,
        GraphFeature,
        GraphRegistry,
        LanggraphOpenaiServe,
        Settings,
    )

    started = asyncio.Event()

    async def wait(state: MessagesState) -> dict[str, list[BaseMessage]]:
        started.set()
        await asyncio.sleep(3600)
        return {"messages": [AIMessage(content="never")]}

    builder = StateGraph(MessagesState)
    builder.add_node("wait", wait)
    builder.add_edge(START, "wait")
    builder.add_edge("wait", END)
    model = "handed-back-" + tmp_path.name[-8:]
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(
            registry={
                model: GraphConfig(
                    graph=builder.compile(),
                    description="waits",
                    features=[GraphFeature.BACKGROUND],
                )
            }
        ),
        settings=Settings(),
    ).bind_openai_api()
    before = Scrape.of((await _get(server.app, "/metrics")).text)
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        queued = await http.post(
            "/v1/responses", json={"model": model, "input": "Hi", "background": True}
        )
        assert queued.status_code == 200
        await asyncio.wait_for(started.wait(), STARTUP_SECONDS)
        # What a stopping process does: its runs go back to the queue.
        await server.services.backend.jobs.close()
    after = Scrape.of((await _get(server.app, "/metrics")).text)

    assert (
        _delta(after, before, "lgos_background_reruns_total", reason="handed_back") == 1
    )
    assert _delta(after, before, "lgos_runs_total", model=model) == 0
    assert (
        _delta(after, before, "lgos_background_queue_wait_seconds_count", model=model)
        == 1
    )
