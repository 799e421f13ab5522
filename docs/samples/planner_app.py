from typing import Any

from fastapi import FastAPI
from langchain_core.messages import SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe
from langgraph_openai_serve.testing import ScriptedChatModel

# Two stand-in models: a planner whose words must stay private, and the answer.
planner = ScriptedChatModel(responder=lambda messages: "PLAN: be brief")
writer = ScriptedChatModel(responder=lambda messages: "Short answer: yes.")


async def plan(state: MessagesState) -> dict[str, Any]:
    # The nostream tag keeps this call's tokens out of every client stream.
    reply = await planner.with_config(tags=["nostream"]).ainvoke(state["messages"])
    return {"messages": [SystemMessage(reply.text)]}


async def plan_untagged(state: MessagesState) -> dict[str, Any]:
    reply = await planner.ainvoke(state["messages"])
    return {"messages": [SystemMessage(reply.text)]}


async def answer(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await writer.ainvoke(state["messages"])]}


def build(planning: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("plan", planning)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "answer")
    return builder.compile()


app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            # Either way works: tag the private call ...
            "tagged": GraphConfig(graph=build(plan), description="nostream"),
            # ... or name the nodes whose model tokens are the answer.
            "by-node": GraphConfig(
                graph=build(plan_untagged),
                description="streamable_node_names",
                streamable_node_names={"answer"},
            ),
            # Neither: the planner's tokens would leak, so the stream fails.
            "leaky": GraphConfig(graph=build(plan_untagged), description="leaks"),
        }
    ),
    app=app,
).bind_openai_api()
