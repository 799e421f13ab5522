from fastapi import FastAPI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    request_principal,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from starlette.requests import Request

model = ScriptedChatModel(responder=lambda messages: f"Noted: {messages[-1].text}")


async def note(state: MessagesState) -> MessagesState:
    return {"messages": [await model.ainvoke(state["messages"])]}


def tenant_of(request: Request) -> str:
    """Each API key's principal is its own scope for paused and background runs."""
    return request_principal(request) or "default"


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
    checkpoint_scope=tenant_of,
).bind_openai_api()
