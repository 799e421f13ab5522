"""Status updates as reasoning summaries: chosen by the deployment
(``LGOS_RESPONSES_STATUS_AS_REASONING``) or per request (``metadata.lgos_status``,
``reasoning.summary``); commentary messages stay the default."""

from __future__ import annotations

import pytest
from langgraph_openai_serve import GraphFeature, status_event
from langgraph_openai_serve.testing import ScriptedChatModel
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter
from support import config, error_body, single_model_graph, sse_events, status_graph

pytestmark = pytest.mark.anyio

EVENT = TypeAdapter(ResponseStreamEvent)
STATUSES = ("Searching the archive", "Archive searched")


@pytest.fixture
def graphs():
    graph = status_graph(*(status_event(s) for s in STATUSES), answer="Found it.")
    return {"m": config(graph, features={GraphFeature.CLIENT_EVENTS})}


async def _streamed(client, **body) -> list[dict]:
    response = await client._client.post(
        "/v1/responses", json={"model": "m", "stream": True, "input": "Hi", **body}
    )
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    for event in events:
        EVENT.validate_python(event)  # every event is a valid SDK type
    return events


def _shown(output: list[dict]) -> list[tuple[str, str]]:
    return [
        (item["type"], item["summary"][0]["text"])
        if item["type"] == "reasoning"
        else (item["phase"], item["content"][0]["text"])
        for item in output
    ]


AS_REASONING = [
    ("reasoning", "Searching the archive"),
    ("reasoning", "Archive searched"),
    ("final_answer", "Found it."),
]
AS_COMMENTARY = [
    ("commentary", "Searching the archive"),
    ("commentary", "Archive searched"),
    ("final_answer", "Found it."),
]


@pytest.mark.parametrize(
    ("settings", "request_fields", "shown", "summary"),
    [
        ({}, {}, AS_COMMENTARY, None),
        ({}, {"metadata": {"lgos_status": "reasoning"}}, AS_REASONING, "auto"),
        ({}, {"reasoning": {"summary": "concise"}}, AS_REASONING, "concise"),
        ({"RESPONSES_STATUS_AS_REASONING": True}, {}, AS_REASONING, "auto"),
        (
            {"RESPONSES_STATUS_AS_REASONING": True},
            {"metadata": {"lgos_status": "commentary"}},
            AS_COMMENTARY,
            None,
        ),
    ],
    ids=["default", "metadata", "reasoning-field", "deployment", "request-overrides"],
)
async def test_the_deployment_and_the_request_choose_how_statuses_show(
    make_client, graphs, settings, request_fields, shown, summary
):
    client = make_client(graphs, **settings)

    events = await _streamed(client, **request_fields)

    terminal = events[-1]["response"]
    assert _shown(terminal["output"]) == shown
    assert (terminal.get("reasoning") or {}).get("summary") == summary
    kinds = {event["type"] for event in events}
    assert ("response.reasoning_summary_text.delta" in kinds) == (summary is not None)


async def test_the_sdk_stream_helper_reads_reasoning_statuses_apart(
    make_client, graphs
):
    client = make_client(graphs, RESPONSES_STATUS_AS_REASONING=True)

    async with client.responses.stream(model="m", input="Hi") as stream:
        summaries = [
            event.delta
            async for event in stream
            if event.type == "response.reasoning_summary_text.delta"
        ]
        final = await stream.get_final_response()

    assert summaries == list(STATUSES)
    assert final.output_text == "Found it."


async def test_replayed_reasoning_items_are_not_conversation(make_client, graphs):
    seen = []

    def respond(messages):
        seen.extend(messages)
        return "ok"

    graphs["echo"] = config(single_model_graph(ScriptedChatModel(responder=respond)))
    client = make_client(graphs)
    async with client.responses.stream(
        model="m", input="Hi", metadata={"lgos_status": "reasoning"}
    ) as stream:
        first = await stream.get_final_response()

    await client.responses.create(
        model="echo",
        input=[
            {"role": "user", "content": "Hi"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"role": "user", "content": "More?"},
        ],
    )

    assert [(m.type, m.text) for m in seen] == [
        ("human", "Hi"),
        ("ai", "Found it."),
        ("human", "More?"),
    ]


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"metadata": {"lgos_status": "loud"}}, "metadata.lgos_status"),
        ({"reasoning": {"effort": "high"}}, "reasoning.effort"),
    ],
)
async def test_a_wrong_choice_is_refused_naming_it(make_client, graphs, fields, param):
    client = make_client(graphs)

    refused = await error_body(
        client.responses.create(model="m", input="Hi", **fields), 400
    )

    assert refused["param"] == param
