from typing import Any

from fastapi import FastAPI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe
from langgraph_openai_serve.testing import ScriptedChatModel

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima"}


def capital_of(messages: Any) -> str:
    question = messages[-1].text
    for country, capital in CAPITALS.items():
        if country in question:
            return capital
    return "I do not know."


model = ScriptedChatModel(responder=capital_of)  # stands in for a real model


async def respond(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(respond).add_edge(START, "respond").compile()

app = FastAPI()
# Batches read LGOS_BATCH_FILES_URL and LGOS_BATCH_FILES_API_KEY.
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={"capitals": GraphConfig(graph=graph, description="Names capitals.")}
    ),
    app=app,
).bind_openai_api()
