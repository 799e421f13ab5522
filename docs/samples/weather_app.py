import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientFunctionTool,
    ClientSettings,
    GraphConfig,
    GraphRegistry,
    GraphRequest,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel


@dataclass(frozen=True)
class ClientTools:
    """The functions the caller offered with this request."""

    tools: tuple[ClientFunctionTool, ...] = ()


def client_tools(request: GraphRequest, settings: ClientSettings | None) -> ClientTools:
    return ClientTools(tools=request.tools)


def stand_in_model(messages: list[BaseMessage]) -> AIMessage | str:
    """Calls get_weather first, then answers from its result."""
    if isinstance(messages[-1], ToolMessage):
        return f"The forecast for Lyon: {messages[-1].text}."
    call = {"id": f"call_{uuid.uuid4().hex[:8]}", "name": "get_weather"}
    return AIMessage(content="", tool_calls=[{**call, "args": {"city": "Lyon"}}])


model = ScriptedChatModel(responder=stand_in_model)


async def agent(state: MessagesState, runtime: Runtime[ClientTools]) -> dict[str, Any]:
    functions = [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": dict(tool.parameters or {}),
            },
        }
        for tool in runtime.context.tools
    ]
    bound = model.bind_tools(functions) if functions else model
    return {"messages": [await bound.ainvoke(state["messages"])]}


builder = StateGraph(MessagesState, context_schema=ClientTools)
builder.add_node(agent)
builder.add_edge(START, "agent")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "weather": GraphConfig(
                graph=builder.compile(),
                description="Calls the client's get_weather function.",
                context_factory=client_tools,
            )
        }
    ),
    app=app,
).bind_openai_api()
