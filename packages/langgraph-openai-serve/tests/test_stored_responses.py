"""Kept Responses through the official SDK (``LGOS_RESPONSE_STORE=memory``):
retrieve, delete, ``input_items``, ``previous_response_id`` on any graph,
``store=false``, failures, interrupts and background Responses."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph_openai_serve import (
    GraphConfigurationError,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import await_response
from pydantic import ValidationError
from support import config, error_body, one_node_graph, single_model_graph

pytestmark = pytest.mark.anyio


def _transcript(messages):
    """What the graph saw, so a test proves which turns reached it."""
    if any("boom" in message.text for message in messages[-1:]):
        return RuntimeError("the model broke")
    return "Saw " + " | ".join(f"{m.type}:{m.text}" for m in messages)


@pytest.fixture
def release():
    return asyncio.Event()


@pytest.fixture
def graphs(release):
    async def held(state: MessagesState) -> dict[str, list[AIMessage]]:
        await release.wait()
        return {"messages": [AIMessage(content="Released.")]}

    return {
        "held": config(one_node_graph(held), features={GraphFeature.BACKGROUND}),
        "history": config(single_model_graph(ScriptedChatModel(responder=_transcript))),
        "notes": config(
            single_model_graph(ScriptedChatModel(responder=_transcript)),
            features={GraphFeature.BACKGROUND},
        ),
        "refund": config(
            refund_graph(InMemorySaver(), Counter()),
            features={GraphFeature.INTERRUPTS},
            run_coordinator=InMemoryRunCoordinator(),
        ),
    }


@pytest.fixture
def client(make_client, graphs):
    return make_client(graphs, RESPONSE_STORE="memory")


async def test_retrieve_returns_exactly_what_create_returned(client):
    created = await client.responses.create(model="history", input="Hello")
    events = await client.responses.create(
        model="history", input="Streamed", stream=True
    )
    (streamed,) = [e.response async for e in events if e.type == "response.completed"]

    assert created.store is True
    assert streamed.store is True
    assert await client.responses.retrieve(created.id) == created
    assert await client.responses.retrieve(streamed.id) == streamed


async def test_three_turns_chain_through_previous_response_id(client):
    first = await client.responses.create(
        model="history", input="My name is Ada.", instructions="Be brief."
    )
    second = await client.responses.create(
        model="history", input="I like tea.", previous_response_id=first.id
    )
    third = await client.responses.create(
        model="history", input="What do you know?", previous_response_id=second.id
    )

    assert third.previous_response_id == second.id
    # Every earlier input and answer reached the graph, in order; the first
    # turn's instructions applied to it alone (they stay with their Response).
    assert first.output_text == "Saw system:Be brief. | human:My name is Ada."
    assert third.output_text == "Saw " + " | ".join(
        [
            "human:My name is Ada.",
            f"ai:{first.output_text}",
            "human:I like tea.",
            f"ai:{second.output_text}",
            "human:What do you know?",
        ]
    )


async def test_store_false_keeps_nothing(client):
    fleeting = await client.responses.create(
        model="history", input="Forget me", store=False
    )

    assert fleeting.store is False
    body = await error_body(client.responses.retrieve(fleeting.id), 404)
    assert body["code"] == "response_not_found"
    chained = await error_body(
        client.responses.create(
            model="history", input="And?", previous_response_id=fleeting.id
        ),
        404,
    )
    assert chained["param"] == "previous_response_id"
    assert chained["code"] == "previous_response_not_found"


async def test_delete_answers_openais_shape_and_the_response_is_gone(client):
    created = await client.responses.create(model="history", input="Bye")

    deleted = await client.delete(f"/responses/{created.id}", cast_to=object)

    assert deleted == {"id": created.id, "object": "response", "deleted": True}
    await error_body(client.responses.retrieve(created.id), 404)
    await error_body(client.responses.input_items.list(created.id), 404)
    await error_body(client.responses.delete(created.id), 404)


async def test_input_items_page_in_both_orders(client):
    sent = [
        {"role": "user", "content": f"question {n}"}
        if n % 2 == 0
        else {"role": "assistant", "content": f"answer {n}"}
        for n in range(5)
    ]
    created = await client.responses.create(model="history", input=sent)

    newest = await client.responses.input_items.list(created.id, limit=2)
    oldest = await client.responses.input_items.list(
        created.id, limit=2, order="asc", include=["message.input_image.image_url"]
    )
    everything = [item async for item in client.responses.input_items.list(created.id)]
    after = await client.responses.input_items.list(
        created.id, order="asc", after=oldest.last_id
    )

    texts = [item.content[0].text for item in everything]
    assert texts == [
        f"{'question' if n % 2 == 0 else 'answer'} {n}" for n in range(4, -1, -1)
    ]
    assert [i.content[0].text for i in newest.data] == texts[:2]
    assert newest.has_more is True
    assert newest.first_id == newest.data[0].id
    assert [i.content[0].text for i in oldest.data] == ["question 0", "answer 1"]
    assert [i.content[0].text for i in after.data] == [
        "question 2",
        "answer 3",
        "question 4",
    ]
    assert after.has_more is False
    assert all(item.id and item.type == "message" for item in everything)


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"order": "sideways"}, "order"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"include[]": "everything"}, "include"),
        ({"after": "msg_unknown"}, "after"),
    ],
)
async def test_bad_input_items_queries_name_their_param(client, query, param):
    created = await client.responses.create(model="history", input="Hi")

    body = await error_body(
        client.get(
            f"/responses/{created.id}/input_items",
            cast_to=object,
            options={"params": query},
        ),
        400,
    )

    assert body["param"] == param


async def test_without_a_store_store_true_is_refused_and_nothing_is_retrievable(
    make_client, graphs
):
    stateless = make_client(graphs)
    created = await stateless.responses.create(model="history", input="Hi")

    refused = await error_body(
        stateless.responses.create(model="history", input="Hi", store=True), 400
    )
    assert refused["param"] == "store"
    assert created.store is False
    await error_body(stateless.responses.retrieve(created.id), 404)
    await error_body(stateless.responses.delete(created.id), 404)
    chained = await error_body(
        stateless.responses.create(
            model="history", input="Hi", previous_response_id=created.id
        ),
        400,
    )
    assert chained["param"] == "previous_response_id"


async def test_item_references_resolve_to_the_callers_own_kept_items(
    make_client, graphs
):
    # What the Vercel AI SDK sends on its second turn: the earlier answer
    # by the id of its output item.
    keys = '{"sk-alice": "alice", "sk-bob": "bob"}'
    server = make_client(graphs, RESPONSE_STORE="memory", API_KEYS=keys)
    alice = server.with_options(api_key="sk-alice")
    bob = server.with_options(api_key="sk-bob")
    first = await alice.responses.create(model="history", input="Hello")
    (answer,) = first.output

    def turn(reference):
        return [
            {"role": "user", "content": "Hello"},
            reference,
            {"role": "user", "content": "Again?"},
        ]

    second = await alice.responses.create(
        model="history", input=turn({"type": "item_reference", "id": answer.id})
    )
    untyped = await alice.responses.create(
        model="history", input=turn({"id": answer.id})
    )
    listed = await alice.responses.input_items.list(second.id)
    others = await error_body(
        bob.responses.create(
            model="history", input=turn({"type": "item_reference", "id": answer.id})
        ),
        400,
    )
    unknown = await error_body(
        alice.responses.create(
            model="history", input=turn({"type": "item_reference", "id": "msg_x"})
        ),
        400,
    )

    expected = "Saw human:Hello | ai:Saw human:Hello | human:Again?"
    assert second.output_text == untyped.output_text == expected
    assert [item.id for item in listed.data][1] == answer.id
    assert others["param"] == unknown["param"] == "input[1].id"
    assert others["message"] == f"Item with id '{answer.id}' not found."
    assert unknown["message"] == "Item with id 'msg_x' not found."


async def test_without_a_store_an_item_reference_says_what_to_do(make_client, graphs):
    stateless = make_client(graphs)

    refused = await error_body(
        stateless.responses.create(
            model="history",
            input=[
                {"role": "user", "content": "Hello"},
                {"type": "item_reference", "id": "msg_1"},
            ],
        ),
        400,
    )

    assert refused["param"] == "input[1]"
    assert "store = false" in refused["message"]
    assert "LGOS_RESPONSE_STORE" in refused["message"]


async def test_a_failed_stream_is_kept_failed(client):
    async with client.responses.stream(model="history", input="boom") as stream:
        events = [event async for event in stream]
    failed = events[-1].response

    kept = await client.responses.retrieve(failed.id)

    assert kept.status == "failed"
    assert kept == failed


async def test_interrupt_resume_is_unchanged_and_a_finished_run_chains(client):
    paused = await client.responses.create(model="refund", input="Order 42")
    (call,) = [item for item in paused.output if item.type == "function_call"]
    answer = {"type": "function_call_output", "call_id": call.call_id, "output": "ok"}

    resumed = await client.responses.create(
        model="refund", previous_response_id=paused.id, input=[answer]
    )
    # A finished (not paused) Response of the interrupt graph continues the
    # conversation in a new run, which pauses again.
    again = await client.responses.create(
        model="refund", previous_response_id=resumed.id, input="Another one"
    )

    assert resumed.output_text == "Refund ok."
    assert (await client.responses.retrieve(paused.id)) == paused
    assert [item.type for item in again.output] == ["function_call"]
    assert again.id.split("_")[2] != paused.id.split("_")[2]  # another run
    # The resume was generated from the pause's turn, then the answer.
    items = await client.responses.input_items.list(resumed.id, order="asc")
    assert [item.type for item in items.data] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert items.data[1].id == call.id


async def test_background_responses_are_listed_chained_and_deleted(client):
    job = await client.responses.create(
        model="notes", input="Remember 7", background=True
    )
    await await_response(client, job.id, {"completed"})
    follow_up = await client.responses.create(
        model="notes", input="What number?", previous_response_id=job.id
    )
    items = await client.responses.input_items.list(job.id)
    refused = await error_body(
        client.responses.create(model="notes", input="x", background=True, store=False),
        400,
    )

    assert "human:Remember 7" in follow_up.output_text
    assert [item.content[0].text for item in items.data] == ["Remember 7"]
    assert refused["param"] == "store"
    assert (await client.responses.delete(job.id)) is None
    await error_body(client.responses.retrieve(job.id), 404)


async def test_a_running_background_response_is_deleted_only_once_finished(
    client, release
):
    job = await client.responses.create(model="held", input="Wait", background=True)
    await await_response(client, job.id, {"in_progress"})

    busy = await error_body(client.responses.delete(job.id), 409)
    release.set()
    await await_response(client, job.id, {"completed"})
    await client.responses.delete(job.id)

    assert busy["code"] == "response_in_progress"
    await error_body(client.responses.retrieve(job.id), 404)


async def test_only_background_responses_are_cancelled_or_streamed_again(client):
    created = await client.responses.create(model="history", input="Hi")

    cancel = await error_body(client.responses.cancel(created.id), 400)
    stream = await error_body(
        client.get(
            f"/responses/{created.id}",
            cast_to=object,
            options={"params": {"stream": "true"}},
        ),
        400,
    )

    assert cancel["type"] == "invalid_request_error"
    assert stream["param"] == "stream"


def test_an_invalid_store_setting_fails_at_startup_naming_it(monkeypatch):
    monkeypatch.setenv("LGOS_RESPONSE_STORE", "redis")

    with pytest.raises(ValidationError) as caught:
        Settings()

    assert "RESPONSE_STORE" in str(caught.value)
    assert "'memory' or 'postgres'" in str(caught.value)


def _bind(graphs, **settings):
    return LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs), settings=Settings(**settings)
    ).bind_openai_api()


def test_one_store_keeps_background_and_foreground_responses(graphs, postgres_uri):
    shared = _bind(
        graphs,
        RESPONSE_STORE="postgres",
        BACKGROUND_BACKEND="postgres",
        DATABASE_URL=postgres_uri,
    ).openai_app.state.lgos
    memory = _bind(graphs, RESPONSE_STORE="memory").openai_app.state.lgos

    assert shared.background.store is shared.responses
    assert memory.background.store is memory.responses
    with pytest.raises(GraphConfigurationError, match="LGOS_RESPONSE_STORE=postgres"):
        _bind(
            graphs,
            RESPONSE_STORE="memory",
            BACKGROUND_BACKEND="postgres",
            DATABASE_URL=postgres_uri,
        )
    with pytest.raises(GraphConfigurationError, match="LGOS_DATABASE_URL"):
        _bind(graphs, RESPONSE_STORE="postgres")


def test_the_published_schema_allows_store_true_only_when_responses_are_kept(graphs):
    def store_schema(**settings):
        app = _bind(graphs, OPENAI_API_DOCS_ENABLED=True, **settings).openai_app
        return app.openapi()["components"]["schemas"]["ResponseCreateRequest"][
            "properties"
        ]["store"]

    assert True not in store_schema()["enum"]
    assert "enum" not in store_schema(RESPONSE_STORE="memory")
