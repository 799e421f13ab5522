import json
import uuid
from dataclasses import dataclass

from fastapi import FastAPI
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GenerationControl,
    GenerationOptions,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    LanggraphOpenaiServe,
    OutputSchema,
    Settings,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel


# The assistant: a status update, then the client's get_weather function,
# then an answer from what the function returned.
def reply(messages: list[BaseMessage]) -> AIMessage | str:
    if isinstance(messages[-1], ToolMessage):
        return f"It is {messages[-1].text} in Oslo."
    call = {
        "id": f"call_{uuid.uuid4().hex[:8]}",
        "name": "get_weather",
        "args": {"city": "Oslo"},
    }
    return AIMessage(content="", tool_calls=[call])


# Any LangChain chat model works here, e.g. ChatOpenAI(model="gpt-4.1-mini").
assistant_model = ScriptedChatModel(responder=reply)


async def assistant(state: MessagesState) -> dict[str, list[BaseMessage]]:
    get_stream_writer()(status_event("Checking the forecast"))
    return {"messages": [await assistant_model.ainvoke(state["messages"])]}


# The forecaster: takes the client's generation controls and JSON schema
# (from the protocol-neutral request) and passes them to its model.
@dataclass(frozen=True)
class Asked:
    options: GenerationOptions
    schema: OutputSchema | None


def asked(request: GraphRequest, settings: ClientSettings | None) -> Asked:
    return Asked(request.generation, request.output_schema)


forecast_model = ScriptedChatModel(
    responder=lambda _: json.dumps({"city": "Oslo", "celsius": 21, "sky": "sunny"})
)


async def forecaster(
    state: MessagesState, runtime: Runtime[Asked]
) -> dict[str, list[BaseMessage]]:
    # With a real model: model.bind(**runtime.context.options.model_kwargs())
    # and its response_format (or with_structured_output) from the schema.
    return {"messages": [await forecast_model.ainvoke(state["messages"])]}


registry = GraphRegistry(
    registry={
        "assistant": GraphConfig(
            graph=StateGraph(MessagesState)
            .add_node(assistant)
            .add_edge(START, "assistant")
            .compile(),
            description="Checks the weather with your get_weather function.",
            features={GraphFeature.CLIENT_EVENTS},
        ),
        "forecast": GraphConfig(
            graph=StateGraph(MessagesState, context_schema=Asked)
            .add_node(forecaster)
            .add_edge(START, "forecaster")
            .compile(),
            description="A forecast as JSON, in the schema you ask for.",
            generation_controls=frozenset(GenerationControl),
            features={GraphFeature.STRUCTURED_OUTPUT},
            context_factory=asked,
        ),
    }
)

app = FastAPI()
# Kept Responses: the AI SDK's default second turn refers to its first answer.
settings = Settings(RESPONSE_STORE="memory")
LanggraphOpenaiServe(graphs=registry, app=app, settings=settings).bind_openai_api()
