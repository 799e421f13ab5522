import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientFunctionTool,
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    LanggraphOpenaiServe,
)


@dataclass(frozen=True)
class Offered:
    tools: tuple[ClientFunctionTool, ...]


def offered_tools(request: GraphRequest, settings: ClientSettings | None) -> Offered:
    return Offered(tools=request.tools)


def attached_file_ids(message: HumanMessage) -> list[str]:
    """File parts arrive as LangChain `file` blocks carrying the `file_id`."""
    blocks = message.content if isinstance(message.content, list) else []
    return [b["file_id"] for b in blocks if isinstance(b, dict) and b["type"] == "file"]


async def show(state: MessagesState, runtime: Runtime[Offered]) -> dict[str, Any]:
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):  # the client displayed it and said so
        return {"messages": [AIMessage(content=f"Displayed ({last.text}).")]}
    can_display = any(tool.name == "display_file" for tool in runtime.context.tools)
    file_ids = attached_file_ids(last) if isinstance(last, HumanMessage) else []
    if not (can_display and file_ids):
        return {
            "messages": [AIMessage(content="Attach a file and offer display_file.")]
        }
    # A real graph would download the file from the Files API, make something
    # from it, upload the result and display that new file instead.
    call = {
        "id": f"call_{uuid.uuid4().hex[:8]}",
        "name": "display_file",
        "args": {"file_id": file_ids[-1], "title": "Your upload"},
    }
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


builder = StateGraph(MessagesState, context_schema=Offered)
builder.add_node(show)
builder.add_edge(START, "show")

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "viewer": GraphConfig(
                graph=builder.compile(),
                description="Shows the file you attach.",
                features={GraphFeature.FILE_INPUTS},
                client_tools=["display_file"],
                context_factory=offered_tools,
            )
        }
    ),
    app=app,
).bind_openai_api()
