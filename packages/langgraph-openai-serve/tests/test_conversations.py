"""Conversations through the official SDK (``LGOS_RESPONSE_STORE=memory``):
the Conversation and item routes, ``conversation`` on create, and the errors
a client gets for what LGOS cannot do."""

from __future__ import annotations

from collections import Counter

import pytest
from interrupt_graphs import refund_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import GraphFeature, InMemoryRunCoordinator
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import await_response
from stored_app import transcript
from support import config, error_body, single_model_graph

pytestmark = pytest.mark.anyio


def _answer(messages):
    if any("boom" in message.text for message in messages[-1:]):
        return RuntimeError("the model broke")
    return transcript(messages)


@pytest.fixture
def graphs():
    return {
        "history": config(single_model_graph(ScriptedChatModel(responder=_answer))),
        "notes": config(
            single_model_graph(ScriptedChatModel(responder=_answer)),
            features={GraphFeature.BACKGROUND},
        ),
        "refund": config(
            refund_graph(InMemorySaver(), Counter()),
            features={GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND},
            run_coordinator=InMemoryRunCoordinator(),
        ),
    }


@pytest.fixture
def client(make_client, graphs):
    return make_client(graphs, RESPONSE_STORE="memory")


def _texts(items):
    return [(item.role, item.content[0].text) for item in items]


async def test_a_conversation_is_created_retrieved_updated_and_deleted(client):
    created = await client.conversations.create(
        metadata={"topic": "tea"},
        items=[{"role": "user", "content": "Hello"}],
    )

    assert created.id.startswith("conv_")
    assert created.metadata == {"topic": "tea"}
    assert await client.conversations.retrieve(created.id) == created
    updated = await client.conversations.update(
        created.id, metadata={"topic": "coffee"}
    )
    assert updated.metadata == {"topic": "coffee"}
    assert updated.created_at == created.created_at
    deleted = await client.conversations.delete(created.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (
        created.id,
        "conversation.deleted",
        True,
    )
    body = await error_body(client.conversations.retrieve(created.id), 404)
    assert body["code"] == "conversation_not_found"
    await error_body(client.conversations.items.list(created.id), 404)


async def test_items_are_added_listed_paged_retrieved_and_deleted(client):
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": f"first {n}"} for n in range(3)]
    )
    added = await client.conversations.items.create(
        conversation.id,
        items=[
            {"role": "assistant", "content": "an answer"},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "last"}],
            },
        ],
    )
    assert [item.content[0].text for item in added.data] == ["an answer", "last"]
    assert added.data[0].content[0].type == "output_text"
    assert all(item.id for item in added.data)

    oldest_first = [
        item
        async for item in client.conversations.items.list(
            conversation.id, order="asc", limit=2
        )
    ]
    assert [text for _, text in _texts(oldest_first)] == [
        "first 0",
        "first 1",
        "first 2",
        "an answer",
        "last",
    ]
    newest = await client.conversations.items.list(conversation.id, limit=2)
    assert [text for _, text in _texts(newest.data)] == ["last", "an answer"]
    assert newest.has_more

    middle = oldest_first[2]
    assert (
        await client.conversations.items.retrieve(
            middle.id, conversation_id=conversation.id
        )
        == middle
    )
    after_delete = await client.conversations.items.delete(
        middle.id, conversation_id=conversation.id
    )
    assert after_delete.id == conversation.id
    left = await client.conversations.items.list(conversation.id, order="asc")
    assert "first 2" not in [text for _, text in _texts(left.data)]
    body = await error_body(
        client.conversations.items.retrieve(middle.id, conversation_id=conversation.id),
        404,
    )
    assert body["code"] == "item_not_found"


async def test_adding_an_item_id_already_held_changes_nothing(client):
    conversation = await client.conversations.create()
    item = {"id": "msg_once", "type": "message", "role": "user", "content": "Hi"}
    await client.conversations.items.create(conversation.id, items=[item])
    await client.conversations.items.create(conversation.id, items=[item])

    listed = await client.conversations.items.list(conversation.id)
    assert [i.id for i in listed.data] == ["msg_once"]


async def test_a_response_runs_after_the_conversation_and_adds_its_turn(client):
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": "My name is Ada."}]
    )
    first = await client.responses.create(
        model="history", input="I like tea.", conversation=conversation.id
    )
    async with client.responses.stream(
        model="history", input="Who am I?", conversation={"id": conversation.id}
    ) as stream:
        second = await stream.get_final_response()

    assert first.conversation.id == conversation.id
    assert second.conversation.id == conversation.id
    assert second.output_text == "Saw " + " | ".join(
        [
            "human:My name is Ada.",
            "human:I like tea.",
            f"ai:{first.output_text}",
            "human:Who am I?",
        ]
    )
    items = await client.conversations.items.list(conversation.id, order="asc")
    assert [item.content[0].text for item in items.data] == [
        "My name is Ada.",
        "I like tea.",
        first.output_text,
        "Who am I?",
        second.output_text,
    ]
    assert items.data[2].id == first.output[0].id
    # The Responses are kept as well, showing their Conversation.
    assert (await client.responses.retrieve(first.id)).conversation.id == (
        conversation.id
    )


