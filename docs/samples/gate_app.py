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


async def refund(state: MessagesState) -> dict[str, Any]:
    # Approved: interrupt() returns the payload it presented.
    approved = interrupt({"order": 7, "amount": "19.90 EUR"})
    text = f"Refunded {approved['amount']} for order {approved['order']}."
    return {"messages": [AIMessage(content=text)]}


builder = StateGraph(MessagesState).add_node(refund).add_edge(START, "refund")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "refunds": GraphConfig(
                graph=builder.compile(checkpointer=InMemorySaver()),
                description="Refunds once a person approves.",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=InMemoryRunCoordinator(),
                interrupt_protocol="mcp_approval",
            )
        }
    ),
    app=app,
).bind_openai_api()
