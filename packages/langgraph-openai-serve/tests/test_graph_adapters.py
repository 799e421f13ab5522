"""Graph adapters and callbacks registered on ``GraphConfig``."""

from __future__ import annotations

import dataclasses
from typing import Any, TypedDict

import openai
import pytest
from langchain_core.callbacks import AsyncCallbackHandler, AsyncCallbackManager
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph_openai_serve import GraphRequest
from support import config, scripted_graph

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hi"}]


class _ModelEnds(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.ended = 0

    async def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.ended += 1


@pytest.mark.parametrize("as_manager", [False, True])
async def test_runtime_callbacks_observe_the_run(make_client, as_manager):
    handler = _ModelEnds()
    callbacks = (
        AsyncCallbackManager(handlers=[handler], inheritable_handlers=[handler])
        if as_manager
        else [handler]
    )
    registered = config(scripted_graph("one", "two"), runtime_callbacks=callbacks)
    client = make_client({"m": registered})

    await client.chat.completions.create(model="m", messages=USER)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    _ = [chunk async for chunk in stream]

    assert handler.ended == 2
    # LGOS adds its own handler to a copy, never to the caller's collection.
    if as_manager:
        assert callbacks.handlers == [handler]
    else:
        assert callbacks == [handler]


class TicketState(TypedDict):
    question: str
    reply: str


def _ticket_graph():
    async def answer(state: TicketState) -> dict[str, str]:
        return {"reply": f"Ticket about: {state['question']}"}

    builder = StateGraph(TicketState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


async def test_custom_schema_graph_is_served_through_adapters(make_client):
    def to_input(request: GraphRequest, messages: list[BaseMessage]) -> TicketState:
        return {"question": messages[-1].text, "reply": ""}

    async def to_message(output: TicketState) -> AIMessage:
        return AIMessage(content=output["reply"])

    registered = config(
        _ticket_graph(), request_to_input=to_input, output_to_message=to_message
    )
    client = make_client({"ticket": registered})

    completion = await client.chat.completions.create(
        model="ticket", messages=[{"role": "user", "content": "refund"}]
    )
    stream = await client.chat.completions.create(
        model="ticket", messages=[{"role": "user", "content": "refund"}], stream=True
    )
    streamed = "".join(
        [c.choices[0].delta.content or "" async for c in stream if c.choices]
    )

    assert completion.choices[0].message.content == "Ticket about: refund"
    assert streamed == "Ticket about: refund"


async def test_graph_output_without_messages_is_a_server_error(make_client):
    client = make_client({"ticket": config(_ticket_graph())})

    with pytest.raises(openai.InternalServerError) as caught:
        await client.chat.completions.create(
            model="ticket", messages=[{"role": "user", "content": "x"}]
        )

    assert caught.value.status_code == 500


def test_graph_request_is_immutable():
    request = GraphRequest(model="m", metadata={"k": "v"})

    with pytest.raises(dataclasses.FrozenInstanceError):
        request.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        request.metadata["k"] = "changed"  # type: ignore[index]
