"""Langfuse tracing with the real Langfuse SDK, exporting to a local recorder.

The Langfuse SDK (v3+) sends OpenTelemetry spans as OTLP/HTTP protobuf to
``{LANGFUSE_BASE_URL}/api/public/otel/v1/traces``. ``OtlpRecorder`` is that
endpoint on loopback: it stores what arrives, and the tests decode it and
assert what a user would see in Langfuse (trace root, metadata, session,
generations). Nothing leaves 127.0.0.1.

Two pieces of process-wide state shape the fixtures:

* The SDK keeps one client per public key for the whole process (and installs
  the global OpenTelemetry tracer provider once), so the recorder and the
  ``LANGFUSE_*`` environment live for the module, and the client is shut down
  (flushed, score and media threads joined) when the module ends. What the
  SDK leaves running, the tracer provider's batch exporter and its prompt
  cache refresher, are daemon threads and idle: they cannot hold pytest.
* ``integrations.langfuse.get_langfuse_callback()`` caches its handler in the
  module global ``_handler``; ``_fresh_langfuse_handler`` resets it around
  every test so no test sees a handler built by another (or by a different
  environment), and the "built once" tests start from nothing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler, AsyncCallbackManager
from langfuse import get_client
from langfuse.langchain import CallbackHandler
from langgraph_openai_serve.integrations import langfuse as langfuse_integration
from langgraph_openai_serve.integrations.langfuse import get_langfuse_callback
from otlp_recorder import TRACES_PATH, OtlpRecorder, Span
from support import config, scripted_graph

pytestmark = pytest.mark.anyio

PUBLIC_KEY = "pk-lf-lgos-test"
SECRET_KEY = "sk-lf-lgos-test"
USER = [{"role": "user", "content": "Hi"}]
ANSWER = "Traced answer."


@pytest.fixture(scope="module")
def recorder() -> Iterator[OtlpRecorder]:
    recorder = OtlpRecorder()
    yield recorder
    recorder.stop()


@pytest.fixture(scope="module")
def langfuse_env(recorder: OtlpRecorder) -> Iterator[OtlpRecorder]:
    """Point the Langfuse SDK at the recorder for this module.

    Variables that could disable, sample, redirect or re-route the export are
    removed so the outer environment cannot change the result.
    """
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
        env.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
        env.setenv("LANGFUSE_BASE_URL", recorder.base_url)
        for name in (
            "LANGFUSE_HOST",
            "LANGFUSE_TRACING_ENABLED",
            "LANGFUSE_SAMPLE_RATE",
            "LANGFUSE_OTEL_TRACES_EXPORT_PATH",
            "LANGFUSE_TRACING_ENVIRONMENT",
            "OTEL_SDK_DISABLED",
        ):
            env.delenv(name, raising=False)
        yield recorder
        if recorder.sdk_started:
            # Flushes, then joins the SDK's worker threads.
            get_client().shutdown()


@pytest.fixture
def traces(langfuse_env: OtlpRecorder) -> Iterator[OtlpRecorder]:
    """The Langfuse environment, with the recorder emptied of earlier exports."""
    langfuse_env.sdk_started = True
    _flush()
    langfuse_env.clear()
    yield langfuse_env
    _flush()


def _flush() -> None:
    """Export every ended span now (returns once the recorder has answered)."""
    get_client().flush()


@pytest.fixture(autouse=True)
def _fresh_langfuse_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start and end every test without a cached process-wide handler.

    ``get_langfuse_callback()`` stores its handler in a module global for the
    life of the process; left alone, the first test's handler would serve all
    later tests (and the module's tests of "built once" would prove nothing).
    ``monkeypatch`` restores whatever value was there before the test.
    """
    monkeypatch.setattr(langfuse_integration, "_handler", None)


# --- helpers ----------------------------------------------------------------


def _traced_client(make_client: Any, graph_config: Any = None) -> Any:
    graph_config = graph_config or config(scripted_graph(ANSWER))
    return make_client({"traced": graph_config}, ENABLE_LANGFUSE=True)


