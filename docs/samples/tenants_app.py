from fastapi import FastAPI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel

model = ScriptedChatModel(responder=lambda messages: f"Noted: {messages[-1].text}")


async def note(state: MessagesState) -> MessagesState:
    return {"messages": [await model.ainvoke(state["messages"])]}


graph = StateGraph(MessagesState).add_node(note).add_edge(START, "note").compile()

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "notes": GraphConfig(
                graph=graph,
                description="Takes notes, also in the background.",
                features={GraphFeature.BACKGROUND},
            )
        }
    ),
    app=app,
).bind_openai_api()  # with LGOS_API_KEYS, each key's principal is its own scope