async def test_a_failed_response_adds_nothing_to_its_conversation(client):
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": "Hello"}]
    )
    async with client.responses.stream(
        model="history", input="boom", conversation=conversation.id
    ) as stream:
        events = [event async for event in stream]
    failed = events[-1].response

    assert failed.status == "failed"
    items = await client.conversations.items.list(conversation.id)
    assert [text for _, text in _texts(items.data)] == ["Hello"]


async def test_store_false_still_adds_to_the_conversation_but_keeps_no_response(
    client,
):
    conversation = await client.conversations.create()
    unkept = await client.responses.create(
        model="history", input="Hi", conversation=conversation.id, store=False
    )

    items = await client.conversations.items.list(conversation.id, order="asc")
    assert [text for _, text in _texts(items.data)] == ["Hi", unkept.output_text]
    await error_body(client.responses.retrieve(unkept.id), 404)


async def test_conversation_with_previous_response_id_is_a_400_naming_conversation(
    client,
):
    conversation = await client.conversations.create()
    earlier = await client.responses.create(model="history", input="Hi")

    body = await error_body(
        client.responses.create(
            model="history",
            input="Again",
            conversation=conversation.id,
            previous_response_id=earlier.id,
        ),
        400,
    )
    assert body["param"] == "conversation"
    assert "previous_response_id" in body["message"]
    listed = await client.conversations.items.list(conversation.id)
    assert listed.data == []


async def test_an_unknown_conversation_on_create_is_a_404_naming_conversation(client):
    body = await error_body(
        client.responses.create(model="history", input="Hi", conversation="conv_nope"),
        404,
    )
    assert (body["code"], body["param"]) == ("conversation_not_found", "conversation")


async def test_a_background_response_adds_its_turn_when_it_ends(client):
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": "My name is Ada."}]
    )

    queued = await client.responses.create(
        model="notes", input="Who am I?", conversation=conversation.id, background=True
    )
    done = await await_response(client, queued.id, {"completed"})

    assert done.conversation.id == conversation.id
    assert done.output_text == "Saw human:My name is Ada. | human:Who am I?"
    items = await client.conversations.items.list(conversation.id, order="asc")
    assert [text for _, text in _texts(items.data)] == [
        "My name is Ada.",
        "Who am I?",
        done.output_text,
    ]


async def test_bad_items_and_metadata_are_400s_naming_the_field(client):
    too_many = [{"role": "user", "content": str(n)} for n in range(21)]
    body = await error_body(client.conversations.create(items=too_many), 400)
    assert body["param"] == "items"
    body = await error_body(
        client.conversations.create(metadata={"k" * 65: "too long a key"}), 400
    )
    assert body["param"] == "metadata"
    conversation = await client.conversations.create()
    body = await error_body(
        client.conversations.items.create(conversation.id, items=[]), 400
    )
    assert body["param"] == "items"
    body = await error_body(
        client.conversations.items.list(conversation.id, after="msg_unknown"), 400
    )
    assert body["param"] == "after"


async def test_a_stateless_server_has_no_conversations(make_client, graphs):
    stateless = make_client(graphs)

    body = await error_body(stateless.conversations.create(), 400)
    assert "keeps no conversations" in body["message"]
    body = await error_body(
        stateless.responses.create(model="history", input="Hi", conversation="conv_x"),
        400,
    )
    assert body["param"] == "conversation"
    await error_body(stateless.conversations.retrieve("conv_x"), 404)


async def test_models_say_when_the_server_keeps_responses(make_client, graphs):
    keeping = make_client(graphs, RESPONSE_STORE="memory")
    stateless = make_client(graphs)

    listed = await keeping.models.list()
    detail = await keeping.models.retrieve("history")
    plain = await stateless.models.retrieve("history")

    assert all(model.lgos["stores_responses"] is True for model in listed.data)
    assert detail.lgos["stores_responses"] is True
    assert "stores_responses" not in plain.lgos


async def _pause_in(client, conversation_id: str):
    paused = await client.responses.create(
        model="refund", input="Order 42", conversation=conversation_id
    )
    (call,) = [item for item in paused.output if item.type == "function_call"]
    return paused, {"type": "function_call_output", "call_id": call.call_id}


@pytest.mark.parametrize("background", [False, True])
async def test_a_resumed_pause_adds_its_answer_to_the_pauses_conversation(
    client, background
):
    conversation = await client.conversations.create()
    paused, answer = await _pause_in(client, conversation.id)

    resumed = await client.responses.create(
        model="refund",
        previous_response_id=paused.id,
        input=[{**answer, "output": "ok"}],
        background=background,
    )
    if background:
        resumed = await await_response(client, resumed.id, {"completed"})

    items = await client.conversations.items.list(conversation.id, order="asc")
    assert [item.type for item in items.data] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert items.data[-1].content[0].text == "Refund ok."
    assert resumed.conversation is not None
    assert resumed.conversation.id == conversation.id
    assert resumed.previous_response_id == paused.id


async def test_a_resume_streamed_after_its_conversation_was_deleted_still_answers(
    client,
):
    conversation = await client.conversations.create()
    paused, answer = await _pause_in(client, conversation.id)
    await client.conversations.delete(conversation.id)

    async with client.responses.stream(
        model="refund",
        previous_response_id=paused.id,
        input=[{**answer, "output": "no"}],
    ) as stream:
        resumed = await stream.get_final_response()

    assert resumed.output_text == "Refund no."
    await error_body(client.conversations.items.list(conversation.id), 404)
