"""Property-based fuzzing of the API edge: no input gets a 5xx, and every
error is the OpenAI envelope with the status the schema documents.

schemathesis generates requests (valid and invalid) from the app's own
OpenAPI schema; hypothesis generates Responses ``input`` values from the
union of item shapes, with the mistakes clients make. Both are derandomized
and bounded so the module runs in CI in well under a minute.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interrupt_graphs import refund_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from schemathesis import Case
from schemathesis.core.transport import Response
from starlette.testclient import TestClient
from support import config, scripted_graph

ENVELOPE_FIELDS = {"message", "type", "param", "code"}


def _app() -> FastAPI:
    def echo() -> Any:
        return scripted_graph(responder=lambda messages: f"echo {len(messages)}")

    graphs = {
        "plain": config(echo()),
        "tools": config(echo(), features={GraphFeature.FILE_INPUTS}),
        "jobs": config(echo(), features={GraphFeature.BACKGROUND}),
        "refund": config(
            refund_graph(InMemorySaver(), Counter()),
            features={GraphFeature.INTERRUPTS},
            run_coordinator=InMemoryRunCoordinator(),
        ),
    }
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs),
        settings=Settings(OPENAI_API_DOCS_ENABLED=True, MAX_REQUEST_BYTES=64 * 1024),
    )
    return server.bind_openai_api().app


APP = _app()
schema = schemathesis.openapi.from_asgi("/v1/openapi.json", APP)


def assert_envelope(status: int, body: Any) -> None:
    """A 4xx answer is exactly the OpenAI error envelope; never a 5xx."""
    assert status < 500, body
    if status >= 400:
        assert isinstance(body, dict), body
        assert set(body) == {"error"}, body
        assert set(body["error"]) == ENVELOPE_FIELDS, body


@schemathesis.check
def error_is_the_envelope(ctx: Any, response: Response, case: Case) -> bool | None:
    if response.status_code >= 400:
        assert_envelope(response.status_code, response.json())
    return None


@schema.parametrize()
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_gets_a_5xx_or_a_bare_error(case: Case) -> None:
    case.call_and_validate(
        additional_checks=[error_is_the_envelope],
        # Valid per schema is not enough to run: the model must exist, a
        # resume needs a paused run. Those answers are documented 4xx.
        excluded_checks=[schemathesis.checks.positive_data_acceptance],
    )


# -- hypothesis on the Responses input union --------------------------------

texts = st.text(max_size=12)
ids = st.one_of(st.text(min_size=1, max_size=8), st.just(""))
statuses = st.sampled_from(["in_progress", "completed", "incomplete", "bogus"])
content_parts = st.one_of(
    st.fixed_dictionaries({"type": st.just("input_text"), "text": texts}),
    st.fixed_dictionaries({"type": st.just("input_file"), "file_id": ids}),
    st.fixed_dictionaries(
        {"type": st.just("output_text"), "text": texts},
        optional={"annotations": st.lists(st.dictionaries(texts, texts), max_size=2)},
    ),
    st.fixed_dictionaries({"type": st.just("refusal"), "refusal": texts}),
    st.fixed_dictionaries({"type": st.sampled_from(["input_image", "audio", ""])}),
)
messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "system", "developer", "assistant", "tool"]),
        "content": st.one_of(texts, st.lists(content_parts, max_size=3), st.none()),
    },
    optional={"type": st.just("message"), "id": ids, "status": statuses},
)
calls = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["function_call", "custom_tool_call"]),
        "call_id": ids,
        "name": ids,
    },
    optional={"arguments": texts, "input": texts, "status": statuses},
)
outputs = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["function_call_output", "custom_tool_call_output"]),
        "call_id": ids,
        "output": st.one_of(texts, st.integers()),
    }
)
searches = st.fixed_dictionaries(
    {"type": st.just("web_search_call"), "id": ids, "status": statuses},
    optional={"action": st.fixed_dictionaries({"type": st.just("search")})},
)
odd_items = st.one_of(
    st.dictionaries(texts, st.one_of(texts, st.integers()), max_size=3),
    texts,
    st.integers(),
    st.none(),
)
items = st.one_of(messages, calls, outputs, searches, odd_items)
inputs = st.one_of(texts, st.lists(items, max_size=4), st.none(), st.integers())


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(APP) as started:
        yield started


@given(
    model=st.sampled_from(["plain", "tools", "refund", "missing"]),
    input_=inputs,
    stream=st.booleans(),
)
@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_no_responses_input_gets_a_5xx_or_a_bare_error(
    client: TestClient, model: str, input_: Any, stream: bool
) -> None:
    response = client.post(
        "/v1/responses", json={"model": model, "input": input_, "stream": stream}
    )

    body = (
        response.json()
        if response.headers["content-type"] == "application/json"
        else None
    )
    assert_envelope(response.status_code, body)
    if response.status_code == 400:
        assert body is not None
        assert body["error"]["type"] == "invalid_request_error"
    if stream and response.status_code == 200:
        assert "event: response.failed" not in response.text, response.text


def _nested(depth: int, opener: str) -> bytes:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return f'{{"model":"plain","input":{opener * depth}1{closer * depth}}}'.encode()


raw_bodies = st.one_of(
    st.builds(_nested, st.integers(1, 5000), st.sampled_from(["[", '{"a":'])),
    st.binary(max_size=64),
    st.text(max_size=64).map(str.encode),
    st.builds(
        lambda n: b'{"model":"plain","input":"' + b"x" * n + b'"}',
        st.integers(0, 70_000),
    ),
)


@given(body=raw_bodies, path=st.sampled_from(["/v1/responses", "/v1/chat/completions"]))
@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_no_raw_body_gets_a_5xx_or_a_bare_error(
    client: TestClient, body: bytes, path: str
) -> None:
    response = client.post(
        path, content=body, headers={"content-type": "application/json"}
    )

    if response.status_code != 200:
        assert_envelope(response.status_code, response.json())
