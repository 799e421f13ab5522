import asyncio
from typing import Any

from fastapi import FastAPI
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel

model = ScriptedChatModel(responder=lambda messages: "Report ready: all steps done.")
STEP_SECONDS = 0.2


async def report(state: MessagesState) -> dict[str, Any]:
    write = get_stream_writer()
    for step in ("Collecting figures", "Drawing charts", "Writing summary"):
        write(status_event(step))
        await asyncio.sleep(STEP_SECONDS)  # stands in for slow work
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(report).add_edge(START, "report").compile()

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "report": GraphConfig(
                graph=graph,
                description="Writes a report in the background.",
                features={GraphFeature.BACKGROUND, GraphFeature.CLIENT_EVENTS},
            )
        }
    ),
    app=app,
).bind_openai_api()
