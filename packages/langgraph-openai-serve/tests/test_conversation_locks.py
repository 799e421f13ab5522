"""One turn at a time on a Conversation, through the official SDK, on the
memory and the PostgreSQL stores: while a Response on it is queued or in
progress, another Response naming it (or an interrupt resume joining it) and
items a client adds are refused with OpenAI's 400 ``conversation_locked``,
before anything is run or kept; the lock goes when the turn ends, however
it ends. Across processes: ``test_conversation_locks_multiprocess.py``."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph_openai_serve import GraphFeature, InMemoryRunCoordinator
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import await_response
from stored_app import transcript
from support import config, error_body, one_node_graph, single_model_graph

pytestmark = pytest.mark.anyio

LOCKED = {
    "message": "Another process is currently operating on this conversation. "
    "Please retry in a few seconds.",
    "type": "invalid_request_error",
    "param": "conversation",
    "code": "conversation_locked",
}


class Gate:
    """Holds a graph run until the test opens it; counts runs."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.runs = 0

    async def node(self, state: MessagesState) -> dict[str, list[AIMessage]]:
        self.runs += 1
        self.entered.set()
        await self.release.wait()
        return {"messages": [AIMessage(content=f"Held {state['messages'][-1].text}")]}


@pytest.fixture
def gate():
    return Gate()


@pytest.fixture
def client(make_client, kept_backend, gate):
    def answer(messages):
        if messages[-1].text == "boom":
            return RuntimeError("the model broke")
        return transcript(messages)

    background = {GraphFeature.BACKGROUND}
    graphs = {
        "held": config(one_node_graph(gate.node), features=background),
        "history": config(
            single_model_graph(ScriptedChatModel(responder=answer)),
            features=background,
        ),
        "refund": config(
            refund_graph(InMemorySaver(), Counter()),
            features={GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND},
            run_coordinator=InMemoryRunCoordinator(),
        ),
    }
    return make_client(graphs, backend=kept_backend, BACKGROUND_CONCURRENCY=1)


async def _locked(call) -> None:
    assert await error_body(call, 400) == LOCKED


async def _texts(client, conversation_id):
    items = await client.conversations.items.list(conversation_id, order="asc")
    return [item.content[0].text for item in items.data if item.type == "message"]


async def test_while_a_turn_runs_every_other_turn_and_added_item_is_refused(
    client, gate
):
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": "Hello"}]
    )
    running = asyncio.create_task(
        client.responses.create(
            model="held", input="first", conversation=conversation.id
        )
    )
    await gate.entered.wait()

    for attempt in (
        {"model": "history", "input": "second"},
        {"model": "history", "input": "second", "stream": True},
        {"model": "history", "input": "second", "background": True},
        {"model": "held", "input": "second", "store": False},
    ):
        await _locked(client.responses.create(conversation=conversation.id, **attempt))
    await _locked(
        client.conversations.items.create(
            conversation.id, items=[{"role": "user", "content": "typed"}]
        )
    )
    during = await _texts(client, conversation.id)
    gate.release.set()
    first = await running
    after = await client.responses.create(
        model="history", input="next", conversation=conversation.id
    )

    assert during == ["Hello"]
    assert gate.runs == 1
    assert first.output_text == "Held first"
    assert after.output_text == (
        "Saw human:Hello | human:first | ai:Held first | human:next"
    )


async def test_a_failed_turn_frees_the_conversation_and_adds_nothing(client):
    conversation = await client.conversations.create()

    await error_body(
        client.responses.create(
            model="history", input="boom", conversation=conversation.id
        ),
        500,
    )
    stream = await client.responses.create(
        model="history", input="boom", conversation=conversation.id, stream=True
    )
    failed = [event async for event in stream][-1]
    after = await client.responses.create(
        model="history", input="fine", conversation=conversation.id
    )

    assert failed.type == "response.failed"
    assert after.output_text == "Saw human:fine"


async def test_a_background_turn_holds_the_conversation_until_it_ends(client, gate):
    conversation = await client.conversations.create()
    queued = await client.responses.create(
        model="held", input="job", conversation=conversation.id, background=True
    )

    await _locked(
        client.responses.create(
            model="history", input="meanwhile", conversation=conversation.id
        )
    )
    await gate.entered.wait()
    await _locked(
        client.responses.create(
            model="history", input="meanwhile", conversation=conversation.id
        )
    )
    gate.release.set()
    await await_response(client, queued.id, {"completed"})
    after = await client.responses.create(
        model="history", input="next", conversation=conversation.id
    )

    assert after.output_text == "Saw human:job | ai:Held job | human:next"


async def test_a_queued_background_turn_cancelled_frees_the_conversation(client, gate):
    # The only background slot is taken, so the turn waits in the queue.
    blocker = await client.responses.create(model="held", input="x", background=True)
    await gate.entered.wait()
    conversation = await client.conversations.create()
    queued = await client.responses.create(
        model="history", input="queued", conversation=conversation.id, background=True
    )
    await _locked(
        client.responses.create(
            model="history", input="meanwhile", conversation=conversation.id
        )
    )

    cancelled = await client.responses.cancel(queued.id)
    after = await client.responses.create(
        model="history", input="next", conversation=conversation.id
    )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})

    assert cancelled.status == "cancelled"
    assert after.output_text == "Saw human:next"


async def test_a_pause_ends_its_turn_and_a_resume_holds_the_conversation(client, gate):
    conversation = await client.conversations.create()
    paused = await client.responses.create(
        model="refund", input="Order 42", conversation=conversation.id
    )
    (call,) = [item for item in paused.output if item.type == "function_call"]
    answer = {"type": "function_call_output", "call_id": call.call_id}
    # The only background slot is taken: the resume below waits in the queue.
    blocker = await client.responses.create(model="held", input="x", background=True)
    await gate.entered.wait()
    # Paused, the Response has ended: its resume may claim the Conversation.
    resume = await client.responses.create(
        model="refund",
        previous_response_id=paused.id,
        input=[{**answer, "output": "ok"}],
        background=True,
    )

    # A second resume is refused for the Conversation before the run's lease.
    await _locked(
        client.responses.create(
            model="refund",
            previous_response_id=paused.id,
            input=[{**answer, "output": "no"}],
        )
    )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    resumed = await await_response(client, resume.id, {"completed"})
    after = await client.responses.create(
        model="history", input="thanks", conversation=conversation.id
    )

    assert resumed.output_text == "Refund ok."
    assert resumed.conversation.id == conversation.id
    assert (await _texts(client, conversation.id))[-3:] == [
        "Refund ok.",
        "thanks",
        after.output_text,
    ]
    assert after.output_text.endswith("ai:Refund ok. | human:thanks")
