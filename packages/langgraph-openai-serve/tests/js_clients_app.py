"""Graphs ``lgos serve`` loads (``js_clients_app:registry``) for the
JavaScript client suite (``js_clients/``): each stands for one kind of graph
a client meets, with a scripted model in place of the LLM.

- ``words``: a text answer, streamed word by word.
- ``weather``: calls the client's ``get_weather`` function, then answers
  with what the function returned (a client tool loop).
- ``status``: publishes three status updates, then answers.
- ``history``: answers with the conversation it was given, so a client sees
  which turns reached the graph (replay, ``item_reference``).
- ``forecast``: accepts every generation control and structured output;
  answers a JSON forecast when asked for a schema, else the controls it got.
- ``sloppy``: accepts structured output, but its forecast breaks the schema.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GenerationControl,
    GenerationOptions,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    OutputSchema,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from support import one_node_graph, single_model_graph

STATUSES = ("Searching the knowledge base", "Reading 3 documents", "Writing the answer")


def weather_reply(messages: list[BaseMessage]) -> AIMessage | str:
    """Ask for the weather once; answer with what the tool said."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        named = f" ({last.name})" if last.name else ""
        return f"The weather in Oslo: {last.text}{named}."
    call = {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "name": "get_weather",
        "args": {"city": "Oslo"},
    }
    return AIMessage(content="", tool_calls=[call])


def transcript(messages: list[BaseMessage]) -> str:
    return "Saw " + " | ".join(f"{m.type}:{m.text}" for m in messages)


def _status_graph() -> object:
    model = ScriptedChatModel(responder=lambda _: "w0 w1 w2")

    async def work(state: MessagesState) -> dict[str, list[BaseMessage]]:
        write = get_stream_writer()
        for status in STATUSES:
            write(status_event(status))
        return {"messages": [await model.ainvoke(state["messages"])]}

    return one_node_graph(work)


FORECAST = {"city": "Oslo", "celsius": 21}


@dataclass(frozen=True, slots=True)
class Asked:
    """What the request asked of the model (the graph's runtime context)."""

    options: GenerationOptions
    output_schema: OutputSchema | None


def asked(request: GraphRequest, settings: ClientSettings | None) -> Asked:
    return Asked(request.generation, request.output_schema)


def _forecast_graph(forecast: dict[str, object]) -> object:
    async def answer(
        state: MessagesState, runtime: Runtime[Asked]
    ) -> dict[str, list[BaseMessage]]:
        if runtime.context.output_schema is not None:
            text = json.dumps(forecast)
        else:
            controls = runtime.context.options.model_kwargs()
            text = "controls: " + json.dumps(controls, sort_keys=True)
        model = ScriptedChatModel(responder=lambda _: text)
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Asked)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def registry() -> GraphRegistry:
    def graph(responder: object) -> object:
        return single_model_graph(ScriptedChatModel(responder=responder))

    return GraphRegistry(
        registry={
            "words": GraphConfig(
                graph=graph(lambda _: "one two three four five"),
                description="answers in five words",
            ),
            "weather": GraphConfig(
                graph=graph(weather_reply),
                description="calls the client's get_weather, then answers",
            ),
            "status": GraphConfig(
                graph=_status_graph(),
                description="three status updates, then an answer",
                features={GraphFeature.CLIENT_EVENTS},
            ),
            "history": GraphConfig(
                graph=graph(transcript),
                description="answers with the conversation it saw",
            ),
            "forecast": GraphConfig(
                graph=_forecast_graph(FORECAST),
                description="a JSON forecast, or the controls it was given",
                generation_controls=frozenset(GenerationControl),
                features={GraphFeature.STRUCTURED_OUTPUT},
                context_factory=asked,
            ),
            "sloppy": GraphConfig(
                graph=_forecast_graph({"city": "Oslo", "celsius": "warm"}),
                description="a forecast that breaks the schema",
                features={GraphFeature.STRUCTURED_OUTPUT},
                context_factory=asked,
            ),
        }
    )
