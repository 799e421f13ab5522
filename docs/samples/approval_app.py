from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
)


async def review(state: MessagesState) -> dict[str, Any]:
    request = state["messages"][-1].text
    decision = interrupt(
        {
            "question": f"Approve this refund? {request}",
            "choices": ["approve", "reject"],
        }
    )
    verdict = "approved" if decision == "approve" else f"not approved ({decision})"
    return {"messages": [AIMessage(content=f"The refund was {verdict}.")]}


checkpointer = InMemorySaver()  # paused runs live here until answered
builder = StateGraph(MessagesState).add_node(review).add_edge(START, "review")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "refunds": GraphConfig(
                graph=builder.compile(checkpointer=checkpointer),
                description="Asks a human before a refund.",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=InMemoryRunCoordinator(),
            )
        }
    ),
    app=app,
).bind_openai_api()