async def _call(
    client: Any, api: str, *, stream: bool, headers: dict[str, str], **extra: Any
) -> tuple[str, str]:
    """One request through the official SDK: (X-Request-ID header, answer)."""
    if api == "chat":
        create: Any = client.chat.completions
        args: dict[str, Any] = {"model": "traced", "messages": USER, **extra}
    else:
        create = client.responses
        args = {"model": "traced", "input": "Hi", **extra}
    if not stream:
        raw = await create.with_raw_response.create(**args, extra_headers=headers)
        parsed = raw.parse()
        text = (
            parsed.choices[0].message.content if api == "chat" else parsed.output_text
        )
        return raw.headers["x-request-id"], text
    async with create.with_streaming_response.create(
        **args, stream=True, extra_headers=headers
    ) as response:
        pieces = []
        async for event in await response.parse():
            if api == "chat":
                pieces.extend(c.delta.content or "" for c in event.choices)
            elif event.type == "response.output_text.delta":
                pieces.append(event.delta)
        return response.headers["x-request-id"], "".join(pieces)


def _graph_run(spans: list[Span], request_id: str) -> Span:
    """The root observation of the trace of ``request_id``.

    Its OTel parent may be a span Langfuse does not export (FastAPI traces
    requests through the global tracer provider the SDK installs), so the
    SDK marks the top exported span ``langfuse.internal.is_app_root``; that is
    the trace root a user sees.
    """
    roots = [
        span
        for span in spans
        if span.attributes.get("langfuse.internal.is_app_root") is True
        and span.metadata("trace", "lgos_request_id") == request_id
    ]
    assert len(roots) == 1, [(s.name, s.parent_id, s.attributes) for s in spans]
    [root] = roots
    assert root.parent_id not in {span.span_id for span in spans}
    return root


def _descends_from(span: Span, root: Span, spans: list[Span]) -> bool:
    by_id = {s.span_id: s for s in spans if s.trace_id == root.trace_id}
    current: Span | None = span
    while current is not None and current.parent_id:
        if current.parent_id == root.span_id:
            return True
        current = by_id.get(current.parent_id)
    return False


def _generations(spans: list[Span], root: Span) -> list[Span]:
    return [
        span
        for span in spans
        if span.trace_id == root.trace_id
        and span.attributes.get("langfuse.observation.type") == "generation"
        and _descends_from(span, root, spans)
    ]


# --- 1. what a request looks like in Langfuse -------------------------------


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_a_request_becomes_a_langfuse_trace(make_client, traces, api, stream):
    client = _traced_client(make_client)
    request_id = f"req-{api}-{'stream' if stream else 'unary'}"

    echoed, text = await _call(
        client,
        api,
        stream=stream,
        headers={"X-Request-ID": request_id},
        metadata={"conversation_id": "conv-1"},
    )
    _flush()

    assert (echoed, text) == (request_id, ANSWER)
    spans = traces.spans()
    root = _graph_run(spans, request_id)
    assert root.name == "lgos.graph_run"
    assert root.scope == "langfuse-sdk"
    # Trace-level fields Langfuse shows on the trace: session and metadata.
    assert root.attributes["session.id"] == "conv-1"
    assert root.metadata("trace", "lgos_model") == "traced"
    assert root.metadata("observation", "lgos_request_id") == request_id
    # langfuse_session_id is consumed as the session, not left in metadata.
    assert root.metadata("trace", "langfuse_session_id") is None
    # Only Langfuse observations are exported, all of them in this one trace.
    assert {(s.scope, s.trace_id) for s in spans} == {("langfuse-sdk", root.trace_id)}
    # The model call is a generation inside the run, with its output.
    [generation] = _generations(spans, root)
    assert generation.name == "ScriptedChatModel"
    assert json.loads(generation.attributes["langfuse.observation.output"]) == {
        "role": "assistant",
        "content": ANSWER,
    }
    assert generation.metadata("observation", "lgos_request_id") == request_id


async def test_exports_are_authenticated_otlp_to_the_configured_base_url(
    make_client, traces
):
    client = _traced_client(make_client)

    await _call(client, "chat", stream=False, headers={})
    _flush()

    exports = traces.requests
    # Langfuse 5 makes no other call (no auth check, no project lookup) while
    # tracing; if a version starts to, the recorder answers it and this says so.
    assert exports
    assert {(r.method, r.path) for r in exports} == {("POST", TRACES_PATH)}
    token = base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
    for export in exports:
        headers = {key.lower(): value for key, value in export.headers.items()}
        assert headers["content-type"] == "application/x-protobuf"
        assert headers["authorization"] == f"Basic {token}"
        assert headers["x-langfuse-public-key"] == PUBLIC_KEY


