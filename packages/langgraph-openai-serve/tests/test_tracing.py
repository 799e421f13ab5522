"""OpenTelemetry traces after the GenAI conventions.

In process, the SDK's in-memory exporter shows each request's spans: the
server span continuing an incoming ``traceparent``, the run's
``invoke_agent`` span, a span per node and ``execute_tool`` per tool, errors
marked, and a background run joining the trace of the request that
submitted it. Over real processes, ``lgos serve`` and ``lgos worker``
configured only by ``OTEL_*`` export to Rotel, a real collector (OTLP/HTTP
and gRPC), and a background run's spans cross the PostgreSQL queue into the
submitting request's trace.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from conftest import LgosServe, start_lgos_serve
from langgraph_openai_serve import LanggraphOpenaiServe, Settings
from langgraph_openai_serve.observability.tracing import (
    build_tracer,
    tracing_requested,
)
from lgos_testkit import (
    STARTUP_SECONDS,
    await_response,
    start_process,
    wait_for_response,
    wait_until,
)
from lgos_testkit.otlp import otlp_collector
from metrics_app import registry
from openai import AsyncOpenAI, InternalServerError, OpenAI
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode
from otlp_recorder import OtlpRecorder, Span

pytestmark = pytest.mark.anyio


def _traceparent() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


@pytest.fixture
def exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider, memory
    provider.shutdown()


@pytest.fixture
async def traced(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> AsyncIterator[AsyncOpenAI]:
    provider, _ = exporter
    server = LanggraphOpenaiServe(
        graphs=registry(), settings=Settings(), tracer_provider=provider
    ).bind_openai_api()
    transport = httpx.ASGITransport(app=server.app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://t") as http,
        AsyncOpenAI(
            base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
        ) as client,
    ):
        yield client


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def _parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_streamed_response_is_a_server_span_an_agent_run_and_its_nodes(
    traced: AsyncOpenAI, exporter: Any
) -> None:
    traceparent, trace_id, caller_span = _traceparent()
    async with traced.responses.stream(
        model="words", input="Hi", extra_headers={"traceparent": traceparent}
    ) as stream:
        response = await stream.get_final_response()
    spans = exporter[1].get_finished_spans()

    server = _one(spans, "POST /v1/responses")
    assert server.kind == SpanKind.SERVER
    assert f"{server.context.trace_id:032x}" == trace_id
    assert f"{_parent_of(server):016x}" == caller_span
    assert server.attributes["http.route"] == "/v1/responses"
    assert server.attributes["http.response.status_code"] == 200

    agent = _one(spans, "invoke_agent words")
    assert _parent_of(agent) == server.context.span_id
    for key, value in {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "words",
        "gen_ai.request.model": "words",
        "gen_ai.response.id": response.id,
        "gen_ai.usage.input_tokens": response.usage.input_tokens,
        "gen_ai.usage.output_tokens": response.usage.output_tokens,
        "lgos.mode": "foreground",
        "lgos.run.outcome": "completed",
    }.items():
        assert agent.attributes[key] == value, key
    node = _one(spans, "node speak")
    assert _parent_of(node) == agent.context.span_id
    assert {span.context.trace_id for span in spans} == {server.context.trace_id}


async def test_a_server_tool_runs_in_an_execute_tool_span_of_its_node(
    traced: AsyncOpenAI, exporter: Any
) -> None:
    response = await traced.responses.create(
        model="tools",
        input="Which version of langgraph?",
        tools=[{"type": "custom", "name": "package_version"}],
    )
    spans = exporter[1].get_finished_spans()

    call = next(item for item in response.output if item.type == "custom_tool_call")
    tool = _one(spans, "execute_tool package_version")
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "package_version"
    assert tool.attributes["gen_ai.tool.call.id"] == call.call_id
    assert _parent_of(tool) == _one(spans, "node tools").context.span_id
    agent = _one(spans, "invoke_agent tools")
    assert _parent_of(_one(spans, "node tools")) == agent.context.span_id


async def test_a_failing_run_marks_its_spans_as_errors(
    traced: AsyncOpenAI, exporter: Any
) -> None:
    with pytest.raises(InternalServerError):
        await traced.chat.completions.create(
            model="boom", messages=[{"role": "user", "content": "Hi"}]
        )
    spans = exporter[1].get_finished_spans()

    server = _one(spans, "POST /v1/chat/completions")
    assert server.status.status_code == StatusCode.ERROR
    agent = _one(spans, "invoke_agent boom")
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.attributes["error.type"] == "RuntimeError"
    assert agent.attributes["lgos.run.outcome"] == "failed"
    assert _one(spans, "node explode").status.status_code == StatusCode.ERROR


async def test_a_background_run_joins_the_trace_of_the_request_that_submitted_it(
    traced: AsyncOpenAI, exporter: Any
) -> None:
    traceparent, trace_id, _ = _traceparent()
    queued = await traced.responses.create(
        model="words",
        input="Later",
        background=True,
        extra_headers={"traceparent": traceparent},
    )
    done = await await_response(traced, queued.id)
    assert done.status == "completed"

    def ended() -> bool:
        names = [s.name for s in exporter[1].get_finished_spans()]
        return "invoke_agent words" in names

    wait_until(ended, STARTUP_SECONDS, "the background run's span")
    spans = exporter[1].get_finished_spans()
    submit = next(s for s in spans if s.name == "POST /v1/responses")
    agent = _one(spans, "invoke_agent words")
    assert agent.attributes["lgos.mode"] == "background"
    assert agent.attributes["gen_ai.response.id"] == queued.id
    assert f"{agent.context.trace_id:032x}" == trace_id
    assert _parent_of(agent) == submit.context.span_id


def test_tracing_is_off_unless_the_otel_variables_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    assert build_tracer() is None
    assert not tracing_requested({"OTEL_SERVICE_NAME": "lgos"})
    assert tracing_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert tracing_requested({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c"})
    assert tracing_requested({"OTEL_TRACES_EXPORTER": "console"})
    assert not tracing_requested(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}
    )
    assert not tracing_requested(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}
    )


# --- real processes, a real collector ---------------------------------------


class Traced:
    def __init__(self, recorder: OtlpRecorder, api: LgosServe) -> None:
        self.recorder = recorder
        self.api = api

    def spans_of(self, trace_id: str) -> list[Span]:
        return [s for s in self.recorder.spans() if s.trace_id == trace_id]


@pytest.fixture(scope="module")
def collected(
    tmp_path_factory: pytest.TempPathFactory, postgres_uri: str, bytecode_cache: Path
) -> Iterator[Traced]:
    logs = tmp_path_factory.mktemp("traced")
    recorder = OtlpRecorder(traces_path="/v1/traces")
    env = {
        "LGOS_BACKGROUND_BACKEND": "postgres",
        "LGOS_DATABASE_URL": postgres_uri,
        "LGOS_LOG_LEVEL": "WARNING",
        "PYTHONPYCACHEPREFIX": str(bytecode_cache),
        "PYTHONDONTWRITEBYTECODE": "",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    subprocess.run(
        [sys.executable, "-m", "langgraph_openai_serve.cli", "db-setup"],
        env={**base, **env},
        check=True,
        timeout=120,
    )
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute("TRUNCATE procrastinate_jobs CASCADE")
        conn.execute("TRUNCATE lgos_background_responses CASCADE")
    try:
        with otlp_collector(logs, recorder.base_url + "/v1/traces") as collector:
            api = start_lgos_serve(
                logs,
                "metrics_app:registry",
                **env,
                OTEL_SERVICE_NAME="lgos-api",
                OTEL_EXPORTER_OTLP_ENDPOINT=collector.http_endpoint,
            )
            worker = start_process(
                [sys.executable, "-m", "langgraph_openai_serve.cli", "worker"],
                log=logs / "worker.log",
                name="lgos worker",
                env={
                    **base,
                    **env,
                    "PYTHONPATH": str(Path(__file__).parent),
                    "LGOS_REGISTRY": "metrics_app:registry",
                    "OTEL_SERVICE_NAME": "lgos-worker",
                    "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                    "OTEL_EXPORTER_OTLP_ENDPOINT": collector.grpc_endpoint,
                },
            )
            try:
                yield Traced(recorder, api)
            finally:
                worker.stop()
                api.process.stop()
    finally:
        recorder.stop()


def test_lgos_serve_and_worker_export_one_trace_through_a_collector(
    collected: Traced, request: pytest.FixtureRequest
) -> None:
    traceparent, trace_id, caller_span = _traceparent()
    client = OpenAI(base_url=collected.api.base_url, api_key="x", max_retries=0)
    request.addfinalizer(
        client.close
    )  # a socket left to the collector fails a later test
    headers = {"traceparent": traceparent}
    streamed = client.responses.create(
        model="words", input="Hi", stream=True, extra_headers=headers
    )
    assert [e.type for e in streamed][-1] == "response.completed"
    queued = client.responses.create(
        model="words", input="Later", background=True, extra_headers=headers
    )
    assert wait_for_response(client, queued.id, {"completed"}, 60).status == "completed"

    def names() -> list[tuple[str, str]]:
        return sorted(
            (s.name, (s.resource or {}).get("service.name", ""))
            for s in collected.spans_of(trace_id)
        )

    expected = [
        ("POST /v1/responses", "lgos-api"),
        ("POST /v1/responses", "lgos-api"),
        ("invoke_agent words", "lgos-api"),
        ("invoke_agent words", "lgos-worker"),
        ("node speak", "lgos-api"),
        ("node speak", "lgos-worker"),
    ]
    wait_until(lambda: names() == expected, STARTUP_SECONDS, f"spans {expected}")
    spans = collected.spans_of(trace_id)
    servers = [s for s in spans if s.name == "POST /v1/responses"]
    assert {s.parent_id for s in servers} == {caller_span}
    background = next(
        s
        for s in spans
        if s.name == "invoke_agent words"
        and s.resource["service.name"] == "lgos-worker"
    )
    assert background.attributes["gen_ai.response.id"] == queued.id
    assert background.parent_id in {s.span_id for s in servers}
    assert background.attributes["lgos.mode"] == "background"
