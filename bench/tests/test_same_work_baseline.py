"""The same-work baseline: the hand-written endpoint counting usage the way
LGOS does, over every model call of the run, private ``nostream`` ones
included, with LangChain's usage handler."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_bench import baseline_wire
from lgos_bench.baseline_app import usage_from_message, usage_over_every_call
from lgos_bench.equivalence import _parsed
from lgos_bench.inprocess import APPS, call_app
from lgos_bench.scenarios import APIS, VARIANTS, target
from lgos_bench.workload import MODEL_NAME, PLAIN, Workload


def _planner_then_answer() -> Any:
    """A private planner call (tagged ``nostream``), then the answer."""

    def model(text: str) -> ScriptedChatModel:
        reply = AIMessage(content=text, response_metadata={"model_name": MODEL_NAME})
        return ScriptedChatModel(responder=lambda _messages: reply)

    planner = model("plan the answer first").with_config(tags=["nostream"])
    answerer = model("the answer")

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        await planner.ainvoke(state["messages"])
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def _streamed_usage(frames: list[str]) -> dict[str, Any]:
    (usage,) = [
        json.loads(frame.removeprefix("data: "))["usage"]
        for frame in frames
        if '"usage":' in frame
    ]
    return usage


async def _chat_stream_usage(counting: Any) -> dict[str, Any]:
    config, usage_of = counting()
    inputs = {"messages": [HumanMessage(content="one two three")]}
    stream = baseline_wire.chat_stream(
        _planner_then_answer(), inputs, "m", True, config, usage_of
    )
    return _streamed_usage([frame async for frame in stream])


def test_usage_counts_the_private_nostream_call_too() -> None:
    # Prompt: 3 tokens per call; replies: 4 tokens (planner), 2 (answer).
    over_every_call = asyncio.run(_chat_stream_usage(usage_over_every_call))
    from_message = asyncio.run(_chat_stream_usage(usage_from_message))

    assert over_every_call["prompt_tokens"] == 6
    assert over_every_call["completion_tokens"] == 6
    assert over_every_call["total_tokens"] == 12
    assert from_message["total_tokens"] == 5  # the answer's call alone


async def _bodies(key: str, apps: tuple[str, ...]) -> list[Any]:
    api, mode, model = key.split("/")
    stream = mode == "stream"
    request = target("chat" if api == "chat" else "responses", model, stream=stream)
    async with AsyncExitStack() as stack:
        bodies = []
        for name in apps:
            app = APPS[name](Workload(tokens=8))
            await stack.enter_async_context(app.router.lifespan_context(app))
            bodies.append(_parsed(await call_app(app, request), stream))
    return bodies


@pytest.mark.parametrize(
    "key",
    [
        f"{api}/{mode}/{model}"
        for model in (PLAIN, *VARIANTS)
        for api in APIS
        for mode in ("json", "stream")
    ],
)
def test_the_same_work_baseline_answers_what_lgos_answers(key: str) -> None:
    same_work, lgos = asyncio.run(_bodies(key, ("baseline-usage", "lgos")))

    assert same_work == lgos
    assert "usage" in json.dumps(same_work)
