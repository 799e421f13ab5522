"""Runtime settings travel in ``metadata.lgos_settings`` and are validated."""

from __future__ import annotations

import json
from typing import Literal

import openai
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import ClientSettings
from support import config

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hi"}]


class Tone(ClientSettings):
    audience: Literal["general", "expert"] = "general"
    exclaim: bool = False


def _tone_graph():
    async def answer(state: MessagesState, runtime: Runtime[Tone]):
        text = f"for {runtime.context.audience}" + (
            "!" if runtime.context.exclaim else ""
        )
        return {"messages": [AIMessage(content=text)]}

    builder = StateGraph(MessagesState, context_schema=Tone)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


@pytest.fixture
def client(make_client):
    return make_client({"m": config(_tone_graph(), client_settings=Tone)})


async def _answer(client, metadata=None) -> str:
    completion = await client.chat.completions.create(
        model="m", messages=USER, metadata=metadata
    )
    return completion.choices[0].message.content


async def test_defaults_apply_without_settings(client):
    assert await _answer(client) == "for general"


async def test_supplied_settings_merge_over_defaults(client):
    settings = json.dumps({"audience": "expert"})

    assert await _answer(client, {"lgos_settings": settings}) == "for expert"
    assert await _answer(client) == "for general"


@pytest.mark.parametrize(
    "encoded",
    [
        "not json",
        "[1]",
        json.dumps({"audience": "child"}),
        json.dumps({"color": "red"}),
    ],
)
async def test_invalid_settings_are_400_naming_the_metadata_key(client, encoded):
    with pytest.raises(openai.BadRequestError) as caught:
        await _answer(client, {"lgos_settings": encoded})

    assert caught.value.body["param"] == "metadata.lgos_settings"


async def test_settings_are_strict_about_types(client):
    with pytest.raises(openai.BadRequestError):
        await _answer(client, {"lgos_settings": json.dumps({"exclaim": "yes"})})
    assert (
        await _answer(client, {"lgos_settings": '{"exclaim": true}'}) == "for general!"
    )