async def test_a_generated_request_id_is_the_one_recorded(make_client, traces):
    client = _traced_client(make_client)

    request_id, _ = await _call(client, "responses", stream=False, headers={})
    _flush()

    assert len(request_id) == 32
    root = _graph_run(traces.spans(), request_id)
    # Without metadata.conversation_id the trace has no session.
    assert "session.id" not in root.attributes


# --- 3. runtime_callbacks stay the caller's --------------------------------


class _SeesTheRun(AsyncCallbackHandler):
    """Records the root run's name and metadata and counts model calls."""

    def __init__(self) -> None:
        self.roots: list[tuple[str | None, dict[str, Any]]] = []
        self.model_calls = 0

    async def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        parent_run_id: Any = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is None:
            self.roots.append((kwargs.get("name"), dict(metadata or {})))

    async def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.model_calls += 1


@pytest.mark.parametrize("as_manager", [False, True], ids=["list", "manager"])
async def test_runtime_callbacks_are_kept_and_both_see_the_run(
    make_client, traces, as_manager
):
    mine = _SeesTheRun()
    registered: Any = (
        AsyncCallbackManager(handlers=[mine], inheritable_handlers=[mine])
        if as_manager
        else [mine]
    )
    graph_config = config(scripted_graph(ANSWER, ANSWER), runtime_callbacks=registered)
    held = graph_config.runtime_callbacks
    client = _traced_client(make_client, graph_config)

    for stream in (False, True):
        request_id, text = await _call(
            client,
            "chat",
            stream=stream,
            headers={"X-Request-ID": f"req-callbacks-{stream}"},
            metadata={"conversation_id": "conv-1"},
        )
        assert (request_id, text) == (f"req-callbacks-{stream}", ANSWER)
    _flush()

    # Langfuse was added to each run's copy: what was registered still holds
    # exactly the user's handler (pydantic keeps a manager as given and a
    # list as its own copy; neither the caller's object nor it grew).
    assert graph_config.runtime_callbacks is held
    if as_manager:
        assert held is registered
        assert registered.handlers == [mine]
        assert registered.inheritable_handlers == [mine]
    else:
        assert registered == [mine]
        assert list(held) == [mine]
    # The user's handler saw both named runs and their model calls...
    assert mine.model_calls == 2
    assert [name for name, _ in mine.roots] == ["lgos.graph_run"] * 2
    for (_, metadata), stream in zip(mine.roots, (False, True), strict=True):
        assert metadata["lgos_request_id"] == f"req-callbacks-{stream}"
        assert metadata["lgos_model"] == "traced"
        assert metadata["langfuse_session_id"] == "conv-1"
    # ... and so did Langfuse.
    spans = traces.spans()
    for stream in (False, True):
        root = _graph_run(spans, f"req-callbacks-{stream}")
        assert root.name == "lgos.graph_run"
        assert len(_generations(spans, root)) == 1


# --- 4. one process-wide handler -------------------------------------------


def test_get_langfuse_callback_builds_one_handler(traces):
    first = get_langfuse_callback()
    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(lambda _: get_langfuse_callback(), range(16)))

    assert isinstance(first, CallbackHandler)
    assert get_langfuse_callback() is first
    assert all(handler is first for handler in concurrent)


async def test_servers_share_the_handler_built_on_the_first_run(make_client, traces):
    one = _traced_client(make_client)
    other = _traced_client(make_client)
    # Binding only checks the configuration; the handler is built lazily.
    assert langfuse_integration._handler is None

    await _call(one, "chat", stream=False, headers={"X-Request-ID": "req-one"})
    handler = get_langfuse_callback()
    await _call(other, "responses", stream=False, headers={"X-Request-ID": "req-two"})
    _flush()

    assert get_langfuse_callback() is handler
    spans = traces.spans()
    first, second = _graph_run(spans, "req-one"), _graph_run(spans, "req-two")
    assert first.trace_id != second.trace_id
    # The shared handler traced the second server's run too.
    assert handler.last_trace_id == second.trace_id
